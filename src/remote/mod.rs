//! Tasks across machines through any git remote (SPEC §6 `push`, `fetch`, `adopt`,
//! `merge --remote`). No server of ours: git's own transport moves the refs.
//!
//! * **Fetch** ([`fetch`]) brings the remote's branches, task refs and notes into
//!   `refs/remotes/<R>/…` (`task::layout::fetch_refspecs`): nothing local is ever overwritten.
//! * **Records are append-only across machines.** A task's record on the remote and here are
//!   compared ([`relation`]): one contains the other, or they diverged. A record that is behind
//!   is fast-forwarded; two that diverged are reconciled by replaying this machine's events on
//!   top of the remote's chain ([`reconcile`]); when the remote's own events ended the task
//!   (merged, removed), they are kept as history after them and the state stays the remote's.
//! * **Notes are merged, never overwritten** (`git notes merge -s cat_sort_uniq` semantics,
//!   `git::refs::note::merge`), before anything is pushed on top of them.
//! * **Every push is atomic with a lease per ref** (`git push --atomic --force-with-lease`):
//!   a ref that moved on the remote since the fetch makes the whole push fail, and the caller
//!   starts again from the fetch.
//!
//! | step | file |
//! |---|---|
//! | fetch, records and notes reconciled, remote tasks listed | `mod.rs` |
//! | `push` | `push.rs` |
//! | `adopt` | `adopt.rs` |
//! | `merge --remote` | `merge.rs` |

pub mod adopt;
pub mod merge;
pub mod push;

use crate::error::{Error, Result};
use crate::git::refs::{self, RefError, Update};
use crate::git::{cli, objects, ObjectId, Repo};
use crate::record;
use crate::task::{layout, Status, TaskId, TaskState};

/// The remote used when none is named.
pub const DEFAULT_REMOTE: &str = "origin";

/// Checks that `name` (default `origin`) is a configured remote whose name can head a ref
/// namespace, and returns it.
pub fn resolve(repo: &Repo, name: Option<&str>) -> Result<String> {
    let name = name.unwrap_or(DEFAULT_REMOTE);
    let valid = !name.is_empty()
        && !name.contains('/')
        && refs::is_valid_name(&format!("refs/remotes/{name}/x"));
    if !valid || repo.config_string(&format!("remote.{name}.url")).is_none() {
        return Err(Error::input(format!("'{name}' is not a configured remote"))
            .hint("name one of 'git remote' (add it with 'git remote add <name> <url>')"));
    }
    Ok(name.to_owned())
}

/// Where `git fetch` and `git push` run: the root of this worktree, where the user's own `git`
/// would resolve a remote given as a relative path; the git dir of a bare repository.
fn git_dir(repo: &Repo) -> &std::path::Path {
    repo.workdir().unwrap_or_else(|| repo.common_dir())
}

/// Fetches the remote's branches, task refs and notes into `refs/remotes/<remote>/…`
/// (`git fetch`, see `git::cli`); a ref lock held by a concurrent fetch here is waited for.
pub fn fetch(repo: &Repo, remote: &str) -> Result<()> {
    let specs = layout::fetch_refspecs(remote);
    let mut tries = 0;
    loop {
        let run = cli::fetch(git_dir(repo), remote, &specs)?;
        if run.success {
            return Ok(());
        }
        tries += 1;
        let busy = run.stderr.contains("cannot lock ref") || run.stderr.contains(".lock");
        if !busy || tries >= 20 {
            return Err(Error::repo_msg(format!(
                "could not fetch from '{remote}': {}",
                run.stderr.trim()
            ))
            .hint(format!("check the remote: git fetch {remote}")));
        }
        std::thread::sleep(std::time::Duration::from_millis(50 * tries));
    }
}

/// `git task fetch`: [`fetch`], then the remote's tasks as [`list`] reads them.
pub fn fetch_tasks(repo: &Repo, remote: &str) -> Result<Vec<RemoteTask>> {
    fetch(repo, remote)?;
    list(repo, remote)
}

/// How a ref here relates to its copy fetched from the remote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relation {
    /// Neither exists.
    Neither,
    /// Only here.
    LocalOnly(ObjectId),
    /// Only on the remote.
    RemoteOnly(ObjectId),
    /// Both at the same commit.
    Same(ObjectId),
    /// The remote's is an ancestor of ours: ours has more.
    Ahead { local: ObjectId, remote: ObjectId },
    /// Ours is an ancestor of the remote's: the remote has more.
    Behind { local: ObjectId, remote: ObjectId },
    /// Each has commits the other lacks.
    Diverged { local: ObjectId, remote: ObjectId },
}

/// Compares `local` with `remote` by ancestry.
pub fn relation(
    repo: &Repo,
    local: Option<ObjectId>,
    remote: Option<ObjectId>,
) -> Result<Relation> {
    Ok(match (local, remote) {
        (None, None) => Relation::Neither,
        (Some(l), None) => Relation::LocalOnly(l),
        (None, Some(r)) => Relation::RemoteOnly(r),
        (Some(l), Some(r)) if l == r => Relation::Same(l),
        (Some(l), Some(r)) => match objects::merge_base(repo, l, r)? {
            Some(b) if b == r => Relation::Ahead {
                local: l,
                remote: r,
            },
            Some(b) if b == l => Relation::Behind {
                local: l,
                remote: r,
            },
            _ => Relation::Diverged {
                local: l,
                remote: r,
            },
        },
    })
}

/// What [`reconcile`] did to a task's record here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Reconciled {
    /// Nothing to do: no record here, or it already contains the remote's.
    Kept,
    /// The record here was behind and now is the remote's.
    FastForwarded,
    /// Both had new events: this machine's were replayed on top of the remote's.
    Replayed,
}

/// Makes the record of `id` here contain the remote's (just fetched), appending only: fast-forward
/// when it is behind, replay this machine's events on the remote's chain when they diverged.
///
/// When the remote's own new events merged or removed the task, this machine's events are kept
/// after them as history, but the task's state stays the remote's: the other machine finished it.
pub fn reconcile(repo: &Repo, remote: &str, id: &TaskId) -> Result<Reconciled> {
    let name = layout::record_ref(id);
    let local = repo.find_ref(&name)?;
    let theirs = repo.find_ref(&layout::remote_record_ref(remote, id))?;
    let (update, how) = match relation(repo, local, theirs)? {
        Relation::Behind { local, remote: r } => (
            Update::update(
                &name,
                local,
                r,
                format!("git-task: fetch {id} from {remote}"),
            ),
            Reconciled::FastForwarded,
        ),
        Relation::Diverged { local, remote: r } => {
            let state = record::read_state(repo, r)?;
            // The remote's own events ended the task: this machine's are kept as history
            // after them, but the state stays the remote's.
            let ended = matches!(state.status, Status::Merged | Status::Removed);
            let replayed = replay(repo, id, local, r, ended.then_some(&state))?;
            (
                Update::update(
                    &name,
                    local,
                    replayed,
                    format!("git-task: reconcile {id} with {remote}"),
                ),
                Reconciled::Replayed,
            )
        }
        _ => return Ok(Reconciled::Kept),
    };
    match refs::apply(repo, vec![update]) {
        Ok(()) => Ok(how),
        Err(RefError::Conflict(_)) => Err(Error::repo_msg(format!(
            "the record of '{id}' changed here while it was reconciled with '{remote}'"
        ))
        .hint("run the command again")),
        Err(RefError::Other(e)) => Err(e),
    }
}

/// Writes this machine's record events since the common ancestor (first parents) again, in
/// order, on top of the remote's record `theirs`; returns the new tip. With `keep`, each
/// keeps `theirs`' state (tree and the state in its message) instead of its own.
fn replay(
    repo: &Repo,
    id: &TaskId,
    ours: ObjectId,
    theirs: ObjectId,
    keep: Option<&TaskState>,
) -> Result<ObjectId> {
    let base = objects::merge_base(repo, ours, theirs)?;
    let mut mine = Vec::new();
    let mut next = Some(ours);
    while let Some(c) = next {
        if Some(c) == base {
            break;
        }
        mine.push(c);
        next = objects::commit_parents(repo, c)?.first().copied();
    }
    let mut cur = theirs;
    let their_tree = objects::commit_tree(repo, theirs)?;
    for c in mine.into_iter().rev() {
        let (tree, message) = match keep {
            Some(state) => (
                their_tree,
                record::message_with_state(&objects::commit_message(repo, c)?, state)?,
            ),
            None => (
                objects::commit_tree(repo, c)?,
                objects::commit_message(repo, c)?,
            ),
        };
        let new = objects::write_own_commit(repo, tree, &[cur], &message)?;
        record::frozen::carry(repo, id, c, new)?;
        cur = new;
    }
    Ok(cur)
}

/// Merges the remote's notes (just fetched) into `refs/notes/tasks` here; returns the remote's
/// notes commit (the lease for pushing them back), if it has any.
pub fn merge_notes(repo: &Repo, remote: &str) -> Result<Option<ObjectId>> {
    let Some(theirs) = repo.find_ref(&layout::remote_notes_ref(remote))? else {
        return Ok(None);
    };
    for _ in 0..10 {
        let ours = repo.find_ref(layout::NOTES_REF)?;
        let merged = refs::note::merge(
            repo,
            ours,
            theirs,
            &format!("git-task: merge notes from {remote}"),
        )?;
        if Some(merged) == ours {
            return Ok(Some(theirs));
        }
        let update = match ours {
            Some(o) => Update::update(layout::NOTES_REF, o, merged, "git-task: merge notes"),
            None => Update::create(layout::NOTES_REF, merged, "git-task: merge notes"),
        };
        match refs::apply(repo, vec![update]) {
            Ok(()) => return Ok(Some(theirs)),
            Err(RefError::Conflict(_)) => continue,
            Err(RefError::Other(e)) => return Err(e),
        }
    }
    Err(
        Error::repo_msg("the notes kept changing while they were merged")
            .hint("run the command again"),
    )
}

/// A task as the remote has it (its record fetched into `refs/remotes/<R>/tasks/`).
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct RemoteTask {
    /// The task id.
    pub id: String,
    /// Its state on the remote.
    pub state: TaskState,
    /// How the record here relates to the remote's: `none` (not here), `same`, `ahead`, `behind`, `diverged`.
    #[schemars(extend("enum" = ["none", "same", "ahead", "behind", "diverged"]))]
    pub here: &'static str,
}

/// Lists the tasks whose records were fetched from `remote` (no network: run [`fetch`] first).
pub fn list(repo: &Repo, remote: &str) -> Result<Vec<RemoteTask>> {
    let ns = layout::remote_tasks_ns(remote);
    let mut out = Vec::new();
    for (name, tip) in repo.refs_under(&ns)? {
        let Some(id) = name
            .strip_prefix(&ns)
            .and_then(|rest| rest.strip_suffix("/record"))
            .and_then(|id| TaskId::parse(id).ok())
        else {
            continue;
        };
        let state = record::read_state(repo, tip)?;
        let here = match relation(repo, repo.find_ref(&layout::record_ref(&id))?, Some(tip))? {
            Relation::RemoteOnly(_) | Relation::Neither => "none",
            Relation::Same(_) => "same",
            Relation::Ahead { .. } | Relation::LocalOnly(_) => "ahead",
            Relation::Behind { .. } => "behind",
            Relation::Diverged { .. } => "diverged",
        };
        out.push(RemoteTask {
            id: id.to_string(),
            state,
            here,
        });
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}

/// Sets the fetched copies of the refs a successful push set (`git push` does so only for
/// branches with a configured fetch refspec).
pub fn record_pushed(repo: &Repo, remote: &str, pushed: &[cli::PushRef]) -> Result<()> {
    for p in pushed {
        let Some(copy) = layout::remote_copy(remote, &p.name) else {
            continue;
        };
        if p.new.is_none() && repo.find_ref(&copy)?.is_none() {
            continue;
        }
        let update = Update {
            name: copy,
            new: p.new,
            expect: refs::Expect::Any,
            message: format!("git-task: pushed to {remote}"),
        };
        // Only a cache of the remote: a concurrent fetch that moved it first is as good.
        let _ = refs::apply(repo, vec![update]);
    }
    Ok(())
}

/// Whether a failed atomic push failed only because a ref moved on the remote: a lease that
/// did not hold against the refs the remote advertised (`stale info`), or the remote's own
/// compare-and-swap when the ref moved after that (`cannot lock ref …: is at … but expected …`).
pub fn lease_failed(run: &cli::GitRun) -> bool {
    run.stdout.contains("(stale info)") || run.stderr.contains("cannot lock ref")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(stdout: &str, stderr: &str) -> cli::GitRun {
        cli::GitRun {
            success: false,
            stdout: stdout.into(),
            stderr: stderr.into(),
        }
    }

    #[test]
    fn a_moved_remote_is_told_from_a_refusal() {
        // The lease failed against what the remote advertised.
        let stale = "!\t1:refs/heads/main\t[rejected] (stale info)\nDone\n";
        assert!(lease_failed(&run(stale, "")));
        // The remote's own compare-and-swap failed: the ref moved after it advertised it.
        let moved = "remote: error: cannot lock ref 'refs/heads/main': is at 1 but expected 2\n";
        assert!(lease_failed(&run(
            "!\t1:refs/heads/main\t[remote rejected] (atomic transaction failed)\n",
            moved
        )));
        // A hook's refusal or a missing right is not a race: no retry.
        let hook = "!\t1:refs/heads/main\t[remote rejected] (pre-receive hook declined)\n";
        assert!(!lease_failed(&run(hook, "")));
        assert!(!lease_failed(&run(
            "",
            "fatal: could not read from remote repository"
        )));
    }
}
