//! A pool entry's worktree becoming a task's: what `git worktree move` and a branch
//! checkout do to git's administrative files, in process.
//!
//! A pool entry is an ordinary linked worktree with a detached HEAD (made by
//! [`super::add_detached`]). Adopting it for a task, in this order:
//!
//! 1. its `HEAD` names the task's branch (written aside and renamed);
//! 2. its administrative directory is renamed to the name a fresh worktree at the
//!    task's path would get (`<common>/worktrees/<basename>`, a number appended
//!    when taken; the name is reserved by creating it, then replaced by the rename);
//! 3. that directory's `gitdir` names the task's path;
//! 4. the worktree directory is renamed to the task's path;
//! 5. its `.git` file names the renamed administrative directory;
//! 6. `HEAD`'s reflog starts again, as a new worktree's does.
//!
//! The clean memo (`status::dirty`) is written before, by the caller, when the two-way
//! checkout wrote the index: it moves with the administrative directory, and nothing
//! here changes what it saw.
//!
//! Each step is one rename or one small write, and from step 1 on the worktree is
//! found by its branch (`worktree::list`), so a start killed half-way is rolled back
//! like any other: the task's worktree is moved aside and deleted; a pool directory
//! left behind is a pool directory without a ref, which `sweep` deletes.

use crate::error::{Context, Error, Result};
use crate::git::{ObjectId, Repo};
use std::path::{Path, PathBuf};

/// Makes the pool worktree at `from` (administrative directory `admin`, files and
/// index already at `commit`) the worktree of `branch` at `to` (which must not exist,
/// or be an empty directory).
pub fn adopt(
    repo: &Repo,
    admin: &Path,
    from: &Path,
    to: &Path,
    branch: &str,
    commit: ObjectId,
) -> Result<()> {
    // 1. HEAD names the branch.
    let head = admin.join("HEAD");
    crate::git::fs::write_atomically(&head, format!("ref: {branch}\n").as_bytes())
        .context(|| format!("could not write '{}'", head.display()))?;
    // 2. The administrative directory takes the name a new worktree at `to` would get.
    let parent = to
        .parent()
        .ok_or_else(|| Error::repo_msg(format!("'{}' has no parent", to.display())))?;
    std::fs::create_dir_all(parent)
        .context(|| format!("could not create '{}'", parent.display()))?;
    let parent = crate::git::canonical(parent);
    let base = to
        .file_name()
        .ok_or_else(|| Error::repo_msg(format!("'{}' has no name", to.display())))?;
    let to = parent.join(base);
    let base = gix::path::os_str_into_bstr(base)
        .map(gix::validate::reference::name_partial_or_sanitize)
        .ok()
        .and_then(|b| gix::path::from_bstring(b).ok())
        .ok_or_else(|| Error::repo_msg(format!("'{}' is not a valid name", to.display())))?;
    let worktrees = repo.common_dir().join("worktrees");
    let git_dir = reserve(&worktrees, base.as_os_str())?;
    std::fs::rename(admin, &git_dir).context(|| {
        format!(
            "could not rename '{}' to '{}'",
            admin.display(),
            git_dir.display()
        )
    })?;
    // 3. Its `gitdir` names the new place.
    let gitdir = git_dir.join("gitdir");
    crate::git::fs::write_atomically(&gitdir, path_line("", &to.join(".git")).as_bytes())
        .context(|| format!("could not write '{}'", gitdir.display()))?;
    // 4. The files move.
    match std::fs::remove_dir(&to) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::repo(format!("could not use '{}'", to.display()), e)),
    }
    std::fs::rename(from, &to).context(|| {
        format!(
            "could not rename '{}' to '{}'",
            from.display(),
            to.display()
        )
    })?;
    // 5. The worktree names its administrative directory again. Rewritten in place, not
    // replaced: a rename would change the worktree root's mtime, which the clean memo saw.
    let dot_git = to.join(".git");
    std::fs::write(&dot_git, path_line("gitdir: ", &git_dir).as_bytes())
        .context(|| format!("could not write '{}'", dot_git.display()))?;
    // 6. A fresh reflog for HEAD, as `prepare_add_worktree` writes for a branch.
    let _ = std::fs::remove_file(git_dir.join("logs").join("HEAD"));
    let wt = super::open_at(&to)?;
    let mut inner = wt.inner.clone();
    inner.clear_namespace();
    use gix::refs::transaction::{LogChange, PreviousValue, RefEdit, RefLog};
    inner
        .edit_reference(RefEdit::update_with_log(
            "HEAD".try_into().expect("valid reference name"),
            commit,
            PreviousValue::Any,
            LogChange {
                mode: RefLog::Only,
                ..Default::default()
            },
        ))
        .context(|| "could not start the worktree's HEAD reflog".into())?;
    Ok(())
}

/// Whether the repository writes relative paths into worktree links (`worktree.useRelativePaths`):
/// pool entries are not adopted then (a fresh worktree is made instead).
pub fn uses_relative_paths(repo: &Repo) -> bool {
    repo.config_bool("worktree.useRelativePaths")
        .unwrap_or(false)
}

/// Creates `<parent>/<base>` (or `<base>1`, `<base>2`, ... when taken), as gix reserves a new worktree's name.
fn reserve(parent: &Path, base: &std::ffi::OsStr) -> Result<PathBuf> {
    std::fs::create_dir_all(parent)
        .context(|| format!("could not create '{}'", parent.display()))?;
    for suffix in 0u32.. {
        let mut name = base.to_os_string();
        if suffix != 0 {
            name.push(suffix.to_string());
        }
        let candidate = parent.join(name);
        match std::fs::create_dir(&candidate) {
            Ok(()) => return Ok(candidate),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(Error::repo(
                    format!("could not create '{}'", candidate.display()),
                    e,
                ))
            }
        }
    }
    unreachable!("a free name is found")
}

fn path_line(prefix: &str, path: &Path) -> String {
    format!("{prefix}{}\n", path.display())
}
