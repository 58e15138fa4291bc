//! Patch mode: a task that works in the current worktree, guarded by a snapshot.
//!
//! The snapshot (`refs/tasks/<id>/snapshot`) is a stash-like commit made
//! without touching the worktree or its index:
//!
//! ```text
//! W  tree: the files on disk, untracked (non-ignored) files included
//! ├─ parent 1: HEAD at start        (changes::task_base relies on this)
//! ├─ parent 2: I, tree = the index  (parent: HEAD)
//! └─ parent 3: U, tree = the untracked files only (no parent)
//! ```
//!
//! Staged and unstaged work stay apart (I versus W), so a revert can restore
//! HEAD, index and files exactly. At most one patch-mode task is active per
//! worktree: the mark file `<git_dir>/git-task-active` names it. Accepting the
//! task (`merge`) judges it, runs its frozen checks, appends `merged`, deletes
//! the snapshot and clears the mark, leaving the work in place.

use crate::checks::{How, Outcome, Run};
use crate::config::Settings;
use crate::contract::spec::{contract_text, ContractSpec};
use crate::contract::Verdict;
use crate::error::{Error, Result};
use crate::git::refs::{RefError, Update};
use crate::git::EntryKind;
use crate::git::{diff, objects, worktree, ObjectId, Repo};
use crate::record::event::{self, Event, Purpose};
use crate::record::{self, Record};
use crate::resolve;

use crate::snapshot::{self, read_snapshot, take_snapshot, write_snapshot, WorktreeState};
use crate::task::{layout, now, Mode, Status, TaskId, TaskState};

/// What a patch-mode start did.
#[derive(Debug)]
pub enum Started {
    /// A new task was made.
    Created(Record),
    /// The task already existed; nothing changed.
    Existing(Record),
}

/// What `start --mode patch` was asked to do.
#[derive(Clone, Debug, Default)]
pub struct StartOptions {
    /// The id, or `None` for a generated one.
    pub id: Option<TaskId>,
    /// `--base REV`: must name the commit HEAD is on (patch mode works on HEAD).
    pub base: Option<String>,
    /// The contract.
    pub contract: ContractSpec,
}

/// Returns the entry (blob, executable, link or submodule) at `path` in `tree`; `None` when there is none.
pub fn entry_in(repo: &Repo, tree: ObjectId, path: &str) -> Result<Option<(EntryKind, ObjectId)>> {
    objects::entry_in(repo, tree, path)
}

/// Returns the active patch-mode task of the worktree `repo` was opened in, if the mark names a live one.
pub fn active(repo: &Repo) -> Result<Option<Record>> {
    let Some(id) = resolve::read_mark(repo) else {
        return Ok(None);
    };
    let Some(record) = record::load(repo, &id)? else {
        return Ok(None);
    };
    let live = record.state.mode == Mode::Patch
        && matches!(record.state.status, Status::Provisioning | Status::Active)
        && repo.find_ref(&layout::snapshot_ref(&id))?.is_some();
    Ok(live.then_some(record))
}

/// Starts a patch-mode task in the worktree `repo` was opened in.
pub fn start(repo: &Repo, settings: &Settings, opts: &StartOptions) -> Result<Started> {
    if let Some(id) = &opts.id {
        if let Some(existing) = record::load(repo, id)? {
            if crate::recover::abandoned::roll_back_abandoned(repo, settings, &existing)?.is_none()
            {
                return Ok(Started::Existing(record::load_existing(repo, id)?));
            }
        }
    }
    let workdir = repo.require_workdir()?.to_path_buf();
    if let Some(other) = active(repo)? {
        return Err(Error::input(format!(
            "this worktree already has an active patch-mode task '{}'",
            other.state.id
        ))
        .hint(format!("accept its work with 'git task merge {0}'", other.state.id))
        .hint(format!("or abandon it: 'git task revert {0}' (saves the work as an attempt), then 'git task drop {0}'", other.state.id))
        .hint(format!(
            "or start this task in its own worktree: git task start{}",
            opts.id.as_ref().map(|i| format!(" {i}")).unwrap_or_default()
        )));
    }
    if let Some(branch) = repo.head_branch()? {
        let short = crate::git::refs::short_name(&branch);
        if let Some(owner) = layout::id_from_branch(&settings.branch_prefix, short) {
            if repo.find_ref(&layout::record_ref(&owner))?.is_some() {
                return Err(Error::input(format!(
                    "this worktree has task '{owner}' checked out; a patch-mode task cannot start inside it"
                ))
                .hint("start the patch-mode task from another worktree, e.g. the main one"));
            }
        }
    }
    let head_now = repo.head_commit()?;
    if let Some(spec) = &opts.base {
        let want = repo.rev_parse_commit(spec)?;
        if Some(want) != head_now {
            return Err(Error::input(format!(
                "a patch-mode task starts on HEAD, and '{spec}' is not HEAD"
            ))
            .hint(format!("check out '{spec}' first, or leave out --base")));
        }
    }
    let id = match &opts.id {
        Some(id) => id.clone(),
        None => {
            let seed =
                (now() as u64).wrapping_mul(6364136223846793005) ^ u64::from(std::process::id());
            crate::task::id::generate(seed, |id| {
                repo.find_ref(&layout::record_ref(id))
                    .ok()
                    .flatten()
                    .is_some()
            })
        }
    };
    let text = contract_text(&id, &opts.contract)?;
    crate::claims::check_start(repo, &id, &text, &opts.contract)?;
    let (state, snap) = take_snapshot(repo, &id)?;
    let head = state.head.expect("take_snapshot refuses an unborn HEAD");
    if opts.base.is_some() && Some(head) != head_now {
        return Err(Error::repo_msg("HEAD moved while the task was starting")
            .hint(format!("run 'git task start --mode patch {id}' again")));
    }
    let branch = repo.head_branch()?;
    let base_branch = branch
        .as_deref()
        .map(crate::task::BranchName::parse)
        .transpose()
        .map_err(|why| Error::input(format!("the branch checked out here: {why}")))?;
    let task_state = TaskState {
        id: id.clone(),
        mode: Mode::Patch,
        status: Status::Provisioning,
        branch: base_branch
            .clone()
            .unwrap_or_else(crate::task::BranchName::detached),
        base_branch: base_branch.clone(),
        base_commit: head.to_string(),
        worktree: workdir.display().to_string(),
        created: now(),
        pid: std::process::id(),
        setup: None,
        contract_commit: None,
    };
    let details = event::Started {
        mode: Mode::Patch,
        base: head.to_string(),
        base_branch: base_branch.clone(),
        branch: None,
        snapshot: Some(snap.to_string()),
        worktree: task_state.worktree.clone(),
        nonce: String::new(),
        restart_of: None,
    };
    let extra = vec![
        Update::create(
            layout::snapshot_ref(&id),
            snap,
            format!("git-task: snapshot of {id}"),
        ),
        Update::create(layout::base_ref(&id), head, format!("git-task: start {id}")),
    ];
    match record::create(repo, &task_state, &text, details, extra) {
        Ok(_) => {}
        Err(RefError::Conflict(msg)) => {
            if let Some(existing) = record::load(repo, &id)? {
                return Ok(Started::Existing(existing));
            }
            return Err(
                Error::repo_msg(msg).hint(format!("run 'git task start --mode patch {id}' again"))
            );
        }
        Err(RefError::Other(e)) => return Err(e),
    }
    let created = record::load_existing(repo, &id)?;
    if let Err(lost) = crate::claims::take_at_start(repo, &created, &opts.contract) {
        crate::recover::abandoned::roll_back(repo, settings, &created)?;
        return Err(lost);
    }
    resolve::write_mark(repo.git_dir(), &id)?;
    let mut provisioned = created.state.clone();
    provisioned.status = Status::Active;
    let details = Event::Provisioned(event::Provisioned::Patch {
        worktree: provisioned.worktree.clone(),
        snapshot: snap.to_string(),
    });
    let record = record::append(repo, &created, details, &provisioned, Vec::new())?;
    Ok(Started::Created(record))
}

/// How accepting a patch-mode task ended.
#[derive(Clone, Debug)]
pub enum Accepted {
    /// Accepted: `merged` appended, snapshot deleted, mark cleared.
    Done {
        /// The record after `merged`.
        record: Record,
        /// The checks that ran (empty when skipped).
        checks: Vec<Outcome>,
    },
    /// It was already accepted; nothing changed.
    Already(Record),
    /// The changes break the contract; nothing changed.
    Violation(Verdict),
    /// A check failed; nothing changed (a `checks` event records it).
    ChecksFailed(Vec<Outcome>),
}

/// Accepts the work of a patch-mode task in place (what `merge` does for patch mode).
///
/// Judges everything that differs from the snapshot (committed or not, untracked
/// included), runs the frozen checks in the worktree unless `run_checks` is
/// false, appends `merged`, deletes the snapshot ref and clears the mark. The
/// files, index and HEAD are left as they are.
pub fn accept(repo: &Repo, record: &Record, run_checks: bool) -> Result<Accepted> {
    let id = record.state.task_id();
    if record.state.mode != Mode::Patch {
        return Err(Error::input(format!(
            "task '{id}' is not a patch-mode task"
        )));
    }
    if record.state.status == Status::Merged {
        return Ok(Accepted::Already(record.clone()));
    }
    // The gate trusts nothing the agent can move with git (SPEC §7.4): the record's frozen
    // contract, and the snapshot its changes are measured from.
    if let Some(t) = record::frozen::verify(repo, record)? {
        return Err(Error::negative(format!("record_tampered: {}", t.why))
            .hint("the record was changed with git after the start; the gate judges only what git-task froze"));
    }
    let Some(snap) = snapshot::snapshot_commit(repo, &id)? else {
        return Err(
            Error::input(format!("task '{id}' has no snapshot left to accept"))
                .hint("'git task log' shows what happened to it"),
        );
    };
    let wt = worktree::open_at(std::path::Path::new(&record.state.worktree))?;
    let state = crate::snapshot::read(&wt)?;
    let verdict = crate::changes::judge_tree(repo, record, state.worktree_tree)?;
    if !verdict.is_clean() {
        return Ok(Accepted::Violation(verdict));
    }
    let run = match run_checks {
        true => record.frozen_checks().run(
            std::path::Path::new(&record.state.worktree),
            How::default(),
            &mut |_| {},
        )?,
        false => Run::not_run(true),
    };
    record::note(repo, &id, Event::checks(&run, Purpose::Merge))?;
    if !run.passed {
        return Ok(Accepted::ChecksFailed(run.commands));
    }
    let record = &record::load_existing(repo, &id)?;
    let mut merged = record.state.clone();
    merged.status = Status::Merged;
    let details = Event::Merged(event::Merged::Patch {
        mode: Mode::Patch,
        accepted: state.worktree_tree.to_string(),
        head: state.head.map(|h| h.to_string()),
        checks: (&run).into(),
    });
    let extra = vec![Update::delete(
        layout::snapshot_ref(&id),
        snap,
        format!("git-task: accept {id}"),
    )];
    let record = record::append(repo, record, details, &merged, extra)?;
    if resolve::read_mark(&wt).as_ref() == Some(&id) {
        resolve::clear_mark(wt.git_dir())?;
    }
    // The scratch directory goes with the task, as a merged worktree task's does.
    if crate::confine::settle(repo, &id).is_ok() {
        let _ = std::fs::remove_dir_all(layout::scratch_dir(repo.common_dir(), &id));
    }
    Ok(Accepted::Done {
        record,
        checks: run.commands,
    })
}

/// The commits a move of HEAD back to an older commit would leave behind, sorted by who made them.
#[derive(Clone, Debug, Default)]
pub struct LeftBehind {
    /// Made by the task itself, in its worktree (see [`left_behind`]).
    pub own: Vec<ObjectId>,
    /// Everything else: another task's merge, a commit that reached the branch from elsewhere.
    pub foreign: Vec<ObjectId>,
}

/// Sorts the commits reachable from `head` but not from `to` (what moving HEAD from `head` back
/// to `to` would take off `branch`) into the task's own and the others (SPEC §9).
///
/// The task's own commits are the ones `git commit` (plain, `--amend`, a concluded merge) or
/// `git task commit` made on `branch`, as the branch's reflog shows them (`commit…` entries;
/// `branch` is `HEAD` when the worktree is detached, whose reflog is the worktree's own). A git
/// commit made on a branch is always made where that branch is checked out, which for a
/// patch-mode task is its own worktree. Everything else is foreign: the merge gate landing
/// another task (`git-task: merge …`), a fetch, push or `update-ref` into the branch, a pull,
/// a fast-forward merge, and any move the reflog does not show at all. When in doubt a commit
/// is foreign, so a revert keeps it.
pub fn left_behind(
    wt: &Repo,
    branch: &str,
    head: Option<ObjectId>,
    to: ObjectId,
) -> Result<LeftBehind> {
    let mut out = LeftBehind::default();
    let Some(head) = head else {
        return Ok(out);
    };
    if head == to {
        return Ok(out);
    }
    let made_here = made_on(wt, branch)?;
    for id in objects::commits_not_reachable(wt, &[head], &[to], usize::MAX)? {
        if made_here.contains(&id) {
            out.own.push(id);
        } else {
            out.foreign.push(id);
        }
    }
    Ok(out)
}

/// Returns the commits the reflog of `branch` shows as made by a commit command on it.
fn made_on(wt: &Repo, branch: &str) -> Result<std::collections::HashSet<ObjectId>> {
    Ok(crate::git::refs::reflog_ids(wt, branch, "commit")?
        .into_iter()
        .collect())
}

/// Returns the paths the commits `commits` changed, each against its first parent (all its files for a root).
pub fn paths_changed_by(
    repo: &Repo,
    commits: &[ObjectId],
) -> Result<std::collections::BTreeSet<String>> {
    let mut paths = std::collections::BTreeSet::new();
    for &c in commits {
        let old = match objects::commit_parents(repo, c)?.first() {
            Some(&p) => objects::commit_tree(repo, p)?,
            None => objects::empty_tree(repo),
        };
        let new = objects::commit_tree(repo, c)?;
        paths.extend(
            diff::tree_to_tree(repo, old, new)?
                .into_iter()
                .map(|c| c.path),
        );
    }
    Ok(paths)
}

/// The snapshot update that keeps a patch-mode task's start in step when the merge gate lands
/// other work on the branch checked out in its worktree (moving `branch` from `old_tip` to
/// `new_tip`, and the worktree's index and files with it); `None` when no patch-mode task is
/// active there, or when it cannot follow.
///
/// The new snapshot is the old one with the landing applied: HEAD `new_tip`, and in the index
/// and the files each path the landing changed takes `new_tip`'s entry. The landing's work is
/// then not the task's (`check`, `merge`, `status`, `list` measure from the snapshot), and a
/// `revert` never undoes it. It follows only where the snapshot held exactly `old_tip`'s entry
/// at every path the landing changed; otherwise (the task's own commit touched such a path) the
/// snapshot stays: the landing then counts as the task's (a refusal, never a hole), and a
/// `revert` keeps HEAD and refuses to put back what both changed. The gate includes the update
/// in its ref transaction (and its roll back).
pub fn follow_landing(
    repo: &Repo,
    worktree: &std::path::Path,
    branch: &str,
    old_tip: ObjectId,
    new_tip: ObjectId,
) -> Result<Option<Update>> {
    let Some(mark) = resolve::read_mark_file(worktree::open_at(worktree)?.git_dir()) else {
        return Ok(None);
    };
    let Some(record) = record::load(repo, &mark.id)? else {
        return Ok(None);
    };
    let same_place =
        std::fs::canonicalize(&record.state.worktree).ok() == std::fs::canonicalize(worktree).ok();
    if record.state.mode != Mode::Patch
        || !record.state.status.is_live()
        || record.state.branch != branch
        || !same_place
    {
        return Ok(None);
    }
    let Some(snap) = read_snapshot(repo, &mark.id)? else {
        return Ok(None);
    };
    let (old_tree, new_tree) = (
        objects::commit_tree(repo, old_tip)?,
        objects::commit_tree(repo, new_tip)?,
    );
    let landed = diff::tree_to_tree(repo, old_tree, new_tree)?;
    for c in &landed {
        if entry_in(repo, snap.index_tree, &c.path)? != c.old
            || entry_in(repo, snap.worktree_tree, &c.path)? != c.old
        {
            return Ok(None);
        }
    }
    let edits: Vec<objects::TreeEdit<'_>> = landed
        .iter()
        .map(|c| match c.new {
            Some((kind, oid)) => objects::TreeEdit::Upsert(c.path.as_str(), kind, oid),
            None => objects::TreeEdit::Remove(c.path.as_str()),
        })
        .collect();
    let state = WorktreeState {
        head: Some(new_tip),
        head_tree: new_tree,
        index_tree: objects::edit_tree(repo, snap.index_tree, &edits)?,
        worktree_tree: objects::edit_tree(repo, snap.worktree_tree, &edits)?,
        changed: Vec::new(),
        nested: Vec::new(),
    };
    let commit = write_snapshot(repo, &mark.id, &state)?;
    Ok(Some(Update::update(
        layout::snapshot_ref(&mark.id),
        snap.commit,
        commit,
        format!("git-task: {} follows the merge into {branch}", mark.id),
    )))
}
