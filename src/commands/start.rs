//! `git task start`: create a task with its worktree, branch and contract.

use crate::attempt::SavedAttempt;
use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::lifecycle::start::{self, ContractSpec, StartError, StartOptions, Started};
use crate::output::{Out, Report};
use crate::record::Record;
use crate::task::{Status, TaskId};
use owo_colors::OwoColorize;
use std::path::PathBuf;

/// Start a task in its own worktree, fenced by a file contract
#[derive(clap::Args, Debug)]
pub struct StartArgs {
    /// Task id (default: a generated two-word name)
    #[arg(value_parser = TaskId::parse)]
    pub id: Option<TaskId>,
    /// Revision to start from (default: the current branch)
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// Where the work happens
    #[arg(long, value_enum, default_value_t = ModeArg::Worktree)]
    pub mode: ModeArg,
    /// Worktree location (default: task.worktreeDir/<id>, else ../<repo>.tasks/<id>)
    #[arg(long, value_name = "DIR")]
    pub path: Option<PathBuf>,
    /// Glob of paths the task may touch (can be repeated)
    #[arg(long, value_name = "GLOB", conflicts_with = "contract")]
    pub allow: Vec<String>,
    /// Glob of paths the task may never touch (can be repeated)
    #[arg(long, value_name = "GLOB", conflicts_with = "contract")]
    pub forbid: Vec<String>,
    /// Forbid adding files
    #[arg(long, conflicts_with = "contract")]
    pub no_new_files: bool,
    /// Forbid deleting files
    #[arg(long, conflicts_with = "contract")]
    pub no_deletions: bool,
    /// Check command run before merge (can be repeated)
    #[arg(long, value_name = "CMD", conflicts_with = "contract")]
    pub check: Vec<String>,
    /// Copy the contract from FILE
    #[arg(long, value_name = "FILE")]
    pub contract: Option<PathBuf>,
    /// Command run in the new worktree (default: task.setup)
    #[arg(long, value_name = "CMD")]
    pub setup: Option<String>,
    /// Seconds the setup may run before it is killed and the start undone (default: task.setupTimeout, else 600)
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub setup_timeout: Option<u64>,
    /// Copy ignored files (node_modules/, target/...) into the worktree, by reflink where possible
    #[arg(long)]
    pub copy_ignored: bool,
    /// Check out only the allowed paths (plus task.sparseAlways)
    #[arg(long)]
    pub sparse: bool,
    /// Put an existing task back to its base (or --base), saving its work as an attempt first
    #[arg(long)]
    pub reset: bool,
    /// With --reset: take the task's own commits off its branch too (saved as an attempt first), so
    /// a looser contract may replace the frozen one
    #[arg(long, requires = "reset")]
    pub discard_commits: bool,
    /// Claim paths for the new task: no other task may change them while it is live (can be repeated)
    #[arg(long, value_name = "GLOB")]
    pub claim: Vec<String>,
    /// Start even if the contract allows paths another task claims (they stay off-limits)
    #[arg(long)]
    pub share: bool,
}

/// Where a task's work happens.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModeArg {
    /// A linked worktree on branch task/<id>
    Worktree,
    /// The current worktree, guarded by a snapshot
    Patch,
}

/// The answer of `start`.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct StartReport {
    #[schemars(extend("const" = "start"))]
    kind: &'static str,
    task: String,
    created: bool,
    mode: crate::task::Mode,
    status: crate::task::Status,
    branch: String,
    base: String,
    base_branch: Option<String>,
    worktree: String,
    record: String,
    reset: bool,
    attempts: Vec<SavedAttempt>,
    /// Other live tasks whose contracts allow some of the same paths (new tasks only).
    overlaps: Vec<crate::overlaps::Neighbour>,
    /// The contract's allowed globs that match no file on the base (new tasks only): a typo,
    /// or paths the task is meant to create.
    unmatched_allowed: Vec<String>,
    /// Where the user should `cd`, when the reset replaced their directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    cd: Option<String>,
}

impl StartReport {
    fn new(record: &Record, created: bool) -> Self {
        let s = &record.state;
        StartReport {
            kind: "start",
            task: s.id.to_string(),
            created,
            mode: s.mode,
            status: s.status,
            branch: s.branch_short().to_owned(),
            base: s.base_commit.clone(),
            base_branch: s.base_branch_short().map(str::to_owned),
            worktree: s.worktree.clone(),
            record: crate::task::layout::record_ref(&s.task_id()),
            reset: false,
            attempts: Vec::new(),
            overlaps: Vec::new(),
            unmatched_allowed: Vec::new(),
            cd: None,
        }
    }
}

impl Report for StartReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        // Notes go to stderr, so they take its colours.
        let p = &out.err_palette;
        for a in &self.attempts {
            out.note(format_args!("Saved {} as {}", a.what, a.name));
        }
        if self.reset {
            out.note(format_args!(
                "Reset task '{}' to {}",
                self.task.style(p.id),
                &self.base[..12.min(self.base.len())]
            ));
            if let Some(dir) = &self.cd {
                out.hint(format_args!(
                    "your directory was replaced by the reset: cd {dir}"
                ));
            }
        } else if self.created && self.mode == crate::task::Mode::Patch {
            out.note(format_args!(
                "Started patch-mode task '{}' in this worktree on {}; its snapshot is refs/tasks/{}/snapshot",
                self.task.style(p.id),
                self.base_branch.as_deref().unwrap_or(&self.base[..12.min(self.base.len())]),
                self.task
            ));
        } else if self.created {
            out.note(format_args!(
                "Started task '{}' on branch '{}' from {}",
                self.task.style(p.id),
                self.branch,
                self.base_branch
                    .as_deref()
                    .unwrap_or(&self.base[..12.min(self.base.len())])
            ));
        } else if matches!(self.status, Status::Removed | Status::Merged) {
            out.note(format_args!(
                "Task '{}' is {}; nothing changed",
                self.task.style(p.id),
                self.status
            ));
            out.hint(format_args!(
                "its record stays for history ('git task log'); to start it again, remove it first ('git task remove {}') or use another id",
                self.task
            ));
        } else {
            out.note(format_args!(
                "Task '{}' already exists ({}); nothing changed",
                self.task.style(p.id),
                self.status
            ));
            if !std::path::Path::new(&self.worktree).exists() {
                out.warn(format_args!("its worktree '{}' is missing", self.worktree));
                out.hint(format_args!(
                    "make it again from the base (work is saved first): git task start --reset {}",
                    self.task
                ));
            } else {
                out.hint(format_args!("to start it over from its base, saving its work first: git task start --reset {}", self.task));
            }
        }
        for glob in &self.unmatched_allowed {
            out.warn(format_args!(
                "allowed glob '{}' matches no file on the base (a typo? new files under it are still allowed)",
                crate::output::escape(glob)
            ));
        }
        // One line, however many tasks: the details are `overlaps`' to show.
        match self.overlaps.as_slice() {
            [] => {}
            [n] => out.warn(format_args!(
                "task '{}' {} change the same paths{}; details: git task overlaps",
                n.task,
                if n.overlap == "yes" { "may" } else { "might" },
                n.example
                    .as_deref()
                    .map(|e| format!(" (both contracts allow {e})"))
                    .unwrap_or_default()
            )),
            many => out.warn(format_args!(
                "{} tasks may change the same paths: {}; details: git task overlaps",
                many.len(),
                many.iter()
                    .map(|n| format!("'{}'", n.task))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
        out.line(&self.worktree)
    }
}

/// A failed setup: its output, for people or scripts.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct SetupFailedReport {
    #[schemars(extend("const" = "setup_failed"))]
    kind: &'static str,
    task: String,
    command: String,
    code: Option<i32>,
    /// Whether it ran past its timeout and was killed, with its whole process group.
    timed_out: bool,
    /// The seconds it was given.
    timeout: u64,
    output: String,
    /// What to do next (`hint: …` lines).
    hints: Vec<String>,
    /// The next steps as `git task mcp` tool calls: none, no tool runs a setup command.
    next: Vec<crate::error::Call>,
}

impl Report for SetupFailedReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        out.raw_err(&self.output);
        if !self.output.is_empty() && !self.output.ends_with('\n') {
            out.raw_err("\n");
        }
        if self.timed_out {
            out.error(&setup_timed_out(
                &self.command,
                &self.task,
                self.timeout,
                "was not created",
            ));
            return Ok(());
        }
        let code = self
            .code
            .map(|c| c.to_string())
            .unwrap_or_else(|| "a signal".into());
        let mut err = crate::Error::negative(format!(
            "setup command '{}' failed (exit {code}); task '{}' was not created",
            self.command, self.task
        ));
        for hint in &self.hints {
            err = err.hint(hint.clone());
        }
        out.error(&err);
        Ok(())
    }
}

/// The error of a setup that ran past its timeout: what was killed, and what to raise.
fn setup_timed_out(command: &str, task: &str, timeout: u64, what: &str) -> crate::Error {
    crate::Error::negative(format!(
        "setup command '{command}' ran past its timeout of {timeout}s and was killed (its whole process group); task '{task}' {what}"
    ))
    .hint(format!(
        "give it longer: git task start {task} --setup-timeout {}, or set task.setupTimeout (seconds; then 'git task trust')",
        timeout.saturating_mul(2)
    ))
}

pub fn run(ctx: &Ctx, args: &StartArgs) -> CmdResult {
    let opts = StartOptions {
        id: args.id.clone(),
        base: args.base.clone(),
        path: args.path.clone(),
        contract: ContractSpec {
            file: args.contract.clone(),
            allow: args.allow.clone(),
            forbid: args.forbid.clone(),
            no_new_files: args.no_new_files,
            no_deletions: args.no_deletions,
            checks: args.check.clone(),
            claim: args.claim.clone(),
            share: args.share,
        },
        setup: args.setup.clone(),
        setup_timeout: args.setup_timeout,
        reset: args.reset,
        discard_commits: args.discard_commits,
        copy_ignored: args.copy_ignored,
        sparse: args.sparse,
        mode: match args.mode {
            ModeArg::Worktree => crate::task::Mode::Worktree,
            ModeArg::Patch => crate::task::Mode::Patch,
        },
    };
    let show = ctx.out.progress_enabled();
    let mut progress = |phase: start::Phase, done: u64, total: u64| {
        let what = match phase {
            // Called only for a checkout long enough to report on, a few times a second.
            start::Phase::Checkout => "Checking out files",
            start::Phase::CopyIgnored if done == total || done.is_multiple_of(256) => {
                "Copying ignored files"
            }
            start::Phase::CopyIgnored => return,
        };
        if show {
            ctx.out
                .progress(format_args!("{what}: {done}/{total}"), done == total);
        }
    };
    match start::start(&ctx.repo, &ctx.settings, &opts, &mut progress) {
        Ok(Started::Created(record)) => {
            crate::audit::watch_base(&ctx.repo, &record.state);
            // A patch-mode task guards the main worktree as a task worktree is guarded.
            if record.state.mode == crate::task::Mode::Patch {
                crate::hooks::patch::guard_main(&ctx.repo)?;
            }
            let mut report = StartReport::new(&record, true);
            report.overlaps = crate::overlaps::contract_neighbours(&ctx.repo, &record)?;
            if let Ok(base) = ctx.repo.rev_parse_commit(&record.state.base_commit) {
                let tree = crate::git::objects::commit_tree(&ctx.repo, base)?;
                report.unmatched_allowed = crate::contract::allowed_matching_nothing(
                    &ctx.repo,
                    &record.contract.allowed,
                    tree,
                )?;
            }
            let done = emit(ctx, &report, Done::Ok);
            let s = &record.state;
            crate::output::enforcement::warn_unchecked(
                &ctx.out,
                &crate::output::enforcement::unchecked_task(
                    &ctx.repo,
                    s.id.as_str(),
                    s.mode,
                    s.worktree.as_str(),
                ),
            );
            done
        }
        Ok(Started::Existing(record)) => emit(ctx, &StartReport::new(&record, false), Done::Ok),
        Ok(Started::Reset(done)) => {
            let done = *done;
            let mut report = StartReport::new(&done.record, false);
            report.reset = true;
            report.attempts = done.attempt.into_iter().collect();
            report.cd = done.cd.map(|p| p.display().to_string());
            match done.setup.filter(|o| !o.ok()) {
                None => emit(ctx, &report, Done::Ok),
                Some(failed) => {
                    // The reset stands; the setup that followed it did not work.
                    ctx.out.raw_err(&failed.output);
                    emit(ctx, &report, Done::Ok)?;
                    if failed.timed_out {
                        let timeout = args.setup_timeout.unwrap_or(ctx.settings.setup_timeout);
                        return Err(setup_timed_out(
                            &failed.command,
                            &report.task,
                            timeout,
                            "was reset, but its setup did not finish",
                        ));
                    }
                    Err(crate::Error::negative(format!(
                        "task '{}' was reset, but its setup command '{}' failed",
                        report.task, failed.command
                    ))
                    .hint(format!(
                        "run it again by hand: git task exec {} -- sh -c {}",
                        report.task,
                        crate::contract::judge::shell_quote(&failed.command)
                    )))
                }
            }
        }
        Err(StartError::Setup(failed)) => emit(
            ctx,
            &SetupFailedReport {
                kind: "setup_failed",
                task: failed.id.to_string(),
                hints: if failed.outcome.timed_out {
                    setup_timed_out(
                        &failed.outcome.command,
                        failed.id.as_str(),
                        failed.timeout,
                        "was not created",
                    )
                    .hints()
                    .to_vec()
                } else {
                    vec!["fix the setup command and start the task again".to_owned()]
                },
                next: Vec::new(),
                command: failed.outcome.command,
                code: failed.outcome.code,
                timed_out: failed.outcome.timed_out,
                timeout: failed.timeout,
                output: failed.outcome.output,
            },
            Done::Negative,
        ),
        Err(StartError::Other(e)) => Err(e),
    }
}

/// The JSON Schemas of what `--json` prints, one per shape (published in `schema/`).
pub fn json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    use crate::output::schema_of;
    vec![
        schema_of::<StartReport>(generator),
        schema_of::<SetupFailedReport>(generator),
    ]
}
