//! `git task diff`: the task's work as a unified diff.

use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::git::diff::unified;
use crate::output::{Out, Report};
use crate::task::TaskId;

/// Show a task's changes since its base (or snapshot) as a unified diff
#[derive(clap::Args, Debug)]
pub struct DiffArgs {
    /// Task id (default: the active task of this worktree)
    #[arg(value_parser = TaskId::parse)]
    pub id: Option<TaskId>,
    /// Limit the diff to these files or directories (relative to the current directory)
    #[arg(last = true, value_name = "PATH")]
    pub paths: Vec<String>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct DiffReport {
    #[schemars(extend("const" = "diff"))]
    kind: &'static str,
    task: String,
    patch: String,
    #[serde(skip)]
    bytes: Vec<u8>,
}

impl Report for DiffReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        out.raw_bytes(&self.bytes)
    }
}

pub fn run(ctx: &Ctx, args: &DiffArgs) -> CmdResult {
    let record = crate::resolve::resolve(&ctx.repo, &ctx.settings, args.id.as_ref())?;
    let w = crate::work::open(&ctx.repo, &record)?;
    let paths = crate::work::repo_paths(
        &record,
        std::env::current_dir().ok().as_deref(),
        &args.paths,
    )?;
    let bytes = unified::trees(
        &ctx.repo,
        w.origin_tree,
        w.state.worktree_tree,
        &paths,
        w.skip(),
    )?;
    let patch = String::from_utf8_lossy(&bytes).into_owned();
    emit(
        ctx,
        &DiffReport {
            kind: "diff",
            task: record.state.id.into(),
            patch,
            bytes,
        },
        Done::Ok,
    )
}

/// The JSON Schemas of what `--json` prints, one per shape (published in `schema/`).
pub fn json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    use crate::output::schema_of;
    vec![schema_of::<DiffReport>(generator)]
}
