//! Red team of "no work is lost" (SPEC §2.2, §2.7, §11): discarding paths meeting states a
//! user or an agent can leave a worktree in, checked with git as the oracle.

use crate::common::TestRepo;
use crate::common::*;
use std::path::{Path, PathBuf};

/// Returns what `git status` (long form) of `dir` says, to see operations in progress.
fn status_text(repo: &TestRepo, dir: &Path) -> String {
    repo.git(dir, &["status"])
}

/// Asserts `dir` has no merge, cherry-pick or revert in progress, as git sees it.
#[track_caller]
fn assert_no_operation(repo: &TestRepo, dir: &Path) {
    let status = status_text(repo, dir);
    for word in ["merging", "cherry-pick", "revert", "Unmerged"] {
        assert!(!status.contains(word), "{word} in:\n{status}");
    }
    for head in ["MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD"] {
        let run = repo.git_run(dir, &["rev-parse", "-q", "--verify", head]);
        assert_ne!(run.code, 0, "{head} is still there");
    }
}

/// A task `a` whose worktree is in a conflicted merge of `main` (the same line changed on both
/// sides), with an untracked file beside it; returns the worktree.
fn conflicted_merge(repo: &TestRepo) -> PathBuf {
    let wt = repo.start("a", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { task }\n");
    commit_all(repo, &wt, "task side");
    repo.write(repo.root(), "src/lib.rs", "pub fn lib() { main }\n");
    commit_all(repo, repo.root(), "main side");
    assert_ne!(repo.git_run(&wt, &["merge", "main"]).code, 0);
    repo.write(&wt, "notes.txt", "written while merging\n");
    repo.git(&wt, &["rev-parse", "-q", "--verify", "MERGE_HEAD"]);
    wt
}

/// The conflicted file and the untracked one are in the attempt, as they were on disk.
#[track_caller]
fn assert_merge_work_saved(repo: &TestRepo, attempt: &str) {
    assert!(show(repo, attempt, "src/lib.rs").contains("<<<<<<<"));
    assert_eq!(show(repo, attempt, "notes.txt"), "written while merging");
}

/// `reset` of a worktree in the middle of a conflicted merge saves the work, then ends the
/// merge as `git reset --hard` would: a `MERGE_HEAD` left behind made the next commit a merge
/// with the base's newer work the reset had just put away.
#[test]
fn reset_ends_a_merge_in_progress() {
    let repo = TestRepo::new();
    let wt = conflicted_merge(&repo);
    repo.task(&wt, &["reset", "a"]).ok();
    assert_merge_work_saved(&repo, "refs/tasks/a/attempts/1");
    assert_no_operation(&repo, &wt);
    assert_eq!(repo.porcelain(&wt), "");
    repo.write(&wt, "src/lib.rs", "pub fn lib() { again }\n");
    commit_all(&repo, &wt, "after the reset");
    let parents = repo.git(&wt, &["rev-list", "--parents", "-n", "1", "HEAD"]);
    assert_eq!(parents.split(' ').count(), 2, "a merge commit: {parents}");
    repo.fsck();
}

/// `revert` of the whole task during a conflicted merge: saved, and the merge is over.
#[test]
fn revert_ends_a_merge_in_progress() {
    let repo = TestRepo::new();
    let wt = conflicted_merge(&repo);
    repo.task(&wt, &["revert", "a"]).ok();
    assert_merge_work_saved(&repo, "refs/tasks/a/attempts/1");
    assert_no_operation(&repo, &wt);
    repo.fsck();
}

/// `reset` during a conflicted cherry-pick: saved, and no `CHERRY_PICK_HEAD` is left.
#[test]
fn reset_ends_a_cherry_pick_in_progress() {
    let repo = TestRepo::new();
    let wt = repo.start("a", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { task }\n");
    commit_all(&repo, &wt, "task side");
    repo.write(repo.root(), "src/lib.rs", "pub fn lib() { main }\n");
    commit_all(&repo, repo.root(), "main side");
    assert_ne!(repo.git_run(&wt, &["cherry-pick", "main"]).code, 0);
    assert!(status_text(&repo, &wt).contains("cherry-pick"));
    repo.task(&wt, &["reset", "a"]).ok();
    assert!(show(&repo, "refs/tasks/a/attempts/1", "src/lib.rs").contains("<<<<<<<"));
    assert_no_operation(&repo, &wt);
    repo.fsck();
}

/// The pool entries' paths, from `pool status --json`.
fn pool_paths(repo: &TestRepo) -> Vec<PathBuf> {
    let status = repo.task_root(&["pool", "status", "--json"]).ok().json();
    status["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| PathBuf::from(e["path"].as_str().unwrap()))
        .collect()
}

/// Fills the pool with `n` entries (waiting for them).
fn fill_pool(repo: &TestRepo, n: &str) -> Vec<PathBuf> {
    repo.task_root(&["pool", "fill", n, "--wait"]).ok();
    pool_paths(repo)
}

/// The refs under which work found in pool entries was saved.
fn pool_saves(repo: &TestRepo) -> Vec<String> {
    repo.refs("refs/task-pool-saved/")
}

/// Someone `cd`s into a pool entry (a hidden directory beside the tasks) and works there:
/// untracked, modified, staged-only, executable. `drain` saved nothing and deleted it all.
#[test]
fn pool_drain_saves_the_work_found_in_an_entry() {
    let repo = TestRepo::new();
    let entry = fill_pool(&repo, "1").remove(0);
    repo.write(&entry, "notes/plan.md", "precious\n");
    repo.write(&entry, "src/lib.rs", "pub fn lib() { edited }\n");
    repo.write(&entry, "staged.txt", "staged only\n");
    repo.git(&entry, &["add", "staged.txt"]);
    repo.write(&entry, "run.sh", "#!/bin/sh\n");
    repo.git(&entry, &["update-index", "--add", "--chmod=+x", "run.sh"]);
    let drained = repo.task_root(&["pool", "drain", "--json"]).ok().json();
    let saves = pool_saves(&repo);
    assert_eq!(saves.len(), 1, "{drained}");
    assert_eq!(
        drained["entries"][0]["saved"],
        saves[0].as_str(),
        "{drained}"
    );
    let saved = &saves[0];
    assert_eq!(show(&repo, saved, "notes/plan.md"), "precious");
    assert_eq!(show(&repo, saved, "src/lib.rs"), "pub fn lib() { edited }");
    assert_eq!(show(&repo, saved, "staged.txt"), "staged only");
    // The index is the second parent, as in an attempt: the executable bit was staged.
    let index = repo.git(repo.root(), &["ls-tree", &format!("{saved}^2"), "run.sh"]);
    assert!(index.starts_with("100755"), "{index}");
    // Its first parent is the commit the entry was filled at: `git diff` shows the work.
    let diff = repo.git(
        repo.root(),
        &["diff", "--stat", &format!("{saved}^1"), saved],
    );
    assert!(diff.contains("notes/plan.md"), "{diff}");
    repo.task_root(&["sweep"]).ok();
    assert_eq!(repo.worktrees(), vec![repo.root().to_path_buf()]);
    repo.fsck();
}

/// A pooled `start` that finds its entry changed checks out afresh, as before, but first saves
/// what it found there.
#[test]
fn pooled_start_saves_a_dirty_entry_before_discarding_it() {
    let repo = TestRepo::new();
    let entry = fill_pool(&repo, "1").remove(0);
    repo.write(&entry, "stray.txt", "not from the base\n");
    let wt = repo.start("t", &[]);
    assert!(!wt.join("stray.txt").exists());
    let saves = pool_saves(&repo);
    assert_eq!(saves.len(), 1);
    assert_eq!(show(&repo, &saves[0], "stray.txt"), "not from the base");
    repo.task_root(&["sweep"]).ok();
    assert_eq!(repo.worktrees().len(), 2);
    repo.fsck();
}

/// A commit made on a pool entry's detached HEAD makes the entry "damaged": `sweep` deleted it
/// and the commit with it (only the deleted worktree's reflog knew it).
#[test]
fn sweep_saves_commits_made_in_a_pool_entry() {
    let repo = TestRepo::new();
    let entry = fill_pool(&repo, "1").remove(0);
    repo.write(&entry, "src/lib.rs", "pub fn lib() { committed }\n");
    commit_all(&repo, &entry, "work in the pool entry");
    let commit = repo.git(&entry, &["rev-parse", "HEAD"]);
    let sweep = repo.task_root(&["sweep", "--json"]).ok().json();
    let saves = pool_saves(&repo);
    assert_eq!(saves.len(), 1, "{sweep}");
    assert!(sweep.to_string().contains(&saves[0]), "{sweep}");
    let reach = repo.git_run(
        repo.root(),
        &["merge-base", "--is-ancestor", &commit, &saves[0]],
    );
    assert_eq!(reach.code, 0, "the commit is not saved");
    assert!(!entry.exists());
    repo.fsck();
}

/// Entries nobody touched, and a fill killed before its checkout finished, save nothing.
#[test]
fn untouched_pool_entries_save_nothing() {
    let repo = TestRepo::new();
    let entries = fill_pool(&repo, "2");
    // `git status` in an entry refreshes its index: still nothing to save.
    repo.git(&entries[0], &["status"]);
    // A fill killed halfway: a registered worktree with no index and no ref.
    let half = entries[0].with_file_name(".pool-999999-1");
    repo.git(
        repo.root(),
        &[
            "worktree",
            "add",
            "--detach",
            "--no-checkout",
            half.to_str().unwrap(),
        ],
    );
    repo.task_root(&["pool", "drain"]).ok();
    repo.task_root(&["sweep"]).ok();
    assert_eq!(pool_saves(&repo), Vec::<String>::new());
    assert!(!half.exists());
    assert_eq!(repo.worktrees(), vec![repo.root().to_path_buf()]);
    repo.fsck();
}

/// `git worktree lock` says "never prune, move or remove this" (its directory may be on a drive
/// that is not mounted). `sweep` took the missing directory for a vanished worktree: it pruned
/// it, deleted the branch and marked the task removed, so the remounted worktree was no longer
/// a repository.
#[test]
fn sweep_leaves_a_locked_worktree_whose_directory_is_gone() {
    let repo = TestRepo::new();
    let wt = repo.start("b", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { on the drive }\n");
    commit_all(&repo, &wt, "committed on the drive");
    repo.write(&wt, "wip.txt", "not committed\n");
    repo.git(
        repo.root(),
        &[
            "worktree",
            "lock",
            "--reason",
            "on usb",
            wt.to_str().unwrap(),
        ],
    );
    let unmounted = repo.base().join("usb");
    std::fs::rename(&wt, &unmounted).unwrap();
    let sweep = repo.task_root(&["sweep", "--json"]).ok().json();
    assert!(problems(&sweep).is_empty(), "{sweep}");
    assert_eq!(record_status(&repo, "b"), "active");
    assert_eq!(repo.refs("refs/heads/task/"), vec!["refs/heads/task/b"]);
    std::fs::rename(&unmounted, &wt).unwrap();
    assert_eq!(repo.porcelain(&wt), "?? wip.txt");
    assert_eq!(
        repo.read(&wt, "src/lib.rs"),
        "pub fn lib() { on the drive }\n"
    );
    repo.fsck();
}

/// `remove --force` of a task whose worktree is locked is refused as `git worktree remove`
/// refuses it (git wants `-f -f`), before anything is saved or deleted; once unlocked it goes.
#[test]
fn remove_refuses_a_locked_worktree() {
    let repo = TestRepo::new();
    let wt = repo.start("b", &[]);
    repo.write(&wt, "wip.txt", "work\n");
    repo.git(repo.root(), &["worktree", "lock", wt.to_str().unwrap()]);
    let before = all_refs(&repo);
    let run = repo.task_root(&["remove", "--force", "b"]).code(128);
    assert!(run.stderr.contains("locked"), "{run}");
    assert!(run.stderr.contains("git worktree unlock"), "{run}");
    assert_eq!(all_refs(&repo), before);
    assert_eq!(repo.porcelain(&wt), "?? wip.txt");
    assert!(repo
        .git(repo.root(), &["worktree", "list", "--porcelain"])
        .contains("locked"));
    repo.git(repo.root(), &["worktree", "unlock", wt.to_str().unwrap()]);
    repo.task_root(&["remove", "--force", "b"]).ok();
    assert_eq!(show(&repo, "refs/tasks/b/attempts/1", "wip.txt"), "work");
    assert!(!wt.exists());
    repo.fsck();
}

/// A merge of a task whose worktree is locked lands, and keeps the worktree and its branch (as
/// `--keep` does) instead of removing a locked worktree.
#[test]
fn merge_keeps_a_locked_worktree_and_its_branch() {
    let repo = TestRepo::new();
    let wt = repo.start("b", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { merged }\n");
    commit_all(&repo, &wt, "work");
    repo.git(repo.root(), &["worktree", "lock", wt.to_str().unwrap()]);
    let run = repo.task_root(&["merge", "b", "--no-checks"]).ok();
    assert!(run.stderr.contains("locked"), "{run}");
    assert_eq!(show(&repo, "main", "src/lib.rs"), "pub fn lib() { merged }");
    assert!(wt.join(".git").exists());
    assert_eq!(repo.refs("refs/heads/task/"), vec!["refs/heads/task/b"]);
    assert_eq!(repo.porcelain(&wt), "");
    let sweep = repo.task_root(&["sweep", "--json"]).ok().json();
    assert!(problems(&sweep).is_empty(), "{sweep}");
    repo.fsck();
}

/// `reset` of a task whose locked worktree's directory is missing (a drive that is not
/// mounted) made the worktree again at its path, orphaning the one on the drive. It is refused
/// before anything moves.
#[test]
fn reset_refuses_to_remake_a_locked_worktree() {
    let repo = TestRepo::new();
    let wt = repo.start("b", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { work }\n");
    commit_all(&repo, &wt, "work");
    repo.git(repo.root(), &["worktree", "lock", wt.to_str().unwrap()]);
    let unmounted = repo.base().join("usb");
    std::fs::rename(&wt, &unmounted).unwrap();
    let before = all_refs(&repo);
    let run = repo.task_root(&["reset", "b"]).code(128);
    assert!(run.stderr.contains("git worktree unlock"), "{run}");
    assert_eq!(all_refs(&repo), before);
    assert!(!wt.exists());
    std::fs::rename(&unmounted, &wt).unwrap();
    assert_eq!(repo.read(&wt, "src/lib.rs"), "pub fn lib() { work }\n");
    assert_eq!(repo.porcelain(&wt), "");
    repo.fsck();
}

/// Writes an ignored `.env` into `wt` (the repository ignores it on `main` first).
fn ignored_env(repo: &TestRepo, wt: &Path) {
    repo.write(wt, ".env", "SECRET=1\n");
    let ignored = repo.git_run(wt, &["check-ignore", "-q", ".env"]);
    assert_eq!(ignored.code, 0, "not ignored");
}

/// A repository that ignores `.env`, with task `a` started after that.
fn repo_ignoring_env() -> (TestRepo, PathBuf) {
    let repo = TestRepo::new();
    repo.write(repo.root(), ".gitignore", ".env\n");
    commit_all(&repo, repo.root(), "ignore .env");
    let wt = repo.start("a", &[]);
    (repo, wt)
}

/// `reset` of a worktree whose HEAD left the branch made the worktree again: the ignored
/// files in it (`.env`, build output) were deleted without a word. It is brought back in
/// place, HEAD on the branch, and the commit made on the detached HEAD is saved.
#[test]
fn reset_of_a_detached_worktree_keeps_its_ignored_files() {
    let (repo, wt) = repo_ignoring_env();
    ignored_env(&repo, &wt);
    repo.git(&wt, &["checkout", "-q", "--detach"]);
    let detached = {
        repo.write(&wt, "src/lib.rs", "pub fn lib() { detached }\n");
        commit_all(&repo, &wt, "on a detached HEAD");
        repo.git(&wt, &["rev-parse", "HEAD"])
    };
    repo.write(&wt, "wip.txt", "uncommitted\n");
    let run = repo.task(&wt, &["reset", "a"]).ok();
    assert!(!run.stderr.contains("replaced"), "{run}");
    assert_eq!(repo.read(&wt, ".env"), "SECRET=1\n");
    assert_eq!(
        repo.git(&wt, &["symbolic-ref", "HEAD"]),
        "refs/heads/task/a"
    );
    assert_eq!(repo.porcelain(&wt), "");
    assert_eq!(repo.read(&wt, "src/lib.rs"), "pub fn lib() {}\n");
    let attempt = "refs/tasks/a/attempts/1";
    assert_eq!(show(&repo, attempt, "wip.txt"), "uncommitted");
    let reach = repo.git_run(
        repo.root(),
        &["merge-base", "--is-ancestor", &detached, attempt],
    );
    assert_eq!(reach.code, 0, "the detached commit is not saved");
    repo.fsck();
}

/// `reset` during a rebase stopped on a conflict: the worktree is put back on its branch in
/// place (its ignored files stay), the rebase is over as git sees it, and the commits it
/// was replaying are saved.
#[test]
fn reset_during_a_rebase_keeps_ignored_files_and_ends_the_rebase() {
    let (repo, wt) = repo_ignoring_env();
    ignored_env(&repo, &wt);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { task }\n");
    commit_all(&repo, &wt, "task side");
    let task_tip = repo.git(&wt, &["rev-parse", "HEAD"]);
    repo.write(repo.root(), "src/lib.rs", "pub fn lib() { main }\n");
    commit_all(&repo, repo.root(), "main side");
    assert_ne!(repo.git_run(&wt, &["rebase", "main"]).code, 0);
    assert!(repo.git(&wt, &["status"]).contains("rebase"));
    repo.task(&wt, &["reset", "a"]).ok();
    assert_eq!(repo.read(&wt, ".env"), "SECRET=1\n");
    let status = repo.git(&wt, &["status"]);
    assert!(!status.contains("rebase"), "{status}");
    assert_eq!(
        repo.git(&wt, &["symbolic-ref", "HEAD"]),
        "refs/heads/task/a"
    );
    assert_eq!(repo.porcelain(&wt), "");
    let reach = repo.git_run(
        repo.root(),
        &[
            "merge-base",
            "--is-ancestor",
            &task_tip,
            "refs/tasks/a/attempts/1",
        ],
    );
    assert_eq!(reach.code, 0, "the task's commit is not saved");
    repo.fsck();
}

/// A xorshift sequence for kill delays; its seed is printed so a failure can be repeated
/// (`GIT_TASK_TORTURE_SEED`).
struct Rng(u64);

impl Rng {
    fn new() -> Rng {
        let seed = std::env::var("GIT_TASK_TORTURE_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
            });
        eprintln!("kill loop seed {seed}");
        Rng(seed | 1)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// Runs `git task args..` in `dir` and kills it with SIGKILL after `delay` if it still runs;
/// returns whether it was killed.
fn run_killed(repo: &TestRepo, dir: &Path, args: &[&str], delay: std::time::Duration) -> bool {
    let mut child = task_command(repo, dir, args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + delay;
    loop {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        if std::time::Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return true;
        }
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
}

/// Rounds of a kill loop: `GIT_TASK_KILLS`, else `rounds` (3 in the normal run; 12 in
/// `slow::kills`, which CI runs).
fn kill_rounds(rounds: u64) -> u64 {
    std::env::var("GIT_TASK_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(rounds)
}

/// Whether `text` is the content of `path` in a commit some ref reaches (`git rev-list --all`).
fn in_some_ref(repo: &TestRepo, path: &str, text: &str) -> bool {
    let blob = git_stdin(repo, &["hash-object", "--stdin"], text);
    repo.git(repo.root(), &["rev-list", "--objects", "--all"])
        .lines()
        .any(|l| l.split(' ').next() == Some(blob.as_str()) && l.ends_with(path))
}

/// Adds `n` tracked files to `main`, so that commands have something to write.
fn many_files(repo: &TestRepo, n: usize) {
    for i in 0..n {
        repo.write(
            repo.root(),
            &format!("gen/{}/f{i}.txt", i % 10),
            &format!("{i}\n"),
        );
    }
    commit_all(repo, repo.root(), "many files");
}

/// `reset` of a detached worktree killed anywhere, then `sweep`: either nothing happened (the
/// worktree still detached at its commit, its work there) or the reset is whole (HEAD on the
/// branch at its fresh start, clean); never a worktree left behind its branch.
/// Ignored files always stay; the work is always in the worktree or a ref.
#[test]
fn reset_of_a_detached_worktree_survives_kill_9_anywhere() {
    reset_of_a_detached_worktree_survives_kill_9_anywhere_rounds(3);
}

/// [`reset_of_a_detached_worktree_survives_kill_9_anywhere`] with `rounds` kills.
pub(crate) fn reset_of_a_detached_worktree_survives_kill_9_anywhere_rounds(rounds: u64) {
    let repo = TestRepo::new();
    repo.write(repo.root(), ".gitignore", ".env\n");
    many_files(&repo, 300);
    let mut rng = Rng::new();
    let mut window = 0u64;
    for round in 0..=kill_rounds(rounds) {
        let id = format!("r{round}");
        let wt = repo.start(&id, &[]);
        ignored_env(&repo, &wt);
        let branch = format!("refs/heads/task/{id}");
        for i in 0..40 {
            repo.write(
                &wt,
                &format!("gen/{}/f{i}.txt", i % 10),
                &format!("{id} {i}\n"),
            );
        }
        repo.git(&wt, &["checkout", "-q", "--detach"]);
        commit_all(&repo, &wt, "detached work");
        let detached = repo.git(&wt, &["rev-parse", "HEAD"]);
        let tip = rev(&repo, &branch);
        let wip = format!("wip of {id}\n");
        repo.write(&wt, "wip.txt", &wip);
        // Onto a new base, so that the reset moves the branch.
        repo.write(repo.root(), "README.md", &format!("{id}\n"));
        commit_all(&repo, repo.root(), "main moves on");
        let args = ["reset", id.as_str(), "--onto", "main"];
        if round == 0 {
            // Unkilled, to measure the window the kills fall in.
            let began = std::time::Instant::now();
            repo.task(&wt, &args).ok();
            window = (began.elapsed().as_micros() as u64 * 13 / 10).max(1000);
        } else {
            let delay = std::time::Duration::from_micros(rng.below(window));
            run_killed(&repo, repo.root(), &args, delay);
            repo.task_root(&["sweep"]).ok();
        }
        let context = format!("round {round}");
        assert_eq!(repo.read(&wt, ".env"), "SECRET=1\n", "{context}");
        let now_tip = rev(&repo, &branch);
        match repo
            .git_run(&wt, &["symbolic-ref", "-q", "HEAD"])
            .stdout
            .trim()
        {
            b if b == branch => {
                assert_ne!(now_tip, tip, "{context}: on the branch, which never moved");
                assert_eq!(repo.git(&wt, &["rev-parse", "HEAD"]), now_tip, "{context}");
                assert_eq!(repo.porcelain(&wt), "", "{context}");
                assert!(in_some_ref(&repo, "wip.txt", &wip), "{context}: wip lost");
                let attempts = repo.refs(&format!("refs/tasks/{id}/attempts/"));
                let saved = attempts.iter().any(|a| {
                    repo.git_run(repo.root(), &["merge-base", "--is-ancestor", &detached, a])
                        .code
                        == 0
                });
                assert!(saved, "{context}: the detached commit is lost");
            }
            "" => {
                assert_eq!(
                    now_tip, tip,
                    "{context}: the branch moved, the worktree stayed"
                );
                assert_eq!(repo.git(&wt, &["rev-parse", "HEAD"]), detached, "{context}");
                assert_eq!(repo.porcelain(&wt), "?? wip.txt", "{context}");
            }
            other => panic!("{context}: HEAD is {other}"),
        }
        repo.task_root(&["remove", "--force", &id]).ok();
    }
    repo.fsck();
}

/// A `reset` of a detached worktree killed after its branch moved but before the worktree's
/// HEAD was put back on it: `sweep` finishes from the journal (HEAD attached, files and index
/// at the branch), saving what the files held first.
#[test]
fn a_reset_killed_before_it_attached_head_is_finished_from_the_journal() {
    let repo = TestRepo::new();
    let wt = repo.start("rw", &[]);
    let start = repo.git(&wt, &["rev-parse", "HEAD"]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { detached }\n");
    repo.git(&wt, &["checkout", "-q", "--detach"]);
    commit_all(&repo, &wt, "detached work");
    // The reset's transaction moved the branch (here: to a commit of its own), then died.
    repo.git(&wt, &["commit", "-q", "--allow-empty", "-m", "new start"]);
    let moved = repo.git(&wt, &["rev-parse", "HEAD"]);
    repo.git(&wt, &["checkout", "-q", "--detach", "HEAD~1"]);
    repo.git(
        repo.root(),
        &["update-ref", "refs/heads/task/rw", &moved, &start],
    );
    let base_tree = rev(&repo, &format!("{start}^{{tree}}"));
    let dead = 4_000_000_003u32;
    let journal = serde_json::json!({
        "pid": dead, "created": 1, "step": "in_place", "task": "rw",
        "worktree": wt, "files": base_tree, "index": base_tree, "head": moved,
        "attach": "refs/heads/task/rw",
    });
    repo.write(
        repo.root(),
        &format!(".git/git-task/journal/{dead}.0.json"),
        &journal.to_string(),
    );
    let j = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(problems(&j), ["interrupted_in_place_update"], "{j}");
    assert_eq!(
        repo.git(&wt, &["symbolic-ref", "HEAD"]),
        "refs/heads/task/rw"
    );
    assert_eq!(repo.read(&wt, "src/lib.rs"), "pub fn lib() {}\n");
    // The detached files were saved before they were rewritten.
    assert!(in_some_ref(
        &repo,
        "src/lib.rs",
        "pub fn lib() { detached }\n"
    ));
    repo.fsck();
}

/// `pool drain` and a pooled `start`, killed anywhere while an entry holds someone's work,
/// then `sweep`: the work is in the entry (still there) or saved under a ref, and git sees
/// no worktree registered without its directory nor a pool directory without its ref.
#[test]
fn pool_discards_of_a_used_entry_survive_kill_9_anywhere() {
    pool_discards_of_a_used_entry_survive_kill_9_anywhere_rounds(3);
}

/// [`pool_discards_of_a_used_entry_survive_kill_9_anywhere`] with `rounds` kills.
pub(crate) fn pool_discards_of_a_used_entry_survive_kill_9_anywhere_rounds(rounds: u64) {
    let repo = TestRepo::new();
    many_files(&repo, 300);
    let mut rng = Rng::new();
    let mut windows = [0u64; 2];
    for round in 0..=kill_rounds(rounds) {
        let entry = fill_pool(&repo, "1").remove(0);
        let work = format!("work of round {round}\n");
        repo.write(&entry, "notes/work.txt", &work);
        let id = format!("p{round}");
        let which = (round % 2) as usize;
        let args: Vec<&str> = match which {
            0 => vec!["pool", "drain"],
            _ => vec!["start", id.as_str()],
        };
        if round < 2 {
            let began = std::time::Instant::now();
            repo.task_root(&args).ok();
            windows[which] = (began.elapsed().as_micros() as u64 * 13 / 10).max(1000);
        } else {
            let delay = std::time::Duration::from_micros(rng.below(windows[which]));
            run_killed(&repo, repo.root(), &args, delay);
        }
        repo.task_root(&["sweep"]).ok();
        let context = format!("round {round} ({args:?})");
        let kept = std::fs::read_to_string(entry.join("notes/work.txt")).ok() == Some(work.clone());
        assert!(
            kept || in_some_ref(&repo, "notes/work.txt", &work),
            "{context}: the work is lost"
        );
        let list = repo.git(repo.root(), &["worktree", "list", "--porcelain"]);
        assert!(!list.contains("prunable"), "{context}:\n{list}");
        let refs = repo.refs("refs/task-pool/");
        for dir in std::fs::read_dir(entry.parent().unwrap())
            .unwrap()
            .flatten()
        {
            let name = dir.file_name().to_string_lossy().into_owned();
            if name.starts_with(".pool-") && !name.contains(".removing-") {
                assert!(
                    refs.iter().any(|r| r.ends_with(&name[1..])),
                    "{context}: '{name}' has no ref"
                );
            }
        }
        repo.task_root(&["pool", "drain"]).ok();
        repo.task_root(&["remove", "--force", &id]).ok();
    }
    repo.fsck();
}

/// Makes `<common>/worktrees/<name>` as an add killed before it wrote `gitdir` leaves it (an
/// empty `gitdir`), dated `age` ago.
fn half_added_entry(repo: &TestRepo, name: &str, age: &str) -> PathBuf {
    let dir = repo.root().join(".git").join("worktrees").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("gitdir"), "").unwrap();
    std::fs::write(dir.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    for path in [dir.join("gitdir"), dir.clone()] {
        let touch = std::process::Command::new("touch")
            .args(["-d", age])
            .arg(&path)
            .status()
            .unwrap();
        assert!(touch.success());
    }
    dir
}

/// A worktree add killed between making its administrative entry and writing its `gitdir`
/// (gix writes the file in two steps) left an entry that made every later `start` and `pool
/// fill` fail ("Refusing to read an empty path"), and that `sweep` did not see. A `start` now
/// registers its worktree without reading the other entries (`git::worktree::register`): such
/// an entry, old or a moment old, blocks nothing, and `sweep` deletes it.
#[test]
fn a_worktree_add_killed_before_its_gitdir_was_written_blocks_nothing() {
    let repo = TestRepo::new();
    let old = half_added_entry(&repo, "killed", "1 hour ago");
    let young = half_added_entry(&repo, "just-killed", "now");
    repo.start("a", &[]);
    // Filled in the foreground: no start takes an entry after it, so no refill runs meanwhile.
    repo.task_root(&["pool", "fill", "1", "--wait"]).ok();
    assert!(old.exists() && young.exists(), "left to sweep");
    // Later: an entry a moment old could still be another add's.
    half_added_entry(&repo, "just-killed", "1 hour ago");
    let sweep = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(
        problems(&sweep),
        ["half_added_worktree", "half_added_worktree"],
        "{sweep}"
    );
    assert!(!old.exists() && !young.exists());
    let list = repo.git(repo.root(), &["worktree", "list", "--porcelain"]);
    assert!(!list.contains("prunable"), "{list}");
    repo.fsck();
}

/// A repository `main` whose `sub` is a submodule, and task `a` with it checked out, a commit
/// made in it that exists nowhere else, and an uncommitted file; returns (worktree, commit).
fn task_with_a_submodule(repo: &TestRepo) -> (PathBuf, String) {
    let upstream = repo.base().join("upstream");
    std::fs::create_dir_all(&upstream).unwrap();
    repo.git(&upstream, &["init", "-q", "-b", "main"]);
    repo.write(&upstream, "s.txt", "upstream\n");
    commit_all(repo, &upstream, "upstream");
    let allow = ["-c", "protocol.file.allow=always"];
    let mut add = allow.to_vec();
    add.extend(["submodule", "add", "-q", upstream.to_str().unwrap(), "sub"]);
    repo.git(repo.root(), &add);
    commit_all(repo, repo.root(), "add sub");
    let wt = repo.start("a", &[]);
    let mut init = allow.to_vec();
    init.extend(["submodule", "update", "--init", "-q"]);
    repo.git(&wt, &init);
    let sub = wt.join("sub");
    repo.write(&sub, "local.txt", "only here\n");
    commit_all(repo, &sub, "a commit made only in the task's submodule");
    let commit = repo.git(&sub, &["rev-parse", "HEAD"]);
    repo.write(&sub, "wip.txt", "uncommitted in the submodule\n");
    (wt, commit)
}

/// `remove` (not even `--force`) of a task whose worktree has a submodule checked out: the
/// worktree looked clean, and the submodule's repository (in the worktree's administrative
/// directory) went with it, with a commit that existed nowhere else. It is refused now.
#[test]
fn remove_refuses_a_worktree_holding_submodule_repositories() {
    let repo = TestRepo::new();
    let (wt, commit) = task_with_a_submodule(&repo);
    let before = all_refs(&repo);
    let run = repo.task_root(&["remove", "a"]).code(1);
    assert!(run.stderr.contains("sub"), "{run}");
    assert_eq!(all_refs(&repo), before);
    assert_eq!(repo.git(&wt.join("sub"), &["rev-parse", "HEAD"]), commit);
    repo.fsck();
}

/// `remove --force` moves each submodule, its repository inside, into the task's attic: the
/// commit and the uncommitted file are there, and git reads it as a repository.
#[test]
fn remove_force_moves_submodules_into_the_attic() {
    let repo = TestRepo::new();
    let (wt, commit) = task_with_a_submodule(&repo);
    let run = repo.task_root(&["remove", "--force", "a", "--json"]).ok();
    let attic = PathBuf::from(run.json()["attic"].as_str().expect("an attic").to_owned());
    let sub = attic.join("sub");
    assert_eq!(repo.git(&sub, &["rev-parse", "HEAD"]), commit);
    assert_eq!(repo.read(&sub, "wip.txt"), "uncommitted in the submodule\n");
    assert_eq!(repo.git(&sub, &["status", "--porcelain"]), "?? wip.txt");
    assert!(!wt.exists());
    let list = repo.git(repo.root(), &["worktree", "list", "--porcelain"]);
    assert!(!list.contains("prunable"), "{list}");
    repo.fsck();
}

/// A merge of such a task lands, and keeps the worktree and its branch instead of deleting
/// the submodule's repository with it.
#[test]
fn merge_keeps_a_worktree_holding_submodule_repositories() {
    let repo = TestRepo::new();
    let (wt, commit) = task_with_a_submodule(&repo);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { merged }\n");
    repo.git(&wt, &["add", "src/lib.rs"]);
    repo.git(&wt, &["commit", "-q", "-m", "work"]);
    let run = repo.task_root(&["merge", "a", "--no-checks"]).ok();
    assert!(run.stderr.contains("submodules"), "{run}");
    assert_eq!(show(&repo, "main", "src/lib.rs"), "pub fn lib() { merged }");
    assert_eq!(repo.git(&wt.join("sub"), &["rev-parse", "HEAD"]), commit);
    repo.fsck();
}

/// `adopt` and `merge --remote`, killed anywhere, then `sweep` and the same command again:
/// it finishes, the task's work lands on the remote exactly once, and git finds the machine
/// and the remote whole.
#[test]
fn adopt_and_merge_remote_survive_kill_9_anywhere() {
    adopt_and_merge_remote_survive_kill_9_anywhere_rounds(3);
}

/// [`adopt_and_merge_remote_survive_kill_9_anywhere`] with `rounds` kills.
pub(crate) fn adopt_and_merge_remote_survive_kill_9_anywhere_rounds(rounds: u64) {
    let repo = TestRepo::new();
    let bare = super::remote::bare_remote(&repo);
    super::remote::publish(&repo, bare.to_str().unwrap());
    let two = super::remote::machine(&repo, bare.to_str().unwrap(), "two");
    let mut rng = Rng::new();
    let mut windows = [0u64; 2];
    for round in 0..=kill_rounds(rounds) {
        let id = format!("m{round}");
        let allow = format!("{id}/**");
        let wt = PathBuf::from(
            repo.task_root(&["start", &id, "--allow", &allow])
                .ok()
                .out(),
        );
        let work = format!("work of {id}\n");
        repo.write(&wt, &format!("{id}/work.txt"), &work);
        commit_all(&repo, &wt, "work");
        repo.task_root(&["push", &id]).ok();
        repo.task(&two, &["fetch"]).ok();
        for (which, args) in [
            vec!["adopt", id.as_str()],
            vec!["merge", id.as_str(), "--remote", "origin", "--no-checks"],
        ]
        .into_iter()
        .enumerate()
        {
            let context = format!("round {round} {args:?}");
            if round == 0 {
                let began = std::time::Instant::now();
                repo.task(&two, &args).ok();
                windows[which] = (began.elapsed().as_micros() as u64 * 13 / 10).max(1000);
            } else {
                let delay = std::time::Duration::from_micros(rng.below(windows[which]));
                run_killed(&repo, &two, &args, delay);
                let sweep = repo.task(&two, &["sweep"]);
                assert_eq!(sweep.code, 0, "{context}: {sweep}");
                let again = repo.task(&two, &args);
                assert_eq!(again.code, 0, "{context}: again: {again}");
            }
            let list = repo.git(&two, &["worktree", "list", "--porcelain"]);
            assert!(!list.contains("prunable"), "{context}:\n{list}");
        }
        let context = format!("round {round}");
        assert_eq!(
            repo.git(&bare, &["show", &format!("main:{id}/work.txt")]),
            work.trim_end(),
            "{context}"
        );
        let landings = repo.git(
            &bare,
            &[
                "log",
                "--format=%s",
                "main",
                "--",
                &format!("{id}/work.txt"),
            ],
        );
        assert_eq!(landings.lines().count(), 1, "{context}: landed {landings}");
        for dir in [repo.root(), two.as_path(), bare.as_path()] {
            let fsck = repo.git_run(dir, &["fsck", "--no-progress", "--no-dangling"]);
            assert_eq!(fsck.code, 0, "{context}: {fsck}");
        }
        repo.task_root(&["remove", "--force", &id]).ok();
        repo.git(repo.root(), &["pull", "-q", "origin", "main"]);
    }
}

/// A ref transaction killed while gix held `packed-refs.lock` (it takes it in every
/// transaction, creations included, but the journal named it only for deletions): the lock
/// stayed, every later transaction failed as "changed meanwhile", and `sweep` saw nothing.
#[test]
fn a_packed_refs_lock_left_by_a_killed_transaction_is_deleted() {
    let repo = TestRepo::new();
    let lock = repo.root().join(".git").join("packed-refs.lock");
    std::fs::write(&lock, "").unwrap();
    let dead = 4_000_000_003u32;
    let record_lock = repo.root().join(".git/refs/tasks/x/record.lock");
    let journal = serde_json::json!({
        "pid": dead, "created": 1, "step": "ref_locks", "locks": [record_lock],
        "updates": [{"name": "refs/tasks/x/record", "old": null,
                     "new": rev(&repo, "HEAD"), "message": "git-task: start x"}],
    });
    repo.write(
        repo.root(),
        &format!(".git/git-task/journal/{dead}.0.json"),
        &journal.to_string(),
    );
    let j = repo.task_root(&["sweep", "--json"]).ok().json();
    assert_eq!(problems(&j), ["interrupted_ref_update"], "{j}");
    assert!(!lock.exists(), "{j}");
    repo.start("x", &[]);
    repo.fsck();
}

/// An `adopt` killed between making the task's `frozen/<id>` directory and writing the digest
/// in it: the next `adopt` took the directory for a digest on file and wrote none, so
/// the gate refused every merge of the task as `record_tampered`, for good.
#[test]
fn an_adopt_killed_before_it_wrote_the_digest_leaves_the_task_mergeable() {
    let repo = TestRepo::new();
    let bare = super::remote::bare_remote(&repo);
    super::remote::publish(&repo, bare.to_str().unwrap());
    let two = super::remote::machine(&repo, bare.to_str().unwrap(), "two");
    let wt = PathBuf::from(
        repo.task_root(&["start", "t", "--allow", "t/**"])
            .ok()
            .out(),
    );
    repo.write(&wt, "t/work.txt", "work\n");
    commit_all(&repo, &wt, "work");
    repo.task_root(&["push", "t"]).ok();
    // What the kill left: the directory, and the digest's temporary file.
    let frozen = two.join(".git/git-task/frozen/t");
    std::fs::create_dir_all(&frozen).unwrap();
    std::fs::write(frozen.join(".0123abc.Xy12.tmp"), "").unwrap();
    repo.task(&two, &["adopt", "t"]).ok();
    repo.task(&two, &["merge", "t", "--remote", "origin", "--no-checks"])
        .ok();
    assert_eq!(repo.git(&bare, &["show", "main:t/work.txt"]), "work");
}

/// A merge killed between making its branch lock and writing its pid in it left an empty lock
/// that no one could tell was abandoned: every later merge into that branch waited a minute
/// and failed.
#[test]
fn an_empty_merge_lock_left_by_a_kill_is_taken_over() {
    let repo = TestRepo::new();
    let wt = repo.start("t", &[]);
    repo.write(&wt, "src/lib.rs", "pub fn lib() { merged }\n");
    commit_all(&repo, &wt, "work");
    let locks = repo.root().join(".git/git-task/locks");
    std::fs::create_dir_all(&locks).unwrap();
    let lock = locks.join("merge-refs%heads%main.lock");
    std::fs::write(&lock, "").unwrap();
    let touch = std::process::Command::new("touch")
        .args(["-d", "1 hour ago"])
        .arg(&lock)
        .status()
        .unwrap();
    assert!(touch.success());
    let began = std::time::Instant::now();
    repo.task_root(&["merge", "t", "--no-checks"]).ok();
    assert!(began.elapsed() < std::time::Duration::from_secs(30));
    assert_eq!(show(&repo, "main", "src/lib.rs"), "pub fn lib() { merged }");
    assert!(!lock.exists());
}

/// `claim`, `release` and `drop` (which releases), killed anywhere, then `sweep` and the same
/// command again: it finishes, and the claims then are exactly what the commands asked for,
/// as another task's `start` sees them.
#[test]
fn claim_release_and_drop_survive_kill_9_anywhere() {
    claim_release_and_drop_survive_kill_9_anywhere_rounds(3);
}

/// [`claim_release_and_drop_survive_kill_9_anywhere`] with `rounds` kills.
pub(crate) fn claim_release_and_drop_survive_kill_9_anywhere_rounds(rounds: u64) {
    let repo = TestRepo::new();
    let mut rng = Rng::new();
    let mut windows = [0u64; 3];
    for round in 0..=kill_rounds(rounds) {
        let id = format!("c{round}");
        repo.start(&id, &[]);
        let glob = format!("claimed{round}/**");
        let steps: [Vec<&str>; 3] = [
            vec!["claim", id.as_str(), glob.as_str()],
            vec!["release", id.as_str(), glob.as_str()],
            vec!["drop", id.as_str()],
        ];
        for (which, args) in steps.iter().enumerate() {
            let context = format!("round {round} {args:?}");
            if round == 0 {
                let began = std::time::Instant::now();
                repo.task_root(args).ok();
                windows[which] = (began.elapsed().as_micros() as u64 * 13 / 10).max(1000);
            } else {
                let delay = std::time::Duration::from_micros(rng.below(windows[which]));
                run_killed(&repo, repo.root(), args, delay);
                let sweep = repo.task_root(&["sweep"]);
                assert_eq!(sweep.code, 0, "{context}: {sweep}");
                let again = repo.task_root(args);
                assert_eq!(again.code, 0, "{context}: again: {again}");
            }
            // Another task that needs the path may start exactly when no claim holds it.
            let other = format!("o{round}x{which}");
            let allow = format!("claimed{round}/x");
            let run = repo.task_root(&["start", &other, "--allow", &allow]);
            match which {
                0 => assert_ne!(run.code, 0, "{context}: the claim does not hold: {run}"),
                _ => {
                    assert_eq!(run.code, 0, "{context}: a claim is left: {run}");
                    repo.task_root(&["remove", "--force", &other]).ok();
                }
            }
        }
        repo.task_root(&["remove", "--force", &id]).ok();
        let sweep = repo.task_root(&["sweep", "--json"]).ok().json();
        assert!(problems(&sweep).is_empty(), "round {round}: {sweep}");
    }
    repo.fsck();
}

/// A second `start` of a task another process is still making (its setup runs) is refused,
/// not handed a path that a failing setup would roll back with whatever was written there;
/// once the first start is done, `start` reports the task as usual.
#[test]
fn a_start_of_a_task_still_being_made_is_refused() {
    let repo = TestRepo::new();
    let mut first = repo
        .command(crate::common::bin(), repo.root())
        .args(["start", "slow", "--setup", "sleep 3"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let record = repo.root().join(".git/refs/tasks/slow/record");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !record.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let run = repo.task_root(&["start", "slow"]).code(2);
    assert!(run.stderr.contains("still being started"), "{run}");
    assert!(first.wait().unwrap().success());
    repo.task_root(&["start", "slow"]).ok();
}
