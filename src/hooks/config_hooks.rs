//! Hooks defined in config, on git 2.54 and later (SPEC §8).
//!
//! git 2.54 runs, for each event, every `hook.<name>.command` whose `hook.<name>.event` names
//! it (through `sh`, with the hook's arguments and input, in the worktree's top), first, and
//! then the hook of that name in the hooks directory; in every worktree, even with
//! `core.hooksPath=/dev/null`; only `--no-verify`, `hook.<name>.enabled=false` and
//! `hook.<event>.enabled=false` skip them. No hook manager owns or rewrites them.
//!
//! So on such a git `hooks install` registers `hook.git-task-pre-commit`,
//! `hook.git-task-post-checkout` and `hook.git-task-reference-transaction` in the repository's
//! config (never the user's global one), each running the same shim as the hooks directory
//! would (the fast path stays: no process on a commit outside tasks), kept in
//! `<common dir>/git-task/config-hooks/`, a directory git reads hooks from only through that
//! config. Then ([`active`]) the only copy of git-task's in a hooks directory git reads is
//! `pre-commit` (git forks it beside the config hook; a post-checkout or reference-transaction
//! copy would add forks for every event and serve no client): gitui (git2-hooks) and JGit read
//! that directory and no config, and block a violating commit only through it. It goes where
//! the hooks-directory layout would put it: the shared directory unless it holds tracked files,
//! or, under a relative `core.hooksPath`, git-task's own directory of each worktree, which the
//! worktree's `config.worktree` points at (gitui reads it). The config copy runs first and
//! leaves word ([`WORD_FILE`]: the git process and the hook) for the copy in the hooks
//! directory, which, after running the hook it chains, steps aside without starting git-task:
//! a commit runs the check once. Other shims stay only where clients that read no config look
//! and git does not: a linked worktree's private `hooks/` (dulwich, gitg), `.git/hooks` when
//! `core.hooksPath` points elsewhere (dulwich in the main worktree). An install by an older
//! git puts the whole hooks-directory layout back for it, whose copies step aside the same way.
//!
//! A hook manager run after the install can take the pre-commit copy away from those clients
//! (lefthook's re-sync renames it; husky's relative `core.hooksPath` is read by gitui in every
//! worktree not pointed since): git still runs the check, gitui and JGit do not.
//! [`super::enforcement`] says so ([`super::Enforcement::ClientsUnchecked`]), and every command
//! warns, until `hooks install` puts the copy back.

use super::dir::{read_text, write_executable, HookOutcome, InstallAction};
use super::scripts::{self, HookKind};
use crate::error::{Context, Result};
use crate::git::{config, Repo};
use std::path::PathBuf;

/// The file in a worktree's git dir where the copy of a hook defined in config leaves word
/// (`<git pid> <hook> [state]`) for the copy in the hooks directory that git runs next, which
/// then steps aside: the work is done once.
pub const WORD_FILE: &str = "git-task-config-hook";

/// The first git that runs hooks defined in config.
pub const MIN_GIT: (u32, u32) = (2, 54);

/// Whether the `git` on `PATH` runs hooks defined in config (asked once per process).
pub fn supported() -> bool {
    crate::git::cli::version().is_some_and(|v| v >= MIN_GIT)
}

/// Whether git-task's hooks are defined in config and the `git` on `PATH` runs them: then
/// `install` (and `start`, for a new worktree) writes no copy where git reads hooks. Asks git
/// its version (once per process) only when they are registered.
pub fn active(repo: &Repo) -> bool {
    registered(repo, HookKind::PreCommit).is_some() && supported()
}

/// Where the shims the config names are kept.
pub fn dir(repo: &Repo) -> PathBuf {
    repo.common_dir().join("git-task").join("config-hooks")
}

/// The hook's name in config: `git-task-pre-commit`.
pub fn name(kind: HookKind) -> String {
    format!("git-task-{}", kind.name())
}

/// The shim git runs for `kind` through the repository's config, when it is registered, is
/// git-task's and is not disabled (`hook.<name>.enabled` or `hook.<event>.enabled` false). A
/// few config reads, no process.
pub fn registered(repo: &Repo, kind: HookKind) -> Option<PathBuf> {
    let name = name(kind);
    let command = repo.config_string(&format!("hook.{name}.command"))?;
    let events = repo.config_strings(&format!("hook.{name}.event"));
    if !events.iter().any(|e| e == kind.name())
        || repo.config_bool(&format!("hook.{name}.enabled")) == Some(false)
        || repo.config_bool(&format!("hook.{}.enabled", kind.name())) == Some(false)
    {
        return None;
    }
    let quoted = command.strip_prefix("exec ").unwrap_or(&command);
    let path = PathBuf::from(scripts::sh_unquote(quoted).unwrap_or_else(|| quoted.to_owned()));
    read_text(&path)
        .is_some_and(|t| scripts::is_ours(&t))
        .then_some(path)
}

/// Writes the shims and registers them in the repository's config.
pub fn install(
    repo: &Repo,
    settings: &scripts::Settings,
) -> Result<Vec<HookOutcome<InstallAction>>> {
    let dir = dir(repo);
    std::fs::create_dir_all(&dir)
        .context(|| format!("could not create the directory '{}'", dir.display()))?;
    let settings = scripts::Settings {
        chain: String::new(),
        ..settings.clone()
    };
    let mut out = Vec::new();
    for kind in HookKind::ALL {
        let path = dir.join(kind.name());
        let wanted = scripts::render(kind, &settings);
        let existing = read_text(&path);
        let mut action = match &existing {
            None => InstallAction::Written,
            Some(t) if *t == wanted && super::is_executable(&path) => InstallAction::Unchanged,
            Some(_) => InstallAction::Updated,
        };
        if action != InstallAction::Unchanged {
            write_executable(&path, wanted.as_bytes())?;
        }
        // `exec`: the shell git starts for a command in config gives way to the shim, whose
        // parent is then git itself, as for a hook in a hooks directory (the
        // reference-transaction hook looks at its parent: `git pack-refs`, a push's pusher).
        let command = format!("exec {}", scripts::sh_quote(&path.display().to_string()));
        let changed = config::set_local_subsection(
            repo,
            "hook",
            &name(kind),
            &[("command", command.as_str()), ("event", kind.name())],
        )?;
        if changed && action == InstallAction::Unchanged {
            action = InstallAction::Updated;
        }
        out.push(HookOutcome {
            name: kind.name(),
            path: path.display().to_string(),
            action,
        });
    }
    Ok(out)
}

/// Removes the registrations and the shims; returns what was there.
pub fn uninstall(repo: &Repo) -> Result<Vec<HookOutcome<super::dir::UninstallAction>>> {
    let dir = dir(repo);
    let mut out = Vec::new();
    for kind in HookKind::ALL {
        let registered = config::remove_local_subsection(repo, "hook", &name(kind))?;
        let path = dir.join(kind.name());
        let ours = read_text(&path).is_some_and(|t| scripts::is_ours(&t));
        if ours {
            std::fs::remove_file(&path)
                .context(|| format!("could not remove '{}'", path.display()))?;
        }
        if registered || ours {
            out.push(HookOutcome {
                name: kind.name(),
                path: path.display().to_string(),
                action: super::dir::UninstallAction::Removed,
            });
        }
    }
    let _ = std::fs::remove_dir(&dir);
    Ok(out)
}
