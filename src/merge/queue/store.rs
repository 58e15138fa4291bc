//! Where a landing queue lives: the ref `refs/tasks/_queue/<branch>`, a chain of commits whose
//! tree holds `queue.toml`, moved by compare-and-swap through the ledger together with the
//! record events of the tasks it concerns; and, under `<common dir>/git-task/queue/`, the
//! runner's lock and journal (what git commands cannot reach).

use super::Queue;
use crate::error::{Error, Result};
use crate::git::objects;
use crate::git::refs::{Expect, RefError, Update};
use crate::git::{ObjectId, Repo};
use crate::task::{BranchName, TaskId};
use serde_json::Value;
use std::path::PathBuf;

/// Every queue's ref is under this prefix (`_` never starts a task id: no task's refs are here).
pub const QUEUE_NS: &str = "refs/tasks/_queue/";
const FILE: &str = "queue.toml";

/// The ref of the queue of branch `target`.
pub fn ref_name(target: &BranchName) -> String {
    format!("{QUEUE_NS}{}", target.short())
}

/// The branch whose queue is the ref `name` (one under [`QUEUE_NS`]): a name that is no
/// branch's (`_queue/HEAD`, `_queue/refs/heads/main`) is a damaged queue, named in the error.
fn target_of(name: &str) -> Result<BranchName> {
    let short = name.strip_prefix(QUEUE_NS).unwrap_or(name);
    BranchName::from_short(short).map_err(|why| damaged(name, &format!("names no branch: {why}")))
}

/// The error for the queue ref `name`, which git-task did not write as it is (`why`).
fn damaged(name: &str, why: &str) -> Error {
    Error::repo_msg(format!("the landing queue {name} {why}"))
        .hint(format!(
            "it was changed outside git-task; see its history with: git log {name}"
        ))
        .hint(format!(
            "to start the queue again, empty: git update-ref -d {name}"
        ))
        .with_code("queue_damaged")
}

/// `<common dir>/git-task/queue/<branch>` + `ext`: the runner's lock and journal files.
pub fn state_file(repo: &Repo, target: &BranchName, ext: &str) -> PathBuf {
    crate::git::state_dir(repo.common_dir())
        .join("queue")
        .join(format!("{}.{ext}", target.short()))
}

/// A queue as stored, with the ref's tip it was read at.
pub struct Stored {
    pub tip: Option<ObjectId>,
    pub queue: Queue,
}

/// Reads the queue of `target` (empty when it has none); one git-task did not write (a bad
/// task id in it included) is an error naming its ref.
pub fn read(repo: &Repo, target: &BranchName) -> Result<Stored> {
    let name = ref_name(target);
    let Some(tip) = repo.find_ref(&name)? else {
        return Ok(Stored {
            tip: None,
            queue: Queue::default(),
        });
    };
    let unreadable = |why: &str| damaged(&name, why);
    let tree = objects::commit_tree(repo, tip).map_err(|_| unreadable("is not a commit"))?;
    let bytes = objects::read_blob_in_tree(repo, tree, FILE)
        .ok()
        .flatten()
        .ok_or_else(|| unreadable(&format!("holds no {FILE}")))?;
    let queue = toml::from_str::<Queue>(&String::from_utf8_lossy(&bytes)).map_err(|e| {
        unreadable(&format!(
            "holds a {FILE} git-task did not write ({})",
            e.message()
        ))
    })?;
    Ok(Stored {
        tip: Some(tip),
        queue,
    })
}

/// Every branch that has a queue ref.
pub fn targets(repo: &Repo) -> Result<Vec<BranchName>> {
    repo.refs_under(QUEUE_NS)?
        .into_iter()
        .map(|(name, _)| target_of(&name))
        .collect()
}

/// Changes the queue of `target` in one transaction with the record events `step` prepares:
/// `step` gets the queue as it is now and changes it, returning the ref updates to make with it
/// (record appends) and its value; when another writer moved the queue or a record first, it
/// runs again on what is there now. A queue `step` leaves as it was, with no updates, is not
/// written.
pub fn update<T>(
    repo: &Repo,
    target: &BranchName,
    what: &str,
    mut step: impl FnMut(&mut Queue) -> Result<(Vec<Update>, T)>,
) -> Result<T> {
    let name = ref_name(target);
    for _ in 0..20 {
        let stored = read(repo, target)?;
        let mut queue = stored.queue.clone();
        let (mut updates, value) = step(&mut queue)?;
        if queue == stored.queue && updates.is_empty() {
            return Ok(value);
        }
        if queue != stored.queue {
            let text = toml::to_string(&queue).map_err(|e| Error::repo_msg(e.to_string()))?;
            let parents: Vec<ObjectId> = stored.tip.into_iter().collect();
            let message = format!("git-task: {what}");
            let commit =
                objects::write_one_file_commit(repo, FILE, text.as_bytes(), &parents, &message)?;
            updates.push(Update {
                name: name.clone(),
                new: Some(commit),
                expect: stored.tip.map_or(Expect::Absent, Expect::Is),
                message,
            });
        }
        match crate::ledger::apply(repo, crate::ledger::Mover::GitTask, updates) {
            Ok(()) => return Ok(value),
            Err(RefError::Conflict(_)) => continue,
            Err(RefError::Other(e)) => return Err(e),
        }
    }
    Err(
        Error::repo_msg(format!("could not {what}: the queue kept changing"))
            .hint("run the command again"),
    )
}

/// The runner's exclusive lock on a queue: an `flock` the kernel lets go when its holder exits,
/// even by `kill -9`, so a killed runner never blocks the next one.
pub struct RunLock {
    _file: std::fs::File,
}

/// Takes the runner's lock of `target`'s queue: `Ok(None)` while another runner holds it.
pub fn try_run_lock(
    repo: &Repo,
    target: &BranchName,
) -> Result<std::result::Result<RunLock, String>> {
    let path = state_file(repo, target, "run");
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::repo(format!("could not create '{}'", dir.display()), e))?;
    }
    let mut file = match flock(&path)? {
        Ok(file) => file,
        Err(holder) => return Ok(Err(holder)),
    };
    use std::io::{Seek, Write};
    let _ = file.set_len(0);
    let _ = file.rewind();
    let _ = writeln!(file, "{}", std::process::id());
    Ok(Ok(RunLock { _file: file }))
}

/// Opens the lock file at `path` and locks it: `Err(the holder's pid)` while another holds it.
fn flock(path: &std::path::Path) -> Result<std::result::Result<std::fs::File, String>> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| Error::repo(format!("could not open '{}'", path.display()), e))?;
    #[cfg(unix)]
    let free =
        rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_ok();
    #[cfg(not(unix))]
    let free = true;
    if free {
        Ok(Ok(file))
    } else {
        let holder = std::fs::read_to_string(path).unwrap_or_default();
        Ok(Err(holder.trim().to_owned()))
    }
}

/// The pid of the runner landing `target`'s queue now, if one is.
pub fn runner(repo: &Repo, target: &BranchName) -> Result<Option<String>> {
    let path = state_file(repo, target, "run");
    if !path.exists() {
        return Ok(None);
    }
    Ok(flock(&path)?.err())
}

/// Reads the journal of `target`'s runner (`None`: none, or unreadable).
pub fn read_journal(repo: &Repo, target: &BranchName) -> Option<Journal> {
    let bytes = std::fs::read(state_file(repo, target, "journal")).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Writes the journal of `target`'s runner (replacing it atomically), or deletes it (`None`).
pub fn write_journal(repo: &Repo, target: &BranchName, journal: Option<&Journal>) -> Result<()> {
    let path = state_file(repo, target, "journal");
    match journal {
        Some(j) => {
            let bytes = serde_json::to_vec(j).map_err(|e| Error::repo_msg(e.to_string()))?;
            crate::git::fs::write_atomically(&path, &bytes)
                .map_err(|e| Error::repo(format!("could not write '{}'", path.display()), e))
        }
        None => match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::repo(
                format!("could not delete '{}'", path.display()),
                e,
            )),
        },
    }
}

/// The runner's journal (`<common dir>/git-task/queue/<branch>.journal`): what it is doing
/// and what it knows, so that a runner killed at any point is resumed by the next one.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Journal {
    /// The runner's pid.
    pub pid: u32,
    /// The tasks of the landing being computed and checked now.
    #[serde(default)]
    pub trying: Vec<TaskId>,
    /// A batch known to fail: these tasks, on top of the tip `tip`, fail their checks.
    #[serde(default)]
    pub failing: Option<Failing>,
}

/// A batch whose checks failed (see [`Journal`]).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Failing {
    /// The tasks, in order.
    pub tasks: Vec<TaskId>,
    /// The branch's tip they fail on.
    pub tip: String,
    /// The failed checks (as `merge --json` shows them).
    pub checks: Value,
    /// The gate checkout they failed in.
    pub checkout: Option<String>,
}
