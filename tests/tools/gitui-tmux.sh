#!/usr/bin/env bash
# Drives the real gitui under tmux to commit what is staged in DIR, as a user would: focus
# the staged files (w), open the commit popup (c), type MESSAGE, commit (Ctrl-d). Prints what
# gitui's error popup showed (if anything) and the subject of HEAD afterwards.
#
#   tests/tools/gitui-tmux.sh GITUI DIR MESSAGE
#
# Not run by the tests or CI: building gitui 0.28.1 (`cargo install gitui --locked`) takes
# about 480 s of CPU, more than CI can spend; the tests drive gitui's commit path through
# tests/tools/gitui-hooks instead. This script is how that stand-in was checked against the
# real gitui (same outcome in each case of tests/hooks/jgit_gitui.rs). Needs tmux.
set -euo pipefail
gitui=$1 dir=$2 msg=$3
session=gitui-tmux-$$
tmux new-session -d -s "$session" -x 160 -y 45 -c "$dir" "env TERM=xterm-256color '$gitui'"
trap 'tmux kill-session -t "$session" 2>/dev/null || :' EXIT
sleep 3
tmux send-keys -t "$session" w
sleep 0.5
tmux send-keys -t "$session" c
sleep 1
tmux send-keys -t "$session" -l "$msg"
sleep 0.3
tmux send-keys -t "$session" C-d
sleep 3
tmux capture-pane -t "$session" -p | sed -n '/Error/,/━━━━┛/p' | sed 's/[│┃┏┗┓┛━─└┌┐┘]//g; s/^ *//; s/ *$//; /^$/d'
echo "HEAD: $(git -C "$dir" log -1 --format=%s)"
