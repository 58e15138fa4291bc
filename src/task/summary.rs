//! Facts about a task for `list` and `status`: ahead/behind, changed files, dirty.

use super::{layout, Mode, Status};
use crate::contract::file::CONTRACT_FILE;
use crate::error::Result;
use crate::git::diff::{self, ChangedPath};
use crate::git::{objects, ObjectId, Repo};
use crate::record::Record;
use std::path::Path;

/// Where a task stands against its base.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Summary {
    /// The task branch's tip, if it exists.
    pub head: Option<String>,
    /// The base branch's current tip, if the task has a base branch.
    pub base_tip: Option<String>,
    /// The task's own commits not on the base branch (the contract commit is not counted).
    pub ahead: usize,
    /// Commits on the base branch not on the task branch.
    pub behind: usize,
    /// Paths changed between the base commit and the task branch (the contract file excluded).
    pub changed_files: usize,
    /// Whether the worktree has uncommitted changes (`None` when it is not there).
    pub dirty: Option<bool>,
    /// Whether the worktree directory exists.
    pub worktree_exists: bool,
}

/// Computes the summary of a task; `with_dirty` also looks at the worktree (costly).
pub fn summarize(repo: &Repo, record: &Record, with_dirty: bool) -> Result<Summary> {
    let s = &record.state;
    let id = s.task_id();
    let worktree_exists = Path::new(&s.worktree).join(".git").exists();
    let base_commit = repo
        .find_ref(&layout::base_ref(&id))?
        .or_else(|| s.base_commit.parse().ok());
    let head = match s.mode {
        Mode::Worktree if s.status.is_live() => repo.find_ref(&s.branch)?,
        Mode::Patch if s.status.is_live() && worktree_exists => {
            crate::git::worktree::head_of(Path::new(&s.worktree))
                .ok()
                .flatten()
        }
        _ => None,
    };
    let base_tip = match &s.base_branch {
        Some(b) => repo.find_ref(b)?,
        None => None,
    };
    let (mut ahead, mut behind, mut changed_files) = (0, 0, 0);
    if let (Some(head), Some(base)) = (head, base_commit) {
        let against = base_tip.unwrap_or(base);
        ahead = objects::count_between(repo, against, head)?;
        if s.mode == Mode::Worktree {
            ahead = ahead.saturating_sub(1);
        }
        behind = objects::count_between(repo, head, against)?;
        changed_files = task_changes(repo, base, head)?.len();
    }
    let dirty = if with_dirty
        && worktree_exists
        && s.status.is_live()
        && s.status != Status::Provisioning
    {
        let wt = crate::git::worktree::open_at(Path::new(&s.worktree))?;
        Some(crate::snapshot::read(&wt)?.is_dirty())
    } else {
        None
    };
    Ok(Summary {
        head: head.map(|h| h.to_string()),
        base_tip: base_tip.map(|t| t.to_string()),
        ahead,
        behind,
        changed_files,
        dirty,
        worktree_exists,
    })
}

/// Returns the paths a task changed between `base` and `head`, without the contract file.
pub fn task_changes(repo: &Repo, base: ObjectId, head: ObjectId) -> Result<Vec<ChangedPath>> {
    let old = objects::commit_tree(repo, base)?;
    let new = objects::commit_tree(repo, head)?;
    let mut changes = diff::tree_to_tree(repo, old, new)?;
    changes.retain(|c| c.path != CONTRACT_FILE);
    Ok(changes)
}
