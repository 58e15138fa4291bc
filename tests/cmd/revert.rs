//! `git task revert`: every form, always saving an attempt first.

use crate::common::patch::picture;
use crate::common::TestRepo;

/// Reverting everything puts the worktree back at the base and the attempt holds the work.
#[test]
fn revert_everything_saves_an_attempt() {
    let repo = TestRepo::new();
    let wt = repo.start("ra", &[]);
    repo.write(&wt, "src/lib.rs", "edited\n");
    repo.write(&wt, "new/file.txt", "new\n");
    std::fs::remove_file(wt.join("README.md")).unwrap();
    let run = repo.task(&wt, &["revert"]).ok();
    assert_eq!(run.out(), "refs/tasks/ra/attempts/1");
    assert!(run.stderr.contains("refs/tasks/ra/attempts/1"), "{run}");
    assert_eq!(repo.read(&wt, "src/lib.rs"), "pub fn lib() {}\n");
    assert_eq!(repo.read(&wt, "README.md"), "# demo\n");
    assert!(
        !wt.join("new").exists(),
        "created files and their directories are removed"
    );
    assert_eq!(repo.git(&wt, &["diff"]), "", "index and files agree");
    assert_eq!(
        repo.git(&wt, &["show", "refs/tasks/ra/attempts/1:new/file.txt"]),
        "new"
    );
    assert_eq!(
        repo.git(&wt, &["show", "refs/tasks/ra/attempts/1:src/lib.rs"]),
        "edited"
    );
    assert_eq!(
        repo.task(&wt, &["changes", "--json"]).ok().json()["files"],
        serde_json::json!([])
    );
    // A second revert has nothing to discard: no new attempt.
    let again = repo.task(&wt, &["revert", "--json"]).ok().json();
    assert!(again["attempt"].is_null());
    assert_eq!(repo.refs("refs/tasks/ra/attempts/").len(), 1);
    let log = repo.task_root(&["log", "ra", "--json"]).ok().stdout;
    assert!(log.contains("reverted"), "{log}");
    repo.fsck();
}

/// `--path` puts single files back (deleting new ones) and leaves the rest.
#[test]
fn revert_path_restores_single_files() {
    let repo = TestRepo::new();
    let wt = repo.start("rp", &[]);
    repo.write(&wt, "src/lib.rs", "edited\n");
    repo.write(&wt, "README.md", "keep this edit\n");
    repo.write(&wt, "brand/new.txt", "new\n");
    let run = repo
        .task(
            &wt,
            &[
                "revert",
                "--path",
                "src/lib.rs",
                "--path",
                "brand",
                "--json",
            ],
        )
        .ok();
    let json = run.json();
    assert_eq!(json["kind"], "revert");
    assert_eq!(
        json["files"],
        serde_json::json!(["brand/new.txt", "src/lib.rs"])
    );
    assert_eq!(repo.read(&wt, "src/lib.rs"), "pub fn lib() {}\n");
    assert!(!wt.join("brand").exists());
    assert_eq!(repo.read(&wt, "README.md"), "keep this edit\n");
    let attempt = json["attempt"]["ref"].as_str().unwrap();
    assert_eq!(
        repo.git(&wt, &["show", &format!("{attempt}:brand/new.txt")]),
        "new"
    );
    let unknown = repo
        .task(&wt, &["revert", "--path", "no/such/file"])
        .code(2);
    assert!(unknown.stderr.contains("no/such/file"), "{unknown}");
}

/// `--checkpoint N` undoes only that checkpoint, keeping later, non-overlapping work.
#[test]
fn revert_checkpoint_keeps_later_work() {
    let repo = TestRepo::new();
    let wt = repo.start("rc", &[]);
    repo.write(&wt, "one.txt", "from checkpoint 1\n");
    repo.task(&wt, &["checkpoint"]).ok();
    repo.write(&wt, "two.txt", "from checkpoint 2\n");
    repo.write(&wt, "src/lib.rs", "pub fn lib() {}\n// cp2\n");
    repo.task(&wt, &["checkpoint"]).ok();
    repo.write(&wt, "three.txt", "after\n");
    repo.task(&wt, &["revert", "--checkpoint", "2"]).ok();
    assert!(wt.join("one.txt").exists());
    assert!(!wt.join("two.txt").exists());
    assert_eq!(repo.read(&wt, "src/lib.rs"), "pub fn lib() {}\n");
    assert_eq!(repo.read(&wt, "three.txt"), "after\n");
    // Undoing the first checkpoint keeps the contract file.
    repo.task(&wt, &["revert", "--checkpoint", "1"]).ok();
    assert!(!wt.join("one.txt").exists());
    assert!(wt.join(".task-contract.toml").exists());
    assert_eq!(repo.read(&wt, "three.txt"), "after\n");
    repo.fsck();
}

/// A checkpoint whose lines later work changed again cannot be undone alone: exit 1, nothing changed.
#[test]
fn revert_checkpoint_conflict_changes_nothing() {
    let repo = TestRepo::new();
    let wt = repo.start("rx", &[]);
    repo.write(&wt, "src/lib.rs", "cp1\n");
    repo.task(&wt, &["checkpoint"]).ok();
    repo.write(&wt, "src/lib.rs", "later\n");
    let before = picture(&repo, &wt);
    let run = repo
        .task(&wt, &["revert", "--checkpoint", "1", "--json"])
        .code(1);
    let json = run.json();
    assert_eq!(json["kind"], "revert_conflict");
    assert_eq!(json["conflicts"], serde_json::json!(["src/lib.rs"]));
    assert_eq!(picture(&repo, &wt), before);
    assert!(repo.refs("refs/tasks/rx/attempts/").is_empty());
    let missing = repo.task(&wt, &["revert", "--checkpoint", "9"]).code(2);
    assert!(missing.stderr.contains("checkpoint 9"), "{missing}");
}

/// `--to N` returns to checkpoint N's state; `--patch-file` writes what was discarded.
#[test]
fn revert_to_checkpoint_with_patch_file() {
    let repo = TestRepo::new();
    let wt = repo.start("rt", &[]);
    repo.write(&wt, "a.txt", "1\n");
    repo.task(&wt, &["checkpoint"]).ok();
    repo.write(&wt, "a.txt", "2\n");
    repo.write(&wt, "b.txt", "b\n");
    let patch = repo.base().join("discarded.patch");
    let run = repo
        .task(
            &wt,
            &[
                "revert",
                "--to",
                "1",
                "--patch-file",
                patch.to_str().unwrap(),
                "--json",
            ],
        )
        .ok();
    assert_eq!(run.json()["patch_file"], patch.display().to_string());
    assert_eq!(repo.read(&wt, "a.txt"), "1\n");
    assert!(!wt.join("b.txt").exists());
    // The patch re-does the discarded work.
    repo.git(&wt, &["apply", patch.to_str().unwrap()]);
    assert_eq!(repo.read(&wt, "a.txt"), "2\n");
    assert_eq!(repo.read(&wt, "b.txt"), "b\n");
}

/// In patch mode, reverting one path restores its staged and unstaged state from the snapshot.
#[test]
fn patch_revert_path_restores_index_entry() {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    repo.write(&root, "README.md", "staged\n");
    repo.git(&root, &["add", "README.md"]);
    repo.write(&root, "README.md", "unstaged\n");
    let before = picture(&repo, &root);
    repo.task_root(&["start", "--mode", "patch", "pp"]).ok();
    repo.write(&root, "README.md", "task edit\n");
    repo.git(&root, &["add", "README.md"]);
    repo.write(&root, "src/lib.rs", "task keeps this\n");
    repo.task_root(&["revert", "--path", "README.md"]).ok();
    assert_eq!(repo.git(&root, &["diff", "--cached"]), before.diff_cached);
    assert_eq!(repo.read(&root, "README.md"), "unstaged\n");
    assert_eq!(repo.read(&root, "src/lib.rs"), "task keeps this\n");
}

/// A file the task replaced by a directory (and the reverse) comes back; ignored files stay.
#[test]
fn patch_revert_handles_file_and_directory_swaps() {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    repo.write(&root, ".gitignore", "*.log\n");
    repo.git(&root, &["add", "-A"]);
    repo.git(&root, &["commit", "-q", "-m", "ignore logs"]);
    let before = picture(&repo, &root);
    repo.task_root(&["start", "--mode", "patch", "sw"]).ok();
    std::fs::remove_file(root.join("README.md")).unwrap();
    repo.write(&root, "README.md/inside.txt", "now a directory\n");
    std::fs::remove_dir_all(root.join("src/store")).unwrap();
    repo.write(&root, "src/store", "now a file\n");
    repo.write(&root, "logs/run.log", "ignored\n");
    repo.task_root(&["revert"]).ok();
    let mut after = picture(&repo, &root);
    assert_eq!(
        after.files.remove("logs/run.log"),
        Some(crate::common::patch::Entry::File(
            b"ignored\n".to_vec(),
            0o644
        ))
    );
    assert_eq!(after, before);
}

/// Something ignored in the way of a file to restore: refused before anything is saved or changed.
#[test]
fn revert_refuses_when_an_ignored_path_is_in_the_way() {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    repo.write(&root, ".gitignore", "*.log\n");
    repo.write(&root, "logs", "a tracked file\n");
    repo.git(&root, &["add", "-A"]);
    repo.git(&root, &["commit", "-q", "-m", "logs file"]);
    repo.task_root(&["start", "--mode", "patch", "iw"]).ok();
    std::fs::remove_file(root.join("logs")).unwrap();
    repo.write(&root, "logs/today.log", "ignored\n");
    let before = picture(&repo, &root);
    let run = repo.task_root(&["revert"]).code(2);
    assert!(
        run.stderr.contains("'logs'") && run.stderr.contains("hint:"),
        "{run}"
    );
    assert_eq!(picture(&repo, &root), before);
    assert!(repo.refs("refs/tasks/iw/attempts/").is_empty());
}

/// After a rename (`git mv`, staged or not, edited or not), `revert --path <new name>` puts the
/// file back under its old name too, index and files, as git shows them; in patch mode as well.
#[test]
fn revert_path_of_a_renamed_file_restores_the_old_name() {
    let repo = TestRepo::new();
    let wt = repo.start("rn", &[]);
    repo.git(&wt, &["mv", "src/store/mod.rs", "src/store/moved.rs"]);
    repo.write(&wt, "src/store/moved.rs", "pub fn store() {}\n// more\n");
    repo.write(&wt, "README.md", "# kept\n");
    repo.task(&wt, &["revert", "--path", "src/store/moved.rs"])
        .ok();
    assert_eq!(repo.read(&wt, "src/store/mod.rs"), "pub fn store() {}\n");
    assert!(!wt.join("src/store/moved.rs").exists());
    // git sees the old file back, untouched, and the other work kept.
    assert_eq!(repo.git(&wt, &["status", "--porcelain"]), " M README.md");

    // Patch mode: the same, from the snapshot.
    let root = repo.root().to_path_buf();
    repo.task_root(&["start", "--mode", "patch", "pn"]).ok();
    repo.git(&root, &["mv", "src/lib.rs", "src/renamed.rs"]);
    repo.task_root(&["revert", "pn", "--path", "src/renamed.rs"])
        .ok();
    assert_eq!(repo.read(&root, "src/lib.rs"), "pub fn lib() {}\n");
    assert!(!root.join("src/renamed.rs").exists());
    assert_eq!(repo.git(&root, &["status", "--porcelain"]), "");
}
