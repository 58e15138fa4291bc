//! The kernel write fence of `git task exec --confine` (SPEC §6, §11): Linux Landlock.
//!
//! A confined process, and everything it starts, may read and execute anything and use
//! the network as before, but may *write* only what [`prepare`] lists in a [`Fence`]: the
//! task's worktree (with `--confine=strict`, only the contract's directory hull in it:
//! [`hull`]), what `git commit` on the task's own branch writes (the worktree's admin dir,
//! the branch's ref directory and its reflog), the task's scratch dir (its private
//! `TMPDIR` and private object store live there: [`store`]), `task.confineWritable`, and a
//! few devices. The shared object store stays read-only.
//!
//! [`exec`] applies the fence to the git-task process itself and then replaces it with the
//! command (`CommandExt::exec`, no `unsafe`): the command keeps git-task's pid, so signals
//! reach it and its exit code is the caller's without relaying. Landlock domains are
//! inherited across `fork` and `execve` and cannot be lifted.
//!
//! Which rights git needs where was found by removing each one and watching git fail
//! (git 2.47, Linux 6.18, Landlock ABI 7); see the man page's CONFINEMENT section for what
//! the fence can and cannot express.

mod hull;
#[cfg(target_os = "linux")]
mod kernel;
mod store;

pub use hull::hull;
pub use store::{settle, settle_all, Settled};

use crate::error::{Error, Result};
use crate::git::Repo;
use crate::task::{layout, TaskId};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// How hard the fence is required.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// `--confine`, `--confine=strict`: the whole fence or nothing runs (exit 2).
    Required,
    /// `--confine=best-effort`: what the kernel can enforce; without Landlock, nothing
    /// (the command runs unconfined, with a warning).
    BestEffort,
}

/// What the running kernel offers (`git task hooks status`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Support {
    /// Whether `exec --confine` can enforce the whole fence here.
    pub available: bool,
    /// The kernel's Landlock ABI version, when it has Landlock.
    pub abi: Option<u32>,
    /// What is missing, in words (empty when available).
    pub detail: String,
}

impl Support {
    #[allow(dead_code)]
    fn full(abi: u32) -> Support {
        Support {
            available: true,
            abi: Some(abi),
            detail: String::new(),
        }
    }

    #[allow(dead_code)]
    fn partial(abi: u32, missing: &str) -> Support {
        Support {
            available: false,
            abi: Some(abi),
            detail: format!("the kernel's Landlock ABI {abi} is too old: {missing}"),
        }
    }

    fn none(why: &str) -> Support {
        Support {
            available: false,
            abi: None,
            detail: why.to_owned(),
        }
    }
}

/// Probes the running kernel (one Landlock version query; nothing is restricted).
pub fn support() -> Support {
    #[cfg(target_os = "linux")]
    {
        kernel::support()
    }
    #[cfg(not(target_os = "linux"))]
    {
        Support::none("Landlock is a Linux kernel feature")
    }
}

/// The refusal of a required fence this kernel cannot enforce (exit 2).
pub fn unsupported(support: &Support) -> Error {
    Error::input(format!("cannot confine: {}", support.detail)).hint(
        "'--confine=best-effort' runs the command unconfined where the kernel cannot confine it",
    )
}

/// What a confined process may change beneath one path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grant {
    /// Everything beneath a directory: create, write, truncate, rename, link and delete
    /// files, directories and other nodes.
    Tree,
    /// A loose-ref directory (`<common>/refs/heads/task/`): create `<ref>.lock`, write it
    /// and rename it over `<ref>`, for *every* name in the directory (Landlock's unit).
    RefDir,
    /// One existing file, written or truncated in place (a sibling of a forbidden entry).
    File,
    /// One existing file, appended to: a reflog.
    Append,
    /// A device node (`/dev/null`, `/dev/tty`), opened for writing.
    Device,
}

/// One writable path of a fence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// The path; it exists when the fence is applied.
    pub path: PathBuf,
    /// What may be changed beneath it.
    pub grant: Grant,
}

/// Everything a confined process may write.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fence {
    /// The writable paths.
    pub rules: Vec<Rule>,
}

/// What [`exec`] enforced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enforced {
    /// The whole fence.
    Fully,
    /// Part of it (best effort on an old kernel).
    Partially,
    /// Nothing (best effort on a kernel without Landlock).
    Not,
}

/// The device nodes a confined process may open for writing: `/dev/null` and `/dev/tty`,
/// and those common tools need that change no file (`openpty` needs `/dev/ptmx` and
/// `/dev/pts/`). Missing ones are skipped.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/tty",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/ptmx",
    "/dev/pts",
];

/// POSIX shared memory and semaphores (`shm_open`, `sem_open`: Python's
/// `multiprocessing.Lock`, Electron): writable whole. This lets a confined process write
/// other same-user processes' shared memory, which is no repository state.
const SHM: &str = "/dev/shm";

/// What to confine a session to.
pub struct Request<'a> {
    /// The task.
    pub id: &'a TaskId,
    /// Its linked worktree.
    pub worktree: &'a Path,
    /// Its branch, full ref name (`refs/heads/task/<id>`).
    pub branch_ref: &'a str,
    /// Its base branch, full ref name, if any (only to warn when it shares the task
    /// branch's ref directory).
    pub base_ref: Option<&'a str>,
    /// With `--confine=strict`: the contract's allowed and forbidden globs.
    pub strict: Option<(Vec<String>, Vec<String>)>,
    /// `task.confineBuildDirs` (strict only).
    pub build_dirs: &'a [String],
    /// `task.confineWritable`, `~` expanded.
    pub writable: &'a [PathBuf],
}

/// A fence ready to apply, and what goes with it.
pub struct Plan {
    /// The writable paths.
    pub fence: Fence,
    /// The environment the command gets on top of `exec`'s.
    pub env: Vec<(&'static str, OsString)>,
    /// What the fence cannot express here, in words.
    pub warnings: Vec<String>,
}

/// Prepares the fence of a task's session: moves the objects of the task's previous session
/// to the shared store, makes what must exist before the fence (the branch's ref directory and reflog,
/// the scratch dir, `TMPDIR`, a fresh private store listed in the shared store's
/// alternates) and lists the writable paths. Nothing is restricted yet.
pub fn prepare(repo: &Repo, req: &Request) -> Result<Plan> {
    let mut warnings = Vec::new();
    let common = repo.common_dir().to_path_buf();
    let worktree = canonical(req.worktree)?;
    let admin = crate::git::worktree::list(repo)?
        .into_iter()
        .find(|l| l.path.canonicalize().ok().as_deref() == Some(&worktree))
        .map(|l| l.git_dir)
        .ok_or_else(|| {
            Error::input(format!(
                "cannot confine: '{}' is not a linked worktree of this repository",
                worktree.display()
            ))
            .hint("only worktree-mode tasks can be confined (a patch-mode task works in the main worktree)")
        })?;
    let admin = canonical(&admin)?;

    // The branch's ref directory: every loose ref in it is writable (Landlock's unit).
    let ref_dir_rel = req
        .branch_ref
        .rsplit_once('/')
        .map(|(dir, _)| dir)
        .filter(|dir| dir.starts_with("refs/heads/") && *dir != "refs/heads")
        .ok_or_else(|| {
            Error::input(format!(
                "cannot confine: the task branch '{}' is not in a directory of its own under refs/heads/",
                req.branch_ref
            ))
            .hint("set a branch prefix such as 'task/' (task.branchPrefix): the fence makes the branch's whole ref directory writable")
        })?;
    if let Some(base) = req.base_ref {
        if base.rsplit_once('/').map(|(d, _)| d) == Some(ref_dir_rel) {
            warnings.push(format!(
                "the base branch '{base}' is in the task branch's ref directory '{ref_dir_rel}/': the fence cannot keep the session from moving it (the gate judges what lands)"
            ));
        }
    }
    let ref_dir = common.join(ref_dir_rel);
    std::fs::create_dir_all(&ref_dir).map_err(|e| io_err("could not create", &ref_dir, e))?;
    // The reflog must exist: git can create a missing one only with rights on its
    // whole directory, which the fence does not give.
    let reflog = common.join("logs").join(req.branch_ref);
    if let Some(dir) = reflog.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io_err("could not create", dir, e))?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&reflog)
        .map_err(|e| io_err("could not create", &reflog, e))?;

    // The scratch dir, and in it TMPDIR: the session may have replaced them with links.
    let scratch = layout::scratch_dir(&common, req.id);
    std::fs::create_dir_all(&scratch).map_err(|e| io_err("could not create", &scratch, e))?;
    let scratch = canonical(&scratch)?;
    let tmpdir = real_dir(&scratch.join("tmp"))?;
    // The previous session's objects go to the shared store; its store is used again.
    let (objects, settled) = store::attach(repo, req.id, &worktree)?;
    if !settled.forged.is_empty() {
        warnings.push(forged_warning(&settled));
    }
    if let Some(why) = &settled.kept {
        warnings.push(format!(
            "the previous session's object store was kept: {why}"
        ));
    }
    // This process becomes the command: nothing would release the `.keep` of the pack the
    // settling wrote (its objects are named by the task branch already).
    crate::git::pack::release();

    let mut rules = Vec::new();
    let mut add = |path: PathBuf, grant| rules.push(Rule { path, grant });
    match &req.strict {
        None => add(worktree.clone(), Grant::Tree),
        Some((allowed, forbidden)) => {
            let h = hull(&worktree, allowed, forbidden, req.build_dirs);
            warnings.extend(h.warnings);
            h.dirs.into_iter().for_each(|d| add(d, Grant::Tree));
            h.files.into_iter().for_each(|f| add(f, Grant::File));
        }
    }
    add(admin, Grant::Tree);
    add(canonical(&ref_dir)?, Grant::RefDir);
    add(canonical(&reflog)?, Grant::Append);
    // Holds TMPDIR and the private object store.
    add(scratch, Grant::Tree);
    for path in req.writable {
        match path.canonicalize() {
            Ok(p) => add(p, Grant::Tree),
            Err(_) => warnings.push(format!(
                "task.confineWritable: '{}' does not exist, so it is not writable (create it first)",
                path.display()
            )),
        }
    }
    for dev in DEVICES {
        if Path::new(dev).exists() {
            add(PathBuf::from(dev), Grant::Device);
        }
    }
    if Path::new(SHM).is_dir() {
        add(PathBuf::from(SHM), Grant::Tree);
    }

    let env = vec![
        ("TMPDIR", tmpdir.into_os_string()),
        // `hooks install` sets notes.rewriteRef: git would copy notes on `commit --amend`
        // into refs/notes/tasks, which is not writable, and exit 128 after the amend.
        ("GIT_NOTES_REWRITE_REF", OsString::new()),
        ("GIT_OBJECT_DIRECTORY", objects.into_os_string()),
        (
            "GIT_ALTERNATE_OBJECT_DIRECTORIES",
            common.join("objects").into_os_string(),
        ),
        (
            "GIT_TASK_CONFINE",
            OsString::from(if req.strict.is_some() {
                "strict"
            } else {
                "worktree"
            }),
        ),
    ];
    Ok(Plan {
        fence: Fence { rules },
        env,
        warnings,
    })
}

/// The warning about objects a settle left out.
pub fn forged_warning(s: &Settled) -> String {
    format!(
        "left out {} object(s) of a confined session whose content does not match their name: {}",
        s.forged.len(),
        s.forged.join(", ")
    )
}

/// Applies `plan`'s fence to this process and replaces it with `cmd`. Returns only when
/// that failed: the fence could not be applied (nothing ran), or the command could not be
/// started. `warn` hears, before the command starts, that best effort enforced less than
/// the whole fence.
pub fn exec(
    plan: &Plan,
    level: Level,
    cmd: &mut std::process::Command,
    warn: impl FnOnce(Enforced),
) -> Error {
    #[cfg(target_os = "linux")]
    let enforced = match kernel::apply(&plan.fence, level) {
        Ok(e) => e,
        Err(e) => return e,
    };
    #[cfg(not(target_os = "linux"))]
    let enforced = match level {
        Level::Required => return unsupported(&support()),
        Level::BestEffort => {
            let _ = plan;
            Enforced::Not
        }
    };
    if enforced != Enforced::Fully {
        warn(enforced);
    }
    exec_plain(cmd)
}

/// Replaces this process with `cmd`; returns only on failure.
pub fn exec_plain(cmd: &mut std::process::Command) -> Error {
    let program = cmd.get_program().to_string_lossy().into_owned();
    #[cfg(unix)]
    let e = {
        use std::os::unix::process::CommandExt;
        cmd.exec()
    };
    #[cfg(not(unix))]
    let e = std::io::Error::other("replacing the process needs Unix");
    let err = Error::input(format!("could not run '{program}': {e}"));
    if e.kind() == std::io::ErrorKind::NotFound {
        err.hint(format!("is '{program}' installed and on PATH?"))
    } else {
        err.hint(format!("check that '{program}' is an executable program"))
    }
}

fn canonical(path: &Path) -> Result<PathBuf> {
    path.canonicalize()
        .map_err(|e| io_err("could not resolve", path, e))
}

/// A real directory at `path` (made if missing; a link or file left there is removed),
/// resolved.
fn real_dir(path: &Path) -> Result<PathBuf> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| !m.is_dir()) {
        std::fs::remove_file(path).map_err(|e| io_err("could not remove", path, e))?;
    }
    std::fs::create_dir_all(path).map_err(|e| io_err("could not create", path, e))?;
    canonical(path)
}

fn io_err(what: &str, path: &Path, e: std::io::Error) -> Error {
    Error::repo(format!("{what} '{}'", path.display()), e)
}
