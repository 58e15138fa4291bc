//! The task branch's first commit (the base plus the frozen contract file): shared by `start`
//! and `reset`.

use crate::contract::file::CONTRACT_FILE;
use crate::error::Result;
use crate::git::objects::{self, TreeEdit};
use crate::git::EntryKind;
use crate::git::{ObjectId, Repo};
use crate::task::TaskId;

/// Returns the tree of a task branch's first commit: the base's tree plus the contract file.
pub fn first_commit_tree(repo: &Repo, base: ObjectId, contract_text: &str) -> Result<ObjectId> {
    let base_tree = objects::commit_tree(repo, base)?;
    let blob = objects::write_blob(repo, contract_text.as_bytes())?;
    objects::edit_tree(
        repo,
        base_tree,
        &[TreeEdit::Upsert(CONTRACT_FILE, EntryKind::Blob, blob)],
    )
}

/// Writes the first commit of a task branch: the contract file added on top of `base`.
pub fn first_commit(
    repo: &Repo,
    id: &TaskId,
    base: ObjectId,
    contract_text: &str,
) -> Result<ObjectId> {
    let tree = first_commit_tree(repo, base, contract_text)?;
    objects::write_commit(
        repo,
        tree,
        &[base],
        &format!("task {id}: add file contract\n\nTask-Id: {id}\n"),
    )
}
