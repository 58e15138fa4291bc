//! Starts that never finished (SPEC §2.7): a `start` keeps a marker file while it provisions a
//! task, so the next mutating command finds a killed one cheaply and rolls it back (work saved
//! first); `sweep` finds the rest from their records.

use crate::attempt::{
    save_commits as save_branch_commits, save_worktree as save_dirty_worktree,
    SavedAttempt as Attempt,
};
use crate::config::Settings;
use crate::error::Result;
use crate::git::refs::Update;
use crate::git::{worktree, Repo};
use crate::record::{self, Record};
use crate::task::{layout, Mode, TaskId};
use std::path::{Path, PathBuf};

/// Rolls back a start whose process died, if its record is still exactly as `record` shows it.
///
/// The record is read again *after* its process was found gone: a start that
/// finished between the caller's read and that check has moved its record and
/// is left alone (returns `None`).
pub fn roll_back_abandoned(
    repo: &Repo,
    settings: &Settings,
    record: &Record,
) -> Result<Option<Vec<Attempt>>> {
    if !super::liveness::provisioning_is_abandoned(&record.state) {
        return Ok(None);
    }
    match record::load(repo, &record.state.task_id())? {
        Some(now) if now.tip == record.tip => roll_back(repo, settings, &now).map(Some),
        _ => Ok(None),
    }
}

/// Rolls back a start that did not finish: saves work, deletes worktree, branch, base ref and record.
pub fn roll_back(repo: &Repo, settings: &Settings, record: &Record) -> Result<Vec<Attempt>> {
    let id = record.state.task_id();
    let mut attempts = Vec::new();
    let path = PathBuf::from(&record.state.worktree);
    let linked = record.state.worktree_now(repo)?;
    if record.state.mode == Mode::Worktree {
        if let Some(linked) = &linked {
            if linked.exists() {
                if let Ok(Some(a)) =
                    save_dirty_worktree(repo, &id, &linked.path, "interrupted start")
                {
                    attempts.push(a);
                }
            }
            // Deleted before returning: the start reports that it removed everything.
            worktree::move_aside(repo, linked)?.delete_now()?;
        } else if path.exists() && is_empty_dir(&path) {
            let _ = std::fs::remove_dir(&path);
        }
        if let Some(tip) = repo.find_ref(&record.state.branch)? {
            let base = repo.find_ref(&layout::base_ref(&id))?;
            if let Some(a) = save_branch_commits(repo, &id, tip, base, "interrupted start")? {
                attempts.push(a);
            }
        }
    }
    delete_task_refs(repo, record)?;
    record::frozen::forget(repo, record);
    let _ = crate::claims::release_all(repo, &record.state.id);
    let _ = settings;
    Ok(attempts)
}

/// Returns the directory of the markers a running `start` keeps until its task is provisioned.
fn starting_dir(repo: &Repo) -> PathBuf {
    crate::git::state_dir(repo.common_dir()).join("starting")
}

/// A marker file `<common>/git-task/starting/<id>.<pid>` that exists while a `start` provisions a task.
///
/// It is deleted when dropped, so only a killed `start` leaves one behind; that
/// lets the next mutating command find abandoned starts without reading every record.
pub struct StartMarker(Option<PathBuf>);

impl StartMarker {
    /// Writes the marker for `id` and this process (best effort: without it, `sweep` still finds the start).
    pub fn create(repo: &Repo, id: &TaskId) -> StartMarker {
        let dir = starting_dir(repo);
        let path = dir.join(format!("{id}.{}", std::process::id()));
        let made = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, b""));
        StartMarker(made.ok().map(|()| path))
    }
}

impl Drop for StartMarker {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Rolls back starts whose process died, found cheaply through their markers (SPEC §2.7).
///
/// Mutating commands call this first; it reads one usually missing directory.
/// Failures are left for `git task sweep` to report.
pub fn repair_abandoned_starts(repo: &Repo, settings: &Settings) {
    let Ok(entries) = std::fs::read_dir(starting_dir(repo)) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some((id, pid)) = name.rsplit_once('.') else {
            continue;
        };
        let (Ok(id), Ok(pid)) = (TaskId::parse(id), pid.parse::<u32>()) else {
            continue;
        };
        if !super::liveness::process_is_gone(pid) {
            continue;
        }
        if let Ok(Some(record)) = record::load(repo, &id) {
            if roll_back_abandoned(repo, settings, &record).is_err() {
                continue;
            }
        }
        let _ = std::fs::remove_file(entry.path());
    }
}

/// Whether a `start` is provisioning a task right now (its marker names a live process).
pub fn live_starts(repo: &Repo) -> bool {
    let Ok(entries) = std::fs::read_dir(starting_dir(repo)) else {
        return false;
    };
    entries.flatten().any(|entry| {
        let name = entry.file_name().to_string_lossy().into_owned();
        name.rsplit_once('.')
            .and_then(|(_, pid)| pid.parse::<u32>().ok())
            .is_some_and(|pid| pid != std::process::id() && !super::liveness::process_is_gone(pid))
    })
}

fn is_empty_dir(path: &Path) -> bool {
    std::fs::read_dir(path)
        .map(|mut e| e.next().is_none())
        .unwrap_or(false)
}

/// Deletes the refs of a start that never finished (branch, base, record), expecting their current values.
pub fn delete_task_refs(repo: &Repo, record: &Record) -> Result<()> {
    let id = record.state.task_id();
    let mut updates = Vec::new();
    if let Some(tip) = repo.find_ref(&record.state.branch)? {
        if record.state.mode == Mode::Worktree {
            updates.push(Update::delete(
                record.state.branch.clone(),
                tip,
                format!("git-task: roll back {id}"),
            ));
        }
    }
    if let Some(base) = repo.find_ref(&layout::base_ref(&id))? {
        updates.push(Update::delete(
            layout::base_ref(&id),
            base,
            format!("git-task: roll back {id}"),
        ));
    }
    if let Some(snap) = repo.find_ref(&layout::snapshot_ref(&id))? {
        updates.push(Update::delete(
            layout::snapshot_ref(&id),
            snap,
            format!("git-task: roll back {id}"),
        ));
    }
    match record::before_current_start(repo, record)? {
        // A removed task that was being started again: back to how it was, history kept.
        Some(earlier) => {
            if let Ok(base) = earlier.state.base_commit.parse() {
                updates.retain(|u| u.name != layout::base_ref(&id));
                let current = repo.find_ref(&layout::base_ref(&id))?;
                match current {
                    Some(now) if now == base => {}
                    Some(now) => updates.push(Update::update(
                        layout::base_ref(&id),
                        now,
                        base,
                        format!("git-task: roll back {id}"),
                    )),
                    None => updates.push(Update::create(
                        layout::base_ref(&id),
                        base,
                        format!("git-task: roll back {id}"),
                    )),
                }
            }
            updates.push(Update::update(
                layout::record_ref(&id),
                record.tip,
                earlier.tip,
                format!("git-task: roll back {id}"),
            ));
        }
        None => updates.push(Update::delete(
            layout::record_ref(&id),
            record.tip,
            format!("git-task: roll back {id}"),
        )),
    }
    crate::ledger::commit(repo, updates)
}
