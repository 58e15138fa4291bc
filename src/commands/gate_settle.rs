//! `git task gate-settle <dir>` (hidden): settles a merge gate checkout after a run that passed
//! (`crate::gate::settle`), in the background.
//!
//! It runs as a detached child of the merge, holding the gate slot's lock it inherited: in its
//! own process group (set when it is spawned) and, first thing, in its own session, at a lower
//! priority. Whatever it cannot settle is looked at by the next run on the checkout.

use crate::commands::Done;
use std::path::PathBuf;

/// Settle a merge gate checkout (run in the background by git-task itself)
#[derive(clap::Args, Debug)]
pub struct GateSettleArgs {
    /// The gate checkout (`<common dir>/git-task/gate/<n>`)
    pub dir: PathBuf,
}

/// Leaves the terminal's session, lowers its priority and settles the checkout.
pub fn run(args: &GateSettleArgs) -> Done {
    #[cfg(unix)]
    {
        // Errors are harmless: already a session leader, or a priority that cannot change.
        let _ = rustix::process::setsid();
        let _ = rustix::process::nice(10);
    }
    // `<common dir>/git-task/gate/<n>`: the repository is three levels up.
    let Some(common) = args.dir.ancestors().nth(3) else {
        return Done::Negative;
    };
    let Ok(repo) = crate::git::Repo::discover(common) else {
        return Done::Negative;
    };
    match crate::gate::settle(&repo, &args.dir) {
        Ok(()) => Done::Ok,
        Err(_) => Done::Negative,
    }
}
