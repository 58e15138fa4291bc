//! A lock file per target branch that serializes git-task merges into it.

use super::select::short;
use crate::error::{Error, Result};
use crate::git::Repo;
use std::path::PathBuf;

/// A lock file under `<common dir>/git-task/locks/` that serializes merges into one branch.
///
/// Held from the final check of the checked-out target to its update; a lock
/// whose process is gone is taken over, and so is one older than 2 s that names no
/// process (its maker was killed before it wrote its pid); after 60 s of waiting the
/// merge fails.
pub(super) struct BranchLock {
    path: PathBuf,
}

impl BranchLock {
    pub(super) fn acquire(repo: &Repo, branch: &str) -> Result<BranchLock> {
        let dir = repo.common_dir().join("git-task").join("locks");
        std::fs::create_dir_all(&dir)
            .map_err(|e| Error::repo(format!("could not create '{}'", dir.display()), e))?;
        let path = dir.join(format!("merge-{}.lock", branch.replace('/', "%")));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut file) => {
                    use std::io::Write;
                    let _ = writeln!(file, "{}", std::process::id());
                    return Ok(BranchLock { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let holder = std::fs::read_to_string(&path)
                        .ok()
                        .and_then(|t| t.trim().parse::<u32>().ok());
                    // A holder writes its pid right after making the file: one killed in
                    // between left it empty, and nobody would ever be seen to let it go.
                    let orphaned = holder.is_none()
                        && std::fs::metadata(&path)
                            .and_then(|m| m.modified())
                            .ok()
                            .and_then(|t| t.elapsed().ok())
                            .is_some_and(|age| age > std::time::Duration::from_secs(2));
                    if orphaned || holder.is_some_and(crate::recover::liveness::process_is_gone) {
                        let _ = std::fs::remove_file(&path);
                        continue;
                    }
                    if std::time::Instant::now() >= deadline {
                        return Err(Error::repo_msg(format!(
                            "another git-task merge into '{}' has been running for a minute",
                            short(branch)
                        ))
                        .hint(format!(
                            "if no merge is running, delete '{}'",
                            path.display()
                        )));
                    }
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err(e) => {
                    return Err(Error::repo(
                        format!("could not create '{}'", path.display()),
                        e,
                    ))
                }
            }
        }
    }
}

impl Drop for BranchLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
