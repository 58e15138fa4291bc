//! `git task drop`: marks the task dropped, keeps its worktree, leaves the main worktree alone.

use crate::common::TestRepo;
use crate::common::*;

#[test]
fn drop_marks_the_task_and_keeps_the_worktree() {
    let repo = TestRepo::new();
    let wt = repo.start("dr", &[]);
    repo.write(&wt, "wip.txt", "work in progress\n");
    repo.write(repo.root(), "mine.txt", "the user's own change\n");
    let main_before = repo.porcelain(repo.root());
    let branch_before = rev(&repo, "task/dr");

    let j = repo
        .task_root(&["drop", "dr", "--json", "-m", "wrong approach"])
        .ok()
        .json();
    assert_eq!(j["kind"], "drop");
    assert_eq!(j["task"], "dr");
    assert_eq!(j["status"], "dropped");
    assert_eq!(j["changed"], true);

    assert_eq!(record_status(&repo, "dr"), "dropped");
    assert_eq!(events(&repo, "dr"), ["started", "provisioned", "dropped"]);
    assert!(
        repo.worktrees().contains(&wt),
        "the worktree stays for inspection"
    );
    assert_eq!(repo.read(&wt, "wip.txt"), "work in progress\n");
    assert_eq!(rev(&repo, "task/dr"), branch_before, "the branch stays");
    assert_eq!(
        repo.porcelain(repo.root()),
        main_before,
        "the main worktree is untouched"
    );
    let list = repo.task_root(&["list", "--json"]).ok().json();
    assert_eq!(list["tasks"][0]["status"], "dropped");
    repo.fsck();
}

#[test]
fn drop_twice_is_a_no_op() {
    let repo = TestRepo::new();
    repo.start("dr", &[]);
    repo.task_root(&["drop", "dr"]).ok();
    let before = all_refs(&repo);
    let j = repo.task_root(&["drop", "dr", "--json"]).ok().json();
    assert_eq!(j["changed"], false);
    assert_eq!(all_refs(&repo), before);
}

#[test]
fn drop_from_inside_the_worktree_and_then_remove() {
    let repo = TestRepo::new();
    let wt = repo.start("dr", &[]);
    repo.task(&wt, &["drop"]).ok();
    assert_eq!(record_status(&repo, "dr"), "dropped");
    repo.task_root(&["remove", "dr"]).ok();
    assert_eq!(record_status(&repo, "dr"), "removed");
    assert!(!wt.exists());
}

#[test]
fn drop_of_an_unknown_task_is_bad_input() {
    let repo = TestRepo::new();
    repo.task_root(&["drop", "nope"]).code(2);
    assert!(repo.refs("refs/tasks").is_empty());
}
