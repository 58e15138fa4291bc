//! `git task changes`: the files panel, each changed file with its checkpoint.

use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::output::{escape, Out, Report};
use crate::task::TaskId;
use crate::work::{self, FileRow};

/// List the files a task changed, with the checkpoint that last touched each
#[derive(clap::Args, Debug)]
pub struct ChangesArgs {
    /// Task id (default: the active task of this worktree)
    #[arg(value_parser = TaskId::parse)]
    pub id: Option<TaskId>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct ChangesReport {
    #[schemars(extend("const" = "changes"))]
    kind: &'static str,
    task: String,
    files: Vec<FileRow>,
}

impl Report for ChangesReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        if self.files.is_empty() {
            out.note(format_args!("Task '{}' has no changes", self.task));
        }
        for f in &self.files {
            let status = serde_json::to_value(f.status)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            let cp = f
                .checkpoint
                .map(|n| format!("cp {n}"))
                .unwrap_or_else(|| "-".into());
            let path = match &f.old_path {
                Some(old) => format!("{} -> {}", escape(old), escape(&f.path)),
                None => escape(&f.path).into_owned(),
            };
            out.line(format_args!("{status:<9} {cp:<6} {path}"))?;
        }
        Ok(())
    }
}

pub fn run(ctx: &Ctx, args: &ChangesArgs) -> CmdResult {
    let record = crate::resolve::resolve(&ctx.repo, &ctx.settings, args.id.as_ref())?;
    let files = work::files(&ctx.repo, &record)?;
    emit(
        ctx,
        &ChangesReport {
            kind: "changes",
            task: record.state.id.into(),
            files,
        },
        Done::Ok,
    )
}

/// The JSON Schemas of what `--json` prints, one per shape (published in `schema/`).
pub fn json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    use crate::output::schema_of;
    vec![schema_of::<ChangesReport>(generator)]
}
