//! `git task changes`: the files panel, each changed file with its checkpoint.

use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::git::diff::similarity::DEFAULT_SCORE;
use crate::git::diff::stat;
use crate::output::{escape, Out, Report};
use crate::task::TaskId;
use crate::work::{self, FileRow};

/// List the files a task changed, with the checkpoint that last touched each
///
/// For a merged task: the files it landed on its target, read only.
#[derive(clap::Args, Debug)]
pub struct ChangesArgs {
    /// Task id (default: the active task of this worktree)
    #[arg(value_parser = TaskId::parse)]
    pub id: Option<TaskId>,
    /// Also count the lines each file added and removed, with git's summary line
    #[arg(long)]
    pub stat: bool,
    #[command(flatten)]
    pub renames: super::Renames,
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
            match &f.stat {
                Some(s) if s.binary => {
                    out.line(format_args!("{status:<9} {cp:<6} {path}  (binary)"))?
                }
                Some(s) => out.line(format_args!(
                    "{status:<9} {cp:<6} {path}  +{} -{}",
                    s.insertions, s.deletions
                ))?,
                None => out.line(format_args!("{status:<9} {cp:<6} {path}"))?,
            }
        }
        if !self.files.is_empty() {
            let stats: Vec<stat::FileStat> =
                self.files.iter().filter_map(|f| f.stat.clone()).collect();
            if stats.len() == self.files.len() {
                out.line(format_args!("{}", stat::summary(&stats).trim_end()))?;
            }
        }
        Ok(())
    }
}

pub fn run(ctx: &Ctx, args: &ChangesArgs) -> CmdResult {
    let record = crate::resolve::resolve(&ctx.repo, &ctx.settings, args.id.as_ref())?;
    let renames = args.renames.find_renames.unwrap_or(DEFAULT_SCORE);
    let files = work::files(&ctx.repo, &record, renames, args.stat)?;
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
