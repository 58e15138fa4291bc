//! More ways an agent inside its task worktree tries to get past the contract (SPEC §5, §7,
//! §11), each refused by the mechanism rather than by the case: after every refusal the
//! target is unchanged and `git fsck` is clean.

use super::support::{commit_all, rev};
use crate::common::TestRepo;

#[track_caller]
fn assert_refused(repo: &TestRepo, json: &serde_json::Value, before: &str, file: &str) {
    assert_eq!(json["kind"], "contract_violation", "{json}");
    let files: Vec<&str> = json["violations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v["file"].as_str())
        .collect();
    assert!(files.contains(&file), "{file} not blamed: {json}");
    assert_eq!(rev(repo, "main"), before, "the target must not move");
    repo.fsck();
}

/// `core.ignoreCase` is configuration the agent can change (`git config`, shared by every
/// worktree): turning it off must not let a case variant of a forbidden path through (on the
/// case-insensitive file system that set it, `SRC/Store/mod.rs` *is* `src/store/mod.rs`), and
/// turning it on must not let a case variant of an allowed path through (on a case-sensitive
/// one, `SRC/LIB.RS` is another file, outside what the task may change).
#[test]
fn flipping_core_ignorecase_widens_nothing() {
    // A repository made on a case-insensitive file system: git set core.ignoreCase there.
    let repo = TestRepo::new();
    repo.git(repo.root(), &["config", "core.ignoreCase", "true"]);
    let before = rev(&repo, "main");
    let wt = repo.start("t1", &["--forbid", "src/store/**"]);
    repo.git(&wt, &["config", "core.ignoreCase", "false"]);
    repo.write(&wt, "SRC/Store/mod.rs", "// stolen\n");
    commit_all(&repo, &wt, "case variant of a forbidden path");
    let json = repo.task_root(&["merge", "t1", "--json"]).code(1).json();
    assert_refused(&repo, &json, &before, "SRC/Store/mod.rs");

    // A case-sensitive one: the agent turns core.ignoreCase on.
    let repo = TestRepo::new();
    let before = rev(&repo, "main");
    let wt = repo.start("t2", &["--allow", "src/lib.rs"]);
    repo.write(&wt, "SRC/LIB.RS", "// elsewhere\n");
    commit_all(&repo, &wt, "case variant of an allowed path");
    repo.git(&wt, &["config", "core.ignoreCase", "true"]);
    let json = repo.task_root(&["merge", "t2", "--json"]).code(1).json();
    assert_refused(&repo, &json, &before, "SRC/LIB.RS");
}
