//! The adapter to gix: opening the repository and reading what git-task needs.
//!
//! Everything that writes (refs, objects, worktrees, index) lives in the
//! submodules; nothing outside `git/` calls gix's write APIs.

pub mod cli;
pub mod config;
pub mod diff;
pub mod dirty;
pub mod inplace;
pub mod merge;
pub mod note;
pub mod objects;
pub mod refs;
pub mod renames;
pub mod staged;
pub mod status;
pub mod threeway;
pub mod unified;
pub mod worktree;

use crate::error::{Context, Error, Result};
use std::path::{Path, PathBuf};

pub use gix::ObjectId;

/// Variables git sets for hooks that would point a child process's `git` at another
/// repository, worktree or index; cleared for every process git-task starts elsewhere
/// (githooks(5): clear them when a hook works on another worktree).
pub const LOCAL_ENV: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_PREFIX",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_NAMESPACE",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
];

/// An open repository, seen from one worktree (or from inside a hook).
pub struct Repo {
    /// The gix handle; core modules read through it, writes go through `git/*`.
    pub inner: gix::Repository,
    common_dir: PathBuf,
}

impl Repo {
    /// Opens the repository containing `dir`, honouring `GIT_DIR`, `GIT_WORK_TREE` and friends.
    pub fn discover(dir: &Path) -> Result<Repo> {
        let inner = gix::discover_with_environment_overrides(dir).map_err(|e| {
            Error::repo_msg(format!(
                "not a git repository (or any of the parent directories): '{}'",
                dir.display()
            ))
            .hint("run 'git init' to create one, or 'cd' into an existing repository")
            .hint(format!("(gix: {e})"))
        })?;
        Self::from_gix(inner)
    }

    /// Wraps an already opened repository.
    ///
    /// Without `user.name`/`user.email` configured, git-task's own commits and
    /// reflog entries are signed `git-task <git-task@localhost>`, like `git
    /// worktree add` works without an identity.
    pub fn from_gix(mut inner: gix::Repository) -> Result<Repo> {
        if !has_committer_identity(&inner) {
            // Repositories gix opens internally (a new worktree's) read the identity from the environment.
            std::env::set_var("GIT_COMMITTER_NAME", "git-task");
            std::env::set_var("GIT_COMMITTER_EMAIL", "git-task@localhost");
            inner
                .committer_or_set_fallback("git-task", "git-task@localhost")
                .map_err(|e| Error::repo("could not set a fallback identity", e))?;
        }
        let common_dir = normalize(inner.common_dir());
        Ok(Repo { inner, common_dir })
    }

    /// Returns the common git directory shared by all worktrees, without `..` components.
    pub fn common_dir(&self) -> &Path {
        &self.common_dir
    }

    /// Returns this worktree's private git directory.
    pub fn git_dir(&self) -> &Path {
        self.inner.git_dir()
    }

    /// Returns the worktree this process runs in, if any.
    pub fn workdir(&self) -> Option<&Path> {
        self.inner.workdir()
    }

    /// Returns the worktree or an error saying a bare repository cannot do this.
    pub fn require_workdir(&self) -> Result<&Path> {
        self.workdir().ok_or_else(|| {
            Error::input("this operation must be run in a work tree")
                .hint("'cd' into a worktree of the repository")
        })
    }

    /// Returns the main worktree's directory (the one the common dir belongs to).
    pub fn main_worktree(&self) -> Result<PathBuf> {
        if self.common_dir.file_name().is_some_and(|n| n == ".git") {
            return Ok(self
                .common_dir
                .parent()
                .unwrap_or(&self.common_dir)
                .to_path_buf());
        }
        if let Ok(main) = self.inner.main_repo() {
            if let Some(dir) = main.workdir() {
                return Ok(normalize(dir));
            }
        }
        Ok(self.common_dir.clone())
    }

    /// Returns the full name of the branch HEAD points to (`refs/heads/main`), or `None` when detached.
    pub fn head_branch(&self) -> Result<Option<String>> {
        let name = self
            .inner
            .head_name()
            .context(|| "could not read HEAD".into())?;
        Ok(name.map(|n| n.as_bstr().to_string()))
    }

    /// Returns the commit HEAD points to, or `None` on an unborn branch.
    pub fn head_commit(&self) -> Result<Option<ObjectId>> {
        let mut head = self.inner.head().context(|| "could not read HEAD".into())?;
        Ok(head
            .try_peel_to_id()
            .context(|| "could not resolve HEAD".into())?
            .map(|id| id.detach()))
    }

    /// Resolves a revision (`main`, `HEAD~2`, a hex id) to a commit id.
    pub fn rev_parse_commit(&self, spec: &str) -> Result<ObjectId> {
        let id = self.inner.rev_parse_single(spec).map_err(|e| {
            Error::input(format!("'{spec}' is not a valid revision: {e}"))
                .hint("name a branch, tag or commit, e.g. --base main; 'git branch' lists branches")
        })?;
        let object = id.object().context(|| format!("could not read '{spec}'"))?;
        let commit = object.peel_to_commit().map_err(|_| {
            Error::input(format!("'{spec}' does not name a commit"))
                .hint("name a branch, tag or commit, e.g. --base main")
        })?;
        Ok(commit.id)
    }

    /// Returns the object a ref points to (peeled through symbolic refs), or `None` if it does not exist.
    pub fn find_ref(&self, name: &str) -> Result<Option<ObjectId>> {
        let Some(mut r) = self
            .inner
            .try_find_reference(name)
            .context(|| format!("could not read ref '{name}'"))?
        else {
            return Ok(None);
        };
        Ok(Some(
            r.peel_to_id()
                .context(|| format!("could not resolve ref '{name}'"))?
                .detach(),
        ))
    }

    /// Returns every ref under `prefix` (which ends in `/`) with the object it points to, sorted by name.
    pub fn refs_under(&self, prefix: &str) -> Result<Vec<(String, ObjectId)>> {
        let platform = self
            .inner
            .references()
            .context(|| "could not list refs".into())?;
        let iter = platform
            .prefixed(prefix)
            .context(|| format!("could not list refs under '{prefix}'"))?;
        let mut out = Vec::new();
        for r in iter {
            let r =
                r.map_err(|e| Error::repo(format!("could not list refs under '{prefix}'"), e))?;
            if let Some(id) = r.target().try_id() {
                out.push((r.name().as_bstr().to_string(), id.to_owned()));
            }
        }
        out.sort();
        Ok(out)
    }

    /// Returns a config value as a string (`task.branchPrefix`).
    pub fn config_string(&self, key: &str) -> Option<String> {
        self.inner
            .config_snapshot()
            .string(key)
            .map(|v| v.to_string())
    }

    /// Returns a config value as a boolean, `None` if unset or not a boolean.
    pub fn config_bool(&self, key: &str) -> Option<bool> {
        self.inner.config_snapshot().boolean(key)
    }

    /// Returns every value of a multi-valued config key, in order.
    pub fn config_strings(&self, key: &str) -> Vec<String> {
        self.inner
            .config_snapshot()
            .strings(key)
            .map(|v| v.into_iter().map(|s| s.to_string()).collect())
            .unwrap_or_default()
    }

    /// Returns whether paths compare case-insensitively (`core.ignoreCase`).
    pub fn ignore_case(&self) -> bool {
        self.config_bool("core.ignoreCase").unwrap_or(false)
    }
}

/// Returns whether file metadata has an executable bit (git's `100755` mode); always false off Unix.
pub fn is_executable(meta: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        false
    }
}

/// Removes `.` and `..` components without touching the file system.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Returns `path` made absolute against the process's current directory, normalised.
pub fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        normalize(path)
    } else {
        normalize(&std::env::current_dir().unwrap_or_default().join(path))
    }
}

/// Whether gix finds a committer name and email (as [`gix::Repository::committer`]
/// does, same keys in the same order) without asking for the time: that loads the
/// local time zone, a seventh of a short command's instructions.
fn has_committer_identity(repo: &gix::Repository) -> bool {
    let config = repo.config_snapshot();
    let any = |keys: &[&str]| keys.iter().any(|k| config.string(*k).is_some());
    any(&[
        "committer.name",
        "user.name",
        "gitoxide.committer.nameFallback",
    ]) && any(&[
        "committer.email",
        "user.email",
        "gitoxide.user.emailFallback",
        "gitoxide.committer.emailFallback",
    ])
}
