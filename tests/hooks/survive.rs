//! Hook managers installed again after git-task (issue 32, item 4): lefthook's re-sync (edit
//! `lefthook.yml`, `lefthook install` again) renames git-task's pre-commit hook in the shared
//! hooks directory to `pre-commit.old` and never runs it. A task worktree runs its own
//! directory (its `config.worktree` points `core.hooksPath` there), whose shims run lefthook's
//! new hook first and then the check: a violating commit is refused with the report. The main
//! worktree does run lefthook's hook alone: every git-task command says so, and how to restore
//! it. git-task never touches `lefthook.yml` or a tracked file.

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

    // A violating commit in the task worktree: refused, with the report, after lefthook's
    // new hook ran.
    let ran = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .count()
    };
    let lines = ran();
    let before = repo.git(&wt, &["rev-parse", "HEAD"]);
    repo.write(&wt, "src/store/mod.rs", "// forbidden\n");
    git(&repo, &wt, &path, &["add", "-A"]);
    let run = git(&repo, &wt, &path, &["commit", "-q", "-m", "violation"]);
    assert_eq!(run.code, 1, "{run}");
    assert!(run.stderr.contains("src/store/mod.rs  forbidden"), "{run}");
    assert_eq!(repo.git(&wt, &["rev-parse", "HEAD"]), before);
    assert_eq!(ran(), lines + 1, "lefthook ran in the task worktree");
    // The main worktree runs lefthook's hook alone: every git-task command says so.
    for run in [
        repo.task_root(&["overlaps"]).ok(),
        repo.task(&wt, &["changes"]).ok(),
    ] {
        assert!(run.stderr.contains("replaced git-task's"), "{run}");
        assert!(run.stderr.contains("git task hooks install"), "{run}");
    }

    // Installing again: the check runs behind lefthook's hook.
    repo.task_root(&["hooks", "install"]).ok();
    let run = git(&repo, &wt, &path, &["commit", "-q", "-m", "violation"]);
    assert_eq!(run.code, 1, "{run}");
    assert!(run.stderr.contains("src/store/mod.rs  forbidden"), "{run}");
    super::restore_from_head(&repo, &wt, "src/store/mod.rs");
    repo.write(&wt, "src/lib.rs", "// allowed\n");
    let lines = ran();
    let run = git(&repo, &wt, &path, &["commit", "-q", "-am", "allowed"]);
    assert_eq!(run.code, 0, "{run}");
    // lefthook ran too (the task worktree's own lefthook.yml, from the task's base).
    let own = std::path::PathBuf::from(repo.git(&wt, &["rev-parse", "--absolute-git-dir"]));
    assert_eq!(
        ran(),
        lines + 1,
        "{}\n{:?}\n{}",
        std::fs::read_to_string(&log).unwrap_or_default(),
        std::fs::read_dir(own.join("hooks"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect::<Vec<_>>(),
        run
    );
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

/// lefthook run inside a task worktree (an `npm install` there) writes its hooks where that
/// worktree's `core.hooksPath` points: git-task's own directory of it, renaming git-task's
/// pre-commit hook to `pre-commit.old`. The `reference-transaction` hook there refuses the
/// commit loudly; `hooks install` chains lefthook's hook, and both run.
#[cfg(unix)]
#[test]
fn lefthook_installed_inside_a_task_worktree_is_refused_loudly_then_chained() {
    let Some(lefthook) = tools::require("lefthook", "lefthook_installed_inside_a_task_worktree")
    else {
        return;
    };
    let repo = TestRepo::new();
    let path = tools::path_with_tools(&[&lefthook]);
    let log = repo.base().join("lefthook.log");
    repo.write(repo.root(), "lefthook.yml", &lefthook_yml(&log, "inside"));
    repo.git(repo.root(), &["add", "-A"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "lefthook"]);
    repo.task_root(&["hooks", "install"]).ok();
    let wt = repo.start("t", &["--forbid", "src/store/**"]);
    let run = super::tools::run_with_path(&repo, "sh", &wt, &path, &["-c", "lefthook install"]);
    assert_eq!(run.code, 0, "{run}");
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

    repo.task_root(&["hooks", "install"]).ok();
    let lines = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .count()
    };
    let ran = lines();
    let run = git(&repo, &wt, &path, &["commit", "-q", "-m", "violation"]);
    assert_eq!(run.code, 1, "{run}");
    assert!(run.stderr.contains("src/store/mod.rs  forbidden"), "{run}");
    assert_eq!(lines(), ran + 1, "lefthook ran first");
    super::restore_from_head(&repo, &wt, "src/store/mod.rs");
    repo.write(&wt, "src/lib.rs", "// allowed\n");
    let run = git(&repo, &wt, &path, &["commit", "-q", "-am", "allowed"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(lines(), ran + 2);
    // Uninstall leaves lefthook's hook where lefthook wrote it, and nothing of git-task's.
    repo.task_root(&["hooks", "uninstall"]).ok();
    let own =
        std::path::PathBuf::from(repo.git(&wt, &["rev-parse", "--absolute-git-dir"])).join("hooks");
    for e in std::fs::read_dir(&own).unwrap().flatten() {
        let text = std::fs::read_to_string(e.path()).unwrap_or_default();
        assert!(!text.contains("# git-task "), "{}", e.path().display());
    }
    assert!(std::fs::read_to_string(own.join("pre-commit"))
        .unwrap()
        .contains("lefthook"));
}

/// What lefthook does when it syncs itself while it runs in a task worktree (its `lefthook.yml`
/// there differs from the one it last installed; when it decides so depends on timestamps, so
/// it is replayed here by a hook that does the same): it writes its hook where the worktree's
/// `core.hooksPath` points, git-task's own directory, renaming git-task's to `pre-commit.old`.
/// git-task's hook, still running, puts itself back: the next commit is checked too, and the
/// manager's hook runs once.
#[cfg(unix)]
#[test]
fn a_manager_writing_into_the_task_worktree_during_a_commit_is_put_behind_the_check() {
    use std::os::unix::fs::PermissionsExt;
    let repo = TestRepo::new();
    let log = repo.base().join("team.log");
    let hook = repo.root().join(".git/hooks/pre-commit");
    let script = format!(
        "#!/bin/sh\necho team >> '{log}'\nh=$(git rev-parse --path-format=absolute --git-path hooks)\nif [ \"$h/pre-commit\" != \"$0\" ] && [ ! -e \"$h/pre-commit.old\" ]; then\n\tmv \"$h/pre-commit\" \"$h/pre-commit.old\" && cp \"{hook}\" \"$h/pre-commit\"\nfi\n",
        log = log.display(),
        hook = repo.root().join(".git/hooks/pre-commit.git-task-chained").display(),
    );
    std::fs::write(&hook, script).unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    repo.task_root(&["hooks", "install"]).ok();
    let wt = repo.start("t", &["--forbid", "src/store/**"]);
    let lines = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .count()
    };
    for round in 0..2 {
        let before = repo.git(&wt, &["rev-parse", "HEAD"]);
        repo.write(&wt, "src/store/mod.rs", "// forbidden\n");
        repo.git(&wt, &["add", "-A"]);
        let ran = lines();
        let run = repo.git_run(&wt, &["commit", "-q", "-m", "violation"]);
        assert_eq!(run.code, 1, "round {round}: {run}");
        assert!(run.stderr.contains("src/store/mod.rs  forbidden"), "{run}");
        assert_eq!(repo.git(&wt, &["rev-parse", "HEAD"]), before);
        assert_eq!(
            lines(),
            ran + 1,
            "round {round}: the manager's hook ran once"
        );
        super::restore_from_head(&repo, &wt, "src/store/mod.rs");
    }
    let own =
        std::path::PathBuf::from(repo.git(&wt, &["rev-parse", "--absolute-git-dir"])).join("hooks");
    assert!(!own.join("pre-commit.old").exists());
    assert!(!own.join("pre-commit.git-task-chained").exists());
    repo.task_root(&["hooks", "uninstall"]).ok();
    assert!(
        !own.exists(),
        "nothing of git-task's is left in {}",
        own.display()
    );
}

/// After a hook manager takes the main worktree's hooks over (lefthook's re-sync renames
/// git-task's shim), task worktrees still run the check (their own pointed directory) and the
/// main worktree does not: `list`, `start`, `status <task>` and every other command say that
/// same true thing (the main worktree, not "task worktrees"), with the command that restores it.
#[cfg(unix)]
#[test]
fn every_command_names_the_worktrees_a_manager_left_unchecked() {
    if tools::config_hooks_instead("every_command_names_the_worktrees") {
        return;
    }
    let Some(lefthook) = tools::require("lefthook", "every_command_names_the_worktrees") else {
        return;
    };
    let repo = TestRepo::new();
    let path = tools::path_with_tools(&[&lefthook]);
    let log = repo.base().join("lefthook.log");
    repo.write(repo.root(), "lefthook.yml", &lefthook_yml(&log, "first"));
    repo.git(repo.root(), &["add", "-A"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "lefthook"]);
    repo.task_root(&["hooks", "install"]).ok();
    let _wt = repo.start("t", &["--forbid", "src/store/**"]);
    assert_eq!(sh(&repo, &path, "lefthook install").code, 0);
    let main_unchecked = "replaced git-task's at";
    let says_main = |run: &Run| {
        let warning = run
            .stderr
            .lines()
            .find(|l| l.contains(main_unchecked))
            .unwrap_or_else(|| panic!("no warning: {run}"));
        assert!(
            warning.ends_with(
                "commits in the main worktree are not checked against contracts until merge"
            ),
            "{run}"
        );
        for l in run.stderr.lines().filter(|l| l.contains("commits in")) {
            assert!(l.contains("commits in the main worktree "), "{run}");
        }
        assert!(
            run.stderr
                .contains("hint: run it behind git-task's check: git task hooks install"),
            "{run}"
        );
    };
    says_main(&repo.task_root(&["list"]).ok());
    says_main(&repo.task_root(&["status", "t"]).ok());
    says_main(&repo.task_root(&["overlaps"]).ok());
    let run = repo.task_root(&["start", "u"]).ok();
    says_main(&run);
    // Installing again restores it: nothing to say.
    repo.task_root(&["hooks", "install"]).ok();
    assert!(!repo.task_root(&["list"]).ok().stderr.contains("warning"));
}
