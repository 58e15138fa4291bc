//! `git task log`: print a task's event log.

use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::output::{Out, Report};
use crate::record::Entry;
use crate::task::TaskId;
use owo_colors::OwoColorize;

/// Show the event log of a task
#[derive(clap::Args, Debug)]
pub struct LogArgs {
    /// Task id (default: the active task of this worktree)
    #[arg(value_parser = TaskId::parse)]
    pub id: Option<TaskId>,
    /// Keep printing events as they are appended, until interrupted (one JSON document a line with --json)
    #[arg(long, short = 'f')]
    pub follow: bool,
    /// With --follow: the events of every task, those started later too
    #[arg(long, requires = "follow", conflicts_with = "id")]
    pub all: bool,
}

/// How often a follower looks at the refs when nothing happens.
const FOLLOW_INTERVAL: std::time::Duration = std::time::Duration::from_millis(200);

#[derive(serde::Serialize, schemars::JsonSchema)]
struct LogReport {
    #[schemars(extend("const" = "log"))]
    kind: &'static str,
    task: String,
    events: Vec<Entry>,
}

impl Report for LogReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        for e in &self.events {
            human_line(out, None, e)?;
        }
        Ok(())
    }
}

/// One event of `log --follow`, with its task (one JSON document a line).
#[derive(serde::Serialize, schemars::JsonSchema)]
struct FollowedEvent {
    #[schemars(extend("const" = "event"))]
    kind: &'static str,
    /// The task whose record holds it.
    task: String,
    #[serde(flatten)]
    entry: Entry,
    /// Whether the human form names the task (`--all`).
    #[serde(skip)]
    named: bool,
}

impl Report for FollowedEvent {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        human_line(out, self.named.then_some(self.task.as_str()), &self.entry)
    }
}

/// One log line: commit, time, event, its fields; with the task first when `task` is given.
fn human_line(out: &Out, task: Option<&str>, e: &Entry) -> std::io::Result<()> {
    let time = e.time.map(crate::output::format_time).unwrap_or_default();
    let mut extra: Vec<String> = Vec::new();
    for (k, v) in e.details() {
        if matches!(k.as_str(), "event" | "task" | "time" | "nonce") || v.is_null() {
            continue;
        }
        let v = match v {
            serde_json::Value::String(s) => s,
            other => other.to_string(),
        };
        extra.push(format!("{k}={}", crate::output::escape(&v)));
    }
    let task = task
        .map(|t| format!("{} ", t.style(out.palette.id)))
        .unwrap_or_default();
    out.line(format_args!(
        "{task}{} {} {:<12} {}",
        (&e.commit[..12.min(e.commit.len())]).style(out.palette.dim),
        time,
        e.event.name().style(out.palette.id),
        extra.join(" ")
    ))
}

pub fn run(ctx: &Ctx, args: &LogArgs) -> CmdResult {
    if args.follow {
        return follow(ctx, args);
    }
    let record = crate::resolve::resolve(&ctx.repo, &ctx.settings, args.id.as_ref())?;
    let events = crate::record::events(&ctx.repo, &record)?;
    emit(
        ctx,
        &LogReport {
            kind: "log",
            task: record.state.id.into(),
            events,
        },
        Done::Ok,
    )
}

/// `--follow`: prints the events there are, then each one as it is appended, until Ctrl-C or
/// until stdout's reader goes away (both a success: exit 0, nothing on stderr).
fn follow(ctx: &Ctx, args: &LogArgs) -> CmdResult {
    use std::io::ErrorKind::BrokenPipe;
    let only = if args.all {
        None
    } else {
        let record = crate::resolve::resolve(&ctx.repo, &ctx.settings, args.id.as_ref())?;
        Some(record.state.task_id())
    };
    let _interrupt = crate::git::interrupt::install();
    let all = only.is_none();
    let mut follower = crate::record::follow::Follower::new(only);
    // With --all, also the starts whose setup failed (rolled back: no record holds them).
    let mut failed_seen = std::collections::HashSet::new();
    while !crate::git::interrupt::is_triggered() {
        let mut new = follower.poll(&ctx.repo)?;
        if all {
            new.extend(crate::lifecycle::start::failed::since(
                &ctx.repo,
                &mut failed_seen,
            ));
            new.sort_by_key(|(_, e)| e.time.unwrap_or(0));
        }
        for (task, entry) in new {
            let line = FollowedEvent {
                kind: "event",
                task: task.as_str().to_owned(),
                entry,
                named: args.all,
            };
            match ctx.out.report(&line) {
                Ok(()) => {}
                Err(e) if e.kind() == BrokenPipe => return Ok(Done::Ok),
                Err(e) => return Err(crate::Error::repo("could not write the output", e)),
            }
        }
        if ctx.out.flush().is_err() || ctx.out.wait_stdout_closed(FOLLOW_INTERVAL) {
            break;
        }
    }
    Ok(Done::Ok)
}

/// The JSON Schemas of what `--follow --json` prints: one document a line.
pub fn follow_json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    vec![crate::output::schema_of::<FollowedEvent>(generator)]
}

/// The JSON Schemas of what `--json` prints, one per shape (published in `schema/`).
pub fn json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    use crate::output::schema_of;
    vec![schema_of::<LogReport>(generator)]
}

#[cfg(test)]
mod tests {
    #[test]
    fn formats_utc_times() {
        assert_eq!(crate::output::format_time(0), "1970-01-01 00:00:00");
        assert_eq!(
            crate::output::format_time(1_798_761_600),
            "2027-01-01 00:00:00"
        );
    }
}
