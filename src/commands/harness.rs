//! `git task harness claude create|remove`: an agent harness's worktree hooks.
//!
//! Claude Code's `WorktreeCreate` and `WorktreeRemove` hooks hand a JSON object on stdin;
//! `crate::harness` turns it into `start` or `remove`. Like `mcp`, it runs before a
//! repository is opened (`app::run`): the hook input says where.

use crate::commands::{CmdResult, Done};

/// Arguments of `git task harness`.
#[derive(clap::Args, Debug)]
pub struct HarnessArgs {
    #[command(subcommand)]
    pub harness: Harness,
}

/// The agent harnesses git-task plugs into.
#[derive(clap::Subcommand, Debug)]
pub enum Harness {
    /// Claude Code's WorktreeCreate/WorktreeRemove hooks (JSON on stdin)
    #[command(subcommand)]
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

/// Runs the hook: reads its input from stdin, answers on stdout (the worktree path) and stderr.
pub fn run(args: &HarnessArgs) -> CmdResult {
    use std::io::Write;
    let Harness::Claude(event) = args.harness;
    let mut input = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin().lock(), &mut input)
        .map_err(|e| crate::Error::input(format!("could not read the hook input on stdin: {e}")))?;
    let answer = crate::harness::claude(event == HookEvent::Create, &input)?;
    let _ = std::io::stderr().write_all(answer.stderr.as_bytes());
    if let Some(path) = &answer.stdout {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{path}")
            .and_then(|()| stdout.flush())
            .map_err(|e| crate::Error::repo("could not write the worktree path", e))?;
    }
    Ok(match answer.code {
        0 => Done::Ok,
        1 => Done::Negative,
        code => Done::Exit(code),
    })
}
