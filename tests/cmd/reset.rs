//! `git task reset`: the task starts over from its base (or the snapshot in patch mode), its work saved first.

use crate::common::patch::picture;
use crate::common::TestRepo;

/// `reset` starts the task over from its base; `--onto` moves the base.
#[test]
fn reset_starts_over_saving_work() {
    let repo = TestRepo::new();
    let wt = repo.start("rs", &[]);
    repo.write(&wt, "work.txt", "w\n");
    repo.task(&wt, &["checkpoint"]).ok();
    repo.write(&wt, "more.txt", "m\n");
    let run = repo.task(&wt, &["reset", "--json"]).ok();
    let json = run.json();
    assert_eq!(json["kind"], "reset");
    let attempt = json["attempt"]["ref"].as_str().unwrap().to_owned();
    assert_eq!(
        repo.git(&wt, &["show", &format!("{attempt}:more.txt")]),
        "m"
    );
    assert_eq!(
        repo.git(&wt, &["show", &format!("{attempt}:work.txt")]),
        "w"
    );
    assert_eq!(repo.porcelain(&wt), "");
    assert!(!wt.join("work.txt").exists());
    assert_eq!(
        repo.git(&wt, &["rev-parse", "HEAD^"]),
        repo.git(repo.root(), &["rev-parse", "main"])
    );
    assert!(wt.join(".task-contract.toml").exists());

    // The base moves on; reset --onto takes the task there.
    repo.write(repo.root(), "upstream.txt", "u\n");
    repo.git(repo.root(), &["add", "-A"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "upstream"]);
    let main = repo.git(repo.root(), &["rev-parse", "main"]);
    repo.task(&wt, &["reset", "--onto", "main"]).ok();
    assert_eq!(repo.git(&wt, &["rev-parse", "refs/tasks/rs/base"]), main);
    assert_eq!(repo.git(&wt, &["rev-parse", "HEAD^"]), main);
    assert_eq!(repo.read(&wt, "upstream.txt"), "u\n");
    assert_eq!(repo.porcelain(&wt), "");
    let log = repo.task_root(&["log", "rs", "--json"]).ok().stdout;
    assert!(log.contains("\"reset\""), "{log}");
    repo.fsck();
}

/// In patch mode `reset` restores the snapshot, HEAD included.
#[test]
fn patch_reset_moves_head_back() {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    let before = picture(&repo, &root);
    repo.task_root(&["start", "--mode", "patch", "pr"]).ok();
    repo.write(&root, "x.txt", "x\n");
    repo.git(&root, &["add", "x.txt"]);
    repo.git(&root, &["commit", "-q", "-m", "task commit"]);
    repo.task_root(&["reset"]).ok();
    assert_eq!(picture(&repo, &root), before);
    repo.fsck();
}
