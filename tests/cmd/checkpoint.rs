//! `git task checkpoint`: commits on the task branch (worktree mode), a ref chain (patch mode), notes, judging.

use crate::common::patch::picture;
use crate::common::TestRepo;

/// In worktree mode a checkpoint is a commit on the task branch with everything (untracked too), and a note.
#[test]
fn checkpoint_commits_on_the_task_branch_with_a_note() {
    let repo = TestRepo::new();
    let wt = repo.start("cp", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { /* edited */ }\n");
    repo.write(&wt, "notes/new.txt", "untracked\n");
    repo.write(&wt, ".gitignore", "*.log\n");
    repo.write(&wt, "debug.log", "ignored\n");
    let run = repo
        .task(&wt, &["checkpoint", "-m", "first step", "--json"])
        .ok();
    let json = run.json();
    assert_eq!(json["kind"], "checkpoint");
    assert_eq!(json["number"], 1);
    assert_eq!(json["ref"], "refs/tasks/cp/checkpoints/1");
    let tip = repo.git(&wt, &["rev-parse", "HEAD"]);
    assert_eq!(json["commit"], tip);
    assert_eq!(
        repo.git(&wt, &["rev-parse", "refs/tasks/cp/checkpoints/1"]),
        tip
    );
    assert_eq!(repo.git(&wt, &["log", "-1", "--format=%s"]), "first step");
    assert_eq!(repo.git(&wt, &["show", "HEAD:notes/new.txt"]), "untracked");
    assert!(
        repo.git_run(&wt, &["show", "HEAD:debug.log"]).code != 0,
        "ignored files are not saved"
    );
    // Everything is committed: only the ignored file is left, and git agrees the index is clean.
    assert_eq!(repo.porcelain(&wt), "");
    let note = repo.git(&wt, &["log", "-1", "--notes=tasks", "--format=%N"]);
    assert!(
        note.contains("checkpoint: 1") && note.contains("src/lib.rs") && note.contains("task: cp"),
        "{note}"
    );

    repo.write(&wt, "src/lib.rs", "pub fn lib() { /* again */ }\n");
    let second = repo.task(&wt, &["checkpoint", "--json"]).ok().json();
    assert_eq!(second["number"], 2);
    assert_eq!(second["files"], serde_json::json!(["src/lib.rs"]));
    assert_eq!(repo.git(&wt, &["rev-parse", "HEAD^"]), tip);
    let log = repo.task_root(&["log", "cp", "--json"]).ok().stdout;
    assert!(log.contains("checkpoint"), "{log}");
    repo.fsck();
}

/// In patch mode checkpoints chain from the snapshot and leave HEAD, index and files alone.
#[test]
fn patch_checkpoints_chain_from_the_snapshot() {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    repo.task_root(&["start", "--mode", "patch", "pc"]).ok();
    repo.write(&root, "README.md", "staged\n");
    repo.git(&root, &["add", "README.md"]);
    repo.write(&root, "new.txt", "one\n");
    let before = picture(&repo, &root);
    repo.task_root(&["checkpoint"]).ok();
    assert_eq!(picture(&repo, &root), before);
    repo.write(&root, "new.txt", "two\n");
    let run = repo.task_root(&["checkpoint"]).ok();
    assert_eq!(run.out(), "refs/tasks/pc/checkpoints/2");
    let snap = repo.git(&root, &["rev-parse", "refs/tasks/pc/snapshot"]);
    assert_eq!(
        repo.git(&root, &["rev-parse", "refs/tasks/pc/checkpoints/1^1"]),
        snap
    );
    assert_eq!(
        repo.git(&root, &["rev-parse", "refs/tasks/pc/checkpoints/2^1"]),
        repo.git(&root, &["rev-parse", "refs/tasks/pc/checkpoints/1"])
    );
    assert_eq!(
        repo.git(&root, &["show", "refs/tasks/pc/checkpoints/1^2:README.md"]),
        "staged"
    );
    assert_eq!(
        repo.git(&root, &["show", "refs/tasks/pc/checkpoints/2:new.txt"]),
        "two"
    );
    assert_eq!(
        repo.git(&root, &["log", "-1", "--format=%s", "main"]),
        "initial"
    );
    repo.fsck();
}

/// A state that breaks the contract is refused with the report (exit 1), and nothing is saved.
#[test]
fn checkpoint_refuses_a_violation() {
    let repo = TestRepo::new();
    let wt = repo.start("vi", &["--forbid", "src/store/**"]);
    repo.write(&wt, "src/store/mod.rs", "// forbidden edit\n");
    let run = repo.task(&wt, &["checkpoint", "--json"]).code(1);
    let json = run.json();
    assert_eq!(json["kind"], "contract_violation");
    assert_eq!(json["violations"][0]["file"], "src/store/mod.rs");
    assert_eq!(json["violations"][0]["reason"], "forbidden");
    let human = repo.task(&wt, &["checkpoint"]).code(1);
    assert!(
        human.stderr.contains("src/store/mod.rs") && human.stderr.contains("forbidden"),
        "{human}"
    );
    assert!(repo.refs("refs/tasks/vi/checkpoints/").is_empty());
    assert_eq!(
        repo.git(&wt, &["status", "--porcelain"]),
        " M src/store/mod.rs"
    );
}

/// A file bigger than what is hashed in memory (8 MiB) streams into the object store: the
/// checkpoint holds it byte for byte, in worktree and in patch mode, and `git fsck` is clean.
#[test]
fn a_big_file_is_checkpointed_byte_for_byte() {
    let repo = TestRepo::new();
    let wt = repo.start("big", &[]);
    let big: String = (0..900_000).map(|i| format!("{i:09}\n")).collect();
    assert!(big.len() > 8 << 20);
    repo.write(&wt, "data/big.txt", &big);
    let want = repo.git(&wt, &["hash-object", "data/big.txt"]);
    repo.task(&wt, &["checkpoint", "-m", "big"]).ok();
    assert_eq!(
        repo.git(
            &wt,
            &["rev-parse", "refs/tasks/big/checkpoints/1:data/big.txt"]
        ),
        want
    );
    repo.task_root(&["start", "--mode", "patch", "pbig"]).ok();
    repo.write(repo.root(), "data/big.txt", &big);
    repo.task_root(&["checkpoint", "pbig", "-m", "big"]).ok();
    assert_eq!(
        repo.git(
            repo.root(),
            &["rev-parse", "refs/tasks/pbig/checkpoints/1:data/big.txt"]
        ),
        want
    );
    repo.fsck();
}
