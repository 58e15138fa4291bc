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
use crate::task::Mode;
use std::path::Path;

pub use super::guarded::{guards, guards_main};

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

/// Points the main worktree at git-task's own hooks directory of it while a patch-mode task
/// guards it, as a task worktree is (see [`super::worktrees::points`]): on git older than 2.54,
/// where a hook manager installed since (husky setting `core.hooksPath`, lefthook rewriting
/// `.git/hooks`) would otherwise turn the check off there. The shims there run the hook of the
/// directory the repository's config names when they run, then the check. Nothing when the
/// hooks are not installed, are defined in config, or the main worktree is pointed already.
pub fn guard_main(repo: &crate::git::Repo) -> Result<()> {
    if repo.is_bare() || !guards_main(repo) || super::config_hooks::active(repo) {
        return Ok(());
    }
    let layout = super::layout(repo);
    let Some(settings) = super::worktrees::installed_settings(repo, &layout) else {
        return Ok(());
    };
    let main = main_worktree(repo)?;
    if !super::worktrees::points(repo, &main, &layout, false) {
        return Ok(());
    }
    super::worktrees::install(repo, &main, &layout, &settings, false, false)?;
    Ok(())
}

/// Takes away the pointer [`guard_main`] set once no patch-mode task guards the main worktree
/// (dropped, reverted and dropped, merged, removed), with git-task's directory of it and, when
/// git-task turned it on for that alone, `extensions.worktreeConfig`: the main worktree runs
/// the user's hooks as before. Returns whether it did.
pub fn release_main(repo: &crate::git::Repo) -> Result<bool> {
    if repo.is_bare() {
        return Ok(false);
    }
    let common = repo.common_dir();
    let own = super::own_dir(common, common);
    let ours = super::worktrees::points_here(common, &own)
        && super::dir::settings_in(&own)
            .is_some_and(|s| s.chain == super::scripts::CHAIN_REPOSITORY);
    if !ours || guards_main(repo) {
        return Ok(false);
    }
    let main = main_worktree(repo)?;
    super::worktrees::uninstall(repo, &main)?;
    // A manager run in the main worktree meanwhile (`lefthook install`) wrote its hooks where
    // the pointer led, git-task's directory: they go where it would have written them without
    // the pointer, so that they keep running (beside git-task's shim there, as the hook it
    // chains, when that is where git-task's is).
    if let super::Layout::Shared(dir) = super::layout(repo) {
        super::dir::move_foreign(&own, &dir)?;
    }
    super::install::release_worktree_config(repo)?;
    Ok(true)
}

fn main_worktree(repo: &crate::git::Repo) -> Result<super::worktrees::Worktree> {
    Ok(super::worktrees::Worktree {
        path: repo.main_worktree()?,
        git_dir: repo.common_dir().to_path_buf(),
        main: true,
    })
}
