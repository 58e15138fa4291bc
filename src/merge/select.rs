//! Which tasks land, and where (SPEC §7.1): loads the tasks named, resolves the target
//! branch, and refuses what cannot be judged as a branch tip: a record that is not the one
//! frozen at start, a worktree off its branch or holding uncommitted work, a path git would
//! never write anywhere in the task's new history.

use super::{Landed, Outcome, Pending, Refusal, TaskMerged};
use crate::checks::Run;
use crate::config::Settings;
use crate::error::{Error, Result};
use crate::git::{objects, worktree, ObjectId, Repo};
use crate::record::event::{Event, Merged};
use crate::record::{self, Record};
use crate::task::{layout, Status, TaskId};
use std::path::PathBuf;

/// What [`select`] found.
pub(super) enum Selection {
    /// The answer is already known: every task had landed before, or one is refused.
    Answer(Outcome),
    /// Tasks to land.
    Ready(Ready),
}

/// Tasks to land on one target branch.
pub(super) struct Ready {
    /// The target branch (full ref name).
    pub target: String,
    /// Its tip when the tasks were selected.
    pub old_tip: ObjectId,
    /// The tasks still to land, in the order given.
    pub pending: Vec<Pending>,
    /// The tasks named that had landed before.
    pub already: Vec<TaskMerged>,
}

/// Loads the tasks `ids` and decides where they land; `--into` wins over their shared base branch.
pub(super) fn select(
    repo: &Repo,
    settings: &Settings,
    ids: &[TaskId],
    opts: &super::Options,
) -> Result<Selection> {
    select_with(repo, settings, ids, opts, &|name| repo.find_ref(name))
}

/// [`select`], with the target branch's tip read by `tip_of` (full branch name → tip): this
/// repository's branch, or for `merge --remote` the tip just fetched from the remote.
pub(super) fn select_with(
    repo: &Repo,
    settings: &Settings,
    ids: &[TaskId],
    opts: &super::Options,
    tip_of: &dyn Fn(&str) -> Result<Option<ObjectId>>,
) -> Result<Selection> {
    let mut seen = std::collections::HashSet::new();
    for id in ids {
        if !seen.insert(id.as_str()) {
            return Err(Error::input(format!("task '{id}' is named twice")));
        }
    }
    let mut already = Vec::new();
    let mut records = Vec::new();
    for id in ids {
        let rec = record::load_existing(repo, id)?;
        match rec.state.status {
            Status::Merged => already.push(earlier_merge(repo, &rec)?),
            // Patch-mode tasks never get here: `merge` accepts them in place first.
            Status::Active | Status::Dropped => records.push(rec),
            Status::Provisioning => {
                return Err(Error::input(format!("task '{id}' is still being started"))
                    .hint("wait for 'git task start' to finish, or run 'git task sweep' if it was interrupted"))
            }
            Status::Removed => {
                return Err(Error::input(format!("task '{id}' was removed; there is nothing left to merge"))
                    .hint(format!("see its history with 'git task log {id}'")))
            }
            Status::Tampered => return Err(Status::tampered_error(id.as_str())),
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
        return Ok(Selection::Answer(Outcome::Landed(Landed {
            into,
            old_tip: None,
            new_tip: None,
            tasks: already,
            updated_worktrees: Vec::new(),
            warnings,
            leave_cwd: None,
        })));
    }

    // The target: --into (a branch, nothing else), else the base branch all pending tasks share.
    let target =
        match &opts.into {
            Some(b) => resolve_into(repo, settings, b, tip_of)?,
            None => {
                let mut target: Option<String> = None;
                for rec in &records {
                    let Some(base) = rec.state.base_branch.as_ref().map(String::from) else {
                        return Err(Error::input(format!(
                            "task '{}' was started from a commit, not a branch",
                            rec.state.id
                        ))
                        .hint(format!(
                            "name the branch to merge into: git task merge {} --into {}",
                            rec.state.id,
                            repo.head_branch()
                                .ok()
                                .flatten()
                                .map(|b| short(&b).to_owned())
                                .unwrap_or_else(|| "BRANCH".into())
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
    let old_tip = tip_of(&target)?.ok_or_else(|| {
        Error::input(format!("branch '{}' does not exist", short(&target))).hint(format!(
            "create it again where the task started: git branch {} {}",
            short(&target),
            records
                .first()
                .map(|r| r.state.base_commit.as_str())
                .unwrap_or("HEAD")
        ))
    })?;

    // Trust nothing the task can move with git: the record must be the one frozen at start.
    for rec in &records {
        if let Some(t) = record::frozen::verify(repo, rec)? {
            return Ok(Selection::Answer(Outcome::Refused(
                Refusal::RecordTampered {
                    task: rec.state.id.to_string(),
                    why: t.why,
                    allowed: t.frozen_allowed,
                },
            )));
        }
    }

    // 1. The task is its branch tip: its worktree must be on the branch, with nothing uncommitted.
    let mut linked = None;
    let mut pending = Vec::new();
    for rec in records {
        let id = rec.state.task_id();
        let wt = task_worktree(repo, &rec, &mut linked)?;
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
            return Ok(Selection::Answer(Outcome::Refused(
                Refusal::UnsafeHistory {
                    task: id.to_string(),
                    commit: commit.to_string(),
                    path,
                },
            )));
        }
        if let Some(w) = wt.as_ref().filter(|w| w.exists()) {
            if let Some(refusal) = task_worktree_refusal(repo, &rec, w, tip)? {
                return Ok(Selection::Answer(Outcome::Refused(refusal)));
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

    Ok(Selection::Ready(Ready {
        target,
        old_tip,
        pending,
        already,
    }))
}

/// The worktree of the task `rec`, as [`crate::task::TaskState::find_worktree`] finds it among
/// every linked worktree, read without listing them when it can be: the entry its recorded
/// directory names, when that entry names the directory back and is on the task's branch
/// ([`worktree::at_path`]). That entry is one `find_worktree` accepts (at the recorded path,
/// on the branch), and the only one in a repository git keeps consistent: one entry per
/// directory, one worktree per branch unless forced. Where another entry matches too (left
/// behind by a worktree deleted without git and added again, forged, or on the branch by
/// force), this one is the entry git itself uses for the directory, so what merge checks,
/// keeps or removes is that worktree's. Otherwise (the directory is gone, moved away from its
/// branch, its links disagree) every worktree is listed once, in `linked`, and the rule is
/// `find_worktree`'s.
fn task_worktree(
    repo: &Repo,
    rec: &Record,
    linked: &mut Option<Vec<worktree::Linked>>,
) -> Result<Option<worktree::Linked>> {
    let state = &rec.state;
    if let Some(w) = worktree::at_path(repo, std::path::Path::new(&state.worktree))
        .filter(|w| w.branch.as_deref() == Some(state.branch.as_str()))
    {
        return Ok(Some(w));
    }
    if linked.is_none() {
        *linked = Some(worktree::list(repo)?);
    }
    Ok(linked
        .as_deref()
        .and_then(|all| state.find_worktree(all))
        .cloned())
}

/// Returns `refs/heads/<name>` for a short or full branch name.
pub fn full_branch(name: &str) -> String {
    if name.starts_with("refs/") {
        name.to_owned()
    } else {
        format!("refs/heads/{name}")
    }
}

pub(super) fn short(name: &str) -> &str {
    crate::git::refs::short_name(name)
}

/// Resolves a branch named as `--into` is (`queue add --into`): its full name, or bad input.
pub fn resolve_branch(repo: &Repo, settings: &Settings, name: &str) -> Result<String> {
    resolve_into(repo, settings, name, &|n| repo.find_ref(n))
}

/// Resolves `--into`: a branch (`main` or `refs/heads/main`) that exists and is not a live
/// task's own branch (whose contract would not judge what lands there); anything else is bad input.
fn resolve_into(
    repo: &Repo,
    settings: &Settings,
    name: &str,
    tip_of: &dyn Fn(&str) -> Result<Option<ObjectId>>,
) -> Result<String> {
    let full = full_branch(name);
    let valid = crate::task::BranchName::parse(&full).is_ok_and(|b| !b.is_detached());
    if !valid || tip_of(&full)?.is_none() {
        return Err(Error::input(format!("--into '{name}' is not a branch"))
            .hint("--into takes the name of an existing branch; 'git branch' lists them ('git branch -r' those of a remote, for --remote)"));
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
pub(super) fn task_worktree_refusal(
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
            task: rec.state.id.to_string(),
            worktree: w.path.display().to_string(),
            branch: rec.state.branch_short().to_owned(),
            head,
        }));
    }
    // Hot path: a clean worktree on the tip.
    if wt_repo.head_commit()? == Some(tip)
        && crate::lifecycle::summary::worktree_is_clean(
            repo,
            &w.path,
            tip,
            &mut Default::default(),
        )?
    {
        return Ok(None);
    }
    let state = crate::snapshot::read(&wt_repo)?;
    Ok(state.is_dirty().then(|| Refusal::UncommittedWork {
        task: rec.state.id.to_string(),
        worktree: w.path.display().to_string(),
        paths: state.changed.clone(),
    }))
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

/// Reads the earlier `merged` event of a merged task.
fn earlier_merge(repo: &Repo, rec: &Record) -> Result<TaskMerged> {
    let events = record::events(repo, rec)?;
    let merged = events.into_iter().rev().find_map(|e| match e.event {
        Event::Merged(Merged::Branch {
            commit,
            commits,
            mode,
            into,
            keep,
            checks,
            ..
        }) => Some((commit, commits, mode, String::from(into), keep, checks)),
        _ => None,
    });
    let (commit, commits, mode, into, keep, checks) = merged.unwrap_or_default();
    Ok(TaskMerged {
        task: rec.state.id.to_string(),
        already_merged: true,
        commit,
        commits,
        into,
        strategy: serde_json::from_value(mode.into()).unwrap_or_default(),
        checks: checks.map(|c| Run {
            skipped: c.skipped,
            passed: c.passed,
            commands: Vec::new(),
        }),
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
