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
//! never contain them.

use crate::error::{Context, Error, Result};
use crate::git::diff::{tree_to_tree, tree_to_tree_raw, ChangeKind, ChangedPath};
use crate::git::{ObjectId, Repo};
use gix::object::tree::EntryKind;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

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
    crate::git::pathsafe::check_changes(&changes, &format!("tree {target}"))?;
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
    Ok(changes.into_iter().map(|c| c.path).collect())
}

/// Checks, without changing anything, that `apply` from `current` to `target` finds nothing in its way.
pub fn check(wt: &Repo, current: ObjectId, target: ObjectId) -> Result<()> {
    let workdir = wt.require_workdir()?.to_path_buf();
    let changes = tree_to_tree(wt, current, target)?;
    crate::git::pathsafe::check_changes(&changes, &format!("tree {target}"))?;
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

fn delete(workdir: &Path, rel: &Path) -> Result<()> {
    let full = workdir.join(rel);
    let path = rel.display();
    match std::fs::symlink_metadata(&full) {
        Ok(m) if m.is_dir() => {
            // A gitlink's directory: remove it only when empty.
            let _ = std::fs::remove_dir(&full);
        }
        Ok(_) => std::fs::remove_file(&full).context(|| format!("could not delete '{path}'"))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::repo(format!("could not read '{path}'"), e)),
    }
    remove_empty_parents(workdir, &full);
    Ok(())
}

/// Removes the now-empty directories above `full`, up to (not including) `workdir`.
fn remove_empty_parents(workdir: &Path, full: &Path) {
    let mut dir = full.parent();
    while let Some(d) = dir {
        if d == workdir || !d.starts_with(workdir) {
            break;
        }
        if std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}

fn write_entry(wt: &Repo, workdir: &Path, rel: &Path, kind: EntryKind, id: ObjectId) -> Result<()> {
    let full = workdir.join(rel);
    let path = rel.display();
    if let Some(parent) = full.parent() {
        std::fs::create_dir_all(parent)
            .context(|| format!("could not create the directory of '{path}'"))?;
    }
    if kind == EntryKind::Commit {
        // A submodule: its directory is all git-task makes; its content is the submodule's business.
        std::fs::create_dir_all(&full).context(|| format!("could not create '{path}'"))?;
        return Ok(());
    }
    let blob = wt
        .inner
        .find_blob(id)
        .context(|| format!("could not read the content of '{path}'"))?;
    if let Ok(m) = std::fs::symlink_metadata(&full) {
        if m.is_dir() {
            std::fs::remove_dir(&full)
                .context(|| format!("could not replace the directory '{path}'"))?;
        }
    }
    let tmp = temp_sibling(&full);
    if kind == EntryKind::Link {
        let target = gix::path::from_bstr(gix::bstr::BStr::new(&blob.data))
            .map_err(|e| Error::repo(format!("could not read the target of '{path}'"), e))?
            .into_owned();
        symlink(&target, &tmp).context(|| format!("could not create the link '{path}'"))?;
    } else {
        std::fs::write(&tmp, &blob.data).context(|| format!("could not write '{path}'"))?;
        set_executable(&tmp, kind == EntryKind::BlobExecutable)
            .context(|| format!("could not set the mode of '{path}'"))?;
    }
    if let Err(e) = std::fs::rename(&tmp, &full) {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::repo(format!("could not write '{path}'"), e));
    }
    Ok(())
}

fn temp_sibling(full: &Path) -> PathBuf {
    let name = full
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    full.with_file_name(format!(".{name}.git-task-{}.tmp", std::process::id()))
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    let _ = std::fs::remove_file(link);
    std::os::unix::fs::symlink(target, link)
}

#[cfg(not(unix))]
fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    // Without symlinks, git writes the target as a plain file.
    std::fs::write(link, gix::path::into_bstr(target).as_ref() as &[u8])
}

#[cfg(unix)]
fn set_executable(path: &Path, executable: bool) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut perms = std::fs::metadata(path)?.permissions();
    let mode = perms.mode();
    // Like git: executable means "readable bits become executable too", respecting the umask already applied.
    let new = if executable {
        mode | ((mode & 0o444) >> 2)
    } else {
        mode & !0o111
    };
    perms.set_mode(new);
    std::fs::set_permissions(path, perms)
}

#[cfg(not(unix))]
fn set_executable(_path: &Path, _executable: bool) -> std::io::Result<()> {
    Ok(())
}
