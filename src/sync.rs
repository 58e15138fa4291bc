//! `sync`: bring the base branch's new commits into a task branch, inside its worktree.
//!
//! The merge is computed in memory first. Without conflicts, one transaction
//! moves the task branch (to a merge commit, or fast-forward when that loses
//! nothing), `refs/tasks/<id>/base` (to the base tip) and the record
//! (`synced`), and the task worktree, which must be clean, is updated with
//! `git read-tree -m -u` (see `git::cli`). With conflicts, `git merge` runs in
//! the task worktree so the user gets git's usual conflict state; after they
//! resolve and commit, running `sync` again finds the base contained in the
//! task branch and only moves the base ref.

use crate::contract::file::CONTRACT_FILE;
use crate::error::{Error, Result};
use crate::git::merge as gmerge;
use crate::git::refs::{RefError, Update};
use crate::git::{cli, objects, worktree, ObjectId, Repo};
use crate::record::{self, event, Event};
use crate::task::{layout, Mode, Status, TaskId};
use std::path::PathBuf;

/// A sync that completed.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Synced {
    /// The task id.
    pub task: String,
    /// The base branch (full ref name).
    pub base_branch: String,
    /// The base tip now recorded in `refs/tasks/<id>/base`.
    pub base: String,
    /// The task branch's tip after the sync.
    pub commit: String,
    /// Whether the task branch moved (merge commit or fast-forward).
    pub merged: bool,
    /// Whether it was a fast-forward.
    pub fast_forward: bool,
    /// Whether anything changed at all (false: already up to date).
    pub changed: bool,
}

/// Why a sync stopped; as JSON, `kind` tells the two apart.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
#[serde(tag = "kind")]
pub enum Stopped {
    /// The merge conflicts; git's conflict state is left in the worktree.
    #[serde(rename = "sync_conflict")]
    Conflict {
        task: String,
        worktree: String,
        base: String,
        /// The conflicting paths, marked in the worktree's files.
        paths: Vec<String>,
        /// The steps that finish the sync, in order: edit the marked files, then the commands
        /// (`git task commit` concludes the merge and records the new base).
        resolve: Vec<String>,
        /// The command that gives the sync up instead (the worktree back as it was).
        abort: String,
    },
    /// The worktree has uncommitted changes (or an unfinished merge).
    #[serde(rename = "uncommitted_changes")]
    Dirty {
        task: String,
        worktree: String,
        paths: Vec<String>,
        merging: bool,
    },
}

/// Records the base's tip as the task's base when the task branch already holds it (a sync
/// merge the user or `git task commit` concluded): the base ref moves and `synced` is
/// appended, as a `sync` run now would do; nothing else. `None` when the branch does not hold
/// the base's tip (the base moved again: that is a new `sync`, not this one's end).
pub fn record_concluded(repo: &Repo, id: &TaskId) -> Result<Option<Synced>> {
    let rec = crate::resolve::existing(repo, id)?;
    let (Some(base_branch), Some(task_tip)) = (
        rec.state.base_branch.as_deref(),
        repo.find_ref(&rec.state.branch)?,
    ) else {
        return Ok(None);
    };
    let Some(base_tip) = repo.find_ref(base_branch)? else {
        return Ok(None);
    };
    if objects::merge_base(repo, task_tip, base_tip)? != Some(base_tip) {
        return Ok(None);
    }
    Ok(sync(repo, id)?.ok())
}

/// Brings the base branch's new commits into the task branch of `id`.
pub fn sync(repo: &Repo, id: &TaskId) -> Result<std::result::Result<Synced, Stopped>> {
    let rec = crate::resolve::existing(repo, id)?;
    if rec.state.mode == Mode::Patch {
        return Err(Error::input(format!(
            "task '{id}' works in patch mode: it has no branch to sync"
        )));
    }
    if !matches!(rec.state.status, Status::Active | Status::Dropped) {
        return Err(Error::input(format!(
            "task '{id}' is {}; there is nothing to sync",
            rec.state.status
        )));
    }
    // The branches it merges and moves are the ones frozen at start (tests/cmd/hostile_records.rs).
    crate::lifecycle::frozen_untouched(repo, &rec, "nothing was synced")?;
    let Some(base_branch) = rec.state.base_branch.as_ref().map(String::from) else {
        return Err(Error::input(format!("task '{id}' was started from a commit, not a branch; there is no base branch to sync with")));
    };
    let base_tip = repo.find_ref(&base_branch)?.ok_or_else(|| {
        Error::input(format!(
            "the base branch '{}' of task '{id}' does not exist",
            rec.state.base_branch_short().unwrap_or_default()
        ))
    })?;
    let task_tip = repo.find_ref(&rec.state.branch)?.ok_or_else(|| {
        Error::input(format!(
            "task '{id}' has no branch '{}'",
            rec.state.branch_short()
        ))
        .hint("run 'git task sweep' to repair it")
    })?;
    let base_ref = layout::base_ref(id);
    let recorded_base = repo.find_ref(&base_ref)?;
    let path = PathBuf::from(&rec.state.worktree);
    let linked = rec
        .state
        .worktree_now(repo)?
        .filter(|w| w.exists())
        .ok_or_else(|| {
            Error::input(format!(
                "task '{id}' has no worktree at '{}'",
                path.display()
            ))
            .hint("run 'git task sweep' to repair it")
        })?;
    let wt_display = linked.path.display().to_string();
    let merging = linked.git_dir.join("MERGE_HEAD").exists();

    let base_update = |new: ObjectId| match recorded_base {
        Some(old) => Update::update(base_ref.clone(), old, new, format!("git-task: sync {id}")),
        None => Update::create(base_ref.clone(), new, format!("git-task: sync {id}")),
    };
    let mut state = rec.state.clone();
    state.base_commit = base_tip.to_string();

    // When the task branch already holds what it needs, only the base ref moves and `synced` is recorded.
    let record_base_only = |commit: ObjectId, merged: bool, changed: bool| -> Result<Synced> {
        if changed {
            let details = Event::Synced(event::Synced {
                base: base_tip.to_string(),
                commit: commit.to_string(),
                merged,
                fast_forward: None,
            });
            record::append(repo, &rec, details, &state, vec![base_update(base_tip)])?;
        }
        Ok(Synced {
            task: id.to_string(),
            base_branch: base_branch.clone(),
            base: base_tip.to_string(),
            commit: commit.to_string(),
            merged,
            fast_forward: false,
            changed,
        })
    };
    // Already contains the base (nothing new, or a conflicted sync the user has committed): only the base ref moves.
    if !merging && objects::merge_base(repo, task_tip, base_tip)? == Some(base_tip) {
        let changed = recorded_base != Some(base_tip);
        return record_base_only(task_tip, false, changed).map(Ok);
    }

    let wt = worktree::open_at(&linked.path)?;
    let snap = crate::snapshot::read(&wt)?;
    if merging || snap.is_dirty() {
        return Ok(Err(Stopped::Dirty {
            task: id.to_string(),
            worktree: wt_display,
            paths: snap.changed,
            merging,
        }));
    }

    let task_tree = objects::commit_tree(repo, task_tip)?;
    let base_tree = objects::commit_tree(repo, base_tip)?;
    let task_contract = gmerge::root_entry(repo, task_tree, CONTRACT_FILE)?;
    let fast_forward = objects::merge_base(repo, task_tip, base_tip)? == Some(task_tip)
        && gmerge::root_entry(repo, base_tree, CONTRACT_FILE)? == task_contract;
    let new_tip = if fast_forward {
        base_tip
    } else {
        let ancestor = gmerge::ancestor_tree(repo, task_tip, base_tip)?;
        // The base side never changes the task's contract file.
        let theirs = gmerge::with_root_entry(
            repo,
            base_tree,
            CONTRACT_FILE,
            gmerge::root_entry(repo, ancestor, CONTRACT_FILE)?,
        )?;
        let base_name = rec.state.base_branch_short().unwrap_or("base").to_owned();
        let merged = gmerge::merge_trees(
            repo,
            ancestor,
            task_tree,
            theirs,
            ["merge base", rec.state.branch_short(), &base_name],
        )?;
        match merged.tree {
            Some(tree) => {
                let tree = gmerge::with_root_entry(repo, tree, CONTRACT_FILE, task_contract)?;
                let message = format!(
                    "Merge branch '{base_name}' into {}\n\nTask-Id: {id}\n",
                    rec.state.branch_short()
                );
                gmerge::write_commit(repo, tree, &[task_tip, base_tip], &message, None)?
            }
            None => {
                // Let git leave its usual conflict state for the user to resolve.
                let message = format!(
                    "Merge branch '{base_name}' into {}\n\nTask-Id: {id}\n",
                    rec.state.branch_short()
                );
                let run =
                    cli::merge_leaving_conflicts(&linked.path, base_tip, &base_name, &message)?;
                if run.success {
                    // git resolved what the in-memory merge did not (it can differ on renames): record it.
                    let now = worktree::head_of(&linked.path)?.unwrap_or(task_tip);
                    return record_base_only(now, true, true).map(Ok);
                }
                let wt = crate::contract::judge::shell_quote(&wt_display);
                return Ok(Err(Stopped::Conflict {
                    task: id.to_string(),
                    base: base_tip.to_string(),
                    paths: merged.conflicts,
                    resolve: vec![
                        format!("edit the conflicting files in {wt}: keep what both sides need, no <<<<<<< ======= >>>>>>> markers left"),
                        format!("git task commit {id}"),
                        format!("git task merge {id}"),
                    ],
                    abort: format!("git -C {wt} merge --abort"),
                    worktree: wt_display,
                }));
            }
        }
    };

    // SPEC §5: nothing with a path git refuses is brought into the worktree.
    crate::git::checkout::twoway::changes(repo, task_tip, new_tip)?;
    // The worktree is clean (checked above), so the update cannot overwrite anything; git still checks.
    let details = Event::Synced(event::Synced {
        base: base_tip.to_string(),
        commit: new_tip.to_string(),
        merged: true,
        fast_forward: Some(fast_forward),
    });
    let branch_update = Update::update(
        rec.state.branch.clone(),
        task_tip,
        new_tip,
        format!("git-task: sync {id}"),
    );
    let (record_update, _) = record::prepare_append(repo, &rec, &details, &state)?;
    let updates = vec![
        record_update.clone(),
        branch_update.clone(),
        base_update(base_tip),
    ];
    // A kill between the branch move and the worktree update is finished by the next command.
    let _journal = crate::git::journal::Journal::begin(
        repo,
        crate::git::journal::Step::Checkout {
            worktree: linked.path.clone(),
            branch: rec.state.branch.to_string(),
            old: task_tip.to_string(),
            new: new_tip.to_string(),
        },
    )?;
    match crate::ledger::apply(repo, crate::ledger::Mover::GitTask, updates) {
        Ok(()) => {}
        Err(RefError::Conflict(msg)) => {
            return Err(Error::repo_msg(format!("{msg}; nothing was synced"))
                .hint(format!("run 'git task sync {id}' again")))
        }
        Err(RefError::Other(e)) => return Err(e),
    }
    let run = cli::update_worktree(&linked.path, task_tip, new_tip)?;
    if !run.success {
        let mut back = vec![
            Update::update(
                rec.state.branch.clone(),
                new_tip,
                task_tip,
                format!("git-task: roll back sync {id}"),
            ),
            Update::update(
                layout::record_ref(id),
                record_update.new.expect("an append sets the record"),
                rec.tip,
                format!("git-task: roll back sync {id}"),
            ),
        ];
        back.push(match recorded_base {
            Some(old) => Update::update(
                base_ref.clone(),
                base_tip,
                old,
                format!("git-task: roll back sync {id}"),
            ),
            None => Update::delete(
                base_ref.clone(),
                base_tip,
                format!("git-task: roll back sync {id}"),
            ),
        });
        crate::ledger::commit(repo, back)?;
        return Ok(Err(Stopped::Dirty {
            task: id.to_string(),
            worktree: wt_display,
            paths: cli::listed_paths(&run.stderr),
            merging: false,
        }));
    }
    Ok(Ok(Synced {
        task: id.to_string(),
        base_branch,
        base: base_tip.to_string(),
        commit: new_tip.to_string(),
        merged: true,
        fast_forward,
        changed: true,
    }))
}
