"""Drives `git task mcp` with the official MCP Python SDK (PyPI `mcp`): a whole task life
cycle over stdio, and a merge the gate refuses.

    python mcp_client.py GIT_TASK_BINARY REPO_DIR

Prints one JSON object with what it saw on stdout; exits non-zero (with a message on stderr)
as soon as something is not what an agent should get. `tests/cmd/mcp.rs` runs it and checks
the repository with git afterwards.
"""

import asyncio
import json
import os
import subprocess
import sys

from mcp import ClientSession, StdioServerParameters, stdio_client

EXPECTED_TOOLS = {
    "start", "list", "status", "check", "checkpoint", "changes", "diff", "revert",
    "commit", "merge", "overlaps", "log", "drop", "remove", "reset", "sync", "queue",
}
DESTRUCTIVE = {"revert", "remove", "merge", "reset", "drop", "queue"}
READ_ONLY = {"list", "status", "check", "changes", "diff", "log", "overlaps"}


def fail(message):
    print(f"mcp_client: {message}", file=sys.stderr)
    sys.exit(1)


def answer(result, tool, error=False):
    """The JSON document a tool returned (its first text content)."""
    if bool(result.is_error) != error:
        fail(f"{tool}: isError is {result.is_error}, wanted {error}: {result.content}")
    text = result.content[0].text
    try:
        return json.loads(text)
    except ValueError:
        fail(f"{tool}: content is not JSON: {text!r}")


async def main(binary, repo):
    params = StdioServerParameters(command=binary, args=["mcp"], cwd=repo, env=dict(os.environ))
    seen = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()

            tools = (await session.list_tools()).tools
            names = {t.name for t in tools}
            if names != EXPECTED_TOOLS:
                fail(f"tools/list gave {sorted(names)}")
            for t in tools:
                a = t.annotations
                if a is None:
                    fail(f"{t.name} has no annotations")
                if bool(a.destructive_hint) != (t.name in DESTRUCTIVE):
                    fail(f"{t.name}: destructiveHint is {a.destructive_hint}")
                if bool(a.read_only_hint) != (t.name in READ_ONLY):
                    fail(f"{t.name}: readOnlyHint is {a.read_only_hint}")
                if t.input_schema.get("type") != "object" or "repo" not in t.input_schema["properties"]:
                    fail(f"{t.name}: input schema {t.input_schema}")
            seen["tools"] = sorted(names)

            # start -> edit -> checkpoint -> check -> merge
            started = answer(await session.call_tool("start", {"id": "py", "allow": ["src/**"]}), "start")
            worktree = started["worktree"]
            with open(os.path.join(worktree, "src", "lib.rs"), "a") as f:
                f.write("pub fn from_mcp() {}\n")
            checkpoint = answer(
                await session.call_tool("checkpoint", {"id": "py", "message": "from the python client"}),
                "checkpoint",
            )
            check = answer(await session.call_tool("check", {"id": "py"}), "check")
            merged = answer(await session.call_tool("merge", {"ids": ["py"]}), "merge")
            seen["start"] = started
            seen["checkpoint"] = checkpoint
            seen["check"] = check
            seen["merge"] = merged

            # A task that touches a path outside its contract: the gate refuses the merge.
            bad = answer(await session.call_tool("start", {"id": "bad", "allow": ["src/**"]}), "start")
            bad_tree = bad["worktree"]
            with open(os.path.join(bad_tree, "README.md"), "a") as f:
                f.write("outside the fence\n")
            subprocess.run(["git", "commit", "-q", "-am", "outside"], cwd=bad_tree, check=True)
            refused = answer(await session.call_tool("merge", {"ids": ["bad"]}), "merge", error=True)
            seen["refused"] = refused

            # An error: its kind, exit code and hints.
            seen["error"] = answer(await session.call_tool("status", {"id": "no-such-task"}), "status", error=True)
    print(json.dumps(seen))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        fail("usage: mcp_client.py GIT_TASK_BINARY REPO_DIR")
    asyncio.run(main(sys.argv[1], sys.argv[2]))
