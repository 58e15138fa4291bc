//! The gate for a target branch on another repository (`merge --remote`, SPEC §6): the same
//! select → land and judge → check as a local merge, on the tip just fetched from the remote,
//! ending in the ref changes to push instead of a local transaction. The transport (fetch,
//! the atomic push with its leases, the retries) is `crate::remote::merge`'s.

use super::{
    check, land, landing, lock::BranchLock, select, target, Gated, Landed, Options, Outcome,
    Refusal,
};
use crate::config::Settings;
use crate::error::{Error, Result};
use crate::git::refs::Update;
use crate::git::{ObjectId, Repo};
use crate::task::TaskId;

/// A landing judged and checked on the remote target's tip, ready to push.
pub struct Planned {
    landing: land::Landing,
    /// The local ref changes that go with it (records, notes, task branches).
    local: Vec<Update>,
    results: Vec<super::TaskMerged>,
}

impl Planned {
    /// The target branch (full name, on the remote).
    pub fn target(&self) -> &str {
        &self.landing.target
    }

    /// The remote target's tip the landing was computed, judged and checked on.
    pub fn old_tip(&self) -> ObjectId {
        self.landing.gated.old_tip
    }

    /// The target's tip once the tasks land.
    pub fn new_tip(&self) -> ObjectId {
        self.landing.gated.new_tip
    }

    /// The records, notes and task-branch deletions as (ref, new value): pushed with the target.
    pub fn ref_changes(&self) -> Vec<(String, Option<ObjectId>)> {
        self.local.iter().map(|u| (u.name.clone(), u.new)).collect()
    }

    /// Each task that lands, with the commit it landed as.
    pub fn tasks(&self) -> Vec<(TaskId, ObjectId)> {
        self.landing
            .pending
            .iter()
            .map(|p| (p.record.state.task_id(), p.tip))
            .collect()
    }
}

/// What [`plan_onto`] concluded.
#[allow(clippy::large_enum_variant)] // made and matched once per try
pub enum Plan {
    /// The answer is known without pushing: every task had landed, or one is refused.
    Answer(Outcome),
    /// A landing to push.
    Ready(Planned),
}

/// Computes, judges and checks the landing of `ids` on the target whose tip `tip_of` reads (the
/// remote's, just fetched); the lock of that remote target is held until the plan is dropped.
pub fn plan_onto(
    repo: &Repo,
    settings: &Settings,
    ids: &[TaskId],
    opts: &Options,
    lock_name: &str,
    tip_of: &dyn Fn(&str) -> Result<Option<ObjectId>>,
) -> Result<Plan> {
    for id in ids {
        let rec = crate::record::load_existing(repo, id)?;
        if rec.state.mode == crate::task::Mode::Patch {
            return Err(Error::input(format!(
                "task '{id}' works in patch mode: its work is accepted where it is, not on a remote"
            ))
            .hint(format!("accept it here: git task merge {id}")));
        }
    }
    let ready = match select::select_with(repo, settings, ids, opts, tip_of)? {
        select::Selection::Answer(outcome) => return Ok(Plan::Answer(outcome)),
        select::Selection::Ready(ready) => ready,
    };
    let select::Ready {
        target,
        old_tip,
        mut pending,
        already,
        ..
    } = ready;
    let claims = crate::claims::live(repo)?;
    if let Err(refusal) = landing::land_and_judge(repo, &mut pending, old_tip, &target, opts)? {
        return Ok(Plan::Answer(Outcome::Refused(refusal)));
    }
    let (mut new_tip, mut changes) =
        match target::plan_target_update(repo, &pending, old_tip, &[], &target)? {
            Ok(plan) => plan,
            Err(refusal) => return Ok(Plan::Answer(Outcome::Refused(refusal))),
        };
    if let Some(refusal) = check::check_all(repo, &mut pending, old_tip, opts, &mut None)? {
        return Ok(Plan::Answer(Outcome::Refused(refusal)));
    }
    // A claim made while the checks ran binds the landing too: judged again (the landing's
    // trees, on which the checks ran, do not depend on claims).
    if crate::claims::live(repo)? != claims {
        if let Err(refusal) = landing::land_and_judge(repo, &mut pending, old_tip, &target, opts)? {
            return Ok(Plan::Answer(Outcome::Refused(refusal)));
        }
        (new_tip, changes) =
            match target::plan_target_update(repo, &pending, old_tip, &[], &target)? {
                Ok(plan) => plan,
                Err(refusal) => return Ok(Plan::Answer(Outcome::Refused(refusal))),
            };
    }
    // Work made in a task worktree while its checks ran would be deleted with it unlanded.
    for p in &pending {
        if let Some(w) = p.worktree.as_ref().filter(|w| w.exists()) {
            if let Some(refusal) = select::task_worktree_refusal(repo, &p.record, w, p.tip)? {
                return Ok(Plan::Answer(Outcome::Refused(refusal)));
            }
        }
    }
    // Merges from this repository into the same remote branch take turns from here to the push.
    let lock = BranchLock::acquire(repo, lock_name, &mut |w| {
        if let Some(tell) = opts.on_wait {
            tell(w)
        }
    })?;
    let landing = land::Landing {
        target: target.clone(),
        pending,
        checked_out: Vec::new(),
        gated: Gated {
            lock,
            old_tip,
            new_tip,
            changes,
        },
        keep: opts.keep || settings.keep_on_merge,
        strategy: opts.strategy,
        already,
    };
    let (updates, results) = land::transaction(repo, &landing)?;
    // The target moves on the remote only; everything else moves here too.
    let local = updates.into_iter().filter(|u| u.name != target).collect();
    Ok(Plan::Ready(Planned {
        landing,
        local,
        results,
    }))
}

/// After the push landed `planned` on the remote: moves the same refs here (records, notes,
/// task branches; a local writer that got there first only costs a warning) and removes the
/// task worktrees unless kept.
pub fn finish(repo: &Repo, planned: Planned) -> Result<Landed> {
    let Planned {
        landing,
        local,
        mut results,
    } = planned;
    let mut warnings = Vec::new();
    let mut local = local;
    let mut tries = 0;
    // A local writer of the notes that got there first (a merge into another branch) only
    // costs making them again on top of its own.
    while let Err(e) = crate::ledger::apply(repo, crate::ledger::Mover::GitTask, local.clone()) {
        if matches!(e, crate::git::refs::RefError::Conflict(_))
            && tries < 64
            && land::notes_moved(repo, &local)
        {
            tries += 1;
            let target = &landing.target;
            local = land::transaction(repo, &landing)?
                .0
                .into_iter()
                .filter(|u| &u.name != target)
                .collect();
            continue;
        }
        warnings.push(format!(
            "landed on the remote, but the local records could not follow: {}",
            Error::from(e)
        ));
        break;
    }
    let land::Landing {
        target,
        pending,
        gated,
        keep,
        already,
        ..
    } = landing;
    drop(gated.lock);
    land::release_claims(repo, &pending);
    let mut leave = None;
    if !keep {
        let (more, left) = land::clean_up(repo, &pending, &mut results)?;
        warnings.extend(more);
        leave = left;
    }
    let mut tasks = already;
    tasks.extend(results);
    Ok(Landed {
        into: target,
        old_tip: Some(gated.old_tip.to_string()),
        new_tip: Some(gated.new_tip.to_string()),
        tasks,
        updated_worktrees: Vec::new(),
        warnings,
        leave_cwd: leave,
    })
}

/// The refusal when the remote target kept moving: nothing landed.
pub fn remote_moved(target: &str, remote: &str, tries: u32) -> Refusal {
    Refusal::RemoteMoved {
        into: target.to_owned(),
        remote: remote.to_owned(),
        tries,
    }
}
