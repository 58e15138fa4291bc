//! `git task overlaps` and the forecast at start, after merge and in `list`: contract overlap,
//! same files (committed or not), trial merges onto the base's tip, and each task against the
//! base's new commits.

use super::support::*;
use crate::common::TestRepo;
use serde_json::Value;
use std::path::Path;

/// A repository with a few files of several lines each.
fn repo() -> TestRepo {
    let repo = TestRepo::new();
    for f in ["src/api/a.rs", "src/api/b.rs", "src/db/c.rs", "README"] {
        repo.write(repo.root(), f, "one\ntwo\nthree\nfour\nfive\n");
    }
    commit_all(&repo, repo.root(), "files");
    repo
}

/// Replaces line `two` of `file` in `dir` with `with`, and commits it (hooks skipped).
fn edit(repo: &TestRepo, dir: &Path, file: &str, with: &str) {
    let text = repo.read(dir, file).replace("two", with);
    repo.write(dir, file, &text);
    commit_all(repo, dir, &format!("edit {file}"));
}

fn pair<'a>(j: &'a Value, a: &str, b: &str) -> Option<&'a Value> {
    j["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["tasks"][0] == a && p["tasks"][1] == b)
}

fn task<'a>(j: &'a Value, id: &str) -> &'a Value {
    j["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["task"] == id)
        .unwrap()
}

#[test]
fn a_trial_merge_tells_clean_pairs_from_conflicting_ones() {
    let repo = repo();
    let a = repo.start("a", &["--allow", "src/api/**"]);
    let b = repo.start("b", &["--allow", "src/**"]);
    let c = repo.start("c", &["--allow", "src/api/**"]);
    edit(&repo, &a, "src/api/a.rs", "A");
    edit(&repo, &b, "src/api/a.rs", "B");
    // c changes the same file as a, in another place: it merges cleanly.
    let text = repo.read(&c, "src/api/a.rs").replace("five", "C");
    repo.write(&c, "src/api/a.rs", &text);
    commit_all(&repo, &c, "c");
    let objects_before = repo.git(repo.root(), &["count-objects"]);

    let j = repo.task_root(&["overlaps", "--json"]).code(1).json();
    assert_eq!(j["kind"], "overlaps");
    assert_eq!(j["pairs_checked"], 3);
    let ab = pair(&j, "a", "b").expect("a and b collide");
    assert_eq!(ab["kind"], "conflict");
    assert_eq!(ab["merge"]["verdict"], "conflict");
    assert_eq!(ab["merge"]["paths"], serde_json::json!(["src/api/a.rs"]));
    assert_eq!(ab["files"], serde_json::json!(["src/api/a.rs"]));
    assert_eq!(ab["contract"]["overlap"], "yes");
    let ac = pair(&j, "a", "c").expect("a and c share a file");
    assert_eq!(ac["kind"], "same_files");
    assert_eq!(ac["merge"]["verdict"], "clean");
    assert_eq!(
        repo.git(repo.root(), &["count-objects"]),
        objects_before,
        "trial merges write nothing to the object database"
    );

    // Named tasks only: a and c do not conflict, so the exit code is 0.
    let j = repo
        .task_root(&["overlaps", "a", "c", "--json"])
        .ok()
        .json();
    assert_eq!(j["pairs_checked"], 1);
    let text = repo.task_root(&["overlaps"]).code(1);
    assert!(text.stdout.contains("conflict"), "{}", text.stdout);
    assert!(text.stdout.contains("src/api/a.rs"), "{}", text.stdout);
}

#[test]
fn uncommitted_work_counts_as_the_same_files() {
    let repo = repo();
    let a = repo.start("a", &[]);
    let b = repo.start("b", &[]);
    repo.write(&a, "README", "a's readme\n");
    repo.write(&b, "README", "b's readme\n");
    repo.write(&b, "notes/new.txt", "untracked\n");
    let j = repo.task_root(&["overlaps", "--json"]).ok().json();
    let ab = pair(&j, "a", "b").expect("both changed README");
    assert_eq!(ab["kind"], "same_files");
    assert_eq!(ab["files"], serde_json::json!(["README"]));
    assert_eq!(task(&j, "b")["uncommitted"], true);
    assert_eq!(task(&j, "b")["changed"], 2);
    assert_eq!(j["uncommitted_counted"], true);
    // --committed looks at no worktree: nothing is shared then.
    let j = repo
        .task_root(&["overlaps", "--committed", "--json"])
        .ok()
        .json();
    assert_eq!(j["uncommitted_counted"], false);
    let ab = pair(&j, "a", "b").expect("contracts still meet");
    assert_eq!(ab["kind"], "contract_overlap");
    assert_eq!(ab["files"], serde_json::json!([]));
    assert_eq!(task(&j, "b")["changed"], 0);
}

#[test]
fn contracts_that_cannot_meet_are_not_a_pair() {
    let repo = repo();
    repo.start("api", &["--allow", "src/api/**"]);
    repo.start("db", &["--allow", "src/db/**"]);
    repo.start("locks", &["--allow", "*.lock"]);
    repo.start("cargo", &["--allow", "Cargo.lock"]);
    let j = repo.task_root(&["overlaps", "--json"]).ok().json();
    assert!(pair(&j, "api", "db").is_none(), "{j}");
    let lc = pair(&j, "cargo", "locks").expect("*.lock covers Cargo.lock");
    assert_eq!(lc["kind"], "contract_overlap");
    assert_eq!(lc["contract"]["example"], "Cargo.lock");
}

#[test]
fn each_task_is_told_how_far_behind_and_what_conflicts_with_the_base() {
    let repo = repo();
    let a = repo.start("a", &[]);
    edit(&repo, &a, "README", "A");
    edit(&repo, repo.root(), "README", "MAIN");
    edit(&repo, repo.root(), "src/db/c.rs", "MAIN");
    let j = repo.task_root(&["overlaps", "--json"]).code(1).json();
    let t = task(&j, "a");
    assert_eq!(t["behind"], 2);
    assert_eq!(t["base"], "main");
    assert_eq!(t["conflicts_with_base"], serde_json::json!(["README"]));
    let text = repo.task_root(&["overlaps"]).code(1);
    assert!(text.stdout.contains("behind main by 2"), "{}", text.stdout);
}

#[test]
fn after_a_merge_lands_the_tasks_that_now_conflict_are_named() {
    let repo = repo();
    let a = repo.start("a", &[]);
    let b = repo.start("b", &[]);
    let c = repo.start("c", &[]);
    edit(&repo, &a, "src/api/b.rs", "A");
    edit(&repo, &b, "src/api/b.rs", "B");
    edit(&repo, &c, "src/db/c.rs", "C");
    let j = repo
        .task_root(&["merge", "a", "--no-checks", "--json"])
        .ok()
        .json();
    assert_eq!(j["kind"], "merge");
    assert_eq!(j["now_conflicting"][0]["task"], "b", "{j}");
    assert_eq!(
        j["now_conflicting"][0]["paths"],
        serde_json::json!(["src/api/b.rs"])
    );
    assert_eq!(
        j["now_conflicting"].as_array().unwrap().len(),
        1,
        "c merges cleanly"
    );
    let text = repo.task_root(&["merge", "c", "--no-checks"]).ok();
    assert!(
        text.stderr.contains("task 'b' now conflicts with main"),
        "{}",
        text.stderr
    );
}

#[test]
fn start_warns_about_live_tasks_whose_contracts_overlap() {
    let repo = repo();
    repo.start("api", &["--allow", "src/api/**"]);
    repo.start("docs", &["--allow", "docs/**"]);
    let r = repo
        .task_root(&["start", "new", "--allow", "src/**", "--json"])
        .ok();
    let j = r.json();
    let names: Vec<&str> = j["overlaps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["task"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["api"], "{j}");
    let r = repo
        .task_root(&["start", "new2", "--allow", "src/api/x.rs"])
        .ok();
    // One line names every overlapping task; `overlaps` has the details.
    let warning: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.contains("change the same paths"))
        .collect();
    assert_eq!(
        warning,
        ["warning: 2 tasks may change the same paths: 'api', 'new'; details: git task overlaps"],
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("'docs'"), "{}", r.stderr);
}

#[test]
fn list_shows_collisions_and_follows_ref_changes() {
    let repo = repo();
    let a = repo.start("a", &[]);
    let b = repo.start("b", &[]);
    repo.start("c", &[]);
    edit(&repo, &a, "README", "A");
    edit(&repo, &b, "README", "B");
    let collisions = |repo: &TestRepo| -> Vec<(String, Value)> {
        let j = repo.task_root(&["list", "--json"]).ok().json();
        j["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["id"].as_str().unwrap().to_owned(),
                    t["collisions"].clone(),
                )
            })
            .collect()
    };
    let one = serde_json::json!({"with_base": 0, "with_tasks": 1});
    let none = serde_json::json!({"with_base": 0, "with_tasks": 0});
    assert_eq!(
        collisions(&repo),
        [
            ("a".into(), one.clone()),
            ("b".into(), one.clone()),
            ("c".into(), none.clone())
        ]
    );
    let text = repo.task_root(&["list"]).ok();
    assert!(text.stdout.contains("COLLIDES"), "{}", text.stdout);
    assert!(text.stdout.contains("1 task"), "{}", text.stdout);
    // Again from the cache: the same answer.
    assert_eq!(collisions(&repo)[0].1, one);
    // b takes a's side: the cached pair is stale (b's tip moved) and the answer follows.
    let theirs = repo.read(&a, "README");
    repo.write(&b, "README", &theirs);
    commit_all(&repo, &b, "agree with a");
    assert_eq!(collisions(&repo)[0].1, none);
    // The base moves under a: a now conflicts with it.
    edit(&repo, repo.root(), "README", "MAIN");
    let now = collisions(&repo);
    assert_eq!(now[0].1["with_base"], 1, "{now:?}");
}

#[test]
fn overlaps_refuses_unknown_and_finished_tasks() {
    let repo = repo();
    repo.start("a", &[]);
    repo.start("b", &[]);
    repo.task_root(&["overlaps", "nosuch"]).code(2);
    repo.task_root(&["overlaps", "-bad-"]).code(2);
    repo.task_root(&["merge", "b", "--no-checks"]).ok();
    repo.task_root(&["overlaps", "b"]).code(2);
    let j = repo.task_root(&["overlaps", "--json"]).ok().json();
    assert_eq!(j["tasks"].as_array().unwrap().len(), 1);
}
