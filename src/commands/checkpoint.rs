//! `git task checkpoint`: save the task's current state as checkpoint n.

use crate::checkpoint::{self, Outcome, Saved};
use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::output::violation::ViolationReport;
use crate::output::{Out, Report};
use crate::task::TaskId;

/// Save the task's current state, untracked files included, as a checkpoint
#[derive(clap::Args, Debug)]
pub struct CheckpointArgs {
    /// Task id (default: the active task of this worktree)
    #[arg(value_parser = TaskId::parse)]
    pub id: Option<TaskId>,
    /// Message stored with the checkpoint
    #[arg(short, long, value_name = "MSG")]
    pub message: Option<String>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct CheckpointReport {
    #[schemars(extend("const" = "checkpoint"))]
    kind: &'static str,
    task: String,
    #[serde(flatten)]
    saved: Saved,
}

impl Report for CheckpointReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        let n = self.saved.files.len();
        out.note(format_args!(
            "Saved checkpoint {} of '{}' ({n} file{} changed)",
            self.saved.number,
            self.task,
            if n == 1 { "" } else { "s" }
        ));
        out.line(&self.saved.name)
    }
}

pub fn run(ctx: &Ctx, args: &CheckpointArgs) -> CmdResult {
    let record = crate::resolve::resolve(&ctx.repo, &ctx.settings, args.id.as_ref())?;
    match checkpoint::save(&ctx.repo, &record, args.message.as_deref())? {
        Outcome::Saved(saved) => emit(
            ctx,
            &CheckpointReport {
                kind: "checkpoint",
                task: record.state.id.into(),
                saved,
            },
            Done::Ok,
        ),
        Outcome::Violation(verdict) => emit(ctx, &ViolationReport(&verdict), Done::Negative),
    }
}

/// The JSON Schemas of what `--json` prints, one per shape (published in `schema/`).
pub fn json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    use crate::output::schema_of;
    vec![
        schema_of::<CheckpointReport>(generator),
        schema_of::<ViolationReport<'static>>(generator),
    ]
}
