//! The crash journal's entries: before a step that leaves a worktree or refs half
//! made if the process dies (a checkout moving, files rewritten in place, ref lock
//! files taken), a mutating command writes one JSON file
//! `<common dir>/git-task/journal/<pid>.<n>.json`, and deletes it when the step is
//! over. The repairs that finish or undo a killed process's steps are the core's
//! (`recover`); this is only what is written, so that the adapter's own ref
//! transactions can journal their lock files without reaching up into the core.

use crate::error::{Error, Result};
use crate::git::Repo;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

/// One step that leaves a worktree half made if the process dies during it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum Step {
    /// The worktree at `worktree`, where `branch` is checked out, moves from commit `old` to `new`.
    Checkout {
        worktree: PathBuf,
        branch: String,
        old: String,
        new: String,
    },
    /// The files (`files`, a tree, when given) and the index (`index`, a tree) of task
    /// `task`'s worktree at `worktree` are rewritten in place.
    ///
    /// With `head`, the step is journaled before a ref transaction moves the worktree's branch
    /// to that commit: until HEAD names it, the step has not begun and there is nothing to finish.
    InPlace {
        task: String,
        worktree: PathBuf,
        files: Option<String>,
        index: String,
        #[serde(default)]
        head: Option<String>,
        /// The branch (full ref) the worktree's HEAD is put back on first, when it had left it
        /// (`reset` of a detached worktree): once the branch is at `head`, HEAD is attached.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        attach: Option<String>,
    },
    /// A worktree is being made at `worktree` for task `task`'s branch, whose record (fetched
    /// from another machine by `adopt`) does not name it yet: until the record names it, a
    /// killed process leaves a half-made checkout that holds nothing of anyone's own.
    Provision { task: String, worktree: PathBuf },
    /// A ref transaction takes these lock files and makes these changes, all or none: a
    /// transaction killed after it moved some of its refs is finished from here.
    RefLocks {
        locks: Vec<PathBuf>,
        /// Empty in entries written before the changes were journaled.
        #[serde(default)]
        updates: Vec<RefChange>,
    },
}

/// One ref change of a journaled transaction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefChange {
    /// The full ref name.
    pub name: String,
    /// The value it must have before (`None`: must not exist; see `any`).
    pub old: Option<String>,
    /// The value after (`None`: deleted).
    pub new: Option<String>,
    /// Its old value did not matter (`Expect::Any`): not finished by recovery, which cannot
    /// tell whether another writer moved it since.
    #[serde(default)]
    pub any: bool,
    /// The reflog message.
    #[serde(default)]
    pub message: String,
}

/// A journal entry as stored.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Entry {
    /// The process that wrote it.
    pub pid: u32,
    /// Seconds since the epoch when the entry was written.
    pub created: i64,
    /// The step it names.
    #[serde(flatten)]
    pub step: Step,
}

/// A journal entry of this process: deleted when dropped (the step is over).
#[must_use = "dropping it ends the step"]
pub struct Journal(Option<PathBuf>);

static NEXT: AtomicU32 = AtomicU32::new(0);

/// The directory holding the entries.
pub fn journal_dir(repo: &Repo) -> PathBuf {
    crate::git::state_dir(repo.common_dir()).join("journal")
}

impl Journal {
    /// Journals rewriting the files (`files`, when given) and index (`index`) of task `task`'s
    /// worktree at `worktree` in place; `head`: only once its HEAD is at that commit.
    pub fn in_place(
        repo: &Repo,
        task: &str,
        worktree: &std::path::Path,
        files: Option<crate::git::ObjectId>,
        index: crate::git::ObjectId,
        head: Option<crate::git::ObjectId>,
    ) -> Result<Journal> {
        Journal::begin(
            repo,
            Step::InPlace {
                task: task.to_owned(),
                worktree: worktree.to_path_buf(),
                files: files.map(|f| f.to_string()),
                index: index.to_string(),
                head: head.map(|h| h.to_string()),
                attach: None,
            },
        )
    }

    /// Writes the entry for `step` before the step starts.
    pub fn begin(repo: &Repo, step: Step) -> Result<Journal> {
        let dir = journal_dir(repo);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let path = dir.join(format!("{pid}.{n}.json"));
        let entry = Entry {
            pid,
            created: now(),
            step,
        };
        let text = serde_json::to_vec(&entry).expect("a journal entry serializes");
        std::fs::create_dir_all(&dir)
            .and_then(|()| crate::git::fs::write_atomically(&path, &text))
            .map_err(|e| Error::repo(format!("could not write '{}'", path.display()), e))?;
        Ok(Journal(Some(path)))
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Seconds since the epoch.
fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}
