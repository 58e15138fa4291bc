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
//!   index and files follow: in process (`git::twoway`, which checks the same
//!   rules again under the index lock), or, when that declines (a local change
//!   appeared meanwhile, an index extension or attributes gix cannot honour),
//!   with `git read-tree -m -u old new` (see `git::cli`). If git then refuses,
//!   the refs are moved back (compare-and-swap again) and the merge is
//!   reported as refused. A process killed between the ref move and that
//!   update leaves the worktree at the old tip (`git status` shows the merge
//!   reversed; nothing is lost): `git read-tree -m -u <old> <new>` there, both
//!   ids in the reflog of the target branch, finishes it.
//! * **Concurrent merges queue up.** Checks run unlocked; then a lock file per
//!   target branch (`<common dir>/git-task/locks/`) is held from the final
//!   check of the checked-out target to its update. If the target moved while
//!   the checks ran, the tasks are merged again onto its new tip (their checks
//!   stay valid: the tasks did not change). A writer outside git-task that
//!   moves the target in the last moment makes the transaction fail: nothing
//!   lands (exit 128).
//! * **Repeating is a no-op.** A task already merged is reported with its
//!   earlier merge, and a clean-up an interrupted merge left undone (worktree
//!   still present) is finished.
//!
//! It relies on: `changes` for the verdict, `checks` for running commands,
//! `git::merge` for in-memory merges, `git::refs` for transactions.

mod lock;
mod message;

use lock::BranchLock;
pub use message::squash_message;
use message::{checks_details, merge_message, note_text, summarize};

use crate::changes;
use crate::checks::{self, Outcome as CheckOutcome};
use crate::config::Settings;
use crate::contract::file::CONTRACT_FILE;
use crate::contract::Verdict;
use crate::error::{Error, Result};
use crate::git::merge::{self as gmerge, CommitInfo};
use crate::git::refs::{self, Expect, RefError, Update};
use crate::git::{cli, note, objects, twoway, worktree, ObjectId, Repo};
use crate::record::{self, event, Record};
use crate::task::{layout, start::task_env, Mode, Status, TaskId};
use std::path::{Path, PathBuf};

/// How the task's work is put onto the target branch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
}

/// The checks of one task: what ran and how it went.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ChecksRun {
    /// Whether `--no-checks` skipped them.
    pub skipped: bool,
    /// Whether every command that ran succeeded (true when skipped or none).
    pub passed: bool,
    /// One entry per command run, in order; stops at the first failure.
    pub commands: Vec<CheckOutcome>,
}

/// One task's part of a merge.
#[derive(Clone, Debug, serde::Serialize)]
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
    pub checks: Option<ChecksRun>,
    /// Whether its worktree and branch were removed.
    pub removed: bool,
    /// The worktree (kept, or where it was).
    pub worktree: String,
}

/// A merge that landed (or had already landed).
#[derive(Clone, Debug, serde::Serialize)]
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
        checks: ChecksRun,
        /// The temporary checkout of the landing tree the checks ran in, kept for inspection.
        checkout: Option<String>,
    },
    /// The in-memory merge onto the target conflicts.
    Conflict {
        task: String,
        into: String,
        paths: Vec<String>,
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
    checks: Option<ChecksRun>,
}

/// Returns `refs/heads/<name>` for a short or full branch name.
pub fn full_branch(name: &str) -> String {
    if name.starts_with("refs/") {
        name.to_owned()
    } else {
        format!("refs/heads/{name}")
    }
}

fn short(name: &str) -> &str {
    name.strip_prefix("refs/heads/").unwrap_or(name)
}

/// Merges the tasks `ids`, in order, onto their base branch (or `opts.into`); all land or none does.
pub fn merge(repo: &Repo, settings: &Settings, ids: &[TaskId], opts: &Options) -> Result<Outcome> {
    let mut seen = std::collections::HashSet::new();
    for id in ids {
        if !seen.insert(id.as_str()) {
            return Err(Error::input(format!("task '{id}' is named twice")));
        }
    }
    let keep = opts.keep || settings.keep_on_merge;
    let mut already = Vec::new();
    let mut records = Vec::new();
    for id in ids {
        let rec = record::load_existing(repo, id)?;
        match rec.state.status {
            Status::Merged => already.push(earlier_merge(repo, &rec)?),
            Status::Active | Status::Dropped => {
                if rec.state.mode == Mode::Patch {
                    return Err(Error::input(format!("task '{id}' works in patch mode; accepting patch-mode work is not available in this build"))
                        .hint(format!("see 'git task status {id}'")));
                }
                records.push(rec)
            }
            Status::Provisioning => {
                return Err(Error::input(format!("task '{id}' is still being started"))
                    .hint("wait for 'git task start' to finish, or run 'git task sweep' if it was interrupted"))
            }
            Status::Removed => {
                return Err(Error::input(format!("task '{id}' was removed; there is nothing left to merge"))
                    .hint(format!("see its history with 'git task log {id}'")))
            }
        }
    }
    if records.is_empty() {
        let into = opts
            .into
            .as_deref()
            .map(full_branch)
            .or_else(|| already.first().map(|t: &TaskMerged| t.into.clone()))
            .unwrap_or_default();
        let warnings = already
            .iter()
            .filter_map(|t| finish_cleanup(repo, t).err())
            .map(|e| e.to_string())
            .collect();
        return Ok(Outcome::Landed(Landed {
            into,
            old_tip: None,
            new_tip: None,
            tasks: already,
            updated_worktrees: Vec::new(),
            warnings,
            leave_cwd: None,
        }));
    }

    // The target: --into (a branch, nothing else), else the base branch all pending tasks share.
    let target =
        match &opts.into {
            Some(b) => resolve_into(repo, settings, b)?,
            None => {
                let mut target: Option<String> = None;
                for rec in &records {
                    let Some(base) = rec.state.base_branch.clone() else {
                        return Err(Error::input(format!(
                            "task '{}' was started from a commit, not a branch",
                            rec.state.id
                        ))
                        .hint(format!(
                            "name the branch to merge into: git task merge {} --into <branch>",
                            rec.state.id
                        )));
                    };
                    match &target {
                        Some(t) if *t != base => return Err(Error::input(format!(
                            "the tasks have different base branches ('{}' and '{}')",
                            short(t),
                            short(&base)
                        ))
                        .hint(
                            "merge them separately, or name one branch for all: --into <branch>",
                        )),
                        _ => target = Some(base),
                    }
                }
                target.expect("at least one pending task")
            }
        };
    let mut old_tip = repo.find_ref(&target)?.ok_or_else(|| {
        Error::input(format!("branch '{}' does not exist", short(&target))).hint(format!(
            "create it first: git branch {} <start>",
            short(&target)
        ))
    })?;

    // Trust nothing the task can move with git: the record must be the one frozen at start.
    for rec in &records {
        if let Some(t) = record::frozen::verify(repo, rec)? {
            return Ok(Outcome::Refused(Refusal::RecordTampered {
                task: rec.state.id.clone(),
                why: t.why,
                allowed: t.frozen_allowed,
            }));
        }
    }

    // 1. The task is its branch tip: its worktree must be on the branch, with nothing uncommitted.
    let linked = worktree::list(repo)?;
    let mut pending = Vec::new();
    for rec in records {
        let id = rec.state.task_id();
        let wt_path = PathBuf::from(&rec.state.worktree);
        let wt = linked
            .iter()
            .find(|w| w.path == wt_path || w.branch.as_deref() == Some(rec.state.branch.as_str()))
            .cloned();
        let tip = repo.find_ref(&rec.state.branch)?.ok_or_else(|| {
            Error::input(format!(
                "task '{id}' has no branch '{}'",
                rec.state.branch_short()
            ))
            .hint("run 'git task sweep' to repair the task")
        })?;
        // A path git would never write, anywhere in the task's new history, is refused first:
        // git cannot even show it in the worktree, which would otherwise look merely dirty.
        if let Some((commit, path)) = unsafe_in_history(repo, old_tip, tip)? {
            return Ok(Outcome::Refused(Refusal::UnsafeHistory {
                task: id.to_string(),
                commit: commit.to_string(),
                path,
            }));
        }
        if let Some(w) = wt.as_ref().filter(|w| w.exists()) {
            if let Some(refusal) = task_worktree_refusal(repo, &rec, w, tip)? {
                return Ok(Outcome::Refused(refusal));
            }
        }
        pending.push(Pending {
            record: rec,
            tip,
            worktree: wt,
            commits: Vec::new(),
            landed_tree: None,
            checks: None,
        });
    }

    // 2–5. Compute the landing on the target's tip, judge it, check it; if the target moved
    // meanwhile, start again on its new tip. The lock is held from the last look to the update.
    let checked_out = checked_out_at(repo, &target, &linked)?;
    let mut rounds = 0;
    let (lock, new_tip, target_changes) = loop {
        if let Err(refusal) = land_and_judge(repo, &mut pending, old_tip, &target, opts)? {
            return Ok(Outcome::Refused(refusal));
        }
        let (new_tip, changes) =
            match plan_target_update(repo, &pending, old_tip, &checked_out, &target)? {
                Ok(plan) => plan,
                Err(refusal) => return Ok(Outcome::Refused(refusal)),
            };
        if let Some(refusal) = check_all(repo, &mut pending, old_tip, opts)? {
            return Ok(Outcome::Refused(refusal));
        }
        // Merges into this branch by other git-task processes wait from here to the worktree update.
        let lock = BranchLock::acquire(repo, &target)?;
        let current = repo.find_ref(&target)?.ok_or_else(|| {
            Error::repo_msg(format!(
                "branch '{}' was deleted while merging",
                short(&target)
            ))
        })?;
        if current == old_tip {
            // Work made in a task worktree while its checks ran would be deleted with it unlanded.
            let ran = |p: &&Pending| p.checks.as_ref().is_some_and(|c| !c.commands.is_empty());
            for p in pending.iter().filter(ran) {
                if let Some(w) = p.worktree.as_ref().filter(|w| w.exists()) {
                    if let Some(refusal) = task_worktree_refusal(repo, &p.record, w, p.tip)? {
                        return Ok(Outcome::Refused(refusal));
                    }
                }
            }
            break (lock, new_tip, changes);
        }
        drop(lock);
        rounds += 1;
        if rounds >= 10 {
            return Err(Error::repo_msg(format!(
                "'{}' kept moving while merging; nothing was merged",
                short(&target)
            ))
            .hint("run the merge again"));
        }
        old_tip = current;
    };

    // 5. One transaction: target, notes, records, task branches.
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
                    note_text(repo, &p.record, opts.strategy, &target, p.checks.as_ref()),
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
            repo, path, &target, old_tip, new_tip,
        )?);
    }
    let mut results = Vec::new();
    for p in &pending {
        let id = p.record.state.task_id();
        let mut state = p.record.state.clone();
        state.status = Status::Merged;
        let commit = p.commits.last().map(|c| c.to_string());
        let details = serde_json::json!({
            "commit": commit,
            "commits": p.commits.iter().map(|c| c.to_string()).collect::<Vec<_>>(),
            "mode": opts.strategy,
            "into": target,
            "keep": keep,
            "task_tip": p.tip.to_string(),
            "checks": p.checks.as_ref().map(|c| serde_json::json!({ "skipped": c.skipped, "passed": c.passed, "commands": summarize(&c.commands) })),
        });
        // Two events, one ref update: `checks` then `merged`.
        let run = p
            .checks
            .as_ref()
            .expect("checks ran (or were skipped) for every pending task");
        let (_, with_checks) = record::prepare_append(
            repo,
            &p.record,
            event::CHECKS,
            &p.record.state,
            checks_details(run),
        )?;
        let (merged, _) =
            record::prepare_append(repo, &with_checks, event::MERGED, &state, details)?;
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
            strategy: opts.strategy,
            checks: p.checks.clone(),
            removed: false,
            worktree: p.record.state.worktree.clone(),
        });
    }
    // A journal entry per checked-out target, written before the refs move: a merge killed
    // from here on leaves that worktree for `task::recover` to finish or undo.
    let mut journals = Vec::new();
    if new_tip != old_tip {
        for path in &checked_out {
            journals.push(crate::task::recover::Journal::begin(
                repo,
                crate::task::recover::Step::Checkout {
                    worktree: path.clone(),
                    branch: target.clone(),
                    old: old_tip.to_string(),
                    new: new_tip.to_string(),
                },
            )?);
        }
    }
    match refs::apply(repo, updates.clone()) {
        Ok(()) => {}
        Err(RefError::Conflict(msg)) => {
            return Err(
                Error::repo_msg(format!("{msg}; nothing was merged")).hint(format!(
                    "'{}' or a task changed while merging; run the merge again",
                    short(&target)
                )),
            )
        }
        Err(RefError::Other(e)) => return Err(e),
    }

    // 6. Bring checked-out worktrees of the target along; if git now refuses, move the refs back.
    let mut updated = Vec::new();
    if new_tip != old_tip {
        for (i, path) in checked_out.iter().enumerate() {
            let Some(run) = update_checked_out(repo, path, &target_changes, old_tip, new_tip)?
            else {
                updated.push(path.display().to_string());
                continue;
            };
            if !run.success {
                for done in checked_out[..i].iter().rev() {
                    let _ = cli::two_tree_update(done, new_tip, old_tip, false);
                }
                refs::apply(repo, reverse(&updates)).map_err(|e| {
                    Error::from(e).hint(format!("'{}' was moved to {new_tip} but '{}' could not be updated; run 'git -C {} read-tree -m -u {old_tip} {new_tip}' after saving your changes", short(&target), path.display(), path.display()))
                })?;
                let paths = cli::listed_paths(&run.stderr);
                return Ok(Outcome::Refused(Refusal::TargetDirty {
                    into: target,
                    worktree: path.display().to_string(),
                    paths,
                    detail: run.stderr,
                }));
            }
            updated.push(path.display().to_string());
        }
    }

    drop(journals);
    drop(lock);

    // 7. Clean up: the task worktrees go, unless kept.
    let mut warnings = Vec::new();
    let mut leave = None;
    if !keep {
        let cwd = std::env::current_dir().ok();
        for (p, r) in pending.iter().zip(results.iter_mut()) {
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
                        let scratch =
                            crate::task::remove::scratch_dir(repo, &p.record.state.task_id());
                        let _ = std::fs::remove_dir_all(scratch);
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
    }
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

/// Resolves `--into`: a branch (`main` or `refs/heads/main`) that exists and is not a live
/// task's own branch (whose contract would not judge what lands there); anything else is bad input.
fn resolve_into(repo: &Repo, settings: &Settings, name: &str) -> Result<String> {
    let full = full_branch(name);
    let valid = full.starts_with("refs/heads/")
        && gix::validate::reference::name(gix::bstr::BStr::new(full.as_bytes())).is_ok();
    if !valid || repo.find_ref(&full)?.is_none() {
        return Err(Error::input(format!("--into '{name}' is not a branch"))
            .hint("--into takes the name of an existing branch; 'git branch' lists them"));
    }
    let prefix = format!("refs/heads/{}", settings.branch_prefix);
    if let Some(owner) = layout::id_from_branch(&prefix, &full) {
        if record::load(repo, &owner)?
            .is_some_and(|r| r.state.status.is_live() && r.state.branch == full)
        {
            return Err(Error::input(format!(
                "--into '{name}' is the branch of live task '{owner}'"
            ))
            .hint("merge into a base or umbrella branch instead: --into <branch>"));
        }
    }
    Ok(full)
}

/// Refuses a task whose worktree is not on its branch or holds uncommitted work: only the
/// branch tip lands (SPEC §7.1), so anything else would be lost or judged in place of it.
fn task_worktree_refusal(
    repo: &Repo,
    rec: &Record,
    w: &worktree::Linked,
    tip: ObjectId,
) -> Result<Option<Refusal>> {
    let wt_repo = worktree::open_at(&w.path)?;
    let head_ref = wt_repo.head_branch()?;
    if head_ref.as_deref() != Some(rec.state.branch.as_str()) {
        let head = match (head_ref, wt_repo.head_commit()?) {
            (Some(name), _) => short(&name).to_owned(),
            (None, Some(commit)) => format!("detached at {}", &commit.to_string()[..12]),
            (None, None) => "nothing".to_owned(),
        };
        return Ok(Some(Refusal::NotOnBranch {
            task: rec.state.id.clone(),
            worktree: w.path.display().to_string(),
            branch: rec.state.branch_short().to_owned(),
            head,
        }));
    }
    // Hot path: a clean worktree on the tip.
    if wt_repo.head_commit()? == Some(tip)
        && crate::task::summary::worktree_is_clean(repo, &w.path, tip, &mut Default::default())?
    {
        return Ok(None);
    }
    let state = crate::snapshot::read(&wt_repo)?;
    Ok(state.is_dirty().then(|| Refusal::UncommittedWork {
        task: rec.state.id.clone(),
        worktree: w.path.display().to_string(),
        paths: state.changed.clone(),
    }))
}

/// Computes the landing of every pending task in memory, chained in order onto `onto`, and
/// judges it (SPEC §7.2–7.3): the task's changes are exactly what its landing changes on the
/// target; with `--rebase` each replayed commit is judged on its own too, and with `--merge`
/// every commit that would become reachable must hold only paths git would write.
fn land_and_judge(
    repo: &Repo,
    pending: &mut [Pending],
    onto: ObjectId,
    target: &str,
    opts: &Options,
) -> Result<std::result::Result<(), Refusal>> {
    let mut cur = onto;
    let mut cur_tree = objects::commit_tree(repo, onto)?;
    for p in pending.iter_mut() {
        let id = p.record.state.task_id();
        let landing = match opts.strategy {
            Strategy::Squash | Strategy::Merge => land_whole(repo, &id, cur, p.tip, target, opts)?,
            Strategy::Rebase => replay(repo, cur, p.tip, target)?,
        };
        let commits = match landing {
            Ok(commits) => commits,
            Err(paths) => {
                return Ok(Err(Refusal::Conflict {
                    task: id.to_string(),
                    into: target.to_owned(),
                    paths,
                }))
            }
        };
        let branch =
            changes::branch_file_in_tree(repo, &p.record, objects::commit_tree(repo, p.tip)?)?;
        // The policy that counts: the target's, at the tip the landing is computed on, and the frozen one.
        let contract = changes::effective_at(repo, &p.record, &branch, Some(onto))?;
        let source = changes::repair_source(repo, onto, Some(p.tip))?.to_string();
        let new_tree = match commits.last() {
            Some(c) => objects::commit_tree(repo, *c)?,
            None => cur_tree,
        };
        let mut steps = vec![(cur_tree, new_tree)];
        if opts.strategy == Strategy::Rebase {
            let mut before = cur_tree;
            for c in &commits {
                let after = objects::commit_tree(repo, *c)?;
                steps.push((before, after));
                before = after;
            }
        }
        for (before, after) in steps {
            let root = changes::worktree_root(&p.record);
            let verdict = changes::judge_change(repo, &contract, before, after, &source, root)?;
            if !verdict.is_clean() {
                return Ok(Err(Refusal::Violation(verdict)));
            }
        }
        if let Some(last) = commits.last() {
            cur = *last;
        }
        cur_tree = new_tree;
        p.commits = commits;
        p.landed_tree = Some(new_tree);
    }
    Ok(Ok(()))
}

/// Returns the first path git would refuse to write that a commit reachable from `tip` but not
/// from `hidden` introduces (each commit compared with its first parent, or the empty tree).
fn unsafe_in_history(
    repo: &Repo,
    hidden: ObjectId,
    tip: ObjectId,
) -> Result<Option<(ObjectId, String)>> {
    for (commit, parents) in objects::commits_between(repo, hidden, tip)? {
        let before = match parents.first() {
            Some(p) => objects::commit_tree(repo, *p)?,
            None => objects::empty_tree(repo),
        };
        let after = objects::commit_tree(repo, commit)?;
        for c in crate::git::diff::tree_to_tree(repo, before, after)? {
            if c.unsafe_path || !crate::git::pathsafe::is_safe_path(c.path.as_bytes()) {
                return Ok(Some((commit, c.path)));
            }
        }
    }
    Ok(None)
}

/// Runs every pending task's frozen checks on its landing tree; a failure is recorded and refuses.
fn check_all(
    repo: &Repo,
    pending: &mut [Pending],
    onto: ObjectId,
    opts: &Options,
) -> Result<Option<Refusal>> {
    for i in 0..pending.len() {
        let p = &pending[i];
        let tree = match p.landed_tree {
            Some(t) => t,
            None => objects::commit_tree(repo, onto)?,
        };
        let (run, checkout) = run_checks_on_landing(repo, &p.record, tree, onto, opts)?;
        if !run.passed {
            // A failure is recorded now, with the passes of the tasks before it; a pass is
            // otherwise recorded with the merge, in its transaction.
            for before in &pending[..i] {
                let run = before
                    .checks
                    .as_ref()
                    .expect("checks ran for the tasks before");
                record::append(
                    repo,
                    &before.record,
                    event::CHECKS,
                    &before.record.state,
                    checks_details(run),
                    Vec::new(),
                )?;
            }
            record::append(
                repo,
                &p.record,
                event::CHECKS,
                &p.record.state,
                checks_details(&run),
                Vec::new(),
            )?;
            return Ok(Some(Refusal::ChecksFailed {
                task: p.record.state.id.clone(),
                checks: run,
                checkout: checkout.map(|c| c.display().to_string()),
            }));
        }
        pending[i].checks = Some(run);
    }
    Ok(None)
}

/// Returns what moving a checked-out target from `old` to `new` changes (nothing to find when it is not checked out).
/// The target's new tip after the merged `pending` tasks, and the paths moving
/// it from `old_tip` changes where it is checked out (found once for the look
/// ahead and the update); `Err` when that update would overwrite a local change.
fn plan_target_update(
    repo: &Repo,
    pending: &[Pending],
    old_tip: ObjectId,
    checked_out: &[PathBuf],
    target: &str,
) -> Result<std::result::Result<(ObjectId, twoway::Changes), Refusal>> {
    let new_tip = pending
        .iter()
        .rev()
        .find_map(|p| p.commits.last().copied())
        .unwrap_or(old_tip);
    let changes = target_changes_of(repo, checked_out, old_tip, new_tip)?;
    match check_targets(repo, checked_out, &changes, old_tip, new_tip, target)? {
        Some(refusal) => Ok(Err(refusal)),
        None => Ok(Ok((new_tip, changes))),
    }
}

fn target_changes_of(
    repo: &Repo,
    checked_out: &[PathBuf],
    old: ObjectId,
    new: ObjectId,
) -> Result<twoway::Changes> {
    if checked_out.is_empty() || new == old {
        return Ok(twoway::Changes::default());
    }
    twoway::changes(repo, old, new)
}

/// Checks every worktree where the target is checked out: `Some(refusal)` if moving it from `old` to `new` (which changes `changes`) would overwrite a local change.
fn check_targets(
    repo: &Repo,
    checked_out: &[PathBuf],
    changes: &twoway::Changes,
    old: ObjectId,
    new: ObjectId,
    target: &str,
) -> Result<Option<Refusal>> {
    if new == old {
        return Ok(None);
    }
    for path in checked_out {
        // Nothing on disk where the merge adds a file: git would overwrite an ignored file
        // (a build output, a `.env`), which is the user's work all the same (SPEC §7.6).
        let in_the_way: Vec<String> = changes
            .added()
            .filter(|p| path.join(p).symlink_metadata().is_ok())
            .map(str::to_owned)
            .collect();
        if !in_the_way.is_empty() {
            return Ok(Some(Refusal::TargetDirty {
                into: target.to_owned(),
                worktree: path.display().to_string(),
                paths: in_the_way,
                detail: String::new(),
            }));
        }
        // Fast path: the paths the merge changes are untouched there. Otherwise git decides.
        if twoway::is_certainly_safe(repo, path, changes)? {
            continue;
        }
        if let Some(refusal) = refuse_overwrite(path, old, new, target)? {
            return Ok(Some(refusal));
        }
    }
    Ok(None)
}

/// Squash or merge commit of `task_tip` onto `onto`: `Ok(commits)` (empty when the task changes nothing), or `Err(conflicting paths)`.
fn land_whole(
    repo: &Repo,
    id: &TaskId,
    onto: ObjectId,
    task_tip: ObjectId,
    target: &str,
    opts: &Options,
) -> Result<std::result::Result<Vec<ObjectId>, Vec<String>>> {
    let ancestor = gmerge::ancestor_tree(repo, onto, task_tip)?;
    let ours = objects::commit_tree(repo, onto)?;
    // The task side's contract file is set to the ancestor's: the merge then keeps whatever the target holds.
    let keep_contract = gmerge::root_entry(repo, ancestor, CONTRACT_FILE)?;
    let theirs = gmerge::with_root_entry(
        repo,
        objects::commit_tree(repo, task_tip)?,
        CONTRACT_FILE,
        keep_contract,
    )?;
    let merged = gmerge::merge_trees(
        repo,
        ancestor,
        ours,
        theirs,
        ["base", short(target), &format!("task {id}")],
    )?;
    let Some(tree) = merged.tree else {
        return Ok(Err(merged.conflicts));
    };
    let tree = gmerge::with_root_entry(
        repo,
        tree,
        CONTRACT_FILE,
        gmerge::root_entry(repo, ours, CONTRACT_FILE)?,
    )?;
    let own = own_commits(repo, onto, task_tip)?;
    let commit = match opts.strategy {
        Strategy::Squash => {
            if tree == ours {
                return Ok(Ok(Vec::new()));
            }
            let message = squash_message(id, &own, opts.message.as_deref());
            gmerge::write_commit(repo, tree, &[onto], &message, None)?
        }
        _ => {
            let message = merge_message(id, target, &own, opts.message.as_deref());
            gmerge::write_commit(repo, tree, &[onto, task_tip], &message, None)?
        }
    };
    Ok(Ok(vec![commit]))
}

/// Replays the task's own commits onto `onto`, skipping merges and commits that change nothing but the contract file.
fn replay(
    repo: &Repo,
    onto: ObjectId,
    task_tip: ObjectId,
    target: &str,
) -> Result<std::result::Result<Vec<ObjectId>, Vec<String>>> {
    let line = gmerge::first_parent_line(repo, onto, task_tip)?;
    let mut cur = onto;
    let mut cur_tree = objects::commit_tree(repo, onto)?;
    let keep_contract = gmerge::root_entry(repo, cur_tree, CONTRACT_FILE)?;
    let mut made = Vec::new();
    for c in line {
        if c.parents.len() != 1 {
            continue;
        }
        let parent_tree = objects::commit_tree(repo, c.parents[0])?;
        let ancestor = gmerge::with_root_entry(repo, parent_tree, CONTRACT_FILE, keep_contract)?;
        let theirs = gmerge::with_root_entry(repo, c.tree, CONTRACT_FILE, keep_contract)?;
        if ancestor == theirs {
            continue;
        }
        let label = format!("{} ({})", c.subject(), &c.id.to_string()[..12]);
        let merged = gmerge::merge_trees(
            repo,
            ancestor,
            cur_tree,
            theirs,
            ["parent", short(target), &label],
        )?;
        let Some(tree) = merged.tree else {
            return Ok(Err(merged.conflicts));
        };
        if tree == cur_tree {
            continue;
        }
        // The commit keeps its author and message; the note on the last one names the task.
        cur = gmerge::write_commit(repo, tree, &[cur], &c.message, Some(&c.author))?;
        cur_tree = tree;
        made.push(cur);
    }
    Ok(Ok(made))
}

/// Returns the task's own commits between `onto` and `tip` (first-parent line, no merges, not the contract-only ones).
fn own_commits(repo: &Repo, onto: ObjectId, tip: ObjectId) -> Result<Vec<CommitInfo>> {
    let mut out = Vec::new();
    for c in gmerge::first_parent_line(repo, onto, tip)? {
        if c.parents.len() != 1 {
            continue;
        }
        let parent = gmerge::with_root_entry(
            repo,
            objects::commit_tree(repo, c.parents[0])?,
            CONTRACT_FILE,
            None,
        )?;
        let this = gmerge::with_root_entry(repo, c.tree, CONTRACT_FILE, None)?;
        if parent != this {
            out.push(c);
        }
    }
    Ok(out)
}

/// Runs the frozen contract's checks (never the branch file's) on `tree`, the target's tree once
/// the task landed, in a clean temporary checkout of it (SPEC §7.5), stopping at the first failure.
///
/// Ignored files the checks need (`node_modules/`…) are copied from the *main* worktree as the
/// target's `.worktreeinclude` names them, never from the task's worktree. The checkout is
/// deleted after a pass and kept (its path returned) after a failure.
fn run_checks_on_landing(
    repo: &Repo,
    rec: &Record,
    tree: ObjectId,
    onto: ObjectId,
    opts: &Options,
) -> Result<(ChecksRun, Option<PathBuf>)> {
    let commands = rec.contract.check_commands();
    if opts.no_checks || commands.is_empty() {
        return Ok((
            ChecksRun {
                skipped: opts.no_checks,
                passed: true,
                commands: Vec::new(),
            },
            None,
        ));
    }
    let dir = tempfile::Builder::new()
        .prefix(&format!("git-task-check-{}-", rec.state.id))
        .tempdir()
        .map_err(|e| Error::repo("could not make a temporary directory for the checks", e))?;
    worktree::checkout_tree(repo, tree, dir.path())?;
    if let Some(include) = objects::read_blob_at(repo, onto, crate::task::copy::WORKTREE_INCLUDE)? {
        let globs = crate::task::copy::parse_include(&String::from_utf8_lossy(&include));
        let main = repo.main_worktree()?;
        if !globs.is_empty() && main.join(".git").exists() {
            let main = worktree::open_at(&main)?;
            crate::task::copy::copy_ignored(&main, dir.path(), Some(&globs), &mut |_, _| {})?;
        }
    }
    let mut env = task_env(&rec.state);
    for (k, v) in env.iter_mut() {
        if *k == "GIT_TASK_WORKTREE" {
            *v = dir.path().display().to_string();
        }
    }
    let timeout = rec.contract.check_timeout();
    let mut out = Vec::new();
    for command in commands {
        let outcome =
            checks::run_captured_echo(command, dir.path(), &env, timeout, opts.stream_checks)?;
        let ok = outcome.ok();
        out.push(outcome);
        if !ok {
            let kept = dir.keep();
            return Ok((
                ChecksRun {
                    skipped: false,
                    passed: false,
                    commands: out,
                },
                Some(kept),
            ));
        }
    }
    Ok((
        ChecksRun {
            skipped: false,
            passed: true,
            commands: out,
        },
        None,
    ))
}

/// Returns the worktrees (main or linked) where `branch` is checked out.
pub fn checked_out_at(
    repo: &Repo,
    branch: &str,
    linked: &[worktree::Linked],
) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let main_head = std::fs::read_to_string(repo.common_dir().join("HEAD")).unwrap_or_default();
    if main_head.strip_prefix("ref: ").map(str::trim) == Some(branch) && !repo.inner.is_bare() {
        let main = repo.main_worktree()?;
        if main.join(".git").exists() {
            out.push(main);
        }
    }
    for w in linked {
        if w.branch.as_deref() == Some(branch) && w.exists() {
            out.push(w.path.clone());
        }
    }
    Ok(out)
}

/// Asks git whether moving `worktree` from `old` to `new` would overwrite a local change; `Some` refusal if so.
pub fn refuse_overwrite(
    worktree: &Path,
    old: ObjectId,
    new: ObjectId,
    target: &str,
) -> Result<Option<Refusal>> {
    let mut run = cli::two_tree_update(worktree, old, new, true)?;
    if !run.success && run.stderr.contains("not uptodate") {
        // read-tree trusts the index's stat data; refresh it (as `git merge` does) and ask again.
        cli::refresh_index(worktree)?;
        run = cli::two_tree_update(worktree, old, new, true)?;
    }
    if run.success {
        return Ok(None);
    }
    Ok(Some(Refusal::TargetDirty {
        into: target.to_owned(),
        worktree: worktree.display().to_string(),
        paths: cli::listed_paths(&run.stderr),
        detail: run.stderr,
    }))
}

/// Moves the worktree at `path` from `old` to `new` (which changes `changes`): in process when that
/// is certain to overwrite nothing (`None`), else with git (`Some(run)`; on refusal nothing was written).
fn update_checked_out(
    repo: &Repo,
    path: &Path,
    changes: &twoway::Changes,
    old: ObjectId,
    new: ObjectId,
) -> Result<Option<cli::GitRun>> {
    match twoway::update(repo, path, changes)? {
        twoway::Update::Done => Ok(None),
        twoway::Update::Declined(_) => cli::update_worktree(path, old, new).map(Some),
    }
}

/// Returns the changes that undo `updates` (each expecting the value it set).
fn reverse(updates: &[Update]) -> Vec<Update> {
    updates
        .iter()
        .map(|u| {
            let back = match u.expect {
                Expect::Is(old) | Expect::AbsentOrIs(old) => Some(old),
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

/// Reads the earlier `merged` event of a merged task.
fn earlier_merge(repo: &Repo, rec: &Record) -> Result<TaskMerged> {
    let events = record::events(repo, rec)?;
    let merged = events.iter().rev().find(|e| e.event == event::MERGED);
    let d = merged
        .map(|e| e.details.clone())
        .unwrap_or(serde_json::Value::Null);
    let commit = d["commit"].as_str().map(str::to_owned);
    let commits = d["commits"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|c| c.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let strategy = serde_json::from_value(d["mode"].clone()).unwrap_or_default();
    let keep = d["keep"].as_bool().unwrap_or(false);
    let checks = serde_json::from_value::<serde_json::Value>(d["checks"].clone())
        .ok()
        .filter(|v| !v.is_null())
        .map(|v| ChecksRun {
            skipped: v["skipped"].as_bool().unwrap_or(false),
            passed: v["passed"].as_bool().unwrap_or(true),
            commands: Vec::new(),
        });
    Ok(TaskMerged {
        task: rec.state.id.clone(),
        already_merged: true,
        commit,
        commits,
        into: d["into"].as_str().unwrap_or_default().to_owned(),
        strategy,
        checks,
        removed: !keep,
        worktree: rec.state.worktree.clone(),
    })
}

/// Finishes the clean-up of an earlier merge that was interrupted before its worktree went.
fn finish_cleanup(repo: &Repo, t: &TaskMerged) -> Result<()> {
    if !t.removed {
        return Ok(());
    }
    let path = PathBuf::from(&t.worktree);
    if let Some(w) = worktree::list(repo)?.into_iter().find(|w| w.path == path) {
        worktree::remove(repo, &w)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::message::with_trailer;
    use super::*;

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
        let a = ObjectId::null(gix::hash::Kind::Sha1);
        let b = ObjectId::empty_tree(gix::hash::Kind::Sha1);
        let ups = vec![
            Update::update("refs/heads/main", a, b, "m"),
            Update::create("refs/notes/tasks", b, "n"),
            Update::delete("refs/heads/task/x", a, "d"),
        ];
        let back = reverse(&ups);
        assert_eq!((back[0].new, back[0].expect), (Some(a), Expect::Is(b)));
        assert_eq!((back[1].new, back[1].expect), (None, Expect::Is(b)));
        assert_eq!((back[2].new, back[2].expect), (Some(a), Expect::Absent));
    }

    #[test]
    fn full_branch_names() {
        assert_eq!(full_branch("main"), "refs/heads/main");
        assert_eq!(full_branch("refs/heads/x"), "refs/heads/x");
    }
}
