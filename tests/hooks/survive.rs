//! Hook managers installed again after git-task (issue 32, item 4): lefthook's re-sync (edit
//! `lefthook.yml`, `lefthook install` again) renames git-task's pre-commit hook to
//! `pre-commit.old` and never runs it. A commit in a task worktree is then refused by
//! git-task's `reference-transaction` hook, which says the check is off and how to restore it;
//! every git-task command and the next checkout of a task branch say so too. git-task never
//! touches `lefthook.yml` or a tracked file.

use super::tools;
use crate::common::{Run, TestRepo};
use std::ffi::OsString;
use std::path::Path;

fn sh(repo: &TestRepo, path: &OsString, script: &str) -> Run {
    super::tools::run_with_path(repo, "sh", repo.root(), path, &["-c", script])
}

fn git(repo: &TestRepo, dir: &Path, path: &OsString, args: &[&str]) -> Run {
    super::tools::run_with_path(repo, "git", dir, path, args)
}

fn lefthook_yml(log: &Path, name: &str) -> String {
    format!(
        "pre-commit:\n  commands:\n    {name}:\n      run: echo {name} >> '{}'\n",
        log.display()
    )
}

#[track_caller]
fn refused_loudly(run: &Run) {
    assert_ne!(run.code, 0, "{run}");
    assert!(
        run.stderr
            .contains("git-task's pre-commit hook no longer runs in this worktree"),
        "{run}"
    );
    assert!(run.stderr.contains("git task hooks install"), "{run}");
}

#[cfg(unix)]
#[test]
fn lefthook_resync_after_git_task_never_lets_a_task_commit_through_unchecked() {
    let Some(lefthook) = tools::require("lefthook", "lefthook_resync_after_git_task") else {
        return;
    };
    let repo = TestRepo::new();
    let path = tools::path_with_tools(&[&lefthook]);
    let log = repo.base().join("lefthook.log");
    repo.write(repo.root(), "lefthook.yml", &lefthook_yml(&log, "first"));
    repo.git(repo.root(), &["add", "-A"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "lefthook"]);
    assert_eq!(sh(&repo, &path, "lefthook install").code, 0);
    repo.task_root(&["hooks", "install"]).ok();
    let wt = repo.start("t", &["--forbid", "src/store/**"]);

    // The team edits lefthook.yml; lefthook re-syncs its hooks.
    repo.write(repo.root(), "lefthook.yml", &lefthook_yml(&log, "second"));
    repo.git(repo.root(), &["commit", "-q", "-am", "lefthook: second"]);
    let yml = repo.read(repo.root(), "lefthook.yml");
    let run = sh(&repo, &path, "lefthook install");
    assert_eq!(run.code, 0, "{run}");

    // A violating commit in the task worktree: refused, with the way back.
    let before = repo.git(&wt, &["rev-parse", "HEAD"]);
    repo.write(&wt, "src/store/mod.rs", "// forbidden\n");
    git(&repo, &wt, &path, &["add", "-A"]);
    refused_loudly(&git(
        &repo,
        &wt,
        &path,
        &["commit", "-q", "-m", "violation"],
    ));
    assert_eq!(repo.git(&wt, &["rev-parse", "HEAD"]), before);
    // Every git-task command says the check is off.
    for run in [
        repo.task_root(&["overlaps"]).ok(),
        repo.task(&wt, &["changes"]).ok(),
    ] {
        assert!(run.stderr.contains("replaced git-task's"), "{run}");
        assert!(run.stderr.contains("git task hooks install"), "{run}");
    }
    // So does the next checkout of the task branch.
    let run = git(&repo, &wt, &path, &["checkout", "-q", "task/t"]);
    assert!(run.stderr.contains("replaced git-task's"), "{run}");

    // Installing again: the check runs behind lefthook's hook.
    repo.task_root(&["hooks", "install"]).ok();
    let run = git(&repo, &wt, &path, &["commit", "-q", "-m", "violation"]);
    assert_eq!(run.code, 1, "{run}");
    assert!(run.stderr.contains("src/store/mod.rs  forbidden"), "{run}");
    super::restore_from_head(&repo, &wt, "src/store/mod.rs");
    repo.write(&wt, "src/lib.rs", "// allowed\n");
    let ran = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .count()
    };
    let lines = ran();
    let run = git(&repo, &wt, &path, &["commit", "-q", "-am", "allowed"]);
    assert_eq!(run.code, 0, "{run}");
    // lefthook ran too (the task worktree's own lefthook.yml, from the task's base).
    assert_eq!(ran(), lines + 1);
    assert!(!repo
        .task_root(&["overlaps"])
        .ok()
        .stderr
        .contains("warning"));
    // Nothing of the manager's or tracked was touched.
    assert_eq!(repo.read(repo.root(), "lefthook.yml"), yml);
    assert_eq!(
        repo.git(
            repo.root(),
            &["status", "--porcelain", "--untracked-files=all"]
        ),
        ""
    );
}

#[cfg(unix)]
#[test]
fn a_committed_githooks_after_git_task_is_said_by_every_command() {
    use std::os::unix::fs::PermissionsExt;
    let repo = TestRepo::new();
    repo.task_root(&["hooks", "install"]).ok();
    let _wt = repo.start("t", &["--forbid", "src/store/**"]);
    repo.write(repo.root(), ".githooks/pre-commit", "#!/bin/sh\nexit 0\n");
    std::fs::set_permissions(
        repo.root().join(".githooks/pre-commit"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    repo.git(repo.root(), &["add", "-A"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "team hooks"]);
    repo.git(repo.root(), &["config", "core.hooksPath", ".githooks"]);
    let run = repo.task_root(&["overlaps"]).ok();
    assert!(
        run.stderr.contains("do not run git-task's pre-commit hook")
            && run.stderr.contains("git task hooks install"),
        "{run}"
    );
    // After uninstall nothing nags.
    repo.task_root(&["hooks", "uninstall"]).ok();
    assert!(!repo
        .task_root(&["overlaps"])
        .ok()
        .stderr
        .contains("warning"));
}
