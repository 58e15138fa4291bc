//! A lock file per ledger entry, held while a writer reads an entry and writes it back (and by
//! `claims`, while it moves its ref and its copy together: a few milliseconds). It holds the
//! owner's pid: a lock whose owner is gone (killed) is broken by the next writer.

use crate::error::{Context, Result};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A held lock; released when dropped.
pub struct Lock {
    path: PathBuf,
}

impl Lock {
    /// Takes the lock at `path`, waiting up to ten seconds for a live owner.
    pub fn acquire(path: &Path) -> Result<Lock> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .context(|| format!("could not create '{}'", parent.display()))?;
        }
        let started = Instant::now();
        let pid = std::process::id().to_string();
        loop {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
            {
                Ok(mut file) => {
                    use std::io::Write;
                    let _ = file.write_all(pid.as_bytes());
                    return Ok(Lock {
                        path: path.to_owned(),
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    if owner_is_gone(path) {
                        let _ = std::fs::remove_file(path);
                        continue;
                    }
                    if started.elapsed() > Duration::from_secs(10) {
                        return Err(crate::Error::repo_msg(format!(
                            "'{}' has been locked for ten seconds by another git-task process",
                            path.display()
                        ))
                        .hint(format!(
                            "if no git-task command is running, delete '{}'",
                            path.display()
                        )));
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(e) => {
                    return Err(crate::Error::repo(
                        format!("could not create '{}'", path.display()),
                        e,
                    ))
                }
            }
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Whether the process named in the lock file at `path` no longer runs. A lock that names no
/// pid is young (its owner has not written it yet) unless it is older than a second.
pub fn owner_is_gone(path: &Path) -> bool {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    match text.trim().parse::<i32>() {
        Ok(pid) => !process_runs(pid),
        Err(_) => std::fs::metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > Duration::from_secs(1)),
    }
}

#[cfg(unix)]
fn process_runs(pid: i32) -> bool {
    match rustix::process::Pid::from_raw(pid) {
        Some(pid) => !matches!(
            rustix::process::test_kill_process(pid),
            Err(rustix::io::Errno::SRCH)
        ),
        None => false,
    }
}

#[cfg(not(unix))]
fn process_runs(_pid: i32) -> bool {
    true
}
