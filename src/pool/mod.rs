//! The warm pool (SPEC §6 `pool`, §10): worktrees checked out ahead of time so
//! that `start` on a big repository costs a few renames instead of a checkout.
//!
//! A pool entry is an ordinary linked worktree with a detached HEAD at the base
//! branch's tip as it was when the entry was filled, in a hidden directory of the
//! tasks directory (`<task.worktreeDir>/.pool-<pid>-<nanos>`, `pid` the process that
//! filled it), held by the ref `refs/task-pool/<base branch>/pool-<pid>-<nanos>`
//! pointing at that commit. `list` reads only `refs/tasks/`, so it never shows them;
//! `list --all` and `pool status` do.
//!
//! - **Fill** (`fill`): one process at a time (a lock file naming its pid), one
//!   entry at a time: the worktree is made first, the ref last, so an entry is
//!   never claimable before it is complete.
//! - **Claim** (`take`, from `start` once its record and branch exist): deleting the
//!   entry's ref with a compare-and-swap; of two starts, one wins. The winner checks
//!   the entry is untouched, moves it from its commit to the task's contract commit
//!   with the two-way checkout of only the changed paths, then adopts it
//!   (`git::worktree::pool::adopt`). A dirty, damaged or stale entry (more than
//!   [`STALE_PATHS`] paths behind) is discarded and `start` makes a worktree as usual.
//! - **Refill**: after a worktree start, when `task.poolSize` asks for more entries
//!   than there are, a detached background `git task pool fill` at low priority.
//! - **Repair** (`repair`, run by `sweep`): a pool directory with no ref whose filler
//!   is gone (a killed fill, or a killed claim) is deleted with its administrative
//!   entry; a ref whose worktree is missing or damaged is deleted.
//!
//! A pool entry never holds user work, so discarding one saves nothing.

use crate::error::{Error, Result};
use crate::git::checkout::twoway;
use crate::git::refs::{self, RefError, Update};
use crate::git::{worktree, ObjectId, Repo};
use std::path::{Path, PathBuf};

/// The namespace of pool refs.
pub const REF_PREFIX: &str = "refs/task-pool/";

/// An entry further behind its base than this many changed paths is discarded, not moved.
pub const STALE_PATHS: usize = 10_000;

/// The config key of the pool size `start` keeps filled.
pub const POOL_SIZE: &str = "task.poolSize";

/// One pool entry.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Entry {
    /// `pool-<pid>-<nanos>`.
    pub name: String,
    /// The base branch it was filled from (`refs/heads/...`).
    pub base: String,
    /// The commit it is checked out at.
    pub commit: String,
    /// Its worktree directory.
    pub path: PathBuf,
    /// Its ref.
    #[serde(skip)]
    pub ref_name: String,
}

/// Where pool entries of a repository whose tasks live in `worktree_dir` are placed.
fn entry_path(worktree_dir: &Path, name: &str) -> PathBuf {
    worktree_dir.join(format!(".{name}"))
}

/// Returns the pool refs' entries, sorted by ref name.
pub fn entries(repo: &Repo, worktree_dir: &Path) -> Result<Vec<Entry>> {
    let mut out = Vec::new();
    for (ref_name, id) in repo.refs_under(REF_PREFIX)? {
        let rest = &ref_name[REF_PREFIX.len()..];
        let Some((base, name)) = rest.rsplit_once('/') else {
            continue;
        };
        if !name.starts_with("pool-") {
            continue;
        }
        out.push(Entry {
            name: name.to_owned(),
            base: format!("refs/heads/{base}"),
            commit: id.to_string(),
            path: entry_path(worktree_dir, name),
            ref_name: ref_name.clone(),
        });
    }
    Ok(out)
}

/// The ref of a new entry `name` for `base` (`refs/heads/...`).
fn ref_name(base: &str, name: &str) -> String {
    format!(
        "{REF_PREFIX}{}/{name}",
        base.strip_prefix("refs/heads/").unwrap_or(base)
    )
}

/// `task.poolSize` (0 when unset or not a number).
pub fn configured_size(repo: &Repo) -> usize {
    repo.config_string(POOL_SIZE)
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// The base branch a pool fill uses: `--base` (a branch) or the current branch.
pub fn resolve_base(repo: &Repo, base: Option<&str>) -> Result<String> {
    let full = match base {
        Some(b) if b.starts_with("refs/heads/") => b.to_owned(),
        Some(b) => format!("refs/heads/{b}"),
        None => repo.head_branch()?.ok_or_else(|| {
            Error::input("HEAD is detached: a pool is filled for a branch")
                .hint("name one with --base BRANCH")
        })?,
    };
    if !refs::is_valid_name(&full) || repo.find_ref(&full)?.is_none() {
        return Err(
            Error::input(format!("'{}' is not a local branch", base.unwrap_or(&full)))
                .hint("a pool entry is checked out at a branch's tip: name one with --base BRANCH"),
        );
    }
    Ok(full)
}

/// What a fill did.
#[derive(Debug, serde::Serialize)]
pub struct Filled {
    /// Entries made by this process.
    pub made: Vec<Entry>,
    /// Another fill was running, so this one did nothing.
    pub busy: bool,
}

/// Fills the pool of `base` (`refs/heads/...`) up to `size` entries, one at a time, in this process.
pub fn fill(repo: &Repo, worktree_dir: &Path, base: &str, size: usize) -> Result<Filled> {
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
        discard_dir(repo, &path, true);
        return Err(e);
    }
    let ref_name = ref_name(base, &name);
    refs::commit(
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

/// Claims every entry and deletes it; returns those deleted.
pub fn drain(repo: &Repo, worktree_dir: &Path) -> Result<Vec<Entry>> {
    let mut out = Vec::new();
    for entry in entries(repo, worktree_dir)? {
        if claim(repo, &entry)? {
            discard_dir(repo, &entry.path, false);
            out.push(entry);
        }
    }
    Ok(out)
}

/// Deletes the entry's ref if it still points where it did: `true` when this process won it.
fn claim(repo: &Repo, entry: &Entry) -> Result<bool> {
    let id: ObjectId = entry
        .commit
        .parse()
        .map_err(|e| Error::repo(format!("bad pool ref '{}'", entry.ref_name), e))?;
    match refs::apply(
        repo,
        vec![Update::delete(
            entry.ref_name.clone(),
            id,
            format!("git-task: pool claim {}", entry.name),
        )],
    ) {
        Ok(()) => Ok(true),
        Err(RefError::Conflict(_)) => Ok(false),
        Err(RefError::Other(e)) => Err(e),
    }
}

/// The administrative directory the worktree at `path` names in its `.git` file.
fn admin_of(path: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(path.join(".git")).ok()?;
    let dir = text
        .strip_prefix("gitdir: ")?
        .trim_end_matches(['\n', '\r']);
    let dir = PathBuf::from(dir);
    Some(if dir.is_relative() {
        crate::git::normalize(&path.join(dir))
    } else {
        dir
    })
}

/// Deletes a pool worktree that is no longer claimable (or never was): its
/// administrative entry now, its files in the background (`now`: before returning).
fn discard_dir(repo: &Repo, path: &Path, now: bool) {
    if let Some(admin) = admin_of(path) {
        // Only the entry that names this directory (a reused name must not take another's).
        let names_it = std::fs::read_to_string(admin.join("gitdir")).is_ok_and(|g| {
            Path::new(g.trim_end_matches(['\n', '\r']))
                .parent()
                .is_some_and(|p| crate::git::canonical(p) == crate::git::canonical(path))
        });
        if names_it {
            let linked = worktree::Linked {
                name: String::new(),
                git_dir: admin,
                path: path.to_path_buf(),
                branch: None,
            };
            if let Ok(aside) = worktree::move_aside(repo, &linked) {
                if now {
                    let _ = aside.delete_now();
                }
            }
            return;
        }
    }
    // No administrative entry names it: only the directory goes.
    let _ = delete_dir(path);
}

/// Moves a directory aside (so its name is free at once) and deletes it.
fn delete_dir(path: &Path) -> Result<()> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let aside = path.with_file_name(format!(".{name}.removing-{}-{nanos}", std::process::id()));
    if std::fs::rename(path, &aside).is_ok() {
        worktree::delete_dir_shared(&aside)?;
    }
    Ok(())
}

/// Whether `start` took a pool entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Taken {
    /// The task's worktree is a former pool entry.
    Adopted,
    /// No usable entry: make the worktree as usual.
    None,
}

/// What `start` needs to take an entry: where pool entries are, and the task.
pub struct Want<'a> {
    /// `task.worktreeDir`.
    pub worktree_dir: &'a Path,
    /// The task's base branch (`refs/heads/...`).
    pub base: &'a str,
    /// The task's worktree path.
    pub path: &'a Path,
    /// The task's branch (full ref).
    pub branch: &'a str,
    /// The commit the task's branch points at (its contract commit).
    pub commit: ObjectId,
}

/// Takes a pool entry of `want.base` for a task whose record and branch exist (see module docs).
pub fn take(repo: &Repo, want: &Want<'_>) -> Result<Taken> {
    if worktree::pool::uses_relative_paths(repo) {
        return Ok(Taken::None);
    }
    for entry in entries(repo, want.worktree_dir)?
        .into_iter()
        .filter(|e| e.base == want.base)
    {
        if !claim(repo, &entry)? {
            continue;
        }
        return match take_claimed(repo, &entry, want) {
            Ok(Taken::Adopted) => Ok(Taken::Adopted),
            Ok(Taken::None) => {
                discard_dir(repo, &entry.path, false);
                Ok(Taken::None)
            }
            // From the first write on, the task's roll-back deletes what this made.
            Err(e) => Err(e),
        };
    }
    Ok(Taken::None)
}

fn take_claimed(repo: &Repo, entry: &Entry, want: &Want<'_>) -> Result<Taken> {
    let Ok(filled) = entry.commit.parse::<ObjectId>() else {
        return Ok(Taken::None);
    };
    // Damaged: no `.git`, no administrative directory, or HEAD not where the ref says.
    let Some(admin) = admin_of(&entry.path) else {
        return Ok(Taken::None);
    };
    let head = std::fs::read_to_string(admin.join("HEAD")).unwrap_or_default();
    if head.trim() != entry.commit {
        return Ok(Taken::None);
    }
    // Dirty: anything changed since the fill remembered it.
    if !crate::git::status::dirty::untouched_since_remembered(&entry.path, &admin, filled) {
        return Ok(Taken::None);
    }
    let changes = twoway::changes(repo, filled, want.commit)?;
    if changes.len() > STALE_PATHS {
        return Ok(Taken::None);
    }
    // Remembered as clean with the index just written, as a fresh checkout is: the next
    // `list` needs only `lstat`s. The memo moves with the administrative directory.
    let ignores = repo.ignore_files();
    let remember = &mut |index: &_| {
        crate::git::status::dirty::remember_index(&entry.path, want.commit, ignores, index)
    };
    match twoway::update_with(repo, &entry.path, &changes, remember)? {
        twoway::Update::Done => {}
        twoway::Update::Declined(_) => return Ok(Taken::None),
    }
    worktree::pool::adopt(
        repo,
        &admin,
        &entry.path,
        want.path,
        want.branch,
        want.commit,
    )?;
    Ok(Taken::Adopted)
}

/// After a worktree start on `base`: refill the pool in the background when `task.poolSize`
/// asks for more entries than there are (a start that `took` one, or the first start after
/// the setting). Without the setting a pool is what `pool fill` made, used up by starts.
pub fn after_start(repo: &Repo, worktree_dir: &Path, base: &str, took: bool) {
    let size = configured_size(repo);
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
    use std::process::{Command, Stdio};
    let Ok(exe) = std::env::current_exe() else {
        return false;
    };
    let dir = repo
        .workdir()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| repo.common_dir().to_path_buf());
    let mut cmd = Command::new(exe);
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
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for var in crate::git::LOCAL_ENV {
        cmd.env_remove(var);
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    cmd.spawn().is_ok()
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
        std::fs::create_dir_all(&dir)
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
                        if !crate::task::liveness::process_is_gone(pid) {
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
    (!crate::task::liveness::process_is_gone(pid)).then_some(pid)
}

/// One repair of the pool made (or, dry, planned) by `sweep`.
pub struct Repaired {
    /// `abandoned_pool_entry` or `damaged_pool_entry`.
    pub problem: &'static str,
    /// What was (or would be) done.
    pub action: String,
}

/// The pid in a pool directory's name (`.pool-<pid>-<nanos>`).
fn pool_dir_pid(name: &str) -> Option<u32> {
    name.strip_prefix(".pool-")?.split('-').next()?.parse().ok()
}

/// Finds (and unless `dry_run`, repairs) what killed fills and claims left (module docs).
pub fn repair(repo: &Repo, worktree_dir: &Path, dry_run: bool) -> Result<Vec<Repaired>> {
    let mut out = Vec::new();
    let entries = entries(repo, worktree_dir)?;
    // Refs whose worktree is missing or damaged.
    for entry in &entries {
        let healthy = admin_of(&entry.path).is_some_and(|admin| {
            std::fs::read_to_string(admin.join("HEAD")).is_ok_and(|h| h.trim() == entry.commit)
        });
        if healthy {
            continue;
        }
        out.push(Repaired {
            problem: "damaged_pool_entry",
            action: format!("deleted pool entry '{}'", entry.name),
        });
        if !dry_run && claim(repo, entry)? {
            discard_dir(repo, &entry.path, true);
        }
    }
    // Pool directories with no ref whose filler is gone. While a start runs, an entry it
    // claimed has no ref either: those wait for a sweep with no start running.
    let starting = crate::task::abandoned::live_starts(repo);
    let held: std::collections::HashSet<String> =
        entries.iter().map(|e| format!(".{}", e.name)).collect();
    if let Ok(dir) = std::fs::read_dir(worktree_dir) {
        for item in dir.flatten() {
            let name = item.file_name().to_string_lossy().into_owned();
            let Some(pid) = pool_dir_pid(&name) else {
                continue;
            };
            if name.contains(".removing-") || held.contains(&name) || starting {
                continue;
            }
            if pid != std::process::id() && !crate::task::liveness::process_is_gone(pid) {
                continue;
            }
            out.push(Repaired {
                problem: "abandoned_pool_entry",
                action: format!(
                    "deleted '{}', left by an interrupted pool fill or claim",
                    item.path().display()
                ),
            });
            if !dry_run {
                discard_dir(repo, &item.path(), true);
            }
        }
    }
    // Administrative entries of pool worktrees whose directory is gone.
    for linked in worktree::list(repo)? {
        let is_pool = linked
            .path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| pool_dir_pid(n).is_some());
        if is_pool && linked.branch.is_none() && !linked.path.exists() {
            out.push(Repaired {
                problem: "abandoned_pool_entry",
                action: format!(
                    "deleted the worktree entry of '{}', whose directory is gone",
                    linked.path.display()
                ),
            });
            if !dry_run {
                worktree::remove_admin(&linked)?;
            }
        }
    }
    Ok(out)
}
