#!/usr/bin/env bash
# bench/run.sh — measure git-task against the git commands that do the same job (SPEC §10).
#
# usage: bench/run.sh [--sizes 10000,100000] [--runs 7] [--warmup 1] [--out bench/out]
#                     [--scenarios start,pool,remove,commit,confighooks,list,status,patch,merge,gate,overlaps,guard,confine,install,live]
#                     [--list-tasks 1000] [--list-files 50] [--overlap-tasks 50] [--no-build] [--bin PATH]
#                     [--live-counts 1,100,1000] [--live-files 200] [--live-dir DIR]
#                     [--timer hyperfine|python|cpu] [--keep-work]
#
# Builds and installs the binary under OUT/prefix with ./install.sh, makes the benchmark repositories with
# ../shared/bench/make-repo.sh (cached under OUT/repos), and for every scenario and
# size runs the git-task command and its git counterpart alternately (A B, then B A, ...)
# after a warm-up, with untimed prepare/cleanup steps so that every timed run starts
# from the same state. Writes OUT/results.md, OUT/results.json and prints the table.
# Scenarios the build does not support yet are reported as "skipped".
# See bench/README.md for what each scenario measures.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(git -C "$BENCH_DIR" rev-parse --show-toplevel)
LIB=$BENCH_DIR/lib/bench.py
MAKE_REPO=$TOP/../shared/bench/make-repo.sh

SIZES=10000,100000
RUNS=7
WARMUP=1
OUT=$TOP/bench/out
SCENARIOS=start,pool,remove,commit,confighooks,list,status,patch,merge,gate,overlaps,guard,install,live
# The user's own HOME, before setup_env replaces it: the install scenario's cargo needs its toolchain.
REAL_HOME=${HOME:-}
LIST_TASKS=1000
LIST_FILES=50
OVERLAP_TASKS=50
LIVE_COUNTS=1,100,1000
LIVE_FILES=200
LIVE_DIR=
BUILD=1
KEEP_WORK=0
GT=
TIMER=

# Exit-status text for a build that lacks a command or option.
UNSUPPORTED_RE='unrecognized subcommand|not available in this build|not supported|not implemented|unexpected argument|invalid value'

usage() { sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

parse_args() {
    while (($#)); do
        case $1 in
        --sizes) SIZES=$2; shift 2 ;;
        --runs) RUNS=$2; shift 2 ;;
        --warmup) WARMUP=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        --scenarios) SCENARIOS=$2; shift 2 ;;
        --list-tasks) LIST_TASKS=$2; shift 2 ;;
        --list-files) LIST_FILES=$2; shift 2 ;;
        --overlap-tasks) OVERLAP_TASKS=$2; shift 2 ;;
        --live-counts) LIVE_COUNTS=$2; shift 2 ;;
        --live-files) LIVE_FILES=$2; shift 2 ;;
        --live-dir) LIVE_DIR=$2; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        --bin) GT=$(realpath "$2"); BUILD=0; shift 2 ;;
        --keep-work) KEEP_WORK=1; shift ;;
        --timer) TIMER=$2; shift 2 ;;
        -h | --help) usage; exit 0 ;;
        *) echo "run.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
        esac
    done
    ((RUNS >= 1)) || { echo "run.sh: --runs must be >= 1" >&2; exit 2; }
    mkdir -p "$OUT"
    OUT=$(cd "$OUT" && pwd)
    if [[ $OUT == *[[:space:]]* ]]; then
        echo "run.sh: the output directory must not contain spaces: $OUT" >&2; exit 2
    fi
    RAW=$OUT/raw
    LOG=$OUT/log
}

say() { printf '[bench %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&3; }

want() { [[ ,$SCENARIOS, == *,$1,* ]]; }

# ---------------------------------------------------------------- tools and build

ensure_tools() {
    if [[ $TIMER == python || $TIMER == cpu ]]; then
        :
    elif ! command -v hyperfine >/dev/null; then
        say "hyperfine missing: trying apt-get install -y hyperfine"
        apt-get install -y hyperfine >/dev/null 2>&1 || true
    fi
    if [[ ! -x /usr/bin/time ]]; then
        say "/usr/bin/time missing: trying apt-get install -y time"
        apt-get install -y time >/dev/null 2>&1 || true
    fi
    [[ -x /usr/bin/time ]] || { echo "run.sh: /usr/bin/time is required (apt-get install time)" >&2; exit 1; }
    if [[ $TIMER != python && $TIMER != cpu ]]; then
        if command -v hyperfine >/dev/null; then TIMER=hyperfine; else TIMER=python; fi
    fi
    say "timer: $TIMER"
}

# The binary measured is the one ./install.sh installs (built as it builds it: statically
# linked on glibc Linux), installed under OUT/prefix.
build() {
    [[ -n $GT ]] || GT=$OUT/prefix/bin/git-task
    if ((BUILD)); then
        say "./install.sh (PREFIX=$OUT/prefix)"
        (cd "$TOP" && PREFIX=$OUT/prefix ./install.sh) >&3 2>&1
    fi
    [[ -x $GT ]] || { echo "run.sh: $GT not found (build failed or --no-build)" >&2; exit 1; }
}

# Hermetic git: no user/system config, no discovery above OUT, git-task on PATH.
setup_env() {
    export HOME=$OUT/home
    mkdir -p "$HOME"
    export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=$HOME/.gitconfig
    export GIT_CEILING_DIRECTORIES=$OUT:$(live_dir) NO_COLOR=1 LC_ALL=C
    unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_OBJECT_DIRECTORY
    export PATH=$(dirname "$GT"):$PATH
    git config --global user.name bench
    git config --global user.email bench@example.invalid
    git config --global init.defaultBranch main
    git config --global advice.detachedHead false
}

write_meta() {
    local commit dirty=""
    commit=$(git -C "$TOP" rev-parse --short HEAD)
    git -C "$TOP" diff --quiet HEAD -- src Cargo.toml Cargo.lock || dirty="+dirty"
    {
        printf 'date\t%s\n' "$(date -u +%Y-%m-%dT%H:%MZ)"
        printf 'host_cores\t%s\n' "$(nproc)"
        printf 'cpu\t%s\n' "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
        printf 'git_version\t%s\n' "$(git --version | sed 's/git version //')"
        printf 'git_task_commit\t%s\n' "$commit$dirty"
        printf 'timer\t%s\n' "$(case $TIMER in hyperfine) hyperfine --version ;; cpu) echo 'cpu (user+sys seconds from wait4)' ;; *) echo python-fallback ;; esac)"
        printf 'runs\t%s\n' "$RUNS"
        printf 'warmup\t%s\n' "$WARMUP"
        printf 'sizes\t%s\n' "$SIZES"
    } >"$RAW/meta.tsv"
}

# Does this build have the subcommand?
supports() { "$GT" "$@" --help >/dev/null 2>&1; }

# ---------------------------------------------------------------- repositories

# ensure_repo N — the cached repository of N files (made once, reused across runs).
ensure_repo() {
    local n=$1 dir=$OUT/repos/$1
    if [[ ! -f $dir.ok ]]; then
        rm -rf "$dir"
        mkdir -p "$OUT/repos"
        say "making repository of $n files (make-repo.sh)"
        "$MAKE_REPO" "$n" "$dir" >>"$LOG/make-repo.log" 2>&1
        touch "$dir.ok"
    fi
}

# fresh_copy N DEST — copy the cached repository; refresh the index (cp changes inodes and
# ctimes, which would otherwise make git and gix re-hash every file).
fresh_copy() {
    ensure_repo "$1"
    mkdir -p "$(dirname "$2")"
    cp -a "$OUT/repos/$1" "$2"
    git -C "$2" update-index -q --refresh
}

# pick_files DIR COUNT — COUNT tracked files spread evenly over the tree (deterministic).
pick_files() {
    git -C "$1" ls-files | awk -v c="$2" '{ f[NR] = $0 } END { s = int(NR / c); if (s < 1) s = 1;
        for (i = 1; i <= NR && n < c; i += s) { print f[i]; n++ } }'
}

# touch_files DIR TAG FILE.. — append one line to each file.
touch_files() {
    local d=$1 tag=$2 f
    shift 2
    for f in "$@"; do printf '// bench %s\n' "$tag" >>"$d/$f"; done
}

# Is any git-task process (this binary) still running, e.g. a background deleter?
gt_running() {
    python3 - "$GT" <<'PY'
import os, sys
gt = sys.argv[1]
for p in os.listdir("/proc"):
    if p.isdigit():
        try:
            if os.readlink(f"/proc/{p}/exe") == gt:
                sys.exit(0)
        except OSError:
            pass
sys.exit(1)
PY
}

wait_gt_idle() {
    local deadline=$((SECONDS + 300))
    while gt_running; do
        ((SECONDS < deadline)) || { echo "warning: git-task still running after 300 s" >&2; return 0; }
        sleep 0.1
    done
}

# drop_task REPO ID [BRANCH] — untimed clean-up with plain git: worktree, branch, task refs.
drop_task() {
    local r=$1 id=$2 branch=${3:-task/$2}
    wait_gt_idle
    rm -rf "$(dirname "$r")/$(basename "$r").tasks/$id"
    git -C "$r" worktree prune
    git -C "$r" branch -q -D "$branch" 2>/dev/null || true
    git -C "$r" for-each-ref --format='delete %(refname)' "refs/tasks/$id" | git -C "$r" update-ref --stdin
}

# remove_task REPO ID — untimed clean-up of a task with git-task's own `remove --force`, for
# repositories kept between runs (the live scenario's): deleting its refs with plain git is what
# the ledger calls tampering, and a later start of the same id would be refused for it.
remove_task() {
    wait_gt_idle
    "$GT" -C "$1" -q remove --force "$2" >/dev/null 2>&1 || drop_task "$1" "$2"
    wait_gt_idle
}

# ---------------------------------------------------------------- result rows

# row KEY SIZE LABEL SIDE_A SIDE_B KIND TARGET MEM_TARGET [NOTE] — declare a table row of the
# running scenario; it is written with its status by finish_rows (ok / skipped / failed).
row() {
    local a=("$@")
    while ((${#a[@]} < 9)); do a+=(""); done
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "${a[@]:0:9}" >>"$PENDING"
}

finish_rows() {
    local status=$1
    [[ -f $PENDING ]] || return 0
    awk -F'\t' -v OFS='\t' -v st="$status" '{ print $1,$2,$3,$4,$5,$6,$7,$8,st,$9 }' "$PENDING" >>"$RAW/rows.tsv"
    rm -f "$PENDING"
}

skip() {
    say "  skipped: $*"
    finish_rows "skipped ($*)"
    exit 0
}

# ---------------------------------------------------------------- measuring

is_compound() { [[ $1 == *[\&\|\;\$\=\<\>\(\)]* ]]; }

# time_once CMD — wall seconds of one run (hyperfine; python fallback). Compound commands run
# under sh (hyperfine subtracts the shell's start-up time); simple ones are exec'd directly.
time_once() {
    local c=$1 argv
    if [[ $TIMER == hyperfine ]]; then
        local opt=(-N)
        is_compound "$c" && opt=()
        hyperfine "${opt[@]}" --runs 1 --style none --export-json "$W/hf.json" -- "$c" >/dev/null
        python3 "$LIB" hf-seconds "$W/hf.json"
    elif [[ $TIMER == cpu ]]; then
        # User + system CPU seconds of the command and every process it waited for (a
        # commit's hooks): what a shared machine's load does not inflate.
        if is_compound "$c"; then
            python3 "$LIB" time --cpu --shell "$c"
        else
            read -ra argv <<<"$c"
            python3 "$LIB" time --cpu -- "${argv[@]}"
        fi
    elif is_compound "$c"; then
        python3 "$LIB" time --shell "$c"
    else
        read -ra argv <<<"$c"
        python3 "$LIB" time -- "${argv[@]}"
    fi
}

# probe_run KEY SIZE SIDE CMD — first warm-up run: under /usr/bin/time for peak memory; a
# failure of an unsupported command skips the scenario, any other failure fails it.
probe_run() {
    local key=$1 size=$2 side=$3 c=$4 argv rc=0
    if is_compound "$c"; then argv=(sh -c "$c"); else read -ra argv <<<"$c"; fi
    /usr/bin/time -f %M -o "$W/mem.txt" "${argv[@]}" >"$W/probe.out" 2>"$W/probe.err" || rc=$?
    cat "$W/probe.out" "$W/probe.err"
    if ((rc != 0)); then
        if grep -Eqi "$UNSUPPORTED_RE" "$W/probe.err"; then
            skip "not supported by this build"
        fi
        echo "error: '$c' failed with exit $rc" >&2
        exit 1
    fi
    printf '%s\t%s\t%s\t%s\n' "$key" "$size" "$side" "$(tail -1 "$W/mem.txt")" >>"$RAW/mem.tsv"
}

# measure KEY SIZE SIDE.. — for each side the scenario defines prep_SIDE RUN, cmd_SIDE RUN (prints
# the command) and clean_SIDE RUN. Warm-up rounds first (the first one measures peak memory),
# then RUNS timed rounds; the order of the sides alternates every round.
measure() {
    local key=$1 size=$2
    shift 2
    local sides=("$@") s w i c t
    local nwarm=$((WARMUP > 0 ? WARMUP : 1))
    for ((w = 1; w <= nwarm; w++)); do
        for s in "${sides[@]}"; do
            "prep_$s" "w$w"
            c=$("cmd_$s" "w$w")
            echo "+ warm-up $w $s: $c"
            if ((w == 1)); then probe_run "$key" "$size" "$s" "$c"; else time_once "$c" >/dev/null; fi
            "clean_$s" "w$w"
        done
    done
    for ((i = 1; i <= RUNS; i++)); do
        local order=("${sides[@]}")
        if ((i % 2 == 0)); then
            order=()
            for ((w = ${#sides[@]} - 1; w >= 0; w--)); do order+=("${sides[w]}"); done
        fi
        for s in "${order[@]}"; do
            "prep_$s" "$i"
            # What the preparation wrote (a copied repository, a checkout) goes to disk
            # now, not in the background during the timed command.
            sync
            c=$("cmd_$s" "$i")
            if ((i == 1)); then
                printf '%s\t%s\t%s\t%s\n' "$key" "$size" "$s" "$c" >>"$RAW/commands.tsv"
            fi
            t=$(time_once "$c")
            echo "+ run $i $s: ${t}s  $c"
            printf '%s\t%s\t%s\t%s\t%s\n' "$key" "$size" "$s" "$i" "$t" >>"$RAW/samples.tsv"
            "clean_$s" "$i"
        done
        say "  round $i/$RUNS done"
    done
}

# run_scenario NAME SIZE — run scenario_NAME in a subshell with its own log and work dir;
# a crash marks its rows "failed" and the run goes on.
run_scenario() {
    local name=$1 size=$2 rc=0
    export W=$OUT/work/$name-$size PENDING=$RAW/pending-$name-$size
    rm -rf "$W" "$PENDING"
    mkdir -p "$W"
    local log=$LOG/$name-$size.log
    say "scenario $name, size $size (log: ${log#"$OUT"/})"
    set +e
    (
        set -euo pipefail
        exec >>"$log" 2>&1
        "scenario_$name" "$size"
        finish_rows ok
    )
    rc=$?
    set -e
    if ((rc != 0)); then
        say "  FAILED (exit $rc), see $log"
        finish_rows "failed (see log/$name-$size.log)"
    elif ((!KEEP_WORK)); then
        rm -rf "$W"
    fi
}

# ---------------------------------------------------------------- scenarios

# start (worktree mode) vs git worktree add -b: a new branch and a full checkout.
scenario_start() {
    local n=$1
    row start "$n" "start vs git worktree add -b" task git ratio 1.0 1.5
    R=$W/r
    fresh_copy "$n" "$R"
    prep_task() { :; }
    cmd_task() { echo "$GT -C $R start s-$1"; }
    clean_task() { drop_task "$R" "s-$1"; }
    prep_git() { :; }
    cmd_git() { echo "git -C $R worktree add -b g-$1 $W/r.tasks/g-$1"; }
    clean_git() { drop_task "$R" "g-$1" "g-$1"; }
    measure start "$n" task git
}

# start taking a warm pool entry (SPEC §10: ≤ 100 ms): before each run an entry is filled
# (untimed) and the base then moves on by one commit of 10 files, so the start moves the entry
# by a two-way checkout as well as renaming it. git worktree add -b is shown for reference.
scenario_pool() {
    local n=$1
    row pool "$n" "start from a warm pool [git: worktree add -b, reference]" task git absolute_ms 100 "" \
        "absolute target; the cold start is the start row"
    supports pool || skip "not supported by this build"
    R=$W/r
    fresh_copy "$n" "$R"
    mapfile -t FILES < <(pick_files "$R" 10)
    prep_task() {
        "$GT" -C "$R" -q pool fill 1 --wait >/dev/null
        touch_files "$R" "pool $1" "${FILES[@]}"
        git -C "$R" commit -q -am "bench: base moves on ($1)"
    }
    cmd_task() { echo "$GT -C $R start p-$1"; }
    clean_task() { drop_task "$R" "p-$1"; "$GT" -C "$R" -q pool drain >/dev/null; wait_gt_idle; }
    prep_git() { :; }
    cmd_git() { echo "git -C $R worktree add -b g-$1 $W/r.tasks/g-$1"; }
    clean_git() { drop_task "$R" "g-$1" "g-$1"; }
    measure pool "$n" task git
}

# ./install.sh from a fresh clone (SPEC §10: ≤ 2 minutes on 2 cores): a clone of HEAD, an
# empty target directory, cargo's registry cache as it is (sources, not builds). Run once:
# it is minutes long. Also records the build's user+sys CPU seconds in the log and raw/install.tsv,
# since the wall time depends on what else runs on the machine.
scenario_install() {
    local secs
    row install fresh-clone "./install.sh from a fresh clone" task "" absolute_ms 120000 "" \
        "one run; CPU time (user+sys) in raw/install.tsv"
    git clone -q "$TOP" "$W/clone"
    /usr/bin/time -f '%e %U %S %M' -o "$W/install.time" \
        env CARGO_TARGET_DIR="$W/target" PREFIX="$W/prefix" CARGO_BUILD_JOBS="$(nproc)" \
        RUSTUP_HOME="${RUSTUP_HOME:-$REAL_HOME/.rustup}" CARGO_HOME="${CARGO_HOME:-$REAL_HOME/.cargo}" \
        "$W/clone/install.sh"
    read -r secs user sys kib <"$W/install.time"
    printf '%s\t%s\t%s\t%s\t%s\n' install fresh-clone task 1 "$secs" >>"$RAW/samples.tsv"
    printf '%s\t%s\t%s\t%s\n' install fresh-clone task "$kib" >>"$RAW/mem.tsv"
    printf 'wall_s\t%s\nuser_s\t%s\nsys_s\t%s\n' "$secs" "$user" "$sys" >"$RAW/install.tsv"
    say "  install: ${secs}s wall, ${user}s user, ${sys}s sys"
}

# remove vs git worktree remove --force of a clean worktree made untimed by start / worktree add.
scenario_remove() {
    local n=$1
    row remove "$n" "remove vs git worktree remove --force" task git ratio 0.1 ""
    supports remove || skip "not supported by this build"
    R=$W/r
    fresh_copy "$n" "$R"
    prep_task() { "$GT" -C "$R" start "r-$1"; }
    cmd_task() { echo "$GT -C $R remove --force r-$1"; }
    clean_task() { drop_task "$R" "r-$1"; }
    prep_git() { git -C "$R" worktree add -q -b "g-$1" "$W/r.tasks/g-$1"; }
    cmd_git() { echo "git -C $R worktree remove --force $W/r.tasks/g-$1"; }
    clean_git() { drop_task "$R" "g-$1" "g-$1"; }
    measure remove "$n" task git
}

# A commit of 5 staged files on a task branch: git-task hooks vs empty hooks vs no hook. One
# repository with task "ct" started and the hooks installed; before each timed commit
# (untimed) the worktree is reset to the task's start, 5 files are changed and staged, and
# the pre-commit and reference-transaction hooks are put in place: git-task's as installed,
# `exit 0` each, or none. So the
# commits differ only in the hook, as SPEC §10 compares them ("the same commit with an empty
# hook"); separate copies of the repository added their own spread to the figure.
# The hooks are swapped where git runs them for the task worktree: git-task points a linked
# worktree's core.hooksPath at its own directory of that worktree (`git rev-parse --git-path
# hooks` there).
scenario_commit() {
    commit_scenario "$1" dir
}

# The same commit on git 2.54 or later (the hook suites' git 2.55, built by
# tests/tools/build-git.sh into target/git-2.55, or BENCH_CONFIG_GIT), where `hooks install`
# registers hooks defined in config: git-task's as installed (the config hooks, and the copies
# in the hooks directory, which step aside) against an empty config hook per event (`exit 0`,
# registered the same way) and nothing in the hooks directory.
scenario_confighooks() {
    commit_scenario "$1" config
}

commit_scenario() {
    local n=$1 mode=$2
    # A 100,000-file commit varies by a fifth from run to run (it writes a 10 MB index),
    # several times the hook's own cost: at least 25 runs.
    local RUNS=$((RUNS < 25 ? 25 : RUNS))
    local key=commit label="commit 5 files: git-task hooks vs empty hooks" sides=(hooks empty none)
    if [[ $mode == config ]]; then
        key=confighooks label="commit 5 files, git 2.55: git-task config hooks vs empty config hooks"
        sides=(hooks empty)
    fi
    # SPEC §10 sets the hook's target at 100,000 files; smaller sizes are shown for reference.
    if ((n >= 100000)); then
        row "$key" "$n" "$label" hooks empty ratio 1.05 ""
    else
        row "$key" "$n" "$label" hooks empty reference "" "" \
            "SPEC §10 sets this target (1.05x) at 100,000 files"
    fi
    if [[ $mode == dir ]]; then
        row commit "$n" "commit 5 files: git-task hooks vs no hook" hooks none reference "" ""
        row commit "$n" "commit 5 files: empty hooks vs no hook" empty none reference "" ""
    else
        local config_git=${BENCH_CONFIG_GIT:-$TOP/target/git-2.55/bin}
        [[ -x $config_git/git ]] || skip "no git 2.54 or later: run tests/tools/build-git.sh"
        export PATH=$config_git:$PATH
        git version
    fi
    supports hooks || skip "not supported by this build"
    fresh_copy "$n" "$W/r"
    "$GT" -C "$W/r" start ct
    "$GT" -C "$W/r" hooks install >"$W/install.out" 2>&1 || {
        cat "$W/install.out"
        grep -Eqi "$UNSUPPORTED_RE" "$W/install.out" && skip "not supported by this build"
        exit 1
    }
    cat "$W/install.out"
    local wt=$W/r.tasks/ct
    # Both hooks a commit runs that git-task installs: pre-commit and reference-transaction
    # (which git runs for each ref transaction of the commit, in each state). SLOTS get the
    # empty hook, DROPS go in the empty variant.
    local hooks slots=() drops=() name
    hooks=$(git -C "$wt" rev-parse --path-format=absolute --git-path hooks)
    for name in pre-commit reference-transaction; do
        if [[ $mode == dir ]]; then
            slots+=("$hooks/$name")
        else
            [[ -n $(git -C "$wt" config "hook.git-task-$name.command") ]] ||
                { echo "error: hooks install registered no config hook" >&2; exit 1; }
            slots+=("$W/r/.git/git-task/config-hooks/$name")
            drops+=("$hooks/$name")
        fi
    done
    local i=0 f
    for f in "${slots[@]}" "${drops[@]}"; do
        if [[ -f $f ]]; then cp -p "$f" "$W/slot$i.hooks"; fi
        printf '#!/bin/sh\nexit 0\n' >"$W/slot$i.empty"
        chmod +x "$W/slot$i.empty"
        i=$((i + 1))
    done
    START=$(git -C "$wt" rev-parse HEAD)
    mapfile -t FILES < <(pick_files "$W/r" 5)
    SLOTS=("${slots[@]}")
    DROPS=("${drops[@]}")
    commit_prep() { # VARIANT RUN: reset the task worktree to its start, stage 5 changed files, set the hooks
        local f i=0
        git -C "$wt" reset -q --hard "$START"
        touch_files "$wt" "commit $2 $1" "${FILES[@]}"
        git -C "$wt" add -- "${FILES[@]}"
        # Each slot is replaced (a hook defined in config must name a script that exists).
        for f in "${SLOTS[@]}"; do
            rm -f "$f"
            if [[ $1 != none && -f $W/slot$i.$1 ]]; then cp -p "$W/slot$i.$1" "$f"; fi
            i=$((i + 1))
        done
        for f in "${DROPS[@]}"; do
            rm -f "$f"
            if [[ $1 == hooks && -f $W/slot$i.hooks ]]; then cp -p "$W/slot$i.hooks" "$f"; fi
            i=$((i + 1))
        done
    }
    local v
    for v in "${sides[@]}"; do
        eval "prep_$v() { commit_prep $v \"\$1\"; }
              cmd_$v() { echo \"git -C $wt commit -q -m bench-$v-\$1\"; }
              clean_$v() { :; }"
    done
    measure "$key" "$n" "${sides[@]}"
}

# list with LIST_TASKS real tasks (worktrees) in a small repository of LIST_FILES files.
# Making (and deleting) 1,000 worktrees takes minutes, and list only reads, so the repository
# is kept under OUT/repos/list-* per binary (keyed by its sha256) and measured in place.
scenario_list() {
    local k id digest
    local size="$LIST_TASKS tasks, $LIST_FILES files"
    row list "$size" "list ($LIST_TASKS tasks) [git: worktree list, reference]" task git absolute_ms 50 "" \
        "absolute target; git worktree list is shown for reference only"
    row list "$size" "list ($LIST_TASKS tasks) [floor: lstat-floor, the syscalls a correct DIRTY column needs]" task floor reference "" "" \
        "bench/lib/lstat-floor.c: lstat of every worktree's index, tracked files and their directories, on every core, nothing else"
    digest=$(sha256sum "$GT" | cut -c1-12)
    local home=$OUT/repos/list-$LIST_TASKS-$LIST_FILES-$digest
    R=$home/r
    if [[ ! -f $home/ok ]]; then
        rm -rf "$OUT"/repos/list-*
        fresh_copy "$LIST_FILES" "$R"
        say "  starting $LIST_TASKS tasks (untimed; cached for this binary in ${home#"$OUT"/})"
        for ((k = 1; k <= LIST_TASKS; k++)); do
            printf -v id 't%04d' "$k"
            "$GT" -C "$R" -q start "$id" >/dev/null
            if ((k % 100 == 0)); then say "  $k tasks"; fi
        done
        touch "$home/ok"
    fi
    # The floor's inputs: every task worktree with its index, and the tracked paths.
    cc -O2 -pthread -o "$W/lstat-floor" "$BENCH_DIR/lib/lstat-floor.c"
    local admin
    for admin in "$R"/.git/worktrees/*/; do
        printf '%s\t%s\n' "$(dirname "$(cat "$admin/gitdir")")" "${admin}index"
    done >"$W/worktrees.tsv"
    git -C "$R" ls-files >"$W/paths.txt"
    prep_task() { :; }
    cmd_task() { echo "$GT -C $R list"; }
    clean_task() { :; }
    prep_git() { :; }
    cmd_git() { echo "git -C $R worktree list"; }
    clean_git() { :; }
    prep_floor() { :; }
    cmd_floor() { echo "$W/lstat-floor $W/worktrees.tsv $W/paths.txt"; }
    clean_floor() { :; }
    measure list "$size" task git floor
}

# overlaps of OVERLAP_TASKS live tasks (1,225 pairs for 50), absolute (SPEC §10: <= 1 s at
# 100,000 files). The worst case for the trial merges: every task changes 4 files of its own and
# one line of a shared 200-line file (a different line each, so all pairs meet and merge cleanly),
# so every pair is merged in memory. git merge-tree of one pair is shown for reference.
scenario_overlaps() {
    local n=$1 k id f
    row overlaps "$n" "overlaps ($OVERLAP_TASKS tasks, every pair merged) [git: merge-tree of one pair, reference]" task git absolute_ms 1000 "" \
        "absolute target; git merge-tree --write-tree of one pair is shown for reference only"
    supports overlaps || skip "not supported by this build"
    R=$W/r
    fresh_copy "$n" "$R"
    mapfile -t FILES < <(pick_files "$R" $((OVERLAP_TASKS * 4 + 1)))
    local shared=${FILES[0]}
    python3 -c 'import sys; open(sys.argv[1], "w").write("".join(f"shared line {i}\n" for i in range(200)))' "$R/$shared"
    git -C "$R" commit -q -am "bench: a shared file"
    say "  starting $OVERLAP_TASKS tasks with committed work (untimed)"
    for ((k = 1; k <= OVERLAP_TASKS; k++)); do
        printf -v id 'o%02d' "$k"
        local own=("${FILES[@]:$((1 + (k - 1) * 4)):4}") allow=()
        for f in "$shared" "${own[@]}"; do allow+=(--allow "$f"); done
        # Sparse: 50 full checkouts of 100,000 files do not fit on the disk here; the trial
        # merges work on the whole trees all the same (see bench/README.md).
        "$GT" -C "$R" -q start "$id" --sparse "${allow[@]}" >/dev/null 2>&1
        WT=$W/r.tasks/$id
        touch_files "$WT" "$id" "${own[@]}"
        sed -i "$((k * 3 + 1))s/.*/changed by $id/" "$WT/$shared"
        git -C "$WT" commit -q -am "work $id"
    done
    prep_task() { :; }
    cmd_task() { echo "$GT -C $R overlaps"; }
    clean_task() { :; }
    prep_git() { :; }
    cmd_git() { echo "git -C $R merge-tree --write-tree task/o01 task/o02 >/dev/null || true"; }
    clean_git() { :; }
    measure overlaps "$n" task git
    # The same without looking at the worktrees (committed work only), and the cost of that
    # look alone: a status of each of the 50 worktrees, as `list` does.
    row overlaps-committed "$n" "overlaps --committed ($OVERLAP_TASKS tasks) [git: status of the 50 worktrees, reference]" task git absolute_ms 1000 "" \
        "committed work only; git status of every task worktree (what counting uncommitted work costs) is the reference"
    cmd_task() { echo "$GT -C $R overlaps --committed"; }
    cmd_git() { echo "for d in $W/r.tasks/*; do git -C \$d status --porcelain >/dev/null; done"; }
    measure overlaps-committed "$n" task git
}

# status of one task vs git status in its worktree: 5 files committed on the branch,
# 3 modified but unstaged, 2 untracked.
scenario_status() {
    local n=$1
    row status "$n" "status ID vs git status" task git ratio 2.0 ""
    R=$W/r
    fresh_copy "$n" "$R"
    "$GT" -C "$R" start st
    WT=$W/r.tasks/st
    mapfile -t FILES < <(pick_files "$R" 8)
    touch_files "$WT" committed "${FILES[@]:0:5}"
    git -C "$WT" add -- "${FILES[@]:0:5}"
    git -C "$WT" commit -q -m "bench: 5 files"
    touch_files "$WT" dirty "${FILES[@]:5:3}"
    echo untracked >"$WT/untracked-1.txt"
    mkdir -p "$WT/new-dir" && echo untracked >"$WT/new-dir/untracked-2.txt"
    prep_task() { :; }
    cmd_task() { echo "$GT -C $WT status st"; }
    clean_task() { :; }
    prep_git() { :; }
    cmd_git() { echo "git -C $WT status"; }
    clean_git() { :; }
    measure status "$n" task git
}

# patch-mode start vs a temporary-index snapshot, with 10 modified, 2 staged and 5 untracked
# files. Every run works on a fresh copy of that dirty template (untimed).
scenario_patch() {
    local n=$1
    row patch "$n" "start --mode patch vs temp-index snapshot" task git ratio 1.0 ""
    local tpl=$W/tpl
    fresh_copy "$n" "$tpl"
    mapfile -t FILES < <(pick_files "$tpl" 12)
    touch_files "$tpl" dirty "${FILES[@]}"
    git -C "$tpl" add -- "${FILES[@]:10:2}"
    for k in 1 2 3; do echo "untracked $k" >"$tpl/untracked-$k.txt"; done
    mkdir -p "$tpl/new-dir" && echo a >"$tpl/new-dir/a.txt" && echo b >"$tpl/new-dir/b.txt"
    git -C "$tpl" update-index -q --refresh || true
    R=$W/r
    patch_prep() { rm -rf "$R"; cp -a "$tpl" "$R"; git -C "$R" update-index -q --refresh || true; }
    prep_task() { patch_prep; }
    cmd_task() { echo "$GT -C $R start --mode patch p-$1"; }
    clean_task() { wait_gt_idle; }
    prep_git() { patch_prep; }
    cmd_git() {
        echo "cd $R && cp .git/index .git/snap-index && export GIT_INDEX_FILE=.git/snap-index" \
            "&& git add -A && t=\$(git write-tree) && git commit-tree -p HEAD -m snapshot \$t"
    }
    clean_git() { :; }
    measure patch "$n" task git
}

# merge of a task whose branch changes 50 files vs git merge --squash + git commit, both into
# main checked out in the main worktree. git-task runs with --keep (no worktree removal), so
# both sides do the same job; main is reset untimed after each run.
scenario_merge() {
    local n=$1
    row merge "$n" "merge --keep (50 files) vs merge --squash + commit" task git ratio 1.0 ""
    supports merge || skip "not supported by this build"
    R=$W/r
    fresh_copy "$n" "$R"
    BASE=$(git -C "$R" rev-parse HEAD)
    mapfile -t FILES < <(pick_files "$R" 50)
    branch_work() { # WORKTREE TAG: change the 50 files there and commit
        touch_files "$1" "$2" "${FILES[@]}"
        git -C "$1" add -- "${FILES[@]}"
        git -C "$1" commit -q -m "work $2"
    }
    reset_main() {
        wait_gt_idle
        git -C "$R" reset -q --hard "$BASE"
        git -C "$R" update-ref -d refs/notes/tasks 2>/dev/null || true
    }
    prep_task() { "$GT" -C "$R" -q start "m-$1"; branch_work "$W/r.tasks/m-$1" "task-$1"; }
    cmd_task() { echo "$GT -C $R merge --keep m-$1"; }
    clean_task() { reset_main; drop_task "$R" "m-$1"; }
    prep_git() { git -C "$R" worktree add -q -b "g-$1" "$W/r.tasks/g-$1"; branch_work "$W/r.tasks/g-$1" "git-$1"; }
    cmd_git() { echo "git -C $R merge --squash -q g-$1 && git -C $R commit -q -m squash-g-$1"; }
    clean_git() { reset_main; drop_task "$R" "g-$1" "g-$1"; }
    measure merge "$n" task git
}

# merge with a no-op check vs the same merge with --no-checks (SPEC §10: <= 1.5x at 100,000
# files, issue 33): checks run in the gate checkout git-task keeps warm under
# <common>/git-task/gate/, brought to each landing by a two-way checkout of the paths that
# differ (here the 50 files of this task and the 50 of the one before, since main is reset
# between runs). Both sides merge the same kind of task (started with --check true); only the
# checks differ. Then a real check (a walk of the whole tree, `find . -type f | wc -l`) with the
# gate checkout cold (deleted before the run: a full checkout) vs warm (kept from the run before).
scenario_gate() {
    local n=$1
    row gate "$n" "merge --keep (50 files): check 'true' vs --no-checks" chk plain ratio 1.5 ""
    row gate "$n" "merge --keep (50 files), check 'find . -type f': gate warm vs cold" warm cold reference "" "" \
        "reference: the second run of a real check, in the warm gate checkout, against the first"
    supports merge || skip "not supported by this build"
    R=$W/r
    fresh_copy "$n" "$R"
    BASE=$(git -C "$R" rev-parse HEAD)
    mapfile -t FILES < <(pick_files "$R" 50)
    branch_work() { # WORKTREE TAG: change the 50 files there and commit
        touch_files "$1" "$2" "${FILES[@]}"
        git -C "$1" add -- "${FILES[@]}"
        git -C "$1" commit -q -m "work $2"
    }
    reset_main() {
        wait_gt_idle
        git -C "$R" reset -q --hard "$BASE"
        git -C "$R" update-ref -d refs/notes/tasks 2>/dev/null || true
    }
    started() { # ID CHECK
        "$GT" -C "$R" -q start "$1" --check "$2"
        branch_work "$W/r.tasks/$1" "$1"
    }
    prep_chk() { started "c-$1" true; }
    cmd_chk() { echo "$GT -C $R merge --keep c-$1"; }
    clean_chk() { reset_main; drop_task "$R" "c-$1"; }
    prep_plain() { started "p-$1" true; }
    cmd_plain() { echo "$GT -C $R merge --keep --no-checks p-$1"; }
    clean_plain() { reset_main; drop_task "$R" "p-$1"; }
    local walk='find . -type f | wc -l'
    prep_warm() { started "w-$1" "$walk"; }
    cmd_warm() { echo "$GT -C $R merge --keep w-$1"; }
    clean_warm() { reset_main; drop_task "$R" "w-$1"; }
    prep_cold() { started "k-$1" "$walk"; rm -rf "$R/.git/git-task/gate"; }
    cmd_cold() { echo "$GT -C $R merge --keep k-$1"; }
    clean_cold() { reset_main; drop_task "$R" "k-$1"; }
    measure gate "$n" chk plain warm cold
}

# start, merge, the pre-commit hook, status and check with many live tasks vs with one (issue 33: <= 1.25x
# at 1,000 live tasks), on a LIVE_FILES-file repository. Two repositories side by side: "one" has
# only the task measured, "many" has COUNT-1 more live tasks started before (each with a commit of
# its own file under its own directory, allowed only there). Both sides do the same thing in
# their repository, alternated in the same run; the many-task repository grows through the counts
# in LIVE_COUNTS (untimed, kept under OUT/repos per binary, as list's).
#
# Where its repositories live (--live-dir): by default on tmpfs (/dev/shm, when it is one with
# 4 GiB free), else under OUT/repos. Both sides do the same git-task work, and what is compared
# is git-task's own cost per live task; on a disk file system the many-task repository's inode
# groups are fuller, and on this machine's ext4 (no journal) every new file scans past the
# recently deleted ones, so each removal between runs made the next start in it dearer (start
# rose from 33 to 62 ms over 11 runs while the one-task side went from 28 to 35): the file
# system's cost, not git-task's, and it drowned the comparison. `--live-dir OUT/repos` measures
# on disk.
live_dir() {
    if [[ -n $LIVE_DIR ]]; then
        echo "$LIVE_DIR"
    elif [[ $(stat -f -c %T /dev/shm 2>/dev/null) == tmpfs ]] &&
        (($(df -Pk /dev/shm | awk 'NR == 2 { print $4 }') > 4 * 1024 * 1024)); then
        echo "/dev/shm/git-task-bench-live-$(id -u)"
    else
        echo "$OUT/repos"
    fi
}

scenario_live() {
    local k id n count have=0 digest
    supports merge || skip "not supported by this build"
    digest=$(sha256sum "$GT" | cut -c1-12)
    local dir
    dir=$(live_dir)
    say "  live repositories under $dir"
    local home=$dir/live-$LIVE_FILES-$digest
    if [[ ! -d $home ]]; then
        rm -rf "$dir"/live-*
        fresh_copy "$LIVE_FILES" "$home/many"
        fresh_copy "$LIVE_FILES" "$home/one"
        for r in many one; do "$GT" -C "$home/$r" -q hooks install >/dev/null 2>&1 || true; done
    fi
    have=$(cat "$home/count" 2>/dev/null || echo 0)
    mapfile -t FILES < <(pick_files "$home/one" 5)
    for count in ${LIVE_COUNTS//,/ }; do
        say "  $count live tasks: starting $((count - 1 - have)) more (untimed)"
        for ((k = have + 1; k <= count - 1; k++)); do
            printf -v id 'bg%04d' "$k"
            "$GT" -C "$home/many" -q start "$id" --allow "bg/$id/**" >/dev/null
            mkdir -p "$home/many.tasks/$id/bg/$id"
            echo "$id" >"$home/many.tasks/$id/bg/$id/work.txt"
            git -C "$home/many.tasks/$id" add bg && git -C "$home/many.tasks/$id" commit -q -m "work $id"
        done
        have=$((count - 1 > have ? count - 1 : have))
        echo "$have" >"$home/count"
        live_rows "$count" "$home"
    done
}

# live_rows COUNT HOME — the five rows at COUNT live tasks.
live_rows() {
    local count=$1 home=$2
    local size="$count live tasks, $LIVE_FILES files"
    row live-start "$size" "start (overlap warning): $count live tasks vs 1" many one ratio 1.25 ""
    row live-merge "$size" "merge --keep --no-checks (post-merge forecast): $count live tasks vs 1" many one ratio 1.25 ""
    row live-hook "$size" "commit 1 file through the pre-commit hook: $count live tasks vs 1" many one ratio 1.25 ""
    row live-status "$size" "status ID: $count live tasks vs 1" many one ratio 1.25 ""
    row live-check "$size" "check ID: $count live tasks vs 1" many one ratio 1.25 ""
    # start
    prep_many() { :; }
    cmd_many() { echo "$GT -C $home/many start ls$count-$1 --allow ${FILES[0]%/*}/**"; }
    clean_many() { remove_task "$home/many" "ls$count-$1"; }
    prep_one() { :; }
    cmd_one() { echo "$GT -C $home/one start ls$count-$1 --allow ${FILES[0]%/*}/**"; }
    clean_one() { remove_task "$home/one" "ls$count-$1"; }
    measure live-start "$size" many one
    # merge (the post-merge forecast looks at every live task on the target)
    live_merge_prep() { # REPO ID
        "$GT" -C "$1" -q start "$2" >/dev/null
        touch_files "$1.tasks/$2" "$2" "${FILES[@]}"
        git -C "$1.tasks/$2" commit -q -am "work $2"
        git -C "$1" rev-parse HEAD >"$W/base-${1##*/}"
    }
    live_merge_clean() { # REPO ID
        wait_gt_idle
        git -C "$1" reset -q --hard "$(cat "$W/base-${1##*/}")"
        git -C "$1" update-ref -d refs/notes/tasks 2>/dev/null || true
        remove_task "$1" "$2"
    }
    prep_many() { live_merge_prep "$home/many" "lm$count-$1"; }
    cmd_many() { echo "$GT -C $home/many merge --keep --no-checks lm$count-$1"; }
    clean_many() { live_merge_clean "$home/many" "lm$count-$1"; }
    prep_one() { live_merge_prep "$home/one" "lm$count-$1"; }
    cmd_one() { echo "$GT -C $home/one merge --keep --no-checks lm$count-$1"; }
    clean_one() { live_merge_clean "$home/one" "lm$count-$1"; }
    measure live-merge "$size" many one
    # the pre-commit hook and status, in one task worktree of each repository
    for r in many one; do
        [[ -d $home/$r.tasks/lh ]] || "$GT" -C "$home/$r" -q start lh >/dev/null
    done
    live_hook_prep() { # REPO
        touch_files "$1.tasks/lh" "hook $RANDOM" "${FILES[0]}"
        git -C "$1.tasks/lh" add -- "${FILES[0]}"
    }
    live_hook_clean() { git -C "$1.tasks/lh" reset -q --soft HEAD~1; git -C "$1.tasks/lh" reset -q; }
    prep_many() { live_hook_prep "$home/many"; }
    cmd_many() { echo "git -C $home/many.tasks/lh commit -q -m hook"; }
    clean_many() { live_hook_clean "$home/many"; }
    prep_one() { live_hook_prep "$home/one"; }
    cmd_one() { echo "git -C $home/one.tasks/lh commit -q -m hook"; }
    clean_one() { live_hook_clean "$home/one"; }
    measure live-hook "$size" many one
    prep_many() { :; }
    cmd_many() { echo "$GT -C $home/many.tasks/lh status lh"; }
    clean_many() { :; }
    prep_one() { :; }
    cmd_one() { echo "$GT -C $home/one.tasks/lh status lh"; }
    clean_one() { :; }
    measure live-status "$size" many one
    # check (the task's whole diff judged against its effective contract, other tasks' claims
    # included)
    prep_many() { :; }
    cmd_many() { echo "$GT -C $home/many.tasks/lh check lh"; }
    clean_many() { :; }
    prep_one() { :; }
    cmd_one() { echo "$GT -C $home/one.tasks/lh check lh"; }
    clean_one() { :; }
    measure live-check "$size" many one
}

# guard claude (SPEC §10: <= 10 ms per call at 100,000 files): Claude Code's PreToolUse input
# for one Edit, on stdin, once for a path the contract allows (no output) and once for one it
# refuses (the deny document). Read-only, so no prepare. The binary is run directly, as the
# other rows do; Claude Code's `git task guard claude` adds one git start-up (~1-2 ms).
# `git cat-file -e HEAD:<path>` in the task worktree (one git start-up and one tree lookup) is
# shown for reference.
scenario_guard() {
    local n=$1
    row guard "$n" "guard claude: an allowed Edit [git: cat-file -e HEAD:path, reference]" task git absolute_ms 10 "" \
        "absolute target; the input on stdin through sh, whose start-up hyperfine subtracts"
    row guard "$n" "guard claude: a refused Edit [git: cat-file -e HEAD:path, reference]" deny git absolute_ms 10 "" \
        "absolute target; prints the deny document"
    supports guard || skip "not supported by this build"
    R=$W/r
    fresh_copy "$n" "$R"
    mapfile -t FILES < <(pick_files "$R" 1)
    local f=${FILES[0]}
    "$GT" -C "$R" -q start gd --allow "${f%%/*}/**" --forbid "*.lock" >/dev/null
    WT=$W/r.tasks/gd
    input() { # PATH: Claude Code's PreToolUse input for an Edit of PATH
        printf '{"session_id":"bench","transcript_path":"/dev/null","cwd":"%s","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"%s","old_string":"a","new_string":"b","replace_all":false},"tool_use_id":"toolu_bench"}\n' "$WT" "$1"
    }
    input "$WT/$f" >"$W/allow.json"
    input "$WT/not-allowed/x.rs" >"$W/deny.json"
    # Both answers as expected, or the figures mean nothing.
    [[ -z $("$GT" guard claude <"$W/allow.json") ]] || { echo "guard refused an allowed edit" >&2; exit 1; }
    "$GT" guard claude <"$W/deny.json" | grep -q '"permissionDecision":"deny"' || { echo "guard did not refuse" >&2; exit 1; }
    prep_task() { :; }
    cmd_task() { echo "$GT guard claude <$W/allow.json"; }
    clean_task() { :; }
    prep_deny() { :; }
    cmd_deny() { echo "$GT guard claude <$W/deny.json"; }
    clean_deny() { :; }
    prep_git() { :; }
    cmd_git() { echo "git -C $WT cat-file -e HEAD:$f"; }
    clean_git() { :; }
    measure guard "$n" task deny git
}

# exec --confine -- true vs exec -- true (SPEC §10: <= 5 ms more): what the kernel fence adds to
# the start of a session: settling the previous session's private object store, making and
# listing a fresh one, the Landlock ruleset and the seccomp filter, then exec in place of
# spawn and wait. Both run /bin/true in the same task worktree; the target is the difference.
scenario_confine() {
    local n=$1
    row confine "$n" "exec --confine -- true [git column: exec -- true]" task plain delta_ms 5 "" \
        "target: the difference of the medians (git-task's own exec -- true is the reference side)"
    "$GT" exec --help 2>/dev/null | grep -q -- '--confine' || skip "not supported by this build"
    R=$W/r
    fresh_copy "$n" "$R"
    "$GT" -C "$R" -q start cf >/dev/null
    "$GT" -C "$R" exec cf --confine -- true || skip "this kernel cannot confine (see hooks status)"
    prep_task() { :; }
    cmd_task() { echo "$GT -C $R exec cf --confine -- true"; }
    clean_task() { :; }
    prep_plain() { :; }
    cmd_plain() { echo "$GT -C $R exec cf -- true"; }
    clean_plain() { :; }
    measure confine "$n" task plain
}

# ---------------------------------------------------------------- main

main() {
    exec 3>&2
    parse_args "$@"
    local t0=$SECONDS size sc
    ensure_tools
    build
    setup_env
    rm -rf "$RAW" "$LOG" "$OUT/work"
    mkdir -p "$RAW" "$LOG"
    write_meta
    say "git-task $GT; sizes $SIZES; runs $RUNS; warm-up $WARMUP; out $OUT"
    for size in ${SIZES//,/ }; do
        for sc in start pool remove commit confighooks status patch merge gate overlaps guard confine; do
            if want "$sc"; then run_scenario "$sc" "$size"; fi
        done
    done
    if want list; then run_scenario list "$LIST_TASKS"; fi
    if want live; then run_scenario live "$LIVE_COUNTS"; fi
    if want install; then run_scenario install "fresh-clone"; fi
    if ((!KEEP_WORK)); then rm -rf "$OUT/work"; fi
    say "done in $((SECONDS - t0)) s"
    python3 "$LIB" report "$OUT"
}

main "$@"; exit $?  # on one line: bash must not read on after main (the file may change meanwhile)
