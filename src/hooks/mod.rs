//! Git hooks: where they live, and running git's `post-checkout` chain ourselves.
//!
//! gix runs no hooks, so `start` runs the `post-checkout` hook in the new
//! worktree exactly as `git worktree add` would (SPEC §8).
//!
//! `install` puts the shims of `scripts` where each worktree's hooks are
//! found (see [`install`] for the two layouts); the shims call
//! `git task hook <name>`, whose handlers are `pre_commit`, `post_checkout` and
//! `reference_transaction`.

pub mod config_hooks;
mod dir;
pub mod env;
mod guarded;
pub mod install;
pub mod patch;
pub mod post_checkout;
pub mod pre_commit;
pub mod reference_transaction;
pub mod scripts;
pub mod worktrees;

use crate::git::Repo;
use std::path::{Path, PathBuf};

/// Where the repository's hooks are, as the user (or their hook manager) configured them:
/// `core.hooksPath` without the per-worktree value `install` sets (see [`install`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Layout {
    /// One directory every worktree shares: `<common dir>/hooks`, or an absolute `core.hooksPath`.
    Shared(PathBuf),
    /// A relative `core.hooksPath` (husky's `.husky/_`, a committed `.githooks`): each
    /// worktree runs the hooks under its own top.
    Relative(String),
    /// `core.hooksPath=/dev/null`: hooks are turned off.
    Disabled,
}

/// Returns the user's `core.hooksPath` (the last value in any config, `-c` included), leaving
/// out a worktree's value that points at git-task's own hooks directory.
pub fn user_hooks_path(repo: &Repo) -> Option<String> {
    let own = [
        own_dir(repo.git_dir(), repo.common_dir()),
        main_own_dir(repo.common_dir()),
    ];
    crate::git::config::values_with_worktree_flag(repo, "core", "hooksPath")
        .into_iter()
        .filter(|(value, worktree)| !(*worktree && own.iter().any(|o| Path::new(value) == o)))
        .map(|(value, _)| value)
        .next_back()
        .filter(|p| !p.is_empty())
}

/// Returns the repository's hook layout (see [`Layout`]).
pub fn layout(repo: &Repo) -> Layout {
    match user_hooks_path(repo) {
        None => Layout::Shared(repo.common_dir().join("hooks")),
        Some(path) if path == DEV_NULL => Layout::Disabled,
        Some(path) => {
            let expanded = crate::git::fs::expand_home(&path);
            if expanded.is_absolute() {
                Layout::Shared(expanded)
            } else {
                // githooks(5): a relative core.hooksPath is relative to where hooks run, each
                // worktree's top.
                Layout::Relative(path)
            }
        }
    }
}

/// git-task's own hooks directory of the worktree whose private git dir is `git_dir`:
/// `<git dir>/hooks` of a linked worktree (where dulwich and gitui look, and git never
/// does unless `core.hooksPath` says so), `<common dir>/git-task/hooks` of the main one.
pub fn own_dir(git_dir: &Path, common_dir: &Path) -> PathBuf {
    let git_dir = crate::git::normalize(git_dir);
    if git_dir == common_dir {
        main_own_dir(common_dir)
    } else {
        git_dir.join("hooks")
    }
}

/// The git-task hooks directory the worktree whose private git dir is `git_dir` runs because
/// its `config.worktree` points `core.hooksPath` there (its own, or the main worktree's, which a
/// copy of the main worktree's `config.worktree` names), when per-worktree config is on.
pub fn pointed_own_dir(repo: &Repo, git_dir: &Path) -> Option<PathBuf> {
    if repo.config_bool("extensions.worktreeConfig") != Some(true) {
        return None;
    }
    [
        own_dir(git_dir, repo.common_dir()),
        main_own_dir(repo.common_dir()),
    ]
    .into_iter()
    .find(|own| worktrees::points_here(git_dir, own))
}

fn main_own_dir(common_dir: &Path) -> PathBuf {
    common_dir.join("git-task").join("hooks")
}

/// Puts the hooks of the new linked worktree `worktree` in place ([`worktrees::prepare`]),
/// then runs its `post-checkout` hook (if installed and executable) there, as
/// `git worktree add` would: from that worktree's hooks directory.
///
/// Its exit status is returned but, like git, callers do not undo the checkout for it.
pub fn run_post_checkout(
    repo: &Repo,
    worktree: &Path,
    new_head: &str,
) -> crate::Result<Option<i32>> {
    let git_dir = worktrees::prepare(repo, worktree)?;
    // git 2.54 runs the hooks defined in config first, then the hooks directory's.
    let null = "0".repeat(new_head.len());
    let configured = match config_hooks::registered(repo, scripts::HookKind::PostCheckout) {
        Some(script) => Some(crate::checks::run_hook(
            &script,
            worktree,
            &[&null, new_head, "1"],
        )?),
        None => None,
    };
    let own = git_dir
        .as_deref()
        .map(|g| (g, own_dir(g, repo.common_dir())))
        .filter(|(g, own)| worktrees::points_here(g, own))
        .map(|(_, own)| own);
    let dir = match (own, layout(repo)) {
        (Some(own), _) => own,
        (None, Layout::Relative(rel)) => worktree.join(rel),
        (None, Layout::Shared(dir)) => dir,
        (None, Layout::Disabled) => return Ok(configured),
    };
    let script = dir.join("post-checkout");
    if !is_executable(&script) {
        return Ok(configured);
    }
    let status = crate::checks::run_hook(&script, worktree, &[&null, new_head, "1"])?;
    Ok(Some(match configured {
        Some(code) if code != 0 => code,
        _ => status,
    }))
}

/// Whether commits in a worktree run git-task's pre-commit hook: a cheap look at a few files,
/// no process (`list` asks it once).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum Enforcement {
    /// git runs the contract check at commit time.
    Enforced,
    /// `git task hooks install` was not run (or not since this worktree was made).
    NotInstalled,
    /// A hook manager replaced git-task's hook at this path.
    Overwritten {
        /// The hook that runs instead.
        path: String,
    },
    /// `core.hooksPath=/dev/null`: git runs no hooks.
    Disabled,
    /// git runs the check (git-task's hooks are defined in config, git 2.54 or later), but the
    /// clients that read a hooks directory and no config do not: git-task's pre-commit copy is
    /// not where they read hooks in this worktree (a hook manager replaced it, lefthook's
    /// re-sync; or `core.hooksPath` became relative since the install, husky's `.husky/_`).
    ClientsUnchecked {
        /// Who commits unchecked there: `gitui`, `JGit`.
        clients: Vec<&'static str>,
        /// The hooks directories they read there, without git-task's copy (a relative one as
        /// `core.hooksPath` says it, under each worktree's top).
        dirs: Vec<String>,
        /// Whether one of them is a directory the repository tracks, where git-task writes
        /// nothing (`hooks install` cannot put a copy there).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        tracked: bool,
    },
}

/// Returns whether commits in the worktree whose private git dir is `git_dir` run the contract
/// check; `None` answers for the repository as a whole (the main worktree's view).
pub fn enforcement(repo: &Repo, git_dir: Option<&Path>) -> Enforcement {
    enforcement_known(repo, git_dir, configured(repo))
}

/// Whether git-task's pre-commit hook is defined in config ([`config_hooks::registered`]): for
/// [`enforcement_known`], asked once for many worktrees.
pub fn configured(repo: &Repo) -> bool {
    config_hooks::registered(repo, scripts::HookKind::PreCommit).is_some()
}

/// [`enforcement`], [`configured`] known.
pub fn enforcement_known(repo: &Repo, git_dir: Option<&Path>, configured: bool) -> Enforcement {
    // Hooks defined in config (git >= 2.54) run in every worktree, whatever the hooks
    // directories hold; the clients that read no config run the copy in the hooks directory.
    if configured {
        return clients_enforcement(repo, git_dir);
    }
    // A worktree's own core.hooksPath that git-task set (relative layout) is what git runs,
    // whatever the repository's core.hooksPath says now.
    if let Some(dir) = pointed_own_dir(repo, git_dir.unwrap_or(repo.common_dir())) {
        return match dir::read_text(&dir.join("pre-commit")).is_some_and(|t| scripts::is_ours(&t)) {
            true => Enforcement::Enforced,
            false => Enforcement::NotInstalled,
        };
    }
    match layout(repo) {
        Layout::Disabled => Enforcement::Disabled,
        Layout::Relative(_) => {
            let git_dir = git_dir.unwrap_or(repo.common_dir());
            let own = own_dir(git_dir, repo.common_dir());
            let main_own = main_own_dir(repo.common_dir());
            let ours = |dir: &Path| {
                dir::read_text(&dir.join("pre-commit")).is_some_and(|t| scripts::is_ours(&t))
            };
            // A worktree made by `git worktree add` has a copy of the main worktree's
            // config.worktree: it runs the main worktree's directory, which serves it as well.
            if (ours(&own) && worktrees::points_here(git_dir, &own))
                || (ours(&main_own) && worktrees::points_here(git_dir, &main_own))
            {
                Enforcement::Enforced
            } else {
                Enforcement::NotInstalled
            }
        }
        Layout::Shared(dir) => dir::shared_enforcement(&dir),
    }
}

/// Whether gitui and JGit, which read a hooks directory and no hooks defined in config, find
/// git-task's pre-commit copy where they read hooks in the worktree whose private git dir is
/// `git_dir` (`None`: the main worktree), git-task's hooks being defined in config (git runs
/// those everywhere). A few file reads, no process:
///
/// - gitui (git2-hooks) reads the directory `core.hooksPath` names, a worktree's
///   `config.worktree` included (git-task's own directory, which `install` points it at under a
///   relative one), else the worktree's private `<git dir>/hooks` (a linked worktree's holds
///   git-task's shims, which no manager touches);
/// - JGit reads `<git dir>/hooks` only, and commits only in the main worktree.
///
/// A directory of tracked files git-task never writes to is not counted: `hooks install` could
/// not change it. Under `core.hooksPath=/dev/null` gitui runs no hook at all.
fn clients_enforcement(repo: &Repo, git_dir: Option<&Path>) -> Enforcement {
    let common = repo.common_dir();
    let git_dir = git_dir.map_or_else(|| common.to_path_buf(), crate::git::normalize);
    let main = git_dir == common;
    let ours = |dir: &Path| {
        dir::read_text(&dir.join(scripts::HookKind::PreCommit.name()))
            .is_some_and(|t| scripts::is_ours(&t))
    };
    let mut clients = Vec::new();
    let mut dirs = Vec::new();
    let mut tracked = false;
    // JGit's directory in the main worktree, read once (gitui's too, core.hooksPath unset).
    let default_dir = common.join("hooks");
    let default_ours = main.then(|| ours(&default_dir));
    // The pointer is looked at in the file: `start` may have just set it, and turned
    // extensions.worktreeConfig on, since this command read the repository's config.
    let pointer =
        crate::git::config::get_in_file(&worktrees::config_file(&git_dir), "core.hooksPath");
    let own = [own_dir(&git_dir, common), main_own_dir(common)]
        .into_iter()
        .find(|own| pointer.as_deref().is_some_and(|p| Path::new(p) == own));
    let gitui_reads = match own {
        Some(own) => Some((own.display().to_string(), ours(&own))),
        None => match layout(repo) {
            Layout::Relative(rel) => Some((rel, false)),
            Layout::Shared(dir) if main && dir == default_dir => {
                Some((dir.display().to_string(), default_ours == Some(true)))
            }
            Layout::Shared(dir) if main || user_hooks_path(repo).is_some() => {
                let copy = ours(&dir);
                tracked = !copy && install::tracked_dir(repo, &dir);
                Some((dir.display().to_string(), copy))
            }
            Layout::Shared(_) => None,
            // gitui runs what core.hooksPath names: nothing.
            Layout::Disabled => Some((DEV_NULL.to_owned(), false)),
        },
    };
    if let Some((dir, false)) = gitui_reads {
        clients.push("gitui");
        dirs.push(dir);
    }
    if default_ours == Some(false) {
        clients.push("JGit");
        let dir = default_dir.display().to_string();
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    match clients.is_empty() {
        true => Enforcement::Enforced,
        false => Enforcement::ClientsUnchecked {
            clients,
            dirs,
            tracked,
        },
    }
}

/// `core.hooksPath` that turns the hooks directory off.
pub const DEV_NULL: &str = "/dev/null";

/// Whether the shared hooks directory `dir` holds git-task's pre-commit copy.
fn has_copy(dir: &Path) -> bool {
    dir::read_text(&dir.join(scripts::HookKind::PreCommit.name()))
        .is_some_and(|t| scripts::is_ours(&t))
}

/// The [`enforcement`] of every linked worktree when it is the same for all of them, read once:
/// without `extensions.worktreeConfig` no worktree is pointed elsewhere, so a shared hooks
/// directory decides for all, and with the hooks defined in config (run by git everywhere) so
/// does what gitui reads there. `None` when worktrees may differ. The main worktree may differ
/// ([`enforcement`] with `None`).
pub fn uniform_enforcement(repo: &Repo) -> Option<Enforcement> {
    if configured(repo) {
        // No linked worktree is pointed elsewhere (install takes such pointers away) but
        // under a relative core.hooksPath.
        let pointers = repo.config_bool("extensions.worktreeConfig") == Some(true);
        return match layout(repo) {
            Layout::Relative(_) => None,
            Layout::Disabled if pointers => None,
            Layout::Disabled => Some(Enforcement::ClientsUnchecked {
                clients: vec!["gitui"],
                dirs: vec![DEV_NULL.to_owned()],
                tracked: false,
            }),
            // gitui reads the directory an absolute core.hooksPath names in every worktree, a
            // linked worktree's own `hooks/` otherwise; JGit commits in no linked worktree.
            Layout::Shared(dir) if user_hooks_path(repo).is_some() => Some(match has_copy(&dir) {
                true => Enforcement::Enforced,
                false => Enforcement::ClientsUnchecked {
                    clients: vec!["gitui"],
                    dirs: vec![dir.display().to_string()],
                    tracked: install::tracked_dir(repo, &dir),
                },
            }),
            _ => Some(Enforcement::Enforced),
        };
    }
    if repo.config_bool("extensions.worktreeConfig") == Some(true) {
        return None;
    }
    match layout(repo) {
        Layout::Disabled => Some(Enforcement::Disabled),
        Layout::Relative(_) => None,
        Layout::Shared(dir) => Some(dir::shared_enforcement(&dir)),
    }
}

/// When the hooks were installed (`hooks install` ran and `uninstall` did not) but commits in
/// the main worktree no longer run git-task's pre-commit hook (a hook manager replaced it,
/// `core.hooksPath` changed since): its state, to warn about. A few file reads, no process.
pub fn main_bypassed(repo: &Repo) -> Option<Enforcement> {
    if !installed(repo) || repo.is_bare() {
        return None;
    }
    Some(enforcement(repo, None)).filter(|e| *e != Enforcement::Enforced)
}

/// Whether `hooks install` ran and `uninstall` did not.
fn installed(repo: &Repo) -> bool {
    let common = repo.common_dir();
    common.join(dir::DIRS_FILE).is_file()
        || main_own_dir(common).is_dir()
        || config_hooks::dir(repo).is_dir()
}

/// Whether git-task's `reference-transaction` hook is installed where the main worktree's hooks
/// are: moves of branches are then seen as they happen, and a branch a task starts from is
/// watched (`ledger::moves`).
pub fn sees_ref_moves(repo: &Repo) -> bool {
    if config_hooks::registered(repo, scripts::HookKind::ReferenceTransaction).is_some() {
        return true;
    }
    let layout = layout(repo);
    if layout == Layout::Disabled {
        return false;
    }
    let path = dir::main_dir(repo, &layout).join(scripts::HookKind::ReferenceTransaction.name());
    let ours = |p: &Path| dir::read_text(p).is_some_and(|t| scripts::is_ours(&t));
    ours(&path) || ours(&dir::with_suffix(&path, dir::LEGACY_SUFFIX))
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
