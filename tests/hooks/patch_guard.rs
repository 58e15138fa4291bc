//! A patch-mode task guards the user's own worktree (its commits, its branches) only while it
//! is active: dropped, reverted and dropped, merged or removed, it guards nothing, and every
//! refusal and hint names the command that lifts the guard (issue 32, item 7).

use super::head;
use crate::common::TestRepo;

/// The hooks installed and patch-mode task `p` started in the main worktree, forbidding
/// `src/store/**`.
fn patch_task(repo: &TestRepo) {
    repo.task_root(&["hooks", "install"]).ok();
    repo.task_root(&["start", "--mode", "patch", "p", "--forbid", "src/store/**"])
        .ok();
}

fn stage_forbidden(repo: &TestRepo, text: &str) {
    repo.write(repo.root(), "src/store/mod.rs", text);
    repo.git(repo.root(), &["add", "-A"]);
}

#[test]
fn the_refusals_name_the_command_that_lifts_the_guard_and_drop_lifts_it() {
    let repo = TestRepo::new();
    patch_task(&repo);
    let root = repo.root().to_path_buf();
    stage_forbidden(&repo, "// the task's\n");
    let before = head(&repo, &root);
    let run = repo.git_run(&root, &["commit", "-q", "-m", "guarded"]);
    assert_eq!(run.code, 1, "{run}");
    assert!(run.stderr.contains("src/store/mod.rs"), "{run}");
    assert!(
        run.stderr
            .contains("guarded by patch-mode task 'p': 'git task drop p' lifts the guard"),
        "{run}"
    );
    // Branches are the task's to keep too, with the same hint.
    let run = repo.git_run(&root, &["branch", "mine"]);
    assert_ne!(run.code, 0, "{run}");
    assert!(
        run.stderr.contains("'git task drop p' lifts the guard"),
        "{run}"
    );

    // drop says the worktree is the user's again, and it is.
    let run = repo.task_root(&["drop", "p"]).ok();
    assert!(run.stderr.contains("no longer guards"), "{run}");
    assert!(run.stderr.contains("git task revert p"), "{run}");
    assert!(
        run.stderr.contains("'git task remove p' then forgets"),
        "{run}"
    );
    assert!(!root.join(".git/git-task-active").exists());
    let run = repo.git_run(&root, &["commit", "-q", "-m", "the user's own"]);
    assert_eq!(run.code, 0, "{run}");
    assert_ne!(head(&repo, &root), before);
    assert!(!run.stderr.contains("warning"), "{run}");
    repo.git(&root, &["branch", "mine"]);
    // revert of the dropped task still works, and does not bring the guard back.
    repo.task_root(&["revert", "p"]).ok();
    stage_forbidden(&repo, "// after the revert\n");
    let run = repo.git_run(&root, &["commit", "-q", "-m", "after revert"]);
    assert_eq!(run.code, 0, "{run}");
    repo.fsck();
}

#[test]
fn a_mark_left_by_a_dropped_task_is_not_obeyed_and_drop_clears_it() {
    // What an older git-task left: the task dropped, its mark still in the main worktree.
    let repo = TestRepo::new();
    patch_task(&repo);
    let root = repo.root().to_path_buf();
    let mark = root.join(".git/git-task-active");
    let text = std::fs::read_to_string(&mark).unwrap();
    repo.task_root(&["drop", "p"]).ok();
    std::fs::write(&mark, &text).unwrap();

    stage_forbidden(&repo, "// the user's\n");
    let run = repo.git_run(&root, &["commit", "-q", "-m", "not guarded"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.stderr.contains("no longer guards this worktree")
            && run.stderr.contains("clear it with: git task drop p"),
        "{run}"
    );
    repo.git(&root, &["branch", "mine"]);

    // The command the hint names works: the mark goes, and commits are quiet again.
    let run = repo.task_root(&["drop", "p"]).ok();
    assert!(run.stderr.contains("its mark in"), "{run}");
    assert!(!mark.exists());
    repo.write(&root, "src/store/mod.rs", "// again\n");
    let run = repo.git_run(&root, &["commit", "-q", "-am", "quiet"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(!run.stderr.contains("warning"), "{run}");
}

#[test]
fn a_revert_of_a_live_patch_task_says_it_still_guards_and_how_to_lift_it() {
    let repo = TestRepo::new();
    patch_task(&repo);
    let root = repo.root().to_path_buf();
    repo.write(&root, "src/lib.rs", "// the task's work\n");
    let run = repo.task_root(&["revert", "p"]).ok();
    assert!(
        run.stderr
            .contains("task 'p' still guards this worktree (its commits and branches); 'git task drop p' lifts that"),
        "{run}"
    );
    stage_forbidden(&repo, "// still guarded\n");
    let run = repo.git_run(&root, &["commit", "-q", "-m", "guarded"]);
    assert_eq!(run.code, 1, "{run}");
    repo.task_root(&["drop", "p"]).ok();
    let run = repo.git_run(&root, &["commit", "-q", "-m", "lifted"]);
    assert_eq!(run.code, 0, "{run}");
}

#[test]
fn a_merged_patch_task_guards_nothing() {
    let repo = TestRepo::new();
    patch_task(&repo);
    let root = repo.root().to_path_buf();
    repo.write(&root, "src/lib.rs", "// accepted\n");
    repo.task_root(&["merge", "p"]).ok();
    assert!(!root.join(".git/git-task-active").exists());
    stage_forbidden(&repo, "// the user's\n");
    let run = repo.git_run(&root, &["commit", "-q", "-m", "free"]);
    assert_eq!(run.code, 0, "{run}");
    repo.git(&root, &["branch", "mine"]);
}

#[test]
fn a_removed_patch_task_guards_nothing() {
    let repo = TestRepo::new();
    patch_task(&repo);
    let root = repo.root().to_path_buf();
    stage_forbidden(&repo, "// the task's\n");
    assert_eq!(
        repo.git_run(&root, &["commit", "-q", "-m", "guarded"]).code,
        1
    );
    repo.task_root(&["remove", "p"]).ok();
    let run = repo.git_run(&root, &["commit", "-q", "-m", "the user's own"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(!run.stderr.contains("warning"), "{run}");
    repo.git(&root, &["branch", "mine"]);
    // A mark an older git-task left after remove: not obeyed, and drop clears it.
    std::fs::write(root.join(".git/git-task-active"), "p\n").unwrap();
    repo.write(&root, "src/store/mod.rs", "// again\n");
    let run = repo.git_run(&root, &["commit", "-q", "-am", "again"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(run.stderr.contains("git task drop p"), "{run}");
    repo.task_root(&["drop", "p"]).ok();
    assert!(!root.join(".git/git-task-active").exists());
}
