"""Drives `git task mcp` with the official MCP Python SDK (PyPI `mcp`) as an agent that has
only the MCP tools would: it asks to merge, and on every refusal does what the refusal says
(its `next` tool calls, in order; an edit first where the refusal is a conflict to resolve),
until the task lands. A refusal without `hints` or `next`, the same refusal twice (a loop), or
no landing within the step budget fails.

    python mcp_agent_loop.py GIT_TASK_BINARY REPO_DIR

Three tasks, one per way a merge is refused:
- `dirty`: work left uncommitted, some of it outside the contract (uncommitted_work, then
  a commit with nothing eligible left, then revert);
- `fenced`: a committed change outside the contract (contract_violation: revert with paths,
  commit, merge);
- `clash`: a change the base changed too (merge_conflict: sync; sync_conflict: the markers
  resolved, commit, merge).

Prints one JSON object, {task: [steps]}, each step {tool, arguments, error, kind}, on stdout;
exits non-zero with a message on stderr as soon as the agent is stuck.
`tests/cmd/mcp.rs` runs it and checks the repository with git afterwards.
"""

import asyncio
import json
import os
import subprocess
import sys

from mcp import ClientSession, StdioServerParameters, stdio_client

BUDGET = 12


def fail(message):
    print(f"mcp_agent_loop: {message}", file=sys.stderr)
    sys.exit(1)


def git(cwd, *args):
    subprocess.run(
        ["git", "-c", "user.name=Agent", "-c", "user.email=agent@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def resolve_markers(worktree, paths):
    """The agent's edit for a conflict: keep both sides, no markers left."""
    for rel in paths:
        path = os.path.join(worktree, rel)
        kept = []
        with open(path) as f:
            for line in f:
                if line.startswith(("<<<<<<<", "=======", ">>>>>>>", "|||||||")):
                    continue
                kept.append(line)
        write(path, "".join(kept))


class Agent:
    def __init__(self, session):
        self.session = session
        self.trace = []

    async def call(self, tool, arguments):
        result = await self.session.call_tool(tool, arguments)
        text = result.content[0].text
        try:
            doc = json.loads(text)
        except ValueError:
            fail(f"{tool}: content is not JSON: {text!r}")
        error = bool(result.is_error)
        self.trace.append({"tool": tool, "arguments": arguments, "error": error, "kind": doc.get("kind")})
        return error, doc

    async def land(self, task):
        """Merges `task`, following each refusal's next steps until it lands."""
        steps = []
        start = len(self.trace)
        pending = [{"tool": "merge", "arguments": {"ids": [task]}}]
        seen = set()
        for _ in range(BUDGET):
            if not pending:
                # The refusal's steps are done: merge again.
                pending = [{"tool": "merge", "arguments": {"ids": [task]}}]
            step = pending.pop(0)
            error, doc = await self.call(step["tool"], step["arguments"])
            if not error:
                if step["tool"] == "merge":
                    return self.trace[start:], doc
                continue
            key = json.dumps(doc, sort_keys=True)
            if key in seen:
                fail(f"{task}: the same refusal twice (a loop): {doc}")
            seen.add(key)
            if not doc.get("hints"):
                fail(f"{task}: a refusal without hints: {doc}")
            if not doc.get("next"):
                fail(f"{task}: a refusal without a next tool call: {doc}")
            if doc.get("kind") == "sync_conflict":
                resolve_markers(doc["worktree"], doc["paths"])
            pending = list(doc["next"])
        fail(f"{task}: not landed within {BUDGET} steps: {self.trace[start:]}")


async def main(binary, repo):
    params = StdioServerParameters(command=binary, args=["mcp"], cwd=repo, env=dict(os.environ))
    seen = {}
    async with stdio_client(params) as (read, write_stream):
        async with ClientSession(read, write_stream) as session:
            init = await session.initialize()
            # The server tells the agent, up front, where a refusal's way out is.
            if "'next'" not in (init.instructions or ""):
                fail(f"the instructions do not name 'next': {init.instructions!r}")
            agent = Agent(session)

            async def start(task):
                error, doc = await agent.call("start", {"id": task, "allow": ["src/**"]})
                if error:
                    fail(f"start {task}: {doc}")
                return doc["worktree"]

            # Uncommitted work, part of it outside the contract.
            wt = await start("dirty")
            write(os.path.join(wt, "src", "dirty.rs"), "pub fn dirty() {}\n")
            write(os.path.join(wt, "README.md"), "outside the fence\n")
            trace, landed = await agent.land("dirty")
            seen["dirty"] = trace

            # A committed change outside the contract.
            wt = await start("fenced")
            write(os.path.join(wt, "src", "fenced.rs"), "pub fn fenced() {}\n")
            write(os.path.join(wt, "README.md"), "outside the fence\n")
            git(wt, "add", "-A")
            git(wt, "commit", "-q", "-m", "fenced work and an outside edit")
            trace, landed = await agent.land("fenced")
            seen["fenced"] = trace

            # A change the base changed too.
            wt = await start("clash")
            write(os.path.join(wt, "src", "lib.rs"), "pub fn from_the_task() {}\n")
            error, doc = await agent.call("commit", {"id": "clash", "message": "the task's side"})
            if error:
                fail(f"commit clash: {doc}")
            write(os.path.join(repo, "src", "lib.rs"), "pub fn from_main() {}\n")
            git(repo, "commit", "-q", "-am", "main's side")
            trace, landed = await agent.land("clash")
            seen["clash"] = trace
    print(json.dumps(seen))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        fail("usage: mcp_agent_loop.py GIT_TASK_BINARY REPO_DIR")
    asyncio.run(main(sys.argv[1], sys.argv[2]))
