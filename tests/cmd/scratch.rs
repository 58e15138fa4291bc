//! `git task scratch`: a per-task directory outside every worktree, removed with the task.

use crate::common::TestRepo;
use std::path::PathBuf;

#[test]
fn scratch_is_created_under_the_common_git_dir_and_removed_with_the_task() {
    let repo = TestRepo::new();
    let wt = repo.start("sc", &[]);
    let run = repo.task_root(&["scratch", "sc"]).ok();
    let dir = PathBuf::from(run.out());
    assert_eq!(run.stdout.lines().count(), 1);
    assert!(dir.is_dir());
    assert!(
        dir.starts_with(repo.root().join(".git")),
        "{}",
        dir.display()
    );
    assert!(!dir.starts_with(&wt));
    std::fs::write(dir.join("log.txt"), "log\n").unwrap();
    assert_eq!(
        repo.porcelain(&wt),
        "",
        "scratch files never show in the worktree"
    );
    assert_eq!(repo.porcelain(repo.root()), "", "nor in the main worktree");

    let again = repo.task(&wt, &["scratch", "--json"]).ok().json();
    assert_eq!(again["kind"], "scratch");
    assert_eq!(again["task"], "sc");
    assert_eq!(PathBuf::from(again["path"].as_str().unwrap()), dir);
    assert!(
        dir.join("log.txt").exists(),
        "asking again keeps the content"
    );

    repo.task_root(&["remove", "sc"]).ok();
    assert!(!dir.exists(), "removed with the task");
    let run = repo.task_root(&["scratch", "sc"]).code(2);
    assert!(
        run.stderr.contains("hint: ") && run.stderr.contains("removed"),
        "{run}"
    );
}
