//! Command-line types (clap): the global options, and the commands the front ends run
//! themselves (`__complete`, `mcp`, `harness`). Every other command's arguments live beside
//! its code in `commands/`, and the list of those commands in `commands/mod.rs`.

use crate::commands::completions::CompleteArgs;
use clap::{CommandFactory, Parser};
use std::path::PathBuf;

/// Isolated, contract-fenced tasks for parallel coding agents
#[derive(Parser, Debug)]
#[command(name = "git-task", bin_name = "git task", version, about, long_about = None)]
#[command(disable_help_subcommand = true, propagate_version = true)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes.
#[derive(clap::Args, Debug, Clone)]
pub struct GlobalArgs {
    /// Print results as one JSON document
    #[arg(long, global = true)]
    pub json: bool,
    /// Run as if started in DIR
    #[arg(short = 'C', value_name = "DIR", global = true)]
    pub dir: Option<PathBuf>,
    /// Print less on stderr
    #[arg(short, long, global = true)]
    pub quiet: bool,
}

/// The commands of the command line: those [`crate::commands::run`] runs, then those the
/// front ends run themselves (`app::run`, before a repository is opened).
#[derive(clap::Subcommand, Debug)]
#[allow(clippy::large_enum_variant)] // parsed once per process, never moved around
pub enum Command {
    #[command(flatten)]
    Run(crate::commands::Command),
    #[command(name = "__complete", hide = true)]
    Complete(CompleteArgs),
    /// Serve the commands as MCP tools on stdio
    Mcp(McpArgs),
    /// Agent-harness hooks (Claude Code's WorktreeCreate/WorktreeRemove)
    Harness(HarnessArgs),
}

/// Parses `argv` (with the program name) into a command [`crate::commands::run`] runs: what
/// the MCP tools and the harness hooks run in process.
pub fn parse_command<I, T>(argv: I) -> Result<crate::commands::Command, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    match Cli::try_parse_from(argv)?.command {
        Command::Run(command) => Ok(command),
        _ => Err(Cli::command().error(
            clap::error::ErrorKind::InvalidSubcommand,
            "this command runs only from the command line",
        )),
    }
}

// `mcp`: the server (`crate::mcp`) opens the repository per call, from its working directory
// or the call's `repo` argument, so it starts without one (`app::run` calls it before opening a
// repository).

/// Arguments of `git task mcp` (none yet: the client sends everything per call).
#[derive(clap::Args, Debug)]
pub struct McpArgs {}

// `harness claude create|remove`: Claude Code's `WorktreeCreate` and `WorktreeRemove` hooks
// hand a JSON object on stdin; `crate::harness` turns it into `start` or `remove`. Like `mcp`,
// it runs before a repository is opened (`app::run`): the hook input says where.

/// Arguments of `git task harness`.
#[derive(clap::Args, Debug)]
#[command(after_long_help = crate::commands::guard::SETTINGS_HELP)]
pub struct HarnessArgs {
    #[command(subcommand)]
    pub harness: Harness,
}

/// The agent harnesses git-task plugs into.
#[derive(clap::Subcommand, Debug)]
pub enum Harness {
    /// Claude Code's WorktreeCreate/WorktreeRemove hooks (JSON on stdin)
    #[command(subcommand, after_long_help = crate::commands::guard::SETTINGS_HELP)]
    Claude(HookEvent),
}

/// Which worktree hook fired.
#[derive(clap::Subcommand, Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEvent {
    /// WorktreeCreate: start a task; print its worktree path on stdout
    Create,
    /// WorktreeRemove: remove the task whose worktree it is, saving its work first
    Remove,
}
