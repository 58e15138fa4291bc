//! Git hooks: where they live, and running git's `post-checkout` chain ourselves.
//!
//! gix runs no hooks, so `start` runs the `post-checkout` hook in the new
//! worktree exactly as `git worktree add` would (SPEC §8).
//!
//! `install` puts the shims of `scripts` into the hooks directory; the shims
//! call `git task hook <name>`, whose handlers are `pre_commit` and
//! `post_checkout`.

pub mod install;
pub mod post_checkout;
pub mod pre_commit;
pub mod scripts;

use crate::git::Repo;
use std::path::{Path, PathBuf};

/// Returns the effective hooks directory: `core.hooksPath` if set, else `<common dir>/hooks`.
pub fn hooks_dir(repo: &Repo) -> PathBuf {
    match repo
        .config_string("core.hooksPath")
        .filter(|p| !p.is_empty())
    {
        Some(path) => {
            let path = crate::git::fs::expand_home(&path);
            if path.is_absolute() {
                path
            } else {
                // githooks(5): a relative core.hooksPath is relative to where hooks run, the worktree's top.
                repo.workdir().map(|w| w.join(&path)).unwrap_or(path)
            }
        }
        None => repo.common_dir().join("hooks"),
    }
}

/// Runs the `post-checkout` hook (if installed and executable) in `worktree`, as `git worktree add` does.
///
/// Its exit status is returned but, like git, callers do not undo the checkout for it.
pub fn run_post_checkout(
    repo: &Repo,
    worktree: &Path,
    new_head: &str,
) -> crate::Result<Option<i32>> {
    let script = hooks_dir(repo).join("post-checkout");
    if !is_executable(&script) {
        return Ok(None);
    }
    let null = "0".repeat(new_head.len());
    crate::checks::run_hook(&script, worktree, &[&null, new_head, "1"]).map(Some)
}

/// Returns whether `path` is an executable file.
pub fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path)
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}
