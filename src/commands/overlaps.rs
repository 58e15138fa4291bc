//! `git task overlaps`: which live tasks will collide, and why, before any merge.

use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::output::{Out, Report};
use crate::overlaps::{Forecast, Severity};
use crate::task::TaskId;

/// Forecast collisions between live tasks: shared contract paths, same files, trial merges
#[derive(clap::Args, Debug)]
pub struct OverlapsArgs {
    /// Task ids (default: every live task)
    #[arg(value_parser = TaskId::parse)]
    pub ids: Vec<TaskId>,
    /// Count committed work only: look at no worktree (much faster on large repositories)
    #[arg(long)]
    pub committed: bool,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct OverlapsReport {
    #[schemars(extend("const" = "overlaps"))]
    kind: &'static str,
    #[serde(flatten)]
    forecast: Forecast,
}

impl Report for OverlapsReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        use owo_colors::OwoColorize;
        let f = &self.forecast;
        let p = &out.palette;
        let groups = [
            (Severity::Conflict, "conflict (trial merge onto the base)"),
            (Severity::SameFiles, "same files"),
            (Severity::ContractOverlap, "contract overlap"),
        ];
        for (severity, title) in groups {
            let pairs: Vec<_> = f.pairs.iter().filter(|x| x.kind == severity).collect();
            if pairs.is_empty() {
                continue;
            }
            out.line(title)?;
            for x in pairs {
                let what = match severity {
                    Severity::Conflict => x.merge.paths.join(" "),
                    Severity::SameFiles => x.files.join(" "),
                    Severity::ContractOverlap => match &x.contract.example {
                        Some(path) => format!("both may change paths like {path}"),
                        None => "their contracts may allow the same paths".into(),
                    },
                };
                out.line(format_args!(
                    "  {} {} {}  {}",
                    x.tasks[0].style(p.id),
                    "×",
                    x.tasks[1].style(p.id),
                    crate::output::escape(&what)
                ))?;
            }
        }
        let behind: Vec<_> = f
            .tasks
            .iter()
            .filter(|t| t.behind > 0 || !t.conflicts_with_base.is_empty())
            .collect();
        if !behind.is_empty() {
            out.line("against the base")?;
            for t in behind {
                let base = t.base.as_deref().unwrap_or("its base");
                let mut line = format!("  {}  behind {base} by {}", t.task.style(p.id), t.behind);
                if !t.conflicts_with_base.is_empty() {
                    line.push_str(&format!(
                        ", conflicts with {base}: {}",
                        crate::output::escape(&t.conflicts_with_base.join(" "))
                    ));
                }
                out.line(line)?;
            }
        }
        if f.pairs.is_empty() && !f.has_conflict() {
            out.note(format_args!(
                "No collisions among {} live task(s) ({} pair(s) checked)",
                f.tasks.len(),
                f.pairs_checked
            ));
        }
        Ok(())
    }
}

pub fn run(ctx: &Ctx, args: &OverlapsArgs) -> CmdResult {
    let forecast = crate::overlaps::forecast(&ctx.repo, &args.ids, args.committed)?;
    let done = match forecast.has_conflict() {
        true => Done::Negative,
        false => Done::Ok,
    };
    emit(
        ctx,
        &OverlapsReport {
            kind: "overlaps",
            forecast,
        },
        done,
    )
}

/// The JSON Schemas of what `--json` prints, one per shape (published in `schema/`).
pub fn json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    use crate::output::schema_of;
    vec![schema_of::<OverlapsReport>(generator)]
}
