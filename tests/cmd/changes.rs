//! `git task changes`: the files panel with checkpoint attribution.

use crate::common::TestRepo;

fn row<'a>(json: &'a serde_json::Value, path: &str) -> &'a serde_json::Value {
    json["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == path)
        .unwrap_or_else(|| panic!("no {path} in {json}"))
}

/// Each file gets its status and the checkpoint that last touched it; later work has `null`.
#[test]
fn changes_attribute_files_to_checkpoints() {
    let repo = TestRepo::new();
    let wt = repo.start("ch", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1 }\n");
    repo.write(&wt, "docs/a.md", "a\n");
    std::fs::remove_file(wt.join("README.md")).unwrap();
    repo.task(&wt, &["checkpoint"]).ok();
    repo.git(&wt, &["mv", "src/store/mod.rs", "src/store/moved.rs"]);
    repo.write(&wt, "docs/a.md", "a\nb\n");
    repo.task(&wt, &["checkpoint"]).ok();
    repo.write(&wt, "later.txt", "not in a checkpoint\n");

    let run = repo.task(&wt, &["changes", "--json"]).ok();
    let json = run.json();
    assert_eq!(json["kind"], "changes");
    assert_eq!(json["task"], "ch");
    assert_eq!(json["files"].as_array().unwrap().len(), 5, "{json}");
    let lib = row(&json, "src/lib.rs");
    assert_eq!(
        (lib["status"].as_str(), lib["checkpoint"].as_u64()),
        (Some("modified"), Some(1))
    );
    let doc = row(&json, "docs/a.md");
    assert_eq!(
        (doc["status"].as_str(), doc["checkpoint"].as_u64()),
        (Some("created"), Some(2))
    );
    let readme = row(&json, "README.md");
    assert_eq!(
        (readme["status"].as_str(), readme["checkpoint"].as_u64()),
        (Some("deleted"), Some(1))
    );
    let moved = row(&json, "src/store/moved.rs");
    assert_eq!(moved["status"], "renamed");
    assert_eq!(moved["old_path"], "src/store/mod.rs");
    assert_eq!(moved["checkpoint"], 2);
    let later = row(&json, "later.txt");
    assert_eq!(later["status"], "created");
    assert!(later["checkpoint"].is_null());
    assert!(later["old_path"].is_null());
    // The contract file is never part of the work.
    assert!(json["files"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f["path"] != ".task-contract.toml"));

    let human = repo.task(&wt, &["changes"]).ok();
    assert!(
        human.stdout.contains("renamed")
            && human
                .stdout
                .contains("src/store/mod.rs -> src/store/moved.rs"),
        "{human}"
    );
}

/// In patch mode changes count from the snapshot (SPEC §9), untracked files included: the user's
/// own edit made before the start, left as it was, is not the task's.
#[test]
fn patch_changes_count_from_the_snapshot() {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    repo.write(&root, "README.md", "dirty before the task\n");
    repo.task_root(&["start", "--mode", "patch", "pch"]).ok();
    repo.write(&root, "new.txt", "x\n");
    let json = repo.task_root(&["changes", "--json"]).ok().json();
    let paths: Vec<&str> = json["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["new.txt"]);
}

/// `changes --stat` adds each file's lines added and removed and git's summary line; `-M=N` sets
/// the similarity a rename needs, as `git diff -M<N>`.
#[test]
fn changes_count_lines_and_take_a_rename_threshold() {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    let body: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    repo.write(&root, "src/big.rs", &body);
    repo.git(&root, &["add", "-A"]);
    repo.git(&root, &["commit", "-q", "-m", "big"]);
    let wt = repo.start("st", &[]);
    repo.git(&wt, &["mv", "src/big.rs", "src/large.rs"]);
    repo.write(
        &wt,
        "src/large.rs",
        &body.replace("line 3\n", "LINE 3\nextra\n"),
    );
    repo.write(&wt, "README.md", "# demo\nmore\n");

    let json = repo.task(&wt, &["changes", "--stat", "--json"]).ok().json();
    let large = row(&json, "src/large.rs");
    assert_eq!(large["status"], "renamed");
    assert_eq!(large["stat"]["insertions"], 2);
    assert_eq!(large["stat"]["deletions"], 1);
    let human = repo.task(&wt, &["changes", "--stat"]).ok().stdout;
    assert!(
        human.contains("src/big.rs -> src/large.rs  +2 -1"),
        "{human}"
    );
    repo.git(&wt, &["add", "-A"]);
    let summary = repo.git(
        &wt,
        &[
            "diff",
            "--cached",
            "-M",
            "--shortstat",
            "HEAD~1",
            "--",
            ".",
            ":!.task-contract.toml",
        ],
    );
    assert!(
        human.ends_with(&format!("{summary}\n")),
        "{human}\nwant {summary}"
    );
    // Without --stat there is no stat.
    let json = repo.task(&wt, &["changes", "--json"]).ok().json();
    assert!(row(&json, "src/large.rs").get("stat").is_none(), "{json}");
    // A stricter threshold than this pair's similarity: a deletion and a creation, as git.
    let strict = repo.task(&wt, &["changes", "-M=99%", "--json"]).ok().json();
    assert_eq!(row(&strict, "src/big.rs")["status"], "deleted");
    assert_eq!(row(&strict, "src/large.rs")["status"], "created");
}
