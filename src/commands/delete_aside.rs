//! `git task delete-aside <dir>` (hidden): the background delete of a worktree that
//! `remove`, `merge` or `reset` moved aside.
//!
//! It runs as a detached child of the command that moved the directory: in its own
//! process group (set when it is spawned) and, first thing, in its own session, so
//! closing the terminal (SIGHUP to the session) does not kill it half-way and leave
//! a full hidden copy behind. Whatever it cannot delete is left for `sweep`.

use crate::commands::Done;
use std::path::PathBuf;

/// Delete a worktree directory moved aside (run in the background by git-task itself)
#[derive(clap::Args, Debug)]
pub struct DeleteAsideArgs {
    /// The note git-task wrote when it moved the directory aside (under `<common>/git-task/asides/`)
    #[arg(long)]
    pub note: PathBuf,
    /// The moved-aside directory (`.<id>.removing-<pid>-<nanos>`)
    pub dir: PathBuf,
}

/// Leaves the terminal's session, lowers its priority and deletes the directory.
pub fn run(args: &DeleteAsideArgs) -> Done {
    #[cfg(unix)]
    {
        // Errors are harmless: already a session leader, or a priority that cannot change.
        let _ = rustix::process::setsid();
        let _ = rustix::process::nice(10);
    }
    match crate::git::worktree::delete_moved_aside(&args.dir, &args.note) {
        Ok(()) => Done::Ok,
        Err(_) => Done::Negative,
    }
}
