//! Turns "`<id>` or the current worktree" into a task.

use super::{layout, TaskId};
use crate::config::Settings;
use crate::error::{Error, Result};
use crate::git::Repo;
use crate::record::{self, Record};

/// Name of the file in a worktree's private git dir that marks its active patch-mode or checked-out task.
pub const ACTIVE_MARK: &str = "git-task-active";

/// Returns the record of `id`, or of the active task of the current worktree when `id` is `None`.
pub fn resolve(repo: &Repo, settings: &Settings, id: Option<&TaskId>) -> Result<Record> {
    if let Some(id) = id {
        return record::load_existing(repo, id);
    }
    match active_task(repo, settings)? {
        Some(id) => record::load_existing(repo, &id),
        None => Err(
            Error::input("no task id given, and this worktree has no active task")
                .hint("name the task, e.g. 'git task status <id>'; 'git task list' shows them"),
        ),
    }
}

/// Returns the active task of the current worktree: the task whose branch is checked out here, else the marked one.
pub fn active_task(repo: &Repo, settings: &Settings) -> Result<Option<TaskId>> {
    if let Some(branch) = repo.head_branch()? {
        if let Some(short) = branch.strip_prefix("refs/heads/") {
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
pub fn read_mark(repo: &Repo) -> Option<TaskId> {
    let text = std::fs::read_to_string(repo.git_dir().join(ACTIVE_MARK)).ok()?;
    TaskId::parse(text.trim()).ok()
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
