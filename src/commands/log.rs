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
}

#[derive(serde::Serialize)]
struct LogReport {
    kind: &'static str,
    task: String,
    events: Vec<Entry>,
}

impl Report for LogReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        for e in &self.events {
            let time = e.time.map(format_time).unwrap_or_default();
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
            out.line(format_args!(
                "{} {} {:<12} {}",
                (&e.commit[..12]).style(out.palette.dim),
                time,
                e.event.name().style(out.palette.id),
                extra.join(" ")
            ))?;
        }
        Ok(())
    }
}

/// Formats seconds since the epoch as `YYYY-MM-DD HH:MM:SS` UTC.
fn format_time(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

pub fn run(ctx: &Ctx, args: &LogArgs) -> CmdResult {
    let record = crate::task::resolve(&ctx.repo, &ctx.settings, args.id.as_ref())?;
    let events = crate::record::events(&ctx.repo, &record)?;
    emit(
        ctx,
        &LogReport {
            kind: "log",
            task: record.state.id,
            events,
        },
        Done::Ok,
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn formats_utc_times() {
        assert_eq!(super::format_time(0), "1970-01-01 00:00:00");
        assert_eq!(super::format_time(1_798_761_600), "2027-01-01 00:00:00");
    }
}
