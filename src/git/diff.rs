//! Lists of changed paths between trees.

use super::{ObjectId, Repo};
use crate::error::{Context, Result};
use gix::object::tree::EntryKind;

/// How one path changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// The path is new.
    Added,
    /// Content or mode changed.
    Modified,
    /// The path is gone.
    Deleted,
}

/// One changed path; a rename appears as a deletion plus an addition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangedPath {
    /// Repository-relative path with `/`.
    pub path: String,
    /// How it changed.
    pub kind: ChangeKind,
    /// Entry kind before (`None` when added).
    pub old: Option<(EntryKind, ObjectId)>,
    /// Entry kind after (`None` when deleted).
    pub new: Option<(EntryKind, ObjectId)>,
}

/// Returns every path that differs between two trees, without rename detection, sorted by path.
pub fn tree_to_tree(repo: &Repo, old: ObjectId, new: ObjectId) -> Result<Vec<ChangedPath>> {
    let mut out = Vec::new();
    if old == new {
        return Ok(out);
    }
    let old_tree = repo
        .inner
        .find_tree(old)
        .context(|| format!("could not read tree {old}"))?;
    let new_tree = repo
        .inner
        .find_tree(new)
        .context(|| format!("could not read tree {new}"))?;
    let changes = repo
        .inner
        .diff_tree_to_tree(
            &old_tree,
            &new_tree,
            gix::diff::Options::default().with_rewrites(None),
        )
        .context(|| format!("could not diff {old} and {new}"))?;
    use gix::object::tree::diff::ChangeDetached as C;
    for change in changes {
        match change {
            C::Addition {
                location,
                entry_mode,
                id,
                ..
            } => {
                if entry_mode.is_tree() {
                    continue;
                }
                out.push(ChangedPath {
                    path: location.to_string(),
                    kind: ChangeKind::Added,
                    old: None,
                    new: Some((entry_mode.kind(), id)),
                });
            }
            C::Deletion {
                location,
                entry_mode,
                id,
                ..
            } => {
                if entry_mode.is_tree() {
                    continue;
                }
                out.push(ChangedPath {
                    path: location.to_string(),
                    kind: ChangeKind::Deleted,
                    old: Some((entry_mode.kind(), id)),
                    new: None,
                });
            }
            C::Modification {
                location,
                previous_entry_mode,
                previous_id,
                entry_mode,
                id,
                ..
            } => {
                match (previous_entry_mode.is_tree(), entry_mode.is_tree()) {
                    (true, true) => continue,
                    (false, false) => out.push(ChangedPath {
                        path: location.to_string(),
                        kind: ChangeKind::Modified,
                        old: Some((previous_entry_mode.kind(), previous_id)),
                        new: Some((entry_mode.kind(), id)),
                    }),
                    // A file became a directory or the reverse: the file side is a deletion or an addition.
                    (true, false) => out.push(ChangedPath {
                        path: location.to_string(),
                        kind: ChangeKind::Added,
                        old: None,
                        new: Some((entry_mode.kind(), id)),
                    }),
                    (false, true) => out.push(ChangedPath {
                        path: location.to_string(),
                        kind: ChangeKind::Deleted,
                        old: Some((previous_entry_mode.kind(), previous_id)),
                        new: None,
                    }),
                }
            }
            C::Rewrite { .. } => {}
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}
