//! The frozen contract's checks, run on the landing tree in a gate checkout (SPEC §7.5,
//! `crate::gate`); a failure is recorded in the task's event log and refuses the merge.

use super::{Options, Pending, Refusal};
use crate::checks::{How, Run};
use crate::error::Result;
use crate::git::{objects, ObjectId, Repo};
use crate::record::event::{Event, Purpose};
use crate::record::{self, Record};
use std::path::PathBuf;

/// Runs every pending task's frozen checks on its landing tree; a failure is recorded and refuses.
pub(super) fn check_all(
    repo: &Repo,
    pending: &mut [Pending],
    onto: ObjectId,
    opts: &Options,
    ahead: &mut Option<crate::gate::Ahead>,
) -> Result<Option<Refusal>> {
    // The commit whose tree lands once this task (and those before it) landed.
    let mut commit = onto;
    for i in 0..pending.len() {
        let p = &pending[i];
        if let Some(last) = p.commits.last() {
            commit = *last;
        }
        let tree = match p.landed_tree {
            Some(t) => t,
            None => objects::commit_tree(repo, commit)?,
        };
        let (run, checkout, baseline) =
            run_checks_on_landing(repo, &p.record, commit, tree, onto, opts, ahead)?;
        if !run.passed {
            // A failure is recorded now, with the passes of the tasks before it; a pass is
            // otherwise recorded with the merge, in its transaction.
            for before in &pending[..i] {
                let run = before
                    .checks
                    .as_ref()
                    .expect("checks ran for the tasks before");
                let checks = Event::checks(run, Purpose::Merge);
                record::append(
                    repo,
                    &before.record,
                    checks,
                    &before.record.state,
                    Vec::new(),
                )?;
            }
            let checks = Event::checks(&run, Purpose::Merge);
            record::append(repo, &p.record, checks, &p.record.state, Vec::new())?;
            return Ok(Some(Refusal::ChecksFailed {
                task: p.record.state.id.to_string(),
                checks: run,
                checkout: checkout.map(|c| c.display().to_string()),
                baseline,
            }));
        }
        pending[i].checks = Some(run);
    }
    Ok(None)
}

/// Runs the frozen contract's checks (never the branch file's) on `tree`, the tree of `commit`,
/// the target once the task landed, in a gate checkout brought to it (SPEC §7.5, `crate::gate`),
/// stopping at the first failure.
///
/// The gate checkout's ignored files (`node_modules/`…) stay between runs; they were copied
/// from the *main* worktree as the target's `.worktreeinclude` names them when it was made,
/// never from the task's worktree. After a failure it is kept (its path returned) until the
/// next run on it.
pub(super) fn run_checks_on_landing(
    repo: &Repo,
    rec: &Record,
    commit: ObjectId,
    tree: ObjectId,
    onto: ObjectId,
    opts: &Options,
    ahead: &mut Option<crate::gate::Ahead>,
) -> Result<(Run, Option<PathBuf>, Option<Baseline>)> {
    let frozen = rec.frozen_checks();
    if opts.no_checks || frozen.commands.is_empty() {
        return Ok((Run::not_run(opts.no_checks), None, None));
    }
    let slot = gate_slot(repo, ahead, commit, tree, onto)?;
    let how = How {
        stream: opts.stream_checks,
        keep_going: false,
    };
    let run = frozen.run(slot.path(), how, &mut |_| {})?;
    // Kept for inspection after a failure (the run on the target's tip takes another checkout
    // while this one is held); settled for the next run after a pass.
    if run.passed {
        slot.settle_later(repo);
        return Ok((run, None, None));
    }
    // A check that timed out is not waited for a second time.
    let timed_out = run.commands.last().is_some_and(|c| c.timed_out);
    let baseline = (!timed_out).then(|| baseline(repo, rec, onto)).flatten();
    let kept = slot.keep_failed(&rec.state.id);
    Ok((run, Some(kept), baseline))
}

/// A gate checkout of git-task's own (a directory private to the user, 0700), the one taken
/// ahead when there is one, brought to `commit` (tree `tree`, landing on `onto`).
fn gate_slot(
    repo: &Repo,
    ahead: &mut Option<crate::gate::Ahead>,
    commit: ObjectId,
    tree: ObjectId,
    onto: ObjectId,
) -> Result<crate::gate::Slot> {
    let (slot, looked) = match ahead.take() {
        Some(ahead) => ahead.finish(),
        None => (crate::gate::take(repo)?, None),
    };
    slot.prepare(repo, commit, tree, onto, looked)?;
    Ok(slot)
}

/// What the failed checks do on the target's tip without the task (issue 33): whether they
/// fail there too, and whether the target has a `.worktreeinclude` (without one, no ignored
/// file is copied into the gate checkout).
#[derive(Clone, Debug)]
pub struct Baseline {
    /// The checks also fail on the target's tip: the target, not the task, breaks them.
    pub fails_without_task: bool,
    /// The target's tree has a `.worktreeinclude`.
    pub worktreeinclude: bool,
}

/// Runs the task's frozen checks on `onto` (the target's tip) in a gate checkout of its own,
/// after they failed on the landing; `None` when that run could not be made.
fn baseline(repo: &Repo, rec: &Record, onto: ObjectId) -> Option<Baseline> {
    let tree = objects::commit_tree(repo, onto).ok()?;
    let worktreeinclude = objects::read_blob_in_tree(repo, tree, ".worktreeinclude")
        .ok()
        .flatten()
        .is_some();
    let slot = crate::gate::take(repo).ok()?;
    slot.prepare(repo, onto, tree, onto, None).ok()?;
    let how = How {
        stream: false,
        keep_going: false,
    };
    let run = rec
        .frozen_checks()
        .run(slot.path(), how, &mut |_| {})
        .ok()?;
    slot.settle_later(repo);
    Some(Baseline {
        fails_without_task: !run.passed,
        worktreeinclude,
    })
}

/// Whether any of `pending` will run checks: then a gate checkout is taken ahead (and looked at
/// while the landing is computed).
pub(super) fn will_run(pending: &[Pending], opts: &Options) -> bool {
    !opts.no_checks
        && pending
            .iter()
            .any(|p| !p.record.frozen_checks().commands.is_empty())
}

/// The commit and tree the target has once every task of `pending` landed on `onto`.
pub(super) fn combined_tree(
    repo: &Repo,
    pending: &[Pending],
    onto: ObjectId,
) -> Result<(ObjectId, ObjectId)> {
    let commit = pending
        .iter()
        .rev()
        .find_map(|p| p.commits.last().copied())
        .unwrap_or(onto);
    let tree = match pending.last().and_then(|p| p.landed_tree) {
        Some(t) => t,
        None => objects::commit_tree(repo, commit)?,
    };
    Ok((commit, tree))
}

/// The landing queue's batch ([`super::merge_batch`]): the tasks' frozen checks run once, on
/// the tree that lands once all of them landed, in one gate checkout; a command several tasks
/// name runs once, with the timeout and environment of the first task that names it. Each
/// task that has checks gets the whole run. When `verified` ran them on that very tree
/// ([`super::probe`]), they are not run again. A failure records nothing (the queue bisects
/// the batch and records what it ejects) and refuses, naming the last task of the batch.
pub(super) fn check_combined(
    repo: &Repo,
    pending: &mut [Pending],
    onto: ObjectId,
    opts: &Options,
    ahead: &mut Option<crate::gate::Ahead>,
    verified: Option<&super::Verified>,
) -> Result<Option<Refusal>> {
    let Some(last) = pending.last() else {
        return Ok(None);
    };
    let (commit, tree) = combined_tree(repo, pending, onto)?;
    let mut seen = std::collections::HashSet::new();
    let mut groups = Vec::new();
    for p in pending.iter() {
        let frozen = p.record.frozen_checks();
        let commands: Vec<String> = frozen
            .commands
            .iter()
            .filter(|c| seen.insert(c.to_string()))
            .cloned()
            .collect();
        if !commands.is_empty() {
            groups.push(crate::checks::Frozen { commands, ..frozen });
        }
    }
    if opts.no_checks || groups.is_empty() {
        for p in pending.iter_mut() {
            p.checks = Some(Run::not_run(opts.no_checks));
        }
        return Ok(None);
    }
    // The same tree, checked by the same commands, in the same order.
    let same = |v: &&super::Verified| {
        v.tree == tree
            && v.checks.passed
            && v.checks
                .commands
                .iter()
                .map(|o| o.command.as_str())
                .eq(groups
                    .iter()
                    .flat_map(|g| g.commands.iter().map(String::as_str)))
    };
    let run = match verified.filter(same) {
        Some(v) => v.checks.clone(),
        None => {
            let slot = gate_slot(repo, ahead, commit, tree, onto)?;
            let how = How {
                stream: opts.stream_checks,
                keep_going: false,
            };
            let mut run = Run {
                skipped: false,
                passed: true,
                commands: Vec::new(),
            };
            for frozen in &groups {
                let part = frozen.run(slot.path(), how, &mut |_| {})?;
                run.commands.extend(part.commands);
                if !part.passed {
                    run.passed = false;
                    break;
                }
            }
            if !run.passed {
                let task = last.record.state.id.to_string();
                let kept = slot.keep_failed(&task);
                return Ok(Some(Refusal::ChecksFailed {
                    task,
                    checks: run,
                    checkout: Some(kept.display().to_string()),
                    baseline: None,
                }));
            }
            run
        }
    };
    for p in pending.iter_mut() {
        p.checks = Some(if p.record.frozen_checks().commands.is_empty() {
            Run::not_run(false)
        } else {
            run.clone()
        });
    }
    Ok(None)
}
