//! Kill -9 torture (issue 12, SPEC §2.7 and §11): every mutating command is killed with
//! SIGKILL at random instants, then `git task sweep` runs, and git is the oracle:
//!
//! - `git fsck` finds no missing or broken object;
//! - no `index.lock` in any worktree's git dir, no git-task temporary file
//!   (`*.git-task-*.tmp`) in any worktree;
//! - task branches and registered worktrees match one to one, every registered
//!   worktree exists, every task branch's worktree has that branch checked out;
//! - every worktree shows no change (`git status`) except the paths the test itself
//!   left uncommitted there (the user's changes may stay, nothing else);
//! - every piece of work the test made (committed or not) is still somewhere: in its file,
//!   or in an object reachable from a ref (the branch, an attempt, a checkpoint, the base).
//!
//! The landing queue (issue 33) adds its own invariants ([`Torture::check_queue`]): every
//! `refs/tasks/_queue/*` holds a `queue.toml` that `queue status` reads; after `queue add` is
//! killed each task is queued with one `queued` event or not queued with none; after `queue run`
//! is killed (three tasks with committed work and a check, one of which fails it, so the runner
//! batches, bisects, lands and ejects through the merge gate) each task is landed on `main` once
//! with its work, or still on its branch, queued or ejected; then the next `queue run` finishes:
//! every good task landed exactly once (one commit, one `landed` and one `merged` event), the bad
//! one ejected once with its branch intact, never landed; the gate's checkouts (once their
//! detached settles are done) are reused (no more than the runner's `--jobs`), whole, with no
//! `index.lock` left; and the repository passes the checks above again.
//!
//! The tests are in CI's slow step (`slow::torture`; one kill of each command takes ~16 s, too
//! long for the normal run): each command killed once on a repository of 60 files, and a few
//! times (`GIT_TASK_TORTURE_N`, default 2) on 300 (`GIT_TASK_TORTURE_FILES`);
//! `bench/torture.sh N` runs long ones. The
//! delay before each kill is uniform in [0, 1.3 × the command's duration unkilled], measured
//! once per command. `GIT_TASK_TORTURE_SEED` repeats a run; `GIT_TASK_TORTURE_ONLY` picks
//! commands (comma-separated); `GIT_TASK_TORTURE_BIN` runs another build of git-task.

use crate::common::*;
use crate::common::{bin, Run, TestRepo};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn task_bin() -> PathBuf {
    std::env::var_os("GIT_TASK_TORTURE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(bin)
}

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
}

/// What one round left uncommitted (paths under a worktree) and what it made that must survive.
#[derive(Default)]
struct Work {
    /// (worktree, path) pairs the test changed without committing: allowed in `git status`.
    dirty: Vec<(PathBuf, String)>,
    /// (worktree, path, content) of every piece of work: the file, or an object reachable from a ref.
    keep: Vec<(PathBuf, String, String)>,
    /// The tasks a queue round queued (or is queueing), in order.
    queued: Vec<Queued>,
}

/// A task of a queue round: its id, whether its check fails, its committed files (path, content).
struct Queued {
    id: String,
    bad: bool,
    files: Vec<(String, String)>,
}

/// The check of every task of a queue round: it fails on a tree that holds `qbad/`, which only
/// the round's bad task adds.
const QUEUE_CHECK: &str = "test ! -d qbad";

/// A queue round runs with `--jobs 1` or up to this many (checks of prefixes at once).
const QUEUE_JOBS: u64 = 2;

struct Torture {
    repo: TestRepo,
    files: Vec<String>,
    rng: Rng,
    /// A linked worktree of the user's own branch, where patch-mode tasks run.
    patch_wt: PathBuf,
    round: u64,
}

impl Torture {
    fn new(nfiles: u64, seed: u64) -> Torture {
        let repo = TestRepo::new();
        let mut files = Vec::new();
        for i in 0..nfiles {
            let rel = format!("mod{:02}/sub{}/f{i:05}.txt", i / 100, (i / 10) % 10);
            let body = format!("file {i}\n{}\n", "line of text\n".repeat((i % 20) as usize));
            repo.write(repo.root(), &rel, &body);
            files.push(rel);
        }
        // No background `git gc --auto` (started by the test's own git commands) packing and
        // pruning loose objects while `git fsck` reads them.
        repo.git(repo.root(), &["config", "gc.auto", "0"]);
        repo.git(repo.root(), &["config", "maintenance.auto", "false"]);
        repo.git(repo.root(), &["add", "-A"]);
        repo.git(repo.root(), &["commit", "-q", "-m", "files"]);
        let patch_wt = repo.base().join("patch-wt");
        repo.git(
            repo.root(),
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "user",
                patch_wt.to_str().unwrap(),
            ],
        );
        Torture {
            repo,
            files,
            rng: Rng(seed | 1),
            patch_wt,
            round: 0,
        }
    }

    fn cmd(&self, dir: &Path, args: &[&str]) -> std::process::Command {
        let mut c = self.repo.command(task_bin(), dir);
        c.args(args);
        c
    }

    fn task(&self, dir: &Path, args: &[&str]) -> Run {
        let out = self.cmd(dir, args).output().unwrap();
        Run::of(out)
    }

    /// Picks `n` distinct tracked files.
    fn pick(&mut self, n: usize) -> Vec<String> {
        let mut out = BTreeSet::new();
        while out.len() < n.min(self.files.len()) {
            let i = self.rng.below(self.files.len() as u64) as usize;
            out.insert(self.files[i].clone());
        }
        out.into_iter().collect()
    }

    /// Changes `n` files of `wt` (plus one new file), noting them as work to keep.
    fn edit(&mut self, wt: &Path, n: usize, tag: &str, work: &mut Work, commit: bool) {
        let round = self.round;
        let mut paths = self.pick(n);
        paths.push(format!("new/{tag}-{round}.txt"));
        for p in &paths {
            let content = format!("{tag} {round} {p}\n");
            self.repo.write(wt, p, &content);
            work.keep.push((wt.to_path_buf(), p.clone(), content));
            if !commit {
                work.dirty.push((wt.to_path_buf(), p.clone()));
            }
        }
        if commit {
            self.repo.git(wt, &["add", "-A"]);
            self.repo
                .git(wt, &["commit", "-q", "-m", &format!("{tag} {round}")]);
        }
    }

    fn start(&self, id: &str) -> PathBuf {
        let run = self.task(self.repo.root(), &["start", id]).ok();
        PathBuf::from(run.out())
    }

    /// Starts `n` tasks `<id>-<k>` with the check [`QUEUE_CHECK`], each with committed work on
    /// files of its own (no two meet: none is ejected for a conflict); task `bad` also commits a
    /// file its check fails on.
    fn queue_tasks(&mut self, id: &str, n: usize, bad: Option<usize>, work: &mut Work) {
        let round = self.round;
        let files = self.pick(3 * n);
        for k in 0..n {
            let tid = format!("{id}-{k}");
            let run = self
                .task(self.repo.root(), &["start", &tid, "--check", QUEUE_CHECK])
                .ok();
            let wt = PathBuf::from(run.out());
            let mut paths = files[3 * k..3 * k + 3].to_vec();
            paths.push(format!("new/{tid}.txt"));
            if bad == Some(k) {
                paths.push(format!("qbad/{tid}.txt"));
            }
            let mut task = Queued {
                id: tid.clone(),
                bad: bad == Some(k),
                files: Vec::new(),
            };
            for p in paths {
                let content = format!("{tid} {round} {p}\n");
                self.repo.write(&wt, &p, &content);
                work.keep.push((wt.clone(), p.clone(), content.clone()));
                task.files.push((p, content));
            }
            self.repo.git(&wt, &["add", "-A"]);
            self.repo.git(&wt, &["commit", "-q", "-m", &tid]);
            work.queued.push(task);
        }
    }

    /// Sets up round `self.round` of `command`; returns the id, where it runs, its arguments, and the work.
    fn prepare(&mut self, command: &str) -> (String, PathBuf, Vec<String>, Work) {
        self.round += 1;
        let id = format!("{command}-{}", self.round);
        let mut work = Work::default();
        let root = self.repo.root().to_path_buf();
        let args: Vec<String> = match command {
            "start" => vec!["start".into(), id.clone()],
            "merge" => {
                let wt = self.start(&id);
                let n = self.files.len() / 4;
                self.edit(&wt, n, "merge", &mut work, true);
                vec!["merge".into(), id.clone(), "--no-checks".into()]
            }
            "remove" => {
                let wt = self.start(&id);
                self.edit(&wt, 5, "rm-commit", &mut work, true);
                self.edit(&wt, 20, "rm-dirty", &mut work, false);
                vec!["remove".into(), id.clone(), "--force".into()]
            }
            "reset" => {
                let wt = self.start(&id);
                self.edit(&wt, 5, "reset-commit", &mut work, true);
                self.edit(&wt, 40, "reset-dirty", &mut work, false);
                vec!["reset".into(), id.clone()]
            }
            "revert" => {
                let wt = self.start(&id);
                self.edit(&wt, 60, "revert-dirty", &mut work, false);
                vec!["revert".into(), id.clone()]
            }
            "checkpoint" => {
                let wt = self.start(&id);
                self.edit(&wt, 60, "cp-dirty", &mut work, false);
                vec!["checkpoint".into(), id.clone(), "-m".into(), "cp".into()]
            }
            "commit" => {
                let wt = self.start(&id);
                self.edit(&wt, 60, "commit-dirty", &mut work, false);
                vec!["commit".into(), id.clone(), "-m".into(), "work".into()]
            }
            "sync" => {
                let wt = self.start(&id);
                self.edit(&wt, 5, "sync-commit", &mut work, true);
                // The base moves on: other files change on main.
                let round = self.round;
                for p in self.pick(self.files.len() / 4) {
                    if work.keep.iter().any(|(_, q, _)| *q == p) {
                        continue;
                    }
                    self.repo.write(&root, &p, &format!("main {round} {p}\n"));
                }
                self.repo
                    .git(&root, &["commit", "-q", "-am", "main moves on"]);
                vec!["sync".into(), id.clone()]
            }
            // A patch-mode start reads the worktree and writes its snapshot (one pack): killed
            // anywhere, the user's uncommitted work stays where it was.
            "patch-start" => {
                let wt = self.patch_wt.clone();
                self.edit(&wt, 60, "patch-start-dirty", &mut work, false);
                vec!["start".into(), id.clone(), "--mode".into(), "patch".into()]
            }
            "patch-revert" => {
                let wt = self.patch_wt.clone();
                self.task(&wt, &["start", &id, "--mode", "patch"]).ok();
                self.edit(&wt, 60, "patch-dirty", &mut work, false);
                vec!["revert".into(), id.clone()]
            }
            // The warm pool: a fill, a start taking an entry filled before the base moved on,
            // and the background refill (the command line `start` spawns), each killed anywhere.
            "pool-fill" => vec!["pool".into(), "fill".into(), "1".into(), "--wait".into()],
            "pool-start" => {
                self.task(&root, &["pool", "fill", "1", "--wait"]).ok();
                let round = self.round;
                for p in self.pick(self.files.len() / 10) {
                    self.repo.write(&root, &p, &format!("main {round} {p}\n"));
                }
                self.repo
                    .git(&root, &["commit", "-q", "-am", "main moves on"]);
                vec!["start".into(), id.clone()]
            }
            "pool-refill" => {
                self.task(&root, &["pool", "fill", "1", "--wait"]).ok();
                vec![
                    "pool".into(),
                    "fill".into(),
                    "2".into(),
                    "--base".into(),
                    "main".into(),
                    "--wait".into(),
                    "--detached".into(),
                ]
            }
            // The landing queue: `queue add` writes the queue's ref and the tasks' `queued`
            // events in one transaction; killed, each task is queued or not, never half.
            "queue-add" => {
                self.queue_tasks(&id, 2, None, &mut work);
                let mut args = vec!["queue".to_owned(), "add".to_owned()];
                args.extend(work.queued.iter().map(|q| q.id.clone()));
                args
            }
            // The runner, killed anywhere: while it lands a batch, bisects a failing one (one
            // of the three tasks fails its check; with `--jobs 2`, by checking prefixes at
            // once), ejects, records, or its gate checkout is made or moved. The next
            // `queue run` finishes the queue.
            "queue-run" => {
                let bad = self.rng.below(3) as usize;
                self.queue_tasks(&id, 3, Some(bad), &mut work);
                let mut add = vec!["queue", "add"];
                add.extend(work.queued.iter().map(|q| q.id.as_str()));
                self.task(&root, &add).ok();
                // Every other round checks prefixes of the failing batch at once.
                let jobs = 1 + self.rng.below(QUEUE_JOBS);
                vec![
                    "queue".into(),
                    "run".into(),
                    "--jobs".into(),
                    jobs.to_string(),
                ]
            }
            other => panic!("unknown command {other}"),
        };
        let dir = if command.starts_with("patch-") {
            self.patch_wt.clone()
        } else {
            root
        };
        (id, dir, args, work)
    }

    /// Ends whatever the round left, so the next round starts from a clean repository.
    fn finish(&mut self, command: &str, id: &str, work: &Work) -> Result<(), String> {
        if command.starts_with("queue-") {
            let root = self.repo.root().to_path_buf();
            for q in &work.queued {
                let run = self.task(&root, &["queue", "remove", &q.id]);
                if run.code != 0 {
                    return Err(format!("clean-up 'queue remove {}' failed:\n{run}", q.id));
                }
                if self.branch_exists(&q.id) {
                    let run = self.task(&root, &["remove", &q.id, "--force"]);
                    if run.code != 0 {
                        return Err(format!("clean-up 'remove {} --force' failed:\n{run}", q.id));
                    }
                }
            }
            return Ok(());
        }
        if command.starts_with("patch-") {
            // The patch worktree goes back to its branch tip; the work was checked already.
            let wt = self.patch_wt.clone();
            let run = self.task(&wt, &["revert", id, "--json"]);
            let _ = run;
            let _ = self.task(&wt, &["merge", id, "--no-checks"]);
            for args in [&["reset", "-q", "--hard"][..], &["clean", "-qfd"][..]] {
                let run = self.repo.git_run(&wt, args);
                if run.code != 0 {
                    return Err(format!("clean-up 'git {args:?}' failed:\n{run}"));
                }
            }
            return Ok(());
        }
        let run = self.task(self.repo.root(), &["remove", id, "--force"]);
        if run.code != 0 {
            return Err(format!("clean-up 'remove {id} --force' failed:\n{run}"));
        }
        if command.starts_with("pool-") {
            let run = self.task(self.repo.root(), &["pool", "drain"]);
            if run.code != 0 {
                return Err(format!("clean-up 'pool drain' failed:\n{run}"));
            }
        }
        // The main worktree is kept clean by every round.
        Ok(())
    }

    /// After a failure, makes the repository consistent by hand so the next round is judged on its own.
    fn force_consistent(&self) {
        let repo = &self.repo;
        let root = repo.root();
        let _ = self.task(root, &["sweep"]);
        let _ = self.task(root, &["pool", "drain"]);
        let common = root.join(".git");
        let _ = std::fs::remove_file(common.join("index.lock"));
        if let Ok(entries) = std::fs::read_dir(common.join("worktrees")) {
            for e in entries.flatten() {
                let _ = std::fs::remove_file(e.path().join("index.lock"));
            }
        }
        let _ = repo.git_run(root, &["worktree", "prune"]);
        // The gate's checkouts go: the next merge with checks makes a new one.
        wait_for_gate_settles(root);
        let _ = std::fs::remove_dir_all(common.join("git-task/gate"));
        for dir in [root.to_path_buf(), self.patch_wt.clone()] {
            for tmp in temp_files(&dir) {
                let _ = std::fs::remove_file(tmp);
            }
            let _ = repo.git_run(&dir, &["reset", "-q", "--hard"]);
            let _ = repo.git_run(&dir, &["clean", "-qfd"]);
        }
        for b in repo.refs("refs/heads/task/") {
            let id = b.trim_start_matches("refs/heads/task/").to_owned();
            let _ = self.task(root, &["remove", &id, "--force"]);
        }
    }

    /// Asserts the invariants; returns every violation found.
    fn check(&self, work: &Work) -> Vec<String> {
        let repo = &self.repo;
        let root = repo.root();
        let mut bad = Vec::new();
        // A start that took a pool entry refills the pool in a detached process of its own,
        // which the kill does not reach: the repository is judged once that is done.
        wait_for_pool_fillers(root);
        let fsck = repo.git_run(root, &["fsck", "--no-progress", "--no-dangling"]);
        if fsck.code != 0 || fsck.stdout.contains("missing") || fsck.stderr.contains("error") {
            bad.push(format!("git fsck:\n{fsck}"));
        }
        // Worktrees as git sees them.
        let list = repo.git(root, &["worktree", "list", "--porcelain"]);
        let mut worktrees: Vec<(PathBuf, Option<String>, bool)> = Vec::new();
        for block in list.split("\n\n") {
            let mut path = None;
            let mut branch = None;
            let mut prunable = false;
            for line in block.lines() {
                if let Some(p) = line.strip_prefix("worktree ") {
                    path = Some(PathBuf::from(p));
                } else if let Some(b) = line.strip_prefix("branch ") {
                    branch = Some(b.to_owned());
                } else if line.starts_with("prunable") {
                    prunable = true;
                }
            }
            if let Some(p) = path {
                worktrees.push((p, branch, prunable));
            }
        }
        let branches: BTreeSet<String> = repo.refs("refs/heads/task/").into_iter().collect();
        for (path, branch, prunable) in &worktrees {
            if *prunable || !path.exists() {
                bad.push(format!(
                    "worktree '{}' is registered but gone",
                    path.display()
                ));
                continue;
            }
            if let Some(b) = branch {
                if b.starts_with("refs/heads/task/") && !branches.contains(b) {
                    bad.push(format!(
                        "worktree '{}' has '{b}' checked out, which does not exist",
                        path.display()
                    ));
                }
            }
        }
        for b in &branches {
            if !worktrees.iter().any(|(_, wb, _)| wb.as_deref() == Some(b)) {
                bad.push(format!("branch '{b}' has no worktree"));
            }
        }
        // The pool: every ref has its worktree at the ref's commit, every pool directory its ref.
        let pool_refs = repo.git(
            root,
            &[
                "for-each-ref",
                "--format=%(refname) %(objectname)",
                "refs/task-pool/",
            ],
        );
        let tasks_dir = repo.base().join("repo.tasks");
        let mut pool_dirs = BTreeSet::new();
        for line in pool_refs.lines() {
            let (name, id) = line.split_once(' ').unwrap();
            let entry = name.rsplit('/').next().unwrap();
            let path = tasks_dir.join(format!(".{entry}"));
            let head = repo.git_run(&path, &["rev-parse", "HEAD"]);
            if !worktrees.iter().any(|(p, _, _)| *p == path) || head.stdout.trim() != id {
                bad.push(format!("pool ref '{name}' has no worktree at {id}"));
            }
            pool_dirs.insert(format!(".{entry}"));
        }
        if let Ok(entries) = std::fs::read_dir(&tasks_dir) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with(".pool-")
                    && !name.contains(".removing-")
                    && !pool_dirs.contains(&name)
                {
                    let filler = name
                        .strip_prefix(".pool-")
                        .and_then(|rest| rest.split('-').next())
                        .map(|pid| {
                            std::fs::read_to_string(format!("/proc/{pid}/status"))
                                .ok()
                                .and_then(|s| {
                                    s.lines()
                                        .find(|l| l.starts_with("State:"))
                                        .map(str::to_owned)
                                })
                                .unwrap_or_else(|| "gone".into())
                        })
                        .unwrap_or_default();
                    bad.push(format!(
                        "pool directory '{name}' has no ref (its filler: {filler})"
                    ));
                }
            }
        }
        // Locks and temporary files.
        let common = root.join(".git");
        let mut git_dirs = vec![common.clone()];
        if let Ok(entries) = std::fs::read_dir(common.join("worktrees")) {
            git_dirs.extend(entries.flatten().map(|e| e.path()));
        }
        // A pack git-task wrote is kept from repacking only until its refs are written (or,
        // after a kill, until the sweep): no `.keep` of a git-task that is gone is left.
        if let Ok(entries) = std::fs::read_dir(common.join("objects/pack")) {
            for e in entries.flatten() {
                let keep = e.path();
                let text = std::fs::read_to_string(&keep).unwrap_or_default();
                let Some(pid) = text.strip_prefix("git-task ") else {
                    continue;
                };
                if keep.extension().is_some_and(|x| x == "keep")
                    && !Path::new(&format!("/proc/{}", pid.trim())).exists()
                {
                    bad.push(format!("'{}' of a gone process is left", keep.display()));
                }
            }
        }
        for d in &git_dirs {
            if d.join("index.lock").exists() {
                bad.push(format!("'{}' is left", d.join("index.lock").display()));
            }
        }
        let mut dirs: Vec<PathBuf> = worktrees.iter().map(|(p, _, _)| p.clone()).collect();
        dirs.push(repo.base().join("repo.tasks"));
        for d in &dirs {
            for tmp in temp_files(d) {
                bad.push(format!("temporary file '{}' is left", tmp.display()));
            }
        }
        // Every worktree: nothing changed but what the test left uncommitted.
        for (path, _, _) in &worktrees {
            if !path.exists() {
                continue;
            }
            let status = repo.git_run(
                path,
                &[
                    "status",
                    "--porcelain",
                    "--untracked-files=all",
                    "--no-renames",
                ],
            );
            if status.code != 0 {
                bad.push(format!("git status in '{}':\n{status}", path.display()));
                continue;
            }
            for line in status.stdout.lines() {
                let p = line.get(3..).unwrap_or("").trim_matches('"');
                let allowed = work.dirty.iter().any(|(wt, q)| wt == path && q == p);
                if !allowed {
                    bad.push(format!("'{}': unexpected change '{line}'", path.display()));
                }
            }
        }
        // No work lost.
        let mut reachable: Option<BTreeSet<String>> = None;
        for (wt, path, content) in &work.keep {
            if std::fs::read_to_string(wt.join(path)).ok().as_deref() == Some(content.as_str()) {
                continue;
            }
            let blob = git_stdin(repo, &["hash-object", "--stdin"], content);
            let all = reachable.get_or_insert_with(|| {
                repo.git(root, &["rev-list", "--objects", "--all"])
                    .lines()
                    .map(|l| l.split(' ').next().unwrap_or("").to_owned())
                    .collect()
            });
            if !all.contains(&blob) {
                bad.push(format!(
                    "lost: '{path}' of '{}' ({} bytes) is in no file and no ref",
                    wt.display(),
                    content.len()
                ));
            }
        }
        bad
    }

    fn branch_exists(&self, id: &str) -> bool {
        let name = format!("refs/heads/task/{id}");
        self.repo
            .git_run(self.repo.root(), &["rev-parse", "-q", "--verify", &name])
            .code
            == 0
    }

    /// How many commits on `main` carry task `id` (their `Task-Id` trailer).
    fn landings(&self, id: &str) -> usize {
        self.repo
            .git(
                self.repo.root(),
                &["log", "--format=%(trailers:key=Task-Id,valueonly)", "main"],
            )
            .lines()
            .filter(|l| l.trim() == id)
            .count()
    }

    /// Whether every file of `q` is in the tree of `rev` as the test wrote it.
    fn holds(&self, rev: &str, q: &Queued) -> Result<(), String> {
        for (path, content) in &q.files {
            let run = self
                .repo
                .git_run(self.repo.root(), &["show", &format!("{rev}:{path}")]);
            if run.code != 0 || run.stdout != *content {
                return Err(format!("'{path}' of task '{}' is not in {rev}", q.id));
            }
        }
        Ok(())
    }

    /// The ids in the queue of `main` (`queue status --json`, which reads every queue's ref).
    fn queue_of_main(&self) -> Result<Vec<String>, String> {
        let run = self.task(self.repo.root(), &["queue", "status", "--json"]);
        if run.code != 0 {
            return Err(format!("queue status exited {}:\n{run}", run.code));
        }
        let json: serde_json::Value = serde_json::from_str(&run.stdout)
            .map_err(|e| format!("queue status printed no JSON ({e}):\n{run}"))?;
        let mut ids = Vec::new();
        for q in json["queues"].as_array().into_iter().flatten() {
            if q["into"] == "refs/heads/main" {
                for w in q["queued"].as_array().into_iter().flatten() {
                    ids.push(w["task"].as_str().unwrap_or("").to_owned());
                }
            }
        }
        Ok(ids)
    }

    /// The queue's invariants after a queue command was killed and `sweep` ran (module docs):
    /// every queue ref parses; `queue add`: each task queued (with one `queued` event) or not
    /// (with none); `queue run`: each task landed on `main` once with its work, or still on its
    /// branch, queued or ejected, and the next `queue run` lands every good task exactly once,
    /// ejects the bad one with its branch kept, and leaves the gate usable and whole.
    fn check_queue(&self, command: &str, work: &Work) -> Vec<String> {
        if !command.starts_with("queue-") {
            return Vec::new();
        }
        let repo = &self.repo;
        let root = repo.root();
        let mut bad = Vec::new();
        for name in repo.refs("refs/tasks/_queue/") {
            let run = repo.git_run(root, &["cat-file", "-e", &format!("{name}:queue.toml")]);
            if run.code != 0 {
                bad.push(format!("'{name}' holds no queue.toml"));
            }
        }
        let queued = match self.queue_of_main() {
            Ok(q) => q,
            Err(e) => {
                bad.push(e);
                return bad;
            }
        };
        let count = |id: &str, event: &str| events(repo, id).iter().filter(|e| *e == event).count();
        for q in &work.queued {
            let id = q.id.as_str();
            let waiting = queued.iter().filter(|t| *t == id).count();
            let events_queued = count(id, "queued");
            if waiting > 1 || events_queued > 1 {
                bad.push(format!(
                    "'{id}' is {waiting} times in the queue, with {events_queued} 'queued' events"
                ));
            }
            if command == "queue-add" {
                if waiting != events_queued {
                    bad.push(format!(
                        "'{id}' is half queued: {waiting} times in the queue, {events_queued} 'queued' events"
                    ));
                }
                continue;
            }
            let landed = self.landings(id);
            if landed > 1 || (landed == 1 && q.bad) {
                bad.push(format!("'{id}' (bad: {}) landed {landed} times", q.bad));
            } else if landed == 1 {
                if let Err(e) = self.holds("main", q) {
                    bad.push(format!("'{id}' landed without its work: {e}"));
                }
            } else if !self.branch_exists(id) {
                bad.push(format!("'{id}' neither landed nor on its branch"));
            } else if let Err(e) = self.holds(&format!("task/{id}"), q) {
                bad.push(format!("'{id}' lost work on its branch: {e}"));
            } else if waiting == 0 && count(id, "queue_ejected") == 0 {
                bad.push(format!("'{id}' neither landed, queued nor ejected"));
            }
        }
        if command != "queue-run" || !bad.is_empty() {
            return bad;
        }
        // The next runner finishes the queue.
        let locks = gate_index_locks(root);
        let run = self.task(root, &["queue", "run", "--json"]);
        if run.code != 0 && run.code != 1 {
            bad.push(format!(
                "the next queue run exited {} (gate index locks left before it: {locks:?}):\n{run}",
                run.code
            ));
            return bad;
        }
        match self.queue_of_main() {
            Ok(left) if left.iter().any(|t| work.queued.iter().any(|q| q.id == *t)) => {
                bad.push(format!("the next queue run left {left:?} queued"));
            }
            Ok(_) => {}
            Err(e) => bad.push(e),
        }
        for q in &work.queued {
            let id = q.id.as_str();
            let landed = self.landings(id);
            let (landed_events, ejected) = (count(id, "landed"), count(id, "queue_ejected"));
            let merged = count(id, "merged");
            if q.bad {
                if landed != 0 || landed_events != 0 || ejected != 1 {
                    bad.push(format!(
                        "bad task '{id}': {landed} landings, {landed_events} 'landed', {ejected} 'queue_ejected' events"
                    ));
                }
                if let Err(e) = self.holds(&format!("task/{id}"), q) {
                    bad.push(format!("ejected '{id}' lost work on its branch: {e}"));
                }
            } else {
                if landed != 1 || landed_events != 1 || merged != 1 || ejected != 0 {
                    bad.push(format!(
                        "good task '{id}': {landed} landings, {landed_events} 'landed', {merged} 'merged', {ejected} 'queue_ejected' events"
                    ));
                }
                if let Err(e) = self.holds("main", q) {
                    bad.push(format!("after the next queue run: {e}"));
                }
                if self.branch_exists(id) {
                    bad.push(format!("landed '{id}' still has its branch"));
                }
            }
        }
        bad.extend(self.check_gate());
        bad.extend(
            self.check(work)
                .into_iter()
                .map(|b| format!("after the next queue run: {b}")),
        );
        bad
    }

    /// The merge gate's checkouts (`<common dir>/git-task/gate`), once their settles are done:
    /// no more than the runner's check runs at once, reused round after round (a killed run's
    /// is taken again, not left aside for a new one), each whole (its administrative directory,
    /// no `index.lock` left), and nothing else there.
    fn check_gate(&self) -> Vec<String> {
        let root = self.repo.root();
        wait_for_gate_settles(root);
        let gate = root.join(".git/git-task/gate");
        let mut bad = Vec::new();
        let mut slots = 0;
        let Ok(entries) = std::fs::read_dir(&gate) else {
            return bad;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let (stem, ext) = name.split_once('.').unwrap_or((&name, ""));
            let known = ["", "git", "lock", "settled", "failed"].contains(&ext);
            if stem.parse::<usize>().is_err() || !known {
                bad.push(format!("unexpected '{name}' in the gate"));
                continue;
            }
            if ext.is_empty() {
                slots += 1;
                let path = e.path();
                if !path.with_extension("git").join("HEAD").is_file() {
                    bad.push(format!("gate checkout '{name}' has no HEAD (half-made)"));
                }
                // A `.git` file a killed run left at rest is hidden again before the next
                // check runs there (`Slot::prepare`): not judged.
                let lock = path.with_extension("git").join("index.lock");
                if lock.exists() {
                    bad.push(format!("'{}' is left", lock.display()));
                }
            }
        }
        if slots > QUEUE_JOBS as usize {
            bad.push(format!(
                "{slots} gate checkouts for a runner with at most {QUEUE_JOBS} check runs at once"
            ));
        }
        bad
    }
}

/// The `index.lock` files in the administrative directories of the gate's checkouts.
fn gate_index_locks(root: &Path) -> Vec<PathBuf> {
    let gate = root.join(".git/git-task/gate");
    std::fs::read_dir(gate)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("index.lock"))
        .filter(|p| p.exists())
        .collect()
}

/// Waits (up to a minute) until no `gate-settle` of a gate checkout of the repository at `root`
/// runs: a run that passed hands its checkout to one, detached, which the kill does not reach.
fn wait_for_gate_settles(root: &Path) {
    let root = root.to_string_lossy().into_owned();
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let busy = std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| {
                let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
                    return false;
                };
                let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
                args.contains(&&b"gate-settle"[..])
                    && args.iter().any(|a| a.starts_with(root.as_bytes()))
            });
        if !busy {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Files named like git-task's temporary files below `dir` (not inside `.git`).
/// Waits (up to a minute) until no background `pool fill` of the repository at `root` runs
/// (`/proc/*/cmdline`: a refill is spawned as `git-task -C <root> pool fill …`, and it may not
/// have made its directory yet when this looks).
fn wait_for_pool_fillers(root: &Path) {
    let root = root.to_string_lossy().into_owned();
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let busy = std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| {
                let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
                    return false;
                };
                let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
                args.windows(2).any(|w| w == [&b"pool"[..], &b"fill"[..]])
                    && args.contains(&root.as_bytes())
            });
        if !busy {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn temp_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name == ".git" {
            continue;
        }
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            out.extend(temp_files(&e.path()));
        } else if name.contains(".git-task-") && name.ends_with(".tmp") {
            out.push(e.path());
        }
    }
    out
}

const COMMANDS: &[&str] = &[
    "start",
    "merge",
    "remove",
    "reset",
    "revert",
    "checkpoint",
    "commit",
    "sync",
    "patch-start",
    "patch-revert",
    "pool-fill",
    "pool-start",
    "pool-refill",
    "queue-add",
    "queue-run",
];

/// Runs `args` in `dir` and kills it with SIGKILL after `delay` (if it is still running then).
fn run_and_kill(t: &Torture, dir: &Path, args: &[String], delay: Duration) -> bool {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child = t
        .cmd(dir, &args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + delay;
    loop {
        if let Some(_status) = child.try_wait().unwrap() {
            return false;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return true;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// Kills each command `n` times at random instants on a repository of `files` files
/// (`GIT_TASK_TORTURE_N` and `GIT_TASK_TORTURE_FILES` say otherwise), checking after each.
pub(crate) fn torture(n: u64, files: u64) {
    let n = env_or("GIT_TASK_TORTURE_N", n);
    let files = env_or("GIT_TASK_TORTURE_FILES", files);
    let seed = env_or(
        "GIT_TASK_TORTURE_SEED",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64,
    );
    let only = std::env::var("GIT_TASK_TORTURE_ONLY").unwrap_or_default();
    let mut t = Torture::new(files, seed);
    eprintln!("torture: seed {seed}, {files} files, {n} kills per command");
    let mut report = Vec::new();
    let mut all_failures = Vec::new();
    for &command in COMMANDS {
        if !only.is_empty() && !only.split(',').any(|c| c == command) {
            continue;
        }
        // Calibrate: two rounds unkilled, the faster one counts (the machine may be busy).
        let mut took = Duration::MAX;
        for _ in 0..2 {
            let (id, dir, args, work) = t.prepare(command);
            let began = Instant::now();
            let args_ref: Vec<&str> = args.iter().map(String::as_str).collect();
            let run = t.task(&dir, &args_ref);
            took = took.min(began.elapsed());
            // A queue run that ejects a task says so with exit 1.
            let expected = run.code == 0 || (command == "queue-run" && run.code == 1);
            assert!(expected, "{command} unkilled failed: {args:?}\n{run}");
            let mut bad = t.check(&work);
            bad.extend(t.check_queue(command, &work));
            bad.truncate(8);
            assert!(bad.is_empty(), "{command} unkilled: {bad:#?}");
            t.finish(command, &id, &work).unwrap();
        }
        let window = (took.as_micros() as u64 * 13 / 10).max(1000);
        let mut failures = 0;
        let mut killed = 0;
        let mut rounds = 0;
        // Until N kills (a command may finish before its kill instant), at most 3N rounds.
        while killed < n && rounds < 3 * n {
            rounds += 1;
            let (id, dir, args, work) = t.prepare(command);
            let delay = Duration::from_micros(t.rng.below(window));
            if run_and_kill(&t, &dir, &args, delay) {
                killed += 1;
            }
            let sweep = t.task(t.repo.root(), &["sweep", "--json"]);
            let mut bad = Vec::new();
            if sweep.code != 0 {
                bad.push(format!("sweep exited {}:\n{sweep}", sweep.code));
            }
            bad.extend(t.check(&work));
            bad.extend(t.check_queue(command, &work));
            if let Err(e) = t.finish(command, &id, &work) {
                bad.push(e);
            }
            if !bad.is_empty() {
                failures += 1;
                let more = bad.len().saturating_sub(6);
                bad.truncate(6);
                if more > 0 {
                    bad.push(format!("... and {more} more"));
                }
                eprintln!(
                    "torture: {command} round {} killed after {delay:?}: {bad:#?}\nsweep: {sweep}",
                    t.round
                );
                all_failures.push(format!("{command} round {}: {}", t.round, bad.join("; ")));
                // Start the next round from a repository that is consistent again.
                t.force_consistent();
            }
        }
        let line = format!(
            "{command}: {killed} kills in {rounds} rounds (window {} ms), {failures} failures",
            window / 1000
        );
        eprintln!("torture: {line}");
        report.push(line);
    }
    eprintln!("torture summary (seed {seed}):\n{}", report.join("\n"));
    assert!(
        all_failures.is_empty(),
        "torture failures (seed {seed}):\n{}",
        all_failures.join("\n")
    );
}
