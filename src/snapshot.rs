//! Commits of a worktree's state: HEAD, index and untracked (non-ignored) files.
//!
//! Used for attempts (work saved before anything discards it), checkpoints and
//! the patch-mode snapshot. Reading the state never touches the worktree or
//! its index.
//!
//! The patch-mode snapshot (SPEC §9): the commit of HEAD, index and files taken at start,
//! how it is written and read, and the task's changes counted from it. The hook, `status`,
//! `list` and `undo` read it; nothing here starts, accepts or rolls back a task.

use crate::error::{Error, Result};
pub use crate::git::status::state::{hash_file, read, read_to_keep, WorktreeState};
use crate::git::EntryKind;
use crate::git::{diff, objects, pack, worktree, ObjectId, Repo};
use crate::record::Record;
use crate::task::{layout, TaskId};

/// Returns one more than the highest `<n>` under `<prefix><kind><n>`, starting at 1.
pub fn next_number(repo: &Repo, prefix: &str, kind: &str) -> Result<u32> {
    let full = format!("{prefix}{kind}");
    let max = repo
        .refs_under(&full)?
        .iter()
        .filter_map(|(name, _)| name.strip_prefix(&full)?.parse::<u32>().ok())
        .max()
        .unwrap_or(0);
    Ok(max + 1)
}

/// A parsed snapshot commit.
#[derive(Clone, Copy, Debug)]
pub struct Snapshot {
    /// The snapshot commit.
    pub commit: ObjectId,
    /// HEAD when the snapshot was taken.
    pub head: ObjectId,
    /// The index then.
    pub index_tree: ObjectId,
    /// The files then, untracked included.
    pub worktree_tree: ObjectId,
}

/// Reads the state of the worktree `repo` was opened in and writes its snapshot commit (see
/// the module docs): every new object of both in one pack ([`pack::batch`]).
pub fn take_snapshot(repo: &Repo, id: &TaskId) -> Result<(WorktreeState, ObjectId)> {
    let (state, commit) = pack::batch(repo, |repo| {
        let state = read(repo)?;
        let commit = snapshot_objects(repo, id, &state)?;
        Ok((state, commit))
    })?;
    remember(repo, id, commit)?;
    Ok((state, commit))
}

/// Writes the snapshot commit of `state` (see the module docs) and returns its id.
pub fn write_snapshot(repo: &Repo, id: &TaskId, state: &WorktreeState) -> Result<ObjectId> {
    let commit = pack::batch(repo, |repo| snapshot_objects(repo, id, state))?;
    remember(repo, id, commit)?;
    Ok(commit)
}

/// Writes the objects of the snapshot commit of `state`; nothing names it yet.
fn snapshot_objects(repo: &Repo, id: &TaskId, state: &WorktreeState) -> Result<ObjectId> {
    let head = state.head.ok_or_else(|| {
        Error::input("HEAD has no commit yet, so there is nothing to start a patch-mode task from")
            .hint("make a first commit, then start the task")
    })?;
    let index = objects::write_own_commit(
        repo,
        state.index_tree,
        &[head],
        &format!("index of task {id} at start\n"),
    )?;
    // The untracked files: what the worktree tree adds on top of the index.
    let untracked: Vec<diff::ChangedPath> =
        diff::tree_to_tree(repo, state.index_tree, state.worktree_tree)?
            .into_iter()
            .filter(|c| c.old.is_none())
            .collect();
    let edits: Vec<objects::TreeEdit<'_>> = untracked
        .iter()
        .filter_map(|c| {
            c.new
                .map(|(k, oid)| objects::TreeEdit::Upsert(c.path.as_str(), k, oid))
        })
        .collect();
    let u_tree = objects::edit_tree(repo, objects::empty_tree(repo), &edits)?;
    let untracked = objects::write_own_commit(
        repo,
        u_tree,
        &[],
        &format!("untracked files of task {id} at start\n"),
    )?;
    objects::write_own_commit(
        repo,
        state.worktree_tree,
        &[head, index, untracked],
        &format!("git-task: snapshot of {id}\n\nTask-Id: {id}\n"),
    )
}

/// `<common dir>/git-task/snapshots/<id>`: every snapshot commit git-task made for task `id`,
/// one a line. An agent can point `refs/tasks/<id>/snapshot` at any commit (one of its current
/// files: then it has changed nothing), so the ref counts only when it names one of these
/// (SPEC §7.4, §11). A snapshot is listed before any ref can name it, so a kill leaves at most
/// a line no ref names.
fn made_file(repo: &Repo, id: &TaskId) -> std::path::PathBuf {
    crate::git::state_dir(repo.common_dir())
        .join("snapshots")
        .join(id.as_str())
}

fn remember(repo: &Repo, id: &TaskId, commit: ObjectId) -> Result<()> {
    let path = made_file(repo, id);
    let mut text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        // A task started before git-task kept this list: the snapshot it has now stays valid
        // (it was trusted until now) beside the new one.
        Err(_) => match repo.find_ref(&layout::snapshot_ref(id))? {
            Some(current) => format!("{current}\n"),
            None => String::new(),
        },
    };
    if text
        .lines()
        .any(|l| l.parse::<ObjectId>().ok() == Some(commit))
    {
        return Ok(());
    }
    text.push_str(&format!("{commit}\n"));
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::repo(format!("could not create '{}'", dir.display()), e))?;
    }
    crate::git::fs::write_atomically(&path, text.as_bytes())
        .map_err(|e| Error::repo(format!("could not write '{}'", path.display()), e))
}

/// Returns the commit the snapshot ref of `id` names (`None`: it has none), refusing one that
/// git-task never made for this task (`record_tampered`). Tasks started before git-task kept
/// that list have none, and are not refused.
pub fn snapshot_commit(repo: &Repo, id: &TaskId) -> Result<Option<ObjectId>> {
    let Some(commit) = repo.find_ref(&layout::snapshot_ref(id))? else {
        return Ok(None);
    };
    let Ok(made) = std::fs::read_to_string(made_file(repo, id)) else {
        return Ok(Some(commit));
    };
    if made
        .lines()
        .any(|l| l.trim().parse::<ObjectId>().ok() == Some(commit))
    {
        return Ok(Some(commit));
    }
    Err(Error::negative(format!(
        "record_tampered: {} points at {commit}, a commit git-task never made as the snapshot of task '{id}'",
        layout::snapshot_ref(id)
    ))
    .hint(format!(
        "the task's changes are measured from its snapshot; 'git reflog show {}' shows where git-task left it",
        layout::snapshot_ref(id)
    )))
}

/// Reads the snapshot of `id`; `None` when it has none (worktree mode, or accepted).
pub fn read_snapshot(repo: &Repo, id: &TaskId) -> Result<Option<Snapshot>> {
    let Some(commit) = snapshot_commit(repo, id)? else {
        return Ok(None);
    };
    parse_snapshot(repo, commit).map(Some)
}

/// Parses a snapshot (or patch-mode checkpoint) commit: tree = files, parent 1 = HEAD, parent 2 = the index commit.
pub fn parse_snapshot(repo: &Repo, commit: ObjectId) -> Result<Snapshot> {
    let parents = objects::commit_parents(repo, commit)?;
    let worktree_tree = objects::commit_tree(repo, commit)?;
    let (Some(&head), Some(&index)) = (parents.first(), parents.get(1)) else {
        return Err(Error::repo_msg(format!(
            "snapshot commit {commit} lacks its HEAD and index parents"
        )));
    };
    let index_tree = objects::commit_tree(repo, index)?;
    // Checkpoint commits chain on the previous one; their index commit's parent is HEAD at that time.
    let head = match objects::commit_parents(repo, index)?.first() {
        Some(&h) => h,
        None => head,
    };
    Ok(Snapshot {
        commit,
        head,
        index_tree,
        worktree_tree,
    })
}

/// Leaves out of `changes` (what a commit stages: HEAD → index) each path whose staged entry is
/// the user's own edit made before the start (SPEC §9): the snapshot's index or files held
/// exactly that entry there, and it differed from the snapshot's HEAD.
///
/// Anything else stays the task's: a further edit of such a file, and a path put back to the
/// snapshot HEAD's content after the branch changed it (that undoes work done since the start).
/// The pre-commit hook calls this; no worktree is read and no process is spawned.
pub fn without_pre_start_edits(
    repo: &Repo,
    record: &Record,
    changes: Vec<diff::ChangedPath>,
) -> Result<Vec<diff::ChangedPath>> {
    let Some(snap) = read_snapshot(repo, &record.state.task_id())? else {
        return Ok(changes);
    };
    let head_tree = objects::commit_tree(repo, snap.head)?;
    if snap.index_tree == head_tree && snap.worktree_tree == head_tree {
        return Ok(changes);
    }
    // The user's edits: path -> the entries the snapshot's index and files held, where they differ from its HEAD.
    let mut edited: std::collections::HashMap<String, Vec<Option<(EntryKind, ObjectId)>>> =
        std::collections::HashMap::new();
    for tree in [snap.index_tree, snap.worktree_tree] {
        for c in diff::tree_to_tree(repo, head_tree, tree)? {
            edited.entry(c.path).or_default().push(c.new);
        }
    }
    Ok(changes
        .into_iter()
        .filter(|c| !edited.get(&c.path).is_some_and(|e| e.contains(&c.new)))
        .collect())
}

/// Reads the worktree at `worktree` and returns its state with the paths whose files differ from
/// the snapshot commit `snapshot`'s (the task's changes, SPEC §9), for `status` and `list`.
pub fn changes_since(
    repo: &Repo,
    snapshot: ObjectId,
    worktree: &std::path::Path,
) -> Result<(WorktreeState, Vec<diff::ChangedPath>)> {
    let wt = worktree::open_at(worktree)?;
    let state = read(&wt)?;
    let start = objects::commit_tree(repo, snapshot)?;
    let changes = diff::tree_to_tree(repo, start, state.worktree_tree)?;
    Ok((state, changes))
}
