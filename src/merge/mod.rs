//! The merge gate (SPEC §7): judge → in-memory merge → checks → one ref
//! transaction → worktree update → clean-up. Never prints.
//!
//! What it guarantees:
//!
//! * **Nothing lands unless everything passes.** Every task named is judged
//!   over its whole diff (committed and uncommitted, with the same verdict
//!   code as the pre-commit hook), merged in memory onto the target's current
//!   tip, chained in the given order, and its frozen contract's checks are run;
//!   only then does one ref transaction move the target branch, the notes ref,
//!   each task's record (`merged`) and delete each task branch, each with its
//!   expected old value. A refusal at any step changes no ref but the `checks`
//!   event recorded for checks that failed.
//! * **The contract file never reaches the target.** The task side of every
//!   merge (and of every replayed commit) has `.task-contract.toml` reset to
//!   what the other side holds, so the result keeps the target's own copy if it
//!   has one and has none otherwise; a commit that only touched the contract
//!   file is not replayed.
//! * **A checked-out target is updated, never clobbered.** Where the target
//!   branch is checked out (main worktree or a linked one), nothing moves
//!   unless updating that worktree would overwrite no local change: a fast
//!   in-process check of just the paths the merge changes (index entry and
//!   file content equal to the old tip's, nothing in the way of an added path);
//!   when it is not certain, git decides with `git read-tree -n -m -u old new`
//!   (its own rules, nothing written). Then the refs move and the worktree's
//!   index and files follow: in process (`git::checkout::twoway`, which checks the same
//!   rules again under the index lock), or, when that declines (a local change
//!   appeared meanwhile, an index extension or attributes gix cannot honour),
//!   with `git read-tree -m -u old new` (see `git::cli`). If git then refuses,
//!   the refs are moved back (compare-and-swap again) and the merge is
//!   reported as refused. A process killed between the ref move and that
//!   update leaves the worktree at the old tip (`git status` shows the merge
//!   reversed; nothing is lost): `git read-tree -m -u <old> <new>` there, both
//!   ids in the reflog of the target branch, finishes it.
//! * **Concurrent merges take turns.** A lock file per target branch
//!   (`<common dir>/git-task/locks/`) is held from before the landing is
//!   computed to the update of the checked-out target; merges waiting for it
//!   take it in arrival order (up to ten minutes, then the error names the
//!   holder). If a writer outside git-task moved the target while the checks
//!   ran, the landing is computed and checked again on its new tip; one that
//!   moves it in the last moment makes the transaction fail: nothing lands
//!   (exit 128).
//! * **Repeating is a no-op.** A task already merged is reported with its
//!   earlier merge, and a clean-up an interrupted merge left undone (worktree
//!   still present) is finished.
//!
//! Where each step lives:
//!
//! | step | file |
//! |---|---|
//! | which tasks, which target; refusals before any merge | `select.rs` |
//! | the landing computed in memory and judged | `landing.rs` |
//! | the frozen checks on the landing tree | `check.rs` |
//! | the checked-out target: look ahead, update | `target.rs` |
//! | one transaction, the worktree update, clean-up | `land.rs` |
//! | commit messages, notes, event details | `message.rs` |
//! | the per-branch lock | `lock.rs` |
//! | the same gate for a branch on a remote (`merge --remote`) | `remote.rs` |
//!
//! It relies on: `changes` for the verdict, `checks` for running commands,
//! `git::merge` for in-memory merges, `git::refs` for transactions.

mod check;
mod land;
mod landing;
mod lock;
mod message;
pub mod queue;
pub mod remote;
mod select;
mod target;

use lock::BranchLock;
pub use lock::Waiting;
pub use select::resolve_branch;
pub use target::checked_out_at;

/// A trial merge (the overlap forecast): the task at `task_tip` merged onto the commit `onto`
/// exactly as `merge` would squash it onto `target`, with `merger` (give it a repository that
/// keeps written objects in memory: [`Repo::with_objects_in_memory`]). `Ok(commit)` of the
/// result, whose only parent is `onto`, to chain another trial onto; or `Err(conflicting paths)`.
pub fn trial(
    merger: &mut crate::git::merge::Merger<'_>,
    id: &TaskId,
    onto: ObjectId,
    task_tip: ObjectId,
    target: &str,
) -> Result<std::result::Result<ObjectId, Vec<String>>> {
    let repo = merger.repo();
    let merge = &mut landing::engine(|a, o, t, labels| merger.merge_trees(a, o, t, labels));
    match landing::whole_tree(repo, merge, id, onto, task_tip, target)? {
        Ok(tree) => Ok(Ok(crate::git::objects::write_own_commit(
            repo,
            tree,
            &[onto],
            &format!("trial merge of task {id}"),
        )?)),
        Err(paths) => Ok(Err(paths)),
    }
}

use crate::checks::Run;
use crate::config::Settings;
use crate::contract::Verdict;
use crate::error::{Error, Result};
use crate::git::{checkout::twoway, worktree, ObjectId, Repo};
use crate::record::Record;
use crate::task::TaskId;
use std::path::PathBuf;

/// How the task's work is put onto the target branch.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// One new commit with the task's whole change (default).
    #[default]
    Squash,
    /// A merge commit whose second parent is the task branch.
    Merge,
    /// The task's own commits replayed one by one.
    Rebase,
}

impl std::fmt::Display for Strategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Strategy::Squash => "squash",
            Strategy::Merge => "merge",
            Strategy::Rebase => "rebase",
        })
    }
}

/// What `merge` was asked to do.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Squash, merge commit, or rebase.
    pub strategy: Strategy,
    /// Branch to land on instead of each task's base branch (short or full name).
    pub into: Option<String>,
    /// Keep worktree and branch afterwards (`--keep` or `task.keepOnMerge`).
    pub keep: bool,
    /// Skip the checks (recorded in the event log).
    pub no_checks: bool,
    /// Message of the squash or merge commit, instead of one built from the task's commits.
    pub message: Option<String>,
    /// Stream the checks' output to stderr as they run (a terminal is watching).
    pub stream_checks: bool,
    /// Told about every second while the merge waits for its turn on the target's lock.
    pub on_wait: Option<fn(&Waiting)>,
}

/// One task's part of a merge.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct TaskMerged {
    /// The task id.
    pub task: String,
    /// Whether it had been merged before (nothing was done now).
    pub already_merged: bool,
    /// The commit that carries the task (squash or merge commit, or the last replayed one); `null` if nothing changed.
    pub commit: Option<String>,
    /// Every commit made for it (one, or each replayed commit with `--rebase`).
    pub commits: Vec<String>,
    /// The branch it landed on (full ref name).
    pub into: String,
    /// How it landed.
    pub strategy: Strategy,
    /// Its checks.
    pub checks: Option<Run>,
    /// Whether its worktree and branch were removed.
    pub removed: bool,
    /// The worktree (kept, or where it was).
    pub worktree: String,
}

/// A merge that landed (or had already landed).
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Landed {
    /// The target branch (full ref name).
    pub into: String,
    /// Its tip before.
    pub old_tip: Option<String>,
    /// Its tip after.
    pub new_tip: Option<String>,
    /// Each task, in the order given.
    pub tasks: Vec<TaskMerged>,
    /// Worktrees where the target is checked out and whose index and files were updated.
    pub updated_worktrees: Vec<String>,
    /// Things that went wrong after the merge landed (a worktree that could not be deleted).
    pub warnings: Vec<String>,
    /// Where to `cd`: the merge was run from inside a worktree it removed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leave_cwd: Option<String>,
}

/// Why a merge was refused; nothing landed.
#[derive(Clone, Debug)]
pub enum Refusal {
    /// What the landing would change breaks the task's contract or the target's policy.
    Violation(Verdict),
    /// The task worktree holds uncommitted work; only the branch tip lands.
    UncommittedWork {
        task: String,
        worktree: String,
        paths: Vec<String>,
    },
    /// The task worktree is not on the task branch (detached, or on another branch).
    NotOnBranch {
        task: String,
        worktree: String,
        branch: String,
        head: String,
    },
    /// The record's frozen contract does not match the digest written at start.
    RecordTampered {
        task: String,
        why: String,
        /// The allowed globs frozen at start (`None`: that contract could not be found).
        allowed: Option<Vec<String>>,
    },
    /// A commit that would become reachable from the target holds a path git would never write.
    UnsafeHistory {
        task: String,
        commit: String,
        path: String,
    },
    /// A check failed or timed out on the landing tree.
    ChecksFailed {
        task: String,
        checks: Run,
        /// The temporary checkout of the landing tree the checks ran in, kept for inspection.
        checkout: Option<String>,
        /// The same checks on the target's tip without the task, when they were run there.
        baseline: Option<check::Baseline>,
    },
    /// The in-memory merge onto the target conflicts.
    Conflict {
        task: String,
        into: String,
        paths: Vec<String>,
        /// With `--rebase`: the modes that land the task's net change without a conflict
        /// (`squash`, `merge`): the conflict is the replay's own, and `sync` has nothing to
        /// bring. Empty otherwise.
        lands_with: Vec<&'static str>,
    },
    /// `merge --remote`: the remote's target kept moving between the fetch and the push.
    RemoteMoved {
        into: String,
        remote: String,
        tries: u32,
    },
    /// The target is checked out in a worktree whose local changes the merge would overwrite.
    TargetDirty {
        into: String,
        worktree: String,
        paths: Vec<String>,
        detail: String,
    },
}

/// The answer of [`merge`].
#[derive(Clone, Debug)]
pub enum Outcome {
    /// Everything landed (or had already).
    Landed(Landed),
    /// Nothing landed.
    Refused(Refusal),
    /// A patch-mode task, accepted in place or not (SPEC §9).
    Accepted {
        /// The task id.
        task: String,
        /// What accepting it did.
        accepted: Box<crate::patch::Accepted>,
    },
}

/// A task that is about to land.
struct Pending {
    record: Record,
    /// The task branch's tip: the task is exactly this commit (SPEC §7.1).
    tip: ObjectId,
    worktree: Option<worktree::Linked>,
    /// The commits its landing makes (none when it changes nothing).
    commits: Vec<ObjectId>,
    /// The target's tree once this task (and those before it) landed.
    landed_tree: Option<ObjectId>,
    checks: Option<Run>,
}

impl Pending {
    /// Why its worktree must stay, with its branch, as with `--keep`: git-task never removes
    /// a locked worktree (`git worktree lock`), nor one holding its submodules' repositories.
    fn kept_because(&self) -> Option<&'static str> {
        let w = self.worktree.as_ref()?;
        if w.lock_reason().is_some() {
            Some("its worktree is locked (git worktree unlock")
        } else if w.has_submodule_repositories() {
            Some("its worktree holds the repositories of its submodules (save them")
        } else {
            None
        }
    }
}

/// Bytes of decoded objects the gate keeps (a few hundred trees of a 50-file task are ~100 KiB).
const MERGE_OBJECT_CACHE: usize = 8 << 20;

/// Merges the tasks `ids`, in order, onto their base branch (or `opts.into`); all land or none does.
pub fn merge(repo: &Repo, settings: &Settings, ids: &[TaskId], opts: &Options) -> Result<Outcome> {
    merge_with(repo, settings, ids, opts, Checking::EachTask)
}

/// [`merge`] as the landing queue does it (`queue.rs`): the same gate, but the tasks' checks
/// run once, on the tree that lands once all of them landed (`check::check_combined`), and a
/// failure records no `checks` event (the queue bisects the batch and records what it ejects).
/// When `verified` ([`probe`]) ran the same checks on exactly the tree that lands, they are
/// not run again.
pub fn merge_batch(
    repo: &Repo,
    settings: &Settings,
    ids: &[TaskId],
    opts: &Options,
    verified: Option<&Verified>,
) -> Result<Outcome> {
    merge_with(repo, settings, ids, opts, Checking::Combined(verified))
}

/// How the gate runs the checks.
#[derive(Clone, Copy)]
enum Checking<'a> {
    /// Each task's checks on the landing's tree once it landed (`merge`).
    EachTask,
    /// Once, on the tree the whole landing lands, unless `verified` ran them on that very tree
    /// (`merge_batch`).
    Combined(Option<&'a Verified>),
}

/// A landing's tree whose checks [`probe`] ran and passed.
#[derive(Clone, Debug)]
pub struct Verified {
    /// The tree the target has once the tasks landed.
    pub tree: ObjectId,
    /// The checks that ran on it.
    pub checks: Run,
}

/// What [`probe`] found; nothing landed.
#[derive(Clone, Debug)]
pub enum Probe {
    /// The checks passed on the landing's tree.
    Passed(Verified),
    /// The checks failed (the gate checkout they ran in is kept for inspection).
    Failed {
        checks: Run,
        checkout: Option<String>,
    },
    /// The landing was refused before its checks ran.
    Refused(Refusal),
    /// A task named had landed meanwhile.
    Stale,
}

/// The landing queue's look ahead (`queue run --jobs J`): the landing of `ids` on the target's
/// tip now, computed and judged as [`merge_batch`] does and its checks run once on its tree, in
/// a gate checkout of its own, but nothing lands and the target's lock is not taken, so that
/// several run at once. A landing whose tree is then still the one verified lands without
/// running the checks again ([`merge_batch`] with `verified`).
pub fn probe(repo: &Repo, settings: &Settings, ids: &[TaskId], opts: &Options) -> Result<Probe> {
    let repo = &repo.with_object_cache(MERGE_OBJECT_CACHE);
    let ready = match select::select(repo, settings, ids, opts)? {
        select::Selection::Answer(Outcome::Refused(refusal)) => return Ok(Probe::Refused(refusal)),
        select::Selection::Answer(_) => return Ok(Probe::Stale),
        select::Selection::Ready(ready) => ready,
    };
    if !ready.already.is_empty() {
        return Ok(Probe::Stale);
    }
    let select::Ready {
        target,
        old_tip,
        mut pending,
        ..
    } = ready;
    for p in &pending {
        crate::confine::settle(repo, &p.record.state.task_id())?;
    }
    if let Err(refusal) = landing::land_and_judge(repo, &mut pending, old_tip, &target, opts)? {
        return Ok(Probe::Refused(refusal));
    }
    match check::check_combined(repo, &mut pending, old_tip, opts, &mut None, None)? {
        Some(Refusal::ChecksFailed {
            checks, checkout, ..
        }) => Ok(Probe::Failed { checks, checkout }),
        Some(refusal) => Ok(Probe::Refused(refusal)),
        None => {
            let (_, tree) = check::combined_tree(repo, &pending, old_tip)?;
            let checks = pending
                .iter()
                .rev()
                .find_map(|p| p.checks.clone().filter(|c| !c.commands.is_empty()))
                .unwrap_or_else(|| Run::not_run(opts.no_checks));
            Ok(Probe::Passed(Verified { tree, checks }))
        }
    }
}

fn merge_with(
    repo: &Repo,
    settings: &Settings,
    ids: &[TaskId],
    opts: &Options,
    checking: Checking<'_>,
) -> Result<Outcome> {
    // The gate reads the task's and the target's trees several times (judge, plan, checkout).
    let repo = &repo.with_object_cache(MERGE_OBJECT_CACHE);
    if let Some(outcome) = accept_patch_task(repo, ids, opts)? {
        return Ok(outcome);
    }
    let ready = match select::select(repo, settings, ids, opts)? {
        select::Selection::Answer(outcome) => return Ok(outcome),
        select::Selection::Ready(ready) => ready,
    };
    let select::Ready {
        target,
        old_tip: _,
        mut pending,
        already,
    } = ready;
    let checked_out = checked_out_at(repo, &target)?;
    // A confined session's objects move to the shared store before anything names them there.
    for p in &pending {
        crate::confine::settle(repo, &p.record.state.task_id())?;
    }
    let keep = opts.keep || settings.keep_on_merge;
    let gated = match gate(
        repo,
        &mut pending,
        &target,
        &checked_out,
        opts,
        keep,
        checking,
    )? {
        Ok(gated) => gated,
        Err(refusal) => return Ok(Outcome::Refused(refusal)),
    };
    land::land(
        repo,
        land::Landing {
            target,
            pending,
            checked_out,
            gated,
            keep,
            strategy: opts.strategy,
            already,
        },
    )
}

/// A patch-mode task is accepted in place (SPEC §9): judged, checked, `merged`, snapshot dropped.
/// Returns `None` when no patch-mode task is named, so the regular merge runs.
fn accept_patch_task(repo: &Repo, ids: &[TaskId], opts: &Options) -> Result<Option<Outcome>> {
    let mut patch = None;
    for id in ids {
        let rec = crate::record::load_existing(repo, id)?;
        if rec.state.mode == crate::task::Mode::Patch {
            patch = Some(rec);
        }
    }
    let Some(rec) = patch else { return Ok(None) };
    let id = rec.state.task_id();
    if ids.len() > 1
        || opts.into.is_some()
        || opts.strategy != Strategy::Squash
        || opts.message.is_some()
    {
        return Err(Error::input(format!(
            "task '{id}' works in patch mode: its work is accepted where it is, on its own"
        ))
        .hint(format!("accept it alone: git task merge {id}")));
    }
    let accepted = crate::patch::accept(repo, &rec, !opts.no_checks)?;
    Ok(Some(Outcome::Accepted {
        task: id.to_string(),
        accepted: Box::new(accepted),
    }))
}

/// The landing, judged and checked, ready to move the refs: the target's lock is held.
struct Gated {
    lock: BranchLock,
    /// The target's tip the landing was computed on (still its tip under the lock).
    old_tip: ObjectId,
    /// The target's tip once the tasks land.
    new_tip: ObjectId,
    /// What that move changes where the target is checked out.
    changes: twoway::Changes,
}

/// Steps 2–5: takes the target's lock (waiting for its turn behind other git-task merges into
/// it), then computes the landing on the target's tip, judges it and checks it; if the target
/// moved meanwhile (a writer outside git-task) or a claim changed, starts again on its new tip.
fn gate(
    repo: &Repo,
    pending: &mut [Pending],
    target: &str,
    checked_out: &[PathBuf],
    opts: &Options,
    keep: bool,
    checking: Checking<'_>,
) -> Result<std::result::Result<Gated, Refusal>> {
    // Merges into this branch by other git-task processes wait from here to the worktree update.
    let lock = BranchLock::acquire(repo, target, &mut |w| {
        if let Some(tell) = opts.on_wait {
            tell(w)
        }
    })?;
    let tip_now = || {
        repo.find_ref(target)?.ok_or_else(|| {
            Error::repo_msg(format!(
                "branch '{}' was deleted while merging",
                select::short(target)
            ))
        })
    };
    // The merges that held the lock before this one moved the target.
    let mut old_tip = tip_now()?;
    // The gate checkout is taken now and looked at while the landing is computed.
    let mut ahead = if check::will_run(pending, opts) {
        Some(crate::gate::take_ahead(repo)?)
    } else {
        None
    };
    let mut rounds = 0;
    loop {
        // Claims are judged with the landing; one made while the checks ran must bind it too.
        let claims = crate::claims::live(repo)?;
        if let Err(refusal) = landing::land_and_judge(repo, pending, old_tip, target, opts)? {
            return Ok(Err(refusal));
        }
        let (new_tip, changes) =
            match target::plan_target_update(repo, pending, old_tip, checked_out, target)? {
                Ok(plan) => plan,
                Err(refusal) => return Ok(Err(refusal)),
            };
        let refusal = match checking {
            Checking::Combined(verified) => {
                check::check_combined(repo, pending, old_tip, opts, &mut ahead, verified)?
            }
            Checking::EachTask => check::check_all(repo, pending, old_tip, opts, &mut ahead)?,
        };
        if let Some(refusal) = refusal {
            return Ok(Err(refusal));
        }
        let current = tip_now()?;
        if current == old_tip && crate::claims::live(repo)? == claims {
            // Work made in a task worktree while its checks ran would be deleted with it
            // unlanded; a worktree that stays loses nothing.
            let ran = |p: &&Pending| {
                p.checks.as_ref().is_some_and(|c| !c.commands.is_empty())
                    && !keep
                    && p.kept_because().is_none()
            };
            for p in pending.iter().filter(ran) {
                if let Some(w) = p.worktree.as_ref().filter(|w| w.exists()) {
                    if let Some(refusal) = select::task_worktree_refusal(repo, &p.record, w, p.tip)?
                    {
                        return Ok(Err(refusal));
                    }
                }
            }
            return Ok(Ok(Gated {
                lock,
                old_tip,
                new_tip,
                changes,
            }));
        }
        rounds += 1;
        if rounds >= 10 {
            return Err(Error::repo_msg(format!(
                "'{}' kept moving while merging (moved by something other than git-task); nothing was merged",
                select::short(target)
            ))
            .hint("run the merge again"));
        }
        old_tip = current;
    }
}

#[cfg(test)]
mod tests {
    use super::message::{squash_message, with_trailer};
    use super::*;
    use crate::git::refs::{Expect, Update};

    #[test]
    fn trailer_is_appended_once_in_its_own_paragraph() {
        let id = TaskId::parse("t1").unwrap();
        assert_eq!(with_trailer("Fix it", &id), "Fix it\n\nTask-Id: t1\n");
        assert_eq!(
            with_trailer("Fix it\n\nSigned-off-by: A <a@x>\n", &id),
            "Fix it\n\nSigned-off-by: A <a@x>\nTask-Id: t1\n"
        );
        assert_eq!(
            squash_message(&id, &[], Some("  Custom  ")),
            "Custom\n\nTask-Id: t1\n"
        );
        assert_eq!(squash_message(&id, &[], None), "task t1\n\nTask-Id: t1\n");
    }

    #[test]
    fn reverse_undoes_each_change() {
        let a: ObjectId = "0000000000000000000000000000000000000000".parse().unwrap();
        let b: ObjectId = "4b825dc642cb6eb9a060e54bf8d69288fbee4904".parse().unwrap();
        let ups = vec![
            Update::update("refs/heads/main", a, b, "m"),
            Update::create("refs/notes/tasks", b, "n"),
            Update::delete("refs/heads/task/x", a, "d"),
        ];
        let back = land::reverse(&ups);
        assert_eq!((back[0].new, back[0].expect), (Some(a), Expect::Is(b)));
        assert_eq!((back[1].new, back[1].expect), (None, Expect::Is(b)));
        assert_eq!((back[2].new, back[2].expect), (Some(a), Expect::Absent));
    }

    #[test]
    fn full_branch_names() {
        assert_eq!(select::full_branch("main"), "refs/heads/main");
        assert_eq!(select::full_branch("refs/heads/x"), "refs/heads/x");
    }
}
