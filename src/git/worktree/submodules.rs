//! Submodules checked out in a linked worktree. Their repositories live in the worktree's
//! administrative directory (`<common>/worktrees/<name>/modules/<name>`), or inside their
//! checkout (`<path>/.git`), so deleting the worktree deletes them: commits made in a
//! submodule and not pushed anywhere exist nowhere else. `git worktree remove` refuses such
//! a worktree; git-task moves them whole into the task's attic first (`lifecycle::remove`).

use super::Linked;
use crate::error::{Context, Result};
use crate::git::bstr::BString;
use crate::git::Repo;
use std::path::{Path, PathBuf};

/// A submodule checked out in a worktree.
#[derive(Clone, Debug)]
pub struct Checkout {
    /// Its path in the worktree (repository-relative).
    pub path: BString,
    /// Its repository: under the worktree's administrative directory, or `<path>/.git`.
    pub git_dir: PathBuf,
}

/// Returns the submodules checked out in the worktree `wt` (gitlinks of its index whose
/// directory holds a `.git`), with where their repositories are.
pub fn checkouts(wt: &Repo) -> Result<Vec<Checkout>> {
    let workdir = wt.require_workdir()?.to_path_buf();
    let index_path = wt.index_path();
    if !index_path.exists() {
        return Ok(Vec::new());
    }
    let index = crate::git::index::file::open_index(wt, &index_path)?;
    let mut out = Vec::new();
    for entry in index.entries() {
        if !entry.mode.contains(gix::index::entry::Mode::COMMIT) {
            continue;
        }
        let rel = entry.path(&index).to_owned();
        let dir = workdir.join(crate::git::path::from_repo(rel.as_ref())?);
        let dot_git = dir.join(".git");
        let git_dir = match std::fs::symlink_metadata(&dot_git) {
            Ok(m) if m.is_dir() => dot_git,
            Ok(_) => {
                let text = std::fs::read_to_string(&dot_git)
                    .context(|| format!("could not read '{}'", dot_git.display()))?;
                let Some(to) = text.strip_prefix("gitdir: ") else {
                    continue;
                };
                crate::git::normalize(&dir.join(to.trim_end_matches(['\n', '\r'])))
            }
            Err(_) => continue,
        };
        out.push(Checkout { path: rel, git_dir });
    }
    Ok(out)
}

impl Linked {
    /// Whether repositories of submodules live in its administrative directory (`modules/`).
    pub fn has_submodule_repositories(&self) -> bool {
        holds_a_file(&self.git_dir.join("modules"))
    }

    /// Refuses, before anything is deleted, when repositories of submodules live in its
    /// administrative directory: deleting it would delete them.
    pub fn check_no_submodule_repositories(&self) -> Result<()> {
        if !self.has_submodule_repositories() {
            return Ok(());
        }
        Err(crate::error::Error::repo_msg(format!(
            "the worktree '{}' holds the repositories of its submodules (in '{}')",
            self.path.display(),
            self.git_dir.join("modules").display()
        ))
        .hint(
            "nothing was deleted; 'git task remove --force' moves them into the task's attic first",
        ))
    }
}

/// Whether a file is anywhere below `dir` (empty directories do not count).
fn holds_a_file(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| match e.file_type() {
        Ok(t) if t.is_dir() => holds_a_file(&e.path()),
        Ok(_) => true,
        Err(_) => true,
    })
}

/// Makes the submodule checkout moved to `moved` a repository of its own again: its
/// repository (`git_dir`, when it is elsewhere) is moved into it as `.git`, and its
/// `core.worktree` names `moved`. Then `git -C <moved> log` shows its history.
pub fn embed(git_dir: &Path, moved: &Path) -> Result<()> {
    let dot_git = moved.join(".git");
    if crate::git::canonical(git_dir) == crate::git::canonical(&dot_git) {
        return Ok(());
    }
    std::fs::remove_file(&dot_git)
        .context(|| format!("could not delete '{}'", dot_git.display()))?;
    std::fs::rename(git_dir, &dot_git).context(|| {
        format!(
            "could not move '{}' to '{}'",
            git_dir.display(),
            dot_git.display()
        )
    })?;
    let config = dot_git.join("config");
    if config.exists() {
        crate::git::config::set_in_file(&config, "core.worktree", &moved.display().to_string())?;
    }
    Ok(())
}
