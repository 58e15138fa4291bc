//! `git task path`: exactly one line, the worktree path.

use crate::common::TestRepo;
use std::path::PathBuf;

#[test]
fn path_prints_exactly_one_line() {
    let repo = TestRepo::new();
    let wt = repo.start("p", &[]);
    let run = repo.task_root(&["path", "p"]).ok();
    assert_eq!(run.stdout, format!("{}\n", wt.display()), "{run}");
    assert_eq!(run.stderr, "", "{run}");
    assert!(repo.worktrees().contains(&PathBuf::from(run.out())));
    // From inside the worktree, without an id.
    let inside = repo.task(&wt.join("src/store"), &["path"]).ok();
    assert_eq!(inside.stdout, run.stdout);
}

#[test]
fn path_json_shape() {
    let repo = TestRepo::new();
    let wt = repo.start("pj", &[]);
    let j = repo.task_root(&["path", "pj", "--json"]).ok().json();
    assert_eq!(
        j,
        serde_json::json!({"schema_version": 1, "kind": "path", "task": "pj", "path": wt.to_str().unwrap(), "exists": true})
    );
}

#[test]
fn path_of_an_unknown_task_is_bad_input() {
    let repo = TestRepo::new();
    let run = repo.task_root(&["path", "nope"]).code(2);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.starts_with("error: ") && run.stderr.contains("hint: "),
        "{run}"
    );
}
