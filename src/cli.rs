//! Command-line types (clap): the global options. Each command's arguments live beside its
//! code in `commands/`, and the list of commands in `commands/mod.rs`.

pub use crate::commands::Command;
use clap::Parser;
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
