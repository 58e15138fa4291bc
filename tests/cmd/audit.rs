//! `git task audit` and the `base_moved_unattributed` report of `list`, `status`, `check` and
//! `merge` (SPEC §6, §11): a move of a base that skipped the hooks is on file and said.

use crate::common::TestRepo;
use crate::common::{all_refs, commit_all, rev};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// `git -c core.hooksPath=/dev/null args..` in `dir`: git with the hooks skipped.
#[track_caller]
fn skipping_hooks(repo: &TestRepo, dir: &Path, args: &[&str]) -> String {
    let mut all = vec!["-c", "core.hooksPath=/dev/null"];
    all.extend_from_slice(args);
    repo.git(dir, &all)
}

/// Hooks installed, task t1 with a commit; then `main` is moved to t1's tip with the hooks
/// skipped. Returns t1's worktree and the tip.
fn moved_past_the_gate(repo: &TestRepo) -> (PathBuf, String) {
    repo.task_root(&["hooks", "install"]).ok();
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "docs/t1.md", "t1\n");
    commit_all(repo, &wt, "t1 work");
    let tip = rev(repo, "task/t1");
    skipping_hooks(repo, &wt, &["update-ref", "refs/heads/main", &tip]);
    (wt, tip)
}

/// The `warnings` entry of a report, asserted to be the move to `tip`.
#[track_caller]
fn assert_warned(json: &Value, tip: &str) {
    let warnings = json["warnings"]
        .as_array()
        .unwrap_or_else(|| panic!("no warnings: {json}"));
    assert_eq!(warnings.len(), 1, "{json}");
    assert_eq!(warnings[0]["kind"], "base_moved_unattributed");
    assert_eq!(warnings[0]["branch"], "main");
    assert_eq!(warnings[0]["commits"], serde_json::json!([tip]));
}

#[test]
fn a_move_with_the_hooks_skipped_is_reported_by_every_command_that_looks_at_the_base() {
    let repo = TestRepo::new();
    let (_wt, tip) = moved_past_the_gate(&repo);
    let list = repo.task_root(&["list", "--json"]).ok().json();
    assert_warned(&list, &tip);
    let status = repo.task_root(&["status", "t1", "--json"]).ok().json();
    assert_warned(&status, &tip);
    let check = repo.task_root(&["check", "t1", "--json"]).ok().json();
    assert_warned(&check, &tip);
    let short = &tip[..7];
    for args in [vec!["list"], vec!["status", "t1"], vec!["check", "t1"]] {
        let run = repo.task_root(&args).ok();
        assert!(
            run.stderr.contains(&format!(
                "warning: base_moved_unattributed: 'main' moved to {short} outside git-task"
            )) && run
                .stderr
                .contains("hint: see every move: git task audit main"),
            "{args:?}:\n{run}"
        );
    }
    // Said again and again: looking does not make it attributed.
    let again = repo.task_root(&["list", "--json"]).ok().json();
    assert_warned(&again, &tip);
}

#[test]
fn merge_over_an_unattributed_move_that_would_change_nothing_refuses() {
    let repo = TestRepo::new();
    let (wt, _tip) = moved_past_the_gate(&repo);
    let before = all_refs(&repo);
    let run = repo.task_root(&["merge", "t1", "--no-checks", "--json"]);
    assert_eq!(run.code, 1, "{run}");
    assert!(!run.stdout.contains("no change"), "{run}");
    let json = run.json();
    assert_eq!(json["kind"], "base_moved_unattributed", "{json}");
    assert_eq!(all_refs(&repo), before, "the refused merge changed refs");
    assert!(wt.exists(), "the refused merge removed the worktree");
    let human = repo.task_root(&["merge", "t1", "--no-checks"]);
    assert_eq!(human.code, 1);
    assert!(
        human
            .stderr
            .contains("error: base_moved_unattributed: 'main' moved to")
            && human.stderr.contains("git task audit main"),
        "{human}"
    );
    repo.fsck();
}

#[test]
fn merge_that_lands_work_over_an_unattributed_move_warns() {
    let repo = TestRepo::new();
    repo.task_root(&["hooks", "install"]).ok();
    let wt1 = repo.start("t1", &[]);
    let wt2 = repo.start("t2", &[]);
    repo.write(&wt1, "docs/t1.md", "t1\n");
    commit_all(&repo, &wt1, "t1 work");
    skipping_hooks(&repo, &wt1, &["update-ref", "refs/heads/main", "task/t1"]);
    repo.write(&wt2, "docs/t2.md", "t2\n");
    commit_all(&repo, &wt2, "t2 work");
    let run = repo
        .task_root(&["merge", "t2", "--no-checks", "--json"])
        .ok();
    let json = run.json();
    let warnings = json["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().any(|w| w
            .as_str()
            .unwrap()
            .starts_with("base_moved_unattributed: 'main' moved to")),
        "{json}"
    );
    // The landing is attributed to the merge, the move before it stays unattributed.
    let audit = repo.task_root(&["audit", "main", "--json"]).ok().json();
    let by: Vec<&str> = audit["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["by"].as_str().unwrap())
        .collect();
    assert_eq!(by, ["git-task", "unattributed", "merge"], "{audit}");
}

#[test]
fn audit_lists_every_move_oldest_first_attributed() {
    let repo = TestRepo::new();
    repo.task_root(&["hooks", "install"]).ok();
    let start_tip = rev(&repo, "main");
    let wt1 = repo.start("t1", &[]);
    let wt2 = repo.start("t2", &[]);
    repo.write(&wt2, "docs/t2.md", "t2\n");
    commit_all(&repo, &wt2, "t2 work");
    repo.task_root(&["merge", "t2", "--no-checks"]).ok();
    let merged = rev(&repo, "main");
    repo.write(repo.root(), "docs/user.md", "user\n");
    repo.git(repo.root(), &["add", "-A"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "user work"]);
    let user = rev(&repo, "main");
    repo.write(&wt1, "docs/t1.md", "t1\n");
    commit_all(&repo, &wt1, "t1 work");
    let x = skipping_hooks(
        &repo,
        &wt1,
        &["commit-tree", "task/t1^{tree}", "-p", "main", "-m", "x"],
    );
    skipping_hooks(&repo, &wt1, &["update-ref", "refs/heads/main", &x]);

    let audit = repo.task_root(&["audit", "main", "--json"]).ok().json();
    assert_eq!(audit["kind"], "audit");
    assert_eq!(audit["branch"], "refs/heads/main");
    assert_eq!(audit["watched"], true);
    assert_eq!(audit["tip"], x.as_str());
    assert_eq!(audit["unattributed"], 1);
    let moves: Vec<(Value, Value, &str)> = audit["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["old"].clone(),
                m["new"].clone(),
                m["by"].as_str().unwrap(),
            )
        })
        .collect();
    let s = |v: &str| Value::String(v.to_owned());
    assert_eq!(
        moves,
        vec![
            (Value::Null, s(&start_tip), "git-task"),
            (s(&start_tip), s(&merged), "merge"),
            (s(&merged), s(&user), "worktree"),
            (s(&user), s(&x), "unattributed"),
        ],
        "{audit}"
    );
    assert_eq!(audit["moves"][1]["tasks"], serde_json::json!(["t2"]));
    assert_eq!(audit["moves"][2]["main_worktree"], true);

    // Human: one line per move, the commit moved to named; the default branch is HEAD's.
    let run = repo.task_root(&["audit"]).ok();
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{run}");
    assert!(lines[1].ends_with("merge of t2"), "{run}");
    assert!(lines[2].contains("main worktree"), "{run}");
    assert!(
        lines[3].contains(&x[..7]) && lines[3].contains("unattributed"),
        "{run}"
    );
}

#[test]
fn without_the_hooks_nothing_is_watched_nor_reported() {
    let repo = TestRepo::new();
    let wt = repo.start("t1", &[]);
    repo.write(&wt, "docs/t1.md", "t1\n");
    commit_all(&repo, &wt, "t1 work");
    skipping_hooks(&repo, &wt, &["update-ref", "refs/heads/main", "task/t1"]);
    let list = repo.task_root(&["list", "--json"]).ok();
    assert!(!list.stdout.contains("base_moved_unattributed"), "{list}");
    assert!(!list.stderr.contains("base_moved_unattributed"), "{list}");
    let audit = repo.task_root(&["audit", "main", "--json"]).ok().json();
    assert_eq!(audit["watched"], false);
    assert_eq!(audit["moves"], serde_json::json!([]));
    let human = repo.task_root(&["audit", "main"]).ok();
    assert!(human.stderr.contains("does not watch 'main'"), "{human}");
}

/// The JSON of `audit` and the `warnings` of `list`, `status` and `check` match `schema/`.
#[test]
fn the_reports_match_their_published_schemas() {
    let repo = TestRepo::new();
    moved_past_the_gate(&repo);
    let schema = |name: &str| -> Value {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("schema")
            .join(format!("{name}.json"));
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    for (name, args) in [
        ("audit", vec!["audit", "main", "--json"]),
        ("list", vec!["list", "--json"]),
        ("status", vec!["status", "t1", "--json"]),
        ("check", vec!["check", "t1", "--json"]),
    ] {
        let doc = repo.task_root(&args).ok().json();
        let validator = jsonschema::validator_for(&schema(name)).unwrap();
        let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{name}: {errors:?}\n{doc:#}");
        if name != "audit" {
            assert!(doc["warnings"].is_array(), "{name}: {doc}");
        }
    }
}
