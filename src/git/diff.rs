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
///
/// Only subtrees whose ids differ are read. This uses gix's plain tree diff,
/// not `Repository::diff_tree_to_tree`, which sets up a blob-diff cache and
/// with it loads the whole index for attributes (a 100,000-entry index costs
/// more than the diff itself).
pub fn tree_to_tree(repo: &Repo, old: ObjectId, new: ObjectId) -> Result<Vec<ChangedPath>> {
    Ok(tree_to_tree_raw(repo, old, new)?
        .into_iter()
        .map(|c| ChangedPath {
            path: c.path.to_string(),
            kind: c.kind,
            old: c.old,
            new: c.new,
        })
        .collect())
}

/// One changed path with its name as git's bytes (which need not be UTF-8): for
/// writing to disk, where a lossy name would miss the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawChange {
    /// Repository-relative path with `/`, as stored in the tree.
    pub path: gix::bstr::BString,
    /// How it changed.
    pub kind: ChangeKind,
    /// Entry kind before (`None` when added).
    pub old: Option<(EntryKind, ObjectId)>,
    /// Entry kind after (`None` when deleted).
    pub new: Option<(EntryKind, ObjectId)>,
}

/// [`tree_to_tree`] with the paths as git's bytes.
pub fn tree_to_tree_raw(repo: &Repo, old: ObjectId, new: ObjectId) -> Result<Vec<RawChange>> {
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
    let mut recorder = gix::diff::tree::Recorder::default();
    gix::diff::tree(
        gix::objs::TreeRefIter::from_bytes(&old_tree.data, old.kind()),
        gix::objs::TreeRefIter::from_bytes(&new_tree.data, new.kind()),
        gix::diff::tree::State::default(),
        &repo.inner.objects,
        &mut recorder,
    )
    .context(|| format!("could not diff {old} and {new}"))?;
    use gix::diff::tree::recorder::Change as C;
    for change in recorder.records {
        match change {
            C::Addition {
                entry_mode,
                oid,
                path,
                ..
            } => {
                if entry_mode.is_tree() {
                    continue;
                }
                out.push(RawChange {
                    path,
                    kind: ChangeKind::Added,
                    old: None,
                    new: Some((entry_mode.kind(), oid)),
                });
            }
            C::Deletion {
                entry_mode,
                oid,
                path,
                ..
            } => {
                if entry_mode.is_tree() {
                    continue;
                }
                out.push(RawChange {
                    path,
                    kind: ChangeKind::Deleted,
                    old: Some((entry_mode.kind(), oid)),
                    new: None,
                });
            }
            C::Modification {
                previous_entry_mode,
                previous_oid,
                entry_mode,
                oid,
                path,
            } => {
                match (previous_entry_mode.is_tree(), entry_mode.is_tree()) {
                    (true, true) => continue,
                    (false, false) => out.push(RawChange {
                        path,
                        kind: ChangeKind::Modified,
                        old: Some((previous_entry_mode.kind(), previous_oid)),
                        new: Some((entry_mode.kind(), oid)),
                    }),
                    // A file became a directory or the reverse: the file side is a deletion or an addition.
                    (true, false) => out.push(RawChange {
                        path,
                        kind: ChangeKind::Added,
                        old: None,
                        new: Some((entry_mode.kind(), oid)),
                    }),
                    (false, true) => out.push(RawChange {
                        path,
                        kind: ChangeKind::Deleted,
                        old: Some((previous_entry_mode.kind(), previous_oid)),
                        new: None,
                    }),
                }
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}
