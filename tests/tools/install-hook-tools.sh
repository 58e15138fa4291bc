#!/usr/bin/env bash
# Installs the hook managers and git clients the hook tests drive, into a
# project-local prefix (default: target/hook-tools/), from their registries:
# husky and lefthook from npm, pre-commit and dulwich from PyPI, JGit (Debian's jgit-cli) with
# a launcher in bin/jgit, and gitui's commit path (tests/tools/gitui-hooks, built with cargo
# from crates.io into bin/gitui-hooks); and the MCP clients the `git task mcp` tests drive: the
# official inspector (npm @modelcontextprotocol/inspector) and the official Python SDK (PyPI mcp).
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
# JGit: Debian's jgit-cli (4.11.9 in bookworm). Its /usr/bin/jgit leaves jars off the class
# path (it dies with NoClassDefFoundError: org/eclipse/jgit/lfs/BuiltinLFS), so the tests run
# it through bin/jgit, which adds them.
bin_dir=$prefix/bin
mkdir -p "$bin_dir"
if [ ! -x /usr/bin/jgit ]; then
    sudo_cmd=""
    if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then
        sudo_cmd="sudo -n"
    fi
    if command -v apt-get >/dev/null 2>&1; then
        apt_install() { $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends jgit-cli >/dev/null; }
        apt_install || { $sudo_cmd apt-get update -qq && apt_install; } \
            || { echo "warning: could not install jgit-cli with apt-get" >&2; status=1; }
    else
        echo "warning: apt-get is not there; JGit (jgit-cli) is not installed" >&2
        status=1
    fi
fi
if [ -x /usr/bin/jgit ]; then
    launcher=$(cat <<'EOF'
#!/bin/sh
# JGit (Debian's jgit-cli) with the jars its launcher leaves off the class path.
# Written by tests/tools/install-hook-tools.sh.
j=/usr/share/java
JGIT_CLASSPATH=$j/org.eclipse.jgit.lfs.jar:$j/gson.jar:$j/org.eclipse.jgit.http.apache.jar:$j/httpclient.jar:$j/httpcore.jar:$j/commons-logging.jar:$j/commons-codec.jar:$j/jsch.jar:$j/jzlib.jar:$j/javaewah.jar
export JGIT_CLASSPATH
exec /usr/bin/jgit "$@"
EOF
)
    if [ -x "$bin_dir/jgit" ] && [ "$(cat "$bin_dir/jgit")" = "$launcher" ]; then
        echo "hook tools: JGit already in $bin_dir"
    else
        printf '%s\n' "$launcher" >"$bin_dir/jgit.tmp" && chmod 755 "$bin_dir/jgit.tmp" && mv -f "$bin_dir/jgit.tmp" "$bin_dir/jgit"
        "$bin_dir/jgit" --version >/dev/null 2>&1 \
            || { echo "warning: $bin_dir/jgit does not run" >&2; status=1; }
    fi
fi

# gitui's commit path: not the gitui binary, but the crates gitui 0.28.1 commits with
# (git2-hooks 0.7.0, git2 0.20.4), built from tests/tools/gitui-hooks (its own Cargo.lock).
gitui_src=tests/tools/gitui-hooks
if [ -x "$bin_dir/gitui-hooks" ] \
    && [ -z "$(find "$gitui_src/Cargo.toml" "$gitui_src/Cargo.lock" "$gitui_src/src" -newer "$bin_dir/gitui-hooks" 2>/dev/null)" ]; then
    echo "hook tools: gitui-hooks already in $bin_dir"
elif command -v cargo >/dev/null 2>&1; then
    { cargo build --locked --quiet --manifest-path "$gitui_src/Cargo.toml" --target-dir "$prefix/gitui-hooks-build" \
        && cp "$prefix/gitui-hooks-build/debug/gitui-hooks" "$bin_dir/gitui-hooks.tmp" \
        && mv -f "$bin_dir/gitui-hooks.tmp" "$bin_dir/gitui-hooks"; } \
        || { echo "warning: could not build tests/tools/gitui-hooks" >&2; status=1; }
else
    echo "warning: cargo is not installed; gitui-hooks is not built" >&2
    status=1
fi
exit $status
