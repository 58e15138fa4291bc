//! `git task remove`: deletes worktree and branch, refuses dirty work unless --force, then saves it first.

use crate::common::TestRepo;
use crate::common::*;

#[test]
fn remove_deletes_worktree_and_branch_and_keeps_the_record() {
    let repo = TestRepo::new();
    let wt = repo.start("rm", &[]);
    repo.write(repo.root(), "mine.txt", "user work\n");
    let main_before = repo.porcelain(repo.root());

    let j = repo.task_root(&["remove", "rm", "--json"]).ok().json();
    assert_eq!(
        j,
        serde_json::json!({"schema_version": 1, "kind": "remove", "task": "rm", "removed": true, "existed": true, "attempts": []})
    );
    assert!(!wt.exists());
    assert_eq!(repo.worktrees(), vec![repo.root().to_path_buf()]);
    assert!(repo.refs("refs/heads/task").is_empty());
    assert_eq!(record_status(&repo, "rm"), "removed");
    assert_eq!(events(&repo, "rm"), ["started", "provisioned", "removed"]);
    assert!(
        repo.refs("refs/tasks/rm/attempts").is_empty(),
        "nothing to save"
    );
    assert_eq!(repo.porcelain(repo.root()), main_before);
    assert_eq!(
        repo.git(repo.root(), &["worktree", "prune", "--dry-run", "-v"]),
        "",
        "no stale worktree entry"
    );
    repo.fsck();
}

#[test]
fn remove_refuses_a_dirty_worktree_without_force() {
    let repo = TestRepo::new();
    let wt = repo.start("dirty", &[]);
    repo.write(&wt, "README.md", "# edited\n");
    let before = all_refs(&repo);
    let run = repo.task_root(&["remove", "dirty"]);
    assert_ne!(run.code, 0, "{run}");
    assert!(
        run.stderr.starts_with("error: ") && run.stderr.contains("README.md"),
        "{run}"
    );
    assert!(
        run.stderr.contains("hint: ") && run.stderr.contains("--force"),
        "{run}"
    );
    assert_eq!(
        repo.read(&wt, "README.md"),
        "# edited\n",
        "the worktree is intact"
    );
    assert!(repo.worktrees().contains(&wt));
    assert_eq!(all_refs(&repo), before, "nothing changed");
    assert_eq!(record_status(&repo, "dirty"), "active");
}

/// SPEC §2.2: `--force` saves modified, staged and untracked files as an attempt before deleting.
#[test]
fn remove_force_saves_untracked_and_modified_files_as_an_attempt() {
    let repo = TestRepo::new();
    let wt = repo.start("forced", &[]);
    let tip = rev(&repo, "task/forced");
    repo.write(&wt, "README.md", "# modified\n");
    repo.write(&wt, "staged.txt", "staged\n");
    repo.git(&wt, &["add", "staged.txt"]);
    repo.write(&wt, "deep/untracked.txt", "untracked\n");
    std::fs::remove_file(wt.join("src/lib.rs")).unwrap();

    let run = repo
        .task_root(&["remove", "forced", "--force", "--json"])
        .ok();
    let j = run.json();
    assert_eq!(j["removed"], true);
    let attempt = j["attempts"][0]["ref"].as_str().unwrap().to_owned();
    assert_eq!(attempt, "refs/tasks/forced/attempts/1");
    assert_eq!(
        repo.refs("refs/tasks/forced/attempts"),
        vec![attempt.clone()]
    );
    assert_eq!(show(&repo, &attempt, "README.md"), "# modified");
    assert_eq!(show(&repo, &attempt, "staged.txt"), "staged");
    assert_eq!(show(&repo, &attempt, "deep/untracked.txt"), "untracked");
    assert_eq!(
        show(&repo, &attempt, "src/store/mod.rs"),
        "pub fn store() {}"
    );
    assert!(
        repo.git_run(
            repo.root(),
            &["cat-file", "-e", &format!("{attempt}:src/lib.rs")]
        )
        .code
            != 0,
        "the deletion is saved too"
    );
    assert_eq!(
        rev(&repo, &format!("{attempt}^")),
        tip,
        "the attempt's parent is the task's HEAD"
    );
    assert!(!wt.exists());
    assert!(repo.refs("refs/heads/task").is_empty());
    repo.fsck();

    let human = {
        let wt = repo.start("forced2", &[]);
        repo.write(&wt, "x.txt", "x\n");
        repo.task_root(&["remove", "--force", "forced2"]).ok()
    };
    assert!(
        human.stderr.contains("refs/tasks/forced2/attempts/1"),
        "the attempt ref is printed: {human}"
    );
}

#[test]
fn remove_saves_committed_work_of_the_branch() {
    let repo = TestRepo::new();
    let wt = repo.start("commits", &[]);
    repo.write(&wt, "done.txt", "done\n");
    repo.git(&wt, &["add", "done.txt"]);
    repo.git(&wt, &["commit", "-q", "-m", "done"]);
    let tip = rev(&repo, "task/commits");
    let j = repo.task_root(&["remove", "commits", "--json"]).ok().json();
    let attempt = j["attempts"][0]["ref"].as_str().unwrap().to_owned();
    assert_eq!(show(&repo, &attempt, "done.txt"), "done");
    assert_eq!(rev(&repo, &format!("{attempt}^")), tip);
    repo.git(
        repo.root(),
        &["merge-base", "--is-ancestor", &tip, &attempt],
    );
}

#[test]
fn removing_a_removed_or_unknown_task_is_a_no_op() {
    let repo = TestRepo::new();
    repo.start("twice", &[]);
    repo.task_root(&["remove", "twice"]).ok();
    let before = all_refs(&repo);
    let j = repo.task_root(&["remove", "twice", "--json"]).ok().json();
    assert_eq!(j["removed"], false);
    assert_eq!(j["existed"], true);
    assert_eq!(all_refs(&repo), before);
    let run = repo.task_root(&["remove", "never-was"]).ok();
    assert!(run.stderr.contains("never-was"), "{run}");
    let j = repo
        .task_root(&["remove", "never-was", "--json"])
        .ok()
        .json();
    assert_eq!(j["existed"], false);
    assert_eq!(
        all_refs(&repo),
        before,
        "nothing written for an unknown task"
    );
}

#[test]
fn remove_when_the_worktree_directory_is_already_gone() {
    let repo = TestRepo::new();
    let wt = repo.start("vanished", &[]);
    std::fs::remove_dir_all(&wt).unwrap();
    repo.task_root(&["remove", "vanished"]).ok();
    assert_eq!(repo.worktrees(), vec![repo.root().to_path_buf()]);
    assert!(repo.refs("refs/heads/task").is_empty());
    assert_eq!(record_status(&repo, "vanished"), "removed");
    repo.fsck();
}

/// A removed id can be started again: a new life on the same record, the old one kept as history.
#[test]
fn start_of_a_removed_task_starts_it_again() {
    let repo = TestRepo::new();
    let wt = repo.start("again", &[]);
    repo.write(&wt, "old.txt", "old life\n");
    repo.task_root(&["remove", "again", "--force"]).ok();
    repo.write(repo.root(), "later.txt", "later\n");
    repo.git(repo.root(), &["add", "later.txt"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "later"]);

    let j = repo
        .task_root(&["start", "again", "--json", "--forbid", "src/**"])
        .ok()
        .json();
    assert_eq!(j["created"], true);
    assert_eq!(j["status"], "active");
    assert!(
        wt.join("later.txt").exists(),
        "the new life starts from the base's current tip"
    );
    assert_eq!(repo.porcelain(&wt), "");
    assert_eq!(rev(&repo, "task/again^"), rev(&repo, "main"));
    assert_eq!(rev(&repo, "refs/tasks/again/base"), rev(&repo, "main"));
    assert!(
        show(&repo, "refs/tasks/again/record", "contract.toml").contains("src/**"),
        "the new contract is frozen"
    );
    assert_eq!(
        events(&repo, "again"),
        [
            "started",
            "provisioned",
            "removed",
            "started",
            "provisioned"
        ]
    );
    assert_eq!(
        show(&repo, "refs/tasks/again/attempts/1", "old.txt"),
        "old life",
        "the old life's attempt stays"
    );
    repo.fsck();
}

/// A failed start of a removed id puts the record back exactly as it was.
#[test]
fn failed_start_of_a_removed_task_restores_its_record() {
    let repo = TestRepo::new();
    repo.start("again", &[]);
    repo.task_root(&["remove", "again"]).ok();
    repo.write(repo.root(), "later.txt", "later\n");
    repo.git(repo.root(), &["add", "later.txt"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "later"]);
    let before = all_refs(&repo);
    repo.task_root(&["start", "again", "--setup", "exit 1"])
        .code(1);
    assert_eq!(
        all_refs(&repo),
        before,
        "record and base ref are back to the removed task's"
    );
    assert_eq!(record_status(&repo, "again"), "removed");
    assert!(!repo.task_dir("again").exists());
    assert!(repo.refs("refs/heads/task").is_empty());
    repo.fsck();
}

#[test]
fn remove_of_an_abandoned_start_rolls_it_back() {
    let repo = TestRepo::new();
    craft_abandoned_start(&repo, "ghost");
    let j = repo.task_root(&["remove", "ghost", "--json"]).ok().json();
    assert_eq!(j["removed"], true);
    assert!(repo.refs("refs/tasks").is_empty());
    assert!(repo.refs("refs/heads/task").is_empty());
    repo.fsck();
}

/// `remove` and `drop` of one task at the same time: both succeed and the task ends up removed, with nothing half-made.
#[test]
fn concurrent_remove_and_drop_end_consistent() {
    let repo = TestRepo::new();
    let ids = ["c1", "c2", "c3"];
    for id in ids {
        repo.start(id, &[]);
    }
    let mut children = Vec::new();
    for id in ids {
        for cmd in ["remove", "drop"] {
            children.push(
                task_command(&repo, repo.root(), &[cmd, id])
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap(),
            );
        }
    }
    for child in children {
        let run = collect(child);
        assert_eq!(run.code, 0, "{run}");
    }
    for id in ids {
        assert_eq!(record_status(&repo, id), "removed", "{id}");
        assert!(!repo.task_dir(id).exists());
    }
    assert!(repo.refs("refs/heads/task").is_empty());
    assert_eq!(repo.worktrees(), vec![repo.root().to_path_buf()]);
    let sweep = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(
        sweep["repairs"],
        serde_json::json!([]),
        "nothing left to repair"
    );
    repo.fsck();
}

/// A staged submodule (gitlink) in saved work stays a gitlink in the attempt, not a symlink.
#[test]
fn saved_work_keeps_a_staged_gitlink() {
    let repo = crate::common::TestRepo::new();
    let wt = repo.start("sub", &[]);
    let commit = repo.git(repo.root(), &["rev-parse", "HEAD"]);
    repo.git(
        &wt,
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("160000,{commit},vendor/lib"),
        ],
    );
    std::fs::create_dir_all(wt.join("vendor/lib")).unwrap();
    let run = repo
        .task_root(&["remove", "sub", "--force", "--json"])
        .ok()
        .json();
    let attempt = run["attempts"][0]["ref"].as_str().unwrap().to_owned();
    let entry = repo.git(repo.root(), &["ls-tree", &attempt, "vendor/lib"]);
    assert!(
        entry.starts_with(&format!("160000 commit {commit}")),
        "{entry}"
    );
    repo.fsck();
}

/// Starts task `t1` and leaves 20 new files in 20 directories uncommitted in its worktree:
/// enough new objects for a saved state to be written as one pack.
fn dirty_task(repo: &TestRepo) -> std::path::PathBuf {
    let wt = repo.start("t1", &[]);
    for i in 0..20 {
        repo.write(&wt, &format!("d{i}/x/f.txt"), &format!("work {i}\n"));
    }
    wt
}

/// `remove --force` of a task with much uncommitted work saves it as one pack and deletes the
/// worktree's admin directory (through which the task's repository sees the objects): the
/// pack's `.keep` is still released, and the saved work reads back.
#[test]
fn removing_a_dirty_task_leaves_no_pack_keep() {
    use crate::common::packs;
    let repo = TestRepo::new();
    dirty_task(&repo);
    repo.task_root(&["remove", "t1", "--force"]).ok();
    let (after, keep) = packs(repo.root());
    assert!(!keep, "a .keep is left in .git/objects/pack");
    assert!(!after.is_empty(), "the work was saved as a pack");
    let attempts = repo.refs("refs/tasks/t1/attempts/");
    assert_eq!(attempts.len(), 1, "{attempts:?}");
    assert_eq!(
        repo.git(
            repo.root(),
            &["show", &format!("{}:d7/x/f.txt", attempts[0])]
        ),
        "work 7"
    );
    repo.fsck();
}

/// Looking at a dirty task (`list`, `status`, `check`, `diff`) writes no pack, however often:
/// only a state that is kept (an attempt, a checkpoint, a snapshot) is written as one.
#[test]
fn looking_at_a_dirty_task_writes_no_pack() {
    use crate::common::packs;
    let repo = TestRepo::new();
    let wt = dirty_task(&repo);
    let (before, _) = packs(repo.root());
    for args in [
        &["list"][..],
        &["status", "t1"],
        &["check", "t1"],
        &["diff", "t1"],
        &["list", "--all"],
    ] {
        let run = repo.task_root(args);
        assert!(run.code == 0 || run.code == 1, "{args:?}: {run}");
        assert_eq!(packs(repo.root()).0, before, "after {args:?}");
    }
    for i in 0..20 {
        repo.write(&wt, &format!("d{i}/x/f.txt"), &format!("more work {i}\n"));
    }
    repo.task_root(&["checkpoint", "t1", "-m", "kept"]).ok();
    assert_eq!(
        packs(repo.root()).0.len(),
        before.len() + 1,
        "a checkpoint is kept as one pack"
    );
    repo.fsck();
}

/// After `revert`, the task is clean: `remove` without `--force` accepts it and saves nothing
/// a second time (the revert's attempt already holds the work).
#[test]
fn remove_after_revert_needs_no_force_and_saves_nothing_twice() {
    let repo = TestRepo::new();
    let wt = repo.start("rv", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 7 }\n");
    repo.write(&wt, "notes.txt", "untracked\n");
    repo.task(&wt, &["revert", "rv"]).ok();
    assert_eq!(repo.refs("refs/tasks/rv/attempts").len(), 1);
    let j = repo.task_root(&["remove", "rv", "--json"]).ok().json();
    assert_eq!(j["removed"], true);
    assert!(
        j.get("attempts")
            .is_none_or(|a| a.as_array().unwrap().is_empty()),
        "{j}"
    );
    assert_eq!(repo.refs("refs/tasks/rv/attempts").len(), 1, "saved once");
    assert!(!wt.exists());
    assert_eq!(record_status(&repo, "rv"), "removed");

    // The same with committed work: the revert saved the commits, and remove saves nothing new.
    let wt = repo.start("rc", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 8 }\n");
    repo.task(&wt, &["commit", "rc"]).ok();
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 9 }\n");
    repo.task(&wt, &["revert", "rc"]).ok();
    let saved = repo.refs("refs/tasks/rc/attempts");
    let j = repo.task_root(&["remove", "rc", "--json"]).ok().json();
    assert_eq!(j["removed"], true);
    assert_eq!(repo.refs("refs/tasks/rc/attempts"), saved, "{j}");
}

/// A patch-mode task can be removed: its work is saved as an attempt first (the files stay as
/// they are: the worktree is the user's), then its snapshot ref, its active mark and its scratch
/// directory go. One with no work saves nothing. An accepted one's scratch directory goes too.
#[test]
fn remove_of_a_patch_task_saves_then_drops_its_snapshot_mark_and_scratch() {
    let repo = TestRepo::new();
    let root = repo.root().to_path_buf();
    repo.task_root(&["start", "--mode", "patch", "pt", "--allow", "src/**"])
        .ok();
    let scratch = std::path::PathBuf::from(repo.task_root(&["scratch", "pt"]).ok().out());
    repo.write(&scratch, "log.txt", "temp\n");
    repo.write(&root, "src/lib.rs", "pub fn lib() { 10 }\n");
    let before = repo.porcelain(&root);
    let j = repo.task_root(&["remove", "pt", "--json"]).ok().json();
    assert_eq!(j["removed"], true, "{j}");
    let attempts = repo.refs("refs/tasks/pt/attempts");
    assert_eq!(attempts.len(), 1, "{j}");
    assert_eq!(
        repo.git(&root, &["show", &format!("{}:src/lib.rs", attempts[0])]),
        "pub fn lib() { 10 }"
    );
    assert!(repo.refs("refs/tasks/pt/snapshot").is_empty());
    assert_eq!(
        repo.porcelain(&root),
        before,
        "the user's files are left as they are"
    );
    assert!(!scratch.exists());
    assert_eq!(record_status(&repo, "pt"), "removed");
    assert_eq!(events(&repo, "pt").last().unwrap(), "removed");
    // No active task here any more.
    let status = repo.task_root(&["status"]).code(2);
    assert!(status.stderr.contains("no active task"), "{status}");
    repo.fsck();

    // Nothing done: nothing saved.
    repo.git(&root, &["checkout", "-q", "--", "src/lib.rs"]);
    repo.task_root(&["start", "--mode", "patch", "idle", "--allow", "src/**"])
        .ok();
    repo.task_root(&["remove", "idle"]).ok();
    assert!(repo.refs("refs/tasks/idle/attempts").is_empty());
    assert!(repo.refs("refs/tasks/idle/snapshot").is_empty());

    // Accepted: its scratch directory goes with it.
    repo.task_root(&["start", "--mode", "patch", "pa", "--allow", "src/**"])
        .ok();
    let scratch = std::path::PathBuf::from(repo.task_root(&["scratch", "pa"]).ok().out());
    repo.write(&scratch, "log.txt", "temp\n");
    repo.write(&root, "src/lib.rs", "pub fn lib() { 11 }\n");
    repo.task_root(&["merge", "pa"]).ok();
    assert!(!scratch.exists());
}

/// A background delete that failed (or died) leaves its moved-aside directory and its note:
/// the next `remove` warns about it (human and JSON) and names `sweep`, which deletes it.
#[test]
fn remove_warns_when_a_background_delete_failed() {
    let repo = TestRepo::new();
    let a = repo.start("bga", &[]);
    repo.task_root(&["remove", "bga"]).ok();
    // What a background delete that failed leaves: the directory moved aside by that
    // (other, finished) process, and git-task's note of it.
    let aside = a.with_file_name(".bga.removing-1-42");
    std::fs::create_dir_all(aside.join("stuck")).unwrap();
    std::fs::write(aside.join("stuck/file"), "left\n").unwrap();
    let notes = repo.root().join(".git/git-task/asides");
    std::fs::create_dir_all(&notes).unwrap();
    std::fs::write(
        notes.join(".bga.removing-1-42"),
        aside.to_str().unwrap().as_bytes(),
    )
    .unwrap();

    repo.start("bgb", &[]);
    let run = repo.task_root(&["remove", "bgb"]).ok();
    assert!(
        run.stderr
            .contains("warning: the background delete of a removed worktree did not finish")
            && run.stderr.contains(".bga.removing-1-42")
            && run.stderr.contains("git task sweep"),
        "{run}"
    );
    repo.start("bgc", &[]);
    let json = repo.task_root(&["remove", "bgc", "--json"]).ok().json();
    assert!(
        json["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains(".bga.removing-1-42")),
        "{json}"
    );
    repo.task_root(&["sweep"]).ok();
    assert!(!aside.exists());
    let quiet = repo.start("bgd", &[]);
    let _ = quiet;
    let run = repo.task_root(&["remove", "bgd"]).ok();
    assert!(!run.stderr.contains("did not finish"), "{run}");
}
