//! `git task sync`: the base's new commits come into the task branch, in its worktree.

use super::support::commit_all;
use crate::common::TestRepo;

/// New base commits are merged into the task branch; files, base ref and record follow.
#[test]
fn sync_brings_new_base_commits_into_the_task() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    commit_all(&repo, &wt, "Task edit");
    repo.write(repo.root(), "other.txt", "from main\n");
    commit_all(&repo, repo.root(), "Main moves");
    let main = repo.git(repo.root(), &["rev-parse", "main"]);

    let json = repo.task_root(&["sync", "t1", "--json"]).ok().json();
    assert_eq!(json["kind"], "sync");
    assert_eq!(json["merged"], true);
    assert_eq!(json["base"], main.as_str());
    assert_eq!(repo.read(&wt, "other.txt"), "from main\n");
    assert_eq!(repo.read(&wt, "src/lib.rs"), "pub fn lib() { 1 }\n");
    assert!(wt.join(".task-contract.toml").exists());
    assert_eq!(repo.porcelain(&wt), "");
    assert_eq!(
        repo.git(repo.root(), &["rev-parse", "refs/tasks/t1/base"]),
        main
    );
    let parents = repo.git(repo.root(), &["rev-list", "--parents", "-1", "task/t1"]);
    assert_eq!(parents.split(' ').count(), 3, "a merge commit: {parents}");
    let events = repo.git(repo.root(), &["log", "--format=%s", "refs/tasks/t1/record"]);
    assert_eq!(events.lines().next(), Some("synced"));
    // The task still judges clean against the new base: only its own change counts.
    let merged = repo.task_root(&["merge", "t1", "--json"]).ok().json();
    assert_eq!(merged["tasks"][0]["task"], "t1");
    assert_eq!(repo.read(repo.root(), "src/lib.rs"), "pub fn lib() { 1 }\n");
    repo.fsck();
}

/// Syncing when nothing is new is a no-op.
#[test]
fn sync_is_idempotent() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    let tip = repo.git(repo.root(), &["rev-parse", "task/t1"]);
    let run = repo.task(&wt, &["sync"]).ok();
    assert!(run.stdout.contains("up to date"), "{run}");
    assert_eq!(repo.git(repo.root(), &["rev-parse", "task/t1"]), tip);
    let json = repo.task_root(&["sync", "t1", "--json"]).ok().json();
    assert_eq!(json["changed"], false);
}

/// A conflicting sync leaves git's conflict state with instructions; the base ref stays until it is resolved.
#[test]
fn sync_conflict_leaves_state_to_resolve() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    let old_base = repo.git(repo.root(), &["rev-parse", "refs/tasks/t1/base"]);
    repo.write(&wt, "README.md", "# task\n");
    commit_all(&repo, &wt, "Task edit");
    repo.write(repo.root(), "README.md", "# main\n");
    commit_all(&repo, repo.root(), "Main edit");

    let run = repo.task_root(&["sync", "t1"]).code(1);
    assert!(run.stderr.contains("README.md"), "{run}");
    assert!(run.stderr.contains("git task sync t1"), "{run}");
    assert!(
        repo.porcelain(&wt).contains("UU README.md"),
        "{}",
        repo.porcelain(&wt)
    );
    assert_eq!(
        repo.git(repo.root(), &["rev-parse", "refs/tasks/t1/base"]),
        old_base
    );

    // Running it again before resolving says so.
    let again = repo.task_root(&["sync", "t1", "--json"]).code(1).json();
    assert_eq!(again["merging"], true);

    repo.write(&wt, "README.md", "# both\n");
    commit_all(&repo, &wt, "Resolve");
    let json = repo.task_root(&["sync", "t1", "--json"]).ok().json();
    assert_eq!(json["changed"], true);
    assert_eq!(
        repo.git(repo.root(), &["rev-parse", "refs/tasks/t1/base"]),
        repo.git(repo.root(), &["rev-parse", "main"])
    );
    repo.fsck();
}

/// Uncommitted work in the task worktree is never touched: sync refuses.
#[test]
fn sync_refuses_a_dirty_worktree() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    repo.write(repo.root(), "other.txt", "from main\n");
    commit_all(&repo, repo.root(), "Main moves");
    repo.write(&wt, "src/lib.rs", "// wip\n");
    let tip = repo.git(repo.root(), &["rev-parse", "task/t1"]);
    let run = repo.task_root(&["sync", "t1"]).code(1);
    assert!(run.stderr.contains("uncommitted changes"), "{run}");
    assert_eq!(repo.read(&wt, "src/lib.rs"), "// wip\n");
    assert_eq!(repo.git(repo.root(), &["rev-parse", "task/t1"]), tip);
    assert!(!wt.join("other.txt").exists());
}
