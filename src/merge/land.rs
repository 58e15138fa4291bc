//! Landing (SPEC §7.6–7.7): one ref transaction moves the target, the notes, each task's
//! record and deletes each task branch, all with their expected old values; then every
//! worktree where the target is checked out follows, and the task worktrees go. A journal
//! entry per checked-out target is written before the refs move, so a kill in between is
//! finished (or undone) by `recover`.

use super::message::note_text;
use super::{
    select::short, target, Gated, Landed, Outcome, Pending, Refusal, Strategy, TaskMerged,
};
use crate::error::{Error, Result};
use crate::git::refs::{Expect, RefError, Update};
use crate::git::{cli, refs::note, worktree, ObjectId, Repo};
use crate::record;
use crate::record::event::{self, Event, Purpose};
use crate::task::{layout, Status};
use std::path::PathBuf;

/// Everything the landing needs, once the gate passed.
pub(super) struct Landing {
    pub target: String,
    pub pending: Vec<Pending>,
    pub checked_out: Vec<PathBuf>,
    pub gated: Gated,
    pub keep: bool,
    pub strategy: Strategy,
    /// Tasks named that had landed before, reported first.
    pub already: Vec<TaskMerged>,
}

/// Moves the refs, updates the checked-out target (moving the refs back if git refuses), and
/// cleans up the task worktrees unless kept.
pub(super) fn land(repo: &Repo, landing: Landing) -> Result<Outcome> {
    let (old_tip, new_tip) = (landing.gated.old_tip, landing.gated.new_tip);
    let (mut updates, mut results) = transaction(repo, &landing)?;
    // A journal entry per checked-out target, written before the refs move: a merge killed
    // from here on leaves that worktree for `recover` to finish or undo.
    let mut journals = Vec::new();
    if new_tip != old_tip {
        for path in &landing.checked_out {
            journals.push(crate::git::journal::Journal::begin(
                repo,
                crate::git::journal::Step::Checkout {
                    worktree: path.clone(),
                    branch: landing.target.clone(),
                    old: old_tip.to_string(),
                    new: new_tip.to_string(),
                },
            )?);
        }
    }
    let mover = crate::ledger::Mover::Merge(
        landing
            .pending
            .iter()
            .map(|p| p.record.state.id.to_string())
            .collect(),
    );
    let mut tries = 0;
    loop {
        match crate::ledger::apply(repo, mover.clone(), updates.clone()) {
            Ok(()) => break,
            // Another process added its notes first (a merge into another branch, a
            // checkpoint): the notes are made again on top of them, and every other ref is
            // still expected as judged.
            Err(RefError::Conflict(_)) if tries < NOTES_RETRIES && notes_moved(repo, &updates) => {
                tries += 1;
                updates = transaction(repo, &landing)?.0;
            }
            Err(RefError::Conflict(msg)) => {
                return Err(
                    Error::repo_msg(format!("{msg}; nothing was merged")).hint(format!(
                        "'{}' or a task changed while merging; run the merge again",
                        short(&landing.target)
                    )),
                )
            }
            Err(RefError::Other(e)) => return Err(e),
        }
    }

    let updated = match update_targets(repo, &landing, &updates)? {
        Ok(updated) => updated,
        Err(refusal) => return Ok(Outcome::Refused(refusal)),
    };
    drop(journals);
    let Landing {
        target,
        pending,
        gated,
        keep,
        already,
        ..
    } = landing;
    drop(gated.lock);
    release_claims(repo, &pending);
    let (warnings, leave) = if keep {
        (Vec::new(), None)
    } else {
        clean_up(repo, &pending, &mut results)?
    };
    let mut tasks = already;
    tasks.extend(results);
    Ok(Outcome::Landed(Landed {
        into: target,
        old_tip: Some(old_tip.to_string()),
        new_tip: Some(new_tip.to_string()),
        tasks,
        updated_worktrees: updated,
        warnings,
        leave_cwd: leave,
    }))
}

/// How many times a landing is tried again because the notes ref moved under it: each try
/// loses only to a process that wrote its notes meanwhile, so this is a bound, not a wait.
const NOTES_RETRIES: u32 = 64;

/// Whether the notes ref no longer holds what `updates` expect of it (another process added
/// its notes since they were prepared).
pub(super) fn notes_moved(repo: &Repo, updates: &[Update]) -> bool {
    let Some(u) = updates.iter().find(|u| u.name == layout::NOTES_REF) else {
        return false;
    };
    let now = match repo.find_ref(layout::NOTES_REF) {
        Ok(now) => now,
        Err(_) => return false,
    };
    match u.expect {
        Expect::Is(old) => now != Some(old),
        Expect::Absent => now.is_some(),
        Expect::Any => false,
    }
}

/// Releases the claims of the tasks that landed (their claims count until git-task releases
/// them). Best effort: one left behind is dropped by `sweep`, the tasks being merged.
pub(super) fn release_claims(repo: &Repo, pending: &[Pending]) {
    for p in pending {
        let _ = crate::claims::release_all(repo, &p.record.state.id);
    }
}

/// Step 5: the ref changes of the one transaction (target, notes, patch snapshots that follow
/// the landing, each task's `checks` and `merged` events, task branches), and each task's report.
pub(super) fn transaction(repo: &Repo, l: &Landing) -> Result<(Vec<Update>, Vec<TaskMerged>)> {
    let (old_tip, new_tip) = (l.gated.old_tip, l.gated.new_tip);
    let (target, pending, checked_out, keep, strategy) =
        (&l.target, &l.pending, &l.checked_out, l.keep, l.strategy);
    let mut updates = Vec::new();
    if new_tip != old_tip {
        let ids: Vec<&str> = pending.iter().map(|p| p.record.state.id.as_str()).collect();
        updates.push(Update::update(
            target.clone(),
            old_tip,
            new_tip,
            format!("git-task: merge {}", ids.join(" ")),
        ));
    }
    let notes: Vec<(ObjectId, String)> = pending
        .iter()
        .filter_map(|p| {
            p.commits.last().map(|c| {
                (
                    *c,
                    note_text(repo, &p.record, strategy, target, p.checks.as_ref()),
                )
            })
        })
        .collect();
    if let Some(u) = note::prepare(repo, layout::NOTES_REF, &notes, "git-task: notes for merge")? {
        updates.push(u);
    }
    // A patch-mode task active where the target is checked out: its snapshot follows the landing (SPEC §9).
    for path in checked_out.iter().filter(|_| new_tip != old_tip) {
        updates.extend(crate::patch::follow_landing(
            repo, path, target, old_tip, new_tip,
        )?);
    }
    let into = crate::task::BranchName::parse(target)
        .map_err(|why| Error::input(format!("the target branch: {why}")))?;
    let mut results = Vec::new();
    for p in pending {
        let id = p.record.state.task_id();
        let mut state = p.record.state.clone();
        state.status = Status::Merged;
        let commit = p.commits.last().map(|c| c.to_string());
        let keep = keep || p.kept_because().is_some();
        let details = Event::Merged(event::Merged::Branch {
            commit: commit.clone(),
            commits: p.commits.iter().map(|c| c.to_string()).collect(),
            mode: strategy.to_string(),
            into: into.clone(),
            keep,
            task_tip: p.tip.to_string(),
            checks: p.checks.as_ref().map(Into::into),
        });
        // Two events, one ref update: `checks` then `merged`.
        let run = p
            .checks
            .as_ref()
            .expect("checks ran (or were skipped) for every pending task");
        let checks = Event::checks(run, Purpose::Merge);
        let (_, with_checks) = record::prepare_append(repo, &p.record, &checks, &p.record.state)?;
        let (merged, _) = record::prepare_append(repo, &with_checks, &details, &state)?;
        updates.push(Update::update(
            merged.name.clone(),
            p.record.tip,
            merged.new.expect("an append sets the record"),
            merged.message,
        ));
        if !keep {
            updates.push(Update::delete(
                p.record.state.branch.clone(),
                p.tip,
                format!("git-task: merged {id}"),
            ));
        }
        results.push(TaskMerged {
            task: id.to_string(),
            already_merged: false,
            commit,
            commits: p.commits.iter().map(|c| c.to_string()).collect(),
            into: target.clone(),
            strategy,
            checks: p.checks.clone(),
            removed: false,
            worktree: p.record.state.worktree.clone(),
        });
    }
    Ok((updates, results))
}

/// Step 6: brings the worktrees where the target is checked out along; if git refuses one,
/// puts back those already moved and moves the refs back, and the merge is refused.
fn update_targets(
    repo: &Repo,
    l: &Landing,
    updates: &[Update],
) -> Result<std::result::Result<Vec<String>, Refusal>> {
    let (old_tip, new_tip, checked_out) = (l.gated.old_tip, l.gated.new_tip, &l.checked_out);
    let mut updated = Vec::new();
    if new_tip != old_tip {
        for (i, path) in checked_out.iter().enumerate() {
            let Some(run) =
                target::update_checked_out(repo, path, &l.gated.changes, old_tip, new_tip)?
            else {
                updated.push(path.display().to_string());
                continue;
            };
            if !run.success {
                for done in checked_out[..i].iter().rev() {
                    let _ = cli::two_tree_update(done, new_tip, old_tip, false);
                }
                crate::ledger::apply(repo, crate::ledger::Mover::GitTask, reverse(updates)).map_err(|e| {
                    Error::from(e).hint(format!("'{}' was moved to {new_tip} but '{}' could not be updated; run 'git -C {} read-tree -m -u {old_tip} {new_tip}' after saving your changes", short(&l.target), path.display(), crate::contract::judge::shell_quote(&path.display().to_string())))
                })?;
                let paths = cli::listed_paths(&run.stderr);
                return Ok(Err(Refusal::TargetDirty {
                    into: l.target.clone(),
                    worktree: path.display().to_string(),
                    paths,
                    detail: run.stderr,
                }));
            }
            updated.push(path.display().to_string());
        }
    }

    Ok(Ok(updated))
}

/// Step 7: removes the task worktrees (stepping out of one this process stands in); returns the
/// warnings for those that could not go, and where to `cd` if this process left its directory.
pub(super) fn clean_up(
    repo: &Repo,
    pending: &[Pending],
    results: &mut [TaskMerged],
) -> Result<(Vec<String>, Option<String>)> {
    let mut warnings = Vec::new();
    let mut leave = None;
    let cwd = std::env::current_dir().ok();
    for (p, r) in pending.iter().zip(results.iter_mut()) {
        if let Some(why) = p.kept_because() {
            warnings.push(format!(
                "kept the worktree and branch of '{}': {why}, then git task remove {})",
                p.record.state.id, p.record.state.id
            ));
            continue;
        }
        if let Some(w) = &p.worktree {
            if cwd.as_deref().is_some_and(|c| c.starts_with(&w.path)) {
                // This process stands in the worktree it removes: step out first.
                let main = repo.main_worktree()?;
                let _ = std::env::set_current_dir(&main);
                leave = Some(main.display().to_string());
            }
            match worktree::remove(repo, w) {
                Ok(()) => {
                    r.removed = true;
                    let id = p.record.state.task_id();
                    let scratch = crate::lifecycle::remove::scratch_dir(repo, &id);
                    if crate::confine::settle(repo, &id).is_ok() {
                        let _ = std::fs::remove_dir_all(scratch);
                    }
                }
                Err(e) => warnings.push(format!(
                    "could not remove the worktree of '{}': {e}",
                    p.record.state.id
                )),
            }
        } else {
            r.removed = true;
        }
    }
    Ok((warnings, leave))
}

/// Returns the changes that undo `updates` (each expecting the value it set).
pub(super) fn reverse(updates: &[Update]) -> Vec<Update> {
    updates
        .iter()
        .map(|u| {
            let back = match u.expect {
                Expect::Is(old) => Some(old),
                Expect::Absent | Expect::Any => None,
            };
            let expect = match u.new {
                Some(new) => Expect::Is(new),
                None => Expect::Absent,
            };
            Update {
                name: u.name.clone(),
                new: back,
                expect,
                message: "git-task: roll back merge".into(),
            }
        })
        .collect()
}
