//! Removing a linked worktree without waiting for its files: the directory is renamed
//! aside (atomic), its administrative entry deleted, and the renamed directory deleted
//! by a background process of git-task's own (`delete-aside`), which `sweep` can tell
//! from a dead one by the lock it holds.

use super::Linked;
use crate::error::{Error, Result};
use crate::git::Repo;
use std::path::{Path, PathBuf};

/// Removes a linked worktree without looking at its content: its directory is
/// first renamed aside (atomic), then its administrative entry is deleted, and
/// the renamed directory is deleted in the background (SPEC §10: `remove` must
/// not wait for a 100,000-file delete). `sweep` deletes any leftover.
///
/// Callers save any work first (SPEC §2.2). A locked worktree is refused ([`Linked::check_unlocked`]).
pub fn remove(repo: &Repo, linked: &Linked) -> Result<()> {
    move_aside(repo, linked).map(drop)
}

/// A worktree directory moved aside by [`move_aside`]: deleted in the
/// background when dropped, so a caller can finish its own work first without
/// a 100,000-file delete competing for the disk and the cores.
#[must_use = "dropping it starts the delete"]
#[derive(Debug)]
pub struct Aside(Option<(PathBuf, PathBuf)>);

impl Drop for Aside {
    fn drop(&mut self) {
        // Best effort: what is left is an interrupted removal for `sweep`.
        let _ = self.start_delete();
    }
}

impl Aside {
    /// Starts deleting the moved-aside files in the background (deleting them now when no
    /// background process can start); an error says what could not be deleted.
    pub fn start_delete(&mut self) -> Result<()> {
        match self.0.take() {
            Some((aside, note)) if !delete_in_background(&aside, &note) => {
                delete_moved_aside(&aside, &note)
            }
            _ => Ok(()),
        }
    }

    /// Deletes the moved-aside files now, before returning: for a rollback, which
    /// must leave nothing behind when it reports that everything was removed.
    pub fn delete_now(mut self) -> Result<()> {
        match self.0.take() {
            Some((aside, note)) => {
                delete_dir_shared(&aside)?;
                let _ = std::fs::remove_file(note);
                Ok(())
            }
            None => Ok(()),
        }
    }
}

/// The first half of [`remove`]: the worktree is gone from its path and from
/// git's list of worktrees; its files are deleted when the returned [`Aside`] is dropped.
pub fn move_aside(repo: &Repo, linked: &Linked) -> Result<Aside> {
    linked.check_unlocked()?;
    linked.check_no_submodule_repositories()?;
    let aside = move_dir_aside(repo.common_dir(), &linked.path)?;
    remove_admin(linked)?;
    Ok(aside)
}

/// Renames the directory at `path` aside (a hidden sibling), noting it first under
/// `<common dir>/git-task/asides/`: only a directory git-task noted there is ever deleted as
/// a moved-aside one (by the background delete, or by `sweep` after an interruption), never
/// one chosen by its name, which anybody can give a directory.
pub fn move_dir_aside(common_dir: &Path, path: &Path) -> Result<Aside> {
    let aside = aside_path(path);
    let note = aside_note(common_dir, &aside);
    if let Some(dir) = note.parent() {
        crate::git::fs::create_state_dir(common_dir, dir)
            .map_err(|e| Error::repo(format!("could not create '{}'", dir.display()), e))?;
    }
    crate::git::fs::write_atomically(&note, aside.as_os_str().as_encoded_bytes())
        .map_err(|e| Error::repo(format!("could not write '{}'", note.display()), e))?;
    match std::fs::rename(path, &aside) {
        Ok(()) => Ok(Aside(Some((aside, note)))),
        Err(e) => {
            let _ = std::fs::remove_file(&note);
            if e.kind() == std::io::ErrorKind::NotFound {
                Ok(Aside(None))
            } else {
                Err(Error::repo(
                    format!("could not move '{}' aside", path.display()),
                    e,
                ))
            }
        }
    }
}

/// `<common dir>/git-task/asides`: the notes of directories moved aside.
pub fn asides_dir(common_dir: &Path) -> PathBuf {
    crate::git::state_dir(common_dir).join("asides")
}

fn aside_note(common_dir: &Path, aside: &Path) -> PathBuf {
    let name = aside
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    asides_dir(common_dir).join(name)
}

/// The directory a note under [`asides_dir`] says git-task moved aside.
pub fn noted_aside(note: &Path) -> Option<PathBuf> {
    let bytes = std::fs::read(note).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let path = PathBuf::from(text);
    (path.is_absolute()
        && path.file_name().map(|n| n.to_string_lossy().into_owned())
            == note.file_name().map(|n| n.to_string_lossy().into_owned()))
    .then_some(path)
}

/// Deletes only the administrative entry of a worktree (`git worktree prune` for one entry);
/// like `git worktree prune`, never a locked one's.
pub fn remove_admin(linked: &Linked) -> Result<()> {
    linked.check_unlocked()?;
    linked.check_no_submodule_repositories()?;
    match std::fs::remove_dir_all(&linked.git_dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::repo(
            format!("could not delete '{}'", linked.git_dir.display()),
            e,
        )),
    }
}

/// Returns a sibling path to move a worktree directory to before deleting it.
fn aside_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    path.with_file_name(format!(".{name}.removing-{}-{nanos}", std::process::id()))
}

/// Whether a directory name is one that [`remove`] moved aside and that no
/// deletion of this process is still working on: what an interrupted removal
/// leaves behind. (The deletions this process started run in the background;
/// they are not leftovers.)
pub fn is_leftover_removal(name: &str) -> bool {
    let Some(rest) = name
        .strip_prefix('.')
        .and_then(|n| n.rsplit_once(".removing-"))
        .map(|(_, rest)| rest)
    else {
        return false;
    };
    match rest.split_once('-') {
        Some((pid, _)) => pid.parse::<u32>().ok() != Some(std::process::id()),
        None => false,
    }
}

/// Returns whether a delete is working on the moved-aside directory at `path`: the
/// background delete holds an exclusive `flock` on it until it exits
/// ([`delete_in_background`]).
pub fn deletion_in_progress(path: &Path) -> bool {
    #[cfg(unix)]
    {
        let Ok(dir) = std::fs::File::open(path) else {
            return false;
        };
        // Dropping `dir` releases the lock again when it was free.
        rustix::fs::flock(&dir, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_err()
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// The directories git-task moved aside whose removal was interrupted: noted under
/// [`asides_dir`], still there, named by another process, and held by no delete. Notes whose
/// directory is gone are deleted.
pub fn leftover_removals(common_dir: &Path) -> Vec<(PathBuf, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(asides_dir(common_dir)) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for e in entries.flatten() {
        let note = e.path();
        let Some(aside) = noted_aside(&note) else {
            continue;
        };
        let name = e.file_name().to_string_lossy().into_owned();
        if std::fs::symlink_metadata(&aside).is_err() {
            let _ = std::fs::remove_file(&note);
        } else if is_leftover_removal(&name) && !deletion_in_progress(&aside) {
            found.push((aside, note));
        }
    }
    found
}

/// Deletes a worktree directory that [`move_aside`] moved: only such a directory (its note
/// under [`asides_dir`] says so), and also where the task left directories without write permission (a Go
/// module cache does), which `rm -rf` cannot empty.
pub fn delete_moved_aside(path: &Path, note: &Path) -> Result<()> {
    if noted_aside(note).as_deref() != Some(path) {
        return Err(Error::input(format!(
            "'{}' is not a worktree moved aside by git-task",
            path.display()
        )));
    }
    if delete_dir_shared(path).is_err() {
        make_writable(path);
        delete_dir_shared(path)?;
    }
    let _ = std::fs::remove_file(note);
    Ok(())
}

/// Gives the owner write and search permission on every directory below `path`.
///
/// By hand, not `walkdir`: a directory must be made searchable before it is listed,
/// and `walkdir` lists a directory before it hands it out.
fn make_writable(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return;
        };
        if !meta.is_dir() {
            return;
        }
        let mode = meta.permissions().mode();
        if mode & 0o700 != 0o700 {
            let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode | 0o700));
        }
        if let Ok(entries) = std::fs::read_dir(path) {
            for e in entries.flatten() {
                make_writable(&e.path());
            }
        }
    }
}

/// Deletes a directory that may also be being deleted by someone else at the
/// same time (a background delete of an earlier `remove`): what vanishes under
/// us is not an error.
pub fn delete_dir_shared(path: &Path) -> Result<()> {
    let mut tries = 0;
    loop {
        match std::fs::remove_dir_all(path) {
            Ok(()) => return Ok(()),
            Err(_) if !path.exists() => return Ok(()),
            // A file the other deleter took between our listing and our unlink.
            Err(e) if tries < 3 && e.kind() == std::io::ErrorKind::NotFound => tries += 1,
            Err(e) => {
                return Err(Error::repo(
                    format!("could not delete '{}'", path.display()),
                    e,
                ))
            }
        }
    }
}

/// Starts deleting `path` (a directory moved aside) in a detached background process:
/// git-task's own `delete-aside`, in a process group of its own from the moment it is
/// spawned, which then leaves the terminal's session and lowers its priority, so
/// neither closing the terminal nor the user's next command stops or competes with
/// it. Returns false if that could not start.
///
/// The child inherits an exclusive `flock` on the directory, taken here before it
/// is spawned, and holds it until it exits: `sweep` tells a delete in progress
/// from one that died by that lock ([`deletion_in_progress`]),
/// with no window between this process ending and the child starting.
fn delete_in_background(path: &Path, note: &Path) -> bool {
    use std::process::Command;
    if !cfg!(unix) {
        return false;
    }
    let Ok(exe) = std::env::current_exe() else {
        return false;
    };
    #[cfg(unix)]
    let _lock = {
        let Ok(dir) = std::fs::File::open(path) else {
            return false;
        };
        if rustix::fs::flock(&dir, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_err() {
            // Another delete holds it already.
            return true;
        }
        // Inherited by the child (and only by it: closed here once it is spawned).
        if rustix::io::fcntl_setfd(&dir, rustix::io::FdFlags::empty()).is_err() {
            return false;
        }
        dir
    };
    let mut cmd = Command::new(exe);
    cmd.arg("delete-aside")
        .arg("--note")
        .arg(note)
        .arg("--")
        .arg(path)
        .current_dir("/");
    crate::git::spawn_detached(cmd)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory this process moved aside is being deleted in the background;
    /// one moved aside by another process and still there is a leftover.
    #[test]
    fn only_removals_of_other_processes_are_leftovers() {
        let own = aside_path(Path::new("/tmp/x.tasks/alpha"));
        let own = own.file_name().unwrap().to_str().unwrap();
        assert!(own.starts_with(".alpha.removing-"), "{own}");
        assert!(!is_leftover_removal(own));
        let other = format!(
            ".alpha.removing-{}-12345",
            std::process::id().wrapping_add(1)
        );
        assert!(is_leftover_removal(&other));
        assert!(!is_leftover_removal("alpha"));
        assert!(!is_leftover_removal(".alpha.removing-"));
        assert!(!is_leftover_removal("alpha.removing-1-2"));
    }
}
