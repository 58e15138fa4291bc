//! Whether a patch-mode task guards the worktree it started in: the one predicate the hooks,
//! the pointer of the main worktree and the commands share (kept apart from [`super::patch`],
//! which installs and lifts the guard, so that the hooks can ask without importing it).

use crate::task::{Mode, Status};

/// Whether a patch-mode task in `status` still guards its worktree: only while it is active
/// (or being started).
pub fn guards(status: Status) -> bool {
    matches!(status, Status::Active | Status::Provisioning)
}

/// Whether a patch-mode task guards the main worktree now: its active mark there names a
/// patch-mode task that still guards ([`guards`]). A few file reads.
pub fn guards_main(repo: &crate::git::Repo) -> bool {
    let Some(mark) = crate::resolve::read_mark_file(repo.common_dir()) else {
        return false;
    };
    if mark.branch.is_some() {
        return false;
    }
    matches!(
        crate::record::load(repo, &mark.id),
        Ok(Some(r)) if r.state.mode == Mode::Patch && guards(r.state.status)
    )
}
