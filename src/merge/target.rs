//! The target branch where it is checked out (SPEC §7.6): a look ahead that refuses a merge
//! whose update would overwrite a local change there, and the update itself (in process when
//! certain, else by git).

use super::{Pending, Refusal};
use crate::error::Result;
use crate::git::{checkout::twoway, cli, worktree, ObjectId, Repo};
use std::path::{Path, PathBuf};

/// Returns the worktrees (main or linked) where `branch` is checked out: the ones a merge into
/// it updates.
///
/// Read without listing every worktree when it can be: the main worktree's `HEAD` first, and
/// when it has `branch`, nothing else. Sound because git keeps a branch checked out in one
/// worktree at a time (`git worktree add` and `git checkout` refuse a second one unless
/// forced with `--force` or `--ignore-other-worktrees`); a linked worktree that has it by force
/// as well is left as git's own `git merge` in the main worktree leaves it: its branch moves,
/// its files stay, nothing in it is lost. Otherwise the linked worktrees are asked
/// ([`worktree::checked_out_in`]: the likely place, then each `HEAD` to prove there is none),
/// and only an entry whose directory names it back counts: a forged entry under
/// `<common>/worktrees/` pointing at another directory never makes a merge write there.
pub fn checked_out_at(repo: &Repo, branch: &str) -> Result<Vec<PathBuf>> {
    let main_head = std::fs::read_to_string(repo.common_dir().join("HEAD")).unwrap_or_default();
    if main_head.strip_prefix("ref: ").map(str::trim) == Some(branch) && !repo.is_bare() {
        let main = repo.main_worktree()?;
        if main.join(".git").exists() {
            return Ok(vec![main]);
        }
    }
    Ok(worktree::checked_out_in(repo, branch)?
        .into_iter()
        .map(|w| w.path)
        .collect())
}

/// Asks git whether moving `worktree` from `old` to `new` would overwrite a local change; `Some` refusal if so.
pub fn refuse_overwrite(
    worktree: &Path,
    old: ObjectId,
    new: ObjectId,
    target: &str,
) -> Result<Option<Refusal>> {
    let mut run = cli::two_tree_update(worktree, old, new, true)?;
    if !run.success && run.stderr.contains("not uptodate") {
        // read-tree trusts the index's stat data; refresh it (as `git merge` does) and ask again.
        cli::refresh_index(worktree)?;
        run = cli::two_tree_update(worktree, old, new, true)?;
    }
    if run.success {
        return Ok(None);
    }
    Ok(Some(Refusal::TargetDirty {
        into: target.to_owned(),
        worktree: worktree.display().to_string(),
        paths: cli::listed_paths(&run.stderr),
        detail: run.stderr,
    }))
}

/// Returns what moving a checked-out target from `old` to `new` changes (nothing to find when it is not checked out).
/// The target's new tip after the merged `pending` tasks, and the paths moving
/// it from `old_tip` changes where it is checked out (found once for the look
/// ahead and the update); `Err` when that update would overwrite a local change.
pub(super) fn plan_target_update(
    repo: &Repo,
    pending: &[Pending],
    old_tip: ObjectId,
    checked_out: &[PathBuf],
    target: &str,
) -> Result<std::result::Result<(ObjectId, twoway::Changes), Refusal>> {
    let new_tip = pending
        .iter()
        .rev()
        .find_map(|p| p.commits.last().copied())
        .unwrap_or(old_tip);
    let changes = target_changes_of(repo, checked_out, old_tip, new_tip)?;
    match check_targets(repo, checked_out, &changes, old_tip, new_tip, target)? {
        Some(refusal) => Ok(Err(refusal)),
        None => Ok(Ok((new_tip, changes))),
    }
}

pub(super) fn target_changes_of(
    repo: &Repo,
    checked_out: &[PathBuf],
    old: ObjectId,
    new: ObjectId,
) -> Result<twoway::Changes> {
    if checked_out.is_empty() || new == old {
        return Ok(twoway::Changes::default());
    }
    twoway::changes(repo, old, new)
}

/// Checks every worktree where the target is checked out: `Some(refusal)` if moving it from `old` to `new` (which changes `changes`) would overwrite a local change.
pub(super) fn check_targets(
    repo: &Repo,
    checked_out: &[PathBuf],
    changes: &twoway::Changes,
    old: ObjectId,
    new: ObjectId,
    target: &str,
) -> Result<Option<Refusal>> {
    if new == old {
        return Ok(None);
    }
    // The merge writes and runs git in these: a linked one's own config counts as well as what
    // the command compared before it started (`commands::trust_scope`).
    let linked: Vec<PathBuf> = checked_out
        .iter()
        .filter_map(|p| crate::git::fs::git_dir_at(p))
        .map(|d| crate::git::normalize(&d))
        .filter(|d| d.parent().and_then(Path::file_name) == Some("worktrees".as_ref()))
        .collect();
    if !linked.is_empty() {
        crate::config::ensure_unchanged(
            repo,
            &crate::config::trusted::Scope::Worktrees(linked),
            crate::config::trusted::Runs::Anything,
        )?;
    }
    for path in checked_out {
        // Nothing on disk where the merge adds a file: git would overwrite an ignored file
        // (a build output, a `.env`), which is the user's work all the same (SPEC §7.6).
        let in_the_way: Vec<String> = changes
            .added()
            .filter(|p| path.join(p).symlink_metadata().is_ok())
            .map(str::to_owned)
            .collect();
        if !in_the_way.is_empty() {
            return Ok(Some(Refusal::TargetDirty {
                into: target.to_owned(),
                worktree: path.display().to_string(),
                paths: in_the_way,
                detail: String::new(),
            }));
        }
        // Fast path: the paths the merge changes are untouched there. Otherwise git decides.
        if twoway::is_certainly_safe(repo, path, changes)? {
            continue;
        }
        if let Some(refusal) = refuse_overwrite(path, old, new, target)? {
            return Ok(Some(refusal));
        }
    }
    Ok(None)
}

/// Moves the worktree at `path` from `old` to `new` (which changes `changes`): in process when that
/// is certain to overwrite nothing (`None`), else with git (`Some(run)`; on refusal nothing was written).
pub(super) fn update_checked_out(
    repo: &Repo,
    path: &Path,
    changes: &twoway::Changes,
    old: ObjectId,
    new: ObjectId,
) -> Result<Option<cli::GitRun>> {
    match twoway::update(repo, path, changes)? {
        twoway::Update::Done => Ok(None),
        twoway::Update::Declined(_) => cli::update_worktree(path, old, new).map(Some),
    }
}
