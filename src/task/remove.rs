//! Removing a task's worktree and branch, saving any work first (SPEC §2.2).

use super::{layout, Mode, Status, TaskId};
use crate::config::Settings;
use crate::error::{Error, Result};
use crate::git::refs::{self, RefError, Update};
use crate::git::{objects, worktree, ObjectId, Repo};
use crate::record::{self, event, Record};
use crate::snapshot;
use std::path::Path;

/// A ref that holds saved work.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Attempt {
    /// `refs/tasks/<id>/attempts/<n>`.
    #[serde(rename = "ref")]
    pub name: String,
    /// The commit it points to.
    pub commit: String,
    /// What was saved.
    pub what: String,
}

/// What `remove` did.
#[derive(Debug)]
pub enum Removed {
    /// The task was removed; these attempts hold what would otherwise be lost.
    Done {
        record: Record,
        attempts: Vec<Attempt>,
    },
    /// It was already removed (or never existed).
    AlreadyGone(Option<Record>),
}

/// Why `remove` refused.
pub struct Dirty {
    /// The task id.
    pub id: TaskId,
    /// The worktree with uncommitted changes.
    pub path: String,
    /// Paths with changes.
    pub changed: Vec<String>,
}

/// Saves the uncommitted state of the worktree at `path`, if any, as an attempt of `id`.
pub fn save_dirty_worktree(
    repo: &Repo,
    id: &TaskId,
    path: &Path,
    why: &str,
) -> Result<Option<Attempt>> {
    let wt = worktree::open_at(path)?;
    let state = snapshot::read(&wt)?;
    if !state.is_dirty() {
        return Ok(None);
    }
    let parents: Vec<ObjectId> = state.head.into_iter().collect();
    let (_, name, commit) = snapshot::save_attempt(repo, id, state.worktree_tree, &parents, why)?;
    Ok(Some(Attempt {
        name,
        commit: commit.to_string(),
        what: format!("uncommitted changes in '{}'", path.display()),
    }))
}

/// Saves the tip of a task branch as an attempt when it holds commits beyond the first (contract) commit.
pub fn save_branch_commits(
    repo: &Repo,
    id: &TaskId,
    tip: ObjectId,
    base: Option<ObjectId>,
    why: &str,
) -> Result<Option<Attempt>> {
    let parents = objects::commit_parents(repo, tip)?;
    // Only the contract commit on top of the base: nothing of the task's own is on the branch.
    if parents.len() == 1 && Some(parents[0]) == base {
        return Ok(None);
    }
    if Some(tip) == base {
        return Ok(None);
    }
    let tree = objects::commit_tree(repo, tip)?;
    let (_, name, commit) = snapshot::save_attempt(repo, id, tree, &[tip], why)?;
    Ok(Some(Attempt {
        name,
        commit: commit.to_string(),
        what: "commits of the task branch".into(),
    }))
}

/// Removes the worktree and branch of a task. A dirty worktree is refused unless `force`.
pub fn remove(
    repo: &Repo,
    settings: &Settings,
    id: &TaskId,
    force: bool,
) -> Result<std::result::Result<Removed, Dirty>> {
    super::sweep::repair_abandoned_starts(repo, settings);
    let Some(record) = record::load(repo, id)? else {
        return Ok(Ok(Removed::AlreadyGone(None)));
    };
    if record.state.status == Status::Removed {
        return Ok(Ok(Removed::AlreadyGone(Some(record))));
    }
    if record.state.status == Status::Provisioning {
        if !super::start::provisioning_is_abandoned(&record.state) {
            return Err(
                Error::input(format!("task '{id}' is still being started")).hint(format!(
                    "wait for 'git task start {id}' to finish, then remove it"
                )),
            );
        }
        // A start that died: undo it the way sweep would, saving any work.
        return match super::sweep::roll_back_abandoned(repo, settings, &record)? {
            Some(attempts) => Ok(Ok(Removed::Done { record, attempts })),
            None => Err(
                Error::repo_msg(format!("task '{id}' changed while it was being removed"))
                    .hint(format!("run 'git task remove {id}' again")),
            ),
        };
    }
    if record.state.mode == Mode::Patch {
        return Err(Error::input(format!("task '{id}' works in patch mode: it has no worktree or branch to remove"))
            .hint(format!("undo its changes with 'git task revert {id}', or accept them with 'git task merge {id}'")));
    }
    let path = Path::new(&record.state.worktree).to_path_buf();
    let linked = worktree::list(repo)?
        .into_iter()
        .find(|w| w.branch.as_deref() == Some(record.state.branch.as_str()) || w.path == path);
    let mut attempts = Vec::new();
    if let Some(linked) = linked.as_ref().filter(|l| l.exists()) {
        // The cheap check first: a clean worktree needs no snapshot (SPEC §10: remove is fast).
        // Its HEAD is the tip of the branch `worktree::list` read, without opening it.
        let head = match &linked.branch {
            Some(branch) => repo.find_ref(branch)?,
            None => worktree::head_of(&linked.path)?,
        };
        let clean = head.is_some_and(|head| {
            super::summary::worktree_is_clean(repo, &linked.path, head, &mut Default::default())
                .unwrap_or(false)
        });
        if !clean {
            let wt = worktree::open_at(&linked.path)?;
            let state = snapshot::read(&wt)?;
            if state.is_dirty() {
                if !force {
                    return Ok(Err(Dirty {
                        id: id.clone(),
                        path: linked.path.display().to_string(),
                        changed: state.changed,
                    }));
                }
                let parents: Vec<ObjectId> = state.head.into_iter().collect();
                let (_, name, commit) = snapshot::save_attempt(
                    repo,
                    id,
                    state.worktree_tree,
                    &parents,
                    "remove --force",
                )?;
                attempts.push(Attempt {
                    name,
                    commit: commit.to_string(),
                    what: format!("uncommitted changes in '{}'", linked.path.display()),
                });
            }
        }
    }
    let tip = repo.find_ref(&record.state.branch)?;
    if let Some(tip) = tip {
        if record.state.status != Status::Merged && attempts.is_empty() {
            let base = repo.find_ref(&layout::base_ref(id))?;
            if let Some(a) = save_branch_commits(repo, id, tip, base, "remove")? {
                attempts.push(a);
            }
        }
    }
    // Deleted in the background once the record says removed (when `_aside` is dropped).
    let _aside = match &linked {
        Some(linked) => Some(worktree::move_aside(repo, linked)?),
        None => None,
    };
    // The worktree is gone now, so finish even if another command (drop, a hook) appended an
    // event meanwhile: retry against the record's new tip, saving any branch commits it brought.
    let mut current = record;
    let mut saved_tip = tip;
    let mut tries = 0;
    let record = loop {
        let branch_tip = repo.find_ref(&current.state.branch)?;
        if branch_tip != saved_tip && current.state.status != Status::Merged {
            if let Some(tip) = branch_tip {
                let base = repo.find_ref(&layout::base_ref(id))?;
                if let Some(a) = save_branch_commits(repo, id, tip, base, "remove")? {
                    attempts.push(a);
                }
            }
            saved_tip = branch_tip;
        }
        let mut state = current.state.clone();
        let previous = state.status;
        state.status = Status::Removed;
        let extra: Vec<Update> = branch_tip
            .map(|tip| {
                Update::delete(
                    current.state.branch.clone(),
                    tip,
                    format!("git-task: remove {id}"),
                )
            })
            .into_iter()
            .collect();
        let details = serde_json::json!({ "previous_status": previous, "attempts": attempts });
        match record::append(repo, &current, event::REMOVED, &state, details, extra) {
            Ok(record) => break record,
            Err(RefError::Conflict(_)) if tries < 10 => {
                tries += 1;
                match record::load(repo, id)? {
                    Some(r) if r.state.status != Status::Removed => current = r,
                    other => return Ok(Ok(Removed::AlreadyGone(other))),
                }
            }
            Err(e) => return Err(e.into()),
        }
    };
    remove_scratch(repo, id);
    Ok(Ok(Removed::Done { record, attempts }))
}

/// Returns the per-task scratch directory (under the common git dir, outside every worktree).
pub fn scratch_dir(repo: &Repo, id: &TaskId) -> std::path::PathBuf {
    repo.common_dir()
        .join("git-task")
        .join("scratch")
        .join(id.as_str())
}

fn remove_scratch(repo: &Repo, id: &TaskId) {
    let _ = std::fs::remove_dir_all(scratch_dir(repo, id));
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
    refs::commit(repo, updates)
}
