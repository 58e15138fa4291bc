//! The one way to save work before discarding it (SPEC §2.2): `refs/tasks/<id>/attempts/<n>`.
//!
//! Every path that discards something (remove, reset, revert, a rolled-back
//! start, sweep) describes what it is about to discard as [`Saved`] and calls
//! [`Attempt::save`]. One commit shape for all of them:
//!
//! - tree: the files of the worktree on disk, tracked and untracked (not
//!   ignored), names as git's bytes; with no worktree, the tree of the first
//!   commit saved;
//! - parent 1: the worktree's HEAD (with no worktree: the first commit saved);
//! - parent 2: a commit of the index, when the index differs from the files;
//! - further parents: every other commit given that holds work no safe ref
//!   reaches (a task branch whose worktree is detached elsewhere, say).
//!
//! Committed work counts as safe when the task's base, its base branch, any ref
//! under `refs/tasks/<id>/` (earlier attempts, checkpoints) or a commit the
//! caller names (the tip a merge landed) reaches it; the task's own contract
//! commit holds no work. Nothing unsafe and a clean worktree: nothing is saved.
//!
//! Repositories nested in the worktree (untracked directories with their own
//! `.git`) cannot be put in a commit without losing their history; they are
//! moved whole into the task's attic, `<common dir>/git-task/attic/<id>/<n>/`,
//! by [`move_nested_aside`].

use crate::contract::file::CONTRACT_FILE;
use crate::error::{Error, Result};
use crate::git::objects;
use crate::git::refs::{RefError, Update};
use crate::git::{diff, ObjectId, Repo};
use crate::record::event::{Event, Merged};
use crate::record::Record;
use crate::snapshot::WorktreeState;
use crate::task::{layout, TaskId};
use std::path::{Path, PathBuf};

/// What a discarding command is about to throw away.
#[derive(Clone, Debug, Default)]
pub struct Saved<'a> {
    /// Why (`remove --force`, `reset`, ...): part of the commit message.
    pub why: &'a str,
    /// The worktree whose uncommitted state goes, with its path (for the report).
    pub worktree: Option<(&'a Path, &'a WorktreeState)>,
    /// Commits that may become unreachable: the task branch's tip, a detached HEAD.
    pub commits: Vec<ObjectId>,
    /// Commits whose history is safe elsewhere besides the task's refs (the tip a merge landed, the base branch).
    pub safe: Vec<ObjectId>,
    /// Save the worktree's state even when it is clean and its HEAD safe (an undo reports what it replaced).
    pub always: bool,
}

impl<'a> Saved<'a> {
    /// Describes the discard of a task's work: its base branch's tip and the tip of each merge it landed count as safe.
    pub fn for_record(repo: &Repo, record: &Record, why: &'a str) -> Result<Saved<'a>> {
        let mut safe = Vec::new();
        if let Some(branch) = &record.state.base_branch {
            safe.extend(repo.find_ref(branch)?);
        }
        if let Ok(base) = record.state.base_commit.parse() {
            safe.push(base);
        }
        if record.state.status == crate::task::Status::Merged {
            for e in crate::record::events(repo, record)? {
                if let Event::Merged(Merged::Branch { task_tip, .. }) = e.event {
                    safe.extend(task_tip.parse::<ObjectId>().ok());
                }
            }
        }
        Ok(Saved {
            why,
            safe,
            ..Saved::default()
        })
    }
}

/// A ref that holds saved work; events record it as it is (`removed`, `reset`).
pub use crate::record::event::SavedAttempt;

/// The writer of attempts.
pub struct Attempt;

impl Attempt {
    /// Saves what `saved` describes as the next `refs/tasks/<id>/attempts/<n>`; `None` when nothing would be lost.
    pub fn save(repo: &Repo, id: &TaskId, saved: &Saved<'_>) -> Result<Option<SavedAttempt>> {
        let mut hidden: Vec<ObjectId> = repo
            .refs_under(&layout::task_prefix(id))?
            .into_iter()
            .map(|(_, oid)| oid)
            .collect();
        hidden.extend(saved.safe.iter().copied());
        let head = saved.worktree.and_then(|(_, s)| s.head);
        let mut unsafe_tips = Vec::new();
        let mut unsafe_count = 0;
        for tip in head.iter().chain(saved.commits.iter()).copied() {
            if unsafe_tips.contains(&tip) {
                continue;
            }
            let work = own_work(repo, tip, &hidden)?;
            if work > 0 {
                unsafe_count += work;
                unsafe_tips.push(tip);
            }
        }
        let dirty = saved
            .worktree
            .is_some_and(|(_, s)| s.worktree_tree != s.head_tree || s.index_tree != s.head_tree);
        if !dirty && unsafe_tips.is_empty() && !(saved.always && saved.worktree.is_some()) {
            return Ok(None);
        }
        let (tree, mut parents) = match saved.worktree {
            Some((_, state)) => shape(
                repo,
                state,
                &format!("git-task: index of {id} before {}\n", saved.why),
            )?,
            None => (objects::commit_tree(repo, unsafe_tips[0])?, Vec::new()),
        };
        for tip in &unsafe_tips {
            if !parents.contains(tip) {
                parents.push(*tip);
            }
        }
        let mut what = Vec::new();
        if let Some((path, _)) = saved.worktree.filter(|_| dirty || saved.always) {
            what.push(format!("uncommitted changes in '{}'", path.display()));
        }
        if unsafe_count > 0 {
            let s = if unsafe_count == 1 { "" } else { "s" };
            let more = if unsafe_count >= LIMIT {
                " or more"
            } else {
                ""
            };
            what.push(format!("{unsafe_count}{more} commit{s} not on the base"));
        }
        let (name, commit) = write(repo, id, tree, &parents, saved.why)?;
        Ok(Some(SavedAttempt {
            name,
            commit: commit.to_string(),
            what: what.join(" and "),
        }))
    }
}

/// The tree and first parents of a saved worktree, in the one shape (module docs): the files
/// on disk; its HEAD, then a commit of the index (message `index_message`) when the index
/// differs from the files. Attempts and the pool's saved entries (`pool::save_used`) use it.
pub fn shape(
    repo: &Repo,
    state: &WorktreeState,
    index_message: &str,
) -> Result<(ObjectId, Vec<ObjectId>)> {
    let mut parents: Vec<ObjectId> = state.head.into_iter().collect();
    if state.index_tree != state.worktree_tree {
        let index = objects::write_own_commit(repo, state.index_tree, &parents, index_message)?;
        parents.push(index);
    }
    Ok((state.worktree_tree, parents))
}

/// How many commits of a tip's history are looked at before it counts as holding work anyway.
const LIMIT: usize = 1000;

/// Returns how many commits reachable from `tip` but from none of `hidden` hold work (not only the task's contract file).
fn own_work(repo: &Repo, tip: ObjectId, hidden: &[ObjectId]) -> Result<usize> {
    let mut n = 0;
    for c in objects::commits_not_reachable(repo, &[tip], hidden, LIMIT)? {
        if !is_contract_commit(repo, c)? {
            n += 1;
        }
    }
    Ok(n)
}

/// Returns whether `commit` only adds or changes the root `.task-contract.toml` on top of its one parent (a task's first commit).
fn is_contract_commit(repo: &Repo, commit: ObjectId) -> Result<bool> {
    let parents = objects::commit_parents(repo, commit)?;
    let [parent] = parents.as_slice() else {
        return Ok(false);
    };
    let changes = diff::tree_to_tree(
        repo,
        objects::commit_tree(repo, *parent)?,
        objects::commit_tree(repo, commit)?,
    )?;
    Ok(changes.len() == 1 && changes[0].path == CONTRACT_FILE)
}

/// Writes `tree` with `parents` as the next free `refs/tasks/<id>/attempts/<n>`; returns `(ref, commit)`.
///
/// The low-level writer under [`Attempt::save`], for a caller that builds its own
/// tree of the same shape (the pre-commit hook saving refused paths).
pub fn write(
    repo: &Repo,
    id: &TaskId,
    tree: ObjectId,
    parents: &[ObjectId],
    why: &str,
) -> Result<(String, ObjectId)> {
    let message = format!("git-task: attempt of {id}: {why}\n\nTask-Id: {id}\n");
    let commit = objects::write_own_commit(repo, tree, parents, &message)?;
    let mut n = crate::snapshot::next_number(repo, &layout::task_prefix(id), "attempts/")?;
    loop {
        let name = layout::attempt_ref(id, n);
        match crate::ledger::apply(
            repo,
            crate::ledger::Mover::GitTask,
            vec![Update::create(
                name.clone(),
                commit,
                format!("git-task: save attempt of {id}"),
            )],
        ) {
            Ok(()) => return Ok((name, commit)),
            Err(RefError::Conflict(_)) if n < 100_000 => n += 1,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Returns the task's attic: where nested repositories are kept (`<common dir>/git-task/attic/<id>`).
pub fn attic_dir(repo: &Repo, id: &TaskId) -> PathBuf {
    crate::git::state_dir(repo.common_dir())
        .join("attic")
        .join(id.as_str())
}

/// Moves each nested repository (`nested`, relative to `worktree`) whole into a fresh
/// `<attic>/<n>/`, keeping its relative path; returns the directory they went to.
///
/// A rename, so nothing of their history is copied or lost; it fails rather
/// than copy when the attic is on another file system.
pub fn move_nested_aside(
    repo: &Repo,
    id: &TaskId,
    worktree: &Path,
    nested: &[crate::git::bstr::BString],
) -> Result<Option<PathBuf>> {
    if nested.is_empty() {
        return Ok(None);
    }
    let dest = new_attic(repo, id)?;
    for rel in nested {
        let rel = crate::git::path::from_repo(rel.as_ref())?;
        let from = worktree.join(rel);
        let to = dest.join(rel);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| Error::repo(format!("could not create '{}'", parent.display()), e))?;
        }
        std::fs::rename(&from, &to).map_err(|e| {
            Error::repo(
                format!(
                    "could not move the nested repository '{}' to '{}'",
                    from.display(),
                    to.display()
                ),
                e,
            )
        })?;
    }
    Ok(Some(dest))
}

/// Makes a fresh `<attic>/<n>/` of the task and returns it.
pub fn new_attic(repo: &Repo, id: &TaskId) -> Result<PathBuf> {
    let attic = attic_dir(repo, id);
    std::fs::create_dir_all(&attic)
        .map_err(|e| Error::repo(format!("could not create '{}'", attic.display()), e))?;
    let mut n = 1u32;
    loop {
        let dest = attic.join(n.to_string());
        match std::fs::create_dir(&dest) {
            Ok(()) => return Ok(dest),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 100_000 => n += 1,
            Err(e) => {
                return Err(Error::repo(
                    format!("could not create '{}'", dest.display()),
                    e,
                ))
            }
        }
    }
}

/// Saves the uncommitted state of the worktree at `path`, and any commit of its HEAD
/// that no safe ref reaches, as an attempt of `id`.
pub fn save_worktree(
    repo: &Repo,
    id: &TaskId,
    path: &Path,
    why: &str,
) -> Result<Option<SavedAttempt>> {
    let wt = crate::git::worktree::open_at(path)?;
    let state = crate::snapshot::read_to_keep(&wt)?;
    Attempt::save(
        repo,
        id,
        &Saved {
            why,
            worktree: Some((path, &state)),
            ..Saved::default()
        },
    )
}

/// Saves the commits of `tip` that neither `base` nor a ref of the task reaches, as an attempt of `id`.
pub fn save_commits(
    repo: &Repo,
    id: &TaskId,
    tip: ObjectId,
    base: Option<ObjectId>,
    why: &str,
) -> Result<Option<SavedAttempt>> {
    Attempt::save(
        repo,
        id,
        &Saved {
            why,
            commits: vec![tip],
            safe: base.into_iter().collect(),
            ..Saved::default()
        },
    )
}
