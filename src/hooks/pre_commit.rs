//! The `pre-commit` handler: judge exactly what is being committed.
//!
//! githooks(5): "invoked by git-commit … Exiting with a non-zero status from
//! this script causes the git commit command to abort before creating a
//! commit." Git hands the hook the index it is about to commit in
//! `GIT_INDEX_FILE` (a temporary one for `git commit -a` and
//! `git commit -- <paths>`); the repository is opened with git's environment,
//! so that is the index judged. Only the index and the trees along staged
//! paths are read: no worktree scan, no process.
//!
//! With `task.onViolation=revert` the offending changes are first saved as an
//! attempt (SPEC §2.2), then those paths are put back to HEAD in the
//! worktree's own index and files. Git rolls its locked index back when the
//! hook fails, so the real index is the one to edit.

use crate::changes::{self, Staged};
use crate::config::{OnViolation, Settings};
use crate::contract::{Reason, Verdict};
use crate::error::{Context, Result};
use crate::git::objects::{self, TreeEdit};
use crate::git::{index::file::set_index_entries, EntryKind, ObjectId, Repo};
use crate::record::{self, event, Event, Record};
use crate::resolve;
use crate::task::Status;
use std::path::Path;

/// The decoded objects the hook keeps (it reads a few dozen small ones).
const HOOK_OBJECT_CACHE: usize = 1 << 20;

/// What the hook concluded.
#[derive(Debug)]
pub enum Outcome {
    /// No task is active in this worktree: nothing to judge.
    NoTask,
    /// The active task is finished; its contract no longer applies to new commits.
    Finished {
        /// The task id.
        task: String,
        /// Merged or removed.
        status: Status,
    },
    /// A patch-mode task that no longer guards this worktree (dropped, merged, removed) left
    /// its mark here.
    Unguarded {
        /// The task id.
        task: String,
        /// Its status.
        status: Status,
    },
    /// The staged changes keep the contract.
    Clean,
    /// The staged changes break the contract: the commit must be refused.
    Violation {
        /// The report.
        verdict: Verdict,
        /// Why the `violation` event could not be recorded, if it could not.
        event_error: Option<String>,
        /// What `task.onViolation=revert` saved and restored.
        reverted: Option<Reverted>,
        /// The task works in patch mode: it guards the user's own worktree.
        patch: bool,
    },
}

/// What `task.onViolation=revert` did.
#[derive(Clone, Debug)]
pub struct Reverted {
    /// The attempt ref holding the offending changes.
    pub attempt: String,
    /// The paths put back to HEAD (or removed, when HEAD has no such file).
    pub paths: Vec<String>,
}

/// Judges the staged changes of the active task of the worktree `repo` was opened in.
pub fn run(repo: &Repo, settings: &Settings) -> Result<Outcome> {
    // The record's commit and tree, HEAD's commit and the base's are each read more than once
    // (finding a ref peels it): keep them decoded rather than inflate them again.
    let repo = &repo.with_object_cache(HOOK_OBJECT_CACHE);
    let Some(id) = resolve::active_task(repo, settings)? else {
        return Ok(Outcome::NoTask);
    };
    let Some(record) = record::load(repo, &id)? else {
        return Ok(Outcome::NoTask);
    };
    let patch = record.state.mode == crate::task::Mode::Patch;
    if patch && !super::patch::guards(record.state.status) {
        return Ok(Outcome::Unguarded {
            task: record.state.id.to_string(),
            status: record.state.status,
        });
    }
    if !record.state.status.is_live() {
        return Ok(Outcome::Finished {
            task: record.state.id.to_string(),
            status: record.state.status,
        });
    }
    let staged = changes::read_staged(repo)?;
    let verdict = changes::judge_staged(repo, &record, &staged)?;
    if verdict.is_clean() {
        return Ok(Outcome::Clean);
    }
    let details = Event::Violation(event::Violation::Staged {
        source: "pre-commit".into(),
        staged: true,
        head: staged.head.map(|h| h.to_string()),
        violations: verdict.violations.clone(),
    });
    let event_error = record::note(repo, &id, details)
        .err()
        .map(|e| e.to_string());
    let reverted = match settings.on_violation {
        OnViolation::Block => None,
        // Nothing to put back when only the number of files or the contract file is wrong.
        OnViolation::Revert if !offending_paths(&verdict).is_empty() => {
            Some(revert(repo, &record, &staged, &verdict)?)
        }
        OnViolation::Revert => None,
    };
    Ok(Outcome::Violation {
        verdict,
        event_error,
        reverted,
        patch,
    })
}

/// Returns the paths a revert puts back: every violating file (not `*` of `too_many_files`).
fn offending_paths(verdict: &Verdict) -> Vec<String> {
    let mut paths: Vec<String> = verdict
        .violations
        .iter()
        // A path git refuses is never touched on disk (SPEC §5): `../x` would be outside.
        .filter(|v| !matches!(v.reason, Reason::TooManyFiles | Reason::UnsafePath))
        .map(|v| v.file.clone())
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

/// Saves the offending changes as an attempt, then restores those paths to HEAD in the index and the worktree.
fn revert(repo: &Repo, record: &Record, staged: &Staged, verdict: &Verdict) -> Result<Reverted> {
    let id = record.state.task_id();
    let workdir = repo.require_workdir()?.to_path_buf();
    let paths = offending_paths(verdict);

    // SPEC §2.2: save first. Like a stash: the attempt's tree is the staged
    // state with the offending files as they are on disk; its second parent
    // holds the staged state alone.
    let staged_edits: Vec<TreeEdit<'_>> = staged
        .changes
        .iter()
        .map(|c| match c.new {
            Some((kind, oid)) => TreeEdit::Upsert(c.path.as_str(), kind, oid),
            None => TreeEdit::Remove(c.path.as_str()),
        })
        .collect();
    let index_tree = objects::edit_tree(repo, staged.head_tree, &staged_edits)?;
    let parents: Vec<ObjectId> = staged.head.into_iter().collect();
    let index_commit = objects::write_commit(
        repo,
        index_tree,
        &parents,
        &format!("git-task: staged changes of {id} refused by the contract\n"),
    )?;
    let on_disk: Vec<(String, Option<(EntryKind, ObjectId)>)> = paths
        .iter()
        .map(|p| Ok((p.clone(), crate::snapshot::hash_file(repo, &workdir, p)?)))
        .collect::<Result<_>>()?;
    let disk_edits: Vec<TreeEdit<'_>> = on_disk
        .iter()
        .map(|(p, e)| match e {
            Some((kind, oid)) => TreeEdit::Upsert(p.as_str(), *kind, *oid),
            None => TreeEdit::Remove(p.as_str()),
        })
        .collect();
    let attempt_tree = objects::edit_tree(repo, index_tree, &disk_edits)?;
    let mut attempt_parents = parents.clone();
    attempt_parents.push(index_commit);
    let (attempt, _) = crate::attempt::write(
        repo,
        &id,
        attempt_tree,
        &attempt_parents,
        "commit refused by the contract",
    )?;

    // Then restore: HEAD's entry, or nothing where HEAD has no such file.
    let mut restore = Vec::with_capacity(paths.len());
    for path in &paths {
        restore.push((path.clone(), head_entry(repo, staged.head_tree, path)?));
    }
    set_index_entries(repo, &repo.git_dir().join("index"), &restore)?;
    for (path, entry) in &restore {
        restore_file(repo, &workdir, path, *entry)?;
    }
    Ok(Reverted { attempt, paths })
}

fn head_entry(
    repo: &Repo,
    head_tree: ObjectId,
    path: &str,
) -> Result<Option<(EntryKind, ObjectId)>> {
    objects::entry_in(repo, head_tree, path)
}

/// Puts `path` in the worktree back to `entry` (deleting it when `None`).
fn restore_file(
    repo: &Repo,
    workdir: &Path,
    path: &str,
    entry: Option<(EntryKind, ObjectId)>,
) -> Result<()> {
    crate::git::pathsafe::check_write(workdir, path, "HEAD")?;
    let full = workdir.join(path);
    let remove = |full: &Path| match std::fs::symlink_metadata(full) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => std::fs::remove_file(full).context(|| format!("could not remove '{path}'")),
        Err(_) => Ok(()),
    };
    match entry {
        None => remove(&full),
        Some((EntryKind::Commit | EntryKind::Tree, _)) => Ok(()),
        Some((kind, id)) => {
            crate::git::checkout::write_entry(repo, workdir, Path::new(path), kind, id)
        }
    }
}
