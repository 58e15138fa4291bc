#!/usr/bin/env bash
# bench/queue.sh [BIN] [N]: the landing queue scenario (issue 33, SPEC §10 `queue`).
# JOBS=J runs `queue run --jobs J` (default 1); CHECK_SLEEP=S makes each check sleep S seconds.
#
# Starts N ready tasks (default 16) that each add one file, all with the same check, which
# appends a line to a file outside the repository (so the check runs are counted by the
# check itself) and fails when the file of the "bad" task is in the tree it runs on. Queues
# them and runs `git task queue run` once with no bad task, then with the bad one first,
# in the middle and last. Prints per case: tasks landed, tasks ejected, check runs counted,
# the runner's own count, and the wall time of `queue run`. Targets: all good ≤ 2 runs; one
# bad: the others land, it is ejected, ≤ 10 runs.
set -euo pipefail
BIN=${1:-$(cd "$(dirname "$0")/.." && pwd)/target/debug/git-task}
N=${2:-16}
JOBS=${JOBS:-1}
CHECK_SLEEP=${CHECK_SLEEP:-0}
[ -x "$BIN" ] || { echo "no git-task binary at $BIN (cargo build first, or pass its path)" >&2; exit 2; }

scenario() { # scenario BAD (0: none)
    local bad=$1 tmp
    tmp=$(mktemp -d)
    (
        cd "$tmp"
        export HOME=$tmp GIT_CONFIG_NOSYSTEM=1 GIT_CEILING_DIRECTORIES=$tmp
        git config --global user.name bench
        git config --global user.email bench@example.com
        git init -q -b main repo
        cd repo
        mkdir src
        echo base >src/base.txt
        git add -A
        git commit -qm init
        local runs=$tmp/runs badf ids=() i id wt
        badf=$(printf 'src/t%02d.txt' "$bad")
        for ((i = 1; i <= N; i++)); do
            id=$(printf 't%02d' "$i")
            wt=$("$BIN" start "$id" --allow 'src/**' --check "echo run >>'$runs'; sleep $CHECK_SLEEP; test ! -e $badf" 2>/dev/null)
            echo "$id" >"$wt/src/$id.txt"
            git -C "$wt" add -A
            git -C "$wt" commit -qm "add $id" --no-verify
            ids+=("$id")
        done
        "$BIN" queue add "${ids[@]}" >/dev/null 2>&1
        local start end
        start=$(date +%s.%N)
        "$BIN" queue run --jobs "$JOBS" --json >"$tmp/out.json" 2>/dev/null || true
        end=$(date +%s.%N)
        python3 - "$tmp/out.json" "$runs" "$start" "$end" "$bad" <<'PY'
import json, os, sys
out, runs, start, end, bad = sys.argv[1:]
q = json.load(open(out))["queues"][0]
counted = sum(1 for _ in open(runs)) if os.path.exists(runs) else 0
case = "all good" if bad == "0" else f"bad t{int(bad):02d}"
ejected = ",".join(e["task"] for e in q["ejected"]) or "-"
print(f"| {case} | {len(q['landed'])} | {ejected} | {counted} | {q['check_runs']} | {float(end) - float(start):.1f} s |")
PY
    )
    rm -rf "$tmp"
}

echo "| $N tasks, --jobs $JOBS | landed | ejected | check runs (counted) | check runs (runner) | queue run |"
echo "|---|---|---|---|---|---|"
for bad in 0 1 $(((N + 1) / 2)) "$N"; do
    scenario "$bad"
done
