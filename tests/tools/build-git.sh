#!/usr/bin/env bash
# Builds git from Debian's source package (the `sid` suite: git 2.55 now) into
# target/git-2.55/ (or PREFIX), once: the hook tests run under it beside the machine's git,
# for git's config-defined hooks (git >= 2.54). Only Debian's package registry is reached:
# `apt-get source` with a private apt configuration (this script's own sources list, lists
# and cache under target/git-build/), so the system's apt setup is left as it is.
#
#   tests/tools/build-git.sh [PREFIX]
#
# Built without gettext, Tcl/Tk, Perl, Python and curl (about two minutes on two cores).
# Idempotent: a git already at PREFIX whose version is 2.54 or later is kept.
set -euo pipefail
cd "$(dirname "$0")/../.."
prefix=${1:-target/git-2.55}
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)

if [ -x "$prefix/bin/git" ]; then
    version=$("$prefix/bin/git" --version | sed -n 's/^git version \([0-9]*\.[0-9]*\).*/\1/p')
    case $version in
    2.5[4-9] | 2.[6-9]? | [3-9].*)
        echo "git $version already in $prefix"
        exit 0 ;;
    esac
fi

work=$(pwd)/target/git-build
apt=$work/apt
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$work/src"
printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: sid\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    >"$apt/sid.sources"
opts=(
    -o "Dir::Etc::SourceList=/dev/null"
    -o "Dir::Etc::SourceParts=$apt"
    -o "Dir::State::Lists=$apt/lists"
    -o "Dir::Cache=$apt/cache"
    -o "APT::Sandbox::User=root"
)
apt-get "${opts[@]}" -qq update
cd "$work/src"
rm -rf git-*/
apt-get "${opts[@]}" -qq source --download-only git
orig=$(ls git_*.orig.tar.* | sort -V | tail -n 1)
tar -xf "$orig"
dir=$(ls -d git-*/ | sort -V | tail -n 1)
cd "$dir"
make -j"$(nproc)" prefix="$prefix" \
    NO_GETTEXT=1 NO_TCLTK=1 NO_PERL=1 NO_PYTHON=1 NO_CURL=1 NO_EXPAT=1 \
    install >/dev/null
"$prefix/bin/git" --version
