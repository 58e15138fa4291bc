//! `git task guard claude|codex|gemini`: an agent harness's pre-write hook (`crate::guard`).
//!
//! Runs before a repository is opened (`app::run`): the hook input says where the edit goes.
//! It fails closed: a refusal is the harness's documented deny on stdout with exit 0; anything
//! else that goes wrong (bad input, an unknown tool, a repository that cannot be read, a panic)
//! is a reason on stderr, nothing on stdout, and exit 2, the one code every harness blocks on.
//! An allowed edit prints nothing.

use crate::commands::Done;
use crate::guard::{self, Answer, Harness};
use std::io::Write;

/// The settings that install the guards, beside Claude Code's worktree hooks; printed by
/// `git task guard --help` and `git task harness --help`, and in the man page (GUARD).
pub const SETTINGS_HELP: &str = r#"Claude Code, .claude/settings.json (with the WorktreeCreate/WorktreeRemove hooks of
'git task harness claude'):

  {
    "hooks": {
      "PreToolUse": [
        { "matcher": "Edit|Write|MultiEdit|NotebookEdit",
          "hooks": [ { "type": "command", "command": "git task guard claude",
                       "timeout": 10 } ] }
      ],
      "WorktreeCreate": [
        { "hooks": [ { "type": "command",
                       "command": "git task harness claude create" } ] }
      ],
      "WorktreeRemove": [
        { "hooks": [ { "type": "command",
                       "command": "git task harness claude remove" } ] }
      ]
    }
  }

  On Claude Code 2.1.295 or later add "onFailure": "block" beside "timeout": a guard that
  cannot start, times out or crashes then blocks the edit instead of letting it through.

Codex CLI, .codex/hooks.json (or ~/.codex/hooks.json):

  {
    "hooks": {
      "PreToolUse": [
        { "matcher": "^apply_patch$",
          "hooks": [ { "type": "command", "command": "git task guard codex",
                       "timeout": 10 } ] }
      ]
    }
  }

Gemini CLI, .gemini/settings.json (timeout in milliseconds):

  {
    "hooks": {
      "BeforeTool": [
        { "matcher": "write_file|replace",
          "hooks": [ { "name": "git-task-guard", "type": "command",
                       "command": "git task guard gemini", "timeout": 10000 } ] }
      ]
    }
  }

Both layers: start the agent inside the kernel fence as well, so that nothing it runs (a
shell command, a script) can write outside the task either:

  git task exec <id> --confine -- claude

Cursor documents a preToolUse hook, but its protocol could not be verified from a primary
source, so 'git task guard' does not serve it yet."#;

/// Refuse an agent's out-of-contract edit before it is written (a harness's pre-write hook)
///
/// Reads the hook's JSON on stdin; prints the harness's deny document for an edit the task may
/// not make, nothing for one it may; exits 2 (which blocks the edit) when it cannot tell.
#[derive(clap::Args, Debug)]
#[command(after_long_help = SETTINGS_HELP)]
pub struct GuardArgs {
    /// The harness whose hook runs this: claude (PreToolUse), codex (PreToolUse on
    /// apply_patch) or gemini (BeforeTool)
    #[arg(value_enum)]
    pub harness: Harness,
}

/// Runs the guard: reads stdin, answers on stdout or stderr. Never lets an error or a panic
/// end in an exit code the harness would take as "go ahead".
pub fn run(args: &GuardArgs) -> Done {
    std::panic::set_hook(Box::new(|info| {
        let _ = writeln!(
            std::io::stderr(),
            "git task guard: internal error ({info}); the edit is blocked"
        );
    }));
    let harness = args.harness;
    // The deny document is made inside too: nothing after this line can panic.
    let answer = std::panic::catch_unwind(move || {
        answer(harness).map(|a| match a {
            Answer::Pass => None,
            Answer::Deny { mut reason, hints } => {
                for h in &hints {
                    reason.push('\n');
                    reason.push_str(&crate::output::hint_line(h));
                }
                Some((harness.deny_json(&reason), reason))
            }
        })
    });
    let _ = std::panic::take_hook();
    let result = match answer {
        Ok(r) => r,
        // The panic hook has said why on stderr.
        Err(_) => return Done::Exit(2),
    };
    match result {
        Ok(None) => Done::Ok,
        Ok(Some((doc, reason))) => {
            let mut stdout = std::io::stdout().lock();
            match stdout
                .write_all(doc.as_bytes())
                .and_then(|()| stdout.flush())
            {
                Ok(()) => Done::Ok,
                Err(e) => fail(&format!(
                    "could not write the refusal ({e}); the edit is blocked\n{reason}"
                )),
            }
        }
        Err(err) => {
            let mut text = crate::output::error_lines(&err).trim_end().to_owned();
            if !err.message().contains("blocked") {
                text.push_str("\n(git task guard could not judge this edit, so it is blocked)");
            }
            fail(&text)
        }
    }
}

/// Exit 2 with `text` on stderr: every harness blocks on it (Codex and Gemini only with a
/// non-empty stderr, which this always is).
fn fail(text: &str) -> Done {
    let _ = writeln!(std::io::stderr(), "{text}");
    Done::Exit(2)
}

fn answer(harness: Harness) -> crate::Result<Answer> {
    // Tests reach the panic path through this (debug builds only).
    if cfg!(debug_assertions) && std::env::var_os("GIT_TASK_GUARD_TEST_PANIC").is_some() {
        panic!("GIT_TASK_GUARD_TEST_PANIC is set");
    }
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin().lock(), &mut text).map_err(|e| {
        crate::Error::input(format!(
            "git task guard: could not read the hook input on stdin ({e}); the edit is blocked"
        ))
    })?;
    let input = guard::parse(harness, &text)?;
    guard::decide(harness, &input)
}
