//! `git task hooks install [--force] | uninstall | status`.

use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::hooks::install::{self, InstallAction, InstallOptions, State, UninstallAction};
use crate::hooks::scripts;
use crate::hooks::Enforcement;
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
    /// Put pre-commit and post-checkout where every worktree runs them, chaining the hooks already there
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
            emit(
                ctx,
                &InstallReport {
                    kind: "hooks_install",
                    installed: outcome,
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
                    confine: crate::confine::support(),
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
        chain: String::new(),
    })
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct InstallReport {
    #[schemars(extend("const" = "hooks_install"))]
    kind: &'static str,
    #[serde(flatten)]
    installed: install::Installed,
    binary: String,
}

impl Report for InstallReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        for h in &self.installed.outcome.hooks {
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
        for c in &self.installed.client_copies {
            let what = match c.action {
                InstallAction::Unchanged => "already installed",
                InstallAction::Written => "installed",
                InstallAction::Updated => "updated",
                InstallAction::Chained => "installed; the hook that was there runs first",
            };
            out.line(format_args!(
                "{:<14} {what}: {} (copy for {}, which read no hooks defined in config)",
                c.name,
                crate::output::escape(&c.path),
                c.clients.join(", ")
            ))?;
        }
        for w in &self.installed.outcome.worktrees {
            if let Some(why) = &w.skipped {
                out.warn(format_args!(
                    "worktree '{}' skipped: {}",
                    crate::output::escape(&w.path),
                    crate::output::escape(why)
                ));
            }
        }
        let covered = self
            .installed
            .outcome
            .worktrees
            .iter()
            .filter(|w| w.skipped.is_none())
            .count();
        if covered > 0 {
            out.note(format_args!(
                "{covered} linked worktree{} covered too",
                if covered == 1 { "" } else { "s" }
            ));
        }
        if self.installed.outcome.layout == "relative" {
            out.note("core.hooksPath is relative: each worktree's config.worktree points it at git-task's hooks, which run that worktree's own hooks first");
        }
        if self.installed.outcome.worktree_config_changed {
            out.note("set extensions.worktreeConfig=true so each worktree can have its own core.hooksPath");
        }
        out.note(format_args!(
            "the hooks run {}",
            crate::output::escape(&self.binary)
        ));
        if self.installed.outcome.notes_rewrite_ref_changed {
            out.note("set notes.rewriteRef=refs/notes/tasks so task notes follow amended and rebased commits");
        }
        Ok(())
    }
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct UninstallReport {
    #[schemars(extend("const" = "hooks_uninstall"))]
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
        if self.outcome.worktree_config_changed {
            out.note("removed extensions.worktreeConfig, which 'hooks install' had set");
        }
        Ok(())
    }
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct StatusReport {
    #[schemars(extend("const" = "hooks_status"))]
    kind: &'static str,
    #[serde(flatten)]
    status: install::Status,
    /// Whether this kernel can enforce `exec --confine` (Landlock, ABI 3 or later).
    confine: crate::confine::Support,
}

impl Report for StatusReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        if let Some(path) = &self.status.hooks_path {
            out.line(format_args!(
                "core.hooksPath   {} ({})",
                crate::output::escape(path),
                self.status.layout
            ))?;
        }
        if self.status.mechanism == "config" {
            out.line(format_args!(
                "mechanism        config (hook.git-task-*.command in the repository's config; git 2.54 or later runs them in every worktree)"
            ))?;
            for copy in &self.status.client_copies {
                out.line(format_args!(
                    "client copy      {} (pre-commit, for gitui and JGit, which read no config hooks; steps aside under git)",
                    crate::output::escape(copy)
                ))?;
            }
            for path in &self.status.client_copies_missing {
                out.line(format_args!(
                    "client copy      MISSING at {}: the clients that would read it (gitui, JGit; they read no hooks defined in config) run no check there (run 'git task hooks install')",
                    crate::output::escape(path)
                ))?;
            }
        } else {
            out.line(format_args!("mechanism        hooks directory"))?;
        }
        out.line(format_args!(
            "hooks directory  {}",
            crate::output::escape(&self.status.dir)
        ))?;
        for h in &self.status.hooks {
            hook_line(out, h)?;
        }
        for w in &self.status.worktrees {
            let state = match &w.enforcement {
                Enforcement::Enforced => "enforced".to_owned(),
                Enforcement::NotInstalled => {
                    "NOT enforced: hooks not installed here (run 'git task hooks install')"
                        .to_owned()
                }
                Enforcement::Overwritten { path } => format!(
                    "NOT enforced: '{}' replaced git-task's hook (run 'git task hooks install')",
                    crate::output::escape(path)
                ),
                Enforcement::Disabled => "NOT enforced: core.hooksPath is /dev/null".to_owned(),
                Enforcement::ClientsUnchecked {
                    clients,
                    dirs,
                    tracked: true,
                } => format!(
                    "enforced under git; NOT under {}: git-task's pre-commit copy is not in {}, which the repository tracks (git-task writes nothing there)",
                    clients.join(" and "),
                    crate::output::escape(&dirs.join(", ")),
                ),
                Enforcement::ClientsUnchecked { clients, dirs, .. } => format!(
                    "enforced under git; NOT under {}: git-task's pre-commit copy is not in {} ({}run 'git task hooks install')",
                    clients.join(" and "),
                    crate::output::escape(&dirs.join(", ")),
                    match dirs.iter().any(|d| d == crate::hooks::DEV_NULL) {
                        true => "unset core.hooksPath, then ",
                        false => "",
                    }
                ),
            };
            out.line(format_args!(
                "worktree         {}  {state}",
                crate::output::escape(&w.path)
            ))?;
        }
        out.line(format_args!(
            "notes.rewriteRef {}",
            if self.status.notes_rewrite_ref {
                "refs/notes/tasks"
            } else {
                "not set for refs/notes/tasks"
            }
        ))?;
        let c = &self.confine;
        match (c.available, c.abi) {
            (true, Some(abi)) => out.line(format_args!(
                "exec --confine   available (Landlock ABI {abi})"
            )),
            _ => out.line(format_args!("exec --confine   NOT available: {}", c.detail)),
        }
    }
}

fn hook_line(out: &Out, h: &install::HookStatus) -> std::io::Result<()> {
    let state = match h.state {
        State::Missing => "missing",
        State::Installed => "installed",
        State::Outdated => "outdated (run 'git task hooks install')",
        State::Modified => "modified (run 'git task hooks install --force')",
        State::Foreign => "foreign (run 'git task hooks install' to chain it)",
        State::ChainedByManager => "a hook manager's, which runs git-task's first (kept beside it as .legacy)",
        State::Overwritten => "OVERWRITTEN by another hook: commits are not checked against contracts (run 'git task hooks install' to chain it)",
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
    Ok(())
}

/// The JSON Schemas of what `--json` prints, one per shape (published in `schema/`).
pub fn json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    use crate::output::schema_of;
    vec![
        schema_of::<InstallReport>(generator),
        schema_of::<UninstallReport>(generator),
        schema_of::<StatusReport>(generator),
    ]
}
