//! The guard of a patch-mode task over the worktree it started in (SPEC §9): the user's own
//! worktree, whose commits the hooks judge against the task's contract, and whose branches and
//! task refs the `reference-transaction` hook keeps, while the task is active.
//!
//! A dropped, reverted-then-dropped, merged or removed patch-mode task guards nothing: the
//! worktree is the user's again. `drop` lifts the guard at once ([`lift`]: the task's mark in
//! that worktree goes); a mark left by an older git-task is ignored by the hooks
//! ([`guards`]), which say that `git task drop <id>` clears it.

use crate::error::Result;
use crate::record::Record;
use crate::task::{Mode, Status};
use std::path::Path;

/// Whether a patch-mode task in `status` still guards its worktree: only while it is active
/// (or being started).
pub fn guards(status: Status) -> bool {
    matches!(status, Status::Active | Status::Provisioning)
}

/// The command that lifts the guard of the patch-mode task `id` and what each other one does,
/// for the hints of a refusal in its worktree.
pub fn lift_hint(id: &str) -> String {
    format!(
        "this worktree is guarded by patch-mode task '{id}': 'git task drop {id}' lifts the guard (the changes stay), 'git task revert {id}' then undoes them, 'git task merge {id}' accepts them"
    )
}

/// Lifts the guard of `record`'s patch-mode task when it no longer guards ([`guards`]): removes
/// its active mark from the worktree it started in. Returns whether a mark was removed; a
/// worktree task, or one whose worktree is gone, has nothing to lift.
pub fn lift(record: &Record) -> Result<bool> {
    let s = &record.state;
    if s.mode != Mode::Patch || guards(s.status) {
        return Ok(false);
    }
    let path = Path::new(&s.worktree);
    if !path.is_dir() {
        return Ok(false);
    }
    let wt = crate::git::worktree::open_at(path)?;
    let git_dir = wt.git_dir().to_path_buf();
    match crate::resolve::read_mark_file(&git_dir) {
        Some(mark) if mark.branch.is_none() && mark.id.as_str() == s.id => {
            crate::resolve::clear_mark(&git_dir)?;
            Ok(true)
        }
        _ => Ok(false),
    }
}
