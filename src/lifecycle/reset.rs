//! Putting a task back to its base (or onto a new base), saving its work first:
//! the one reset, used by `git task reset` and `git task start --reset`.
//!
//! Order (SPEC §2.2, §2.7): first everything the reset discards is saved as one
//! attempt ([`crate::attempt`]: uncommitted changes, untracked files included,
//! and the task's own commits); then one ref transaction moves the branch to a
//! fresh contract commit on the base, moves `refs/tasks/<id>/base` and appends
//! `reset` to the record, each with its expected old value; only then does the
//! worktree follow. A worktree that is there and on its branch is brought to
//! the new commit in place (only the files that differ are written; ignored
//! files and nested repositories stay), after checking nothing blocks it; one
//! whose HEAD left the branch (detached, another branch, a rebase stopped
//! half-way) is put back on it first, the same way; one that is missing is
//! made again. A crash before the transaction changes nothing but the attempt refs.
//!
//! `--reset` may also replace the task's contract (`start --reset --allow ...`):
//! the new contract is frozen into the `reset` event and committed as the
//! branch's new first commit.
//!
//! Patch-mode tasks reset in place through [`crate::undo::reset_patch`].

use crate::attempt::{Attempt, Saved, SavedAttempt};
use crate::config::Settings;
use crate::contract::file::ContractFile;
use crate::error::{Error, Result};
use crate::git::refs::Update;
use crate::git::{checkout::inplace, objects, worktree, ObjectId, Repo};
use crate::record::{self, event, Event, Record};
use crate::snapshot;
use crate::task::{layout, Mode, Status};
use std::path::PathBuf;

/// How to reset.
#[derive(Clone, Debug, Default)]
pub struct ResetOptions {
    /// The new base (default: the task's base).
    pub onto: Option<ObjectId>,
    /// A new contract text replacing the frozen one (already validated).
    pub contract: Option<String>,
    /// Called as `start --reset`: the event is recorded even when nothing changes, and the setup runs.
    pub from_start: bool,
    /// `start --reset --setup CMD`: the setup to run this time instead of the task's own.
    pub setup: Option<String>,
    /// `start --reset --setup-timeout SECS`: how long it may run (else `task.setupTimeout`).
    pub setup_timeout: Option<u64>,
    /// `start --reset --discard-commits`: the task's own commits go too (saved as an attempt
    /// first, as every reset saves them), so `contract` may be any contract, looser included.
    pub discard_commits: bool,
}

/// What `reset` did.
#[derive(Debug)]
pub struct ResetDone {
    /// The record after the `reset` event (unchanged when nothing was done).
    pub record: Record,
    /// The work saved before it was discarded.
    pub attempt: Option<SavedAttempt>,
    /// The commit the task now starts from.
    pub base: ObjectId,
    /// Files written or deleted in the worktree.
    pub files: Vec<String>,
    /// Whether anything changed (false: the task was already at its base).
    pub changed: bool,
    /// The setup command run in the worktree, if any, and what it did.
    pub setup: Option<crate::checks::Outcome>,
    /// Where the user should `cd`: the process's directory was deleted or replaced by the reset.
    pub cd: Option<PathBuf>,
}

/// The commits on the task's branch above its contract commit (0 when the tip is the contract
/// commit, or the branch is gone); a branch that no longer descends from it counts as 1.
fn own_commits(repo: &Repo, record: &Record, tip: Option<ObjectId>) -> Result<usize> {
    let Some(tip) = tip else {
        return Ok(0);
    };
    let Some(first) = record
        .state
        .contract_commit
        .as_deref()
        .and_then(|c| c.parse::<ObjectId>().ok())
    else {
        return Ok(1);
    };
    let mut n = 0;
    let mut next = Some(tip);
    while let Some(commit) = next {
        if commit == first {
            return Ok(n);
        }
        n += 1;
        if n > 10_000 {
            break;
        }
        next = objects::commit_parents(repo, commit)?.first().copied();
    }
    Ok(n.max(1))
}

/// Resets the task of `record` to its base, or onto `opts.onto` (which becomes its new base).
///
/// Fails with an input error for tasks that are not active or dropped; a dropped task becomes active again.
pub fn reset(
    repo: &Repo,
    settings: &Settings,
    record: &Record,
    opts: &ResetOptions,
) -> Result<ResetDone> {
    let s = &record.state;
    let id = s.task_id();
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
        Status::Tampered => return Err(Status::tampered_error(id.as_str())),
    }
    // The branch it moves is the one frozen at start (tests/cmd/hostile_records.rs).
    super::frozen_untouched(repo, record, "nothing was reset")?;
    if s.mode == Mode::Patch {
        if opts.contract.is_some() {
            return Err(Error::input(format!(
                "task '{id}' works in patch mode; its contract cannot be replaced"
            ))
            .hint(format!("accept or undo its work ('git task merge {id}' or 'git task revert {id}'), then start a new task")));
        }
        let done = crate::undo::reset_patch(repo, record, opts.onto)?;
        let record = record::load_existing(repo, &id)?;
        return Ok(ResetDone {
            record,
            changed: done.attempt.is_some() || !done.files.is_empty(),
            attempt: done.attempt,
            base: done.base,
            files: done.files,
            setup: None,
            cd: None,
        });
    }

    let contract_text = opts.contract.as_deref().unwrap_or(&record.contract_text);
    let new_contract = match &opts.contract {
        Some(text) if *text != record.contract_text => Some(ContractFile::parse(
            text,
            crate::contract::file::CONTRACT_FILE,
        )?),
        _ => None,
    };
    let tip = repo.find_ref(&s.branch)?;
    // SPEC §2.4: a task cannot loosen its own contract, by its branch's file nor by a reset
    // (which anyone in its worktree can run): the frozen contract binds the work done under it.
    // While the task has no commits of its own (its branch is its contract commit), a reset
    // may replace the contract with any contract: a slip at start is recoverable. So may
    // `--discard-commits`, which takes the commits off the branch (saved as an attempt first).
    if let Some(why) = new_contract
        .as_ref()
        .and_then(|new| crate::contract::replacing_loosens(&record.contract, new))
    {
        let own = own_commits(repo, record, tip)?;
        if own > 0 && !opts.discard_commits {
            let commits = match own {
                1 => "1 commit".to_owned(),
                n => format!("{n} commits"),
            };
            return Err(
                Error::negative(format!("task '{id}' cannot loosen its contract: {why}"))
                    .hint(format!(
                        "its frozen contract binds the work done under it, and it has {commits} of its own: a looser contract may replace it only while the task has none"
                    ))
                    .hint(format!(
                        "to start over under the looser contract, add --discard-commits: its commits and uncommitted work are saved as an attempt first (refs/tasks/{id}/attempts/<n>): git task start {id} --reset --discard-commits <contract options>"
                    ))
                    .hint(format!(
                        "or keep the contract, or narrow it: git task start {id} --reset; a wider contract for new work: 'git task start' with another id"
                    )),
            );
        }
    }
    let path = PathBuf::from(&s.worktree);
    let linked = worktree::list(repo)?
        .into_iter()
        .find(|w| w.path == path || w.branch.as_deref() == Some(s.branch.as_str()));
    let old_base = repo.find_ref(&layout::base_ref(&id))?;
    // The record's base (a base ref moved by hand is put back), as `list`, `changes` and the
    // gate count from.
    let base = match opts.onto {
        Some(commit) => commit,
        None => s
            .base_commit_id(repo)?
            .ok_or_else(|| Error::repo_msg(format!("task '{id}' has a bad base commit")))?,
    };
    let tree = super::branch::first_commit_tree(repo, base, contract_text)?;

    // The worktree as it is: brought along in place when it is there and on its branch.
    let present = linked.as_ref().filter(|l| l.exists());
    let (wt, state) = match present {
        Some(l) => {
            let wt = worktree::open_at(&l.path)?;
            let state = snapshot::read_to_keep(&wt)?;
            (Some(wt), Some(state))
        }
        None => (None, None),
    };
    // A worktree that is there is always brought along in place, even when its HEAD left the
    // branch (detached, another branch, a rebase stopped half-way): HEAD goes back on the
    // branch first. Made again, it would lose its ignored files (`.env`, build output).
    let in_place = wt.is_some();
    let attach = match &wt {
        Some(wt) => wt.head_branch()?.as_deref() != Some(s.branch.as_str()),
        None => false,
    };
    if let (Some(linked), false) = (&linked, in_place) {
        // Made again means deleted first: never a locked worktree (`git worktree lock`).
        linked.check_unlocked()?;
    }
    if !opts.from_start && new_contract.is_none() && in_place && !attach && old_base == Some(base) {
        if let (Some(tip), Some(state)) = (tip, &state) {
            let already = objects::commit_parents(repo, tip)? == vec![base]
                && objects::commit_tree(repo, tip)? == tree
                && state.worktree_tree == tree
                && state.index_tree == tree;
            if already {
                return Ok(ResetDone {
                    record: record.clone(),
                    attempt: None,
                    base,
                    files: Vec::new(),
                    changed: false,
                    setup: None,
                    cd: None,
                });
            }
        }
    }
    if let (true, Some(wt), Some(state)) = (in_place, &wt, &state) {
        inplace::check(wt, state.worktree_tree, tree)?;
    }

    // SPEC §2.2: save before discarding.
    let mut saved = Saved::for_record(repo, record, "reset")?;
    saved.worktree = present.map(|l| l.path.as_path()).zip(state.as_ref());
    saved.commits.extend(tip);
    let attempt = Attempt::save(repo, &id, &saved)?;

    // The branch starts over: one fresh contract commit on the base.
    let first = super::branch::first_commit(repo, &id, base, contract_text)?;
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
    let mut state_after = s.clone();
    state_after.status = Status::Active;
    state_after.base_commit = base.to_string();
    state_after.contract_commit = Some(first.to_string());
    let details = Event::Reset(event::Reset::Task {
        base: base.to_string(),
        onto: opts.onto.map(|o| o.to_string()),
        previous_head: tip.map(|t| t.to_string()),
        attempts: attempt.iter().cloned().collect(),
        contract_replaced: new_contract.is_some(),
    });
    // A replaced contract is frozen into this event's commit.
    let mut from = record.clone();
    if let Some(contract) = new_contract {
        from.contract = contract;
        from.contract_text = contract_text.to_owned();
    }
    // An in-place rewrite is journaled before the branch moves: a kill in between is finished
    // by the next command (`recover`), once it sees the branch moved.
    let journal = match (in_place, &wt, &state) {
        (true, Some(wt), Some(_)) => Some(crate::recover::Journal::begin(
            repo,
            crate::recover::Step::InPlace {
                task: s.id.to_string(),
                worktree: wt.require_workdir()?.to_path_buf(),
                files: Some(tree.to_string()),
                index: tree.to_string(),
                head: Some(first.to_string()),
                attach: attach.then(|| s.branch.to_string()),
            },
        )?),
        _ => None,
    };
    let record = record::append(repo, &from, details, &state_after, extra)?;

    // The worktree follows the branch.
    let cwd = std::env::current_dir().ok();
    let was_inside = crate::git::cwd_inside(&path);
    let mut recreated = false;
    let files = match (in_place, &wt, &state) {
        (true, Some(wt), Some(state)) => {
            if attach {
                inplace::attach_head(wt.git_dir(), &s.branch)?;
            }
            let files = inplace::apply(wt, state.worktree_tree, tree, tree)?;
            drop(journal);
            files
        }
        _ => {
            let mut outside = None;
            if let Some(linked) = &linked {
                crate::git::leave_if_inside(&linked.path, &repo.main_worktree()?)?;
                outside = worktree::reopen_outside(repo, linked)?;
                worktree::remove(repo, linked)?;
            }
            let repo = outside.as_ref().unwrap_or(repo);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| {
                    Error::repo(format!("could not create '{}'", parent.display()), e)
                })?;
            }
            worktree::add(
                repo,
                &path,
                &s.branch,
                false,
                None,
                crate::git::interrupt::flag(),
                &mut |_, _| {},
            )?;
            recreated = true;
            Vec::new()
        }
    };
    // Where the user stood may be gone (a directory the task made) or replaced (a worktree made again).
    let cd = match (was_inside, cwd) {
        (true, Some(cwd)) if recreated || !cwd.is_dir() => {
            let _ = std::env::set_current_dir(&path);
            Some(path.clone())
        }
        _ => None,
    };
    crate::hooks::run_post_checkout(repo, &path, &first.to_string())?;
    let setup = match opts
        .setup
        .as_deref()
        .or(state_after.setup.as_deref())
        .or(settings.setup.as_deref())
    {
        Some(cmd) if opts.from_start || recreated => {
            let env = state_after.task_env();
            Some(crate::checks::run_captured(
                cmd,
                &path,
                &env,
                std::time::Duration::from_secs(
                    opts.setup_timeout.unwrap_or(settings.setup_timeout),
                ),
            )?)
        }
        _ => None,
    };
    Ok(ResetDone {
        record,
        attempt,
        base,
        files,
        changed: true,
        setup,
        cd,
    })
}

/// The decisions of `reset`: work is saved before the worktree goes back to the base; a task
/// that is not live is refused as bad input and nothing moves.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{write, Fixture};
    use crate::task::TaskId;

    #[test]
    fn the_work_is_saved_then_the_worktree_is_the_base_again() {
        let f = Fixture::new();
        let rec = f.start("again", &["src/**"]);
        let wt = PathBuf::from(&rec.state.worktree);
        write(&wt, "src/lib.rs", "changed\n");
        write(&wt, "src/new.rs", "new\n");
        let done = reset(&f.repo(), &f.settings(), &rec, &ResetOptions::default()).unwrap();
        assert!(done.changed);
        let saved = done.attempt.expect("the work is saved").name;
        assert_eq!(f.git(&["show", &format!("{saved}:src/new.rs")]), "new");
        assert_eq!(f.git(&["show", &format!("{saved}:src/lib.rs")]), "changed");
        assert_eq!(
            std::fs::read_to_string(wt.join("src/lib.rs")).unwrap(),
            "pub fn lib() {}\n"
        );
        assert!(!wt.join("src/new.rs").exists());
        assert!(f.git_in(&wt, &["status", "--porcelain"]).is_empty());
    }

    #[test]
    fn a_task_at_its_base_is_left_as_it_is() {
        let f = Fixture::new();
        let rec = f.start("still", &["src/**"]);
        let before = f.refs();
        let done = reset(&f.repo(), &f.settings(), &rec, &ResetOptions::default()).unwrap();
        assert!(!done.changed);
        assert!(done.attempt.is_none());
        assert_eq!(f.refs(), before);
    }

    #[test]
    fn a_removed_task_is_refused_and_nothing_moves() {
        let f = Fixture::new();
        f.start("gone", &["src/**"]);
        let id = TaskId::parse("gone").unwrap();
        crate::lifecycle::remove::remove(&f.repo(), &f.settings(), &id, false)
            .unwrap()
            .ok()
            .unwrap();
        let rec = record::load(&f.repo(), &id).unwrap().unwrap();
        let before = f.refs();
        let err = reset(&f.repo(), &f.settings(), &rec, &ResetOptions::default()).unwrap_err();
        assert_eq!(err.exit_code(), 2, "{err}");
        assert_eq!(f.refs(), before);
    }
}
