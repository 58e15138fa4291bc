//! `hooks install | uninstall | status`: sharing the hooks directory politely.
//!
//! What it guarantees:
//! - The shims go into the effective hooks directory ([`super::hooks_dir`]),
//!   which every worktree of the repository shares, with mode 0755, written
//!   to a temporary file and renamed into place.
//! - A hook that is not git-task's ("foreign") is never overwritten: it is
//!   renamed to `<name>.git-task-chained` (same bytes, same mode, same inode)
//!   and the shim runs it first with the same arguments and input; its
//!   failure stops the commit. `uninstall` renames it back, so the directory
//!   is exactly what it was before `install`.
//! - `install` is idempotent: a second run finds every shim identical and
//!   writes nothing. A shim of ours with other settings (binary moved, branch
//!   prefix changed) is rewritten; one that was edited, or comes from another
//!   version of git-task, is only replaced with `--force`.
//! - `notes.rewriteRef=refs/notes/tasks` is added to the repository's own
//!   config unless some config already has it; `uninstall` removes it only if
//!   `install` added it (remembered in `task.hooksAddedRewriteRef`).
//!
//! The config file is edited in process ([`crate::git::config`]). No git
//! process is started.

use super::scripts::{self, HookKind};
use crate::error::{Context, Error, Result};
use crate::git::{config, Repo};
use std::path::{Path, PathBuf};

/// Suffix of the file a foreign hook is moved to when it is chained.
pub const CHAINED_SUFFIX: &str = ".git-task-chained";
/// The notes ref that follows commits through amend and rebase.
pub const NOTES_REF: &str = crate::task::layout::NOTES_REF;
/// Set to `true` when `install` added `notes.rewriteRef`, so `uninstall` knows to remove it.
pub const ADDED_REWRITE_REF_KEY: &str = "task.hooksAddedRewriteRef";

/// What is at a hook's path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// No file.
    Missing,
    /// git-task's shim, current and with the current settings.
    Installed,
    /// git-task's shim with other settings (binary path or branch prefix); `install` updates it.
    Outdated,
    /// git-task's shim, edited or from another version; `install --force` replaces it.
    Modified,
    /// Someone else's hook; `install` chains it.
    Foreign,
}

/// One hook as `status` sees it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct HookStatus {
    /// `pre-commit` or `post-checkout`.
    pub name: &'static str,
    /// Absolute path of the hook file.
    pub path: String,
    /// What is there.
    pub state: State,
    /// The foreign hook the shim runs first, if any.
    pub chained: Option<String>,
    /// The git-task binary recorded in the shim (`null` when not git-task's or not recorded).
    pub binary: Option<String>,
    /// Whether that binary exists and is executable.
    pub binary_found: bool,
    /// The task branch prefix recorded in the shim.
    pub prefix: Option<String>,
}

/// Everything `status` reports.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Status {
    /// The effective hooks directory.
    pub dir: String,
    /// One entry per hook git-task installs.
    pub hooks: Vec<HookStatus>,
    /// Whether `notes.rewriteRef` includes `refs/notes/tasks` (in any config).
    pub notes_rewrite_ref: bool,
}

/// What `install` did to one hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InstallAction {
    /// Already installed, identical: nothing written.
    Unchanged,
    /// Written where there was nothing.
    Written,
    /// Our shim rewritten with new settings (or a new version, with `--force`).
    Updated,
    /// A foreign hook was moved aside and is run first by the shim.
    Chained,
}

/// What `uninstall` did to one hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UninstallAction {
    /// Nothing of git-task's was there.
    Absent,
    /// Our shim was deleted.
    Removed,
    /// Our shim was deleted and the chained hook put back where it was.
    Restored,
    /// A hook that is not git-task's is there; it was left alone.
    Foreign,
}

/// One hook's outcome.
#[derive(Clone, Debug, serde::Serialize)]
pub struct HookOutcome<A> {
    /// `pre-commit` or `post-checkout`.
    pub name: &'static str,
    /// Absolute path of the hook file.
    pub path: String,
    /// What happened.
    pub action: A,
}

/// The outcome of `install` or `uninstall`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Outcome<A> {
    /// The effective hooks directory.
    pub dir: String,
    /// One entry per hook.
    pub hooks: Vec<HookOutcome<A>>,
    /// Whether this run changed `notes.rewriteRef` (added on install, removed on uninstall).
    pub notes_rewrite_ref_changed: bool,
}

/// Options of `install`.
#[derive(Clone, Debug)]
pub struct InstallOptions {
    /// Replace an edited or other-version shim of ours.
    pub force: bool,
    /// The settings baked into the shims.
    pub settings: scripts::Settings,
}

/// Installs the shims (see the module docs for what is guaranteed).
pub fn install(repo: &Repo, opts: &InstallOptions) -> Result<Outcome<InstallAction>> {
    let dir = super::hooks_dir(repo);
    std::fs::create_dir_all(&dir)
        .context(|| format!("could not create the hooks directory '{}'", dir.display()))?;
    // Check every hook before changing any, so a refusal leaves nothing half done.
    let mut plan = Vec::new();
    for kind in HookKind::ALL {
        let path = dir.join(kind.name());
        let chained = chained_path(&path);
        let wanted = scripts::render(kind, &opts.settings);
        let action = match read_hook(&path)? {
            None => InstallAction::Written,
            Some(Existing::Text(text)) if scripts::is_ours(&text) => {
                if text == wanted && super::is_executable(&path) {
                    InstallAction::Unchanged
                } else if scripts::is_pristine(kind, &text) || opts.force {
                    InstallAction::Updated
                } else {
                    return Err(Error::input(format!(
                        "'{}' is a git-task hook that was edited or comes from another version",
                        path.display()
                    ))
                    .hint("replace it with this version's hook: git task hooks install --force"));
                }
            }
            Some(_) => {
                if exists(&chained) {
                    return Err(Error::input(format!(
                        "'{}' is not git-task's hook, and '{}' is already taken by the hook chained before",
                        path.display(),
                        chained.display()
                    ))
                    .hint(format!("move one of them away (keep the one you want to run before git-task's check as '{}'), then run 'git task hooks install' again", chained.display())));
                }
                InstallAction::Chained
            }
        };
        plan.push((kind, path, chained, wanted, action));
    }
    let mut hooks = Vec::new();
    for (kind, path, chained, wanted, action) in plan {
        match action {
            InstallAction::Unchanged => {}
            InstallAction::Chained => {
                std::fs::rename(&path, &chained).context(|| {
                    format!(
                        "could not move '{}' to '{}'",
                        path.display(),
                        chained.display()
                    )
                })?;
                write_executable(&path, wanted.as_bytes())?;
            }
            InstallAction::Written | InstallAction::Updated => {
                write_executable(&path, wanted.as_bytes())?
            }
        }
        hooks.push(HookOutcome {
            name: kind.name(),
            path: path.display().to_string(),
            action,
        });
    }
    let notes_rewrite_ref_changed = add_rewrite_ref(repo)?;
    Ok(Outcome {
        dir: dir.display().to_string(),
        hooks,
        notes_rewrite_ref_changed,
    })
}

/// Removes the shims and puts chained hooks back (see the module docs).
pub fn uninstall(repo: &Repo) -> Result<Outcome<UninstallAction>> {
    let dir = super::hooks_dir(repo);
    let mut hooks = Vec::new();
    for kind in HookKind::ALL {
        let path = dir.join(kind.name());
        let chained = chained_path(&path);
        let ours = match read_hook(&path)? {
            None => None,
            Some(Existing::Text(text)) if scripts::is_ours(&text) => Some(true),
            Some(_) => Some(false),
        };
        let action = match ours {
            Some(false) => UninstallAction::Foreign,
            found => {
                if found == Some(true) {
                    std::fs::remove_file(&path)
                        .context(|| format!("could not remove '{}'", path.display()))?;
                }
                if exists(&chained) {
                    std::fs::rename(&chained, &path).context(|| {
                        format!(
                            "could not move '{}' back to '{}'",
                            chained.display(),
                            path.display()
                        )
                    })?;
                    UninstallAction::Restored
                } else if found == Some(true) {
                    UninstallAction::Removed
                } else {
                    UninstallAction::Absent
                }
            }
        };
        hooks.push(HookOutcome {
            name: kind.name(),
            path: path.display().to_string(),
            action,
        });
    }
    let notes_rewrite_ref_changed = remove_rewrite_ref(repo)?;
    Ok(Outcome {
        dir: dir.display().to_string(),
        hooks,
        notes_rewrite_ref_changed,
    })
}

/// Reports what is installed where; `settings` are what `install` would write now.
pub fn status(repo: &Repo, settings: &scripts::Settings) -> Result<Status> {
    let dir = super::hooks_dir(repo);
    let mut hooks = Vec::new();
    for kind in HookKind::ALL {
        let path = dir.join(kind.name());
        let chained = chained_path(&path);
        let (state, recorded) = match read_hook(&path)? {
            None => (State::Missing, None),
            Some(Existing::Text(text)) if scripts::is_ours(&text) => {
                let recorded = scripts::parse(&text);
                let state = if !scripts::is_pristine(kind, &text) {
                    State::Modified
                } else if recorded.as_ref() == Some(settings) && super::is_executable(&path) {
                    State::Installed
                } else {
                    State::Outdated
                };
                (state, recorded)
            }
            Some(_) => (State::Foreign, None),
        };
        let binary = recorded
            .as_ref()
            .map(|s| s.binary.clone())
            .filter(|b| !b.is_empty());
        hooks.push(HookStatus {
            name: kind.name(),
            path: path.display().to_string(),
            state,
            chained: exists(&chained).then(|| chained.display().to_string()),
            binary_found: binary
                .as_deref()
                .is_some_and(|b| super::is_executable(Path::new(b))),
            binary,
            prefix: recorded.map(|s| s.prefix),
        });
    }
    let notes_rewrite_ref = repo
        .config_strings("notes.rewriteRef")
        .iter()
        .any(|v| v == NOTES_REF);
    Ok(Status {
        dir: dir.display().to_string(),
        hooks,
        notes_rewrite_ref,
    })
}

/// Returns where a foreign hook at `path` is kept while git-task's shim is installed.
pub fn chained_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(CHAINED_SUFFIX);
    path.with_file_name(name)
}

enum Existing {
    /// A regular file, as text.
    Text(String),
    /// Anything else: a symlink, a binary, a directory.
    Other,
}

fn read_hook(path: &Path) -> Result<Option<Existing>> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(Error::repo(
                format!("could not read '{}'", path.display()),
                e,
            ))
        }
    };
    if !meta.is_file() {
        return Ok(Some(Existing::Other));
    }
    let bytes = std::fs::read(path).context(|| format!("could not read '{}'", path.display()))?;
    Ok(Some(match String::from_utf8(bytes) {
        Ok(text) => Existing::Text(text),
        Err(_) => Existing::Other,
    }))
}

fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// Writes `bytes` to `path` with mode 0755: a temporary file beside it, renamed into place.
fn write_executable(path: &Path, bytes: &[u8]) -> Result<()> {
    crate::git::fs::replace_file(path, Some(0o755), |file| {
        std::io::Write::write_all(file, bytes)
    })
    .context(|| format!("could not write '{}'", path.display()))
}

/// Adds `notes.rewriteRef=refs/notes/tasks` unless some config has it; returns whether it was added.
fn add_rewrite_ref(repo: &Repo) -> Result<bool> {
    if repo
        .config_strings("notes.rewriteRef")
        .iter()
        .any(|v| v == NOTES_REF)
    {
        return Ok(false);
    }
    let added = config::add_local_value(repo, "notes", "rewriteRef", NOTES_REF)?;
    if added {
        config::add_local_value(repo, "task", "hooksAddedRewriteRef", "true")?;
    }
    Ok(added)
}

/// Removes what [`add_rewrite_ref`] added; returns whether anything was removed.
fn remove_rewrite_ref(repo: &Repo) -> Result<bool> {
    if repo.config_bool(ADDED_REWRITE_REF_KEY) != Some(true) {
        return Ok(false);
    }
    let removed = config::remove_local_value(repo, "notes", "rewriteRef", Some(NOTES_REF))?;
    config::remove_local_value(repo, "task", "hooksAddedRewriteRef", None)?;
    Ok(removed)
}
