//! `git task check`: the whole task or what is staged, and `--run`.

use crate::common::TestRepo;

/// The documented JSON shape of a verdict (man page, JSON OUTPUT).
#[track_caller]
fn assert_verdict_shape(j: &serde_json::Value) {
    let mut keys: Vec<&str> = j.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort();
    let mut want = vec![
        "checked",
        "kind",
        "repair",
        "schema_version",
        "staged",
        "task",
        "violations",
    ];
    if j.get("checks").is_some() {
        want.push("checks");
    }
    // A refusal names its way out (issue 34): hints, and the next steps as MCP tool calls.
    if j["kind"] != "contract_ok" {
        want.extend(["hints", "next"]);
    }
    want.sort();
    assert_eq!(keys, want, "{j}");
    for v in j["violations"].as_array().unwrap() {
        let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort();
        assert_eq!(keys, ["file", "reason", "rule"], "{j}");
    }
}

#[test]
fn check_json_matches_the_documented_shape() {
    let repo = TestRepo::new();
    let wt = repo.start("t", &["--allow", "src/**", "--forbid", "src/store/**"]);
    let ok = repo.task(&wt, &["check", "--json"]).ok().json();
    assert_verdict_shape(&ok);
    assert_eq!(ok["kind"], "contract_ok");
    assert_eq!(ok["task"], "t");
    assert_eq!(ok["violations"], serde_json::json!([]));
    assert_eq!(ok["repair"], "");
    assert_eq!(ok["staged"], false);

    // Committed and uncommitted work both count for the whole task.
    repo.write(&wt, "src/store/mod.rs", "// edited\n");
    repo.git(&wt, &["commit", "-q", "--no-verify", "-a", "-m", "store"]);
    repo.write(&wt, "docs/new.md", "untracked\n");
    let run = repo.task_root(&["check", "t", "--json"]).code(1);
    let j = run.json();
    assert_verdict_shape(&j);
    assert_eq!(j["kind"], "contract_violation");
    assert_eq!(
        j["violations"],
        serde_json::json!([
            {"file": "docs/new.md", "reason": "not_allowed", "rule": "allowed = [\"src/**\"]"},
            {"file": "src/store/mod.rs", "reason": "forbidden", "rule": "src/store/**"},
        ])
    );
    assert_eq!(j["checked"], 2);
    let repair = j["repair"].as_str().unwrap();
    assert!(repair.contains("may only change: src/**"), "{repair}");
    assert!(repair.contains("src/store/mod.rs"), "{repair}");
}

#[test]
fn check_human_report_goes_to_stdout() {
    let repo = TestRepo::new();
    let wt = repo.start("t", &["--forbid", "src/store/**"]);
    let clean = repo.task(&wt, &["check"]).ok();
    assert_eq!(
        clean.out(),
        "ok: task 't': 0 changed files within the contract"
    );
    repo.write(&wt, "src/store/mod.rs", "// edited\n");
    let run = repo.task(&wt, &["check"]).code(1);
    assert!(
        run.stdout
            .contains("src/store/mod.rs  forbidden  src/store/**"),
        "{run}"
    );
    assert!(run.stdout.contains("hint: "), "{run}");
}

#[test]
fn check_staged_judges_only_the_index() {
    let repo = TestRepo::new();
    let wt = repo.start("t", &["--forbid", "src/store/**"]);
    repo.write(&wt, "src/store/mod.rs", "// not staged\n");
    repo.write(&wt, "src/lib.rs", "pub fn staged() {}\n");
    repo.git(&wt, &["add", "src/lib.rs"]);
    let j = repo.task(&wt, &["check", "--staged", "--json"]).ok().json();
    assert_verdict_shape(&j);
    assert_eq!(j["staged"], true);
    assert_eq!(j["checked"], 1);
    // From the main worktree, naming the task, the task worktree's index is judged.
    repo.git(&wt, &["add", "src/store/mod.rs"]);
    let j = repo
        .task_root(&["check", "t", "--staged", "--json"])
        .code(1)
        .json();
    assert_eq!(j["violations"][0]["file"], "src/store/mod.rs");
    assert!(
        j["repair"].as_str().unwrap().contains("--source=HEAD"),
        "{j}"
    );
}

#[test]
fn check_run_runs_the_frozen_checks_and_records_them() {
    let repo = TestRepo::new();
    let wt = repo.start(
        "t",
        &[
            "--check",
            "test -f src/lib.rs",
            "--check",
            "echo checking $GIT_TASK_ID; exit 3",
        ],
    );
    // A check added on the branch is never run: checks come from the frozen contract.
    let contract = repo
        .read(&wt, ".task-contract.toml")
        .replace("commands = [", "commands = [\"touch pwned\", ");
    repo.write(&wt, ".task-contract.toml", &contract);
    let run = repo.task(&wt, &["check", "--run", "--json"]).code(1);
    let j = run.json();
    assert_verdict_shape(&j);
    let checks = j["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 2, "{j}");
    assert_eq!(checks[0]["command"], "test -f src/lib.rs");
    assert_eq!(checks[0]["code"], 0);
    assert_eq!(checks[1]["code"], 3);
    assert_eq!(checks[1]["timed_out"], false);
    assert!(
        checks[1]["output"].as_str().unwrap().contains("checking t"),
        "{j}"
    );
    assert!(!wt.join("pwned").exists());
    let log = repo.task_root(&["log", "t", "--json"]).ok().json();
    let last = log["events"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["event"], "checks", "{last}");
    assert_eq!(last["details"]["passed"], false, "{last}");

    let human = repo.task(&wt, &["check", "--run"]).code(1);
    assert!(
        human
            .stdout
            .contains("check 'echo checking $GIT_TASK_ID; exit 3' failed (exit 3"),
        "{human}"
    );
}

#[test]
fn check_errors() {
    let repo = TestRepo::new();
    let run = repo.task_root(&["check"]).code(2);
    assert!(run.stderr.contains("no active task"), "{run}");
    assert!(run.stdout.is_empty());
    repo.task_root(&["check", "nope"]).code(2);
    repo.task_root(&["check", "a..b"]).code(2);
}
