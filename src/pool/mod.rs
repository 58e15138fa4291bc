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
//! - **Fill** (`fill.rs`): one process at a time (a lock file naming its pid), one
//!   entry at a time: the worktree is made first, the ref last, so an entry is
//!   never claimable before it is complete.
//! - **Claim** (`take`, from `start` once its record and branch exist): deleting the
//!   entry's ref with a compare-and-swap; of two starts, one wins. The winner checks
//!   the entry is untouched, moves it from its commit to the task's contract commit
//!   with the two-way checkout of only the changed paths, then adopts it
//!   (`git::worktree::pool::adopt`). A dirty, damaged or stale entry (more than
//!   [`STALE_PATHS`] paths behind) is discarded and `start` makes a worktree as usual.
//! - **Refill** (`fill.rs`): after a worktree start, when `task.poolSize` asks for more entries
//!   than there are, a detached background `git task pool fill` at low priority.
//! - **Repair** (`repair.rs`, run by `sweep`): a pool directory with no ref whose filler
//!   is gone (a killed fill, or a killed claim) is deleted with its administrative
//!   entry; a ref whose worktree is missing or damaged is deleted.
//!
//! A pool entry is never handed to anyone, but it is a directory on disk that a person or an
//! agent can `cd` into: before one is deleted (a dirty or damaged entry a `start` claimed,
//! `drain`, `sweep`), whatever differs from the commit it was filled at (uncommitted
//! changes, untracked files, commits made on its HEAD) is saved as a commit under
//! [`SAVED_PREFIX`]`<name>`, in the shape of an attempt ([`crate::attempt::shape`]: the files
//! on disk; its HEAD, then its index when that differs). An entry that cannot be saved is kept.

mod fill;
mod repair;
pub use fill::{after_start, detach, fill, filler, forget_sizes, known_safe_trees, spawn_fill};
pub use repair::repair;

use crate::error::{Error, Result};
use crate::git::checkout::twoway;
use crate::git::refs::{RefError, Update};
use crate::git::{worktree, ObjectId, Repo};
use std::path::{Path, PathBuf};

/// The namespace of pool refs.
pub const REF_PREFIX: &str = "refs/task-pool/";

/// An entry further behind its base than this many changed paths is discarded, not moved.
pub const STALE_PATHS: usize = 10_000;

/// Where the work found in a pool entry is saved before the entry is deleted: `<prefix><name>`.
pub const SAVED_PREFIX: &str = "refs/task-pool-saved/";

/// One pool entry.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
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
    /// `drain`: the ref under [`SAVED_PREFIX`] that keeps the changes found in it before it was deleted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub saved: Option<String>,
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
            saved: None,
        });
    }
    Ok(out)
}

/// The ref of a new entry `name` for `base` (`refs/heads/...`).
fn ref_name(base: &str, name: &str) -> String {
    format!("{REF_PREFIX}{}/{name}", crate::git::refs::short_name(base))
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
    if !crate::git::refs::is_valid_name(&full) || repo.find_ref(&full)?.is_none() {
        let short = crate::git::refs::short_name(&full);
        if base.is_none() {
            return Err(Error::input(format!("branch '{short}' has no commits yet"))
                .hint("make a first commit, then fill the pool"));
        }
        return Err(
            Error::input(format!("'{}' is not a local branch", base.unwrap_or(short)))
                .hint("a pool entry is checked out at a branch's tip: name one with --base BRANCH; 'git branch' lists them"),
        );
    }
    Ok(full)
}

/// Claims every entry and deletes it, saving what someone changed in it first; returns those deleted.
pub fn drain(repo: &Repo, worktree_dir: &Path) -> Result<Vec<Entry>> {
    // Given up: a start no longer refills what a `pool fill` made.
    forget_sizes(repo);
    let mut out = Vec::new();
    for mut entry in entries(repo, worktree_dir)? {
        if claim(repo, &entry)? {
            entry.saved = discard_dir(repo, &entry.path, false).map_err(|e| {
                e.hint(format!(
                    "the entry is kept at '{}'; 'git task sweep' tries again",
                    entry.path.display()
                ))
            })?;
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
    match crate::ledger::apply(
        repo,
        crate::ledger::Mover::GitTask,
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
///
/// What someone changed in it is saved first ([`save_used`]); returns the ref that keeps
/// it. When that fails, nothing is deleted and the error says why.
fn discard_dir(repo: &Repo, path: &Path, now: bool) -> Result<Option<String>> {
    let saved = match admin_of(path) {
        Some(admin) => save_used(repo, path, &admin)?,
        None => None,
    };
    delete_entry(repo, path, now);
    Ok(saved)
}

/// Saves what differs in the pool worktree at `path` (administrative directory `admin`)
/// from the commit its fill checked out, as [`SAVED_PREFIX`]`<name>` (module docs).
///
/// An entry whose fill never finished its checkout was never usable: nothing to save.
/// One that still looks as its fill left it (HEAD and stat data) costs a few syscalls.
fn save_used(repo: &Repo, path: &Path, admin: &Path) -> Result<Option<String>> {
    use crate::git::status::dirty;
    let Some(filled) = dirty::remembered_head(admin) else {
        return Ok(None);
    };
    let head = std::fs::read_to_string(admin.join("HEAD")).unwrap_or_default();
    if head.trim().parse::<ObjectId>().ok() == Some(filled)
        && dirty::untouched_since_remembered(path, admin, filled)
    {
        return Ok(None);
    }
    let kept = |e: Error| {
        Error::repo_msg(format!(
            "could not save the changes in the pool entry '{}': {e}",
            path.display()
        ))
    };
    let wt = worktree::open_at(path).map_err(kept)?;
    let state = crate::snapshot::read_to_keep(&wt).map_err(kept)?;
    if !state.nested.is_empty() {
        let nested: Vec<String> = state.nested.iter().map(|n| n.to_string()).collect();
        return Err(Error::repo_msg(format!(
            "the pool entry '{}' holds repositories of its own: {}",
            path.display(),
            nested.join(", ")
        ))
        .hint("move them out of it, then run 'git task sweep'"));
    }
    if !state.is_dirty() && state.head == Some(filled) {
        return Ok(None);
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().trim_start_matches('.').to_owned())
        .unwrap_or_default();
    // The commit shape of an attempt (`attempt::shape`); the ref is the pool's, as no task owns it.
    let (tree, parents) = crate::attempt::shape(
        repo,
        &state,
        &format!("git-task: index of pool entry {name}\n"),
    )?;
    let commit = crate::git::objects::write_own_commit(
        repo,
        tree,
        &parents,
        &format!(
            "git-task: changes found in pool entry {name}\n\nFound in '{}' before it was deleted.\n",
            path.display()
        ),
    )?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    // A name reused by an earlier save (a pid reused) gets a suffix: never overwritten.
    let mut saved = format!("{SAVED_PREFIX}{name}");
    if repo.find_ref(&saved)?.is_some() {
        saved = format!("{saved}-{nanos}");
    }
    crate::ledger::commit(
        repo,
        vec![Update::create(
            saved.clone(),
            commit,
            format!("git-task: save pool entry {name}"),
        )],
    )?;
    Ok(Some(saved))
}

/// Deletes a pool worktree: its administrative entry now, its files in the background
/// (`now`: before returning).
fn delete_entry(repo: &Repo, path: &Path, now: bool) {
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
    let _ = delete_dir(repo, path);
}

/// Moves a directory aside (so its name is free at once) and deletes it.
fn delete_dir(repo: &Repo, path: &Path) -> Result<()> {
    worktree::move_dir_aside(repo.common_dir(), path)?.delete_now()
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
        // The entry's own config is what git and gix read in it (`start` compared only the
        // worktree it runs in).
        if let Some(admin) = admin_of(&entry.path) {
            let scope =
                crate::config::trusted::Scope::Worktrees(vec![crate::git::normalize(&admin)]);
            crate::config::ensure_unchanged(repo, &scope, crate::config::trusted::Runs::Anything)?;
        }
        if !claim(repo, &entry)? {
            continue;
        }
        return match take_claimed(repo, &entry, want) {
            Ok(Taken::Adopted) => Ok(Taken::Adopted),
            Ok(Taken::None) => {
                // What cannot be saved is kept: `sweep` tries again.
                let _ = discard_dir(repo, &entry.path, false);
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
