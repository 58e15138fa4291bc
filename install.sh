#!/bin/sh
# Builds git-task and installs the binary, its man page and its shell completions
# (bash, zsh, fish) under PREFIX.
#
#   ./install.sh               install into PREFIX (default: ~/.local)
#   ./install.sh --uninstall   remove what an install put there
#
# PREFIX=/opt/git-task ./install.sh installs elsewhere. GIT_TASK_BIN=path skips
# the build and installs that binary instead (used by the test suite).
# Re-running is safe. It never touches a git repository: hooks are installed
# per repository with 'git task hooks install'.
set -eu

PREFIX="${PREFIX:-$HOME/.local}"
BIN_DIR="$PREFIX/bin"
MAN_DIR="$PREFIX/share/man/man1"
# Where bash-completion, zsh (on fpath) and fish look for completions of a command.
BASH_COMPLETION="$PREFIX/share/bash-completion/completions/git-task"
ZSH_COMPLETION="$PREFIX/share/zsh/site-functions/_git-task"
FISH_COMPLETION="$PREFIX/share/fish/vendor_completions.d/git-task.fish"
HERE=$(cd "$(dirname "$0")" && pwd)

usage() {
    echo "usage: $0 [--uninstall]" >&2
    echo "       PREFIX=DIR $0   (default PREFIX: \$HOME/.local)" >&2
}

case "${1:-}" in
    "") ;;
    --uninstall)
        rm -f "$BIN_DIR/git-task" "$MAN_DIR/git-task.1" "$BASH_COMPLETION" "$ZSH_COMPLETION" "$FISH_COMPLETION"
        echo "removed $BIN_DIR/git-task"
        echo "removed $MAN_DIR/git-task.1"
        echo "removed the shell completions"
        exit 0
        ;;
    -h | --help)
        usage
        exit 0
        ;;
    *)
        usage
        exit 2
        ;;
esac

if [ -n "${GIT_TASK_BIN:-}" ]; then
    binary="$GIT_TASK_BIN"
else
    if ! command -v cargo >/dev/null 2>&1; then
        echo "error: cargo is not installed" >&2
        echo "hint: install Rust from https://rustup.rs, then run $0 again" >&2
        exit 1
    fi
    # The release profile is the quick one (Cargo.toml); packagers use --profile dist.
    #
    # On glibc Linux (x86_64, aarch64) the binary is a static PIE: still loaded at a random
    # address, but with no dynamic loader to run. The pre-commit hook starts git-task on every
    # commit, and loading libc and libgcc_s and binding their symbols cost each start ~0.4 ms
    # (bench/RESULTS.md, 2026-11-24j). crt-static needs an explicit --target, or cargo would
    # apply it to proc-macros too, which cannot be static.
    static_target=$(cargo -vV | sed -n 's/^host: //p')
    case $static_target in
        x86_64-unknown-linux-gnu | aarch64-unknown-linux-gnu) ;;
        *) static_target= ;;
    esac
    # It also needs the C library's static archive, which some distributions package apart
    # (glibc-static); without it, the binary is linked dynamically, as everywhere else.
    if [ -n "$static_target" ] && [ "$(cc -print-file-name=libc.a 2>/dev/null || :)" = libc.a ]; then
        static_target=
    fi
    if [ -n "$static_target" ]; then
        var=CARGO_TARGET_$(printf '%s' "$static_target" | tr 'a-z-' 'A-Z_')_RUSTFLAGS
        eval "flags=\${$var:-}"
        flags="${flags:+$flags }-C target-feature=+crt-static"
        # The functions the hooks run go first in the text (link/hook-path.order), so that a
        # commit maps them in a few page faults, not ~130 (bench/RESULTS.md, 2026-11-24k). Only
        # where the linker takes a symbol ordering file (LLD, rustc's default on x86_64 Linux):
        # a tiny program is linked with it first. A path with blanks cannot go in RUSTFLAGS.
        order="$HERE/link/hook-path.order"
        case $order in *[[:space:]]*) order= ;; esac
        if [ -n "$order" ] && [ -f "$order" ]; then
            order_flags="-C link-arg=-Wl,--symbol-ordering-file=$order -C link-arg=-Wl,--no-warn-symbol-ordering"
            probe=$(mktemp -d)
            printf 'fn main() {}\n' >"$probe/main.rs"
            # shellcheck disable=SC2086 # flags are words, as cargo splits them
            if "${RUSTC:-rustc}" --target "$static_target" $flags $order_flags \
                -o "$probe/main" "$probe/main.rs" >/dev/null 2>&1; then
                flags="$flags $order_flags"
            fi
            rm -rf "$probe"
        fi
        (cd "$HERE" && env "$var=$flags" cargo build --release --locked --target "$static_target")
        binary="${CARGO_TARGET_DIR:-$HERE/target}/$static_target/release/git-task"
    else
        (cd "$HERE" && cargo build --release --locked)
        binary="${CARGO_TARGET_DIR:-$HERE/target}/release/git-task"
    fi
fi

mkdir -p "$BIN_DIR" "$MAN_DIR"
# Install through a temporary name and rename: a running git-task is never half-overwritten.
install -m 0755 "$binary" "$BIN_DIR/.git-task.tmp.$$"
mv -f "$BIN_DIR/.git-task.tmp.$$" "$BIN_DIR/git-task"
install -m 0644 "$HERE/man/git-task.1" "$MAN_DIR/git-task.1"
echo "installed $BIN_DIR/git-task"
echo "installed $MAN_DIR/git-task.1"
for shell in bash zsh fish; do
    case $shell in
        bash) file=$BASH_COMPLETION ;;
        zsh) file=$ZSH_COMPLETION ;;
        fish) file=$FISH_COMPLETION ;;
    esac
    mkdir -p "$(dirname "$file")"
    "$BIN_DIR/git-task" completions "$shell" >"$file.tmp.$$"
    mv -f "$file.tmp.$$" "$file"
    echo "installed $file"
done

case ":${PATH:-}:" in
    *":$BIN_DIR:"*)
        found=$(command -v git-task 2>/dev/null || true)
        if [ -n "$found" ] && [ "$found" != "$BIN_DIR/git-task" ]; then
            echo "warning: '$found' comes first on PATH and shadows $BIN_DIR/git-task" >&2
        fi
        ;;
    *)
        echo "warning: $BIN_DIR is not on PATH, so 'git task' will not find git-task" >&2
        echo "hint: add it, e.g. in ~/.profile: export PATH=\"$BIN_DIR:\$PATH\"" >&2
        ;;
esac
if command -v man >/dev/null 2>&1 && ! man -w git-task >/dev/null 2>&1; then
    echo "hint: 'man git-task' needs $PREFIX/share/man on MANPATH: export MANPATH=\"$PREFIX/share/man:\$MANPATH\"" >&2
fi
