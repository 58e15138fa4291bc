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
#[derive(serde::Serialize)]
struct CheckReport {
    #[serde(flatten)]
    verdict: Verdict,
    /// Whether only staged changes were judged.
    staged: bool,
    /// The checks that ran (`--run` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    checks: Option<Vec<Outcome>>,
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
                out.line(format_args!(
                    "{} check '{}' failed ({why}, {secs:.1}s)",
                    "error:".style(p.error),
                    c.command
                ))?;
                for line in c.output.lines() {
                    out.line(format_args!("    {}", crate::output::escape(line)))?;
                }
            }
        }
        Ok(())
    }
}

pub fn run(ctx: &Ctx, args: &CheckArgs) -> CmdResult {
    let record = crate::task::resolve(&ctx.repo, &ctx.settings, args.id.as_ref())?;
    let verdict = if args.staged {
        let here = crate::task::resolve::active_task(&ctx.repo, &ctx.settings)?;
        if here.as_ref().map(TaskId::as_str) == Some(record.state.id.as_str()) {
            // This worktree, opened as git handed it over (GIT_INDEX_FILE included).
            let staged = crate::changes::read_staged(&ctx.repo)?;
            crate::changes::judge_staged(&ctx.repo, &record, &staged)?
        } else {
            let path = std::path::Path::new(&record.state.worktree);
            if !path.join(".git").exists() {
                return Err(crate::Error::input(format!(
                    "task '{}' has no worktree, so nothing is staged",
                    record.state.id
                ))
                .hint(format!(
                    "judge its committed work instead: git task check {}",
                    record.state.id
                )));
            }
            let wt = crate::git::worktree::open_at(path)?;
            let staged = crate::changes::read_staged(&wt)?;
            crate::changes::judge_staged(&wt, &record, &staged)?
        }
    } else {
        crate::changes::judge_task(&ctx.repo, &record)?
    };
    let checks = if args.run {
        Some(run_checks(ctx, &record)?)
    } else {
        None
    };
    let passed = verdict.is_clean() && checks.iter().flatten().all(Outcome::ok);
    let report = CheckReport {
        verdict,
        staged: args.staged,
        checks,
    };
    emit(ctx, &report, if passed { Done::Ok } else { Done::Negative })
}

/// Runs the frozen contract's checks in the task worktree and records a `checks` event.
fn run_checks(ctx: &Ctx, record: &crate::record::Record) -> crate::Result<Vec<Outcome>> {
    let dir = std::path::Path::new(&record.state.worktree);
    if !dir.is_dir() {
        return Err(crate::Error::input(format!(
            "task '{}' has no worktree to run its checks in",
            record.state.id
        )));
    }
    let env = crate::task::start::task_env(&record.state);
    let timeout = record.contract.check_timeout();
    let mut outcomes = Vec::new();
    for command in record.contract.check_commands() {
        ctx.out.note(format_args!("running check '{command}'"));
        outcomes.push(crate::checks::run_captured(command, dir, &env, timeout)?);
    }
    let results: Vec<serde_json::Value> = outcomes
        .iter()
        .map(|o| serde_json::json!({ "command": o.command, "code": o.code, "timed_out": o.timed_out, "millis": o.millis }))
        .collect();
    let passed = outcomes.iter().all(Outcome::ok);
    let details = serde_json::json!({ "source": "check", "passed": passed, "results": results });
    crate::record::note_event(
        &ctx.repo,
        &record.state.task_id(),
        crate::record::event::CHECKS,
        details,
    )?;
    Ok(outcomes)
}
