//! Command-line types (clap). Each command's arguments live beside its code in `commands/`.

use crate::commands::*;
use clap::{Parser, Subcommand};
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
}
