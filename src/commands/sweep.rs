//! `git task sweep`: repair what interrupted commands left behind.

use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::lifecycle::sweep::{self, Repair};
use crate::output::{Out, Report};

/// Repair half-made tasks, vanished worktrees, orphan directories and stale locks
#[derive(clap::Args, Debug)]
pub struct SweepArgs {
    /// Only report what would be repaired
    #[arg(short = 'n', long)]
    pub dry_run: bool,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct SweepReport {
    #[schemars(extend("const" = "sweep"))]
    kind: &'static str,
    dry_run: bool,
    repairs: Vec<Repair>,
    /// Tasks whose record is not the one git-task last wrote: left alone (see `git task list`).
    tampered: Vec<String>,
}

impl Report for SweepReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        for id in &self.tampered {
            out.warn(format_args!(
                "record_tampered: left task '{id}' alone: its record is not the one git-task last wrote (see 'git task status {id}')"
            ));
        }
        if self.repairs.is_empty() {
            out.note("Nothing to repair");
            return Ok(());
        }
        for r in &self.repairs {
            let prefix = if self.dry_run {
                "would repair"
            } else {
                "repaired"
            };
            if let Some(error) = &r.error {
                out.warn(format_args!(
                    "could not repair {}: {}: {error}",
                    r.problem, r.action
                ));
                continue;
            }
            out.line(format_args!("{prefix} {}: {}", r.problem, r.action))?;
            for a in &r.attempts {
                out.line(format_args!("  saved {} as {}", a.what, a.name))?;
            }
        }
        Ok(())
    }
}

/// Exit 0 when everything found was repaired, 1 when something could not be (each is reported).
pub fn run(ctx: &Ctx, args: &SweepArgs) -> CmdResult {
    let sweep::Swept {
        mut repairs,
        tampered,
    } = sweep::sweep(&ctx.repo, &ctx.settings, args.dry_run)?;
    // Tasks another machine merged (the records fetched last): their work here saved, their
    // worktree and branch removed.
    repairs.extend(crate::remote::ended::sweep(&ctx.repo, args.dry_run)?);
    let tampered: Vec<String> = tampered.iter().map(|t| t.to_string()).collect();
    let failed = repairs.iter().any(|r| r.error.is_some());
    emit(
        ctx,
        &SweepReport {
            kind: "sweep",
            dry_run: args.dry_run,
            repairs,
            tampered,
        },
        if failed { Done::Negative } else { Done::Ok },
    )
}

/// The JSON Schemas of what `--json` prints, one per shape (published in `schema/`).
pub fn json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    use crate::output::schema_of;
    vec![schema_of::<SweepReport>(generator)]
}
