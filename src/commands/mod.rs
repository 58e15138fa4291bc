//! Glue: one file per command; each turns its arguments into a core call and a report.

pub mod drop;
pub mod exec;
pub mod list;
pub mod log;
pub mod merge;
pub mod path;
pub mod remove;
pub mod scratch;
pub mod start;
pub mod status;
pub mod sweep;
pub mod sync;

use crate::app::Ctx;
use crate::cli::Command;
use crate::output::Report;

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
        Command::Merge(args) => merge::run(ctx, args),
        Command::Sync(args) => sync::run(ctx, args),
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
