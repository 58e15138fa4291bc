//! `git task scratch`: print (creating it) a per-task scratch directory.

use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::output::{Out, Report};
use crate::task::TaskId;

/// Print (creating it) a scratch directory for the task's temporary files
#[derive(clap::Args, Debug)]
pub struct ScratchArgs {
    /// Task id (default: the active task of this worktree)
    #[arg(value_parser = TaskId::parse)]
    pub id: Option<TaskId>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct ScratchReport {
    #[schemars(extend("const" = "scratch"))]
    kind: &'static str,
    task: String,
    path: String,
}

impl Report for ScratchReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        out.line(&self.path)
    }
}

pub fn run(ctx: &Ctx, args: &ScratchArgs) -> CmdResult {
    let record = crate::resolve::resolve(&ctx.repo, &ctx.settings, args.id.as_ref())?;
    if !record.state.status.is_live() {
        return Err(crate::Error::input(format!(
            "task '{}' is {}; it has no scratch directory",
            record.state.id, record.state.status
        ))
        .hint("'git task list' shows the tasks that are still live"));
    }
    let dir = crate::lifecycle::remove::scratch_dir(&ctx.repo, &record.state.task_id());
    std::fs::create_dir_all(&dir)
        .map_err(|e| crate::Error::repo(format!("could not create '{}'", dir.display()), e))?;
    emit(
        ctx,
        &ScratchReport {
            kind: "scratch",
            task: record.state.id.into(),
            path: dir.display().to_string(),
        },
        Done::Ok,
    )
}

/// The JSON Schemas of what `--json` prints, one per shape (published in `schema/`).
pub fn json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    use crate::output::schema_of;
    vec![schema_of::<ScratchReport>(generator)]
}
