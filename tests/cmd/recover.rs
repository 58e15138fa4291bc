//! Sweep touches only what git-task made, and finishes what a killed command journaled (issue 12).

use crate::common::problems;
use crate::common::TestRepo;
use crate::common::*;
use std::path::PathBuf;

/// A worktree kept with `merge --keep` (and its ignored `.env`) survives sweep.
#[test]
fn sweep_leaves_a_kept_worktree_alone() {
    let repo = TestRepo::new();
    let wt = repo.start("kept", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 1; }\n");
    repo.git(&wt, &["commit", "-qam", "work"]);
    repo.write(repo.root(), ".git/info/exclude", ".env\n");
    repo.write(&wt, ".env", "SECRET=1\n");
    repo.task_root(&["merge", "kept", "--keep", "--no-checks"])
        .ok();
    let j = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(problems(&j), Vec::<String>::new(), "{j}");
    assert!(wt.join(".git").exists());
    assert_eq!(repo.read(&wt, ".env"), "SECRET=1\n");
}

/// A worktree the user moved with `git worktree move` is followed, not destroyed.
#[test]
fn a_moved_worktree_is_followed_by_path_list_and_sweep() {
    let repo = TestRepo::new();
    let wt = repo.start("moved", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 2; }\n");
    let to: PathBuf = repo.base().join("elsewhere");
    repo.git(
        repo.root(),
        &[
            "worktree",
            "move",
            wt.to_str().unwrap(),
            to.to_str().unwrap(),
        ],
    );
    assert_eq!(
        repo.task_root(&["path", "moved"]).ok().out(),
        to.to_str().unwrap()
    );
    let j = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(problems(&j), ["worktree_moved"], "{j}");
    assert_eq!(record_status(&repo, "moved"), "active");
    assert!(repo
        .refs("refs/heads/task/")
        .contains(&"refs/heads/task/moved".to_owned()));
    assert_eq!(repo.read(&to, "src/lib.rs"), "pub fn lib() { 2; }\n");
    let list = repo.task_root(&["list", "--json"]).ok().json();
    assert!(list.to_string().contains(to.to_str().unwrap()), "{list}");
    // A second sweep has nothing left to do.
    let j = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(problems(&j), Vec::<String>::new(), "{j}");
}

/// `--dry-run` prints the plan and changes nothing; the real sweep then applies that plan.
#[test]
fn dry_run_prints_the_plan_the_sweep_applies() {
    let repo = TestRepo::new();
    let wt = repo.start("gone", &[]);
    std::fs::remove_dir_all(&wt).unwrap();
    let before = all_refs(&repo);
    let dry = repo
        .task_root(&["sweep", "--dry-run", "--json"])
        .ok()
        .json();
    assert_eq!(all_refs(&repo), before);
    let real = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(problems(&dry), problems(&real));
    assert_eq!(problems(&real), ["worktree_vanished"]);
}

/// The scratch directory goes with the task's worktree on merge; sweep finds leaked ones.
#[test]
fn scratch_does_not_leak_after_merge_and_sweep_cleans_leaked_ones() {
    let repo = TestRepo::new();
    let wt = repo.start("scr", &[]);
    let scratch = PathBuf::from(repo.task_root(&["scratch", "scr"]).ok().out());
    std::fs::write(scratch.join("log.txt"), "log\n").unwrap();
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 3; }\n");
    repo.git(&wt, &["commit", "-qam", "work"]);
    repo.task_root(&["merge", "scr", "--no-checks"]).ok();
    assert!(!scratch.exists(), "merge leaves no scratch directory");

    // One leaked by an older version or a killed command.
    repo.start("leak", &[]);
    let leaked = PathBuf::from(repo.task_root(&["scratch", "leak"]).ok().out());
    repo.task_root(&["remove", "leak"]).ok();
    std::fs::create_dir_all(&leaked).unwrap();
    let j = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(problems(&j), ["scratch_of_finished_task"], "{j}");
    assert!(!leaked.exists());
}

/// A repair that fails is reported and makes the exit 1, never 128; the other repairs are made.
#[test]
fn a_failed_repair_is_reported_with_exit_1_and_the_others_are_made() {
    let repo = TestRepo::new();
    let wt = repo.start("gone", &[]);
    std::fs::remove_dir_all(&wt).unwrap();
    // A killed merge's journal whose branch moved on since: not repairable by sweep.
    let main = rev(&repo, "main");
    let dead = 4_000_000_001u32;
    let journal = serde_json::json!({
        "pid": dead, "created": 1, "step": "checkout",
        "worktree": repo.root(), "branch": "refs/heads/main",
        "old": "1111111111111111111111111111111111111111",
        "new": "2222222222222222222222222222222222222222",
    });
    repo.write(
        repo.root(),
        &format!(".git/git-task/journal/{dead}.0.json"),
        &journal.to_string(),
    );
    let j = repo.task_root(&["sweep", "--json"]).code(1).json();
    assert_eq!(
        problems(&j),
        ["interrupted_checkout", "worktree_vanished"],
        "{j}"
    );
    assert!(j["repairs"][0]["error"].is_string(), "{j}");
    assert!(j["repairs"][1].get("error").is_none(), "{j}");
    assert_eq!(record_status(&repo, "gone"), "removed");
    assert_eq!(rev(&repo, "main"), main);
    let run = repo.task_root(&["sweep"]).code(1);
    assert!(
        run.stderr
            .contains("warning: could not repair interrupted_checkout"),
        "{run}"
    );
}

/// A merge killed between moving the branch and updating the checked-out base: the next
/// command finishes the update from the journal (index, files, no lock, no temporary file).
#[test]
fn an_interrupted_checkout_of_the_base_is_finished_from_the_journal() {
    let repo = TestRepo::new();
    let old = rev(&repo, "main");
    repo.write(repo.root(), "src/lib.rs", "pub fn lib() { 4; }\n");
    repo.write(repo.root(), "src/new.rs", "new\n");
    repo.git(repo.root(), &["add", "-A"]);
    repo.git(repo.root(), &["commit", "-qm", "next"]);
    let new = rev(&repo, "main");
    // What a killed merge leaves: the branch at `new`, index and files at `old`, a lock, a temporary file.
    repo.git(repo.root(), &["read-tree", "-m", "-u", &new, &old]);
    let dead = 4_000_000_000u32;
    repo.write(repo.root(), ".git/index.lock", "");
    repo.write(
        repo.root(),
        &format!("src/.lib.rs.git-task-{dead}.tmp"),
        "half",
    );
    let journal = serde_json::json!({
        "pid": dead, "created": 1, "step": "checkout",
        "worktree": repo.root(), "branch": "refs/heads/main",
        "old": old, "new": new,
    });
    repo.write(
        repo.root(),
        &format!(".git/git-task/journal/{dead}.0.json"),
        &journal.to_string(),
    );
    let j = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(problems(&j), ["interrupted_checkout"], "{j}");
    assert_eq!(repo.porcelain(repo.root()), "");
    assert!(!repo.root().join(".git/index.lock").exists());
    assert!(!repo
        .root()
        .join(format!("src/.lib.rs.git-task-{dead}.tmp"))
        .exists());
    assert_eq!(repo.read(repo.root(), "src/new.rs"), "new\n");
    let j = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(problems(&j), Vec::<String>::new());
    repo.fsck();
}

/// A command killed mid ref transaction leaves its lock files; the next command deletes them
/// from the journal instead of failing with "changed meanwhile" until they are a minute old.
#[test]
fn the_next_command_deletes_ref_locks_a_killed_transaction_left() {
    let repo = TestRepo::new();
    repo.start("locked", &[]);
    let dead = 4_000_000_002u32;
    let common = repo.root().join(".git");
    let locks = [
        common.join("refs/tasks/locked/record.lock"),
        common.join("refs/heads/task/locked.lock"),
    ];
    for l in &locks {
        std::fs::write(l, "").unwrap();
    }
    let journal = serde_json::json!({
        "pid": dead, "created": 1, "step": "ref_locks", "locks": locks,
    });
    repo.write(
        repo.root(),
        &format!(".git/git-task/journal/{dead}.0.json"),
        &journal.to_string(),
    );
    repo.task_root(&["remove", "locked"]).ok();
    assert!(locks.iter().all(|l| !l.exists()));
    assert_eq!(record_status(&repo, "locked"), "removed");
    assert!(!common
        .join(format!("git-task/journal/{dead}.0.json"))
        .exists());
}

/// A commit killed between moving the branch and writing the index: the index follows the branch.
#[test]
fn an_interrupted_index_write_is_finished_from_the_journal() {
    let repo = TestRepo::new();
    let wt = repo.start("idx", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 5; }\n");
    repo.git(&wt, &["add", "-A"]);
    repo.git(&wt, &["commit", "-qm", "work"]);
    let head_tree = repo.git(&wt, &["rev-parse", "HEAD^{tree}"]);
    // The index as it was before the commit, and the index lock the killed process held.
    repo.git(&wt, &["reset", "-q", "--soft", "HEAD"]);
    repo.git(&wt, &["read-tree", "HEAD~1"]);
    let git_dir = PathBuf::from(repo.git(&wt, &["rev-parse", "--absolute-git-dir"]));
    std::fs::write(git_dir.join("index.lock"), "").unwrap();
    let dead = 4_000_000_003u32;
    let journal = serde_json::json!({
        "pid": dead, "created": 1, "step": "in_place", "task": "idx",
        "worktree": wt, "files": null, "index": head_tree,
    });
    repo.write(
        repo.root(),
        &format!(".git/git-task/journal/{dead}.0.json"),
        &journal.to_string(),
    );
    assert_ne!(repo.porcelain(&wt), "");
    let j = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(problems(&j), ["interrupted_in_place_update"], "{j}");
    assert!(!git_dir.join("index.lock").exists());
    assert_eq!(repo.porcelain(&wt), "");
}

/// Writes a dead process's journal entry for a ref transaction on `updates` (name, old, new).
fn journal_ref_update(repo: &TestRepo, updates: &[(&str, Option<&str>, Option<&str>)]) {
    let dead = 4_000_000_003u32;
    let locks: Vec<String> = updates
        .iter()
        .map(|(name, _, _)| {
            repo.root()
                .join(".git")
                .join(format!("{name}.lock"))
                .display()
                .to_string()
        })
        .collect();
    let updates: Vec<serde_json::Value> = updates
        .iter()
        .map(|(name, old, new)| {
            serde_json::json!({ "name": name, "old": old, "new": new, "message": "git-task: test" })
        })
        .collect();
    let journal = serde_json::json!({
        "pid": dead, "created": 1, "step": "ref_locks", "locks": locks, "updates": updates,
    });
    repo.write(
        repo.root(),
        &format!(".git/git-task/journal/{dead}.0.json"),
        &journal.to_string(),
    );
}

/// Makes a second commit on main, and branches `a` and `b` at the first; returns both commits.
fn branches_a_and_b(repo: &TestRepo) -> (String, String) {
    let main = rev(repo, "main");
    repo.git(
        repo.root(),
        &["commit", "-q", "--allow-empty", "-m", "second"],
    );
    let second = rev(repo, "main");
    repo.git(repo.root(), &["branch", "a", &main]);
    repo.git(repo.root(), &["branch", "b", &main]);
    (main, second)
}

/// A ref transaction killed after it moved some of its refs is finished: the refs it had not
/// moved yet move too, so a task is never half removed (record says removed, branch still there).
#[test]
fn a_ref_transaction_killed_halfway_is_finished() {
    let repo = TestRepo::new();
    let (main, second) = branches_a_and_b(&repo);
    repo.git(repo.root(), &["branch", "gone", &main]);
    // The killed transaction: a → second (done), b → second (not yet), gone deleted (not yet).
    repo.git(repo.root(), &["update-ref", "refs/heads/a", &second]);
    repo.write(
        repo.root(),
        ".git/refs/heads/b.lock",
        &format!("{second}\n"),
    );
    journal_ref_update(
        &repo,
        &[
            ("refs/heads/a", Some(&main), Some(&second)),
            ("refs/heads/b", Some(&main), Some(&second)),
            ("refs/heads/gone", Some(&main), None),
        ],
    );
    let j = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(problems(&j), ["interrupted_ref_update"], "{j}");
    assert_eq!(rev(&repo, "refs/heads/a"), second);
    assert_eq!(rev(&repo, "refs/heads/b"), second, "{j}");
    assert!(repo.refs("refs/heads/gone").is_empty(), "{j}");
    assert!(!repo.root().join(".git/refs/heads/b.lock").exists());
    repo.fsck();
}

/// A ref transaction killed before it moved any ref is not finished: its locks go, nothing moves.
#[test]
fn a_ref_transaction_killed_before_it_moved_anything_changes_nothing() {
    let repo = TestRepo::new();
    let (main, second) = branches_a_and_b(&repo);
    repo.write(
        repo.root(),
        ".git/refs/heads/a.lock",
        &format!("{second}\n"),
    );
    journal_ref_update(
        &repo,
        &[
            ("refs/heads/a", Some(&main), Some(&second)),
            ("refs/heads/b", Some(&main), Some(&second)),
        ],
    );
    let j = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(problems(&j), ["interrupted_ref_update"], "{j}");
    assert_eq!(rev(&repo, "refs/heads/a"), main);
    assert_eq!(rev(&repo, "refs/heads/b"), main);
    assert!(!repo.root().join(".git/refs/heads/a.lock").exists());
    repo.fsck();
}

/// A merge killed inside its ref transaction, with the target checked out: the transaction is
/// finished first, then the checked-out worktree follows the branch to its new tip.
#[test]
fn a_killed_merge_transaction_is_finished_before_its_checkout() {
    let repo = TestRepo::new();
    let old = rev(&repo, "main");
    repo.git(repo.root(), &["switch", "-q", "-c", "side"]);
    repo.write(repo.root(), "landed.txt", "landed\n");
    repo.git(repo.root(), &["add", "landed.txt"]);
    repo.git(repo.root(), &["commit", "-q", "-m", "landed"]);
    let new = rev(&repo, "side");
    repo.git(repo.root(), &["switch", "-q", "main"]);
    repo.git(repo.root(), &["branch", "a", &old]);
    repo.git(repo.root(), &["update-ref", "refs/heads/a", &new]);
    // Entry 0: the checkout of main; entry 1: the transaction, which moved `a` but not `main`.
    let dead = 4_000_000_003u32;
    let checkout = serde_json::json!({
        "pid": dead, "created": 1, "step": "checkout",
        "worktree": repo.root(), "branch": "refs/heads/main", "old": old, "new": new,
    });
    repo.write(
        repo.root(),
        &format!(".git/git-task/journal/{dead}.0.json"),
        &checkout.to_string(),
    );
    let lock = |n: &str| repo.root().join(format!(".git/refs/heads/{n}.lock"));
    let transaction = serde_json::json!({
        "pid": dead, "created": 1, "step": "ref_locks", "locks": [lock("main"), lock("a")],
        "updates": [
            { "name": "refs/heads/main", "old": old, "new": new, "message": "git-task: merge t" },
            { "name": "refs/heads/a", "old": old, "new": new, "message": "git-task: merge t" },
        ],
    });
    repo.write(
        repo.root(),
        &format!(".git/git-task/journal/{dead}.1.json"),
        &transaction.to_string(),
    );
    let j = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(
        problems(&j),
        ["interrupted_ref_update", "interrupted_checkout"],
        "{j}"
    );
    assert_eq!(rev(&repo, "main"), new, "{j}");
    assert_eq!(repo.porcelain(repo.root()), "", "{j}");
    assert!(repo.root().join("landed.txt").exists());
    repo.fsck();
}

/// A reset journals its in-place rewrite before the branch moves: killed after the move, the
/// rewrite is finished (the files saved first); killed before it, nothing is rewritten.
#[test]
fn an_in_place_rewrite_journaled_before_its_branch_moved_waits_for_the_move() {
    let repo = TestRepo::new();
    let wt = repo.start("rw", &[]);
    let base = repo.git(&wt, &["rev-parse", "HEAD"]);
    let base_tree = repo.git(&wt, &["rev-parse", "HEAD^{tree}"]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 7; }\n");
    repo.git(&wt, &["add", "-A"]);
    repo.git(&wt, &["commit", "-qm", "work"]);
    let work = repo.git(&wt, &["rev-parse", "HEAD"]);
    let dead = 4_000_000_003u32;
    let journal = serde_json::json!({
        "pid": dead, "created": 1, "step": "in_place", "task": "rw",
        "worktree": wt, "files": base_tree, "index": base_tree, "head": base,
    });
    let write_journal = || {
        repo.write(
            repo.root(),
            &format!(".git/git-task/journal/{dead}.0.json"),
            &journal.to_string(),
        )
    };
    // Killed before the branch moved: the worktree stays as it is.
    write_journal();
    let j = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(problems(&j), ["interrupted_in_place_update"], "{j}");
    assert_eq!(repo.porcelain(&wt), "", "{j}");
    assert_eq!(repo.read(&wt, "src/lib.rs"), "pub fn lib() { 7; }\n");
    // Killed after: HEAD is at the base, files and index still at the work; finished.
    repo.git(&wt, &["update-ref", "refs/heads/task/rw", &base, &work]);
    assert_ne!(repo.porcelain(&wt), "");
    write_journal();
    let j = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(problems(&j), ["interrupted_in_place_update"], "{j}");
    assert_eq!(repo.porcelain(&wt), "", "{j}");
    assert_ne!(repo.read(&wt, "src/lib.rs"), "pub fn lib() { 7; }\n");
    repo.fsck();
}
