#!/usr/bin/env bash
# Drives `git task mcp` with the official MCP inspector's CLI (npm
# @modelcontextprotocol/inspector, `--cli` mode, installed by install-hook-tools.sh) in a
# throwaway repository: lists the tools (no schema portability warning), starts a task,
# lists it, and reads an error. Node checks each answer.
#
#   tests/tools/mcp-inspector.sh [GIT_TASK_BINARY]
#
# GIT_TASK_BINARY defaults to target/debug/git-task. Exits 0 when every answer is right,
# 1 with a message otherwise, 2 when the inspector or the binary is missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$root/target/debug/git-task}
tools=${HOOK_TOOLS:-$root/target/hook-tools}
inspector=$tools/npm/node_modules/.bin/mcp-inspector
[ -x "$inspector" ] || inspector=$(command -v mcp-inspector || true)
if [ -z "$inspector" ] || [ ! -x "$inspector" ]; then
    echo "mcp-inspector.sh: the MCP inspector is not installed; run tests/tools/install-hook-tools.sh" >&2
    exit 2
fi
if [ ! -x "$bin" ]; then
    echo "mcp-inspector.sh: no git-task binary at $bin; run cargo build" >&2
    exit 2
fi
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
repo=$tmp/repo
git init -q -b main "$repo"
mkdir -p "$repo/src"
echo 'pub fn lib() {}' >"$repo/src/lib.rs"
git -C "$repo" add -A
git -C "$repo" -c user.name=Inspector -c user.email=inspector@example.com commit -q -m initial
cd "$repo"

fail() { echo "mcp-inspector.sh: $*" >&2; exit 1; }
inspect() { "$inspector" --cli "$bin" mcp "$@"; }
# check NAME JSON SCRIPT: runs SCRIPT in node with the answer as `a`; it throws on a wrong answer.
check() {
    node -e "const a = JSON.parse(process.argv[1]); $3" "$2" || fail "$1: wrong answer: $2"
}

list=$(inspect --method tools/list --strict 2>"$tmp/warnings") || fail "tools/list failed: $(cat "$tmp/warnings")"
if grep -q 'Warning' "$tmp/warnings"; then
    fail "tools/list: the inspector warns about the schemas: $(cat "$tmp/warnings")"
fi
check tools/list "$list" '
    const names = a.tools.map(t => t.name).sort().join(",");
    if (names !== "changes,check,checkpoint,commit,diff,drop,list,log,merge,overlaps,queue,remove,reset,revert,start,status,sync") throw names;
    const tool = n => a.tools.find(t => t.name === n);
    if (tool("merge").annotations.destructiveHint !== true) throw "merge is not destructive";
    if (tool("list").annotations.readOnlyHint !== true) throw "list is not read-only";
    if (tool("start").annotations.destructiveHint !== false) throw "start is destructive";
    if (!tool("start").inputSchema.properties.repo) throw "no repo argument";'
echo "ok: tools/list"

started=$(inspect --method tools/call --tool-name start --tool-arg id=inspected 'allow=["src/**"]')
check start "$started" '
    if (a.isError) throw "error";
    const r = JSON.parse(a.content[0].text);
    if (r.kind !== "start" || r.task !== "inspected" || !r.created) throw "not started";
    if (!require("fs").existsSync(r.worktree)) throw "no worktree";'
echo "ok: tools/call start"

listed=$(inspect --method tools/call --tool-name list)
check list "$listed" '
    if (a.isError) throw "error";
    const r = JSON.parse(a.content[0].text);
    if (!r.tasks.some(t => t.id === "inspected")) throw "not listed";'
echo "ok: tools/call list"

# A tool error: the inspector exits non-zero and still prints the result.
errored=$(inspect --method tools/call --tool-name status --tool-arg id=missing 2>/dev/null || true)
check status "$errored" '
    if (a.isError !== true) throw "not an error";
    const e = JSON.parse(a.content[0].text);
    if (e.kind !== "error" || e.error !== "input" || e.exit_code !== 2 || !e.hints.length) throw "wrong error";'
echo "ok: tools/call status (a tool error)"
