//! Checking out a state into an existing worktree in process: its files and
//! its index. `twoway` moves a worktree from one commit to another with git's
//! two-way rules (declining whatever is not certain); `inplace` writes a saved
//! state (an attempt, a checkpoint) over the worktree. Both (and the
//! pre-commit hook's revert) write files through the one writer here:
//! [`write_temp`] / [`write_entry`] and [`delete`].

pub mod inplace;
pub mod twoway;

use crate::error::{Context, Error, Result};
use crate::git::{objects, EntryKind, ObjectId, Repo};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Returns the temporary name a file of process `pid` gets next to `full` while it is
/// written (recovery deletes a killed process's by this name).
pub fn temp_name(full: &Path, pid: u32) -> PathBuf {
    let name = full
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    full.with_file_name(format!(".{name}.git-task-{pid}.tmp"))
}

/// Writes blob `id` as a `kind` entry (file, executable, link) to a temporary sibling
/// of `workdir/rel` ([`temp_name`] of this process), creating the directories it needs;
/// returns (temporary, final) paths. Files are created as git creates them (0666, or
/// 0777 when executable, less the umask); a link is a symlink (off Unix, a file holding
/// its target, as git writes it without symlinks).
pub fn write_temp(
    repo: &Repo,
    workdir: &Path,
    rel: &Path,
    kind: EntryKind,
    id: ObjectId,
) -> Result<(PathBuf, PathBuf)> {
    let full = workdir.join(rel);
    let path = rel.display();
    if let Some(parent) = full.parent() {
        std::fs::create_dir_all(parent)
            .context(|| format!("could not create the directory of '{path}'"))?;
    }
    let blob = objects::read_blob(repo, id)
        .map_err(|e| Error::repo(format!("could not read the content of '{path}'"), e))?;
    let tmp = temp_name(&full, std::process::id());
    // A file of an earlier process with this pid: never written into.
    let _ = std::fs::remove_file(&tmp);
    if kind == EntryKind::Link {
        let target = crate::git::path::from_repo(crate::git::bstr::BStr::new(&blob))
            .map_err(|e| Error::repo(format!("could not read the target of '{path}'"), e))?;
        symlink(target, &tmp).context(|| format!("could not create the link '{path}'"))?;
    } else {
        write_file(&tmp, &blob, kind == EntryKind::BlobExecutable)
            .context(|| format!("could not write '{path}'"))?;
    }
    Ok((tmp, full))
}

/// Writes blob `id` as a `kind` entry at `workdir/rel`: through a temporary sibling
/// renamed over what is there, so the path holds the old content or the new, never
/// half. An empty directory in the way is removed; a submodule (`Commit`) gets its
/// directory only; a `Tree` is nothing to write.
pub fn write_entry(
    repo: &Repo,
    workdir: &Path,
    rel: &Path,
    kind: EntryKind,
    id: ObjectId,
) -> Result<()> {
    let full = workdir.join(rel);
    let path = rel.display();
    match kind {
        EntryKind::Tree => return Ok(()),
        EntryKind::Commit => {
            // Its content is the submodule's business.
            return std::fs::create_dir_all(&full).context(|| format!("could not create '{path}'"));
        }
        _ => {}
    }
    if std::fs::symlink_metadata(&full).is_ok_and(|m| m.is_dir()) {
        std::fs::remove_dir(&full)
            .context(|| format!("could not replace the directory '{path}'"))?;
    }
    let (tmp, full) = write_temp(repo, workdir, rel, kind, id)?;
    if let Err(e) = std::fs::rename(&tmp, &full) {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::repo(format!("could not write '{path}'"), e));
    }
    Ok(())
}

/// Deletes what is at `workdir/rel` (already gone is fine; a directory, a submodule's,
/// only when empty) and the directories that leaves empty.
pub fn delete(workdir: &Path, rel: &Path) -> Result<()> {
    let full = workdir.join(rel);
    let path = rel.display();
    match std::fs::symlink_metadata(&full) {
        Ok(m) if m.is_dir() => {
            let _ = std::fs::remove_dir(&full);
        }
        Ok(_) => std::fs::remove_file(&full).context(|| format!("could not delete '{path}'"))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::repo(format!("could not read '{path}'"), e)),
    }
    remove_empty_parents(workdir, &full);
    Ok(())
}

/// Removes the directories above `full` that are empty, up to (not including) `workdir`.
pub fn remove_empty_parents(workdir: &Path, full: &Path) {
    let mut dir = full.parent();
    while let Some(d) = dir {
        if d == workdir || !d.starts_with(workdir) || std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}

#[cfg(unix)]
fn write_file(path: &Path, data: &[u8], executable: bool) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(if executable { 0o777 } else { 0o666 })
        .open(path)?;
    let written = file.write_all(data);
    if written.is_err() {
        let _ = std::fs::remove_file(path);
    }
    written
}

#[cfg(not(unix))]
fn write_file(path: &Path, data: &[u8], _executable: bool) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    let written = file.write_all(data);
    if written.is_err() {
        let _ = std::fs::remove_file(path);
    }
    written
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(not(unix))]
fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    let bytes = crate::git::path::to_repo(target)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()))?;
    write_file(link, bytes.as_ref(), false)
}
