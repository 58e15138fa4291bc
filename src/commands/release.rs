//! `git task release`: give up a task's claims.

use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::output::{Out, Report};
use crate::task::TaskId;

/// Release paths a task claims (all of them when no glob is named)
#[derive(clap::Args, Debug)]
pub struct ReleaseArgs {
    /// Task id
    #[arg(value_parser = TaskId::parse)]
    pub id: TaskId,
    /// Claimed globs to release, as they were claimed (default: all)
    #[arg(value_name = "GLOB")]
    pub globs: Vec<String>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Released {
    #[schemars(extend("const" = "release"))]
    kind: &'static str,
    task: String,
    /// What the task still claims.
    claims: Vec<String>,
}

impl Report for Released {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        if self.claims.is_empty() {
            out.note(format_args!("Task '{}' claims nothing", self.task));
        } else {
            out.note(format_args!(
                "Task '{}' still claims: {}",
                self.task,
                self.claims.join(", ")
            ));
        }
        Ok(())
    }
}

pub fn run(ctx: &Ctx, args: &ReleaseArgs) -> CmdResult {
    let record = crate::resolve::existing(&ctx.repo, &args.id)?;
    let claims = crate::claims::release(&ctx.repo, &record, &args.globs)?;
    emit(
        ctx,
        &Released {
            kind: "release",
            task: record.state.id.into(),
            claims,
        },
        Done::Ok,
    )
}

/// The JSON Schemas of what `--json` prints, one per shape (published in `schema/`).
pub fn json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    use crate::output::schema_of;
    vec![schema_of::<Released>(generator)]
}
