//! Glue: one file per command; each turns its arguments into a core call and a report.

pub mod adopt;
pub mod audit;
pub mod changes;
pub mod check;
pub mod checkpoint;
pub mod claim;
pub mod commit;
pub mod completions;
pub mod delete_aside;
pub mod diff;
pub mod drop;
pub mod exec;
pub mod fetch;
pub mod gate_settle;
pub mod guard;
pub mod hook;
pub mod hooks;
pub mod list;
pub mod log;
pub mod merge;
pub mod overlaps;
pub mod path;
pub mod pool;
pub mod push;
pub mod queue;
pub mod release;
pub mod remove;
pub mod reset;
pub mod revert;
pub mod schema;
pub mod scratch;
pub mod start;
pub mod status;
pub mod sweep;
pub mod sync;
pub mod trust;

use crate::config::Settings;
use crate::git::Repo;
use crate::output::{Out, Report};
use clap::Subcommand;

// The front ends run `__complete`, `mcp` and `harness` themselves (`crate::cli::Command`).
/// The commands of git-task.
#[derive(Subcommand, Debug)]
pub enum Command {
    Start(start::StartArgs),
    List(list::ListArgs),
    Status(status::StatusArgs),
    Path(path::PathArgs),
    Exec(exec::ExecArgs),
    Guard(guard::GuardArgs),
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
    #[command(hide = true)]
    GateSettle(gate_settle::GateSettleArgs),
    Merge(merge::MergeArgs),
    Sync(sync::SyncArgs),
    Pool(pool::PoolArgs),
    Push(push::PushArgs),
    Fetch(fetch::FetchArgs),
    Adopt(adopt::AdoptArgs),
    Completions(completions::CompletionsArgs),
    Overlaps(overlaps::OverlapsArgs),
    Claim(claim::ClaimArgs),
    Release(release::ReleaseArgs),
    Trust(trust::TrustArgs),
    Audit(audit::AuditArgs),
    Queue(queue::QueueArgs),
}

/// The JSON Schemas of one command's `--json` output, one per shape it prints.
pub type Schemas = fn(&mut schemars::SchemaGenerator) -> Vec<schemars::Schema>;

/// Every command that prints JSON, with its schema file's name (`schema/<name>.json`) and
/// what is validated against it (`schema.rs` makes the files).
pub const JSON_SCHEMAS: &[(&str, &str, Schemas)] = &[
    ("start", "git task start --json", start::json_schemas),
    ("list", "git task list --json", list::json_schemas),
    ("status", "git task status --json", status::json_schemas),
    ("path", "git task path --json", path::json_schemas),
    ("log", "git task log --json", log::json_schemas),
    (
        "log-follow",
        "git task log --follow --json (one document per line)",
        log::follow_json_schemas,
    ),
    ("scratch", "git task scratch --json", scratch::json_schemas),
    ("drop", "git task drop --json", drop::json_schemas),
    ("remove", "git task remove --json", remove::json_schemas),
    ("sweep", "git task sweep --json", sweep::json_schemas),
    ("commit", "git task commit --json", commit::json_schemas),
    (
        "checkpoint",
        "git task checkpoint --json",
        checkpoint::json_schemas,
    ),
    ("changes", "git task changes --json", changes::json_schemas),
    ("diff", "git task diff --json", diff::json_schemas),
    ("revert", "git task revert --json", revert::json_schemas),
    ("reset", "git task reset --json", reset::json_schemas),
    ("check", "git task check --json", check::json_schemas),
    (
        "hooks",
        "git task hooks install|uninstall|status --json",
        hooks::json_schemas,
    ),
    ("merge", "git task merge --json", merge::json_schemas),
    ("sync", "git task sync --json", sync::json_schemas),
    (
        "pool",
        "git task pool fill|status|drain --json",
        pool::json_schemas,
    ),
    (
        "overlaps",
        "git task overlaps --json",
        overlaps::json_schemas,
    ),
    ("push", "git task push --json", push::json_schemas),
    ("fetch", "git task fetch --json", fetch::json_schemas),
    ("adopt", "git task adopt --json", adopt::json_schemas),
    ("claim", "git task claim --json", claim::json_schemas),
    ("release", "git task release --json", release::json_schemas),
    ("trust", "git task trust --json", trust::json_schemas),
    ("audit", "git task audit --json", audit::json_schemas),
    (
        "queue",
        "git task queue add|status|remove|run --json",
        queue::json_schemas,
    ),
    (
        "error",
        "the error of any git task command with --json (its exit code: 1, 2 or 128)",
        crate::output::error_schemas,
    ),
];

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

/// The exit code of a command's result (SPEC §6): the one map the command line and the MCP
/// server share. 0 success; 1 a negative verdict; 2 bad input; 128 a repository error; or the
/// code `exec` passes on.
pub fn exit_code(result: &CmdResult) -> u8 {
    match result {
        Ok(Done::Ok) => 0,
        Ok(Done::Negative) => 1,
        Ok(Done::Exit(code)) => *code,
        Err(err) => err.exit_code(),
    }
}

/// Runs one command.
pub fn run(ctx: &Ctx, command: &Command) -> CmdResult {
    // Pinned settings changed in git config are ignored: say so, once per key (SPEC §2.8).
    if !matches!(command, Command::Trust(_)) {
        for warning in ctx.settings.warnings() {
            ctx.out.warn(warning);
        }
    }
    // Hooks installed but no longer run (a hook manager replaced them): every command says so
    // (`start`, `list` and `status` say it their own way).
    if !matches!(
        command,
        Command::Hook(_)
            | Command::Hooks(_)
            | Command::Start(_)
            | Command::List(_)
            | Command::Status(_)
            | Command::Completions(_)
            | Command::Guard(_)
            | Command::DeleteAside(_)
            | Command::GateSettle(_)
    ) {
        if let Some(state) = crate::hooks::main_bypassed(&ctx.repo) {
            crate::output::enforcement::warn_unchecked(
                &ctx.out,
                &[(crate::output::enforcement::MAIN.to_owned(), state)],
            );
        }
    }
    // A command that runs git or the user's commands, writes into a worktree or reads a
    // worktree's files through git's filters, refuses while git config that makes git run
    // commands differs from what the user trusted.
    if let Some(scope) = trust_scope(ctx, command) {
        let runs = match runs_git(command) {
            true => crate::config::trusted::Runs::Anything,
            false => crate::config::trusted::Runs::Filters,
        };
        crate::config::ensure_unchanged(&ctx.repo, &scope, runs)?;
    }
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
            | Command::Push(_)
            | Command::Adopt(_)
            | Command::Queue(_)
    ) {
        crate::recover::quick(&ctx.repo);
        crate::recover::abandoned::repair_abandoned_starts(&ctx.repo, &ctx.settings);
    }
    let done = dispatch(ctx, command);
    // A patch-mode task that no longer guards the main worktree (dropped, removed, merged)
    // leaves it to the user's own hooks: git-task's pointer there goes.
    if matches!(
        command,
        Command::Drop(_)
            | Command::Remove(_)
            | Command::Merge(_)
            | Command::Revert(_)
            | Command::Queue(_)
            | Command::Sweep(_)
    ) {
        if let Err(err) = crate::hooks::patch::release_main(&ctx.repo) {
            ctx.out.warn(format_args!(
                "could not take git-task's hooks pointer away from the main worktree: {err}"
            ));
        }
    }
    // The command's refs are written (or it failed): its packs may be repacked now.
    crate::git::pack::release();
    done
}

/// Whether `command` checks out or updates a worktree, runs git, hooks or checks: what an
/// exec-capable git setting an agent changed would turn into running its command
/// (`config_changed`). `exec` runs the user's own command and is left alone.
fn runs_git(command: &Command) -> bool {
    match command {
        Command::Start(_)
        | Command::Merge(_)
        | Command::Sync(_)
        | Command::Reset(_)
        | Command::Revert(_)
        | Command::Push(_)
        | Command::Fetch(_)
        | Command::Adopt(_) => true,
        Command::Check(args) => args.run,
        Command::Pool(args) => matches!(args.action, pool::PoolAction::Fill { .. }),
        Command::Queue(args) => matches!(args.action, queue::QueueAction::Run { .. }),
        _ => false,
    }
}

/// Whose worktree config a command's comparison with the trusted settings looks at (the shared
/// config files and the gate checkouts' always); `None`: the command runs nothing git could be
/// told to run.
///
/// `merge` and `check` of named tasks open only the worktree they run in, the main one, those
/// tasks' worktrees (as their `.git` files name their private directories, which is where git
/// looks too) and the target's (compared where the landing opens it: `merge::target`); `start`
/// only the one it runs in, the main one, the new one it makes and a pool entry it takes
/// (compared where it takes it: `pool::take`). The commands that read one task's worktree files
/// (its uncommitted work, or what a discard saves first) read them through git's filters, whose
/// drivers that worktree's config may name: the same worktrees count, for the keys that reading
/// can run ([`crate::config::trusted::Runs::Filters`]: a hook manager's `core.hooksPath` does not
/// stop `status`). Another task's worktree config cannot make them run anything, and with a
/// thousand live tasks they do not look at a thousand files. Every other command that runs git
/// or reads every worktree, and a task whose worktree is not known here, looks at every
/// worktree's.
fn trust_scope(ctx: &Ctx, command: &Command) -> Option<crate::config::trusted::Scope> {
    use crate::config::trusted::Scope;
    let ids: Vec<&crate::task::TaskId> = match command {
        Command::Merge(args) if args.remote.is_none() => args.ids.iter().collect(),
        Command::Start(_) => Vec::new(),
        Command::Check(args) => args.id.iter().collect(),
        Command::Status(args) => args.id.iter().collect(),
        Command::Diff(args) => args.id.iter().collect(),
        Command::Changes(args) => args.id.iter().collect(),
        Command::Commit(args) => args.id.iter().collect(),
        Command::Checkpoint(args) => args.id.iter().collect(),
        Command::Drop(args) => args.id.iter().collect(),
        Command::Scratch(args) => args.id.iter().collect(),
        Command::Remove(args) => vec![&args.id],
        Command::Overlaps(args) if !args.ids.is_empty() => args.ids.iter().collect(),
        Command::Overlaps(_) | Command::Sweep(_) => return Some(Scope::Repository),
        c if runs_git(c) => return Some(Scope::Repository),
        _ => return None,
    };
    let mut dirs = vec![crate::git::normalize(ctx.repo.git_dir())];
    for id in ids {
        let place = crate::record::place::get(&ctx.repo, id.as_str());
        match place.and_then(|p| crate::git::fs::git_dir_at(std::path::Path::new(&p))) {
            Some(dir) => dirs.push(crate::git::normalize(&dir)),
            None => return Some(Scope::Repository),
        }
    }
    Some(Scope::Worktrees(dirs))
}

fn dispatch(ctx: &Ctx, command: &Command) -> CmdResult {
    match command {
        // The first start that makes a task pins the settings: no agent worked before it.
        Command::Start(args) => start::run(ctx, args).and_then(|done| {
            crate::config::trusted::pin_if_absent(&ctx.repo)?;
            Ok(done)
        }),
        Command::List(args) => list::run(ctx, args),
        Command::Status(args) => status::run(ctx, args),
        Command::Path(args) => path::run(ctx, args),
        Command::Exec(args) => exec::run(ctx, args),
        // Handled by `app::run` before a repository is opened (the hook input says where).
        Command::Guard(args) => Ok(guard::run(args)),
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
        Command::GateSettle(args) => Ok(gate_settle::run(args)),
        Command::Merge(args) => merge::run(ctx, args),
        Command::Sync(args) => sync::run(ctx, args),
        Command::Pool(args) => pool::run(ctx, args),
        Command::Push(args) => push::run(ctx, args),
        Command::Fetch(args) => fetch::run(ctx, args),
        Command::Adopt(args) => adopt::run(ctx, args),
        // Handled by `app::run` before a repository is opened; here only for completeness.
        Command::Completions(args) => Ok(completions::run(args, &ctx.out)),
        Command::Overlaps(args) => overlaps::run(ctx, args),
        Command::Claim(args) => claim::run(ctx, args),
        Command::Release(args) => release::run(ctx, args),
        Command::Trust(args) => trust::run(ctx, args),
        Command::Audit(args) => audit::run(ctx, args),
        Command::Queue(args) => queue::run(ctx, args),
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

/// The warning line of one [`BaseMoved`].
pub fn base_moved_text(m: &crate::audit::BaseMoved) -> String {
    let to: Vec<&str> = m
        .commits
        .iter()
        .map(|c| {
            c.as_deref()
                .map_or("(deleted)", |c| crate::audit::short(Some(c)))
        })
        .collect();
    format!(
        "base_moved_unattributed: '{}' moved to {} outside git-task (not through a merge, nor seen by the hooks)",
        crate::output::escape(&m.branch),
        to.join(", ")
    )
}

/// Prints the warnings of [`crate::audit::base_moved`] on stderr.
pub fn warn_base_moved(out: &Out, moved: &[crate::audit::BaseMoved]) {
    for m in moved {
        out.warn(base_moved_text(m));
    }
    hint_base_moved(out, moved);
}

/// Prints where to see the moves of [`crate::audit::base_moved`] on stderr.
pub fn hint_base_moved(out: &Out, moved: &[crate::audit::BaseMoved]) {
    for m in moved {
        out.hint(format_args!(
            "see every move: git task audit {}",
            crate::contract::judge::shell_quote(&m.branch)
        ));
    }
}

/// `-M[=N]`, as `diff` and `changes` take it.
#[derive(clap::Args, Debug)]
pub struct Renames {
    /// Detect renames as `git diff -M` does; N is the minimum similarity (default 50%)
    #[arg(
        short = 'M',
        long = "find-renames",
        value_name = "N",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "50%",
        value_parser = crate::git::diff::similarity::parse_score
    )]
    pub find_renames: Option<u64>,
}
