//! `git task mcp`: serve the commands as Model Context Protocol tools on stdin/stdout.
//!
//! The server (`crate::mcp`) opens the repository per call, from its working directory
//! or the call's `repo` argument, so it starts without one (`app::run` calls it before
//! opening a repository).

use crate::commands::{CmdResult, Done};

/// Arguments of `git task mcp` (none yet: the client sends everything per call).
#[derive(clap::Args, Debug)]
pub struct McpArgs {}

/// Serves MCP over stdio until the client closes stdin.
pub fn run(_args: &McpArgs) -> CmdResult {
    crate::mcp::serve()?;
    Ok(Done::Ok)
}
