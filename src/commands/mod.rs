//! Glue: one file per command; each turns its arguments into a core call and a report.

pub mod changes;
pub mod check;
pub mod checkpoint;
pub mod claim;
pub mod commit;
pub mod delete_aside;
pub mod diff;
pub mod drop;
pub mod exec;
pub mod hook;
pub mod hooks;
pub mod list;
pub mod log;
pub mod merge;
pub mod overlaps;
pub mod path;
pub mod pool;
pub mod release;
pub mod remove;
pub mod reset;
pub mod revert;
pub mod scratch;
pub mod start;
pub mod status;
pub mod sweep;
pub mod sync;

use crate::config::Settings;
use crate::git::Repo;
use crate::output::{Out, Report};
use clap::Subcommand;

/// The commands of git-task.
#[derive(Subcommand, Debug)]
pub enum Command {
    Start(start::StartArgs),
    List(list::ListArgs),
    Status(status::StatusArgs),
    Path(path::PathArgs),
    Exec(exec::ExecArgs),
    Log(log::LogArgs),
    Scratch(scratch::ScratchArgs),
    Drop(drop::DropArgs),
    Remove(remove::RemoveArgs),
    Sweep(sweep::SweepArgs),
    Commit(commit::CommitArgs),
    Checkpoint(checkpoint::CheckpointArgs),
    Changes(changes::ChangesArgs),
    Diff(diff::DiffArgs),
    Revert(revert::RevertArgs),
    Reset(reset::ResetArgs),
    Check(check::CheckArgs),
    Hooks(hooks::HooksArgs),
    #[command(hide = true)]
    Hook(hook::HookArgs),
    #[command(hide = true)]
    DeleteAside(delete_aside::DeleteAsideArgs),
    Merge(merge::MergeArgs),
    Sync(sync::SyncArgs),
    Pool(pool::PoolArgs),
    Overlaps(overlaps::OverlapsArgs),
    Claim(claim::ClaimArgs),
    Release(release::ReleaseArgs),
}

/// Everything a command needs: the repository, the settings and the output.
pub struct Ctx {
    /// The repository, opened once.
    pub repo: Repo,
    /// `task.*` settings.
    pub settings: Settings,
    /// Where answers go.
    pub out: Out,
}

/// What a command that ran to completion concluded.
#[derive(Debug, PartialEq, Eq)]
pub enum Done {
    /// Exit 0.
    Ok,
    /// Exit 1: the command worked and the answer is "no"; the report is already printed.
    Negative,
    /// Exit with this code (`exec` passes on its child's code).
    Exit(u8),
}

/// The result of every command.
pub type CmdResult = Result<Done, crate::Error>;

/// Runs one command.
pub fn run(ctx: &Ctx, command: &Command) -> CmdResult {
    // A mutating command first finishes what a killed one left half made (SPEC §2.7).
    if matches!(
        command,
        Command::Start(_)
            | Command::Drop(_)
            | Command::Remove(_)
            | Command::Commit(_)
            | Command::Checkpoint(_)
            | Command::Revert(_)
            | Command::Reset(_)
            | Command::Merge(_)
            | Command::Sync(_)
    ) {
        crate::task::recover::quick(&ctx.repo);
        crate::task::abandoned::repair_abandoned_starts(&ctx.repo, &ctx.settings);
    }
    match command {
        Command::Start(args) => start::run(ctx, args),
        Command::List(args) => list::run(ctx, args),
        Command::Status(args) => status::run(ctx, args),
        Command::Path(args) => path::run(ctx, args),
        Command::Exec(args) => exec::run(ctx, args),
        Command::Log(args) => log::run(ctx, args),
        Command::Scratch(args) => scratch::run(ctx, args),
        Command::Drop(args) => drop::run(ctx, args),
        Command::Remove(args) => remove::run(ctx, args),
        Command::Sweep(args) => sweep::run(ctx, args),
        Command::Commit(args) => commit::run(ctx, args),
        Command::Checkpoint(args) => checkpoint::run(ctx, args),
        Command::Changes(args) => changes::run(ctx, args),
        Command::Diff(args) => diff::run(ctx, args),
        Command::Revert(args) => revert::run(ctx, args),
        Command::Reset(args) => reset::run(ctx, args),
        Command::Check(args) => check::run(ctx, args),
        Command::Hooks(args) => hooks::run(ctx, args),
        Command::Hook(args) => hook::run(ctx, args),
        // Handled by `app::run` before a repository is opened; here only for completeness.
        Command::DeleteAside(args) => Ok(delete_aside::run(args)),
        Command::Merge(args) => merge::run(ctx, args),
        Command::Sync(args) => sync::run(ctx, args),
        Command::Pool(args) => pool::run(ctx, args),
        Command::Overlaps(args) => overlaps::run(ctx, args),
        Command::Claim(args) => claim::run(ctx, args),
        Command::Release(args) => release::run(ctx, args),
    }
}

/// Prints `report` and maps a closed stdout pipe to a quiet success.
pub fn emit<R: Report>(ctx: &Ctx, report: &R, done: Done) -> CmdResult {
    match ctx.out.report(report) {
        Ok(()) => Ok(done),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(done),
        Err(e) => Err(crate::Error::repo("could not write the output", e)),
    }
}
