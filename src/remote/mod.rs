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
//! * **Remote records are untrusted input** ([`check_remote`]): anyone who can push to the
//!   remote can write them. Every field that steers this machine is checked (the id is the
//!   ref's, the branch exactly `<prefix><id>`, never a checked-out branch or a task's base); a
//!   bad record is reported (`skipped`) without failing the others, and only a checked record's
//!   events are taken in. A remote `merged` or `removed` never ends a task that is live here
//!   unless it is proven ([`proven_end`]): the landing it names is on the fetched target and
//!   the branch here holds nothing beyond what landed; otherwise it is reported and the record
//!   here stays as it is. A remote record never moves this machine's worktree: the path in it
//!   is the other machine's, and this machine's is kept beside the refs (`record::place`).
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
pub mod ended;
pub mod merge;
pub mod push;

use crate::error::{Error, Result};
use crate::git::refs::{self, RefError, Update};
use crate::git::{cli, objects, ObjectId, Repo};
use crate::record;
use crate::record::event::{self, Event};
use crate::task::{layout, Mode, Status, TaskId, TaskState};

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

/// `git task fetch`: [`fetch`], then the remote's tasks as [`list_checked`] reads them, with
/// the records that were skipped; and for each task live here that another machine merged,
/// this machine's work saved and its worktree and branch removed ([`ended::settle`]), the
/// record then reconciled.
pub fn fetch_tasks(
    repo: &Repo,
    prefix: &str,
    remote: &str,
) -> Result<(Vec<RemoteTask>, Vec<Skipped>, Vec<ended::MergedElsewhere>)> {
    fetch(repo, remote)?;
    let (tasks, skipped) = list_checked(repo, prefix, remote)?;
    let mut merged = Vec::new();
    for t in &tasks {
        if t.here == "none" || t.state.status != Status::Merged {
            continue;
        }
        let Ok(id) = TaskId::parse(&t.id) else {
            continue;
        };
        if let Some(done) = ended::settle(repo, remote, &id)? {
            if done.left.is_none() {
                reconcile(repo, remote, &id)?;
            }
            merged.push(done);
        }
    }
    Ok((tasks, skipped, merged))
}

/// A remote record that was not taken, and why (reported; the others go on).
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Skipped {
    /// The task id its ref names (the ref's name after `tasks/` when that is no task id).
    pub task: String,
    /// Why it was not taken.
    pub why: String,
}

/// What a remote record is checked against here, read once for many records: the worktrees
/// and their branches, the tasks (their own worktrees and bases), this worktree's branch.
pub struct Here {
    worktrees: Vec<crate::git::worktree::Linked>,
    records: Vec<record::Record>,
    head: Option<String>,
}

impl Here {
    /// Nothing to check against: for a record whose branch is compared with the task's own
    /// record here instead (`reconcile`), which reads no other task nor worktree (those may be
    /// changing under concurrent commands).
    pub fn nothing() -> Here {
        Here {
            worktrees: Vec::new(),
            records: Vec::new(),
            head: None,
        }
    }

    /// Reads it.
    pub fn read(repo: &Repo) -> Result<Here> {
        Ok(Here {
            worktrees: crate::git::worktree::list(repo)?,
            records: record::load_all(repo).map(|(r, _)| r).unwrap_or_default(),
            head: repo.head_branch().ok().flatten(),
        })
    }
}

/// Reads and checks the remote's record of `id` at `tip`, fetched and untrusted: it must be a
/// record commit whose state is task `id`'s, on exactly branch `<prefix><id>` (worktree mode;
/// `prefix` `None`: any branch, checked by the caller), a branch checked out nowhere here but
/// in that task's own worktree (or at `own_place`, where `adopt` makes it) and the base of no
/// task here. `Err` says what is wrong.
pub fn check_remote(
    repo: &Repo,
    here: &Here,
    prefix: Option<&str>,
    id: &TaskId,
    tip: ObjectId,
    own_place: Option<&std::path::Path>,
) -> std::result::Result<TaskState, String> {
    let state = record::read_state(repo, tip)
        .map_err(|e| format!("its record {tip} cannot be read: {}", e.message()))?;
    if state.id != id.as_str() {
        return Err(format!("its record holds the state of task '{}'", state.id));
    }
    if state.base_branch.as_deref() == Some(state.branch.as_str()) {
        return Err(format!(
            "its record names '{}' as both its branch and its base",
            state.branch
        ));
    }
    if state.mode != Mode::Worktree {
        return Ok(state);
    }
    if let Some(prefix) = prefix {
        let want = layout::branch_ref(prefix, id);
        if state.branch != want {
            return Err(format!(
                "its record names branch '{}', not '{want}'",
                state.branch
            ));
        }
    }
    let own = here.records.iter().find(|r| r.state.id == id.as_str());
    let same = |a: &std::path::Path, b: &std::path::Path| {
        crate::git::fs::canonical(a) == crate::git::fs::canonical(b)
    };
    for w in &here.worktrees {
        if w.branch.as_deref() != Some(state.branch.as_str()) {
            continue;
        }
        let its_own = own.is_some_and(|r| same(std::path::Path::new(&r.state.worktree), &w.path))
            || own_place.is_some_and(|p| same(p, &w.path));
        if !its_own {
            return Err(format!(
                "its branch '{}' is checked out in '{}'",
                state.branch,
                w.path.display()
            ));
        }
    }
    if here.head.as_deref() == Some(state.branch.as_str()) && own.is_none() {
        return Err(format!("its branch '{}' is checked out here", state.branch));
    }
    if let Some(r) = here
        .records
        .iter()
        .find(|r| r.state.base_branch.as_deref() == Some(state.branch.as_str()))
    {
        return Err(format!(
            "its branch '{}' is the base of task '{}'",
            state.branch, r.state.id
        ));
    }
    Ok(state)
}

/// Whether the remote's record `theirs` (state `state`, which says the task ended) proves it
/// for this machine's task `mine` (record tip `local`): a `merged` event among the remote's new
/// events names the branch tip that landed, the branch here holds nothing beyond it, and the
/// commit it names is on the fetched copy of its target. `Err` says what is not proven.
pub fn proven_end(
    repo: &Repo,
    remote: &str,
    mine: &TaskState,
    local: ObjectId,
    theirs: ObjectId,
    state: &TaskState,
) -> std::result::Result<(), String> {
    if state.status != Status::Merged {
        return Err("a removal on another machine leaves this machine's worktree".into());
    }
    let base = objects::merge_base(repo, local, theirs).ok().flatten();
    let mut next = Some(theirs);
    let mut merged = None;
    while let Some(c) = next {
        if Some(c) == base {
            break;
        }
        let message = objects::commit_message(repo, c).map_err(|e| e.message().to_owned())?;
        if let Event::Merged(event::Merged::Branch {
            commit,
            into,
            task_tip,
            ..
        }) = event::Entry::parse(c.to_string(), &message).event
        {
            merged = Some((commit, into, task_tip));
            break;
        }
        next = objects::commit_parents(repo, c)
            .map_err(|e| e.message().to_owned())?
            .first()
            .copied();
    }
    let Some((commit, into, task_tip)) = merged else {
        return Err("no merge event says what landed".into());
    };
    let landed: ObjectId = task_tip
        .parse()
        .map_err(|_| "its merge event names no branch tip".to_owned())?;
    if let Some(tip) = repo.find_ref(&mine.branch).ok().flatten() {
        let contained =
            tip == landed || objects::merge_base(repo, tip, landed).ok().flatten() == Some(tip);
        if !contained {
            return Err(format!(
                "'{}' here holds commits that did not land",
                mine.branch_short()
            ));
        }
    }
    if let Some(commit) = commit {
        let commit: ObjectId = commit
            .parse()
            .map_err(|_| "its merge event names no commit".to_owned())?;
        let target = repo
            .find_ref(&layout::remote_branch_ref(remote, &into))
            .ok()
            .flatten()
            .ok_or_else(|| format!("'{remote}' has no branch '{into}'"))?;
        let on_target = target == commit
            || objects::merge_base(repo, commit, target).ok().flatten() == Some(commit);
        if !on_target {
            return Err(format!(
                "the commit it names is not on '{remote}'s '{into}'"
            ));
        }
    }
    Ok(())
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
    /// The remote's record was not taken in (it failed its checks, or it would end a task that
    /// is live here, unproven): the record here is unchanged; the reason is reported.
    Refused,
}

/// Makes the record of `id` here contain the remote's (just fetched), appending only: fast-forward
/// when it is behind, replay this machine's events on the remote's chain when they diverged.
///
/// When the remote's own new events merged or removed the task, this machine's events are kept
/// after them as history, with the remote's status: the other machine finished it. Unless that
/// ending is proven ([`proven_end`]), a task live here is not ended: nothing is taken in
/// ([`Reconciled::Refused`]). Nothing else of the remote's state is taken.
pub fn reconcile(repo: &Repo, remote: &str, id: &TaskId) -> Result<Reconciled> {
    Ok(reconcile_why(repo, remote, id)?.0)
}

/// [`reconcile`], with why the remote's record was refused when it was.
pub fn reconcile_why(
    repo: &Repo,
    remote: &str,
    id: &TaskId,
) -> Result<(Reconciled, Option<String>)> {
    let name = layout::record_ref(id);
    let local = repo.find_ref(&name)?;
    let theirs = repo.find_ref(&layout::remote_record_ref(remote, id))?;
    let refused = |why: String| {
        Ok((
            Reconciled::Refused,
            Some(format!(
                "the record of '{id}' on '{remote}' was not taken: {why}"
            )),
        ))
    };
    // Checked before anything else is read of it (a blob there must not fail the command).
    // The branch is compared with this record's own below (the prefix may have changed).
    let state = match (local, theirs) {
        (Some(l), Some(r)) if l != r => {
            match check_remote(repo, &Here::nothing(), None, id, r, None) {
                Ok(state) => state,
                Err(why) => return refused(why),
            }
        }
        _ => return Ok((Reconciled::Kept, None)),
    };
    let (local, r, behind) = match relation(repo, local, theirs)? {
        Relation::Behind { local, remote: r } => (local, r, true),
        Relation::Diverged { local, remote: r } => (local, r, false),
        _ => return Ok((Reconciled::Kept, None)),
    };
    let mine = record::load_existing(repo, id)?;
    for (field, theirs, ours) in [
        (
            "mode",
            state.mode.as_str().to_owned(),
            mine.state.mode.as_str().to_owned(),
        ),
        (
            "branch",
            state.branch.to_string(),
            mine.state.branch.to_string(),
        ),
        (
            "base branch",
            state
                .base_branch
                .as_ref()
                .map(String::from)
                .unwrap_or_default(),
            mine.state
                .base_branch
                .as_ref()
                .map(String::from)
                .unwrap_or_default(),
        ),
        // A setup command is run by `reset` and `adopt`: never one the remote chose.
        (
            "setup command",
            state.setup.clone().unwrap_or_default(),
            mine.state.setup.clone().unwrap_or_default(),
        ),
        (
            "start time",
            state.created.to_string(),
            mine.state.created.to_string(),
        ),
    ] {
        if theirs != ours {
            return refused(format!(
                "it changes the task's {field} ('{ours}' here, '{theirs}' there)"
            ));
        }
    }
    let ended = matches!(state.status, Status::Merged | Status::Removed);
    // Of the statuses, only an ending (below) and a drop are taken from another machine.
    let taken = state.status == mine.state.status
        || ended
        || (state.status == Status::Dropped && mine.state.status == Status::Active);
    if behind && !taken {
        return refused(format!(
            "it says the task is {}, but it is {} here",
            state.status, mine.state.status
        ));
    }
    if ended && mine.state.status.is_live() {
        if let Err(why) = proven_end(repo, remote, &mine.state, local, r, &state) {
            return refused(format!(
                "it says the task was {}, but it is live here and {why}; if it is done, end it here: git task remove {id}",
                state.status
            ));
        }
    }
    // The remote's record carries the worktree of the machine that wrote it: this machine's
    // stays on file (`record::place`), and no event is written to move it back.
    record::place::keep(repo, &mine.state);
    let update = if behind {
        Update::update(
            &name,
            local,
            r,
            format!("git-task: fetch {id} from {remote}"),
        )
    } else {
        // The remote's own events ended the task: this machine's are kept as history after
        // them, with the remote's status and everything else as it is here.
        let keep = ended.then(|| TaskState {
            status: state.status,
            ..mine.state.clone()
        });
        let replayed = replay(repo, id, local, r, keep.as_ref())?;
        Update::update(
            &name,
            local,
            replayed,
            format!("git-task: reconcile {id} with {remote}"),
        )
    };
    let how = if behind {
        Reconciled::FastForwarded
    } else {
        Reconciled::Replayed
    };
    match crate::ledger::apply(repo, crate::ledger::Mover::GitTask, vec![update]) {
        Ok(()) => Ok((how, None)),
        Err(RefError::Conflict(_)) => Err(Error::repo_msg(format!(
            "the record of '{id}' changed here while it was reconciled with '{remote}'"
        ))
        .hint("run the command again")),
        Err(RefError::Other(e)) => Err(e),
    }
}

/// Writes this machine's record events since the common ancestor (first parents) again, in
/// order, on top of the remote's record `theirs`; returns the new tip. With `keep`, each
/// carries that state (in its `task.toml` and its message) instead of its own.
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
    // The kept state goes into the tree too (`task.toml`, what loading the record reads),
    // beside this machine's own frozen contract: nothing else of the remote's is taken.
    let kept_tree = |c: ObjectId, state: &TaskState| -> Result<ObjectId> {
        let text = toml::to_string(state).map_err(|e| Error::repo_msg(e.to_string()))?;
        let blob = objects::write_blob(repo, text.as_bytes())?;
        objects::edit_tree(
            repo,
            objects::commit_tree(repo, c)?,
            &[objects::TreeEdit::Upsert(
                "task.toml",
                crate::git::EntryKind::Blob,
                blob,
            )],
        )
    };
    for c in mine.into_iter().rev() {
        let (tree, message) = match keep {
            Some(state) => (
                kept_tree(c, state)?,
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
        match crate::ledger::apply(repo, crate::ledger::Mover::GitTask, vec![update]) {
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

/// Lists the tasks whose records were fetched from `remote` (no network: run [`fetch`] first),
/// with the records left out and why (a record that fails its checks, [`check_remote`]): one
/// bad record fails none of the others. `fetch` and `list --remote` both read them so.
pub fn list_checked(
    repo: &Repo,
    prefix: &str,
    remote: &str,
) -> Result<(Vec<RemoteTask>, Vec<Skipped>)> {
    let ns = layout::remote_tasks_ns(remote);
    let here = Here::read(repo)?;
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for (name, tip) in repo.refs_under(&ns)? {
        let Some(rest) = name
            .strip_prefix(&ns)
            .and_then(|rest| rest.strip_suffix("/record"))
        else {
            continue;
        };
        let id = match TaskId::parse(rest) {
            Ok(id) => id,
            Err(why) => {
                skipped.push(Skipped {
                    task: rest.to_owned(),
                    why: format!("'{rest}' is no task id: {why}"),
                });
                continue;
            }
        };
        let state = match check_remote(repo, &here, Some(prefix), &id, tip, None) {
            Ok(state) => state,
            Err(why) => {
                skipped.push(Skipped {
                    task: id.to_string(),
                    why,
                });
                continue;
            }
        };
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
    Ok((out, skipped))
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
