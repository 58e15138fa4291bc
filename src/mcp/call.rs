//! One command run in process, its answer captured instead of printed: what an MCP tool
//! call and a harness hook do with the `Command` they were turned into.

use crate::commands::{self, Command, Ctx, Done};
use crate::config::Settings;
use crate::error::Error;
use crate::git::Repo;
use crate::output::{Format, Out};
use std::path::Path;

/// What a command run in process left: its exit code and its two streams.
#[derive(Debug)]
pub struct Outcome {
    /// The exit code the command line would have given (SPEC §6).
    pub code: u8,
    /// stdout: the JSON document (`--json`), as the command line prints it.
    pub stdout: String,
    /// stderr: warnings and notes (and the error and its hints, as text, when it failed).
    pub stderr: String,
    /// Why the command could not finish, when it could not.
    pub error: Option<Failure>,
}

pub use crate::output::Failure;

/// Runs `command` as `git task -C <dir> --json <command>` would, in this process.
///
/// Changes the process's current directory to `dir` (relative paths in the arguments are
/// relative to it, as with `-C`), so calls must not overlap: the MCP server serves one at a time.
pub fn run_in(dir: &Path, command: &Command) -> Outcome {
    let (out, stdout, stderr) = Out::captured(Format::Json, false);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        open_and_run(dir, command, out)
    }))
    .unwrap_or_else(|_| {
        Err(Error::repo_msg("git-task failed unexpectedly (a bug)")
            .hint("the standard error of the server shows where; please report it"))
    });
    let code = commands::exit_code(&result);
    let error = result.err();
    let mut stderr = String::from_utf8_lossy(&stderr.take()).into_owned();
    if let Some(err) = &error {
        stderr.push_str(&crate::output::error_lines(err));
    }
    Outcome {
        code,
        stdout: String::from_utf8_lossy(&stdout.take()).into_owned(),
        stderr,
        error: error.as_ref().map(Failure::of),
    }
}

fn open_and_run(dir: &Path, command: &Command, out: Out) -> Result<Done, Error> {
    std::env::set_current_dir(dir).map_err(|e| {
        Error::input(format!("cannot change to '{}': {e}", dir.display()))
            .hint("give an existing directory inside a git repository")
    })?;
    let repo = Repo::discover(dir)?;
    let settings = Settings::load(&repo)?;
    let ctx = Ctx {
        repo,
        settings,
        out,
    };
    let done = commands::run(&ctx, command);
    let _ = ctx.out.flush();
    done
}
