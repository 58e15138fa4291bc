//! Turns "`<id>` or the current worktree" into a task.

use crate::config::Settings;
use crate::error::{Error, Result};
use crate::git::Repo;
use crate::record::{self, Record};
use crate::task::{layout, TaskId};

/// Name of the file in a worktree's private git dir that marks its active patch-mode or checked-out task.
pub const ACTIVE_MARK: &str = "git-task-active";

/// Returns the record of `id`, or of the active task of the current worktree when `id` is `None`.
pub fn resolve(repo: &Repo, settings: &Settings, id: Option<&TaskId>) -> Result<Record> {
    if let Some(id) = id {
        return existing(repo, id);
    }
    match active_task(repo, settings)? {
        Some(id) => existing(repo, &id),
        None => Err(
            Error::input("no task id given, and this worktree has no active task")
                .hint("name the task after the command ('git task list' shows them), or run it inside the task's worktree")
                .next(crate::error::Call::new("list")),
        ),
    }
}

/// Returns the record of `id`; when there is none, the error names the nearest existing id
/// (a typo: at most two edits away) before the usual hints.
pub fn existing(repo: &Repo, id: &TaskId) -> Result<Record> {
    if let Some(record) = record::load(repo, id)? {
        return Ok(record);
    }
    let missing = record::missing(id);
    let ids = record::all_ids(repo).unwrap_or_default();
    let err = match nearest(id.as_str(), ids.iter().map(TaskId::as_str)) {
        Some(near) => {
            let mut err = Error::input(missing.message()).hint(format!("did you mean '{near}'?"));
            for hint in missing.hints() {
                err = err.hint(hint.clone());
            }
            err
        }
        None => missing,
    };
    // For an agent with only the MCP tools: the tasks there are.
    Err(err.next(crate::error::Call::new("list")))
}

/// The id of `ids` nearest to `typed` by edit distance, if it is at most 2 (the first in
/// order on a tie).
pub fn nearest<'a>(typed: &str, ids: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    ids.filter(|id| *id != typed)
        .map(|id| (distance(typed, id), id))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, id)| id)
}

/// The Levenshtein distance of `a` and `b`, counted in characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1)
                .min(row[j] + 1)
                .min(diag + usize::from(ca != *cb));
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// Returns the active task of the current worktree: the task whose branch is checked out here, else the marked one.
pub fn active_task(repo: &Repo, settings: &Settings) -> Result<Option<TaskId>> {
    if let Some(branch) = repo.head_branch()? {
        if let Some(short) = crate::git::refs::branch_short(&branch) {
            if let Some(id) = layout::id_from_branch(&settings.branch_prefix, short) {
                if repo.find_ref(&layout::record_ref(&id))?.is_some() {
                    return Ok(Some(id));
                }
            }
        }
    }
    Ok(read_mark(repo))
}

/// Reads the active-task mark of the current worktree, if any.
///
/// A mark written on checkout of a task branch counts only while that branch
/// is still checked out; a patch-mode mark counts until it is cleared.
pub fn read_mark(repo: &Repo) -> Option<TaskId> {
    let mark = read_mark_file(repo.git_dir())?;
    match &mark.branch {
        Some(branch) if repo.head_branch().ok().flatten().as_deref() != Some(branch.as_str()) => {
            None
        }
        _ => Some(mark.id),
    }
}

/// The content of an active-task mark.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    /// The marked task.
    pub id: TaskId,
    /// For a mark written when a task branch was checked out: that branch (full ref name).
    /// `None` for a patch-mode task started in the worktree.
    pub branch: Option<String>,
}

/// Reads the mark file in the worktree git dir `git_dir`: the id on the first line, then optionally `branch <ref>`.
pub fn read_mark_file(git_dir: &std::path::Path) -> Option<Mark> {
    let text = std::fs::read_to_string(git_dir.join(ACTIVE_MARK)).ok()?;
    let mut lines = text.lines();
    let id = TaskId::parse(lines.next()?.trim()).ok()?;
    let branch = lines
        .find_map(|l| l.strip_prefix("branch "))
        .map(|b| b.trim().to_owned());
    Some(Mark { id, branch })
}

/// Marks `id` active in the worktree whose git dir is `git_dir` because its branch `branch` was checked out there.
pub fn write_checkout_mark(git_dir: &std::path::Path, id: &TaskId, branch: &str) -> Result<()> {
    std::fs::write(
        git_dir.join(ACTIVE_MARK),
        format!("{id}\nbranch {branch}\n"),
    )
    .map_err(|e| Error::repo(format!("could not mark task '{id}' active"), e))
}

/// Marks `id` as the active task of the worktree whose private git dir is `git_dir`.
pub fn write_mark(git_dir: &std::path::Path, id: &TaskId) -> Result<()> {
    std::fs::write(git_dir.join(ACTIVE_MARK), format!("{id}\n"))
        .map_err(|e| Error::repo(format!("could not mark task '{id}' active"), e))
}

/// Clears the active-task mark of the worktree whose private git dir is `git_dir`.
pub fn clear_mark(git_dir: &std::path::Path) -> Result<()> {
    match std::fs::remove_file(git_dir.join(ACTIVE_MARK)) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::repo("could not clear the active task mark", e)),
    }
}
