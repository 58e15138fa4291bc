//! `git task exec`: run a command in a task's worktree.

use crate::commands::Ctx;
use crate::commands::{CmdResult, Done};
use crate::task::TaskId;

/// Run a command in the task worktree and exit with its code
#[derive(clap::Args, Debug)]
pub struct ExecArgs {
    /// Task id
    #[arg(value_parser = TaskId::parse)]
    pub id: TaskId,
    /// The command and its arguments, after '--'
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

pub fn run(ctx: &Ctx, args: &ExecArgs) -> CmdResult {
    let record = crate::record::load_existing(&ctx.repo, &args.id)?;
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
    let code = crate::checks::run_inherited(&args.command, &dir, &env)?;
    Ok(Done::Exit(code.clamp(0, 255) as u8))
}
