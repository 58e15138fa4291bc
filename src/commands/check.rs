//! `git task check [<id>] [--staged] [--run]`: judge a task's changes, and optionally run its checks.

use crate::checks::Outcome;
use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::contract::Verdict;
use crate::output::{Out, Report};
use crate::task::TaskId;

/// Judge a task's changes against its contract
#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// Task id (default: the active task of this worktree)
    #[arg(value_parser = TaskId::parse)]
    pub id: Option<TaskId>,
    /// Judge only what is staged, as the pre-commit hook does
    #[arg(long)]
    pub staged: bool,
    /// Also run the checks of the frozen contract
    #[arg(long)]
    pub run: bool,
}

/// The answer of `check`: the verdict, plus the checks when `--run` was given.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct CheckReport {
    #[serde(flatten)]
    verdict: Verdict,
    /// Whether only staged changes were judged.
    staged: bool,
    /// The checks that ran (`--run` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    checks: Option<Vec<Outcome>>,
    /// The task's base moved outside git-task since it started (`git task audit`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<crate::audit::BaseMoved>,
}

impl Report for CheckReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        use owo_colors::OwoColorize;
        let p = &out.palette;
        if self.verdict.is_clean() {
            let what = if self.staged {
                "staged change"
            } else {
                "changed file"
            };
            out.line(format_args!(
                "{} task '{}': {} {what}{} within the contract",
                "ok:".style(p.ok),
                self.verdict.task.style(p.id),
                self.verdict.checked,
                if self.verdict.checked == 1 { "" } else { "s" }
            ))?;
        } else {
            out.raw(&crate::output::violation::render(&self.verdict, p))?;
        }
        for c in self.checks.iter().flatten() {
            let secs = c.millis as f64 / 1000.0;
            if c.ok() {
                out.line(format_args!(
                    "{} check '{}' passed ({secs:.1}s)",
                    "ok:".style(p.ok),
                    c.command
                ))?;
            } else {
                let why = match (c.timed_out, c.code) {
                    (true, _) => "timed out".to_owned(),
                    (false, Some(code)) => format!("exit {code}"),
                    (false, None) => "killed by a signal".to_owned(),
                };
                out.error_line(format_args!(
                    "check '{}' failed ({why}, {secs:.1}s)",
                    c.command
                ))?;
                for line in c.output.lines() {
                    out.line(format_args!("    {}", crate::output::escape(line)))?;
                }
            }
        }
        // A failed check's way on (a violation's is part of its report above).
        if self.verdict.is_clean() {
            for hint in &self.verdict.hints {
                out.hint(hint);
            }
        }
        Ok(())
    }
}

pub fn run(ctx: &Ctx, args: &CheckArgs) -> CmdResult {
    let checked = crate::lifecycle::check::check(
        &ctx.repo,
        &ctx.settings,
        args.id.as_ref(),
        args.staged,
        args.run,
        &mut |progress| report_progress(&ctx.out, progress),
    )?;
    let passed = checked.passed();
    let mut verdict = checked.verdict;
    if verdict.is_clean() && !passed {
        // The contract holds but a check failed: the same kind a merge refuses with.
        verdict.kind = "checks_failed";
        let task = verdict.task.clone();
        verdict.hints = vec![
            format!("fix what the check says in the task's worktree (cd \"$(git task path {task})\"), then commit it: git task commit {task}"),
            format!("then run the checks again: git task check {task} --run"),
        ];
        verdict.next = vec![
            crate::error::Call::on("commit", &task),
            crate::error::Call::on("check", &task).arg("run", true),
        ];
    }
    let warnings = match crate::task::TaskId::parse(&verdict.task) {
        Ok(id) => match crate::record::load(&ctx.repo, &id) {
            Ok(Some(record)) => crate::audit::base_moved(&ctx.repo, [&record.state]),
            _ => Vec::new(),
        },
        Err(_) => Vec::new(),
    };
    let report = CheckReport {
        verdict,
        staged: args.staged,
        checks: checked.checks.map(|run| run.commands),
        warnings,
    };
    let done = emit(ctx, &report, if passed { Done::Ok } else { Done::Negative });
    super::warn_base_moved(&ctx.out, &report.warnings);
    done
}

/// Tells how the checks go: a note as each starts; on a terminal, one line per check redrawn
/// every second with the time it has run, ended when it ends.
fn report_progress(out: &Out, progress: crate::checks::Progress<'_>) {
    use crate::checks::Progress;
    let live = out.progress_enabled();
    match progress {
        Progress::Starting(command) if live => {
            out.progress(format_args!("running check '{command}'"), false)
        }
        Progress::Starting(command) => out.note(format_args!("running check '{command}'")),
        Progress::Running(command, time) if live => out.progress(
            format_args!("running check '{command}' ({}s)", time.as_secs()),
            false,
        ),
        Progress::Finished(outcome) if live => out.progress(
            format_args!(
                "running check '{}' ({:.1}s): {}",
                outcome.command,
                outcome.millis as f64 / 1000.0,
                if outcome.ok() { "ok" } else { "failed" }
            ),
            true,
        ),
        Progress::Running(..) | Progress::Finished(_) => {}
    }
}

/// The JSON Schemas of what `--json` prints, one per shape (published in `schema/`).
pub fn json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    use crate::output::schema_of;
    vec![schema_of::<CheckReport>(generator)]
}
