//! git-task's own hooks directory of each worktree, and the per-worktree
//! `core.hooksPath` that points git at it.
//!
//! Every linked worktree gets the shims in its private git dir's `hooks/`
//! (`.git/worktrees/<id>/hooks`): git never looks there on its own, dulwich
//! and gitui always do. With a relative `core.hooksPath` (see
//! [`super::install`]) each worktree's `config.worktree` also points
//! `core.hooksPath` there (the main worktree's at `<common dir>/git-task/hooks`),
//! and the shims chain to the hooks the user's path resolves to in that
//! worktree. Nothing here starts a process.

use super::scripts::{self, HookKind};
use super::Layout;
use crate::error::{Context, Result};
use crate::git::{config, Repo};
use std::path::{Path, PathBuf};

/// The hook names git knows (githooks(5)); a pass-through hook is written for each one a
/// manager put in the user's hooks directory, so that it keeps running behind git-task's.
pub const GIT_HOOKS: &[&str] = &[
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-receive",
    "update",
    "proc-receive",
    "post-receive",
    "post-update",
    "reference-transaction",
    "push-to-checkout",
    "pre-auto-gc",
    "post-rewrite",
    "sendemail-validate",
    "fsmonitor-watchman",
    "p4-changelist",
    "p4-prepare-changelist",
    "p4-post-changelist",
    "p4-pre-submit",
    "post-index-change",
];

/// Marker file in a worktree's private git dir: the relative hooks directory git-task
/// copied from the main worktree (husky's generated, self-ignored `.husky/_`), so that
/// `uninstall` removes exactly that.
pub const COPIED_MARKER: &str = "git-task-hooks-copied";

/// One worktree git-task knows the hooks of.
#[derive(Clone, Debug)]
pub struct Worktree {
    /// Its top directory.
    pub path: PathBuf,
    /// Its private git dir.
    pub git_dir: PathBuf,
    /// Whether it is the main worktree.
    pub main: bool,
}

/// Returns the main worktree (if the repository has one) and every linked worktree whose directory exists.
pub fn all(repo: &Repo) -> Result<Vec<Worktree>> {
    let mut out = Vec::new();
    if !repo.is_bare() {
        out.push(Worktree {
            path: repo.main_worktree()?,
            git_dir: repo.common_dir().to_path_buf(),
            main: true,
        });
    }
    for linked in crate::git::worktree::list(repo)? {
        if linked.exists() {
            out.push(Worktree {
                path: linked.path.clone(),
                git_dir: crate::git::normalize(&linked.git_dir),
                main: false,
            });
        }
    }
    Ok(out)
}

/// Returns the private git dir a linked worktree's `.git` file names, `None` for a main worktree.
pub fn git_dir_of(worktree: &Path) -> Option<PathBuf> {
    crate::git::fs::dot_git_target(worktree)
}

/// The `config.worktree` of the worktree whose private git dir is `git_dir`.
pub fn config_file(git_dir: &Path) -> PathBuf {
    git_dir.join("config.worktree")
}

/// Returns whether the worktree's `config.worktree` points `core.hooksPath` at `own`.
pub fn points_here(git_dir: &Path, own: &Path) -> bool {
    config::get_in_file(&config_file(git_dir), "core.hooksPath")
        .is_some_and(|v| Path::new(&v) == own)
}

/// What `install` did in one worktree.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct WorktreeOutcome {
    /// The worktree's top directory.
    pub path: String,
    /// git-task's hooks directory of that worktree.
    pub dir: String,
    /// Whether its `config.worktree` points `core.hooksPath` there.
    pub hooks_path_set: bool,
    /// The relative hooks directory copied from the main worktree, if one was.
    pub copied: Option<String>,
    /// Why the worktree was left alone, if it was.
    pub skipped: Option<String>,
    /// What happened to each shim in git-task's directory of the worktree.
    pub hooks: Vec<super::dir::HookOutcome<super::dir::InstallAction>>,
}

/// Puts git-task's shims into `wt`'s own hooks directory (see the module docs); with a
/// relative layout also points the worktree's `core.hooksPath` there and copies a
/// generated, self-ignored hooks directory (husky's) the worktree lacks.
pub fn install(
    repo: &Repo,
    wt: &Worktree,
    layout: &Layout,
    settings: &scripts::Settings,
    force: bool,
    configured: bool,
) -> Result<WorktreeOutcome> {
    let own = super::own_dir(&wt.git_dir, repo.common_dir());
    let mut outcome = WorktreeOutcome {
        path: wt.path.display().to_string(),
        dir: own.display().to_string(),
        hooks_path_set: false,
        copied: None,
        skipped: None,
        hooks: Vec::new(),
    };
    let rel = match layout {
        Layout::Relative(rel) => Some(rel.as_str()),
        _ => None,
    };
    let point = points(repo, wt, layout, configured);
    // Set up for another layout before: a pointer that should no longer be (git would keep
    // running the old hooks), a relative layout's copy of husky's directory. It goes, with what
    // it pointed at, and the worktree is set up as for the layout now.
    let main_own = super::own_dir(repo.common_dir(), repo.common_dir());
    let stale_pointer =
        !point && (points_here(&wt.git_dir, &own) || points_here(&wt.git_dir, &main_own));
    if stale_pointer || (rel.is_none() && wt.git_dir.join(COPIED_MARKER).exists()) {
        uninstall(repo, wt)?;
    }
    if !point && wt.main {
        // The main worktree's hooks are the shared directory's.
        return Ok(outcome);
    }
    let cfg = config_file(&wt.git_dir);
    if point {
        if let Some(value) = config::get_in_file(&cfg, "core.hooksPath") {
            // `git worktree add` copies the main worktree's config.worktree: its value is ours too.
            if Path::new(&value) != own && Path::new(&value) != main_own {
                outcome.skipped = Some(format!(
                    "its own core.hooksPath ('{value}') in '{}' is left as it is",
                    cfg.display()
                ));
                return Ok(outcome);
            }
        }
    }
    let settings = scripts::Settings {
        chain: chain(layout, point, wt.main),
        ..settings.clone()
    };
    // A directory git reads while the hooks are defined in config gets the pre-commit copy
    // only (for gitui); the other hooks of the user's directory pass through.
    let kinds: &[HookKind] = if point && configured {
        super::dir::uninstall_kinds_in_dir(
            &own,
            &[HookKind::PostCheckout, HookKind::ReferenceTransaction],
        )?;
        &[HookKind::PreCommit]
    } else {
        &HookKind::ALL
    };
    outcome.hooks = super::dir::install_kinds_in_dir(&own, &settings, force, kinds)?;
    if !wt.main {
        mark_task_worktree(wt, &settings.prefix)?;
    }
    if let Some(rel) = rel {
        if !wt.main {
            outcome.copied = copy_generated(repo, wt, rel)?;
        }
    }
    if point {
        ensure_worktree_config(repo)?;
        let sources = match layout {
            Layout::Relative(rel) => vec![repo.main_worktree()?.join(rel), wt.path.join(rel)],
            Layout::Shared(dir) => vec![dir.clone()],
            Layout::Disabled => Vec::new(),
        };
        if settings.chain == scripts::CHAIN_REPOSITORY {
            // The directory the repository names may change while the pointer stands (a
            // manager installed since): every hook passes through.
            write_pass_through(&[], &own, &settings.chain, kinds)?;
        } else {
            write_pass_through(&sources, &own, &settings.chain, kinds)?;
        }
        if !points_here(&wt.git_dir, &own) {
            config::set_in_file(&cfg, "core.hooksPath", &own.display().to_string())?;
        }
        // A copy of the main worktree's config.worktree that held nothing else goes on uninstall.
        outcome.hooks_path_set = true;
    }
    Ok(outcome)
}

/// Whether the worktree's `config.worktree` points `core.hooksPath` at git-task's own directory
/// of it: every worktree under a relative `core.hooksPath` (see [`super::install`]), and every
/// linked worktree under a shared one, so that a hook manager installed since (which rewrites
/// the repository's `core.hooksPath` or the shared directory, never a worktree's config) cannot
/// turn the check off there. Where git-task's hooks are defined in config and the git on
/// `PATH` runs them (`configured`, [`super::config_hooks::active`]: git runs those in every
/// worktree) only under a relative `core.hooksPath`, for gitui (see the body). Not where per-worktree config
/// cannot be turned on safely (`core.bare` or `core.worktree` in the shared config), nor with
/// hooks turned off.
pub fn points(repo: &Repo, wt: &Worktree, layout: &Layout, configured: bool) -> bool {
    // git >= 2.54 runs the hooks defined in config in every worktree: a pointed directory
    // would only add copies that step aside (see super::config_hooks). Except under a relative
    // core.hooksPath (a committed .githooks, husky's .husky/_): gitui (libgit2's git2-hooks,
    // which reads no config hooks but does read config.worktree) runs the hooks of the
    // directory it names under the worktree's top, where git-task may not write; pointed at
    // git-task's own directory, it finds the pre-commit copy there (and git, which runs it
    // too, finds it stepping aside).
    if configured {
        return matches!(layout, Layout::Relative(_));
    }
    match layout {
        Layout::Relative(_) => true,
        // The main worktree only while a patch-mode task guards it (its own hooks are the
        // user's, whose manager may change where they are).
        Layout::Shared(_) => (!wt.main || super::guarded::guards_main(repo)) && can_point(repo),
        Layout::Disabled => false,
    }
}

/// Turns `extensions.worktreeConfig` on in the repository's config unless some config has it on,
/// remembering that git-task did ([`super::install::ADDED_WORKTREE_CONFIG_KEY`]) so that
/// `uninstall` turns it off; returns whether it did.
pub fn ensure_worktree_config(repo: &Repo) -> Result<bool> {
    if repo.config_bool("extensions.worktreeConfig") == Some(true) {
        return Ok(false);
    }
    let added = config::add_local_value(repo, "extensions", "worktreeConfig", "true")?;
    if added {
        config::add_local_value(repo, "task", "hooksAddedWorktreeConfig", "true")?;
    }
    Ok(added)
}

/// Whether `install` may turn per-worktree config on: not with `core.bare` or `core.worktree`
/// in the shared config, which git would then apply to every worktree.
pub fn can_point(repo: &Repo) -> bool {
    repo.config_bool("core.bare") != Some(true) && repo.config_string("core.worktree").is_none()
}

/// The directory whose hooks the shims in `wt`'s own directory run first: the relative
/// `core.hooksPath` (under the worktree's top), or the shared directory by its absolute path
/// (the shims then run what a manager put there, or the hook git-task's shim there chained).
/// Empty when the worktree is not pointed there: its own `<name>.git-task-chained` then. The
/// main worktree, pointed under a shared one while a patch-mode task guards it, chains to
/// whatever directory the repository's config names when the hook runs
/// ([`scripts::CHAIN_REPOSITORY`]): a manager that sets `core.hooksPath` meanwhile still has
/// its hooks run there.
pub fn chain(layout: &Layout, point: bool, main: bool) -> String {
    match layout {
        Layout::Relative(rel) => rel.clone(),
        Layout::Shared(_) if point && main => scripts::CHAIN_REPOSITORY.to_owned(),
        Layout::Shared(dir) if point => crate::git::absolute(dir).display().to_string(),
        _ => String::new(),
    }
}

/// Marks a linked worktree whose HEAD is on a task branch as that task's
/// ([`super::reference_transaction::BRANCH_MARK`]): the `reference-transaction` hook then
/// knows it for the task's even when its HEAD is detached or moved to another branch.
fn mark_task_worktree(wt: &Worktree, prefix: &str) -> Result<()> {
    let head = std::fs::read_to_string(wt.git_dir.join("HEAD")).unwrap_or_default();
    let branch = head.lines().next().and_then(|l| l.strip_prefix("ref: "));
    match branch {
        Some(b)
            if !prefix.is_empty()
                && crate::git::refs::branch_short(b)
                    .and_then(|short| short.strip_prefix(prefix))
                    .is_some_and(|id| crate::task::TaskId::parse(id).is_ok()) =>
        {
            super::reference_transaction::mark(&wt.git_dir, b)
        }
        _ => Ok(()),
    }
}

/// Undoes [`install`] in `wt`: the pointer, the shims, the copied directory, the task mark.
pub fn uninstall(repo: &Repo, wt: &Worktree) -> Result<()> {
    for name in [
        super::reference_transaction::BRANCH_MARK,
        super::config_hooks::WORD_FILE,
    ] {
        let mark = wt.git_dir.join(name);
        if mark.exists() {
            std::fs::remove_file(&mark)
                .context(|| format!("could not remove '{}'", mark.display()))?;
        }
    }
    let own = super::own_dir(&wt.git_dir, repo.common_dir());
    config::remove_in_file(
        &config_file(&wt.git_dir),
        "core.hooksPath",
        &own.display().to_string(),
    )?;
    super::dir::uninstall_in_dir(&own)?;
    if let Ok(entries) = std::fs::read_dir(&own) {
        for e in entries.flatten() {
            let path = e.path();
            if std::fs::read_to_string(&path).is_ok_and(|t| scripts::is_pristine_pass_through(&t)) {
                std::fs::remove_file(&path)
                    .context(|| format!("could not remove '{}'", path.display()))?;
            }
        }
    }
    // Directories git-task made, if it left them empty.
    let _ = std::fs::remove_dir(&own);
    if wt.main {
        if let Some(parent) = own.parent() {
            let _ = std::fs::remove_dir(parent);
        }
    }
    let marker = wt.git_dir.join(COPIED_MARKER);
    if let Ok(rel) = std::fs::read_to_string(&marker) {
        let rel = rel.trim_end_matches('\n');
        if !rel.is_empty() && !rel.split('/').any(|c| c == "..") {
            let copy = wt.path.join(rel);
            if copy.is_dir() {
                std::fs::remove_dir_all(&copy)
                    .context(|| format!("could not remove '{}'", copy.display()))?;
            }
            // The directories above it that the copy made, when empty.
            let mut dir = copy.parent();
            while let Some(d) = dir.filter(|d| *d != wt.path) {
                if std::fs::remove_dir(d).is_err() {
                    break;
                }
                dir = d.parent();
            }
        }
        std::fs::remove_file(&marker)
            .context(|| format!("could not remove '{}'", marker.display()))?;
    }
    Ok(())
}

/// Copies the main worktree's `rel` into `wt` when `wt` has none and the main one is a
/// generated directory that ignores itself (husky writes `_/.gitignore` with `*`), so the copy
/// adds nothing untracked; a directory the worktree's checkout has (a committed `.githooks`)
/// is its own and never copied over.
fn copy_generated(repo: &Repo, wt: &Worktree, rel: &str) -> Result<Option<String>> {
    if rel.split('/').any(|c| c == "..") {
        return Ok(None);
    }
    let target = wt.path.join(rel);
    if std::fs::symlink_metadata(&target).is_ok() {
        return Ok(None);
    }
    let source = repo.main_worktree()?.join(rel);
    let ignores_itself = std::fs::read_to_string(source.join(".gitignore"))
        .is_ok_and(|t| t.lines().any(|l| l.trim() == "*"));
    if !source.is_dir() || !ignores_itself {
        return Ok(None);
    }
    std::fs::create_dir_all(&target)
        .context(|| format!("could not create '{}'", target.display()))?;
    let entries =
        std::fs::read_dir(&source).context(|| format!("could not read '{}'", source.display()))?;
    for e in entries.flatten() {
        let from = e.path();
        if !e.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let to = target.join(e.file_name());
        std::fs::copy(&from, &to)
            .context(|| format!("could not copy '{}' to '{}'", from.display(), to.display()))?;
    }
    std::fs::write(wt.git_dir.join(COPIED_MARKER), format!("{rel}\n"))
        .context(|| format!("could not write '{}'", wt.git_dir.display()))?;
    Ok(Some(rel.to_owned()))
}

/// Writes a pass-through hook into `own` (running `chain`'s hook of the same name) for every
/// hook git knows that one of `sources` holds (the user's hooks directory as the main worktree
/// and `wt` resolve it), except the ones git-task's shims there (`handled`) handle.
fn write_pass_through(
    sources: &[PathBuf],
    own: &Path,
    chain: &str,
    handled: &[HookKind],
) -> Result<()> {
    let text = scripts::render_pass_through(chain);
    let every = chain == scripts::CHAIN_REPOSITORY;
    for name in GIT_HOOKS {
        if handled.iter().any(|k| k.name() == *name) {
            continue;
        }
        if !every && !sources.iter().any(|d| super::is_executable(&d.join(name))) {
            continue;
        }
        let path = own.join(name);
        match std::fs::read_to_string(&path) {
            Ok(t) if t == text => continue,
            Ok(t) if !scripts::is_pristine_pass_through(&t) => continue,
            Err(_) if std::fs::symlink_metadata(&path).is_ok() => continue,
            _ => {}
        }
        super::dir::write_executable(&path, text.as_bytes())?;
    }
    Ok(())
}

/// Puts the hooks of a new linked worktree in place, as `install` would have had the worktree
/// existed then; does nothing when the hooks are not installed. Returns the worktree's git dir.
pub fn prepare(repo: &Repo, worktree: &Path) -> Result<Option<PathBuf>> {
    let Some(git_dir) = git_dir_of(worktree) else {
        return Ok(None);
    };
    let layout = super::layout(repo);
    let Some(settings) = installed_settings(repo, &layout) else {
        return Ok(Some(git_dir));
    };
    let wt = Worktree {
        path: worktree.to_path_buf(),
        git_dir: git_dir.clone(),
        main: false,
    };
    let configured = super::config_hooks::active(repo);
    install(repo, &wt, &layout, &settings, false, configured)?;
    Ok(Some(git_dir))
}

/// The settings of the installed shims, `None` when the hooks are not installed: the config
/// hooks' (git >= 2.54), else the hooks directory's wherever an install put them (the hooks
/// directory may have moved since: a hook manager set core.hooksPath). The chain is the
/// caller's to set.
pub(super) fn installed_settings(repo: &Repo, layout: &Layout) -> Option<scripts::Settings> {
    let registered = super::config_hooks::registered(repo, HookKind::PreCommit)
        .and_then(|path| super::dir::read_text(&path))
        .and_then(|t| scripts::parse(&t));
    registered
        .or_else(|| super::dir::installed_settings(repo, layout))
        .or_else(|| {
            let common = repo.common_dir();
            let mut dirs = vec![common.join("hooks"), super::own_dir(common, common)];
            dirs.extend(super::dir::remembered_dirs(repo));
            dirs.iter().find_map(|d| super::dir::settings_in(d))
        })
}
