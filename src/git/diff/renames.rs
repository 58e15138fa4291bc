//! Tree-to-tree changes with rename detection (for `changes`).

use crate::error::{Context, Result};
use crate::git::{ObjectId, Repo};

/// How a file changed, renames included.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// A new file.
    Created,
    /// Content or mode changed.
    Modified,
    /// The file is gone.
    Deleted,
    /// Moved from `old_path` (its content may have changed too).
    Renamed,
}

/// One changed file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileChange {
    /// The path now (the old path for a deletion).
    pub path: String,
    /// How it changed.
    pub status: Status,
    /// For a rename: where it came from.
    pub old_path: Option<String>,
}

/// Returns the files that differ between two trees, with git's default rename detection, sorted by path.
pub fn tree_to_tree(repo: &Repo, old: ObjectId, new: ObjectId) -> Result<Vec<FileChange>> {
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
    let options = gix::diff::Options::default().with_rewrites(Some(gix::diff::Rewrites::default()));
    let changes = repo
        .inner
        .diff_tree_to_tree(&old_tree, &new_tree, options)
        .context(|| format!("could not diff {old} and {new}"))?;
    use gix::object::tree::diff::ChangeDetached as C;
    for change in changes {
        let (path, status, old_path) = match change {
            C::Addition {
                location,
                entry_mode,
                ..
            } if !entry_mode.is_tree() => (location, Status::Created, None),
            C::Deletion {
                location,
                entry_mode,
                ..
            } if !entry_mode.is_tree() => (location, Status::Deleted, None),
            C::Modification {
                location,
                previous_entry_mode,
                entry_mode,
                ..
            } => match (previous_entry_mode.is_tree(), entry_mode.is_tree()) {
                (false, false) => (location, Status::Modified, None),
                (true, false) => (location, Status::Created, None),
                (false, true) => (location, Status::Deleted, None),
                (true, true) => continue,
            },
            C::Rewrite {
                source_location,
                location,
                entry_mode,
                copy,
                ..
            } if !entry_mode.is_tree() => {
                if copy {
                    (location, Status::Created, None)
                } else {
                    (location, Status::Renamed, Some(source_location.to_string()))
                }
            }
            _ => continue,
        };
        out.push(FileChange {
            path: path.to_string(),
            status,
            old_path,
        });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}
