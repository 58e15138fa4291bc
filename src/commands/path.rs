//! `git task path`: print a task's worktree path.

use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::output::{Out, Report};
use crate::task::TaskId;

/// Print the worktree path of a task (for cd "$(git task path x)")
#[derive(clap::Args, Debug)]
pub struct PathArgs {
    /// Task id (default: the active task of this worktree)
    #[arg(value_parser = TaskId::parse)]
    pub id: Option<TaskId>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct PathReport {
    #[schemars(extend("const" = "path"))]
    kind: &'static str,
    task: String,
    path: String,
    exists: bool,
}

impl Report for PathReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        out.line(&self.path)
    }
}

pub fn run(ctx: &Ctx, args: &PathArgs) -> CmdResult {
    let record = crate::resolve::resolve(&ctx.repo, &ctx.settings, args.id.as_ref())?;
    let path = record.state.worktree.clone();
    let exists = std::path::Path::new(&path).exists();
    if !exists && !ctx.out.is_json() {
        ctx.out.warn(format_args!(
            "the worktree of task '{}' does not exist ({})",
            record.state.id, record.state.status
        ));
    }
    emit(
        ctx,
        &PathReport {
            kind: "path",
            task: record.state.id.into(),
            path,
            exists,
        },
        Done::Ok,
    )
}

/// The JSON Schemas of what `--json` prints, one per shape (published in `schema/`).
pub fn json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    use crate::output::schema_of;
    vec![schema_of::<PathReport>(generator)]
}
