//! The adapter to gix, at the bottom of the crate: this file opens a repository
//! ([`Repo`], whose gix handle no module outside `git/` sees) and reads refs and
//! configuration; the rest is grouped by git concept:
//!
//! - `objects`: blobs, trees, commits; `diff/`: changed paths between trees, with
//!   renames, as unified patches; `merge/`: in-memory merges;
//! - `refs/`: transactions with expected old values, cheap bulk reads, notes;
//! - `index/`: what is staged, index files, the cache-tree extension;
//! - `status/`: is a worktree clean (the quick check of `list`, the gate's), its
//!   state as trees, ignored files;
//! - `checkout/`: moving a checked-out worktree, rewriting one in place, and the
//!   one file writer both use;
//! - `worktree/`: linked worktrees (add, list, remove); `config`: config files;
//!   `pathsafe`: which repository paths may be written; `journal`: the crash
//!   journal's entries; `fs`: whole-file replacement and path helpers; `cli`: the
//!   only place that runs the `git` program.
//!
//! `git/` uses nothing of the crate but the error type (`tests/guards.rs` checks).
//! What it re-exports of gix are plain values: [`ObjectId`], [`EntryKind`] and the
//! byte strings of [`bstr`].

pub mod checkout;
pub mod cli;
pub mod config;
pub mod diff;
pub mod fs;
pub mod import;
pub mod index;
pub mod journal;
pub mod merge;
pub mod objects;
pub mod pack;
pub mod pathsafe;
pub mod refs;
pub mod status;
pub mod worktree;

use crate::error::{Context, Error, Result};
use std::path::{Path, PathBuf};

/// Object ids and tree entry kinds are plain values; git-task names them as gix
/// does instead of copying them (an id is 20 bytes, an entry kind five cases).
pub use gix::object::tree::EntryKind;
pub use gix::ObjectId;
// Path and file helpers every layer uses, kept at their old names.
pub(crate) use fs::read_small;
pub use fs::{absolute, canonical, cwd_inside, is_executable, leave_if_inside, normalize};
/// Byte strings: repository paths are bytes, not UTF-8 (`BString`, `BStr`, `ByteSlice`).
pub mod bstr {
    pub use gix::bstr::{BStr, BString, ByteSlice};
}

/// Repository paths (git's bytes, `/`-separated) and paths on disk.
pub mod path {
    use crate::error::{Error, Result};
    use crate::git::bstr::BStr;
    use std::path::Path;

    /// A repository path as a relative path on disk.
    pub fn from_repo(rel: &BStr) -> Result<&Path> {
        gix::path::from_byte_slice(rel).map_err(|e| Error::repo(format!("bad path '{rel}'"), e))
    }

    /// A path on disk (a link's target) as git stores it.
    #[cfg(not(unix))]
    pub fn to_repo(path: &Path) -> Result<std::borrow::Cow<'_, BStr>> {
        gix::path::into_bstr(path)
            .map_err(|e| Error::repo(format!("bad path '{}'", path.display()), e))
    }
}

/// Ctrl-C: the flag long operations (a checkout, a copy) look at, and the handler
/// that raises it instead of killing the process.
pub mod interrupt {
    use std::sync::atomic::AtomicBool;

    /// The flag raised by the handler.
    pub fn flag() -> &'static AtomicBool {
        &gix::interrupt::IS_INTERRUPTED
    }

    /// Whether Ctrl-C was pressed since the handler was installed.
    pub fn is_triggered() -> bool {
        gix::interrupt::is_triggered()
    }

    /// Installed for as long as it lives (a second Ctrl-C kills the process).
    pub struct Handler(#[allow(dead_code)] gix::interrupt::Deregister);

    /// Installs the handler; `None` when one cannot be installed (the default then applies).
    pub fn install() -> Option<Handler> {
        gix::interrupt::init_handler_default(1).ok().map(Handler)
    }
}

impl From<gix::Error> for Error {
    fn from(err: gix::Error) -> Self {
        Error::repo("repository operation failed", err)
    }
}

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

/// Starts `cmd` (a git-task subcommand) in the background, outliving this process: no
/// standard streams, its own process group (a Ctrl-C here does not reach it), and none of
/// git's per-repository variables. Returns whether it started.
pub fn spawn_detached(mut cmd: std::process::Command) -> bool {
    use std::process::Stdio;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for var in LOCAL_ENV {
        cmd.env_remove(var);
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    cmd.spawn().is_ok()
}

/// `<common dir>/git-task`: where git-task keeps what git commands cannot reach (SPEC §4: the
/// ledger, the pinned settings, the journal, caches, scratch directories). The one place
/// that names it.
pub fn state_dir(common_dir: &std::path::Path) -> std::path::PathBuf {
    common_dir.join("git-task")
}

/// The all-zero object id (git's "no object").
pub fn null_id() -> ObjectId {
    ObjectId::null(gix::hash::Kind::Sha1)
}

/// How git-task opens every repository: objects are read as stored, with replace refs
/// disabled (gix reads no grafts), so an agent's `git replace` cannot change what the gate
/// or the hooks see (SPEC §7.4); untracked files are judged with fixed settings.
///
/// Every handle also carries git-task's fallback identity (`git-task <git-task@localhost>`)
/// as gix's last-resort committer and author: it signs only when no `committer.*`/
/// `author.*`/`user.*` (nor `GIT_COMMITTER_*`/`GIT_AUTHOR_*`) is set, so a merge works
/// on a machine without an identity, as `start` and `checkpoint` do. The options travel with
/// the handle, so the repositories gix opens itself (a new worktree's, whose `HEAD` reflog
/// needs a committer) sign the same way, with no process environment to set.
///
/// The `git -c key=value` settings of the git that started git-task (a hook, or `git task`
/// itself) come in `GIT_CONFIG_PARAMETERS`, which gix does not read: they are applied as
/// command-line overrides, so `-c color.ui=false` or `-c task.onViolation=revert` mean what they
/// mean to git. (`GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_<n>` are read by gix itself.) git-task's
/// own overrides above win over them: `-c core.useReplaceRefs=true` cannot turn replace refs on.
pub fn open_options() -> gix::sec::trust::Mapping<gix::open::Options> {
    const OVERRIDES: [&str; 7] = [
        "core.useReplaceRefs=false",
        // "Is there work to lose?" is answered with fixed status settings: every untracked
        // file is seen, and only the repository's own `.gitignore` files and `info/exclude`
        // make one ignored, never a `core.excludesFile` or `status.*` an agent can set.
        "core.excludesFile=/dev/null",
        "status.showUntrackedFiles=all",
        "gitoxide.committer.nameFallback=git-task",
        "gitoxide.committer.emailFallback=git-task@localhost",
        "gitoxide.author.nameFallback=git-task",
        "gitoxide.author.emailFallback=git-task@localhost",
    ];
    let cli = std::env::var("GIT_CONFIG_PARAMETERS")
        .map(|p| config::parse_parameters(&p))
        .unwrap_or_default();
    let mut map = gix::sec::trust::Mapping::<gix::open::Options>::default();
    map.full = map
        .full
        .config_overrides(OVERRIDES)
        .cli_overrides(cli.clone());
    map.reduced = map.reduced.config_overrides(OVERRIDES).cli_overrides(cli);
    map
}

/// Set once a repository without a configured identity was opened: the `git` processes
/// [`cli`] starts then sign with the same fallback identity (given to each child in its
/// environment; the process's own environment is never changed).
static FALLBACK_IDENTITY_USED: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// The name and email git-task signs with when no identity is configured.
pub(crate) const FALLBACK_IDENTITY: (&str, &str) = ("git-task", "git-task@localhost");

/// Whether a repository without a configured identity was opened by this process.
pub(crate) fn fallback_identity_used() -> bool {
    FALLBACK_IDENTITY_USED.load(std::sync::atomic::Ordering::Relaxed)
}

/// An open repository, seen from one worktree (or from inside a hook).
pub struct Repo {
    /// The gix handle: only `git/` uses it.
    inner: gix::Repository,
    common_dir: PathBuf,
    /// Looked at once per process (`list` asks for every worktree).
    ignore_files: std::cell::OnceCell<status::dirty::IgnoreFiles>,
    /// Where new objects go.
    objects: Objects,
}

/// Where a [`Repo`] handle writes new objects.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Objects {
    /// To the object database.
    Disk,
    /// To memory until the batch ends ([`pack::batch`]), then to the object database.
    Batch,
    /// To memory for good ([`Repo::with_objects_in_memory`]).
    Memory,
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
    /// worktree add` works without an identity: repositories opened with
    /// [`open_options`] carry that fallback; one opened otherwise gets it here,
    /// on this handle only.
    pub fn from_gix(mut inner: gix::Repository) -> Result<Repo> {
        if !has_configured_identity(&inner) {
            FALLBACK_IDENTITY_USED.store(true, std::sync::atomic::Ordering::Relaxed);
            inner
                .committer_or_set_fallback(FALLBACK_IDENTITY.0, FALLBACK_IDENTITY.1)
                .map_err(|e| Error::repo("could not set a fallback identity", e))?;
        }
        let common_dir = normalize(inner.common_dir());
        Ok(Repo {
            inner,
            common_dir,
            ignore_files: std::cell::OnceCell::new(),
            objects: Objects::Disk,
        })
    }

    /// Returns another handle on the same repository for another thread (gix handles are
    /// not shared between threads); it reads the same refs, objects and configuration. A
    /// handle on a batch ([`pack::batch`]) gives one that does not see the batch's objects
    /// and writes its own to disk at once (a copy of the batch would lose them).
    pub fn for_thread(&self) -> Repo {
        let mut inner = self.inner.clone();
        let mut objects = self.objects;
        if objects == Objects::Batch {
            inner.objects.take_object_memory();
            objects = Objects::Disk;
        }
        Repo {
            inner,
            common_dir: self.common_dir.clone(),
            ignore_files: std::cell::OnceCell::new(),
            objects,
        }
    }

    /// A handle whose new objects stay in memory, for [`pack::batch`].
    fn batched(&self) -> Repo {
        let mut inner = self.inner.clone();
        inner.objects.enable_object_memory();
        Repo {
            inner,
            common_dir: self.common_dir.clone(),
            ignore_files: std::cell::OnceCell::new(),
            objects: Objects::Batch,
        }
    }

    /// Returns the path of the index the caller's git would use: `GIT_INDEX_FILE` when set
    /// (inside a hook), else this worktree's index.
    pub fn index_path(&self) -> PathBuf {
        self.inner.index_path()
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
    /// ([`status::dirty::IgnoreFiles`]): `info/exclude` and `core.excludesFile`.
    pub fn ignore_files(&self) -> &status::dirty::IgnoreFiles {
        self.ignore_files.get_or_init(|| {
            let excludes = self
                .inner
                .config_snapshot()
                .trusted_path("core.excludesFile")
                .ok()
                .flatten();
            status::dirty::IgnoreFiles::new(self.common_dir(), excludes)
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

    /// Returns whether the repository is bare (no worktree).
    pub fn is_bare(&self) -> bool {
        self.inner.is_bare()
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
                .hint("name a branch, tag or commit; 'git branch' lists the branches")
        })?;
        let object = id.object().context(|| format!("could not read '{spec}'"))?;
        let commit = object.peel_to_commit().map_err(|_| {
            Error::input(format!("'{spec}' does not name a commit"))
                .hint("name a branch, tag or commit; 'git branch' lists the branches")
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

    /// Returns whether paths compare case-insensitively: `core.ignoreCase` is true *and* the
    /// file system of the git directory really folds case (its `HEAD` is found as `head`).
    ///
    /// The setting is configuration anyone with git can change, so on its own it may only make
    /// things stricter: on a case-sensitive file system `SRC/x` is another file than `src/x`,
    /// whatever the setting says (the contract's `allowed` must not match it).
    pub fn ignore_case(&self) -> bool {
        self.config_bool("core.ignoreCase").unwrap_or(false)
            && std::fs::symlink_metadata(self.common_dir.join("head")).is_ok()
    }

    /// Returns a handle on the same repository that keeps up to `bytes` of decoded objects:
    /// for a command that reads the same trees again and again (the merge gate reads the
    /// task's and the target's trees to judge, to plan and to update the checkout).
    pub fn with_object_cache(&self, bytes: usize) -> Repo {
        let mut inner = self.inner.clone();
        inner.object_cache_size_if_unset(bytes);
        Repo {
            inner,
            common_dir: self.common_dir.clone(),
            ignore_files: std::cell::OnceCell::new(),
            objects: self.objects,
        }
    }

    /// Returns a handle on the same repository whose object writes stay in memory: trial
    /// merges write their trees and commits there and leave nothing in the object database.
    pub fn with_objects_in_memory(&self) -> Repo {
        let mut inner = self.inner.clone().with_object_memory();
        // Trial merges read the same base and task trees over and over: keep them decoded.
        inner.object_cache_size_if_unset(64 << 20);
        Repo {
            inner,
            common_dir: self.common_dir.clone(),
            ignore_files: std::cell::OnceCell::new(),
            objects: Objects::Memory,
        }
    }
}

/// Whether a committer name and email are configured (`committer.*` or `user.*`),
/// not counting git-task's fallback.
fn has_configured_identity(repo: &gix::Repository) -> bool {
    let config = repo.config_snapshot();
    let any = |keys: &[&str]| keys.iter().any(|k| config.string(*k).is_some());
    any(&["committer.name", "user.name"]) && any(&["committer.email", "user.email"])
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
