//! Red team of "no work is lost" (SPEC §2.2, §2.7, §11): discarding paths meeting states a
//! user or an agent can leave a worktree in, checked with git as the oracle.

use super::support::*;
use crate::common::TestRepo;
use std::path::{Path, PathBuf};

/// Returns what `git status` (long form) of `dir` says, to see operations in progress.
fn status_text(repo: &TestRepo, dir: &Path) -> String {
    repo.git(dir, &["status"])
}

/// Asserts `dir` has no merge, cherry-pick or revert in progress, as git sees it.
#[track_caller]
fn assert_no_operation(repo: &TestRepo, dir: &Path) {
    let status = status_text(repo, dir);
    for word in ["merging", "cherry-pick", "revert", "Unmerged"] {
        assert!(!status.contains(word), "{word} in:\n{status}");
    }
    for head in ["MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD"] {
        let run = repo.git_run(dir, &["rev-parse", "-q", "--verify", head]);
        assert_ne!(run.code, 0, "{head} is still there");
    }
}

/// A task `a` whose worktree is in a conflicted merge of `main` (the same line changed on both
/// sides), with an untracked file beside it; returns the worktree.
fn conflicted_merge(repo: &TestRepo) -> PathBuf {
    let wt = repo.start("a", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { task }\n");
    commit_all(repo, &wt, "task side");
    repo.write(repo.root(), "src/lib.rs", "pub fn lib() { main }\n");
    commit_all(repo, repo.root(), "main side");
    assert_ne!(repo.git_run(&wt, &["merge", "main"]).code, 0);
    repo.write(&wt, "notes.txt", "written while merging\n");
    repo.git(&wt, &["rev-parse", "-q", "--verify", "MERGE_HEAD"]);
    wt
}

/// The conflicted file and the untracked one are in the attempt, as they were on disk.
#[track_caller]
fn assert_merge_work_saved(repo: &TestRepo, attempt: &str) {
    assert!(show(repo, attempt, "src/lib.rs").contains("<<<<<<<"));
    assert_eq!(show(repo, attempt, "notes.txt"), "written while merging");
}

/// `reset` of a worktree in the middle of a conflicted merge saves the work, then ends the
/// merge as `git reset --hard` would: a `MERGE_HEAD` left behind made the next commit a merge
/// with the base's newer work the reset had just put away.
#[test]
fn reset_ends_a_merge_in_progress() {
    let repo = TestRepo::new();
    let wt = conflicted_merge(&repo);
    repo.task(&wt, &["reset", "a"]).ok();
    assert_merge_work_saved(&repo, "refs/tasks/a/attempts/1");
    assert_no_operation(&repo, &wt);
    assert_eq!(repo.porcelain(&wt), "");
    repo.write(&wt, "src/lib.rs", "pub fn lib() { again }\n");
    commit_all(&repo, &wt, "after the reset");
    let parents = repo.git(&wt, &["rev-list", "--parents", "-n", "1", "HEAD"]);
    assert_eq!(parents.split(' ').count(), 2, "a merge commit: {parents}");
    repo.fsck();
}

/// `revert` of the whole task during a conflicted merge: saved, and the merge is over.
#[test]
fn revert_ends_a_merge_in_progress() {
    let repo = TestRepo::new();
    let wt = conflicted_merge(&repo);
    repo.task(&wt, &["revert", "a"]).ok();
    assert_merge_work_saved(&repo, "refs/tasks/a/attempts/1");
    assert_no_operation(&repo, &wt);
    repo.fsck();
}

/// `reset` during a conflicted cherry-pick: saved, and no `CHERRY_PICK_HEAD` is left.
#[test]
fn reset_ends_a_cherry_pick_in_progress() {
    let repo = TestRepo::new();
    let wt = repo.start("a", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { task }\n");
    commit_all(&repo, &wt, "task side");
    repo.write(repo.root(), "src/lib.rs", "pub fn lib() { main }\n");
    commit_all(&repo, repo.root(), "main side");
    assert_ne!(repo.git_run(&wt, &["cherry-pick", "main"]).code, 0);
    assert!(status_text(&repo, &wt).contains("cherry-pick"));
    repo.task(&wt, &["reset", "a"]).ok();
    assert!(show(&repo, "refs/tasks/a/attempts/1", "src/lib.rs").contains("<<<<<<<"));
    assert_no_operation(&repo, &wt);
    repo.fsck();
}
