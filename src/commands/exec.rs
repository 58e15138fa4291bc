//! `git task exec`: run a command in a task's worktree, optionally confined by the kernel.

use crate::commands::Ctx;
use crate::commands::{CmdResult, Done};
use crate::confine::{Enforced, Level};
use crate::task::{Mode, TaskId};

/// Run a command in the task worktree and exit with its code
#[derive(clap::Args, Debug)]
pub struct ExecArgs {
    /// Task id
    #[arg(value_parser = TaskId::parse)]
    pub id: TaskId,
    /// Run CMD under the kernel's write fence (Landlock): it may write only the task's
    /// worktree and what a commit on its branch needs; 'strict' narrows the worktree to the
    /// contract's directories; 'best-effort' runs unconfined, with a warning, where the
    /// kernel cannot confine
    #[arg(
        long,
        value_enum,
        value_name = "MODE",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "worktree"
    )]
    pub confine: Option<ConfineMode>,
    /// The command and its arguments, after '--'
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// What `--confine` leaves writable, and how hard it is required.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfineMode {
    /// The whole worktree (what plain `--confine` means)
    #[value(hide = true)]
    Worktree,
    /// Only the contract's directory hull and task.confineBuildDirs
    Strict,
    /// As plain --confine where the kernel can; unconfined, with a warning, where it cannot
    BestEffort,
}

pub fn run(ctx: &Ctx, args: &ExecArgs) -> CmdResult {
    let record = crate::resolve::existing(&ctx.repo, &args.id)?;
    let dir = std::path::PathBuf::from(&record.state.worktree);
    if !record.state.status.is_live() || !dir.is_dir() {
        return Err(crate::Error::input(format!(
            "task '{}' has no worktree ({})",
            args.id, record.state.status
        ))
        .hint(if record.state.status.is_live() {
            format!(
                "make its worktree again (work is saved first): git task start --reset {}",
                args.id
            )
        } else {
            format!("start it again with 'git task start {}'", args.id)
        }));
    }
    let env = record.state.task_env();
    if let Some(mode) = args.confine {
        let level = match mode {
            ConfineMode::BestEffort => Level::BestEffort,
            _ => Level::Required,
        };
        let support = crate::confine::support();
        if !support.available && (level == Level::Required || support.abi.is_none()) {
            if level == Level::Required {
                return Err(crate::confine::unsupported(&support));
            }
            ctx.out.warn(format_args!(
                "running UNCONFINED (--confine=best-effort): cannot confine: {}",
                support.detail
            ));
        } else {
            return confined(ctx, args, &record, &dir, &env, mode, level);
        }
    }
    let code = crate::checks::run_inherited(&args.command, &dir, &env)?;
    Ok(Done::Exit(code.clamp(0, 255) as u8))
}

/// Applies the fence to this process and replaces it with the command: returns only when
/// that failed.
fn confined(
    ctx: &Ctx,
    args: &ExecArgs,
    record: &crate::record::Record,
    dir: &std::path::Path,
    env: &[(&'static str, String)],
    mode: ConfineMode,
    level: Level,
) -> CmdResult {
    if record.state.mode == Mode::Patch {
        return Err(crate::Error::input(format!(
            "cannot confine task '{}': a patch-mode task works in the main worktree",
            args.id
        ))
        .hint("start a worktree-mode task to confine an agent to it"));
    }
    let strict = match mode {
        ConfineMode::Strict => {
            let contract = crate::changes::effective(
                &ctx.repo,
                record,
                &crate::contract::BranchFile::NotApplicable,
            )?;
            Some((contract.allowed_summary(), contract.forbidden_summary()))
        }
        _ => None,
    };
    let request = crate::confine::Request {
        id: &args.id,
        worktree: dir,
        branch_ref: &record.state.branch,
        base_ref: record.state.base_branch.as_deref(),
        strict,
        build_dirs: &ctx.settings.confine_build_dirs,
        writable: &ctx.settings.confine_writable,
    };
    let plan = crate::confine::prepare(&ctx.repo, &request)?;
    for w in &plan.warnings {
        ctx.out.warn(w);
    }
    let (program, rest) = args.command.split_first().ok_or_else(|| {
        crate::Error::input("no command given after '--'")
            .hint("e.g. git task exec <id> --confine -- claude")
    })?;
    let mut cmd = std::process::Command::new(program);
    cmd.args(rest).current_dir(dir);
    for var in crate::git::LOCAL_ENV {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    for (k, v) in &plan.env {
        cmd.env(k, v);
    }
    let _ = ctx.out.flush();
    Err(crate::confine::exec(&plan, level, &mut cmd, |enforced| {
        ctx.out.warn(match enforced {
            Enforced::Not => {
                "this kernel enforced none of the fence: running UNCONFINED (--confine=best-effort)"
            }
            _ => "this kernel enforces only part of the fence: running partly confined (--confine=best-effort)",
        })
    }))
}
