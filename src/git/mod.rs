//! The adapter to gix: opening the repository and reading what git-task needs.
//!
//! Everything that writes (refs, objects, worktrees, index) lives in the
//! submodules; nothing outside `git/` calls gix's write APIs.

pub mod cachetree;
pub mod cli;
pub mod config;
pub mod diff;
pub mod dirty;
pub mod ignored;
pub mod inplace;
pub mod lstat;
pub mod merge;
pub mod note;
pub mod objects;
pub mod pathsafe;
pub mod refread;
pub mod refs;
pub mod renames;
pub mod staged;
pub mod status;
pub mod threeway;
pub mod twoway;
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

/// How git-task opens every repository: objects are read as stored, with replace refs
/// disabled (gix reads no grafts), so an agent's `git replace` cannot change what the gate
/// or the hooks see (SPEC §7.4).
///
/// The `git -c key=value` settings of the git that started git-task (a hook, or `git task`
/// itself) come in `GIT_CONFIG_PARAMETERS`, which gix does not read: they are applied as
/// command-line overrides, so `-c color.ui=false` or `-c task.onViolation=revert` mean what they
/// mean to git. (`GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_<n>` are read by gix itself.)
pub fn open_options() -> gix::sec::trust::Mapping<gix::open::Options> {
    const NO_REPLACE: &str = "core.useReplaceRefs=false";
    let cli = std::env::var("GIT_CONFIG_PARAMETERS")
        .map(|p| config::parse_parameters(&p))
        .unwrap_or_default();
    let mut map = gix::sec::trust::Mapping::<gix::open::Options>::default();
    map.full = map
        .full
        .config_overrides([NO_REPLACE])
        .cli_overrides(cli.clone());
    map.reduced = map
        .reduced
        .config_overrides([NO_REPLACE])
        .cli_overrides(cli);
    map
}

/// An open repository, seen from one worktree (or from inside a hook).
pub struct Repo {
    /// The gix handle; core modules read through it, writes go through `git/*`.
    pub inner: gix::Repository,
    common_dir: PathBuf,
    /// Looked at once per process (`list` asks for every worktree).
    ignore_files: std::cell::OnceCell<dirty::IgnoreFiles>,
}

impl Repo {
    /// Opens the repository containing `dir`, honouring `GIT_DIR`, `GIT_WORK_TREE` and friends.
    pub fn discover(dir: &Path) -> Result<Repo> {
        let inner = gix::ThreadSafeRepository::discover_with_environment_overrides_opts(
            dir,
            Default::default(),
            open_options(),
        )
        .map(gix::Repository::from)
        .map_err(|e| {
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
        Ok(Repo {
            inner,
            common_dir,
            ignore_files: std::cell::OnceCell::new(),
        })
    }

    /// Returns the common git directory shared by all worktrees, without `..` components.
    pub fn common_dir(&self) -> &Path {
        &self.common_dir
    }

    /// Returns the committer signature of git-task's own bookkeeping commits:
    /// the configured identity, dated now in UTC (see [`committer_identity`]).
    pub fn own_signature(&self) -> Result<gix::actor::Signature> {
        let (name, email) = committer_identity(&self.inner)
            .ok_or_else(|| Error::repo_msg("no committer identity is configured"))?;
        Ok(gix::actor::Signature {
            name,
            email,
            time: gix::date::Time::now_utc(),
        })
    }

    /// Returns the ignore files outside the tree that decide what is untracked
    /// ([`dirty::IgnoreFiles`]): `info/exclude` and `core.excludesFile`.
    pub fn ignore_files(&self) -> &dirty::IgnoreFiles {
        self.ignore_files.get_or_init(|| {
            let excludes = self
                .inner
                .config_snapshot()
                .trusted_path("core.excludesFile")
                .ok()
                .flatten();
            dirty::IgnoreFiles::new(self.common_dir(), excludes)
        })
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

    /// Returns the object a ref names directly, following only symbolic refs:
    /// unlike [`Repo::find_ref`] it does not read the object to peel a tag,
    /// which for `list` would mean a thousand object reads more.
    pub fn ref_target(&self, name: &str) -> Result<Option<ObjectId>> {
        let Some(r) = self
            .inner
            .try_find_reference(name)
            .context(|| format!("could not read ref '{name}'"))?
        else {
            return Ok(None);
        };
        match r.target().try_id() {
            Some(id) => Ok(Some(id.to_owned())),
            None => self.find_ref(name),
        }
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
        // A directory another process deletes mid-walk (its last ref deleted or packed)
        // fails the walk: the listing is taken again.
        let mut tries = 0;
        loop {
            match self.refs_under_once(prefix) {
                Err(_) if tries < 5 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(5 * tries));
                }
                other => return other,
            }
        }
    }

    fn refs_under_once(&self, prefix: &str) -> Result<Vec<(String, ObjectId)>> {
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

    /// Returns the names one level below the ref namespace `prefix` (`refs/tasks/`
    /// gives task ids), loose or packed, without reading any ref: a directory
    /// listing and the packed-refs file.
    pub fn ref_children(&self, prefix: &str) -> Result<std::collections::BTreeSet<String>> {
        let mut out = std::collections::BTreeSet::new();
        if let Ok(entries) = std::fs::read_dir(self.common_dir.join(prefix)) {
            out.extend(
                entries
                    .flatten()
                    .filter_map(|e| e.file_name().to_str().map(str::to_owned)),
            );
        }
        let packed = self
            .inner
            .refs
            .cached_packed_buffer()
            .context(|| "could not read packed-refs".into())?;
        if let Some(packed) = packed {
            let iter = packed
                .iter_prefixed(prefix.into())
                .context(|| "could not read packed-refs".into())?;
            for r in iter {
                let r = r.context(|| "could not read packed-refs".into())?;
                let name = r.name.as_bstr();
                if let Some(child) = name
                    .get(prefix.len()..)
                    .and_then(|rest| rest.split(|b| *b == b'/').next())
                    .and_then(|c| std::str::from_utf8(c).ok())
                {
                    out.insert(child.to_owned());
                }
            }
        }
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

/// Reads a small file with one `open`, one `read` and a `close`.
///
/// `std::fs::read` first asks for the file's size and position, and reads once more
/// to see the end: `list` reads a few small files for each of a thousand tasks. A read
/// that does not fill the buffer is a regular file's end; a file that does fill it is
/// read on until a read returns nothing.
pub(crate) fn read_small(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut out = vec![0; 4096];
    let mut len = 0;
    loop {
        let n = match file.read(&mut out[len..]) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        len += n;
        if n == 0 || len < out.len() {
            break;
        }
        out.resize(out.len() * 2, 0);
    }
    out.truncate(len);
    Ok(out)
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

/// Whether gix finds a committer name and email (see [`committer_identity`]).
fn has_committer_identity(repo: &gix::Repository) -> bool {
    committer_identity(repo).is_some()
}

/// The committer name and email gix signs with ([`gix::Repository::committer`]:
/// the same keys in the same order), read without asking for the time, which
/// loads the local time zone database (a fifth of a short command's instructions).
fn committer_identity(repo: &gix::Repository) -> Option<(gix::bstr::BString, gix::bstr::BString)> {
    let config = repo.config_snapshot();
    let first = |keys: &[&str]| keys.iter().find_map(|k| config.string(*k));
    Some((
        first(&[
            "committer.name",
            "user.name",
            "gitoxide.committer.nameFallback",
        ])?,
        first(&[
            "committer.email",
            "user.email",
            "gitoxide.user.emailFallback",
            "gitoxide.committer.emailFallback",
        ])?,
    ))
}

/// Returns whether the process's current directory is `path` or a directory below it.
pub fn cwd_inside(path: &Path) -> bool {
    let Ok(cwd) = std::env::current_dir() else {
        return false;
    };
    let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| normalize(p));
    canon(&cwd).starts_with(canon(path))
}

/// Moves the process out of `path` into `to` when its current directory is inside `path`
/// (about to be deleted or replaced); returns `to` then, so the caller can tell the user to `cd` there.
pub fn leave_if_inside(path: &Path, to: &Path) -> Result<Option<PathBuf>> {
    if !cwd_inside(path) {
        return Ok(None);
    }
    std::env::set_current_dir(to)
        .map_err(|e| Error::repo(format!("could not change to '{}'", to.display()), e))?;
    Ok(Some(to.to_path_buf()))
}
