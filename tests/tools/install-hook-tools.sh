#!/usr/bin/env bash
# Installs the hook managers and git clients the hook tests drive, into a
# project-local prefix (default: target/hook-tools/), from their registries:
# husky and lefthook from npm, pre-commit and dulwich from PyPI; and the MCP clients
# the `git task mcp` tests drive: the official inspector (npm @modelcontextprotocol/inspector)
# and the official Python SDK (PyPI mcp).
# Idempotent: a tool already there is not installed again.
#
#   tests/tools/install-hook-tools.sh [PREFIX]
#
# The tests look for the tools under target/hook-tools/ (or HOOK_TOOLS) and on PATH.
set -euo pipefail
cd "$(dirname "$0")/../.."
prefix=${1:-${HOOK_TOOLS:-target/hook-tools}}
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
status=0

# npm: one shared template dir; the tests copy what they need per test.
npm_dir=$prefix/npm
if [ -x "$npm_dir/node_modules/.bin/husky" ] && [ -x "$npm_dir/node_modules/.bin/lefthook" ]; then
    echo "hook tools: husky and lefthook already in $npm_dir"
elif command -v npm >/dev/null 2>&1; then
    mkdir -p "$npm_dir"
    [ -f "$npm_dir/package.json" ] || printf '{ "name": "hook-tools", "private": true }\n' >"$npm_dir/package.json"
    # --ignore-scripts: lefthook's postinstall would install its hooks into the repository
    # the script runs in (this one); the tests install them where they mean to.
    npm install --prefix "$npm_dir" --ignore-scripts --no-audit --no-fund --loglevel=error husky@9 lefthook@1 \
        || { echo "warning: could not install husky and lefthook from npm" >&2; status=1; }
else
    echo "warning: npm is not installed; husky and lefthook are not installed" >&2
    status=1
fi

# The MCP inspector (its CLI mode drives tests/tools/mcp-inspector.sh), in the same npm dir.
if [ -x "$npm_dir/node_modules/.bin/mcp-inspector" ]; then
    echo "hook tools: the MCP inspector already in $npm_dir"
elif command -v npm >/dev/null 2>&1; then
    mkdir -p "$npm_dir"
    [ -f "$npm_dir/package.json" ] || printf '{ "name": "hook-tools", "private": true }\n' >"$npm_dir/package.json"
    npm install --prefix "$npm_dir" --ignore-scripts --no-audit --no-fund --loglevel=error @modelcontextprotocol/inspector@2 \
        || { echo "warning: could not install the MCP inspector from npm" >&2; status=1; }
else
    echo "warning: npm is not installed; the MCP inspector is not installed" >&2
    status=1
fi

# PyPI: one virtual environment.
venv=$prefix/venv
if [ -x "$venv/bin/pre-commit" ] && "$venv/bin/python" -c 'import dulwich, mcp' 2>/dev/null; then
    echo "hook tools: pre-commit, dulwich and mcp already in $venv"
elif command -v python3 >/dev/null 2>&1; then
    { [ -x "$venv/bin/python" ] || python3 -m venv "$venv"; } \
        && "$venv/bin/python" -m pip install --quiet --disable-pip-version-check pre-commit dulwich mcp \
        || { echo "warning: could not install pre-commit, dulwich and mcp from PyPI" >&2; status=1; }
else
    echo "warning: python3 is not installed; pre-commit, dulwich and mcp are not installed" >&2
    status=1
fi
exit $status
