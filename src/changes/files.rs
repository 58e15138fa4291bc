//! The files panel of `git task changes`: every file the task changed since its origin,
//! uncommitted and untracked work included, with the checkpoint that last touched it.

use crate::error::Result;
use crate::git::diff::renames::{self, Status};
use crate::git::{diff, Repo};
use crate::record::Record;
use crate::work::{self, Work};
use std::collections::BTreeMap;

/// One row of the files panel.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct FileRow {
    /// The path now (the old path for a deletion).
    pub path: String,
    /// created, modified, deleted or renamed.
    pub status: Status,
    /// For a rename: where it came from.
    pub old_path: Option<String>,
    /// The checkpoint that last touched it; `null` when it changed after the last checkpoint or in none.
    pub checkpoint: Option<u32>,
}

/// Returns every file the task changed since its origin, uncommitted and untracked work included,
/// with the checkpoint that last touched it.
pub fn files(repo: &Repo, record: &Record) -> Result<Vec<FileRow>> {
    let id = record.state.task_id();
    let w = work::open(repo, record)?;
    let files = renames::tree_to_tree(repo, w.origin_tree, w.state.worktree_tree)?;
    let last = attribution(repo, &w, &work::checkpoints(repo, &id)?)?;
    Ok(files
        .into_iter()
        .filter(|f| !w.skip().contains(&f.path.as_str()))
        .map(|f| {
            let checkpoint = last.get(&f.path).copied().flatten();
            FileRow {
                path: f.path,
                status: f.status,
                old_path: f.old_path,
                checkpoint,
            }
        })
        .collect())
}

/// Maps each path to the checkpoint that last changed it (`None`: changed after the last checkpoint).
fn attribution(
    repo: &Repo,
    w: &Work,
    checkpoints: &[work::Checkpoint],
) -> Result<BTreeMap<String, Option<u32>>> {
    let mut last = BTreeMap::new();
    let mut before = w.start_tree();
    for cp in checkpoints {
        for c in diff::tree_to_tree(repo, before, cp.tree)? {
            last.insert(c.path, Some(cp.n));
        }
        before = cp.tree;
    }
    for c in diff::tree_to_tree(repo, before, w.state.worktree_tree)? {
        last.insert(c.path, None);
    }
    Ok(last)
}
