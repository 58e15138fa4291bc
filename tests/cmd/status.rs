//! `git task status`: one task in detail.

use crate::common::TestRepo;
use crate::common::*;

#[test]
fn status_json_shape() {
    let repo = TestRepo::new();
    let wt = repo.start("st", &["--forbid", "src/store/**", "--check", "true"]);
    repo.write(&wt, "src/lib.rs", "pub fn changed() {}\n");
    repo.write(&wt, "docs/new.md", "new\n");
    repo.git(&wt, &["add", "-A"]);
    repo.git(&wt, &["rm", "-q", "README.md"]);
    repo.git(&wt, &["commit", "-q", "-m", "work"]);

    let j = repo.task_root(&["status", "st", "--json"]).ok().json();
    assert_eq!(j["kind"], "status");
    assert_eq!(j["task"], "st");
    assert_eq!(j["mode"], "worktree");
    assert_eq!(j["status"], "active");
    assert_eq!(j["branch"], "task/st");
    assert_eq!(j["base"], "main");
    assert_eq!(j["base_commit"], rev(&repo, "main").as_str());
    assert_eq!(j["ahead"], 1);
    assert_eq!(j["changed_files"], 3);
    assert_eq!(j["dirty"], false);
    assert_eq!(
        j["contract"]["forbidden"],
        serde_json::json!(["src/store/**"])
    );
    assert_eq!(
        j["contract"]["checks"]["commands"],
        serde_json::json!(["true"])
    );
    assert_eq!(
        j["files"],
        serde_json::json!([
            {"path": "README.md", "change": "deleted"},
            {"path": "docs/new.md", "change": "added"},
            {"path": "src/lib.rs", "change": "modified"},
        ])
    );
    let events: Vec<&str> = j["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(events, ["started", "provisioned"]);
    assert_eq!(j["attempts"], serde_json::json!([]));

    let human = repo.task_root(&["status", "st"]).ok();
    for want in [
        "task st (worktree, active)",
        "branch    task/st",
        "src/store/**",
        "D README.md",
        "A docs/new.md",
        "M src/lib.rs",
        "provisioned",
    ] {
        assert!(human.stdout.contains(want), "missing {want:?}:\n{human}");
    }
}

#[test]
fn status_without_id_uses_the_task_of_the_current_worktree() {
    let repo = TestRepo::new();
    let wt = repo.start("here", &[]);
    let j = repo
        .task(&wt.join("src"), &["status", "--json"])
        .ok()
        .json();
    assert_eq!(j["task"], "here");
    let run = repo.task_root(&["status"]).code(2);
    assert!(
        run.stderr.starts_with("error: ") && run.stderr.contains("hint: "),
        "{run}"
    );
}

#[test]
fn status_of_an_unknown_task_is_bad_input() {
    let repo = TestRepo::new();
    let run = repo.task_root(&["status", "nope", "--json"]).code(2);
    assert!(
        run.stderr.contains("no task 'nope'") && run.stderr.contains("hint: "),
        "{run}"
    );
    let doc = run.json();
    assert_eq!(doc["kind"], "error", "the error as JSON on stdout");
    assert_eq!(doc["error"], "input");
}

/// A typo'd id: exit 2, and the hint names the nearest existing id (at most two edits away);
/// an id far from every task gets no guess.
#[test]
fn status_of_a_typo_suggests_the_nearest_id() {
    let repo = TestRepo::new();
    repo.start("auth-fix", &[]);
    repo.start("docs", &[]);
    let run = repo.task_root(&["status", "auth-fx"]).code(2);
    assert!(run.stderr.contains("no task 'auth-fx'"), "{run}");
    assert!(
        run.stderr.contains("hint: did you mean 'auth-fix'?"),
        "{run}"
    );
    let json = repo.task_root(&["status", "atuh-fix", "--json"]).code(2);
    assert!(json.stderr.contains("did you mean 'auth-fix'?"), "{json}");
    // Other commands that take an id say the same.
    let exec = repo.task_root(&["exec", "dcos", "--", "true"]).code(2);
    assert!(exec.stderr.contains("did you mean 'docs'?"), "{exec}");
    let far = repo.task_root(&["status", "payments"]).code(2);
    assert!(!far.stderr.contains("did you mean"), "{far}");
}

/// `sync` and `overlaps` of a typo'd id name the nearest id too.
#[test]
fn verbs_of_a_typo_suggest_the_nearest_id() {
    let repo = TestRepo::new();
    repo.start("auth-fix", &[]);
    repo.start("docs", &[]);
    for args in [&["sync", "auth-fx"][..], &["overlaps", "auth-fx", "docs"]] {
        let run = repo.task_root(args).code(2);
        assert!(
            run.stderr.contains("did you mean 'auth-fix'?"),
            "{args:?}: {run}"
        );
    }
}
