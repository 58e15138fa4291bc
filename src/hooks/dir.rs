//! The shims in one hooks directory: what is at each hook's path, installing and
//! uninstalling git-task's shims there (chaining a foreign hook, noticing a manager that took
//! a shim over), and the file operations they share. `install.rs` decides which directories
//! (the shared one, each worktree's own); this file works in one.

use super::scripts::{self, HookKind};
use super::{Enforcement, Layout};
use crate::error::{Context, Error, Result};
use crate::git::Repo;
use std::path::{Path, PathBuf};

/// Suffix of the file a foreign hook is moved to when it is chained.
pub const CHAINED_SUFFIX: &str = ".git-task-chained";

/// Where pre-commit (the framework) keeps the hook it found when it installed its own; it runs it first.
pub const LEGACY_SUFFIX: &str = ".legacy";

/// Where lefthook puts the hook it found when it installed its own; it does not run it.
pub const OLD_SUFFIX: &str = ".old";

/// What is at a hook's path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// No file.
    Missing,
    /// git-task's shim, current and with the current settings.
    Installed,
    /// git-task's shim with other settings (binary path or branch prefix) or of an earlier version; `install` updates it.
    Outdated,
    /// git-task's shim, edited; `install --force` replaces it.
    Modified,
    /// Someone else's hook; `install` chains it.
    Foreign,
    /// A hook manager put its hook here and runs git-task's (kept as `<name>.legacy`) first: the check still runs.
    ChainedByManager,
    /// A hook manager replaced git-task's hook (kept aside, not run): commits are not checked; `install` chains it.
    Overwritten,
}

/// One hook as `status` sees it.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
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

/// What `install` did to one hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
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
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct HookOutcome<A> {
    /// `pre-commit` or `post-checkout`.
    pub name: &'static str,
    /// Absolute path of the hook file.
    pub path: String,
    /// What happened.
    pub action: A,
}

/// The directory holding the main worktree's shims.
pub(super) fn main_dir(repo: &Repo, layout: &Layout) -> PathBuf {
    match layout {
        Layout::Shared(dir) => dir.clone(),
        _ => super::own_dir(repo.common_dir(), repo.common_dir()),
    }
}

/// Installs the shims into one directory, chaining a foreign hook found there (in git-task's
/// own directory of a worktree, one a manager wrote there itself: lefthook run in that worktree
/// writes where its core.hooksPath points).
pub(super) fn install_in_dir(
    dir: &Path,
    settings: &scripts::Settings,
    force: bool,
) -> Result<Vec<HookOutcome<InstallAction>>> {
    install_kinds_in_dir(dir, settings, force, &HookKind::ALL)
}

/// [`install_in_dir`] for the shims `kinds` only (on git 2.54 and later, the pre-commit copy
/// for clients that read no hooks defined in config).
pub(super) fn install_kinds_in_dir(
    dir: &Path,
    settings: &scripts::Settings,
    force: bool,
    kinds: &[HookKind],
) -> Result<Vec<HookOutcome<InstallAction>>> {
    std::fs::create_dir_all(dir)
        .context(|| format!("could not create the hooks directory '{}'", dir.display()))?;
    // lefthook installed after git-task moved git-task's shim to `<name>.old` (which it never
    // runs), where it would have moved the hook git-task chained had git-task not been
    // installed: that hook is kept for that place (`<name>.old.git-task-chained`, which
    // `uninstall` puts there), so that the manager's own hook is the one chained now and the
    // manager finds `<name>.old` free when it installs again.
    for &kind in kinds {
        let path = dir.join(kind.name());
        let old = with_suffix(&path, OLD_SUFFIX);
        let (chained, kept) = (chained_path(&path), chained_path(&old));
        let foreign = match read_hook(&path)? {
            Some(Existing::Text(t)) => !scripts::is_ours(&t),
            Some(Existing::Other) => true,
            None => false,
        };
        if foreign
            && read_text(&old).is_some_and(|t| scripts::is_ours(&t))
            && exists(&chained)
            && !duplicate_of(&chained, &path)
            && !exists(&kept)
        {
            rename(&chained, &kept)?;
            remove(&old)?;
        }
    }
    // Check every hook before changing any, so a refusal leaves nothing half done.
    let mut plan = Vec::new();
    for &kind in kinds {
        let mut path = dir.join(kind.name());
        let wanted = scripts::render(kind, settings);
        let mut existing = read_hook(&path)?;
        // pre-commit (the framework) runs our shim as `<name>.legacy`: keep it there.
        if matches!(&existing, Some(Existing::Text(t)) if !scripts::is_ours(t)) {
            let legacy = with_suffix(&path, LEGACY_SUFFIX);
            if read_text(&legacy).is_some_and(|t| scripts::is_ours(&t)) {
                path = legacy;
                existing = read_hook(&path)?;
            }
        }
        let chained = chained_path(&path);
        let action = match existing {
            None => InstallAction::Written,
            Some(Existing::Text(text)) if scripts::is_ours(&text) => {
                if text == wanted && super::is_executable(&path) {
                    InstallAction::Unchanged
                } else if scripts::is_pristine(kind, &text) || force {
                    InstallAction::Updated
                } else {
                    return Err(Error::input(format!(
                        "'{}' is a git-task hook that was edited",
                        path.display()
                    ))
                    .hint("replace it with this version's hook: git task hooks install --force"));
                }
            }
            Some(existing) => {
                if exists(&chained) {
                    // A manager wrote the same hook again over our shim: the chained copy already runs it.
                    let same = matches!(&existing, Existing::Text(t) if read_text(&chained).as_deref() == Some(t.as_str()));
                    if !same {
                        return Err(Error::input(format!(
                            "'{}' is not git-task's hook, and '{}' is already taken by the hook chained before",
                            path.display(),
                            chained.display()
                        ))
                        .hint(format!("move one of them away (keep the one you want to run before git-task's check as '{}'), then run 'git task hooks install' again", chained.display())));
                    }
                    InstallAction::Updated
                } else {
                    InstallAction::Chained
                }
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
    Ok(hooks)
}

/// Removes git-task's shims from one directory and puts the hooks they chained back.
///
/// A manager may have moved a shim aside: pre-commit (the framework) to `<name>.legacy`, which
/// its own hook runs first, lefthook to `<name>.old`, which `lefthook uninstall` puts back.
/// Such a copy goes too, and the hook git-task had chained takes its place (where the manager
/// would have put it, had git-task never been installed); a chained copy that is the manager's
/// own hook again, byte for byte, is only a duplicate and goes.
pub(super) fn uninstall_in_dir(dir: &Path) -> Result<Vec<HookOutcome<UninstallAction>>> {
    uninstall_kinds_in_dir(dir, &HookKind::ALL)
}

/// [`uninstall_in_dir`] for the shims `kinds` only.
pub(super) fn uninstall_kinds_in_dir(
    dir: &Path,
    kinds: &[HookKind],
) -> Result<Vec<HookOutcome<UninstallAction>>> {
    let mut hooks = Vec::new();
    for &kind in kinds {
        let path = dir.join(kind.name());
        let chained = chained_path(&path);
        let ours = match read_hook(&path)? {
            None => None,
            Some(Existing::Text(text)) if scripts::is_ours(&text) => Some(true),
            Some(_) => Some(false),
        };
        let mut action = match ours {
            Some(false) => UninstallAction::Foreign,
            found => {
                if found == Some(true) {
                    remove(&path)?;
                }
                if exists(&chained) {
                    rename(&chained, &path)?;
                    UninstallAction::Restored
                } else if found == Some(true) {
                    UninstallAction::Removed
                } else {
                    UninstallAction::Absent
                }
            }
        };
        let mut where_ = path.clone();
        for suffix in [LEGACY_SUFFIX, OLD_SUFFIX] {
            let slot = with_suffix(&path, suffix);
            if !read_text(&slot).is_some_and(|t| scripts::is_ours(&t)) {
                continue;
            }
            remove(&slot)?;
            where_ = slot.clone();
            action = UninstallAction::Removed;
            for from in [chained_path(&slot), chained.clone()] {
                if exists(&from) && !duplicate_of(&from, &path) {
                    rename(&from, &slot)?;
                    action = UninstallAction::Restored;
                    break;
                }
            }
        }
        // The manager wrote its hook again over git-task's: the chained copy is that same hook.
        if exists(&chained) && duplicate_of(&chained, &path) {
            remove(&chained)?;
        }
        hooks.push(HookOutcome {
            name: kind.name(),
            path: where_.display().to_string(),
            action,
        });
    }
    Ok(hooks)
}

/// Whether `copy` holds the same bytes, with the same mode, as the file at `path`.
fn duplicate_of(copy: &Path, path: &Path) -> bool {
    let read = |p: &Path| {
        let meta = std::fs::symlink_metadata(p).ok().filter(|m| m.is_file())?;
        Some((std::fs::read(p).ok()?, super::is_executable(p), meta.len()))
    };
    matches!((read(copy), read(path)), (Some(a), Some(b)) if a == b)
}

fn remove(path: &Path) -> Result<()> {
    std::fs::remove_file(path).context(|| format!("could not remove '{}'", path.display()))
}

fn rename(from: &Path, to: &Path) -> Result<()> {
    std::fs::rename(from, to).context(|| {
        format!(
            "could not move '{}' back to '{}'",
            from.display(),
            to.display()
        )
    })
}

pub(super) fn status_in_dir(dir: &Path, settings: &scripts::Settings) -> Result<Vec<HookStatus>> {
    let mut hooks = Vec::new();
    for kind in HookKind::ALL {
        let path = dir.join(kind.name());
        let chained = chained_path(&path);
        let (state, recorded) = match read_hook(&path)? {
            None => (State::Missing, None),
            Some(Existing::Text(text)) if scripts::is_ours(&text) => {
                let recorded = scripts::parse(&text);
                let state =
                    if text == scripts::render(kind, settings) && super::is_executable(&path) {
                        State::Installed
                    } else if scripts::is_pristine(kind, &text) {
                        State::Outdated
                    } else {
                        State::Modified
                    };
                (state, recorded)
            }
            Some(_) => {
                let is_ours = |suffix| {
                    read_text(&with_suffix(&path, suffix)).is_some_and(|t| scripts::is_ours(&t))
                };
                if is_ours(LEGACY_SUFFIX) {
                    (State::ChainedByManager, None)
                } else if is_ours(OLD_SUFFIX) || exists(&chained) {
                    (State::Overwritten, None)
                } else {
                    (State::Foreign, None)
                }
            }
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
    Ok(hooks)
}

/// Whether a shared hooks directory runs the contract check at commit time (a few reads).
pub(super) fn shared_enforcement(dir: &Path) -> Enforcement {
    let path = dir.join("pre-commit");
    let ours = |p: &Path| read_text(p).is_some_and(|t| scripts::is_ours(&t));
    if ours(&path) || ours(&with_suffix(&path, LEGACY_SUFFIX)) {
        return Enforcement::Enforced;
    }
    if exists(&path) && (ours(&with_suffix(&path, OLD_SUFFIX)) || exists(&chained_path(&path))) {
        return Enforcement::Overwritten {
            path: path.display().to_string(),
        };
    }
    Enforcement::NotInstalled
}

/// The settings of the shims installed in the hooks directory (what a new worktree gets),
/// `None` when not installed there.
pub(super) fn installed_settings(repo: &Repo, layout: &Layout) -> Option<scripts::Settings> {
    settings_in(&main_dir(repo, layout))
}

/// The settings of git-task's pre-commit shim in `dir` (or kept there by a manager: pre-commit's
/// legacy hook, lefthook's `.old`), `None` when there is none.
pub(super) fn settings_in(dir: &Path) -> Option<scripts::Settings> {
    let path = dir.join("pre-commit");
    [
        path.clone(),
        with_suffix(&path, LEGACY_SUFFIX),
        with_suffix(&path, OLD_SUFFIX),
    ]
    .iter()
    .find_map(|p| read_text(p).filter(|t| scripts::is_ours(t)))
    .and_then(|t| scripts::parse(&t))
}

/// Returns where a foreign hook at `path` is kept while git-task's shim is installed.
pub fn chained_path(path: &Path) -> PathBuf {
    with_suffix(path, CHAINED_SUFFIX)
}

pub(super) fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

/// Reads a hook file as text; `None` if it is missing or not text.
pub(super) fn read_text(path: &Path) -> Option<String> {
    String::from_utf8(crate::git::read_small(path).ok()?).ok()
}

pub(super) enum Existing {
    /// A regular file, as text.
    Text(String),
    /// Anything else: a symlink, a binary, a directory.
    Other,
}

pub(super) fn read_hook(path: &Path) -> Result<Option<Existing>> {
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

pub(super) fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// Writes `bytes` to `path` with mode 0755: a temporary file beside it, renamed into place.
pub(super) fn write_executable(path: &Path, bytes: &[u8]) -> Result<()> {
    crate::git::fs::replace_file(path, Some(0o755), |file| {
        std::io::Write::write_all(file, bytes)
    })
    .context(|| format!("could not write '{}'", path.display()))
}

/// The file (under the common dir) listing every shared hooks directory `install` wrote to,
/// one absolute path a line: `uninstall` cleans each, wherever `core.hooksPath` points now.
pub const DIRS_FILE: &str = "git-task/hooks-dirs";

pub(super) fn remembered_dirs(repo: &Repo) -> Vec<std::path::PathBuf> {
    std::fs::read_to_string(repo.common_dir().join(DIRS_FILE))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.is_empty())
        .map(std::path::PathBuf::from)
        .collect()
}

pub(super) fn remember_dir(repo: &Repo, dir: &std::path::Path) -> Result<()> {
    let dir = crate::git::absolute(dir);
    let mut dirs = remembered_dirs(repo);
    if dirs.contains(&dir) {
        return Ok(());
    }
    dirs.push(dir);
    let text: String = dirs.iter().map(|d| format!("{}\n", d.display())).collect();
    let path = repo.common_dir().join(DIRS_FILE);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| Error::repo(format!("could not create '{}'", parent.display()), e))?;
    }
    crate::git::fs::replace_file(&path, None, |f| {
        std::io::Write::write_all(f, text.as_bytes())
    })
    .map_err(|e| Error::repo(format!("could not write '{}'", path.display()), e))
}

/// Moves every hook left in `from` (git-task's own directory of a worktree, its shims gone)
/// into `to`: where nothing is, or, beside git-task's shim there, as the hook that shim chains
/// (`<name>.git-task-chained`) when none is chained yet. What has no free place stays; `from`
/// goes when it is left empty.
pub(super) fn move_foreign(from: &Path, to: &Path) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(from) else {
        return Ok(());
    };
    for e in entries.flatten() {
        let path = e.path();
        if !e.file_type().is_ok_and(|t| t.is_file())
            || read_text(&path).is_some_and(|t| scripts::is_ours(&t))
        {
            continue;
        }
        let target = to.join(e.file_name());
        let dest = if !exists(&target) {
            target
        } else if read_text(&target).is_some_and(|t| scripts::is_ours(&t))
            && !exists(&chained_path(&target))
        {
            chained_path(&target)
        } else {
            continue;
        };
        std::fs::create_dir_all(to).context(|| format!("could not create '{}'", to.display()))?;
        std::fs::rename(&path, &dest).context(|| {
            format!(
                "could not move '{}' to '{}'",
                path.display(),
                dest.display()
            )
        })?;
    }
    let _ = std::fs::remove_dir(from);
    if let Some(parent) = from.parent() {
        let _ = std::fs::remove_dir(parent);
    }
    Ok(())
}
