//! A patch-mode task put back to its snapshot, or onto another base (`reset` of a patch-mode
//! task; [`crate::lifecycle::reset::reset`] is the one reset and calls this): the work is saved as an
//! attempt first, then files, index and HEAD follow.

use super::SavedAttempt;
use super::{carry_out, check_head_movable, save_state, write_target, Target};
use crate::error::{Error, Result};
use crate::git::objects;
use crate::git::refs::Update;
use crate::git::{checkout::inplace, ObjectId, Repo};
use crate::record::{self, event, Event, Record};
use crate::snapshot;
use crate::task::{layout, Mode};
use crate::work;

/// What the patch-mode part of the one reset did: [`crate::lifecycle::reset::reset`] makes
/// the reset's result (`ResetDone`) from it.
#[derive(Clone, Debug)]
pub struct PatchReset {
    /// The work saved before it was discarded.
    pub attempt: Option<SavedAttempt>,
    /// The base the task now starts from.
    pub base: ObjectId,
    /// Files written or deleted.
    pub files: Vec<String>,
}

/// Puts a patch-mode task back to its snapshot (or onto `onto`), saving its work first; appends `reset`.
///
/// Called by [`crate::lifecycle::reset::reset`], the one reset.
pub fn reset_patch(repo: &Repo, record: &Record, onto: Option<ObjectId>) -> Result<PatchReset> {
    let id = record.state.task_id();
    let w = work::open(repo, record)?;
    let old_base = repo.find_ref(&layout::base_ref(&id))?;
    let new_base = match onto {
        Some(rev) => rev,
        // Patch mode: the origin is the snapshot commit; the base is the HEAD it was taken on.
        None => w.snapshot.map(|s| s.head).unwrap_or(w.origin),
    };
    let base_tree = objects::commit_tree(repo, new_base)?;
    let cur = &w.state;
    let mut updates = Vec::new();
    let why = format!("reset of {id}");
    let (target, attempt) = match w.mode {
        // The one worktree-mode reset is `lifecycle::reset`.
        Mode::Worktree => {
            return Err(Error::input(format!(
                "task '{id}' works in its own worktree; reset it with 'git task reset {id}'"
            )))
        }
        Mode::Patch => {
            let snap = w.snapshot.expect("patch mode has a snapshot");
            match onto {
                None => {
                    let t = Target {
                        index: snap.index_tree,
                        files: snap.worktree_tree,
                        head: Some(snap.head),
                    };
                    let done = carry_out(repo, record, &w, &t, None, &why)?;
                    let details = Event::Reset(event::Reset::Patch {
                        base: new_base.to_string(),
                        onto: None,
                        attempt: done.attempt.as_ref().map(|a| a.name.clone()),
                    });
                    if done.attempt.is_some() {
                        record::note(repo, &id, details)?;
                    }
                    return Ok(PatchReset {
                        attempt: done.attempt,
                        base: new_base,
                        files: done.files,
                    });
                }
                Some(_) => {
                    let clean_there = cur.head == Some(new_base)
                        && cur.index_tree == base_tree
                        && cur.worktree_tree == base_tree
                        && snap.head == new_base
                        && snap.index_tree == base_tree
                        && snap.worktree_tree == base_tree;
                    if clean_there {
                        return Ok(PatchReset {
                            attempt: None,
                            base: new_base,
                            files: Vec::new(),
                        });
                    }
                    check_head_movable(&w.wt, record, new_base)?;
                    inplace::check(&w.wt, cur.worktree_tree, base_tree)?;
                    let attempt = save_state(repo, &id, &w.wt, cur, &why)?;
                    // The task now starts from a clean checkout of the new base.
                    let clean = snapshot::WorktreeState {
                        head: Some(new_base),
                        head_tree: base_tree,
                        index_tree: base_tree,
                        worktree_tree: base_tree,
                        changed: Vec::new(),
                        nested: Vec::new(),
                    };
                    let snap_commit = crate::snapshot::write_snapshot(repo, &id, &clean)?;
                    updates.push(Update::update(
                        layout::snapshot_ref(&id),
                        snap.commit,
                        snap_commit,
                        format!("git-task: reset {id}"),
                    ));
                    (
                        Target {
                            index: base_tree,
                            files: base_tree,
                            head: Some(new_base),
                        },
                        Some(attempt),
                    )
                }
            }
        }
    };
    match old_base {
        Some(old) if old != new_base => updates.push(Update::update(
            layout::base_ref(&id),
            old,
            new_base,
            format!("git-task: reset {id}"),
        )),
        None => updates.push(Update::create(
            layout::base_ref(&id),
            new_base,
            format!("git-task: reset {id}"),
        )),
        _ => {}
    }
    let mut state = record.state.clone();
    state.base_commit = new_base.to_string();
    let details = Event::Reset(event::Reset::Patch {
        base: new_base.to_string(),
        onto: onto.map(|o| o.to_string()),
        attempt: attempt.as_ref().map(|a| a.name.clone()),
    });
    record::append(repo, record, details, &state, updates).map_err(Error::from)?;
    let files = write_target(repo, record, &w, &target)?;
    Ok(PatchReset {
        attempt,
        base: new_base,
        files,
    })
}
