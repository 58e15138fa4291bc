//! Finding a linked worktree without listing every one (merge, a task worktree moved with
//! `git worktree move`): each shortcut (the entry a directory names, the entry named like the
//! branch) and the look at every worktree it falls back to, with git as the oracle.

use crate::common::TestRepo;
use crate::common::{commit_all, rev};
use std::path::{Path, PathBuf};

/// `<common>/worktrees/<name>`, a worktree's administrative entry.
fn entry(repo: &TestRepo, name: &str) -> PathBuf {
    repo.root().join(".git").join("worktrees").join(name)
}

fn add_worktree(repo: &TestRepo, path: &Path, args: &[&str]) {
    let mut all = vec!["worktree", "add", "-q", path.to_str().unwrap()];
    all.extend_from_slice(args);
    repo.git(repo.root(), &all);
}

/// An entry under `.git/worktrees/` that git never made: on `branch`, naming `victim` (another
/// worktree's directory) as its worktree.
fn forge_entry(repo: &TestRepo, name: &str, branch: &str, victim: &Path) {
    let dir = entry(repo, name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("HEAD"), format!("ref: refs/heads/{branch}\n")).unwrap();
    std::fs::write(
        dir.join("gitdir"),
        format!("{}\n", victim.join(".git").display()),
    )
    .unwrap();
    std::fs::write(dir.join("commondir"), "../..\n").unwrap();
}

/// A task that changes `src/lib.rs` to `pub fn lib() { 7 }`, committed.
fn task_with_change(repo: &TestRepo, id: &str) -> PathBuf {
    let wt = repo.start(id, &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { 7 }\n");
    commit_all(repo, &wt, "Task edit");
    wt
}

const BEFORE: &str = "pub fn lib() {}\n";
const AFTER: &str = "pub fn lib() { 7 }\n";

/// The target checked out in a linked worktree named like the branch (the likely place, read
/// alone) is updated there.
#[test]
fn merge_updates_the_target_in_a_worktree_named_like_the_branch() {
    let repo = TestRepo::new();
    repo.git(repo.root(), &["branch", "umbrella"]);
    let side = repo.base().join("umbrella");
    add_worktree(&repo, &side, &["umbrella"]);
    assert!(entry(&repo, "umbrella").is_dir());
    task_with_change(&repo, "t1");

    repo.task_root(&["merge", "t1", "--into", "umbrella"]).ok();
    assert_eq!(repo.read(&side, "src/lib.rs"), AFTER);
    assert_eq!(repo.porcelain(&side), "");
    assert_eq!(repo.read(repo.root(), "src/lib.rs"), BEFORE);
    repo.fsck();
}

/// The likely place of the target taken by a worktree on another branch: every worktree is
/// looked at, and the target is updated where it is checked out, the other left as it was.
#[test]
fn merge_updates_the_target_when_its_likely_place_is_another_worktree() {
    let repo = TestRepo::new();
    repo.git(repo.root(), &["branch", "umbrella"]);
    repo.git(repo.root(), &["branch", "other"]);
    let decoy = repo.base().join("elsewhere").join("umbrella");
    add_worktree(&repo, &decoy, &["other"]);
    let side = repo.base().join("side");
    add_worktree(&repo, &side, &["umbrella"]);
    assert!(entry(&repo, "umbrella").is_dir() && entry(&repo, "side").is_dir());
    task_with_change(&repo, "t1");

    repo.task_root(&["merge", "t1", "--into", "umbrella"]).ok();
    assert_eq!(repo.read(&side, "src/lib.rs"), AFTER);
    assert_eq!(repo.porcelain(&side), "");
    assert_eq!(repo.read(&decoy, "src/lib.rs"), BEFORE);
    assert_eq!(repo.porcelain(&decoy), "");
    repo.fsck();
}

/// A forged entry on the target (named like it, so it is the likely place) that points at
/// another task's worktree never makes merge write there: only the worktree that names its
/// entry back is updated.
#[test]
fn forged_entry_on_the_target_never_makes_merge_write_in_another_worktree() {
    let repo = TestRepo::new();
    repo.git(repo.root(), &["branch", "umbrella"]);
    let side = repo.base().join("side");
    add_worktree(&repo, &side, &["umbrella"]);
    task_with_change(&repo, "t1");
    let victim = repo.start("t2", &[]);
    forge_entry(&repo, "umbrella", "umbrella", &victim);

    repo.task_root(&["merge", "t1", "--into", "umbrella"]).ok();
    assert_eq!(repo.read(&side, "src/lib.rs"), AFTER);
    assert_eq!(repo.porcelain(&side), "");
    assert_eq!(repo.read(&victim, "src/lib.rs"), BEFORE);
    assert_eq!(repo.porcelain(&victim), "");
    std::fs::remove_dir_all(entry(&repo, "umbrella")).unwrap();
    repo.fsck();
}

/// A forged entry on `main` pointing at another task's worktree: the main worktree has `main`,
/// it alone is updated, and the other task's worktree is not written.
#[test]
fn forged_entry_on_the_checked_out_base_never_makes_merge_write_in_another_worktree() {
    let repo = TestRepo::new();
    task_with_change(&repo, "t1");
    let victim = repo.start("t2", &[]);
    forge_entry(&repo, "main", "main", &victim);
    forge_entry(&repo, "0000", "main", &victim);

    repo.task_root(&["merge", "t1", "--keep"]).ok();
    assert_eq!(repo.read(repo.root(), "src/lib.rs"), AFTER);
    assert_eq!(repo.porcelain(repo.root()), "");
    assert_eq!(repo.read(&victim, "src/lib.rs"), BEFORE);
    assert_eq!(repo.porcelain(&victim), "");
    std::fs::remove_dir_all(entry(&repo, "main")).unwrap();
    std::fs::remove_dir_all(entry(&repo, "0000")).unwrap();
    repo.fsck();
}

/// Makes `count` detached worktrees whose directories are all named `name` (entries `name`,
/// `name1`, ...), so that a task `name` started next gets an entry named otherwise.
fn take_entry_names(repo: &TestRepo, name: &str, count: usize) -> Vec<PathBuf> {
    (0..count)
        .map(|i| {
            let dir = repo.base().join(format!("taken{i}")).join(name);
            add_worktree(repo, &dir, &["--detach"]);
            dir
        })
        .collect()
}

/// A task worktree moved with `git worktree move` whose entry is not where it is first looked
/// for (`t1`, `t11` and `t12` are other worktrees'): every worktree is looked at, the task is
/// merged from where it is, and removing it deletes its own directory and entry only.
#[test]
fn moved_task_worktree_with_an_unlikely_entry_name_is_merged_and_removed() {
    let repo = TestRepo::new();
    let others = take_entry_names(&repo, "t1", 3);
    let wt = task_with_change(&repo, "t1");
    assert!(entry(&repo, "t13").is_dir(), "the task's entry is t13");
    let moved = repo.base().join("moved-t1");
    repo.git(
        repo.root(),
        &[
            "worktree",
            "move",
            wt.to_str().unwrap(),
            moved.to_str().unwrap(),
        ],
    );
    assert_eq!(
        repo.task_root(&["path", "t1"]).ok().out(),
        moved.display().to_string()
    );
    let before = rev(&repo, "main");

    repo.task_root(&["merge", "t1"]).ok();
    assert_eq!(repo.git(repo.root(), &["rev-parse", "main~1"]), before);
    assert_eq!(repo.read(repo.root(), "src/lib.rs"), AFTER);
    assert!(!moved.exists(), "the moved worktree is removed");
    assert!(!entry(&repo, "t13").exists(), "with its entry");
    for (dir, name) in others.iter().zip(["t1", "t11", "t12"]) {
        assert!(dir.join(".git").is_file(), "{} stays", dir.display());
        assert!(entry(&repo, name).is_dir(), "entry {name} stays");
    }
    let mut listed = repo.worktrees();
    listed.sort();
    let mut want = vec![repo.root().to_path_buf()];
    want.extend(others.iter().cloned());
    want.sort();
    assert_eq!(listed, want);
    repo.fsck();
}

/// A moved task worktree whose entry got a number (`t1` is another worktree's) is found at the
/// numbered name and merged from where it is, its worktree kept with `--keep`.
#[test]
fn moved_task_worktree_with_a_numbered_entry_is_followed() {
    let repo = TestRepo::new();
    let others = take_entry_names(&repo, "t1", 1);
    let wt = task_with_change(&repo, "t1");
    assert!(entry(&repo, "t11").is_dir(), "the task's entry is t11");
    let moved = repo.base().join("moved-t1");
    repo.git(
        repo.root(),
        &[
            "worktree",
            "move",
            wt.to_str().unwrap(),
            moved.to_str().unwrap(),
        ],
    );
    repo.task_root(&["merge", "t1", "--keep"]).ok();
    assert_eq!(repo.read(repo.root(), "src/lib.rs"), AFTER);
    assert_eq!(repo.read(&moved, "src/lib.rs"), AFTER);
    assert_eq!(repo.porcelain(&moved), "");
    assert!(others[0].join(".git").is_file());
    repo.fsck();
}

/// A task worktree with uncommitted work whose entry is named otherwise than its directory is
/// still found (from its `.git` file) and the merge refused, nothing landing.
#[test]
fn dirty_task_worktree_with_an_unlikely_entry_name_is_refused() {
    let repo = TestRepo::new();
    take_entry_names(&repo, "t1", 2);
    let wt = task_with_change(&repo, "t1");
    assert!(entry(&repo, "t12").is_dir(), "the task's entry is t12");
    repo.write(&wt, "README.md", "# unsaved\n");
    let before = rev(&repo, "main");

    let run = repo.task_root(&["merge", "t1", "--json"]);
    assert_ne!(run.code, 0, "{run}");
    assert_eq!(rev(&repo, "main"), before);
    assert_eq!(repo.read(&wt, "README.md"), "# unsaved\n");
}

/// A destination still registered to a worktree deleted without git (its entry named after
/// it, as git names one) is refused, as git refuses it, and the start leaves nothing behind.
#[test]
fn start_refuses_a_destination_still_registered_to_a_deleted_worktree() {
    let repo = TestRepo::new();
    let dir = repo.task_dir("t9");
    add_worktree(&repo, &dir, &["-b", "other"]);
    std::fs::remove_dir_all(&dir).unwrap();

    let run = repo.task_root(&["start", "t9"]);
    assert_eq!(run.code, 128, "{run}");
    assert!(run.stderr.contains("already registered"), "{run}");
    assert!(!dir.exists());
    // No second entry for the same directory (start's roll-back may take the stale one).
    for e in std::fs::read_dir(repo.root().join(".git").join("worktrees")).unwrap() {
        assert_eq!(e.unwrap().file_name(), "t9");
    }
    assert!(repo.refs("refs/heads/task/").is_empty());
}

/// A worktree `start` registers is one git reads as its own: listed, not left locked, on the
/// task's branch with its HEAD's reflog started at its tip, and with
/// `extensions.worktreeConfig` the worktree config of the worktree the start ran from copied.
#[test]
fn started_worktree_is_registered_as_git_registers_one() {
    let repo = TestRepo::new();
    repo.git(
        repo.root(),
        &["config", "extensions.worktreeConfig", "true"],
    );
    repo.git(
        repo.root(),
        &["config", "--worktree", "user.name", "Worktree User"],
    );
    let wt = repo.start("t1", &[]);

    assert!(repo.worktrees().contains(&wt), "{:?}", repo.worktrees());
    assert!(!entry(&repo, "t1").join("locked").exists());
    assert_eq!(
        repo.git(&wt, &["symbolic-ref", "HEAD"]),
        "refs/heads/task/t1"
    );
    let reflog = repo.git(&wt, &["reflog", "--format=%H", "HEAD"]);
    assert_eq!(reflog.lines().last(), Some(rev(&repo, "task/t1").as_str()));
    assert_eq!(
        repo.git(&wt, &["config", "--worktree", "user.name"]),
        "Worktree User"
    );
    assert_eq!(repo.porcelain(&wt), "");
    repo.git(repo.root(), &["worktree", "prune"]);
    assert!(entry(&repo, "t1").is_dir());
    repo.fsck();
}
