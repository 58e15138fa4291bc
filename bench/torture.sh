#!/usr/bin/env bash
# torture.sh [N] [FILES]: kill -9 each mutating git-task command N times (default 50) at
# random instants on a repository of FILES tracked files (default 3000), run `git task sweep`
# after each kill, and check with git that nothing is half made or lost (tests/cmd/torture.rs).
#
# Prints "<command>: K kills in R rounds (window W ms), F failures" per command (it runs
# until N kills, at most 3N rounds: a command may finish before its kill instant).
# GIT_TASK_TORTURE_SEED repeats a run; GIT_TASK_TORTURE_ONLY=merge,remove picks commands;
# PROFILE=release uses a release build of git-task (default: the debug build).
set -euo pipefail
N=${1:-50}
FILES=${2:-3000}
cd "$(dirname "$0")/.."
PROFILE=${PROFILE:-debug}
if [ "$PROFILE" = release ]; then
    cargo build --locked --release --bin git-task
else
    cargo build --locked --bin git-task
fi
# A copy, so a rebuild during a long run does not change the binary under test.
BIN_DIR=$(mktemp -d)
trap 'rm -rf "$BIN_DIR"' EXIT
cp "target/$PROFILE/git-task" "$BIN_DIR/git-task"
GIT_TASK_TORTURE_BIN="$BIN_DIR/git-task" GIT_TASK_TORTURE_N="$N" GIT_TASK_TORTURE_FILES="$FILES" \
    cargo test --locked --test cli slow::torture::every_mutating_command_survives_a_kill_9 -- \
    --exact --include-ignored --nocapture --test-threads=1 >target/torture.log 2>&1 ||
    status=$?
grep -E '^torture: [a-z-]+: [0-9]' target/torture.log || true
echo "details: target/torture.log"
# The kill loops of tests/cmd/lifecycle2.rs (reset of a detached worktree, pool discards of a
# used entry, adopt and merge --remote, claim, release and drop), N rounds each.
GIT_TASK_KILLS="$N" cargo test --locked --test cli -- --test-threads=1 \
    reset_of_a_detached_worktree_survives pool_discards_of_a_used_entry adopt_and_merge_remote \
    claim_release_and_drop \
    >target/torture-lifecycle2.log 2>&1 || status=$?
grep -E '^test ' target/torture-lifecycle2.log || true
echo "details: target/torture-lifecycle2.log"
exit "${status:-0}"
