//! The record tip git-task last wrote for every task id.
//!
//! One file per id under `ledger/records/`: `<id>` holds the tip; `<id>.pending-<commit>`
//! (or `<id>.pending-deleted`) is written before a transaction moves (or deletes) the record
//! and removed once `<id>` says so, so that a process killed between the two leaves a record
//! that still verifies; `<id>.lock` serialises the writers of one id. A record verifies when
//! its tip is the one on file or a pending one; anything else (rewritten, rolled back,
//! deleted, re-created, or a record the ledger never knew) is tampered.
//!
//! Every write of an entry or a pending file also appends the id to `ledger/records-changed`
//! ([`Changes`]): a command that keeps what it learnt of every record (the overlaps index) reads
//! the ids appended since it last looked instead of every record ref, so that its cost stays
//! flat in the number of tasks.
//!
//! Why a ledger of tips rather than a MAC in every record commit: a MAC proves a commit was
//! made by git-task, but not that it is the *latest* one: an agent could roll its record back
//! to an earlier genuine commit (before `dropped`, before a tighter `reset`) or delete it, and
//! a MAC cannot tell. The ledger tells both, and needs no secret and no crypto crate.

use super::lock::Lock;
use crate::error::{Context, Error, Result};
use crate::git::refs::Update;
use crate::git::{ObjectId, Repo};
use crate::task::{layout, TaskId};
use std::path::{Path, PathBuf};

const DELETED: &str = "deleted";

fn dir(repo: &Repo) -> PathBuf {
    super::dir(repo).join("records")
}

/// The change log, beside `records/` (not in it: any name there may be a task id).
fn changes_log(repo: &Repo) -> PathBuf {
    super::dir(repo).join("records-changed")
}

/// Appends `ids` to the change log, one line each, in one write (appended whole: readers never
/// see half a line of it). Best effort: a log that cannot be written makes its readers read every
/// record again, once they see that it is missing or was replaced.
fn note_changed<'a>(repo: &Repo, ids: impl IntoIterator<Item = &'a str>) {
    use std::io::Write;
    let text: String = ids.into_iter().map(|id| format!("{id}\n")).collect();
    if text.is_empty() {
        return;
    }
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(changes_log(repo))
    {
        let _ = f.write_all(text.as_bytes());
    }
}

/// Where a reader of the change log stopped: the log file (device and inode) and the length
/// read. Another file (the log was removed or replaced) means the reader must read every
/// record again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Mark {
    dev: u64,
    ino: u64,
    len: u64,
}

/// The ids whose ledger entry changed since a [`Mark`].
pub struct Changes {
    /// The ids appended since, in the order they were (an id may come more than once).
    pub ids: Vec<String>,
    /// Where to look next time.
    pub mark: Mark,
}

impl Changes {
    /// Where the change log ends now (made if missing, while the ledger directory exists), for a
    /// reader about to read every record: whatever changes after it is read next time. `None`:
    /// there is no log to follow.
    pub fn start(repo: &Repo) -> Option<Mark> {
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(changes_log(repo))
            .ok()?;
        let m = f.metadata().ok()?;
        Some(Self::mark_of(&m, m.len()))
    }

    /// The ids appended since `mark`; `None` when the log is not the file `mark` was taken
    /// from, or shorter (read every record then).
    pub fn since(repo: &Repo, mark: Mark) -> Option<Changes> {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = std::fs::File::open(changes_log(repo)).ok()?;
        let m = f.metadata().ok()?;
        if Self::mark_of(&m, mark.len) != mark || m.len() < mark.len {
            return None;
        }
        let mut tail = Vec::new();
        f.seek(SeekFrom::Start(mark.len)).ok()?;
        f.read_to_end(&mut tail).ok()?;
        // A line still being appended is read next time.
        let whole = tail.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        let ids = String::from_utf8_lossy(&tail[..whole])
            .lines()
            .map(str::to_owned)
            .collect();
        Some(Changes {
            ids,
            mark: Mark {
                len: mark.len + whole as u64,
                ..mark
            },
        })
    }

    fn mark_of(m: &std::fs::Metadata, len: u64) -> Mark {
        use std::os::unix::fs::MetadataExt;
        Mark {
            dev: m.dev(),
            ino: m.ino(),
            len,
        }
    }
}

fn entry(dir: &Path, id: &str) -> PathBuf {
    dir.join(id)
}

fn pending(dir: &Path, id: &str, new: Option<ObjectId>) -> PathBuf {
    let what = new.map_or_else(|| DELETED.to_owned(), |c| c.to_string());
    dir.join(format!("{id}.pending-{what}"))
}

/// The tip on file for `id`, if the ledger knows the id.
pub fn tip_on_file(repo: &Repo, id: &str) -> Option<ObjectId> {
    let bytes = crate::git::fs::read_small(&entry(&dir(repo), id)).ok()?;
    std::str::from_utf8(&bytes).ok()?.trim().parse().ok()
}

/// Every id the ledger holds a record tip for.
pub fn known_ids(repo: &Repo) -> Vec<TaskId> {
    let Ok(entries) = std::fs::read_dir(dir(repo)) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let name = name.to_str()?;
            (!name.contains(".pending-")).then(|| TaskId::parse(name).ok())?
        })
        .collect()
}

/// A record that git-task did not write as it is.
#[derive(Clone, Debug)]
pub struct Tampered {
    /// The task id, as its ref names it.
    pub id: String,
    /// What does not match.
    pub why: String,
    /// The tip git-task last wrote, which `git update-ref` can put back.
    pub genuine: Option<ObjectId>,
}

impl Tampered {
    /// The refusal every command gives for it (exit 1, kind `record_tampered`).
    pub fn error(&self) -> Error {
        let name = format!("{}{}/record", layout::TASKS_NS, self.id);
        let mut err = Error::negative(format!("record_tampered: {}", self.why))
            .with_code("record_tampered")
            .hint(format!(
                "git-task acts on no field of a record it did not write; see what changed with 'git log -p {name}'"
            ));
        err = match self.genuine {
            Some(tip) => err.hint(format!(
                "put back the record git-task wrote: git update-ref {name} {tip}"
            )),
            None if self.why.contains("older git-task") => err.hint(
                "if you trust the records in this repository, adopt them: git task trust --records",
            ),
            None => err.hint(format!(
                "if you made it yourself and trust it, adopt it: git task trust --records {}",
                self.id
            )),
        };
        err
    }
}

/// Checks the record of `id` whose ref holds `tip` (`None`: no ref) against the ledger.
pub fn verify(repo: &Repo, id: &str, tip: Option<ObjectId>) -> Result<(), Tampered> {
    let dir = dir(repo);
    let on_file = tip_on_file(repo, id);
    if on_file.is_some() && on_file == tip {
        return Ok(());
    }
    if pending(&dir, id, tip).exists() {
        return Ok(());
    }
    let name = format!("{}{}/record", layout::TASKS_NS, id);
    let why = match (on_file, tip) {
        (None, None) => return Ok(()),
        (Some(_), None) => format!("the record of '{id}' ({name}) was deleted outside git-task"),
        (Some(_), Some(tip)) => format!(
            "the record of '{id}' ({name}) points at {tip}, which is not the event git-task last wrote"
        ),
        (None, Some(_)) if !dir.is_dir() => format!(
            "the record of '{id}' ({name}) was made before this repository had a ledger (an older git-task), or outside git-task"
        ),
        (None, Some(_)) => {
            format!("the record of '{id}' ({name}) was not made by git-task")
        }
    };
    Err(Tampered {
        id: id.to_owned(),
        why,
        genuine: on_file,
    })
}

/// The ledger's side of one transaction that moves records: each record's lock is held and its
/// pending file written from [`Pending::begin`] until [`Pending::commit`] or
/// [`Pending::abandon`].
pub struct Pending {
    entries: Vec<(String, Option<ObjectId>, Lock)>,
}

impl Pending {
    /// Locks the records `updates` moves (in name order, so two transactions cannot deadlock)
    /// and notes their new tips as pending.
    pub fn begin(repo: &Repo, updates: &[Update]) -> Result<Pending> {
        let mut moved: Vec<(String, Option<ObjectId>)> = updates
            .iter()
            .filter_map(|u| record_id(&u.name).map(|id| (id, u.new)))
            .collect();
        moved.sort_by(|a, b| a.0.cmp(&b.0));
        moved.dedup_by(|a, b| a.0 == b.0);
        let dir = dir(repo);
        let mut entries = Vec::with_capacity(moved.len());
        for (id, new) in moved {
            let lock = Lock::acquire(&dir.join(format!("{id}.lock")))?;
            let path = pending(&dir, &id, new);
            crate::git::fs::write_atomically(&path, b"")
                .context(|| format!("could not write '{}'", path.display()))?;
            entries.push((id, new, lock));
        }
        // Said before the refs move too: a process killed after they moved and before `commit`
        // leaves records that verify through their pending files.
        note_changed(repo, entries.iter().map(|(id, _, _)| id.as_str()));
        Ok(Pending { entries })
    }

    /// The transaction applied: the new tips are the ledger's.
    pub fn commit(self, repo: &Repo) {
        let dir = dir(repo);
        note_changed(repo, self.entries.iter().map(|(id, _, _)| id.as_str()));
        for (id, new, lock) in self.entries {
            let done = match new {
                Some(tip) => crate::git::fs::write_atomically(
                    &entry(&dir, &id),
                    format!("{tip}\n").as_bytes(),
                ),
                None => match std::fs::remove_file(entry(&dir, &id)) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                    _ => Ok(()),
                },
            };
            // Left in place when the entry could not be written: the record still verifies.
            if done.is_ok() {
                let _ = std::fs::remove_file(pending(&dir, &id, new));
            }
            drop(lock);
        }
    }

    /// The transaction did not apply: nothing changes.
    pub fn abandon(self, repo: &Repo) {
        let dir = dir(repo);
        for (id, new, lock) in self.entries {
            let _ = std::fs::remove_file(pending(&dir, &id, new));
            drop(lock);
        }
    }
}

/// The task id of a record ref (`refs/tasks/<id>/record`).
fn record_id(name: &str) -> Option<String> {
    let id = name
        .strip_prefix(layout::TASKS_NS)?
        .strip_suffix("/record")?;
    TaskId::parse(id).ok().map(|_| id.to_owned())
}

/// Notes pending files whose record is now at their tip as the ledger's tip, and removes the
/// others (a transaction killed before or after it moved its refs): what `sweep` runs.
pub fn settle(repo: &Repo) -> Result<()> {
    let dir = dir(repo);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(());
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some((id, what)) = name.split_once(".pending-") else {
            continue;
        };
        let Ok(task) = TaskId::parse(id) else {
            continue;
        };
        let _lock = Lock::acquire(&dir.join(format!("{id}.lock")))?;
        let tip = repo.find_ref(&layout::record_ref(&task))?;
        let landed = match (what, tip) {
            (DELETED, None) => true,
            (c, Some(t)) => c.parse::<ObjectId>().ok() == Some(t),
            _ => false,
        };
        if landed {
            match tip {
                Some(t) => {
                    crate::git::fs::write_atomically(&entry(&dir, id), format!("{t}\n").as_bytes())
                        .context(|| format!("could not write the ledger entry of '{id}'"))?
                }
                None => {
                    let _ = std::fs::remove_file(entry(&dir, id));
                }
            }
            note_changed(repo, [id]);
        }
        let _ = std::fs::remove_file(e.path());
    }
    Ok(())
}

/// Takes the records of `ids` (all records when empty) as they are now as genuine: `git task
/// trust --records`, run by the user for records from an older git-task or made by hand.
/// Returns the ids adopted with their tips.
pub fn trust(repo: &Repo, ids: &[TaskId]) -> Result<Vec<(String, ObjectId)>> {
    let dir = dir(repo);
    std::fs::create_dir_all(&dir).context(|| format!("could not create '{}'", dir.display()))?;
    let mut adopted = Vec::new();
    for (name, tip) in repo.refs_under(layout::TASKS_NS)? {
        let Some(id) = record_id(&name) else { continue };
        if !ids.is_empty() && !ids.iter().any(|t| t.as_str() == id) {
            continue;
        }
        if verify(repo, &id, Some(tip)).is_ok() {
            continue;
        }
        let _lock = Lock::acquire(&dir.join(format!("{id}.lock")))?;
        crate::git::fs::write_atomically(&entry(&dir, &id), format!("{tip}\n").as_bytes())
            .context(|| format!("could not write the ledger entry of '{id}'"))?;
        note_changed(repo, [id.as_str()]);
        adopted.push((id, tip));
    }
    Ok(adopted)
}
