//! Where a worktree-mode task's worktree is on this machine (SPEC §4: "The worktree path in a
//! record is per machine: it never travels through push/fetch").
//!
//! A record travels between machines (`push`, `fetch`, `adopt`, `merge --remote`) with the
//! `worktree` of whichever machine wrote its last event. That path means nothing here, and on a
//! shared disk it names another machine's worktree: `path`, `exec`, `list` and `status` must
//! never point there, and nothing here may write an event that moves it (`sweep`). So the path
//! of this machine is kept beside the refs, under `<common>/git-task/places/<id>`, written with
//! every event this machine writes ([`super::event_commit`]) and read back by every load
//! ([`resolve`]). A record with no place on file was written here only (started before places
//! were kept): its own path is this machine's.

use crate::git::Repo;
use crate::task::{Mode, TaskState};
use std::path::PathBuf;

fn file(repo: &Repo, id: &str) -> PathBuf {
    crate::git::state_dir(repo.common_dir())
        .join("places")
        .join(id)
}

/// The worktree path of task `id` on this machine, when one is on file.
pub fn get(repo: &Repo, id: &str) -> Option<String> {
    let bytes = crate::git::fs::read_small(&file(repo, id)).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let path = text.strip_suffix('\n').unwrap_or(&text);
    (!path.is_empty()).then(|| path.to_owned())
}

/// Notes `state`'s worktree as this machine's place of its task (worktree mode, a path set):
/// called for every event written here. Best effort: a place that cannot be written leaves the
/// one on file (or the record's own path) in use.
pub fn note(repo: &Repo, state: &TaskState) {
    if state.mode != Mode::Worktree || state.worktree.is_empty() {
        return;
    }
    if get(repo, state.id.as_str()).as_deref() == Some(state.worktree.as_str()) {
        return;
    }
    let path = file(repo, state.id.as_str());
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let _ = crate::git::fs::write_atomically(&path, format!("{}\n", state.worktree).as_bytes());
}

/// Notes this machine's place of a task from its record as loaded here, before a record
/// written elsewhere is taken in (`fetch`, `push`, `merge --remote`): the record then carries
/// the other machine's path, and this one's stays on file.
pub fn keep(repo: &Repo, state: &TaskState) {
    if get(repo, state.id.as_str()).is_none() {
        note(repo, state);
    }
}

/// Puts this machine's worktree path in `state` (read from its record): the place on file,
/// else the record's own (a record only this machine wrote).
pub fn resolve(repo: &Repo, state: &mut TaskState) {
    if state.mode != Mode::Worktree {
        return;
    }
    if let Some(here) = get(repo, state.id.as_str()) {
        state.worktree = here;
    }
}
