//! The hooks fail closed (SPEC §8): a client that hands them an unusable `GIT_DIR` or
//! `GIT_INDEX_FILE` gets the repository, worktree and index found from the directory the hook
//! runs in, and a commit that cannot be told for a task's or not is refused.
//!
//! gitg (libgitg/gitg-stage.vala, `setup_commit_hook_environment`, GNOME/gitg) runs the
//! pre-commit hook from `<git dir>/hooks` (libgitg/gitg-hook.vala, `hook_file`: the worktree's
//! private git dir, ignoring `core.hooksPath`), in the worktree's top, with
//! `GIT_DIR = wd.get_relative_path(gd)`, `GIT_INDEX_FILE = Path.build_filename(gitdir, "index")`
//! and `GIT_PREFIX = "."`. In a linked worktree the git dir is not under the worktree, so
//! `get_relative_path` is NULL: the environment then reads `GIT_DIR=(null)` (printf of a NULL
//! string) and `GIT_INDEX_FILE=` (`build_filename(NULL, …)` is empty). gitg shows the hook's
//! stdout and stderr when it fails.

use super::{assert_refused, head, task_with_hooks};
use crate::common::{Run, TestRepo};
use std::path::{Path, PathBuf};

/// Runs the hook `script` as gitg does: in `wt`, with `env` on top of the test's own.
fn run_hook(repo: &TestRepo, script: &Path, wt: &Path, env: &[(&str, &str)]) -> Run {
    let mut cmd = repo.command(script, wt);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.stdin(std::process::Stdio::null()).output().unwrap();
    Run::of(out)
}

/// gitg's environment in a linked worktree.
const GITG: &[(&str, &str)] = &[
    ("GIT_DIR", "(null)"),
    ("GIT_INDEX_FILE", ""),
    ("GIT_PREFIX", "."),
];

/// A task forbidding `src/store/**`, the hooks installed, and a forbidden change staged.
fn staged_violation(repo: &TestRepo) -> (PathBuf, PathBuf) {
    let wt = task_with_hooks(repo, &["--forbid", "src/store/**"]);
    let git_dir = PathBuf::from(repo.git(&wt, &["rev-parse", "--absolute-git-dir"]));
    repo.write(&wt, "src/store/mod.rs", "// forbidden\n");
    repo.git(&wt, &["add", "-A"]);
    (wt, git_dir)
}

/// The pre-commit scripts of a task worktree whose private git dir is `git_dir`: its own
/// (gitg's, dulwich's), and the one git runs, from the shared hooks directory or, on git 2.54
/// and later, from config.
fn scripts(repo: &TestRepo, git_dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![git_dir.join("hooks/pre-commit")];
    out.extend(
        [
            repo.root().join(".git/hooks/pre-commit"),
            repo.root().join(".git/git-task/config-hooks/pre-commit"),
        ]
        .into_iter()
        .filter(|p| p.exists()),
    );
    assert!(out.len() >= 2, "{out:?}");
    out
}

#[test]
fn gitg_environment_in_a_task_worktree_is_blocked_with_the_report() {
    let repo = TestRepo::new();
    let (wt, git_dir) = staged_violation(&repo);
    let before = head(&repo, &wt);
    // Where gitg looks (the worktree's private hooks/), and where git runs them from.
    for script in scripts(&repo, &git_dir) {
        let run = run_hook(&repo, &script, &wt, GITG);
        assert_refused(&repo, &wt, &run, &before, "src/store/mod.rs", "forbidden");
    }
    // It judges, not just fails: an allowed change passes in the same environment.
    super::restore_from_head(&repo, &wt, "src/store/mod.rs");
    repo.write(&wt, "src/lib.rs", "// allowed\n");
    repo.git(&wt, &["add", "-A"]);
    let run = run_hook(&repo, &git_dir.join("hooks/pre-commit"), &wt, GITG);
    assert_eq!(run.code, 0, "{run}");
}

#[test]
fn each_unusable_git_dir_is_replaced_by_the_worktree_here() {
    let repo = TestRepo::new();
    let (wt, git_dir) = staged_violation(&repo);
    let before = head(&repo, &wt);
    let other = TestRepo::new();
    let other_git = other.root().join(".git");
    let index = git_dir.join("index");
    let common = repo.root().join(".git");
    let cases: Vec<(&str, String)> = vec![
        ("empty", String::new()),
        ("(null)", "(null)".into()),
        (
            "missing",
            repo.base().join("no-such-dir").display().to_string(),
        ),
        // Another repository, on a branch that is no task's.
        ("another repository", other_git.display().to_string()),
        // The main worktree's git dir (on main), as a client that takes the common dir would.
        ("the common dir", common.display().to_string()),
        ("a worktree's top", wt.display().to_string()),
    ];
    for script in scripts(&repo, &git_dir) {
        for (what, value) in &cases {
            let run = run_hook(
                &repo,
                &script,
                &wt,
                &[
                    ("GIT_DIR", value.as_str()),
                    ("GIT_INDEX_FILE", &index.display().to_string()),
                ],
            );
            assert!(run.code == 1, "GIT_DIR {what}: {run}");
            assert_refused(&repo, &wt, &run, &before, "src/store/mod.rs", "forbidden");
        }
    }
}

#[test]
fn each_unusable_index_file_is_replaced_by_the_worktree_index() {
    let repo = TestRepo::new();
    let (wt, git_dir) = staged_violation(&repo);
    let before = head(&repo, &wt);
    let other = TestRepo::new();
    let gd = git_dir.display().to_string();
    let other_git = other.root().join(".git").display().to_string();
    let other_index = other.root().join(".git/index").display().to_string();
    let cases: Vec<(&str, &str, String)> = vec![
        ("empty", gd.as_str(), String::new()),
        ("(null)", gd.as_str(), "(null)".into()),
        (
            "missing",
            gd.as_str(),
            repo.base().join("no-index").display().to_string(),
        ),
        ("a directory", gd.as_str(), gd.clone()),
        // The index of the repository whose GIT_DIR was not this worktree's.
        (
            "another repository's",
            other_git.as_str(),
            other_index.clone(),
        ),
    ];
    for (what, dir, value) in &cases {
        let run = run_hook(
            &repo,
            &git_dir.join("hooks/pre-commit"),
            &wt,
            &[("GIT_DIR", dir), ("GIT_INDEX_FILE", value.as_str())],
        );
        assert!(run.code == 1, "GIT_INDEX_FILE {what}: {run}");
        assert_refused(&repo, &wt, &run, &before, "src/store/mod.rs", "forbidden");
    }
}

#[test]
fn git_task_hook_resolves_the_worktree_itself() {
    // The binary decides the same way when it is called directly (a manager's own hook, a
    // client that runs `git task hook` itself).
    let repo = TestRepo::new();
    let (wt, _) = staged_violation(&repo);
    let before = head(&repo, &wt);
    let mut cmd = repo.command(crate::common::bin(), &wt);
    cmd.args(["hook", "pre-commit"]);
    for (k, v) in GITG {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let run = Run::of(out);
    assert_refused(&repo, &wt, &run, &before, "src/store/mod.rs", "forbidden");
}

#[test]
fn a_hook_that_finds_no_repository_refuses_with_a_message() {
    let repo = TestRepo::new();
    let (_wt, git_dir) = staged_violation(&repo);
    // Run from a directory outside any repository, with gitg's environment: nothing tells
    // which branch this commit is on, so the hook refuses rather than allow.
    let nowhere = crate::common::temp_dir();
    let run = run_hook(
        &repo,
        &git_dir.join("hooks/pre-commit"),
        nowhere.path(),
        GITG,
    );
    assert_ne!(run.code, 0, "{run}");
    assert!(
        run.stderr
            .contains("cannot tell whether this is a task's worktree")
            && run.stderr.contains("GIT_DIR='(null)'"),
        "{run}"
    );
    assert!(run.stderr.contains("hint: "), "{run}");
}

#[test]
fn git_as_usual_is_unaffected() {
    // The main worktree (git exports no GIT_DIR there) and a task worktree (an absolute one).
    let repo = TestRepo::new();
    let (wt, _) = staged_violation(&repo);
    let before = head(&repo, &wt);
    let run = super::commit(&repo, &wt, &["-m", "by git"]);
    assert_refused(&repo, &wt, &run, &before, "src/store/mod.rs", "forbidden");
    repo.write(repo.root(), "src/store/mod.rs", "// the user's own\n");
    let run = super::commit(&repo, repo.root(), &["-am", "main"]);
    assert_eq!(run.code, 0, "{run}");
}
