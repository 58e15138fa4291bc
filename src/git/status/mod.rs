//! Worktree status: is a worktree clean, what is ignored in it.
//!
//! This file holds the merge gate's quick clean check; `state` reads a
//! worktree's HEAD, index and files as trees (what a snapshot commits); `dirty` is `list`'s
//! cheap one (with `lstat` under it), `ignored` counts ignored files.
//!
//! A fast "is this worktree clean?" for the merge gate's hot path.

pub mod dirty;
pub mod ignored;
pub mod lstat;
pub mod memos;
pub mod state;

use crate::error::{Context, Error, Result};
use crate::git::{objects, Repo};

/// Returns `Some(true)` when the worktree `repo` was opened in certainly has
/// nothing uncommitted (no staged change, no modified, deleted or untracked
/// non-ignored file), `Some(false)` when it certainly has, and `None` when this
/// quick check cannot tell (the caller then reads the full state).
///
/// Staged changes are ruled out through the index's cache-tree extension: its
/// root, when valid, is the tree the index would commit, so equal to HEAD's
/// tree means nothing is staged. That spares the HEAD-to-index comparison, a
/// third of the cost of a full status on a large worktree.
pub fn is_clean_fast(repo: &Repo) -> Result<Option<bool>> {
    let Some(head) = repo.head_commit()? else {
        return Ok(None);
    };
    let head_tree = objects::commit_tree(repo, head)?;
    let index = repo
        .inner
        .index_or_empty()
        .context(|| "could not read the index".into())?;
    match index.tree() {
        Some(root) if root.num_entries.is_some() && root.id == head_tree => {}
        _ => return Ok(None),
    }
    if index.entries().iter().any(|e| e.stage_raw() != 0) {
        return Ok(Some(false));
    }
    let iter = repo
        .inner
        .status(gix::progress::Discard)
        .context(|| "could not read the worktree status".into())?
        .untracked_files(gix::status::UntrackedFiles::Files)
        .index_worktree_rewrites(None)
        .index_worktree_submodules(gix::status::Submodule::Given {
            ignore: gix::submodule::config::Ignore::All,
            check_dirty: false,
        })
        .into_index_worktree_iter(Vec::new())
        .context(|| "could not read the worktree status".into())?;
    for item in iter {
        let item = item.map_err(|e| Error::repo("could not read the worktree status", e))?;
        use gix::status::index_worktree::Item;
        use gix::status::plumbing::index_as_worktree::{Change, EntryStatus};
        let dirty = match item {
            Item::Modification { status, .. } => !matches!(
                status,
                EntryStatus::NeedsUpdate(_) | EntryStatus::Change(Change::SubmoduleModification(_))
            ),
            Item::DirectoryContents { entry, .. } => {
                matches!(entry.status, gix::dir::entry::Status::Untracked)
            }
            Item::Rewrite { .. } => true,
        };
        if dirty {
            return Ok(Some(false));
        }
    }
    Ok(Some(true))
}
