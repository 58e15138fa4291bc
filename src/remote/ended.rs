//! A task live here that another machine merged (its fetched record says `merged`): this
//! machine's work on it is never left invisible behind a merged record. Its commits that did not
//! land and its uncommitted work are saved as attempts (`refs/tasks/<id>/attempts/<n>`), then
//! its worktree and branch here go; the record then takes the remote's ending in
//! ([`super::reconcile`], which proves it: the branch here holds nothing beyond what landed).
//! `fetch`, `merge --remote` and `sweep` do it; what could not be done is reported, and nothing
//! is removed before the work is saved.

use super::{check_remote, Here};
use crate::attempt::{save_commits, save_worktree, SavedAttempt};
use crate::error::Result;
use crate::git::refs::Update;
use crate::git::{objects, worktree, ObjectId, Repo};
use crate::record::event::{self, Event};
use crate::task::{layout, Mode, Status, TaskId};

/// What was done here for a task another machine merged.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct MergedElsewhere {
    /// The task id.
    pub task: String,
    /// The remote whose record says it was merged.
    pub remote: String,
    /// This machine's work that had not landed, saved before anything went.
    pub attempts: Vec<SavedAttempt>,
    /// The worktree deleted here, if there was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub removed_worktree: Option<String>,
    /// Whether the task branch here was deleted.
    pub removed_branch: bool,
    /// Why the worktree and branch were left here, when they were (nothing was deleted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left: Option<String>,
}

impl MergedElsewhere {
    /// What was done, in a sentence.
    pub fn describe(&self) -> String {
        let id = &self.task;
        match &self.left {
            Some(why) => format!(
                "'{id}' says it was merged on '{}', but its worktree and branch here were left: {why}",
                self.remote
            ),
            None => {
                let saved: Vec<&str> = self.attempts.iter().map(|a| a.name.as_str()).collect();
                format!(
                    "'{id}' was merged on another machine: removed its worktree and branch here{}",
                    match saved.is_empty() {
                        true => String::new(),
                        false => format!(", its work saved as {}", saved.join(", ")),
                    }
                )
            }
        }
    }
}

/// The landing the remote's record `theirs` names in a `merged` event newer than the record
/// here (`local`): `(commit on the target, target branch, task tip that landed)`.
fn landing(
    repo: &Repo,
    local: ObjectId,
    theirs: ObjectId,
) -> Result<Option<(Option<String>, String, String)>> {
    let base = objects::merge_base(repo, local, theirs).ok().flatten();
    let mut next = Some(theirs);
    while let Some(c) = next {
        if Some(c) == base {
            break;
        }
        let message = objects::commit_message(repo, c)?;
        if let Event::Merged(event::Merged::Branch {
            commit,
            into,
            task_tip,
            ..
        }) = event::Entry::parse(c.to_string(), &message).event
        {
            return Ok(Some((commit, into.into(), task_tip)));
        }
        next = objects::commit_parents(repo, c)?.first().copied();
    }
    Ok(None)
}

/// Whether `a` is `b` or an ancestor of it.
fn contains(repo: &Repo, b: ObjectId, a: ObjectId) -> bool {
    a == b || objects::merge_base(repo, a, b).ok().flatten() == Some(a)
}

/// For task `id`, live here in worktree mode, whose record fetched from `remote` says another
/// machine merged it (a landing on the fetched target): saves this machine's commits beyond what
/// landed and its uncommitted work as attempts, then deletes its worktree and branch here.
/// `None` when that is not the case (nothing done).
pub fn settle(repo: &Repo, remote: &str, id: &TaskId) -> Result<Option<MergedElsewhere>> {
    let Some(rec) = crate::record::load(repo, id)? else {
        return Ok(None);
    };
    if rec.state.mode != Mode::Worktree || !rec.state.status.is_live() {
        return Ok(None);
    }
    let Some(theirs) = repo.find_ref(&layout::remote_record_ref(remote, id))? else {
        return Ok(None);
    };
    if theirs == rec.tip || contains(repo, rec.tip, theirs) {
        return Ok(None);
    }
    let Ok(state) = check_remote(repo, &Here::nothing(), None, id, theirs, None) else {
        return Ok(None);
    };
    if state.status != Status::Merged || state.branch != rec.state.branch {
        return Ok(None);
    }
    let mut done = MergedElsewhere {
        task: id.to_string(),
        remote: remote.to_owned(),
        attempts: Vec::new(),
        removed_worktree: None,
        removed_branch: false,
        left: None,
    };
    let Some((commit, into, task_tip)) = landing(repo, rec.tip, theirs)? else {
        done.left = Some("its record names no landing".into());
        return Ok(Some(done));
    };
    // Untrusted: the landing must be on the fetched target before anything here goes.
    let target = repo.find_ref(&layout::remote_branch_ref(remote, &into))?;
    let on_target = match (commit.and_then(|c| c.parse::<ObjectId>().ok()), target) {
        (Some(c), Some(t)) => contains(repo, t, c),
        _ => false,
    };
    let Ok(landed) = task_tip.parse::<ObjectId>() else {
        done.left = Some("its merge event names no branch tip".into());
        return Ok(Some(done));
    };
    if !on_target {
        done.left = Some(format!(
            "the commit it names is not on '{remote}''s '{}'",
            crate::git::refs::short_name(&into)
        ));
        return Ok(Some(done));
    }
    let why = format!("merged on another machine ({remote})");
    let branch = rec.state.branch.to_string();
    let tip = repo.find_ref(&branch)?;
    let linked = rec.state.worktree_now(repo)?;
    if let Some(reason) = linked.as_ref().and_then(|l| l.lock_reason()) {
        done.left = Some(format!("its worktree here is locked ({reason})"));
        return Ok(Some(done));
    }
    if let Some(tip) = tip.filter(|t| !contains(repo, landed, *t)) {
        done.attempts
            .extend(save_commits(repo, id, tip, Some(landed), &why)?);
    }
    if let Some(l) = linked.as_ref().filter(|l| l.exists()) {
        done.attempts
            .extend(save_worktree(repo, id, &l.path, &why)?);
    }
    if let Some(l) = &linked {
        worktree::remove(repo, l)?;
        done.removed_worktree = Some(l.path.display().to_string());
    }
    if let Some(tip) = tip {
        crate::ledger::commit(
            repo,
            vec![Update::delete(
                branch.clone(),
                tip,
                format!("git-task: {id} was {why}"),
            )],
        )?;
        done.removed_branch = true;
    }
    Ok(Some(done))
}

/// `sweep`'s part (no network: the records fetched last): every task live here in worktree
/// mode whose fetched record on some remote says another machine merged it is settled
/// ([`settle`]) and its record reconciled; with `dry_run`, only planned. One repair each;
/// one that cannot be made carries why (the others still run).
pub fn sweep(repo: &Repo, dry_run: bool) -> Result<Vec<crate::lifecycle::sweep::Repair>> {
    let mut found: Vec<(String, TaskId)> = Vec::new();
    for (name, _) in repo.refs_under("refs/remotes/")? {
        let Some(rest) = name.strip_prefix("refs/remotes/") else {
            continue;
        };
        let Some((remote, task)) = rest.split_once("/tasks/") else {
            continue;
        };
        let Some(id) = task
            .strip_suffix("/record")
            .and_then(|t| TaskId::parse(t).ok())
        else {
            continue;
        };
        found.push((remote.to_owned(), id));
    }
    let mut repairs = Vec::new();
    for (remote, id) in found {
        let Ok(Some(rec)) = crate::record::load(repo, &id) else {
            continue;
        };
        if rec.state.mode != Mode::Worktree || !rec.state.status.is_live() {
            continue;
        }
        let Some(theirs) = repo.find_ref(&layout::remote_record_ref(&remote, &id))? else {
            continue;
        };
        let merged = !contains(repo, rec.tip, theirs)
            && check_remote(repo, &Here::nothing(), None, &id, theirs, None)
                .is_ok_and(|s| s.status == Status::Merged);
        if !merged {
            continue;
        }
        let mut repair = crate::lifecycle::sweep::Repair {
            problem: "merged_elsewhere",
            task: Some(id.to_string()),
            action: format!(
                "task '{id}' was merged on another machine ('{remote}'): saved its work here as attempts, deleted its worktree and branch, took the merge into its record"
            ),
            attempts: Vec::new(),
            error: None,
        };
        if !dry_run {
            match settle(repo, &remote, &id) {
                Ok(Some(done)) => {
                    repair.attempts = done.attempts;
                    match done.left {
                        Some(why) => repair.error = Some(why),
                        None => {
                            if let Err(e) = super::reconcile(repo, &remote, &id) {
                                repair.error = Some(e.to_string());
                            }
                        }
                    }
                }
                Ok(None) => continue,
                Err(e) => repair.error = Some(e.to_string()),
            }
        }
        repairs.push(repair);
    }
    Ok(repairs)
}
