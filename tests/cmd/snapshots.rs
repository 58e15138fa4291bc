//! Snapshot tests of what every command prints: stdout, stderr and exit code, in human and `--json` form.
//!
//! Each test builds a fixed repository ([`TestRepo::new`]: pinned identity, dates and
//! environment, colour off), runs `git task` commands through [`Snap::run`], and compares the
//! transcript with a file under `tests/cmd/snapshots/`. A reworded message, a misaligned table
//! or a renamed JSON field shows up as a snapshot diff. What varies from run to run (the temp
//! directory, object ids, times, durations, pids, generated task names) is replaced by
//! placeholders in one place, [`normalise`]:
//!
//! | placeholder     | stands for                                                        |
//! |-----------------|-------------------------------------------------------------------|
//! | `[TMP]`         | the test's temporary directory (holding `repo/`, `home/`, `repo.tasks/`) |
//! | `[BIN]`         | the path of the `git-task` binary under test                       |
//! | `[VERSION]`     | the package version, in `git-task <version>`                      |
//! | `[NAME1]`, …    | task names `start` generated, in order of first appearance         |
//! | `[OID]`         | a full 40-hex object id                                            |
//! | `[HASH]`        | an abbreviated object id (7 to 12 hex digits)                     |
//! | `[TIME]`        | a date and time; the `time`, `created`, `updated` fields (JSON or `key=value`) |
//! | `[DURATION]`    | a duration such as `0.0s` or `12ms`                               |
//! | `[MS]`          | a `millis` field                                                  |
//! | `[NONCE]`, `[PID]` | the `nonce` and `pid` fields of JSON events                     |
//! | `[GIT STDERR]`  | a JSON `detail` field holding git's stderr (depends on git's version) |
//! | `[RAND]`        | the random part of a temporary name (`.tmp[RAND]`, `git-task-check-<id>-[RAND]`) |
//!
//! JSON output is checked to be one document and shown pretty-printed (keys sorted) under
//! `stdout (json):`. Escape codes of the colour test are shown as `^[`.
//!
//! ## Reviewing and accepting changes
//!
//! A test whose output changed fails and shows the diff; with insta's default
//! (`INSTA_UPDATE=auto`) it also writes `<name>.snap.new` beside the snapshot, except under
//! `CI` set, where nothing is written and a mismatch (or a missing snapshot) just fails.
//!
//! - With cargo-insta installed: run the tests as usual (or `cargo insta test`), then
//!   `cargo insta review` to accept or reject each `.snap.new`.
//! - Without it: `INSTA_UPDATE=always cargo test --test cli snapshots` rewrites the `.snap`
//!   files in place; then read `git diff tests/cmd/snapshots/`, make sure every change is
//!   intended, and commit the files. Delete any stray `*.snap.new` (`INSTA_UPDATE=no` never
//!   writes them).
//!
//! A new test writes its first snapshot the same way; look at it before committing it.

use crate::common::{bin, Run, TestRepo};
use crate::common::{commit_all, craft_abandoned_start, lone_task_branch};
use regex::Regex;
use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

/// One command run, kept raw until the snapshot is taken (redactions are known only then).
struct Record {
    /// The working directory, when it is not the main worktree.
    dir: Option<PathBuf>,
    /// `git task` or `git`.
    program: &'static str,
    args: Vec<String>,
    run: Run,
}

/// A test repository plus the transcript of the runs to snapshot.
struct Snap {
    repo: TestRepo,
    records: Vec<Record>,
    /// Redact every task id under `refs/tasks/` as a generated name.
    generated_names: bool,
    /// Extra environment for every run (`(key, Some(value))` sets, `None` removes).
    env: Vec<(&'static str, Option<String>)>,
}

impl Snap {
    /// A fresh [`TestRepo::new`] repository.
    fn new() -> Self {
        let repo = TestRepo::new();
        // Temporary files of the binary (the merge gate's checkout) go under the test's own
        // directory, so that their paths are redacted like every other path.
        let tmp = repo.base().join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        Snap {
            repo,
            records: Vec::new(),
            generated_names: false,
            env: vec![("TMPDIR", Some(tmp.display().to_string()))],
        }
    }

    fn root(&self) -> PathBuf {
        self.repo.root().to_path_buf()
    }

    /// Runs `git task args..` in the main worktree and records it.
    fn run(&mut self, args: &[&str]) -> &Run {
        let root = self.root();
        self.run_in(&root, args)
    }

    /// Runs `git task args..` in `dir` and records it.
    fn run_in(&mut self, dir: &Path, args: &[&str]) -> &Run {
        let mut cmd = self.repo.command(bin(), dir);
        cmd.args(args);
        self.record(cmd, "git task", dir, args)
    }

    /// Runs plain `git args..` in `dir` and records it (to show what git-task's hooks print).
    fn run_git(&mut self, dir: &Path, args: &[&str]) -> &Run {
        let mut cmd = self.repo.command("git", dir);
        cmd.args(args);
        self.record(cmd, "git", dir, args)
    }

    fn record(
        &mut self,
        mut cmd: std::process::Command,
        program: &'static str,
        dir: &Path,
        args: &[&str],
    ) -> &Run {
        for (key, value) in &self.env {
            match value {
                Some(v) => cmd.env(key, v),
                None => cmd.env_remove(key),
            };
        }
        let out = cmd.output().expect("the process runs");
        let run = Run::of(out);
        let dir = (dir != self.repo.root()).then(|| dir.to_path_buf());
        let args = args.iter().map(|a| (*a).to_owned()).collect();
        self.records.push(Record {
            dir,
            program,
            args,
            run,
        });
        &self.records.last().unwrap().run
    }

    /// The normalised transcript of every recorded run.
    fn transcript(&self) -> String {
        let names = if self.generated_names {
            generated_names(&self.repo, &self.records)
        } else {
            Vec::new()
        };
        let redact = |text: &str| normalise(&self.repo, &names, text);
        let mut out = String::new();
        for (i, rec) in self.records.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            if let Some(dir) = &rec.dir {
                writeln!(out, "(in {})", redact(&dir.display().to_string())).unwrap();
            }
            let args: String = rec.args.iter().map(|a| format!(" {}", quote(a))).collect();
            writeln!(out, "$ {}{}", rec.program, redact(&args)).unwrap();
            writeln!(out, "[exit: {}]", rec.run.code).unwrap();
            let json = rec.program == "git task" && rec.args.iter().any(|a| a == "--json");
            match serde_json::from_str::<Value>(&rec.run.stdout) {
                Ok(value) if json => {
                    let pretty = serde_json::to_string_pretty(&value).unwrap();
                    section(&mut out, "stdout (json)", &redact(&format!("{pretty}\n")));
                }
                _ => section(&mut out, "stdout", &redact(&rec.run.stdout)),
            }
            section(&mut out, "stderr", &redact(&rec.run.stderr));
        }
        out
    }

    /// Compares the transcript with `tests/cmd/snapshots/<name>.snap`.
    #[track_caller]
    fn assert(&self, name: &str) {
        assert_transcript(name, &self.transcript());
    }
}

/// Compares `text` with the snapshot `name` (file `tests/cmd/snapshots/<name>.snap`).
#[track_caller]
fn assert_transcript(name: &str, text: &str) {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| insta::assert_snapshot!(name, text));
}

/// Appends one labelled stream; marks a missing final newline and shows nothing for an empty stream.
fn section(out: &mut String, label: &str, text: &str) {
    if text.is_empty() {
        writeln!(out, "{label}: (empty)").unwrap();
        return;
    }
    writeln!(out, "{label}:").unwrap();
    out.push_str(text);
    if !text.ends_with('\n') {
        out.push_str("\n[no final newline]\n");
    }
    out.push_str("[EOF]\n");
}

/// Shell-quotes an argument for the transcript, when it needs it.
fn quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:*@,+".contains(c));
    if plain {
        arg.to_owned()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

/// Task ids under `refs/tasks/`, numbered `[NAME1]`, … in order of first appearance in the transcript.
fn generated_names(repo: &TestRepo, records: &[Record]) -> Vec<(String, String)> {
    let mut ids: Vec<String> = repo
        .refs("refs/tasks/")
        .iter()
        .filter_map(|r| r.strip_prefix("refs/tasks/")?.split('/').next())
        .map(str::to_owned)
        .collect();
    ids.sort();
    ids.dedup();
    let all: String = records
        .iter()
        .map(|r| format!("{}{}", r.run.stdout, r.run.stderr))
        .collect();
    ids.sort_by_key(|id| all.find(id.as_str()).unwrap_or(usize::MAX));
    ids.into_iter()
        .enumerate()
        .map(|(i, id)| (id, format!("[NAME{}]", i + 1)))
        .collect()
}

/// JSON fields whose values change from run to run, and their placeholders.
const JSON_FIELDS: &[(&str, &str)] = &[
    ("time", "[TIME]"),
    ("created", "[TIME]"),
    ("updated", "[TIME]"),
    ("millis", "[MS]"),
    ("nonce", "[NONCE]"),
    ("pid", "[PID]"),
    // git's own stderr (a refused checkout): its wording and advice depend on git's version.
    ("detail", "[GIT STDERR]"),
];

/// The [`JSON_FIELDS`] wherever they appear: in JSON output, in JSON embedded in a human line
/// (as `log` prints details), or as `key=value`. A number or non-empty string value is replaced
/// (`"millis": 12` becomes `"millis": "[MS]"`, `time=1795480806` becomes `time=[TIME]`);
/// booleans and empty strings stay.
static FIELDS_IN_TEXT: LazyLock<Vec<(Regex, String)>> = LazyLock::new(|| {
    JSON_FIELDS
        .iter()
        .flat_map(|(key, placeholder)| {
            let json = format!(r#"("{key}":\s*)(-?\d+|"([^"\\]|\\.)+")"#);
            let pair = format!(r"(\b{key}=)(\S+)");
            [
                (json, format!("${{1}}\"{placeholder}\"")),
                (pair, format!("${{1}}{placeholder}")),
            ]
            .map(|(re, to)| (Regex::new(&re).unwrap(), to))
        })
        .collect()
});

/// Patterns replaced in every stream, in this order (after the literal paths and names).
static PATTERNS: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    [
        // Random parts of temporary names: tempfile's `.tmpXXXXXX`, pid and nanos suffixes.
        (r"\.tmp[A-Za-z0-9]{6}", ".tmp[RAND]"),
        (
            r"(git-task-check-[A-Za-z0-9._-]+-)[A-Za-z0-9]{6}\b",
            "${1}[RAND]",
        ),
        (r"\.git-task-\d+\.tmp", ".git-task-[PID].tmp"),
        (r"\.removing-\d+-\d+", ".removing-[PID]-[NANOS]"),
        // gix's "not a repository" names the ceiling the tests set (`GIT_CEILING_DIRECTORIES`:
        // their temporary directories live inside the checkout's `target/`).
        (r" within ceiling height of \d+", ""),
        // Dates and times: `2026-11-24 00:40:06`, RFC 3339, with an optional zone.
        (
            r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d+)?( ?(Z|[+-]\d{2}:?\d{2}))?",
            "[TIME]",
        ),
        // Durations: `0.0s`, `1.25s`, `12ms`.
        (r"\b\d+(\.\d+)?(ms|s)\b", "[DURATION]"),
        (r"\b[0-9a-f]{40}\b", "[OID]"),
        (r"\b[0-9a-f]{7,12}\b", "[HASH]"),
        // Escape codes made visible (the colour test).
        ("\x1b", "^["),
        // What this kernel offers `exec --confine` (`hooks status`) depends on the machine.
        (
            r"exec --confine   (available|NOT available)[^\n]*",
            "exec --confine   [CONFINE]",
        ),
        (r#""confine": \{[^}]*\}"#, r#""confine": "[CONFINE]""#),
    ]
    .into_iter()
    .map(|(re, to)| (Regex::new(re).unwrap(), to))
    .collect()
});

/// Makes output comparable across machines and runs: the one normalisation every snapshot goes through.
///
/// Deterministic under parallel tests: it depends only on this repository (its own temp
/// directory) and the binary path, never on global state.
fn normalise(repo: &TestRepo, names: &[(String, String)], text: &str) -> String {
    let mut text = text.replace(&bin().display().to_string(), "[BIN]");
    text = text.replace(
        &format!("git-task {}", env!("CARGO_PKG_VERSION")),
        "git-task [VERSION]",
    );
    text = text.replace(&repo.base().display().to_string(), "[TMP]");
    let mut names: Vec<&(String, String)> = names.iter().collect();
    names.sort_by_key(|(id, _)| std::cmp::Reverse(id.len()));
    for (id, placeholder) in names {
        text = text.replace(id.as_str(), placeholder);
    }
    for (re, to) in FIELDS_IN_TEXT.iter() {
        text = re.replace_all(&text, to.as_str()).into_owned();
    }
    for (re, to) in PATTERNS.iter() {
        text = re.replace_all(&text, *to).into_owned();
    }
    text
}

/// Runs the same command on two fresh copies of one scenario, as is and with `--json`, into one snapshot.
///
/// For commands that change the repository, so that the JSON form sees the same state as the human form.
#[track_caller]
fn human_and_json(name: &str, setup: impl Fn(&TestRepo), args: &[&str]) {
    let mut human = Snap::new();
    setup(&human.repo);
    human.run(args);
    let mut json = Snap::new();
    setup(&json.repo);
    let mut json_args = args.to_vec();
    json_args.push("--json");
    json.run(&json_args);
    let text = format!(
        "{}\n=== --json ===\n\n{}",
        human.transcript(),
        json.transcript()
    );
    assert_transcript(name, &text);
}

/// A task `t1` allowed `src/**`, forbidden `src/store/**`, with one check that passes.
fn fenced_task(repo: &TestRepo) -> PathBuf {
    repo.start(
        "t1",
        &[
            "--allow",
            "src/**",
            "--forbid",
            "src/store/**",
            "--check",
            "true",
        ],
    )
}

/// [`fenced_task`] with one committed change (`src/lib.rs`) and one uncommitted new file.
fn task_with_work(repo: &TestRepo) -> PathBuf {
    let wt = fenced_task(repo);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { work() }\n");
    commit_all(repo, &wt, "Use work");
    repo.write(&wt, "src/work.rs", "pub fn work() {}\n");
    wt
}

// ---------------------------------------------------------------------------------------------
// start

#[test]
fn start_worktree() {
    let mut s = Snap::new();
    s.run(&[
        "start",
        "t1",
        "--allow",
        "src/**",
        "--forbid",
        "src/store/**",
        "--no-deletions",
        "--check",
        "true",
    ]);
    s.run(&["start", "t2", "--json", "--allow", "src/**"]);
    // Starting an existing task again reports it, changing nothing.
    s.run(&["start", "t1"]);
    s.run(&["start", "t1", "--json"]);
    // --reset puts it back to its base, saving its work first.
    let wt = s.repo.task_dir("t1");
    s.repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    s.run(&["start", "t1", "--reset"]);
    s.run(&["start", "t1", "--reset", "--json"]);
    s.assert("start_worktree");
}

#[test]
fn start_patch() {
    let mut s = Snap::new();
    s.run(&["start", "p1", "--mode", "patch", "--forbid", "src/store/**"]);
    s.run(&["status", "p1"]);
    // Only one patch task at a time.
    s.run(&["start", "p2", "--mode", "patch"]);
    s.run(&["start", "p2", "--mode", "patch", "--json"]);
    // Merging a patch task accepts the work left in this worktree.
    let root = s.root();
    s.repo
        .write(&root, "src/lib.rs", "pub fn lib() { patched() }\n");
    s.run(&["merge", "p1"]);
    s.run(&["status", "p1"]);
    s.assert("start_patch");

    let mut s = Snap::new();
    s.run(&["start", "p1", "--mode", "patch", "--json"]);
    s.assert("start_patch_json");
}

#[test]
fn start_generated_name() {
    let mut s = Snap::new();
    s.generated_names = true;
    s.run(&["start"]);
    s.run(&["start", "--json"]);
    s.assert("start_generated_name");
}

#[test]
fn start_errors() {
    let mut s = Snap::new();
    s.run(&["start", "t1", "--base", "no-such-rev"]);
    s.run(&["start", "t1", "--base", "no-such-rev", "--json"]);
    s.run(&["start", "t1", "--mode", "elsewhere"]);
    s.run(&["start", "-bad"]);
    // A failing setup command undoes the start.
    s.run(&["start", "t1", "--setup", "echo setting up; exit 4"]);
    s.run(&["start", "t1", "--setup", "exit 4", "--json"]);
    s.run(&["start", "t1", "--contract", "no-such-file.toml"]);
    s.assert("start_errors");
}

// ---------------------------------------------------------------------------------------------
// list, status, path, scratch, log

#[test]
fn list() {
    let mut s = Snap::new();
    s.run(&["list"]);
    s.run(&["list", "--json"]);
    task_with_work(&s.repo);
    s.repo.start("other", &[]);
    s.repo.start("gone", &[]);
    s.repo.task_root(&["drop", "gone"]).ok();
    s.repo.task_root(&["remove", "gone"]).ok();
    s.repo.start("dropped", &[]);
    s.repo.task_root(&["drop", "dropped"]).ok();
    let merged = s.repo.start("merged", &["--allow", "docs/**"]);
    s.repo.write(&merged, "docs/a.md", "a\n");
    commit_all(&s.repo, &merged, "Docs");
    s.repo.task_root(&["merge", "merged"]).ok();
    s.run(&["list"]);
    s.run(&["list", "--all"]);
    s.run(&["list", "--all", "--json"]);
    s.assert("list");
}

#[test]
fn status() {
    let mut s = Snap::new();
    let wt = task_with_work(&s.repo);
    s.repo.task_root(&["checkpoint", "t1", "-m", "first"]).ok();
    s.repo
        .write(&wt, "src/lib.rs", "pub fn lib() { later() }\n");
    s.run(&["status", "t1"]);
    s.run(&["status", "t1", "--json"]);
    // The active task of a worktree is the default.
    s.run_in(&wt, &["status"]);
    s.assert("status");
}

#[test]
fn path_and_scratch() {
    let mut s = Snap::new();
    let wt = fenced_task(&s.repo);
    s.run(&["path", "t1"]);
    s.run(&["path", "t1", "--json"]);
    s.run_in(&wt.join("src"), &["path"]);
    s.run(&["scratch", "t1"]);
    s.run(&["scratch", "t1", "--json"]);
    s.assert("path_and_scratch");
}

#[test]
fn log() {
    let mut s = Snap::new();
    let wt = task_with_work(&s.repo);
    s.repo.task_root(&["checkpoint", "t1", "-m", "first"]).ok();
    s.repo.write(&wt, "src/more.rs", "pub fn more() {}\n");
    s.repo.task_root(&["commit", "t1", "-m", "more work"]).ok();
    s.repo
        .write(&wt, "src/lib.rs", "pub fn lib() { again() }\n");
    s.repo.task_root(&["revert", "t1"]).ok();
    s.repo.task_root(&["drop", "t1", "-m", "not needed"]).ok();
    s.run(&["log", "t1"]);
    s.run(&["log", "t1", "--json"]);
    s.assert("log");
}

// ---------------------------------------------------------------------------------------------
// exec, check

#[test]
fn exec() {
    let mut s = Snap::new();
    fenced_task(&s.repo);
    s.run(&[
        "exec",
        "t1",
        "--",
        "sh",
        "-c",
        "pwd; echo to-stderr >&2; exit 3",
    ]);
    s.run(&["exec", "t1", "--json", "--", "sh", "-c", "echo out"]);
    s.run(&["exec", "t1", "--", "no-such-program-here"]);
    s.assert("exec");
}

#[test]
fn check_pass() {
    let mut s = Snap::new();
    let wt = task_with_work(&s.repo);
    s.run(&["check", "t1"]);
    s.run(&["check", "t1", "--json"]);
    s.run(&["check", "t1", "--run"]);
    s.run(&["check", "t1", "--run", "--json"]);
    s.repo.git(&wt, &["add", "src/work.rs"]);
    s.run(&["check", "t1", "--staged"]);
    s.run(&["check", "t1", "--staged", "--json"]);
    s.assert("check_pass");
}

#[test]
fn check_violation() {
    let mut s = Snap::new();
    let wt = task_with_work(&s.repo);
    s.repo.write(&wt, "README.md", "# changed\n");
    s.repo.write(&wt, "src/store/mod.rs", "// forbidden\n");
    s.run(&["check", "t1"]);
    s.run(&["check", "t1", "--json"]);
    s.assert("check_violation");
}

#[test]
fn check_run_fails() {
    let mut s = Snap::new();
    s.repo
        .start("t1", &["--check", "echo checking; echo oops >&2; exit 3"]);
    s.run(&["check", "t1", "--run"]);
    s.run(&["check", "t1", "--run", "--json"]);
    s.assert("check_run_fails");
}

// ---------------------------------------------------------------------------------------------
// commit, checkpoint, changes, diff

#[test]
fn commit() {
    human_and_json(
        "commit",
        |repo| {
            task_with_work(repo);
        },
        &["commit", "t1", "-m", "Add work"],
    );
}

#[test]
fn commit_nothing_and_violation() {
    let mut s = Snap::new();
    let wt = fenced_task(&s.repo);
    s.run(&["commit", "t1"]);
    s.run(&["commit", "t1", "--json"]);
    s.repo.write(&wt, "README.md", "# changed\n");
    s.run(&["commit", "t1"]);
    s.run(&["commit", "t1", "--json"]);
    s.assert("commit_nothing_and_violation");
}

#[test]
fn checkpoint() {
    human_and_json(
        "checkpoint",
        |repo| {
            task_with_work(repo);
        },
        &["checkpoint", "t1", "-m", "first try"],
    );
}

#[test]
fn changes() {
    let mut s = Snap::new();
    let wt = task_with_work(&s.repo);
    s.repo.task_root(&["checkpoint", "t1"]).ok();
    s.repo.write(&wt, "src/later.rs", "pub fn later() {}\n");
    std::fs::remove_file(wt.join("README.md")).unwrap();
    s.run(&["changes", "t1"]);
    s.run(&["changes", "t1", "--json"]);
    s.assert("changes");
}

#[test]
fn diff() {
    let mut s = Snap::new();
    let wt = task_with_work(&s.repo);
    s.repo.write(&wt, "README.md", "# demo\nmore\n");
    s.repo
        .git(&wt, &["mv", "src/store/mod.rs", "src/store/renamed.rs"]);
    s.run(&["diff", "t1"]);
    s.run(&["diff", "t1", "--json"]);
    s.run_in(&wt, &["diff", "--", "README.md"]);
    s.assert("diff");
}

// ---------------------------------------------------------------------------------------------
// revert, reset

#[test]
fn revert_everything() {
    human_and_json(
        "revert_everything",
        |repo| {
            task_with_work(repo);
        },
        &["revert", "t1"],
    );
}

#[test]
fn revert_path() {
    human_and_json(
        "revert_path",
        |repo| {
            task_with_work(repo);
        },
        &["revert", "t1", "--path", "src/work.rs"],
    );
}

/// Two checkpoints: one changes `src/lib.rs`, the next adds `src/work.rs`.
fn two_checkpoints(repo: &TestRepo) {
    let wt = fenced_task(repo);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    repo.task_root(&["checkpoint", "t1", "-m", "one"]).ok();
    repo.write(&wt, "src/work.rs", "pub fn work() {}\n");
    repo.task_root(&["checkpoint", "t1", "-m", "two"]).ok();
}

#[test]
fn revert_checkpoint() {
    human_and_json(
        "revert_checkpoint",
        two_checkpoints,
        &["revert", "t1", "--checkpoint", "1"],
    );
}

#[test]
fn revert_to() {
    human_and_json("revert_to", two_checkpoints, &["revert", "t1", "--to", "1"]);
}

#[test]
fn revert_patch_file() {
    let mut s = Snap::new();
    task_with_work(&s.repo);
    let patch = s.repo.base().join("discarded.patch");
    let patch = patch.display().to_string();
    s.run(&[
        "revert",
        "t1",
        "--path",
        "src/work.rs",
        "--patch-file",
        &patch,
    ]);
    let written = std::fs::read_to_string(&patch).unwrap();
    s.repo.task_root(&["checkpoint", "t1"]).ok();
    s.run(&["revert", "t1", "--patch-file", &patch, "--json"]);
    let text = format!(
        "{}\n=== the first patch file ===\n{}",
        s.transcript(),
        normalise(&s.repo, &[], &written)
    );
    assert_transcript("revert_patch_file", &text);
}

#[test]
fn revert_errors() {
    let mut s = Snap::new();
    fenced_task(&s.repo);
    s.run(&["revert", "t1"]);
    s.run(&["revert", "t1", "--checkpoint", "9"]);
    s.run(&["revert", "t1", "--checkpoint", "9", "--json"]);
    s.assert("revert_errors");
}

#[test]
fn reset() {
    human_and_json(
        "reset",
        |repo| {
            task_with_work(repo);
        },
        &["reset", "t1"],
    );
}

#[test]
fn reset_onto() {
    human_and_json(
        "reset_onto",
        |repo| {
            task_with_work(repo);
            repo.write(repo.root(), "new-on-main.txt", "x\n");
            commit_all(repo, repo.root(), "Main moves");
            repo.git(repo.root(), &["branch", "next"]);
        },
        &["reset", "t1", "--onto", "next"],
    );
}

// ---------------------------------------------------------------------------------------------
// sync

#[test]
fn sync_up_to_date() {
    let mut s = Snap::new();
    fenced_task(&s.repo);
    s.run(&["sync", "t1"]);
    s.run(&["sync", "t1", "--json"]);
    s.assert("sync_up_to_date");
}

#[test]
fn sync_merges() {
    human_and_json(
        "sync_merges",
        |repo| {
            let wt = fenced_task(repo);
            repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
            commit_all(repo, &wt, "Task edit");
            repo.write(repo.root(), "other.txt", "from main\n");
            commit_all(repo, repo.root(), "Main moves");
        },
        &["sync", "t1"],
    );
}

#[test]
fn sync_conflict() {
    human_and_json(
        "sync_conflict",
        |repo| {
            let wt = fenced_task(repo);
            repo.write(&wt, "src/lib.rs", "pub fn lib() { task() }\n");
            commit_all(repo, &wt, "Task edit");
            repo.write(repo.root(), "src/lib.rs", "pub fn lib() { main() }\n");
            commit_all(repo, repo.root(), "Main edit");
        },
        &["sync", "t1"],
    );
}

// ---------------------------------------------------------------------------------------------
// merge

#[test]
fn merge_success() {
    human_and_json(
        "merge_success",
        |repo| {
            let wt = fenced_task(repo);
            repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
            commit_all(repo, &wt, "Task edit");
        },
        &["merge", "t1"],
    );
}

#[test]
fn merge_again_and_keep() {
    let mut s = Snap::new();
    let wt = fenced_task(&s.repo);
    s.repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&s.repo, &wt, "Task edit");
    s.run(&["merge", "t1", "--keep", "--merge", "-m", "Land t1"]);
    s.run(&["merge", "t1"]);
    s.run(&["merge", "t1", "--json"]);
    // The log shows the checks and the merge.
    s.run(&["log", "t1"]);
    s.run(&["log", "t1", "--json"]);
    s.assert("merge_again_and_keep");
}

#[test]
fn merge_several_into_a_branch() {
    human_and_json(
        "merge_several_into_a_branch",
        |repo| {
            repo.git(repo.root(), &["branch", "umbrella"]);
            let a = repo.start("a", &[]);
            repo.write(&a, "src/lib.rs", "pub fn lib() { 1 }\n");
            commit_all(repo, &a, "Task a");
            let b = repo.start("b", &[]);
            repo.write(&b, "README.md", "# b\n");
            commit_all(repo, &b, "Task b");
        },
        &["merge", "a", "b", "--into", "umbrella", "--rebase"],
    );
}

#[test]
fn merge_contract_violation() {
    human_and_json(
        "merge_contract_violation",
        |repo| {
            let wt = fenced_task(repo);
            repo.write(&wt, "src/store/mod.rs", "// sneaked in\n");
            commit_all(repo, &wt, "Touch the store");
        },
        &["merge", "t1"],
    );
}

#[test]
fn merge_checks_failed() {
    human_and_json(
        "merge_checks_failed",
        |repo| {
            let wt = repo.start("t1", &["--check", "echo checking; exit 3"]);
            repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
            commit_all(repo, &wt, "Task edit");
        },
        &["merge", "t1"],
    );
}

#[test]
fn merge_conflict() {
    human_and_json(
        "merge_conflict",
        |repo| {
            let wt = fenced_task(repo);
            repo.write(&wt, "src/lib.rs", "pub fn lib() { task() }\n");
            commit_all(repo, &wt, "Task edit");
            repo.write(repo.root(), "src/lib.rs", "pub fn lib() { main() }\n");
            commit_all(repo, repo.root(), "Main edit");
        },
        &["merge", "t1"],
    );
}

#[test]
fn merge_uncommitted_work() {
    human_and_json(
        "merge_uncommitted_work",
        |repo| {
            task_with_work(repo);
        },
        &["merge", "t1"],
    );
}

#[test]
fn merge_local_edit_in_the_way() {
    human_and_json(
        "merge_local_edit_in_the_way",
        |repo| {
            let wt = fenced_task(repo);
            repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
            commit_all(repo, &wt, "Task edit");
            repo.write(repo.root(), "src/lib.rs", "// unsaved\n");
        },
        &["merge", "t1"],
    );
}

// ---------------------------------------------------------------------------------------------
// drop, remove, sweep

#[test]
fn drop() {
    human_and_json(
        "drop",
        |repo| {
            task_with_work(repo);
        },
        &["drop", "t1", "-m", "wrong approach"],
    );
}

#[test]
fn remove() {
    human_and_json(
        "remove",
        |repo| {
            fenced_task(repo);
        },
        &["remove", "t1"],
    );
}

#[test]
fn remove_dirty() {
    let mut s = Snap::new();
    task_with_work(&s.repo);
    s.run(&["remove", "t1"]);
    s.run(&["remove", "t1", "--json"]);
    s.run(&["remove", "t1", "--force"]);
    s.run(&["remove", "t1", "--json"]);
    s.assert("remove_dirty");
}

#[test]
fn sweep_nothing() {
    let mut s = Snap::new();
    fenced_task(&s.repo);
    s.run(&["sweep"]);
    s.run(&["sweep", "--json"]);
    s.assert("sweep_nothing");
}

/// An abandoned start, a branch without a record, and a task whose worktree vanished.
fn sweep_scene(repo: &TestRepo) {
    craft_abandoned_start(repo, "killed");
    lone_task_branch(repo, "lonely");
    let wt = repo.start("vanished", &[]);
    std::fs::remove_dir_all(wt).unwrap();
}

#[test]
fn sweep_repairs() {
    let mut s = Snap::new();
    sweep_scene(&s.repo);
    s.run(&["sweep", "--dry-run"]);
    s.run(&["sweep", "--dry-run", "--json"]);
    s.run(&["sweep"]);
    s.assert("sweep_repairs");

    let mut s = Snap::new();
    sweep_scene(&s.repo);
    s.run(&["sweep", "--json"]);
    s.assert("sweep_repairs_json");
}

// ---------------------------------------------------------------------------------------------
// hooks

#[test]
fn hooks() {
    let mut s = Snap::new();
    s.run(&["hooks", "status"]);
    s.run(&["hooks", "status", "--json"]);
    s.run(&["hooks", "install"]);
    s.run(&["hooks", "status"]);
    s.run(&["hooks", "status", "--json"]);
    s.run(&["hooks", "install", "--json"]);
    s.run(&["hooks", "uninstall"]);
    s.run(&["hooks", "uninstall", "--json"]);
    s.run(&["hooks", "install", "--json"]);
    s.assert("hooks");

    // A hook already there is chained, and put back on uninstall.
    let mut s = Snap::new();
    let hooks = s.repo.root().join(".git/hooks");
    crate::common::write_script(&hooks.join("pre-commit"), "#!/bin/sh\necho mine\n");
    s.run(&["hooks", "install"]);
    s.run(&["hooks", "status"]);
    s.run(&["hooks", "status", "--json"]);
    s.run(&["hooks", "uninstall"]);
    s.assert("hooks_chained");
}

/// What the pre-commit hook prints when it refuses a commit, and when it lets one through.
#[test]
fn hook_pre_commit() {
    let mut s = Snap::new();
    let wt = fenced_task(&s.repo);
    s.repo.task_root(&["hooks", "install"]).ok();
    s.repo.write(&wt, "README.md", "# changed\n");
    s.repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    s.repo.git(&wt, &["add", "-A"]);
    s.run_git(&wt, &["commit", "-q", "-m", "Touch the readme"]);
    s.repo
        .git(&wt, &["restore", "--staged", "--worktree", "README.md"]);
    s.run_git(&wt, &["commit", "-q", "-m", "Change lib"]);
    s.assert("hook_pre_commit");
}

// ---------------------------------------------------------------------------------------------
// common errors, colour

#[test]
fn errors() {
    let mut s = Snap::new();
    fenced_task(&s.repo);
    s.run(&["status", "bad id"]);
    s.run(&["status", "bad id", "--json"]);
    s.run(&["status", "nope"]);
    s.run(&["status", "nope", "--json"]);
    s.run(&["merge", "nope", "--json"]);
    s.run(&["status"]);
    s.run(&["no-such-command"]);
    s.run(&["list", "--no-such-flag"]);
    let outside = s.repo.base().join("not-a-repo");
    std::fs::create_dir_all(&outside).unwrap();
    s.run_in(&outside, &["list"]);
    s.run_in(&outside, &["list", "--json"]);
    s.assert("errors");
}

/// `-C`, `-q` and running from a task worktree's subdirectory.
#[test]
fn global_flags() {
    let mut s = Snap::new();
    let elsewhere = s.repo.base().join("home");
    let root = s.root().display().to_string();
    s.run_in(&elsewhere, &["-C", &root, "start", "t1", "-q"]);
    s.run_in(&elsewhere, &["-C", &root, "list"]);
    let wt = s.repo.task_dir("t1");
    s.repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    s.run_in(&wt.join("src"), &["commit", "-q"]);
    s.run_in(&wt.join("src"), &["checkpoint", "--quiet"]);
    s.run(&["-C", "no-such-dir", "list"]);
    s.assert("global_flags");
}

/// The help text of every command (clap's long help; `git task --help` through git shows the man page).
#[test]
fn help() {
    let mut s = Snap::new();
    s.run(&["-h"]);
    s.run(&["--version"]);
    let commands: &[&[&str]] = &[
        &["start"],
        &["list"],
        &["status"],
        &["path"],
        &["exec"],
        &["log"],
        &["scratch"],
        &["drop"],
        &["remove"],
        &["sweep"],
        &["commit"],
        &["checkpoint"],
        &["changes"],
        &["diff"],
        &["revert"],
        &["reset"],
        &["check"],
        &["hooks"],
        &["hooks", "install"],
        &["hooks", "uninstall"],
        &["hooks", "status"],
        &["merge"],
        &["sync"],
    ];
    for command in commands {
        let mut args = command.to_vec();
        args.push("--help");
        s.run(&args);
    }
    s.run(&[]);
    s.assert("help");
}

#[test]
fn colour() {
    let mut s = Snap::new();
    let wt = task_with_work(&s.repo);
    s.repo.write(&wt, "README.md", "# changed\n");
    s.env.push(("NO_COLOR", None));
    s.env.push(("TERM", Some("xterm-256color".to_owned())));
    // `git -c color.ui=always task …` (git passes it in GIT_CONFIG_PARAMETERS).
    let root = s.root();
    s.run_git(&root, &["-c", "color.ui=always", "task", "status", "nope"]);
    s.repo.git(s.repo.root(), &["config", "color.ui", "always"]);
    s.run(&["check", "t1"]);
    s.run(&["status", "t1"]);
    s.run(&["status", "nope"]);
    s.assert("colour");
}

// ---------------------------------------------------------------------------------------------
// several machines: push, fetch, list --remote, adopt, merge --remote

#[test]
fn remote_push_fetch_adopt_merge() {
    let mut s = Snap::new();
    let base = s.repo.base();
    s.repo
        .git(&base, &["init", "-q", "--bare", "-b", "main", "remote.git"]);
    let root = s.root();
    s.repo
        .git(&root, &["remote", "add", "origin", "../remote.git"]);
    s.repo.git(&root, &["push", "-q", "origin", "main"]);
    task_with_work(&s.repo);
    commit_all(&s.repo, &s.repo.task_dir("t1"), "Add work");
    s.run(&["push", "t1"]);
    s.run(&["push", "t1"]);
    s.run(&["push", "t1", "--json"]);
    s.repo.git(&base, &["clone", "-q", "remote.git", "two"]);
    let two = base.join("two");
    s.run_in(&two, &["fetch"]);
    s.run_in(&two, &["fetch", "--json"]);
    s.run_in(&two, &["list", "--remote", "origin"]);
    s.run_in(&two, &["list", "--remote", "origin", "--json"]);
    s.run_in(&two, &["adopt", "t1"]);
    s.run_in(&two, &["adopt", "t1", "--json"]);
    s.run_in(&two, &["merge", "t1", "--remote", "origin"]);
    s.run_in(&two, &["merge", "t1", "--remote", "origin", "--json"]);
    // Errors: an unknown remote, a task the remote does not have.
    s.run_in(&two, &["fetch", "nowhere"]);
    s.run_in(&two, &["adopt", "t9", "--json"]);
    s.assert("remote_push_fetch_adopt_merge");
}
