//! `git task hooks install [--force] | uninstall | status`.

use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::hooks::install::{self, InstallAction, InstallOptions, State, UninstallAction};
use crate::hooks::scripts;
use crate::output::{Out, Report};

/// Install, remove or inspect the git hooks that enforce task contracts
#[derive(clap::Args, Debug)]
pub struct HooksArgs {
    #[command(subcommand)]
    pub action: HooksAction,
}

/// What to do with the hooks.
#[derive(clap::Subcommand, Debug)]
pub enum HooksAction {
    /// Write pre-commit and post-checkout into the hooks directory, chaining hooks already there
    Install {
        /// Replace a git-task hook that was edited or comes from another version
        #[arg(long)]
        force: bool,
    },
    /// Remove git-task's hooks and put chained hooks back
    Uninstall,
    /// Show what is installed where
    Status,
}

pub fn run(ctx: &Ctx, args: &HooksArgs) -> CmdResult {
    match args.action {
        HooksAction::Install { force } => {
            let opts = InstallOptions {
                force,
                settings: current_settings(ctx)?,
            };
            let outcome = install::install(&ctx.repo, &opts)?;
            if let Some(path) = ctx
                .repo
                .config_string("core.hooksPath")
                .filter(|p| !p.is_empty() && !p.starts_with('/') && !p.starts_with('~'))
            {
                // githooks(5): a relative core.hooksPath is resolved in each worktree on its own.
                ctx.out.warn(format_args!(
                    "core.hooksPath is relative ('{path}'): every worktree, task worktrees included, runs the hooks in its own '{path}', not the ones installed here"
                ));
                ctx.out
                    .hint("make core.hooksPath absolute so that one install covers every worktree");
            }
            emit(
                ctx,
                &InstallReport {
                    kind: "hooks_install",
                    outcome,
                    binary: opts.settings.binary,
                },
                Done::Ok,
            )
        }
        HooksAction::Uninstall => {
            let outcome = install::uninstall(&ctx.repo)?;
            emit(
                ctx,
                &UninstallReport {
                    kind: "hooks_uninstall",
                    outcome,
                },
                Done::Ok,
            )
        }
        HooksAction::Status => {
            let status = install::status(&ctx.repo, &current_settings(ctx)?)?;
            emit(
                ctx,
                &StatusReport {
                    kind: "hooks_status",
                    status,
                },
                Done::Ok,
            )
        }
    }
}

/// What install would bake into the shims now: this binary's absolute path and the branch prefix.
fn current_settings(ctx: &Ctx) -> crate::Result<scripts::Settings> {
    let exe = std::env::current_exe()
        .map_err(|e| crate::Error::repo("could not find the path of the running git-task", e))?;
    let binary = exe.canonicalize().unwrap_or(exe);
    Ok(scripts::Settings {
        binary: binary.display().to_string(),
        prefix: ctx.settings.branch_prefix.clone(),
    })
}

#[derive(serde::Serialize)]
struct InstallReport {
    kind: &'static str,
    #[serde(flatten)]
    outcome: install::Outcome<InstallAction>,
    binary: String,
}

impl Report for InstallReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        for h in &self.outcome.hooks {
            let what = match h.action {
                InstallAction::Unchanged => "already installed",
                InstallAction::Written => "installed",
                InstallAction::Updated => "updated",
                InstallAction::Chained => "installed; the hook that was there runs first",
            };
            out.line(format_args!(
                "{:<14} {what}: {}",
                h.name,
                crate::output::escape(&h.path)
            ))?;
        }
        out.note(format_args!(
            "the hooks run {}",
            crate::output::escape(&self.binary)
        ));
        if self.outcome.notes_rewrite_ref_changed {
            out.note("set notes.rewriteRef=refs/notes/tasks so task notes follow amended and rebased commits");
        }
        Ok(())
    }
}

#[derive(serde::Serialize)]
struct UninstallReport {
    kind: &'static str,
    #[serde(flatten)]
    outcome: install::Outcome<UninstallAction>,
}

impl Report for UninstallReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        for h in &self.outcome.hooks {
            let what = match h.action {
                UninstallAction::Absent => "not installed",
                UninstallAction::Removed => "removed",
                UninstallAction::Restored => "removed; the hook that was there before is back",
                UninstallAction::Foreign => "not git-task's; left alone",
            };
            out.line(format_args!(
                "{:<14} {what}: {}",
                h.name,
                crate::output::escape(&h.path)
            ))?;
        }
        if self.outcome.notes_rewrite_ref_changed {
            out.note("removed notes.rewriteRef=refs/notes/tasks, which 'hooks install' had set");
        }
        Ok(())
    }
}

#[derive(serde::Serialize)]
struct StatusReport {
    kind: &'static str,
    #[serde(flatten)]
    status: install::Status,
}

impl Report for StatusReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        out.line(format_args!(
            "hooks directory  {}",
            crate::output::escape(&self.status.dir)
        ))?;
        for h in &self.status.hooks {
            let state = match h.state {
                State::Missing => "missing",
                State::Installed => "installed",
                State::Outdated => "outdated (run 'git task hooks install')",
                State::Modified => "modified (run 'git task hooks install --force')",
                State::Foreign => "foreign (run 'git task hooks install' to chain it)",
            };
            out.line(format_args!("{:<16} {state}", h.name))?;
            if let Some(chained) = &h.chained {
                out.line(format_args!(
                    "  chained        {}",
                    crate::output::escape(chained)
                ))?;
            }
            if let Some(bin) = &h.binary {
                let found = if h.binary_found { "" } else { " (missing)" };
                out.line(format_args!(
                    "  binary         {}{found}",
                    crate::output::escape(bin)
                ))?;
            }
        }
        out.line(format_args!(
            "notes.rewriteRef {}",
            if self.status.notes_rewrite_ref {
                "refs/notes/tasks"
            } else {
                "not set for refs/notes/tasks"
            }
        ))
    }
}
