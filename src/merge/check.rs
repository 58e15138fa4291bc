//! The frozen contract's checks, run on the landing tree in a clean temporary checkout
//! (SPEC §7.5); a failure is recorded in the task's event log and refuses the merge.

use super::{Options, Pending, Refusal};
use crate::checks::{How, Run};
use crate::error::{Error, Result};
use crate::git::{objects, worktree, ObjectId, Repo};
use crate::record::event::{Event, Purpose};
use crate::record::{self, Record};
use std::path::PathBuf;

/// Runs every pending task's frozen checks on its landing tree; a failure is recorded and refuses.
pub(super) fn check_all(
    repo: &Repo,
    pending: &mut [Pending],
    onto: ObjectId,
    opts: &Options,
) -> Result<Option<Refusal>> {
    for i in 0..pending.len() {
        let p = &pending[i];
        let tree = match p.landed_tree {
            Some(t) => t,
            None => objects::commit_tree(repo, onto)?,
        };
        let (run, checkout) = run_checks_on_landing(repo, &p.record, tree, onto, opts)?;
        if !run.passed {
            // A failure is recorded now, with the passes of the tasks before it; a pass is
            // otherwise recorded with the merge, in its transaction.
            for before in &pending[..i] {
                let run = before
                    .checks
                    .as_ref()
                    .expect("checks ran for the tasks before");
                let checks = Event::checks(run, Purpose::Merge);
                record::append(
                    repo,
                    &before.record,
                    checks,
                    &before.record.state,
                    Vec::new(),
                )?;
            }
            let checks = Event::checks(&run, Purpose::Merge);
            record::append(repo, &p.record, checks, &p.record.state, Vec::new())?;
            return Ok(Some(Refusal::ChecksFailed {
                task: p.record.state.id.clone(),
                checks: run,
                checkout: checkout.map(|c| c.display().to_string()),
            }));
        }
        pending[i].checks = Some(run);
    }
    Ok(None)
}

/// Runs the frozen contract's checks (never the branch file's) on `tree`, the target's tree once
/// the task landed, in a clean temporary checkout of it (SPEC §7.5), stopping at the first failure.
///
/// Ignored files the checks need (`node_modules/`…) are copied from the *main* worktree as the
/// target's `.worktreeinclude` names them, never from the task's worktree. The checkout is
/// deleted after a pass and kept (its path returned) after a failure.
pub(super) fn run_checks_on_landing(
    repo: &Repo,
    rec: &Record,
    tree: ObjectId,
    onto: ObjectId,
    opts: &Options,
) -> Result<(Run, Option<PathBuf>)> {
    let frozen = rec.frozen_checks();
    if opts.no_checks || frozen.commands.is_empty() {
        return Ok((Run::not_run(opts.no_checks), None));
    }
    // A directory of git-task's own making, under a name no one can guess beforehand, private
    // to the user (0700) before anything is written into it and after the checkout.
    let dir = tempfile::Builder::new()
        .prefix(&format!("git-task-check-{}-", rec.state.id))
        .tempdir()
        .map_err(|e| Error::repo("could not make a temporary directory for the checks", e))?;
    make_private(dir.path())?;
    worktree::checkout_tree(repo, tree, dir.path())?;
    make_private(dir.path())?;
    if let Some(include) = objects::read_blob_at(repo, onto, crate::copy::WORKTREE_INCLUDE)? {
        let globs = crate::copy::parse_include(&String::from_utf8_lossy(&include));
        let main = repo.main_worktree()?;
        if !globs.is_empty() && main.join(".git").exists() {
            let main = worktree::open_at(&main)?;
            crate::copy::copy_ignored(&main, dir.path(), Some(&globs), &mut |_, _| {})?;
        }
    }
    let how = How {
        stream: opts.stream_checks,
        keep_going: false,
    };
    let run = frozen.run(dir.path(), how, &mut |_| {})?;
    // Kept for inspection after a failure.
    let kept = (!run.passed).then(|| dir.keep());
    Ok((run, kept))
}

/// Makes the checks' directory the user's alone (mode 0700).
fn make_private(dir: &std::path::Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| Error::repo(format!("could not make '{}' private", dir.display()), e))?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}
