//! The edge: parse argv, open the repository once, decide colour, dispatch,
//! and turn the outcome into text on stderr and an exit code. The only place
//! that decides exit codes.

use crate::cli::{Cli, Command};
use crate::commands::{self, Ctx, Done};
use crate::config::Settings;
use crate::error::Error;
use crate::git::Repo;
use crate::output::{use_color_env, Format, Out, Palette};
use clap::{CommandFactory, Parser};
use std::io::IsTerminal;
use std::process::ExitCode;

/// Runs git-task with `args` (argv, including the program name) and returns the exit code.
pub fn run(args: impl IntoIterator<Item = std::ffi::OsString>) -> ExitCode {
    let args = help_call(args.into_iter().collect());
    let parsed = hook_call(&args)
        .map(Ok)
        .unwrap_or_else(|| Cli::try_parse_from(&args));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(err) => return usage_error(&err, wants_json(&args)),
    };
    // The background delete of a removed worktree needs no repository (and must not hold one open).
    if let Command::Run(commands::Command::DeleteAside(args)) = &cli.command {
        return exit(commands::delete_aside::run(args));
    }
    // The settle of a merge gate checkout opens the repository the checkout belongs to itself.
    if let Command::Run(commands::Command::GateSettle(args)) = &cli.command {
        return exit(commands::gate_settle::run(args));
    }
    // A harness's pre-write hook: the hook input says where; it prints and exits by itself
    // (never an error JSON on stdout, exit 2 on any failure).
    if let Command::Run(commands::Command::Guard(args)) = &cli.command {
        return exit(commands::guard::run(args));
    }
    let early_out = || {
        let err_color = use_color_env(std::io::stderr().is_terminal(), None);
        Out::new(
            if cli.global.json {
                Format::Json
            } else {
                Format::Human
            },
            cli.global.quiet,
            Palette::default(),
            Palette::new(err_color),
        )
    };
    let command = match &cli.command {
        Command::Run(command) => command,
        // Completion needs no repository: the script anywhere, task ids where there is one.
        Command::Complete(args) => {
            return exit(commands::completions::complete(
                args,
                &early_out(),
                Cli::command(),
            ))
        }
        // The MCP server and the harness hooks open a repository per call, where the call says
        // (relative to the directory `-C` names).
        Command::Mcp(_) => {
            return standalone(&cli, &early_out, || crate::mcp::serve().map(|()| Done::Ok))
        }
        Command::Harness(args) => {
            return standalone(&cli, &early_out, || crate::harness::run(args))
        }
    };
    if let commands::Command::Completions(args) = command {
        return exit(commands::completions::run(args, &early_out()));
    }
    let start_dir = match enter_dir(&cli, &early_out) {
        Ok(dir) => dir,
        Err(code) => return code,
    };
    // A hook fails closed: with a client's unusable GIT_DIR/GIT_INDEX_FILE (gitg's `(null)`) it
    // runs again without them, finding the repository from the directory it runs in.
    let hook = matches!(command, commands::Command::Hook(_));
    if hook {
        match crate::hooks::env::rerun_if_unusable() {
            None => {}
            Some(Ok(code)) => return ExitCode::from(u8::try_from(code).unwrap_or(128)),
            Some(Err(err)) => {
                early_out().error(&err);
                return ExitCode::from(err.exit_code());
            }
        }
    }
    let repo = match Repo::discover(&start_dir) {
        Ok(repo) => repo,
        Err(err) => {
            let err = match hook.then(|| crate::hooks::env::cannot_tell(&err)).flatten() {
                Some(refusal) => refusal,
                None => err,
            };
            early_out().error(&err);
            return ExitCode::from(err.exit_code());
        }
    };
    let color_ui = repo.config_string("color.ui");
    let palette = Palette::new(use_color_env(
        std::io::stdout().is_terminal(),
        color_ui.as_deref(),
    ));
    let err_palette = Palette::new(use_color_env(
        std::io::stderr().is_terminal(),
        color_ui.as_deref(),
    ));
    let format = if cli.global.json {
        Format::Json
    } else {
        Format::Human
    };
    let out = Out::new(format, cli.global.quiet, palette, err_palette);
    let settings = match Settings::load(&repo) {
        Ok(s) => s,
        Err(err) => {
            out.error(&err);
            return ExitCode::from(err.exit_code());
        }
    };
    let ctx = Ctx {
        repo,
        settings,
        out,
    };
    let result = commands::run(&ctx, command);
    if let Err(err) = &result {
        ctx.out.error(err);
    }
    let _ = ctx.out.flush();
    ExitCode::from(commands::exit_code(&result))
}

/// The directory the command runs from: `-C DIR` (made the current directory, like `git -C`:
/// relative paths in arguments such as --path and --contract are relative to it), else the
/// current directory. On an error, it is printed and the exit code returned.
fn enter_dir(cli: &Cli, early_out: &dyn Fn() -> Out) -> Result<std::path::PathBuf, ExitCode> {
    let start_dir = match &cli.global.dir {
        Some(dir) => crate::git::absolute(dir),
        None => match std::env::current_dir() {
            Ok(d) => d,
            Err(e) => {
                early_out().error(&Error::repo("could not read the current directory", e));
                return Err(ExitCode::from(128));
            }
        },
    };
    if cli.global.dir.is_some() {
        if let Err(e) = std::env::set_current_dir(&start_dir) {
            let err = Error::input(format!("cannot change to '{}': {e}", start_dir.display()))
                .hint("pass an existing directory to -C");
            early_out().error(&err);
            return Err(ExitCode::from(err.exit_code()));
        }
    }
    Ok(start_dir)
}

/// Runs a front end that opens a repository per call (the MCP server, a harness hook) from
/// the directory `-C` names, and returns its exit code.
fn standalone(
    cli: &Cli,
    early_out: &dyn Fn() -> Out,
    run: impl FnOnce() -> commands::CmdResult,
) -> ExitCode {
    if let Err(code) = enter_dir(cli, early_out) {
        return code;
    }
    match run() {
        Ok(done) => exit(done),
        Err(err) => {
            early_out().error(&err);
            ExitCode::from(err.exit_code())
        }
    }
}

/// `git-task hook <name> [args]` as the installed hooks call it, on every commit and checkout:
/// read without building the whole command line (a third of a millisecond). Anything else
/// (an option, another name, an argument that is not UTF-8) is left to clap, which reads these
/// calls the same way.
fn hook_call(args: &[std::ffi::OsString]) -> Option<Cli> {
    let [_, hook, name, rest @ ..] = args else {
        return None;
    };
    let name = name
        .to_str()
        .filter(|n| matches!(*n, "pre-commit" | "post-checkout" | "reference-transaction"))?;
    let rest: Vec<String> = rest
        .iter()
        .map(|a| {
            a.to_str()
                .filter(|a| !a.starts_with('-'))
                .map(str::to_owned)
        })
        .collect::<Option<_>>()?;
    (hook == "hook").then(|| Cli {
        global: crate::cli::GlobalArgs {
            json: false,
            dir: None,
            quiet: false,
        },
        command: Command::Run(commands::Command::Hook(commands::hook::HookArgs {
            name: name.to_owned(),
            args: rest,
        })),
    })
}

/// `git task help [<cmd>..]` reads as `git task [<cmd>..] --help` (the help subcommand is
/// clap's own only in name: it would not print each command's long help the same way).
fn help_call(mut args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    if args.get(1).is_some_and(|a| a == "help") {
        args.remove(1);
        args.push("--help".into());
    }
    args
}

/// The exit code of a command that needs no repository.
fn exit(done: Done) -> ExitCode {
    ExitCode::from(commands::exit_code(&Ok(done)))
}

/// Whether argv asks for `--json` (before a `--` that starts a command's own arguments): a
/// usage error is then also printed as JSON, although the arguments could not be parsed.
fn wants_json(args: &[std::ffi::OsString]) -> bool {
    args.iter()
        .skip(1)
        .take_while(|a| a.as_os_str() != "--")
        .any(|a| a.as_os_str() == "--json")
}

/// Prints a clap error git-style (`error: …` then `hint: …`) and returns exit 2; help and
/// version exit 0. With `json`, the error is also one JSON document on stdout.
fn usage_error(err: &clap::Error, json: bool) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        err.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = err.print();
        if err.kind() != ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
            return ExitCode::SUCCESS;
        }
        if json {
            let out = Out::new(Format::Json, true, Palette::default(), Palette::default());
            let _ = out.raw(&json_only(
                &Error::input("a command is required").hint("run 'git task -h' for usage"),
            ));
        }
        return ExitCode::from(2);
    }
    let out = Out::new(
        if json { Format::Json } else { Format::Human },
        false,
        Palette::default(),
        Palette::new(use_color_env(std::io::stderr().is_terminal(), None)),
    );
    let mut text = err.render().to_string();
    // The rejected value may hold control characters (a newline in an id): show them escaped.
    if let Some(clap::error::ContextValue::String(value)) =
        err.get(clap::error::ContextKind::InvalidValue)
    {
        text = text.replace(value.as_str(), &crate::output::escape(value));
    }
    let mut lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with("For more information, try"))
        .collect();
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    let body = lines.join("\n");
    let message = body.strip_prefix("error: ").unwrap_or(&body).to_owned();
    let mut error = Error::input(message);
    if text.contains("a task id") {
        error = error.hint("a task id is 1-64 characters of letters, digits, '.', '_' and '-', starting with a letter or digit, e.g. 'auth-fix'");
    }
    error = error.hint("run 'git task -h' for usage, or see 'man git-task'");
    out.error(&error);
    ExitCode::from(2)
}

/// The JSON document of `err` alone (the usage text went to stderr already).
fn json_only(err: &Error) -> String {
    let failure = crate::output::Failure::of(err);
    let doc = crate::output::Versioned::new(&failure);
    serde_json::to_string(&doc).unwrap_or_default() + "\n"
}

#[cfg(test)]
mod tests {
    use super::{hook_call, Cli};
    use clap::Parser;

    /// The hooks' calls read without clap as clap reads them; others are left to clap.
    #[test]
    fn hook_calls_read_as_clap_reads_them() {
        let argv = |a: &[&str]| -> Vec<std::ffi::OsString> { a.iter().map(Into::into).collect() };
        for call in [
            &["git-task", "hook", "pre-commit"][..],
            &["git-task", "hook", "post-checkout", "0000", "1111", "1"],
            &["git-task", "hook", "pre-commit", "x y", "é"],
        ] {
            let fast = hook_call(&argv(call)).expect("read without clap");
            let clap = Cli::try_parse_from(argv(call)).expect("clap reads it");
            assert_eq!(format!("{fast:?}"), format!("{clap:?}"), "{call:?}");
        }
        for call in [
            &["git-task", "hook"][..],
            &["git-task", "hook", "pre-push"],
            &["git-task", "hook", "pre-commit", "--json"],
            &["git-task", "--json", "hook", "pre-commit"],
            &["git-task", "list"],
        ] {
            assert!(hook_call(&argv(call)).is_none(), "{call:?}");
        }
    }
}
