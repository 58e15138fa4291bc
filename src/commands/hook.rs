//! `git task hook <name> [args]` (hidden): the entry point of the installed hook scripts.

use crate::commands::Ctx;
use crate::commands::{CmdResult, Done};
use crate::hooks::{post_checkout, pre_commit, reference_transaction};
use owo_colors::OwoColorize;

/// Run a git hook's handler (called by the installed hook scripts)
#[derive(clap::Args, Debug)]
pub struct HookArgs {
    /// Hook name: pre-commit, post-checkout or reference-transaction
    pub name: String,
    /// The arguments git passed to the hook
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

pub fn run(ctx: &Ctx, args: &HookArgs) -> CmdResult {
    match args.name.as_str() {
        "pre-commit" => pre_commit(ctx),
        "post-checkout" => {
            post_checkout(ctx, args);
            Ok(Done::Ok)
        }
        "reference-transaction" => ref_transaction(ctx, args),
        other => Err(crate::Error::input(format!("'{other}' is not a hook git-task handles"))
            .hint("the hooks are pre-commit, post-checkout and reference-transaction; reinstall them with 'git task hooks install'")),
    }
}

/// With git-task's hooks defined in config (git >= 2.54) this commit was checked, but gitui and
/// JGit, which read only a hooks directory, may not be here (a hook manager took the copy away
/// since the install): a task's commit says so too, not only git-task's commands (SPEC §8). A
/// few file reads, on a task's commit only.
fn warn_clients_unchecked(ctx: &Ctx) {
    let repo = &ctx.repo;
    if !crate::hooks::configured(repo) {
        return;
    }
    let linked = repo.git_dir() != repo.common_dir();
    let state = crate::hooks::enforcement_known(repo, linked.then(|| repo.git_dir()), true);
    if matches!(state, crate::hooks::Enforcement::ClientsUnchecked { .. }) {
        crate::output::enforcement::warn_unchecked(
            &ctx.out,
            &[("this worktree".to_owned(), state)],
        );
    }
}

/// githooks(5) pre-commit: a non-zero exit aborts the commit. The report goes to stderr.
fn pre_commit(ctx: &Ctx) -> CmdResult {
    match pre_commit::run(&ctx.repo, &ctx.settings)? {
        pre_commit::Outcome::NoTask => Ok(Done::Ok),
        pre_commit::Outcome::Clean => {
            warn_clients_unchecked(ctx);
            Ok(Done::Ok)
        }
        pre_commit::Outcome::Finished { task, status } => {
            ctx.out.warn(format_args!(
                "task '{task}' is {status}; this commit is not checked against its contract"
            ));
            Ok(Done::Ok)
        }
        pre_commit::Outcome::Unguarded { task, status } => {
            ctx.out.warn(format_args!(
                "patch-mode task '{task}' is {status}: it no longer guards this worktree, and this commit is not checked against its contract"
            ));
            ctx.out.hint(format_args!(
                "its mark is still here; clear it with: git task drop {task}"
            ));
            Ok(Done::Ok)
        }
        pre_commit::Outcome::Violation {
            verdict,
            event_error,
            reverted,
            patch,
        } => {
            ctx.out.raw_err(&crate::output::violation::render(
                &verdict,
                &ctx.out.err_palette,
            ));
            if patch {
                ctx.out.hint(format_args!(
                    "{}",
                    crate::hooks::patch::lift_hint(&verdict.task)
                ));
            }
            if let Some(r) = reverted {
                ctx.out.warn(format_args!(
                    "task.onViolation=revert: the refused changes were saved as {} and these paths were put back to HEAD: {}",
                    r.attempt,
                    r.paths.join(", ")
                ));
                let quote = crate::contract::judge::shell_quote;
                let git = match ctx.repo.workdir() {
                    Some(root) => format!("git -C {}", quote(&root.display().to_string())),
                    None => "git".to_owned(),
                };
                let paths: Vec<String> = r.paths.iter().map(|p| quote(p)).collect();
                ctx.out.hint(format_args!(
                    "get them back with: {git} checkout {} -- {}",
                    r.attempt,
                    paths.join(" ")
                ));
            }
            if let Some(err) = event_error {
                ctx.out.warn(format_args!(
                    "the violation could not be recorded in the task's log: {err}"
                ));
            }
            Ok(Done::Negative)
        }
    }
}

/// githooks(5) reference-transaction: a non-zero exit in the `prepared` state aborts the
/// transaction (no ref moves); in the other states git ignores the exit status.
fn ref_transaction(ctx: &Ctx, args: &HookArgs) -> CmdResult {
    let mut input = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin().lock(), &mut input)
        .map_err(|e| crate::Error::repo("could not read the ref updates git gave the hook", e))?;
    let updates = reference_transaction::parse(&input);
    match args.args.first().map(String::as_str) {
        Some("prepared") => {
            match reference_transaction::prepared(&ctx.repo, &ctx.settings, &updates)? {
                None => Ok(Done::Ok),
                Some(refused) => Err(foreign_refs(&refused)),
            }
        }
        Some("committed") => {
            reference_transaction::committed(&ctx.repo, &ctx.settings, &updates);
            Ok(Done::Ok)
        }
        _ => Ok(Done::Ok),
    }
}

/// The refusal of a transaction moving refs that are not the task's own.
fn foreign_refs(refused: &reference_transaction::Refused) -> crate::Error {
    let owner = refused.here.task.as_ref();
    let task = owner
        .and_then(|o| o.id.as_deref())
        .map(|id| format!("task '{id}'"))
        .unwrap_or_else(|| "a task".to_owned());
    let own = owner
        .and_then(|o| o.branch.as_deref())
        .map(|b| crate::git::refs::short_name(b).to_owned());
    let refs: Vec<String> = refused
        .refs
        .iter()
        .map(|r| format!("'{}'", crate::output::escape(r)))
        .collect();
    let mut err = crate::Error::negative(format!(
        "refusing to update {} from the worktree of {task}: the task may move only its own branch{}",
        refs.join(", "),
        own.as_deref()
            .map(|b| format!(" ('{}')", crate::output::escape(b)))
            .unwrap_or_default()
    ))
    .with_code("foreign_ref_update")
    .hint("git-task's reference-transaction hook refused it; nothing moved");
    if let Some(id) = owner.and_then(|o| o.id.as_deref()) {
        err = match owner.is_some_and(|o| o.patch) {
            true => err.hint(crate::hooks::patch::lift_hint(id)),
            false => err.hint(format!(
                "the task's work reaches other branches through the gate: git task merge {id} (run by the user)"
            )),
        };
    }
    err
}

/// githooks(5) post-checkout: its exit status becomes checkout's, so it never fails.
fn post_checkout(ctx: &Ctx, args: &HookArgs) {
    let branch_checkout = args.args.get(2).map(String::as_str) == Some("1");
    match post_checkout::run(&ctx.repo, &ctx.settings, branch_checkout) {
        Ok(post_checkout::Outcome::Nothing) => {}
        Ok(post_checkout::Outcome::Entered(record)) => {
            let p = &ctx.out.err_palette;
            let c = &record.contract;
            let e = |s: &str| crate::output::escape(s).into_owned();
            let status = match record.state.status {
                crate::task::Status::Active | crate::task::Status::Provisioning => String::new(),
                other => format!(" ({other})"),
            };
            // Named: `start` triggers this hook while the user reads it in their own worktree.
            let here = ctx.repo.workdir().map(|w| e(&w.display().to_string()));
            let mut lines = vec![format!(
                "task '{}' is active in the worktree '{}'{status}",
                record.state.id.style(p.id),
                here.unwrap_or_default()
            )];
            lines.push(format!(
                "  allowed    {}",
                if c.allowed.is_empty() {
                    "(any path not forbidden)".to_owned()
                } else {
                    e(&c.allowed.join(" "))
                }
            ));
            if !c.forbidden.is_empty() {
                lines.push(format!("  forbidden  {}", e(&c.forbidden.join(" "))));
            }
            if c.allow_new_files == Some(false) {
                lines.push("  no new files".into());
            }
            if c.allow_deletions == Some(false) {
                lines.push("  no deletions".into());
            }
            if let Some(max) = c.max_changed_files {
                lines.push(format!("  at most {max} changed files"));
            }
            for cmd in c.check_commands() {
                lines.push(format!("  check      {}", e(cmd)));
            }
            for line in lines {
                ctx.out.note(line);
            }
            // Commits here are judged only if git runs git-task's pre-commit hook: say so
            // when a hook manager (or a core.hooksPath set since) turned that off.
            let state = crate::hooks::enforcement(&ctx.repo, Some(ctx.repo.git_dir()));
            crate::output::enforcement::warn_unchecked(
                &ctx.out,
                &[("this task's worktree".to_owned(), state)],
            );
        }
        Ok(post_checkout::Outcome::Finished { task, status }) => {
            ctx.out.warn(format_args!("task '{task}' is {status}; commits on this branch are not checked against its contract"));
            ctx.out.hint(format_args!(
                "start a new task for more work: git task start <id>"
            ));
        }
        Ok(post_checkout::Outcome::Left { task }) => {
            ctx.out.note(format_args!(
                "task '{task}' is no longer active in this worktree"
            ));
        }
        Err(err) => {
            ctx.out.warn(format_args!(
                "git-task could not update the active task of this worktree: {err}"
            ));
        }
    }
}
