//! The `post-checkout` handler: mark the task of a checked-out task branch active.
//!
//! githooks(5): "invoked when a git-checkout or git-switch is run after having
//! updated the worktree. The hook is given three parameters: the ref of the
//! previous HEAD, the ref of the new HEAD …, and a flag indicating whether the
//! checkout was a branch checkout (flag=1) or a file checkout (flag=0). This
//! hook cannot affect the outcome of git switch or git checkout, other than
//! that the hook's exit status becomes the exit status of these two
//! commands." It also runs after `git worktree add` and `git clone`.
//!
//! So the caller never fails the checkout: every error becomes a warning. The
//! mark written here names the branch, so it only counts while that branch is
//! checked out ([`resolve::read_mark`]); a patch-mode mark (no branch) is
//! never touched. Running twice is harmless (`start` runs this hook itself).

use crate::config::Settings;
use crate::error::Result;
use crate::git::Repo;
use crate::record::{self, Record};
use crate::resolve;
use crate::task::{layout, Status};

/// What the hook did.
#[derive(Debug)]
pub enum Outcome {
    /// A file checkout, or a branch that concerns no task: nothing to do.
    Nothing,
    /// A live task's branch was checked out; the task is now active in this worktree.
    Entered(Box<Record>),
    /// A task branch was checked out, but its task is merged or removed.
    Finished {
        /// The task id.
        task: String,
        /// Merged or removed.
        status: Status,
    },
    /// A task branch was left; its mark was cleared.
    Left {
        /// The task that was active.
        task: String,
    },
}

/// Handles a checkout in the worktree `repo` was opened in; `branch_checkout` is the hook's third argument being `1`.
pub fn run(repo: &Repo, settings: &Settings, branch_checkout: bool) -> Result<Outcome> {
    if !branch_checkout {
        return Ok(Outcome::Nothing);
    }
    let git_dir = repo.git_dir().to_path_buf();
    let mark = resolve::read_mark_file(&git_dir);
    let head = repo.head_branch()?;
    let task_branch = head.as_deref().and_then(|full| {
        let short = crate::git::refs::branch_short(full)?;
        layout::id_from_branch(&settings.branch_prefix, short).map(|id| (id, full.to_owned()))
    });
    let left = |mark: Option<resolve::Mark>| -> Result<Outcome> {
        match mark {
            Some(m) if m.branch.is_some() => {
                resolve::clear_mark(&git_dir)?;
                Ok(Outcome::Left {
                    task: m.id.to_string(),
                })
            }
            _ => Ok(Outcome::Nothing),
        }
    };
    let Some((id, branch)) = task_branch else {
        return left(mark);
    };
    let Some(record) = record::load(repo, &id)? else {
        return left(mark);
    };
    if !record.state.status.is_live() {
        if mark.as_ref().is_some_and(|m| m.branch.is_some()) {
            resolve::clear_mark(&git_dir)?;
        }
        return Ok(Outcome::Finished {
            task: record.state.id.to_string(),
            status: record.state.status,
        });
    }
    // A patch-mode task started in this worktree keeps its mark.
    if mark.as_ref().is_none_or(|m| m.branch.is_some()) {
        let current = mark.as_ref().map(|m| (m.id.as_str(), m.branch.as_deref()));
        if current != Some((id.as_str(), Some(branch.as_str()))) {
            resolve::write_checkout_mark(&git_dir, &id, &branch)?;
        }
    }
    Ok(Outcome::Entered(Box::new(record)))
}
