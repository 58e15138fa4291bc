//! A lock file per target branch that serializes git-task merges into it, taken in arrival order.

use super::select::short;
use crate::error::{Error, Result};
use crate::git::Repo;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a merge waits for its turn before it gives up (and names who holds the lock).
pub const WAIT: Duration = Duration::from_secs(600);

/// Who holds a branch lock, and how long a merge has waited for it.
#[derive(Clone, Debug)]
pub struct Waiting {
    /// The target branch (short name).
    pub branch: String,
    /// The holder's process id, when it wrote one.
    pub pid: Option<u32>,
    /// The holder's command line, when it wrote one.
    pub command: Option<String>,
    /// Merges that arrived before this one and wait too (the holder not counted).
    pub ahead: usize,
    /// How long this merge has waited so far.
    pub waited: Duration,
    /// This merge has the lock now (the last report, after at least one other).
    pub taken: bool,
}

impl Waiting {
    /// `pid 1234 (git-task merge a)`, or what is known of it.
    pub fn holder(&self) -> String {
        match (self.pid, &self.command) {
            (Some(pid), Some(cmd)) => format!("pid {pid} ({cmd})"),
            (Some(pid), None) => format!("pid {pid}"),
            _ => "a merge that has not said who it is yet".to_owned(),
        }
    }
}

/// A lock file under `<common dir>/git-task/locks/` that serializes merges into one branch.
///
/// Held from before the landing is computed to the update of the checked-out target, so the
/// target moves under a merge only by a writer outside git-task. Merges waiting for it take
/// their turn in arrival order: each leaves a ticket (`merge-<branch>.queue/<nanos>-<pid>`) and
/// takes the lock only when no live ticket is older. A lock or ticket whose process is gone is
/// taken over, and so is a lock older than 2 s that names no process (its maker was killed
/// before it wrote its pid); after [`WAIT`] the merge fails, naming the holder.
pub(super) struct BranchLock {
    path: PathBuf,
}

/// A waiter's place in the queue; its file is deleted when it is dropped.
struct Ticket(PathBuf);

impl Drop for Ticket {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn io(what: &Path, e: std::io::Error) -> Error {
    Error::repo(format!("could not create '{}'", what.display()), e)
}

/// This process's command line, as the holder of a lock names itself.
fn own_command() -> String {
    let mut args = std::env::args();
    let first = args.next().unwrap_or_default();
    let program = Path::new(&first)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or(first);
    std::iter::once(program)
        .chain(args)
        .collect::<Vec<_>>()
        .join(" ")
}

fn age(path: &Path) -> Option<Duration> {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
}

impl BranchLock {
    /// Waits (up to [`WAIT`]) for the lock of `branch`; `waiting` is told about every second.
    pub(super) fn acquire(
        repo: &Repo,
        branch: &str,
        waiting: &mut dyn FnMut(&Waiting),
    ) -> Result<BranchLock> {
        Self::acquire_within(repo, branch, WAIT, waiting)
    }

    pub(super) fn acquire_within(
        repo: &Repo,
        branch: &str,
        wait: Duration,
        waiting: &mut dyn FnMut(&Waiting),
    ) -> Result<BranchLock> {
        let dir = repo.common_dir().join("git-task").join("locks");
        let name = branch.replace('/', "%");
        let path = dir.join(format!("merge-{name}.lock"));
        let queue = dir.join(format!("merge-{name}.queue"));
        std::fs::create_dir_all(&queue).map_err(|e| io(&queue, e))?;
        let started = Instant::now();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let own = format!("{nanos:024}-{:010}", std::process::id());
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(queue.join(&own))
            .map_err(|e| io(&queue.join(&own), e))?;
        let ticket = Ticket(queue.join(&own));
        let mut told = started;
        loop {
            let ahead = tickets_ahead(&queue, &own);
            if ahead == 0 {
                match std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&path)
                {
                    Ok(mut file) => {
                        use std::io::Write;
                        let _ = writeln!(file, "{}\n{}", std::process::id(), own_command());
                        drop(ticket);
                        if told > started {
                            waiting(&Waiting {
                                branch: short(branch).to_owned(),
                                pid: Some(std::process::id()),
                                command: None,
                                ahead: 0,
                                waited: started.elapsed(),
                                taken: true,
                            });
                        }
                        return Ok(BranchLock { path });
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(io(&path, e)),
                }
            }
            let text = std::fs::read_to_string(&path).ok();
            let mut lines = text.as_deref().unwrap_or_default().lines();
            let pid = lines.next().and_then(|l| l.trim().parse::<u32>().ok());
            let command = lines.next().map(str::to_owned).filter(|c| !c.is_empty());
            if text.is_some() {
                // A holder writes its pid right after making the file: one killed in between
                // left it empty, and nobody would ever be seen to let it go.
                let orphaned =
                    pid.is_none() && age(&path).is_some_and(|a| a > Duration::from_secs(2));
                if orphaned || pid.is_some_and(crate::recover::liveness::process_is_gone) {
                    let _ = std::fs::remove_file(&path);
                    continue;
                }
            }
            let now = Instant::now();
            let state = Waiting {
                branch: short(branch).to_owned(),
                pid,
                command,
                ahead,
                waited: now - started,
                taken: false,
            };
            if now - started >= wait {
                let holder = if text.is_some() {
                    state.holder()
                } else {
                    format!("{ahead} merge(s) that arrived before this one")
                };
                return Err(Error::repo_msg(format!(
                    "waited {} s for the merge into '{}' held by {holder}; nothing was merged",
                    (now - started).as_secs(),
                    short(branch)
                ))
                .with_code("merge_lock_timeout")
                .hint(format!(
                    "run the merge again once it is done; if that process is not a git-task merge, delete '{}'",
                    path.display()
                )));
            }
            if now - told >= Duration::from_secs(1) {
                told = now;
                waiting(&state);
            }
            std::thread::sleep(Duration::from_millis(15));
        }
    }
}

/// How many live tickets in `queue` are older than `own`; the tickets of processes that are
/// gone are deleted on the way.
fn tickets_ahead(queue: &Path, own: &str) -> usize {
    let Ok(entries) = std::fs::read_dir(queue) else {
        return 0;
    };
    let mut ahead = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name >= own {
            continue;
        }
        let pid = name
            .rsplit_once('-')
            .and_then(|(_, p)| p.parse::<u32>().ok());
        match pid {
            Some(pid) if !crate::recover::liveness::process_is_gone(pid) => ahead += 1,
            _ => {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    ahead
}

impl Drop for BranchLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> (tempfile::TempDir, Repo) {
        let tmp = tempfile::tempdir().unwrap();
        let ok = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(tmp.path())
            .status()
            .unwrap()
            .success();
        assert!(ok);
        let repo = Repo::discover(tmp.path()).unwrap();
        (tmp, repo)
    }

    /// A wait that runs out names the holder's pid and command.
    #[test]
    fn a_wait_that_runs_out_names_the_holder() {
        let (_tmp, repo) = repo();
        let dir = repo.common_dir().join("git-task/locks");
        std::fs::create_dir_all(&dir).unwrap();
        let me = std::process::id();
        std::fs::write(
            dir.join("merge-refs%heads%main.lock"),
            format!("{me}\ngit-task merge slow\n"),
        )
        .unwrap();
        let err = BranchLock::acquire_within(
            &repo,
            "refs/heads/main",
            Duration::from_millis(300),
            &mut |_| {},
        )
        .err()
        .expect("the lock is held");
        let text = format!("{err}");
        assert!(
            text.contains(&format!("pid {me} (git-task merge slow)")),
            "{text}"
        );
        assert!(text.contains("'main'"), "{text}");
        // Its ticket went with it.
        let queue = dir.join("merge-refs%heads%main.queue");
        assert_eq!(std::fs::read_dir(queue).unwrap().count(), 0);
    }

    /// The ticket of a process that is gone does not hold the queue up; a live older one does.
    #[test]
    fn tickets_of_gone_processes_are_skipped() {
        let (_tmp, repo) = repo();
        let queue = repo
            .common_dir()
            .join("git-task/locks/merge-refs%heads%main.queue");
        std::fs::create_dir_all(&queue).unwrap();
        // pid 4194304 is above Linux's pid_max limit: never a live process.
        std::fs::write(queue.join(format!("{:024}-{:010}", 1, 4_194_304u32)), "").unwrap();
        let lock = BranchLock::acquire_within(
            &repo,
            "refs/heads/main",
            Duration::from_secs(5),
            &mut |_| {},
        )
        .unwrap();
        drop(lock);
        assert_eq!(std::fs::read_dir(&queue).unwrap().count(), 0);
        std::fs::write(
            queue.join(format!("{:024}-{:010}", 1, std::process::id())),
            "",
        )
        .unwrap();
        let err = BranchLock::acquire_within(
            &repo,
            "refs/heads/main",
            Duration::from_millis(200),
            &mut |_| {},
        );
        assert!(err.is_err(), "an older live ticket goes first");
    }
}
