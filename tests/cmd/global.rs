//! Conventions every command shares: exit codes, error text, colour, `-C`.

use crate::common::TestRepo;

#[test]
fn outside_a_repository_exits_128_with_a_hint_naming_git_init() {
    let repo = TestRepo::new();
    let outside = repo.base().join("not-a-repo");
    std::fs::create_dir_all(&outside).unwrap();
    for args in [
        &["list"][..],
        &["start", "x"],
        &["status", "x"],
        &["sweep", "--json"],
    ] {
        let mut cmd = repo.command(crate::common::bin(), &outside);
        cmd.args(args).env("GIT_CEILING_DIRECTORIES", repo.base());
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(128), "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("error: ") && stderr.contains("not a git repository"),
            "{stderr}"
        );
        assert!(
            stderr.contains("hint: ") && stderr.contains("git init"),
            "{stderr}"
        );
        if args.contains(&"--json") {
            // With --json the error is also one JSON document on stdout.
            let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(doc["kind"], "error");
            assert_eq!(doc["exit_code"], 128);
        } else {
            assert!(out.stdout.is_empty());
        }
    }
    assert!(
        std::fs::read_dir(&outside).unwrap().next().is_none(),
        "nothing was written outside"
    );
}

#[test]
fn usage_errors_exit_2_git_style() {
    let repo = TestRepo::new();
    for args in [
        &["bogus"][..],
        &["start", "--no-such-flag"],
        &["exec"],
        &["list", "extra"],
    ] {
        let run = repo.task_root(args).code(2);
        assert!(run.stderr.starts_with("error: "), "{args:?}: {run}");
        assert!(run.stderr.contains("hint: "), "{args:?}: {run}");
        assert!(run.stdout.is_empty(), "{args:?}: {run}");
    }
    let help = repo.task_root(&["start", "-h"]).ok();
    assert!(help.stdout.contains("--reset"), "{help}");
    let version = repo.task_root(&["--version"]).ok();
    assert!(version.stdout.starts_with("git-task "), "{version}");
}

fn has_escape(text: &str) -> bool {
    text.contains('\u{1b}')
}

/// SPEC §6: colour only on a terminal and never with NO_COLOR.
#[test]
fn no_escape_codes_off_a_terminal_or_with_no_color() {
    let repo = TestRepo::new();
    repo.start("col", &[]);
    let runs: [&[&str]; 5] = [
        &["list"],
        &["status", "col"],
        &["log", "col"],
        &["start", "col"],
        &["status", "nope"],
    ];
    // Not a terminal, NO_COLOR unset.
    for args in runs {
        let mut cmd = repo.command(crate::common::bin(), repo.root());
        cmd.args(args)
            .env_remove("NO_COLOR")
            .env("TERM", "xterm-256color");
        let out = cmd.output().unwrap();
        let (o, e) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(!has_escape(&o) && !has_escape(&e), "{args:?}:\n{o}\n{e}");
    }
    // NO_COLOR wins even over color.ui=always.
    repo.git(repo.root(), &["config", "color.ui", "always"]);
    for args in runs {
        let run = repo.task_root(args);
        assert!(
            !has_escape(&run.stdout) && !has_escape(&run.stderr),
            "{args:?}: {run}"
        );
    }
    // color.ui=always without NO_COLOR does colour: the switch is live.
    let mut cmd = repo.command(crate::common::bin(), repo.root());
    cmd.args(["status", "col"]).env_remove("NO_COLOR");
    let out = cmd.output().unwrap();
    assert!(
        has_escape(&String::from_utf8_lossy(&out.stdout)),
        "color.ui=always colours stdout"
    );
}

#[test]
fn global_flags_work_before_and_after_the_command() {
    let repo = TestRepo::new();
    repo.start("g", &[]);
    let a = repo.task_root(&["--json", "list"]).ok().json();
    let b = repo.task_root(&["list", "--json"]).ok().json();
    assert_eq!(a, b);
    let c = repo
        .task(
            &repo.base(),
            &["-C", repo.root().to_str().unwrap(), "list", "--json"],
        )
        .ok()
        .json();
    assert_eq!(a, c);
    let quiet = repo.task_root(&["-q", "start", "g"]).ok();
    assert_eq!(quiet.stderr, "", "{quiet}");
}

/// `git task list | head -1`: a closed stdout is not an error.
#[test]
fn closed_stdout_is_not_an_error() {
    let repo = TestRepo::new();
    for id in ["p1", "p2", "p3"] {
        repo.start(id, &[]);
    }
    for args in [&["list"][..], &["log", "p1"], &["status", "p1", "--json"]] {
        let mut child = repo
            .command(crate::common::bin(), repo.root())
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("error"), "{args:?}: {stderr}");
    }
}

fn keys(v: &serde_json::Value) -> Vec<String> {
    let mut k: Vec<String> = v
        .as_object()
        .expect("a JSON object")
        .keys()
        .cloned()
        .collect();
    k.sort();
    k
}

#[track_caller]
fn assert_keys(v: &serde_json::Value, want: &[&str]) {
    let mut want: Vec<String> = want.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(keys(v), want, "in {v}");
}

/// The `--json` shapes are a documented schema (man page, JSON OUTPUT): changing one must be deliberate.
#[test]
fn json_reports_keep_their_documented_keys() {
    let repo = TestRepo::new();
    let start = repo.task_root(&["start", "js", "--json"]).ok().json();
    assert_keys(
        &start,
        &[
            "schema_version",
            "kind",
            "task",
            "created",
            "reset",
            "mode",
            "status",
            "branch",
            "base",
            "base_branch",
            "worktree",
            "record",
            "attempts",
            "overlaps",
            "unmatched_allowed",
        ],
    );
    let summary = [
        "head",
        "base_tip",
        "ahead",
        "behind",
        "changed_files",
        "dirty",
        "worktree_exists",
    ];
    let list = repo.task_root(&["list", "--json"]).ok().json();
    assert_keys(&list, &["schema_version", "kind", "tasks"]);
    let mut row = vec![
        "id",
        "mode",
        "status",
        "branch",
        "base",
        "base_commit",
        "path",
        "collisions",
    ];
    row.extend(summary);
    assert_keys(&list["tasks"][0], &row);
    let status = repo.task_root(&["status", "js", "--json"]).ok().json();
    let mut st = vec![
        "schema_version",
        "kind",
        "task",
        "mode",
        "status",
        "branch",
        "base",
        "base_commit",
        "worktree",
        "contract",
        "claims",
        "claimed_by_others",
        "files",
        "checkpoints",
        "attempts",
        "events",
    ];
    st.extend(summary);
    assert_keys(&status, &st);
    assert_keys(&status["events"][0], &["event", "commit", "details"]);
    assert_keys(
        &repo.task_root(&["path", "js", "--json"]).ok().json(),
        &["schema_version", "kind", "task", "path", "exists"],
    );
    let log = repo.task_root(&["log", "js", "--json"]).ok().json();
    assert_keys(&log, &["schema_version", "kind", "task", "events"]);
    assert_keys(
        &repo.task_root(&["scratch", "js", "--json"]).ok().json(),
        &["schema_version", "kind", "task", "path"],
    );
    assert_keys(
        &repo.task_root(&["drop", "js", "--json"]).ok().json(),
        &[
            "schema_version",
            "kind",
            "task",
            "mode",
            "status",
            "changed",
            "worktree",
        ],
    );
    repo.write(&repo.task_dir("js"), "x.txt", "x\n");
    let remove = repo
        .task_root(&["remove", "js", "--force", "--json"])
        .ok()
        .json();
    assert_keys(
        &remove,
        &[
            "schema_version",
            "kind",
            "task",
            "removed",
            "existed",
            "attempts",
        ],
    );
    assert_keys(&remove["attempts"][0], &["ref", "commit", "what"]);
    crate::common::lone_task_branch(&repo, "lonely");
    let sweep = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_keys(
        &sweep,
        &["schema_version", "kind", "dry_run", "repairs", "tampered"],
    );
    assert_keys(
        &sweep["repairs"][0],
        &["problem", "task", "action", "attempts"],
    );
    let failed = repo
        .task_root(&["start", "sf", "--setup", "false", "--json"])
        .code(1)
        .json();
    assert_keys(
        &failed,
        &[
            "schema_version",
            "kind",
            "task",
            "command",
            "code",
            "output",
            "timed_out",
            "timeout",
            "hints",
            "next",
        ],
    );
    for v in [&start, &list, &status, &log, &remove, &sweep, &failed] {
        assert!(v["kind"].is_string(), "every report has a kind: {v}");
        assert_eq!(
            v["schema_version"], 1,
            "every report has its schema version: {v}"
        );
    }
}

/// Without `user.name`/`user.email` (a fresh machine), `start` still works, as `git worktree add` does,
/// and git-task's commits are signed by git-task itself.
#[test]
fn start_works_without_a_configured_identity() {
    let repo = crate::common::TestRepo::new();
    let home = repo.base().join("home");
    std::fs::write(home.join(".gitconfig"), "[init]\n\tdefaultBranch = main\n").unwrap();
    let run = repo.task_root(&["start", "anon"]).ok();
    assert!(
        std::path::Path::new(run.out()).join("README.md").exists(),
        "{run}"
    );
    assert_eq!(
        repo.git(
            repo.root(),
            &["log", "-1", "--format=%an <%ae>", "task/anon"]
        ),
        "git-task <git-task@localhost>"
    );
    repo.fsck();
}

/// Without any identity (an empty home, no `user.*`): `start`, `checkpoint`, `merge` and a
/// `list` of enough tasks to run on several threads all work, git-task's commits are signed
/// `git-task <git-task@localhost>` (git is the oracle), and the fallback identity is never
/// put into git-task's own environment (a command it runs does not inherit it).
#[test]
fn no_identity_start_checkpoint_merge_and_parallel_list() {
    let repo = crate::common::TestRepo::new();
    let home = repo.base().join("home");
    std::fs::write(home.join(".gitconfig"), "[init]\n\tdefaultBranch = main\n").unwrap();
    let signed = |rev: &str, format: &str| repo.git(repo.root(), &["log", "-1", format, rev]);
    let anon = "git-task <git-task@localhost>";

    let wt = repo.start("anon", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    repo.task(&wt, &["checkpoint", "-m", "step"]).ok();
    assert_eq!(
        signed("task/anon", "--format=%an <%ae>|%cn <%ce>"),
        format!("{anon}|{anon}")
    );
    let env = repo
        .task_root(&[
            "exec",
            "anon",
            "--",
            "sh",
            "-c",
            "echo \"${GIT_COMMITTER_NAME-unset}|${GIT_COMMITTER_EMAIL-unset}\"",
        ])
        .ok();
    assert_eq!(env.out(), "unset|unset", "{env}");
    repo.task_root(&["merge", "anon"]).ok();
    assert_eq!(signed("main", "--format=%cn <%ce>"), anon);
    repo.fsck();

    // More tasks than two batches of a `list` worker (16 each, `LIST_BATCH`): several workers,
    // each opening its own handles.
    for i in 0..33 {
        repo.start(&format!("t{i}"), &[]);
    }
    let list = repo.task_root(&["list", "--json"]).ok().json();
    let tasks = list["tasks"].as_array().expect("a task list");
    assert_eq!(tasks.len(), 33, "{list}");
    assert_eq!(signed("refs/tasks/t32/record", "--format=%cn <%ce>"), anon);
    let reflog = repo.git(
        &repo.task_dir("t32"),
        &["reflog", "-1", "--format=%gn <%ge>", "HEAD"],
    );
    assert_eq!(reflog, anon);
}

/// `git task help <cmd>` prints that command's help, as `git task <cmd> --help` does; `git
/// task help` alone the overview; an unknown command is a usage error.
#[test]
fn help_names_a_command() {
    let repo = TestRepo::new();
    let help = repo.task_root(&["help", "start"]).ok();
    let long = repo.task_root(&["start", "--help"]).ok();
    assert!(help.stdout.contains("--setup"), "{help}");
    assert_eq!(help.stdout, long.stdout);
    let sub = repo.task_root(&["help", "hooks", "install"]).ok();
    assert_eq!(
        sub.stdout,
        repo.task_root(&["hooks", "install", "--help"]).ok().stdout
    );
    let top = repo.task_root(&["help"]).ok();
    assert_eq!(top.stdout, repo.task_root(&["--help"]).ok().stdout);
    repo.task_root(&["help", "no-such-command"]).code(2);
}
