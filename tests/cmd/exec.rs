//! `git task exec`: run a command in the task worktree with the task's environment.

use crate::common::TestRepo;

#[test]
fn exec_sets_the_task_environment_and_runs_in_the_worktree() {
    let repo = TestRepo::new();
    let wt = repo.start("ex", &[]);
    let main_tip = repo.git(repo.root(), &["rev-parse", "main"]);
    let run = repo
        .task_root(&[
            "exec",
            "ex",
            "--",
            "sh",
            "-c",
            "echo \"$GIT_TASK_ID|$GIT_TASK_BASE|$GIT_TASK_WORKTREE|$(pwd)\"",
        ])
        .ok();
    assert_eq!(
        run.out(),
        format!("ex|{main_tip}|{}|{}", wt.display(), wt.display())
    );
}

#[test]
fn exec_exits_with_the_child_code() {
    let repo = TestRepo::new();
    repo.start("ex", &[]);
    repo.task_root(&["exec", "ex", "--", "false"]).code(1);
    repo.task_root(&["exec", "ex", "--", "sh", "-c", "exit 42"])
        .code(42);
    repo.task_root(&["exec", "ex", "--", "true"]).ok();
    // The child's own output passes through untouched.
    let run = repo
        .task_root(&[
            "exec",
            "ex",
            "--",
            "sh",
            "-c",
            "echo out; echo err >&2; exit 7",
        ])
        .code(7);
    assert_eq!(run.stdout, "out\n");
    assert_eq!(run.stderr, "err\n");
}

#[test]
fn exec_of_an_unknown_task_or_a_missing_command_is_bad_input() {
    let repo = TestRepo::new();
    let run = repo.task_root(&["exec", "nope", "--", "true"]).code(2);
    assert!(run.stderr.contains("hint: "), "{run}");
    repo.start("ex", &[]);
    let run = repo.task_root(&["exec", "ex"]).code(2);
    assert!(run.stderr.starts_with("error: "), "{run}");
    let run = repo
        .task_root(&["exec", "ex", "--", "no-such-program-here"])
        .code(2);
    assert!(
        run.stderr.contains("no-such-program-here") && run.stderr.contains("hint: "),
        "{run}"
    );
}

#[test]
fn exec_of_a_removed_task_is_refused() {
    let repo = TestRepo::new();
    repo.start("ex", &[]);
    repo.task_root(&["remove", "ex"]).ok();
    let run = repo.task_root(&["exec", "ex", "--", "true"]).code(2);
    assert!(run.stderr.contains("hint: "), "{run}");
}
