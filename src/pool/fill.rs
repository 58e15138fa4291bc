//! Filling the pool: one process at a time, one entry at a time, in the foreground
//! (`pool fill --wait`) or as a detached low-priority background process; and the trees
//! a fill found safe, which `start` does not walk again.

use super::{discard_dir, entries, entry_path, ref_name, Entry};
use crate::error::{Error, Result};
use crate::git::refs::Update;
use crate::git::{worktree, ObjectId, Repo};
use std::path::{Path, PathBuf};

/// What a fill did.
#[derive(Debug, serde::Serialize)]
pub struct Filled {
    /// Entries made by this process.
    pub made: Vec<Entry>,
    /// Another fill was running, so this one did nothing.
    pub busy: bool,
}

/// `<common>/git-task/pool/sizes`: per base, the size its last `pool fill` asked for, one
/// `<size> <base>` line each; what a start that took an entry refills to without
/// `task.poolSize`.
fn sizes_file(repo: &Repo) -> PathBuf {
    repo.common_dir()
        .join("git-task")
        .join("pool")
        .join("sizes")
}

fn read_sizes(repo: &Repo) -> Vec<(usize, String)> {
    std::fs::read_to_string(sizes_file(repo))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let (n, base) = l.split_once(' ')?;
            Some((n.parse().ok()?, base.to_owned()))
        })
        .collect()
}

/// The size the last `pool fill` of `base` asked for (0: none since the last drain).
fn filled_size(repo: &Repo, base: &str) -> usize {
    read_sizes(repo)
        .into_iter()
        .find(|(_, b)| b == base)
        .map_or(0, |(n, _)| n)
}

/// Remembers `size` as what the pool of `base` is kept at (best effort: without it a start
/// refills nothing).
fn remember_size(repo: &Repo, base: &str, size: usize) {
    let mut sizes: Vec<(usize, String)> = read_sizes(repo)
        .into_iter()
        .filter(|(_, b)| b != base)
        .collect();
    sizes.push((size, base.to_owned()));
    let text: String = sizes.iter().map(|(n, b)| format!("{n} {b}\n")).collect();
    let file = sizes_file(repo);
    if let Some(dir) = file.parent() {
        let _ = crate::git::fs::create_state_dir(repo.common_dir(), dir);
    }
    let _ = crate::git::fs::write_atomically(&file, text.as_bytes());
}

/// Forgets every remembered size: the pools are given up (`pool drain`).
pub fn forget_sizes(repo: &Repo) {
    let _ = std::fs::remove_file(sizes_file(repo));
}

/// Fills the pool of `base` (`refs/heads/...`) up to `size` entries, one at a time, in this
/// process; `size` is remembered as what a start refills the pool of `base` to.
pub fn fill(repo: &Repo, worktree_dir: &Path, base: &str, size: usize) -> Result<Filled> {
    remember_size(repo, base, size);
    let Some(_lock) = FillLock::take(repo)? else {
        return Ok(Filled {
            made: Vec::new(),
            busy: true,
        });
    };
    let _guard = crate::git::interrupt::install();
    let mut made = Vec::new();
    loop {
        let have = entries(repo, worktree_dir)?
            .into_iter()
            .filter(|e| e.base == base)
            .count();
        if have >= size || crate::git::interrupt::is_triggered() {
            break;
        }
        made.push(fill_one(repo, worktree_dir, base)?);
    }
    Ok(Filled { made, busy: false })
}

/// Makes one entry at `base`'s current tip.
fn fill_one(repo: &Repo, worktree_dir: &Path, base: &str) -> Result<Entry> {
    let tip = repo
        .find_ref(base)?
        .ok_or_else(|| Error::repo_msg(format!("branch '{base}' does not exist")))?;
    // SPEC §5: a tree holding a path git refuses is never checked out.
    let tree = crate::git::objects::commit_tree(repo, tip)?;
    let mut seen = known_safe_trees(repo);
    if let Some(bad) = crate::git::pathsafe::unsafe_path_in_tree(repo, tree, &mut seen)? {
        return Err(crate::git::pathsafe::refusal(&bad, &format!("base {tip}")));
    }
    remember_safe_trees(repo, &seen);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let name = format!("pool-{}-{nanos}", std::process::id());
    let path = entry_path(worktree_dir, &name);
    std::fs::create_dir_all(worktree_dir)
        .map_err(|e| Error::repo(format!("could not create '{}'", worktree_dir.display()), e))?;
    if let Err(e) = worktree::add_detached(repo, &path, tip, crate::git::interrupt::flag()) {
        let _ = discard_dir(repo, &path, true);
        return Err(e);
    }
    let ref_name = ref_name(base, &name);
    crate::ledger::commit(
        repo,
        vec![Update::create(
            ref_name.clone(),
            tip,
            format!("git-task: pool fill {name}"),
        )],
    )?;
    Ok(Entry {
        name,
        base: base.to_owned(),
        commit: tip.to_string(),
        path,
        ref_name,
        saved: None,
    })
}

/// The file listing trees a fill found free of unsafe paths (SPEC §5), one id per line.
fn safe_trees_file(repo: &Repo) -> PathBuf {
    repo.common_dir()
        .join("git-task")
        .join("pool")
        .join("safe-trees")
}

/// More trees than this and the list starts again (it only saves work).
const SAFE_TREES_MAX: usize = 200_000;

/// The trees (at any depth) a fill already walked and found free of unsafe paths: `start`
/// seeds its walk of the base's tree with them, so a start after a fill reads only the
/// trees that changed since (at 100,000 files, the whole walk is about a fifth of a pooled
/// start). Empty when nothing was filled.
pub fn known_safe_trees(repo: &Repo) -> std::collections::HashSet<ObjectId> {
    let Ok(text) = std::fs::read_to_string(safe_trees_file(repo)) else {
        return Default::default();
    };
    text.lines().filter_map(|l| l.parse().ok()).collect()
}

/// Saves `seen` (every tree of a walk that found nothing unsafe) for [`known_safe_trees`].
fn remember_safe_trees(repo: &Repo, seen: &std::collections::HashSet<ObjectId>) {
    if seen.len() > SAFE_TREES_MAX {
        let _ = std::fs::remove_file(safe_trees_file(repo));
        return;
    }
    let mut text = String::with_capacity(seen.len() * 41);
    for id in seen {
        text.push_str(&id.to_string());
        text.push('\n');
    }
    // Best effort: without it, a start walks the whole tree.
    let _ = crate::git::fs::write_atomically(&safe_trees_file(repo), text.as_bytes());
}

/// After a worktree start on `base`: refill the pool in the background when `task.poolSize`
/// asks for more entries than there are (a start that `took` one, or the first start after
/// the setting). Without the setting, a start that `took` an entry refills the pool of its
/// base to the size the last `pool fill` of that base asked for (until `pool drain`).
pub fn after_start(repo: &Repo, settings: &crate::config::Settings, base: &str, took: bool) {
    let worktree_dir = &settings.worktree_dir;
    let size = match settings.pool_size {
        0 if took => filled_size(repo, base),
        n => n,
    };
    if size == 0 {
        return;
    }
    let have = entries(repo, worktree_dir)
        .map(|e| e.iter().filter(|e| e.base == base).count())
        .unwrap_or(0);
    if have < size && (took || filler(repo).is_none()) {
        spawn_fill(repo, base, size);
    }
}

/// Starts `git task pool fill SIZE --base BASE --wait` as a detached, low-priority background process.
pub fn spawn_fill(repo: &Repo, base: &str, size: usize) -> bool {
    let Ok(exe) = std::env::current_exe() else {
        return false;
    };
    let dir = repo
        .workdir()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| repo.common_dir().to_path_buf());
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("-C")
        .arg(&dir)
        .args([
            "pool",
            "fill",
            &size.to_string(),
            "--base",
            base,
            "--wait",
            "--detached",
        ])
        .current_dir(&dir);
    crate::git::spawn_detached(cmd)
}

/// Leaves the terminal's session and lowers this process's priority (a background fill).
pub fn detach() {
    #[cfg(unix)]
    {
        let _ = rustix::process::setsid();
        let _ = rustix::process::nice(19);
    }
}

/// The lock a filling process holds: `<common>/git-task/pool/fill.lock`, naming its pid.
struct FillLock(PathBuf);

impl FillLock {
    fn take(repo: &Repo) -> Result<Option<FillLock>> {
        let dir = repo.common_dir().join("git-task").join("pool");
        crate::git::fs::create_state_dir(repo.common_dir(), &dir)
            .map_err(|e| Error::repo(format!("could not create '{}'", dir.display()), e))?;
        let path = dir.join("fill.lock");
        for _ in 0..3 {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut f) => {
                    use std::io::Write;
                    let _ = write!(f, "{}", std::process::id());
                    return Ok(Some(FillLock(path)));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    if let Some(pid) = filler(repo) {
                        if !crate::recover::liveness::process_is_gone(pid) {
                            return Ok(None);
                        }
                    }
                    // Left by a killed fill (or cut short while written): take it over.
                    let _ = std::fs::remove_file(&path);
                }
                Err(e) => {
                    return Err(Error::repo(
                        format!("could not create '{}'", path.display()),
                        e,
                    ))
                }
            }
        }
        Ok(None)
    }
}

impl Drop for FillLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The pid of the process filling the pool right now, if any.
pub fn filler(repo: &Repo) -> Option<u32> {
    let path = repo
        .common_dir()
        .join("git-task")
        .join("pool")
        .join("fill.lock");
    let pid = std::fs::read_to_string(path).ok()?.trim().parse().ok()?;
    (!crate::recover::liveness::process_is_gone(pid)).then_some(pid)
}
