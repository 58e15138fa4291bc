#!/bin/sh
# link/hook-path-order.sh BINARY: writes link/hook-path.order, the functions the hooks and list run.
#
# ./install.sh links git-task with this list as LLD's symbol ordering file, so the code a
# commit runs sits together at the start of the text: the pre-commit hook then maps it in a
# few page faults instead of ~130 spread over 13 MB (bench/RESULTS.md, 2026-11-24k). list,
# the other hot path, is in it too.
#
# BINARY must be what ./install.sh builds (the static release binary) with the same rustc and
# Cargo.lock: the list holds mangled names, whose hashes come from both. Run it again after a
# toolchain or dependency update, or a change to the hook path:
#
#   PREFIX=/tmp/gt ./install.sh && link/hook-path-order.sh /tmp/gt/bin/git-task
#
# Names the binary no longer has are skipped by the linker; a stale list only costs speed.
# Needs valgrind (callgrind), nm and git.
set -eu
bin=$(cd "$(dirname "${1:?usage: $0 BINARY}")" && pwd)/$(basename "$1")
here=$(cd "$(dirname "$0")" && pwd)
for tool in valgrind nm git; do
    command -v "$tool" >/dev/null || { echo "error: $tool is needed" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME="$tmp/home" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="$tmp/home/.gitconfig" \
    GIT_CEILING_DIRECTORIES="$tmp" LC_ALL=C
mkdir -p "$HOME"
git config --global user.name order
git config --global user.email order@example.invalid
git config --global init.defaultBranch main

# A repository shaped like the benchmark's (shared/bench/make-repo.sh), small.
r="$tmp/r"
git init -q "$r"
for a in 0 1 2; do
    for b in 0 1; do
        d="$r/mod$a/sub$b/part0"
        mkdir -p "$d"
        for f in 0 1 2 3 4 5; do printf 'fn f%s() {}\n' "$f" >"$d/f$f.rs"; done
        printf '# mod%s\n' "$a" >"$r/mod$a/README.md"
    done
done
git -C "$r" add -A
git -C "$r" commit -q -m base
# Packed, as a clone is: the hook reads the base's trees from a pack, the new ones loose.
git -C "$r" repack -adq
"$bin" -C "$r" start t >/dev/null 2>&1
"$bin" -C "$r" hooks install >/dev/null 2>&1
wt="$r.tasks/t"

# The hooks run git-task under callgrind: one profile per process.
cat >"$tmp/vg" <<EOF
#!/bin/sh
exec valgrind -q --tool=callgrind --demangle=no --callgrind-out-file="$tmp/cg.%p" "$bin" "\$@"
EOF
chmod +x "$tmp/vg"
for hook in pre-commit post-checkout; do
    sed "s|^git_task_bin=.*|git_task_bin='$tmp/vg'|" "$r/.git/hooks/$hook" >"$tmp/$hook"
    cat "$tmp/$hook" >"$r/.git/hooks/$hook"
done
# Commits as the benchmark makes them (files in several directories), then a checkout.
for n in 1 2; do
    for f in mod0/sub0/part0/f1.rs mod1/sub1/part0/f2.rs mod2/sub0/part0/f3.rs; do
        echo "// $n" >>"$wt/$f"
    done
    git -C "$wt" add -A
    git -C "$wt" commit -q -m "change $n"
done
git -C "$wt" checkout -q HEAD~1 2>/dev/null
git -C "$wt" checkout -q task/t 2>/dev/null
ls "$tmp"/cg.* >/dev/null
nm "$bin" | awk '$2 ~ /^[tTwW]$/ { print $3 }' | sort -u >"$tmp/text"
functions() { # the functions of the profiles named, that the binary has
    sed -n 's/^c\{0,1\}fn=([0-9]*) //p' "$@" | sort -u | comm -12 - "$tmp/text"
}
functions "$tmp"/cg.* >"$tmp/hooks"
# The other hot path (SPEC §10), list, after the hooks' functions: the hooks' stay together.
mkdir "$tmp/list"
sed -i "s|--callgrind-out-file=\"$tmp/cg.%p\"|--callgrind-out-file=\"$tmp/list/cg.%p\"|" "$tmp/vg"
"$tmp/vg" -C "$r" list >/dev/null
functions "$tmp"/list/cg.* | comm -23 - "$tmp/hooks" >"$tmp/list-only"
cat "$tmp/hooks" "$tmp/list-only" >"$here/hook-path.order"
echo "wrote $here/hook-path.order: $(wc -l <"$here/hook-path.order") functions"
