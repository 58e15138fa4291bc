//! `git task adopt`: a task fetched from another machine gets its record, branch and frozen
//! contract here, and a worktree at this machine's `task.worktreeDir`, so that `exec`, `path`,
//! the hooks and `merge` work as for a task started here.
//!
//! Order, for a kill at any instant: the refs first, in one transaction (the record and task
//! refs are copies of the remote's, the branch the remote's tip: harmless alone, and a repeated
//! `adopt` goes on from them); then the digest of the frozen contract (trusted as fetched);
//! then the worktree, with a start's own steps (`lifecycle::start::provision_existing`), which
//! removes it again on failure, under a crash-journal entry (`Step::Provision`: recovery
//! removes a worktree a killed `adopt` left half made); last the `provisioned` event naming it.

use super::{fetch, reconcile, relation, Reconciled, Relation};
use crate::config::Settings;
use crate::error::Error;
use crate::git::refs::Update;
use crate::git::{worktree, Repo};
use crate::lifecycle::start::StartError;
use crate::record::{self, Record};
use crate::task::{layout, Mode, TaskId};
use std::path::PathBuf;

/// What [`adopt`] did.
#[derive(Debug)]
pub struct Adopted {
    /// The task, as recorded here now.
    pub record: Record,
    /// Whether it already had a worktree here (nothing was made).
    pub already: bool,
    /// What reconciling its record with the remote's did.
    pub reconciled: Reconciled,
}

/// Adopts task `id` from `remote` (fetched first).
pub fn adopt(
    repo: &Repo,
    settings: &Settings,
    remote: &str,
    id: &TaskId,
    progress: &mut dyn FnMut(crate::lifecycle::start::Phase, u64, u64),
) -> std::result::Result<Adopted, StartError> {
    fetch(repo, remote)?;
    let theirs = repo
        .find_ref(&layout::remote_record_ref(remote, id))?
        .ok_or_else(|| {
            Error::input(format!("'{remote}' has no task '{id}'"))
                .hint(format!("list its tasks: git task list --remote {remote}"))
        })?;
    // Untrusted input: nothing is made from a record that fails its checks (its branch is
    // exactly `<prefix><id>`, checked out nowhere, the base of no task).
    let place = layout::worktree_path(&settings.worktree_dir, id);
    let remote_state = super::check_remote(
        repo,
        &super::Here::read(repo)?,
        Some(&settings.branch_prefix),
        id,
        theirs,
        Some(&place),
    )
    .map_err(|why| {
        Error::input(format!("refusing to adopt '{id}' from '{remote}': {why}")).hint(format!(
            "nothing was changed; see what the remote holds: git log -p {}",
            layout::remote_record_ref(remote, id)
        ))
    })?;
    if remote_state.mode == Mode::Patch {
        return Err(Error::input(format!(
            "task '{id}' works in patch mode in another machine's checkout; it has no branch to adopt"
        ))
        .into());
    }
    let mut updates = Vec::new();
    let message = format!("git-task: adopt {id} from {remote}");
    let reconciled = match repo.find_ref(&layout::record_ref(id))? {
        Some(_) => reconcile(repo, remote, id)?,
        None => {
            updates.push(Update::create(
                layout::record_ref(id),
                theirs,
                message.clone(),
            ));
            Reconciled::FastForwarded
        }
    };
    // The task's other refs (base, checkpoints, attempts) come along where this machine has none;
    // only commits (anything else there is no task ref git-task wrote).
    let ns = format!("{}{id}/", layout::remote_tasks_ns(remote));
    for (name, tip) in repo.refs_under(&ns)? {
        let rest = name.strip_prefix(&ns).unwrap_or_default();
        let local = format!("{}{rest}", layout::task_prefix(id));
        let commit = crate::git::objects::commit_tree(repo, tip).is_ok();
        if rest != "record" && commit && repo.find_ref(&local)?.is_none() {
            updates.push(Update::create(local, tip, message.clone()));
        }
    }
    let branch = remote_state.branch.clone();
    let their_branch = repo.find_ref(&layout::remote_branch_ref(remote, &branch))?;
    match relation(repo, repo.find_ref(&branch)?, their_branch)? {
        Relation::RemoteOnly(tip) => updates.push(Update::create(&branch, tip, message.clone())),
        Relation::Behind { local, remote: r } => {
            updates.push(Update::update(&branch, local, r, message.clone()))
        }
        Relation::Neither => {
            return Err(Error::input(format!(
                "the branch of task '{id}' ('{}') is on neither '{remote}' nor here",
                remote_state.branch_short()
            ))
            .hint(format!(
                "push it from the machine that has it: git task push {id} --remote {remote}"
            ))
            .into())
        }
        Relation::Diverged { .. } => {
            return Err(Error::input(format!(
                "branch '{}' here and on '{remote}' hold different work",
                remote_state.branch_short()
            ))
            .hint(format!(
                "compare them: git log --oneline --left-right {}...{}",
                branch,
                layout::remote_branch_ref(remote, &branch)
            ))
            .into())
        }
        Relation::Same(_) | Relation::Ahead { .. } | Relation::LocalOnly(_) => {}
    }
    // The record as fetched names the other machine's worktree: this machine's is where it
    // will be made (`record::place`), never that one, even if the worktree is never made.
    if record::place::get(repo, id.as_str()).is_none() {
        if let Ok(state) = record::read_state(repo, theirs) {
            record::place::note(
                repo,
                &crate::task::TaskState {
                    worktree: place.display().to_string(),
                    ..state
                },
            );
        }
    }
    crate::ledger::apply(repo, crate::ledger::Mover::GitTask, updates).map_err(Error::from)?;
    let rec = record::load_existing(repo, id)?;
    if !rec.state.status.is_live() {
        return Err(Error::input(format!(
            "task '{id}' is {}; there is no work to adopt",
            rec.state.status
        ))
        .hint(format!("see its history: git task log {id}"))
        .into());
    }
    record::frozen::adopt(repo, &rec)?;
    if let Some(w) = worktree::find_by_branch(repo, &rec.state.branch)?.filter(|w| w.exists()) {
        let mut record = rec;
        record.state.worktree = w.path.display().to_string();
        return Ok(Adopted {
            record,
            already: true,
            reconciled,
        });
    }
    let path: PathBuf = layout::worktree_path(&settings.worktree_dir, id);
    let free = match std::fs::read_dir(&path) {
        Ok(mut entries) => entries.next().is_none(),
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    };
    if !free {
        return Err(Error::input(format!(
            "'{}' already exists and is not empty",
            path.display()
        ))
        .hint("move that directory away, or set task.worktreeDir to another place")
        .into());
    }
    // Until `provisioned` names it, a kill leaves a half-made worktree for recovery to remove.
    let journal = crate::git::journal::Journal::begin(
        repo,
        crate::git::journal::Step::Provision {
            task: id.to_string(),
            worktree: path.clone(),
        },
    )?;
    // The remote's setup command is never run here: this machine's own (`task.setup`) is.
    let mut rec = rec;
    rec.state.setup = settings.setup.clone();
    let record = crate::lifecycle::start::provision_existing(repo, &rec, &path, progress)?;
    drop(journal);
    Ok(Adopted {
        record,
        already: false,
        reconciled,
    })
}
