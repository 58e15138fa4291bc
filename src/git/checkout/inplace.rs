//! Writing a state into a worktree in place: its files and its index.
//!
//! gix 0.90 only checks out into empty directories, so this module does the
//! in-place part `git read-tree -m -u` + `git checkout-index` would do:
//!
//! - files: only the paths whose content differs between the current state
//!   and the target are written or deleted; a file is written to a temporary
//!   sibling and renamed over the old one; symlinks and the executable bit
//!   follow the entry kind; directories left empty by a deletion are removed
//!   (a directory holding ignored files stays). Everything that could block a
//!   write (an ignored file or directory where the target needs a path) is
//!   checked before the first change, so a refusal changes nothing.
//! - index: rebuilt from the target index tree; entries whose content equals
//!   the file on disk get fresh stat information (so `git status` sees them
//!   clean without rehashing), the others keep zeroed stat information (so
//!   git rehashes them and reports them modified).
//!
//! Ignored files are never read or written: the current and target trees
//! never contain them. A merge, cherry-pick or revert in progress ends, as with
//! `git reset --hard` ([`end_operations`]).

use super::{delete, write_entry};
use crate::error::{Context, Error, Result};
use crate::git::diff::{tree_to_tree, tree_to_tree_raw, ChangeKind, ChangedPath};
use crate::git::{ObjectId, Repo};
use gix::object::tree::EntryKind;
use std::collections::BTreeSet;
use std::path::Path;

/// Makes the files of the worktree `wt` go from `current` (a tree of what is on
/// disk, untracked files included) to `target`, and writes its index from `index`.
///
/// Returns the paths whose files were written or deleted.
pub fn apply(
    wt: &Repo,
    current: ObjectId,
    target: ObjectId,
    index: ObjectId,
) -> Result<Vec<String>> {
    let workdir = wt.require_workdir()?.to_path_buf();
    let raw = tree_to_tree_raw(wt, current, target)?;
    let changes: Vec<ChangedPath> = raw.iter().map(|c| c.to_changed()).collect();
    // SPEC §5: a path git refuses is never written (nor deleted) by git-task.
    crate::git::diff::check_safe(&changes, &format!("tree {target}"))?;
    check_blockers(&workdir, &changes)?;
    // Files are written under their names' own bytes: a lossy name would miss the file.
    // Deletions first: a file may have to make room for a directory of the same name.
    for c in raw.iter().filter(|c| c.new.is_none()) {
        delete(&workdir, on_disk(c.path.as_ref())?)?;
    }
    for c in &raw {
        if let Some((kind, id)) = c.new {
            write_entry(wt, &workdir, on_disk(c.path.as_ref())?, kind, id)?;
        }
    }
    write_index(wt, index, target)?;
    end_operations(wt.git_dir());
    Ok(changes.into_iter().map(|c| c.path).collect())
}

/// The files by which git marks a merge, cherry-pick or revert in progress in a worktree's
/// git dir: the ones `git reset --hard` deletes (`MERGE_AUTOSTASH` holds a stash, so it stays).
const OPERATION_FILES: [&str; 8] = [
    "MERGE_HEAD",
    "MERGE_MSG",
    "MERGE_MODE",
    "MERGE_RR",
    "AUTO_MERGE",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
    "SQUASH_MSG",
];

/// Puts the HEAD of the worktree whose git dir is `git_dir` back on `branch` (a full ref
/// name) without touching its files or index, ending any operation in progress there
/// (a rebase's state too: the commits it was replaying are the caller's to save first).
/// The caller then rewrites the files and index ([`apply`]).
pub fn attach_head(git_dir: &Path, branch: &str) -> Result<()> {
    end_operations(git_dir);
    for dir in ["rebase-merge", "rebase-apply"] {
        match std::fs::remove_dir_all(git_dir.join(dir)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(Error::repo(
                    format!("could not delete '{}'", git_dir.join(dir).display()),
                    e,
                ))
            }
        }
    }
    let head = git_dir.join("HEAD");
    crate::git::fs::write_atomically(&head, format!("ref: {branch}\n").as_bytes())
        .map_err(|e| Error::repo(format!("could not write '{}'", head.display()), e))
}

/// Ends a merge, cherry-pick or revert in progress in the worktree whose git dir is `git_dir`,
/// as `git reset --hard` does: its index no longer holds the conflicts, and a `MERGE_HEAD` left
/// behind would make the next commit a merge of a state that was discarded.
pub fn end_operations(git_dir: &Path) {
    for name in OPERATION_FILES {
        let _ = std::fs::remove_file(git_dir.join(name));
    }
}

/// Checks, without changing anything, that `apply` from `current` to `target` finds nothing in its way.
pub fn check(wt: &Repo, current: ObjectId, target: ObjectId) -> Result<()> {
    let workdir = wt.require_workdir()?.to_path_buf();
    let changes = tree_to_tree(wt, current, target)?;
    crate::git::diff::check_safe(&changes, &format!("tree {target}"))?;
    check_blockers(&workdir, &changes)
}

/// Writes the index of `wt` from `index`, with stat information for entries equal to `worktree`.
pub fn write_index(wt: &Repo, index: ObjectId, worktree: ObjectId) -> Result<()> {
    let workdir = wt.require_workdir()?.to_path_buf();
    let differs: BTreeSet<String> = tree_to_tree(wt, index, worktree)?
        .into_iter()
        .map(|c| c.path)
        .collect();
    let mut file = wt
        .inner
        .index_from_tree(&index)
        .context(|| format!("could not build an index from tree {index}"))?;
    for (entry, path) in file.entries_mut_with_paths() {
        let path = path.to_string();
        if differs.contains(&path) || entry.mode.contains(gix::index::entry::Mode::COMMIT) {
            continue;
        }
        let full = workdir.join(&path);
        if let Ok(meta) = gix::index::fs::Metadata::from_path_no_follow(&full) {
            if let Ok(stat) = gix::index::entry::Stat::from_fs(&meta) {
                entry.stat = stat;
            }
        }
    }
    file.write(gix::index::write::Options::default())
        .context(|| "could not write the index".into())?;
    Ok(())
}

/// Refuses before any change when something not in the current tree (an ignored file) is in the way.
fn check_blockers(workdir: &Path, changes: &[ChangedPath]) -> Result<()> {
    let deleted: BTreeSet<&str> = changes
        .iter()
        .filter(|c| c.kind == ChangeKind::Deleted)
        .map(|c| c.path.as_str())
        .collect();
    for c in changes.iter().filter(|c| c.new.is_some()) {
        // Every parent must be a directory, or a file this change deletes.
        let mut prefix = String::new();
        let parts: Vec<&str> = c.path.split('/').collect();
        for part in &parts[..parts.len() - 1] {
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(part);
            match std::fs::symlink_metadata(workdir.join(&prefix)) {
                Ok(m) if m.is_dir() => {}
                Ok(_) if deleted.contains(prefix.as_str()) => {}
                Ok(_) => return Err(blocked(&prefix, &c.path)),
                Err(_) => break,
            }
        }
        // The path itself must not be a directory (one holding ignored files, say).
        if let Ok(m) = std::fs::symlink_metadata(workdir.join(&c.path)) {
            if m.is_dir() && c.new.is_some_and(|(k, _)| k != EntryKind::Commit) {
                // Fine when everything in it is deleted first (a directory the task made where a file was).
                if !only_deleted_inside(workdir, &c.path, &deleted) {
                    return Err(blocked(&c.path, &c.path));
                }
            }
        }
    }
    Ok(())
}

/// Returns whether every file below the directory `dir` is one of the `deleted` paths.
fn only_deleted_inside(workdir: &Path, dir: &str, deleted: &BTreeSet<&str>) -> bool {
    let Ok(entries) = std::fs::read_dir(workdir.join(dir)) else {
        return false;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let rel = format!("{dir}/{name}");
        let is_dir = entry.file_type().map(|t| t.is_dir()).unwrap_or(false);
        let ok = if is_dir {
            only_deleted_inside(workdir, &rel, deleted)
        } else {
            deleted.contains(rel.as_str())
        };
        if !ok {
            return false;
        }
    }
    true
}

fn blocked(what: &str, path: &str) -> Error {
    Error::input(format!(
        "cannot write '{path}': '{what}' is in the way (an ignored or untracked path)"
    ))
    .hint(format!("move '{what}' away, then run the command again"))
}

/// Returns a tree path as a relative path on disk.
fn on_disk(path: &gix::bstr::BStr) -> Result<&Path> {
    gix::path::from_byte_slice(path).map_err(|e| Error::repo(format!("bad path '{path}'"), e))
}
