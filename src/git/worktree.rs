//! Linked worktrees: create, list and remove them in process.
//!
//! Listing reads git's administrative files directly (`<common>/worktrees/*/
//! gitdir` and `HEAD`), which is what `git worktree list` does and keeps
//! `list` cheap with a thousand tasks.

use super::{normalize, ObjectId, Repo};
use crate::error::{Context, Error, Result};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// One linked worktree as git records it.
#[derive(Clone, Debug)]
pub struct Linked {
    /// The name of its administrative directory under `<common>/worktrees/`.
    pub name: String,
    /// The worktree's private git dir (`<common>/worktrees/<name>`).
    pub git_dir: PathBuf,
    /// Where the worktree lives.
    pub path: PathBuf,
    /// The branch checked out there (`refs/heads/...`), `None` when detached.
    pub branch: Option<String>,
}

impl Linked {
    /// Returns whether the worktree's directory still exists.
    pub fn exists(&self) -> bool {
        self.path.join(".git").exists()
    }
}

/// Lists the linked worktrees of the repository.
pub fn list(repo: &Repo) -> Result<Vec<Linked>> {
    let dir = repo.common_dir().join("worktrees");
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(Error::repo(
                format!("could not read '{}'", dir.display()),
                e,
            ))
        }
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let git_dir = entry.path();
        let Ok(gitdir) = std::fs::read_to_string(git_dir.join("gitdir")) else {
            continue;
        };
        let dot_git = PathBuf::from(gitdir.trim_end_matches(['\n', '\r']));
        let dot_git = if dot_git.is_relative() {
            normalize(&git_dir.join(dot_git))
        } else {
            dot_git
        };
        let path = dot_git
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or(dot_git.clone());
        let head = std::fs::read_to_string(git_dir.join("HEAD")).unwrap_or_default();
        let branch = head.strip_prefix("ref: ").map(|r| r.trim().to_owned());
        out.push(Linked {
            name: entry.file_name().to_string_lossy().into_owned(),
            git_dir,
            path,
            branch,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Returns the linked worktree that has `branch` checked out, if any.
pub fn find_by_branch(repo: &Repo, branch: &str) -> Result<Option<Linked>> {
    Ok(list(repo)?
        .into_iter()
        .find(|w| w.branch.as_deref() == Some(branch)))
}

/// Adds a linked worktree at `path` with `branch` (a full ref name) checked out.
///
/// gix removes whatever it created if checkout fails or `interrupt` is raised.
pub fn add(repo: &Repo, path: &Path, branch: &str, interrupt: &AtomicBool) -> Result<()> {
    let name: gix::refs::FullName = branch
        .try_into()
        .map_err(|e| Error::repo(format!("invalid branch name '{branch}'"), e))?;
    repo.inner
        .add_worktree(
            path,
            gix::worktree::add::Head::Attached(name),
            gix::progress::Discard,
            interrupt,
        )
        .context(|| format!("could not create worktree '{}'", path.display()))?;
    Ok(())
}

/// Removes a linked worktree without looking at its content: its directory is
/// first renamed aside (atomic), then its administrative entry and the
/// renamed directory are deleted.
///
/// Callers save any work first (SPEC §2.2).
pub fn remove(repo: &Repo, linked: &Linked) -> Result<()> {
    let aside = aside_path(&linked.path);
    let moved = match std::fs::rename(&linked.path, &aside) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => {
            return Err(Error::repo(
                format!("could not move '{}' aside", linked.path.display()),
                e,
            ))
        }
    };
    remove_admin(linked)?;
    if moved {
        std::fs::remove_dir_all(&aside)
            .context(|| format!("could not delete '{}'", aside.display()))?;
    }
    let _ = repo;
    Ok(())
}

/// Deletes only the administrative entry of a worktree (`git worktree prune` for one entry).
pub fn remove_admin(linked: &Linked) -> Result<()> {
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

/// Opens the repository as seen from a linked worktree, ignoring the environment of a hook.
pub fn open_at(path: &Path) -> Result<Repo> {
    let inner =
        gix::open(path).context(|| format!("could not open the worktree '{}'", path.display()))?;
    Repo::from_gix(inner)
}

/// Returns the commit checked out in a worktree directory, read from its `HEAD`.
pub fn head_of(path: &Path) -> Result<Option<ObjectId>> {
    open_at(path)?.head_commit()
}
