//! The pre-commit hook during (and outside) a merge of the base: a staged path is the task's
//! only where it differs from both HEAD and the base's current tip; `MERGE_HEAD` decides nothing.

use super::{assert_refused, commit, head, task_with_hooks};
use crate::common::TestRepo;

/// A forged `MERGE_HEAD` (written with `git update-ref`) whose tree holds the forbidden content
/// does not make a plain commit of that content pass.
#[test]
fn forged_merge_head_does_not_hide_a_forbidden_change() {
    let repo = TestRepo::new();
    let wt = task_with_hooks(&repo, &["--forbid", "src/store/**"]);
    let before = head(&repo, &wt);
    repo.write(&wt, "src/store/mod.rs", "// stolen\n");
    repo.git(&wt, &["add", "-A"]);
    // A commit whose tree holds exactly the staged content, named as the merge in progress.
    let tree = repo.git(&wt, &["write-tree"]);
    let fake = repo.git(&wt, &["commit-tree", &tree, "-p", "HEAD", "-m", "fake"]);
    // git refuses `update-ref MERGE_HEAD`, but the file is the agent's to write.
    let merge_head = repo.git(&wt, &["rev-parse", "--git-path", "MERGE_HEAD"]);
    std::fs::write(wt.join(merge_head), format!("{fake}\n")).unwrap();
    let run = commit(&repo, &wt, &["-m", "sneak"]);
    assert_refused(&repo, &wt, &run, &before, "src/store/mod.rs", "forbidden");
}

/// Concluding a conflicted merge of the base: the base's newer files (outside the contract)
/// are not blamed; staging an older version of the base's work (neither HEAD's nor the base
/// tip's) is the task's own change. (Keeping HEAD's older version is caught by the merge gate,
/// which judges the landing: see `gate_attacks`.)
#[test]
fn base_merge_is_not_blamed_but_restoring_old_base_work_is() {
    let repo = TestRepo::new();
    let wt = task_with_hooks(&repo, &["--allow", "src/lib.rs"]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { task }\n");
    repo.git(&wt, &["commit", "-q", "-am", "task work"]);
    // The base changes the same file (a conflict) and, twice, a forbidden one.
    repo.write(repo.root(), "src/store/mod.rs", "pub fn store() { 2 }\n");
    repo.git(
        repo.root(),
        &["commit", "-q", "--no-verify", "-am", "base v2"],
    );
    repo.write(repo.root(), "src/lib.rs", "pub fn lib() { base }\n");
    repo.write(repo.root(), "src/store/mod.rs", "pub fn store() { 3 }\n");
    repo.write(repo.root(), "docs/new.md", "new\n");
    repo.git(repo.root(), &["add", "-A"]);
    repo.git(
        repo.root(),
        &["commit", "-q", "--no-verify", "-m", "base work"],
    );
    let merge = repo.git_run(&wt, &["merge", "-q", "main"]);
    assert_ne!(merge.code, 0, "the merge conflicts: {merge}");
    repo.write(&wt, "src/lib.rs", "pub fn lib() { both }\n");
    repo.git(&wt, &["add", "src/lib.rs"]);
    // Stage the base's older version of the forbidden file while concluding: refused.
    repo.git(&wt, &["checkout", "main~1", "--", "src/store/mod.rs"]);
    let before = head(&repo, &wt);
    let run = commit(&repo, &wt, &["--no-edit"]);
    assert_refused(&repo, &wt, &run, &before, "src/store/mod.rs", "not_allowed");
    // Take the base's version: the merge concludes.
    repo.git(&wt, &["checkout", "main", "--", "src/store/mod.rs"]);
    let run = commit(&repo, &wt, &["--no-edit"]);
    assert_eq!(run.code, 0, "{run}");
}
