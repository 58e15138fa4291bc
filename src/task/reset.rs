//! Putting a worktree-mode task back to its base (or a new base), saving its work first.
//!
//! Order (SPEC §2.2, §2.7): first the work is saved as attempts (uncommitted
//! changes, untracked files included, and the task's own commits); then one
//! ref transaction moves the branch to a fresh contract commit on the base,
//! moves `refs/tasks/<id>/base` and appends `reset` to the record, each with
//! its expected old value; only then is the worktree replaced: removed and
//! added again at the same path, so it matches the branch without an in-place
//! checkout. A crash before the transaction changes nothing but the attempt
//! refs; a crash after it leaves a task whose worktree `sweep` recognises.

use super::remove::{save_branch_commits, save_dirty_worktree, Attempt};
use super::{layout, Mode, Status};
use crate::config::Settings;
use crate::error::{Error, Result};
use crate::git::refs::Update;
use crate::git::{worktree, ObjectId, Repo};
use crate::record::{self, event, Record};
use std::path::PathBuf;

/// What `reset` did.
#[derive(Debug)]
pub struct ResetDone {
    /// The record after the `reset` event.
    pub record: Record,
    /// Work saved before it was discarded.
    pub attempts: Vec<Attempt>,
    /// The commit the task now starts from.
    pub base: ObjectId,
    /// The setup command run in the new worktree, if any, and what it did.
    pub setup: Option<crate::checks::Outcome>,
}

/// Resets the task of `record` to its base, or to `onto` (which becomes its new base).
///
/// Fails with an input error for patch-mode tasks and for tasks that are not
/// active or dropped; a dropped task becomes active again.
pub fn reset(
    repo: &Repo,
    settings: &Settings,
    record: &Record,
    onto: Option<ObjectId>,
) -> Result<ResetDone> {
    let s = &record.state;
    let id = s.task_id();
    if s.mode != Mode::Worktree {
        return Err(Error::input(format!(
            "task '{id}' works in patch mode; it has no branch to reset"
        ))
        .hint(format!("undo its changes with 'git task revert {id}'")));
    }
    match s.status {
        Status::Active | Status::Dropped => {}
        Status::Provisioning => return Err(Error::input(format!(
            "task '{id}' is still being started"
        ))
        .hint(
            "wait for 'git task start' to finish, or run 'git task sweep' if it was interrupted",
        )),
        Status::Merged | Status::Removed => {
            return Err(Error::input(format!(
                "task '{id}' is {}; there is nothing to reset",
                s.status
            ))
            .hint("start a new task under another id"))
        }
    }
    let path = PathBuf::from(&s.worktree);
    let linked = worktree::list(repo)?
        .into_iter()
        .find(|w| w.path == path || w.branch.as_deref() == Some(s.branch.as_str()));

    // SPEC §2.2: save before discarding.
    let tip = repo.find_ref(&s.branch)?;
    let old_base = repo.find_ref(&layout::base_ref(&id))?;
    let mut attempts = Vec::new();
    let mut head_saved = None;
    if let Some(linked) = linked.as_ref().filter(|l| l.exists()) {
        if let Some(a) = save_dirty_worktree(repo, &id, &linked.path, "reset")? {
            head_saved = worktree::head_of(&linked.path)?;
            attempts.push(a);
        }
    }
    if let Some(tip) = tip {
        // A dirty-worktree attempt whose parent is the tip already holds the branch's commits.
        if head_saved != Some(tip) {
            if let Some(a) = save_branch_commits(repo, &id, tip, old_base, "reset")? {
                attempts.push(a);
            }
        }
    }

    // The branch starts over: one fresh contract commit (the frozen contract) on the base.
    let base = match onto {
        Some(commit) => commit,
        None => match old_base {
            Some(b) => b,
            None => s
                .base_commit
                .parse()
                .map_err(|e| Error::repo(format!("task '{id}' has a bad base commit"), e))?,
        },
    };
    let first = super::start::first_commit(repo, &id, base, &record.contract_text)?;

    let message = format!("git-task: reset {id}");
    let mut extra = vec![match tip {
        Some(tip) => Update::update(s.branch.clone(), tip, first, message.clone()),
        None => Update::create(s.branch.clone(), first, message.clone()),
    }];
    match old_base {
        Some(old) if old != base => extra.push(Update::update(
            layout::base_ref(&id),
            old,
            base,
            message.clone(),
        )),
        Some(_) => {}
        None => extra.push(Update::create(layout::base_ref(&id), base, message.clone())),
    }
    let mut state = s.clone();
    state.status = Status::Active;
    state.base_commit = base.to_string();
    let details = serde_json::json!({
        "base": base.to_string(),
        "previous_head": tip.map(|t| t.to_string()),
        "attempts": attempts,
    });
    let record = record::append(repo, record, event::RESET, &state, details, extra)?;

    // The worktree follows the branch: replaced, not checked out in place.
    if let Some(linked) = &linked {
        worktree::remove(repo, linked)?;
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| Error::repo(format!("could not create '{}'", parent.display()), e))?;
    }
    worktree::add(
        repo,
        &path,
        &s.branch,
        None,
        &gix::interrupt::IS_INTERRUPTED,
    )?;
    crate::hooks::run_post_checkout(repo, &path, &first.to_string())?;
    let setup = match state.setup.as_deref().or(settings.setup.as_deref()) {
        Some(cmd) => {
            let env = super::start::task_env(&state);
            Some(crate::checks::run_captured(
                cmd,
                &path,
                &env,
                std::time::Duration::from_secs(3600),
            )?)
        }
        None => None,
    };
    Ok(ResetDone {
        record,
        attempts,
        base,
        setup,
    })
}
