//! `git task diff`: the task's work as a unified diff (or, with `--stat`, as git's stat).

use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::git::diff::stat::{self, FileStat};
use crate::git::diff::unified;
use crate::output::{Out, Report};
use crate::task::TaskId;

/// Show a task's changes since its base (or snapshot) as a unified diff
///
/// For a merged task: what it landed on its target, read only.
#[derive(clap::Args, Debug)]
pub struct DiffArgs {
    /// Task id (default: the active task of this worktree)
    #[arg(value_parser = TaskId::parse)]
    pub id: Option<TaskId>,
    /// Print lines added and removed per file and a summary instead of the patch, as `git diff --stat`
    #[arg(long)]
    pub stat: bool,
    #[command(flatten)]
    pub renames: super::Renames,
    /// Limit the diff to these files or directories (relative to the current directory)
    #[arg(last = true, value_name = "PATH")]
    pub paths: Vec<String>,
}

/// `--stat`: each file's lines added and removed, and the totals.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct DiffStat {
    /// One entry per changed file, in the order of the patch.
    files: Vec<FileStat>,
    /// Files changed.
    files_changed: usize,
    /// Lines added in text files.
    insertions: u64,
    /// Lines removed in text files.
    deletions: u64,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct DiffReport {
    #[schemars(extend("const" = "diff"))]
    kind: &'static str,
    task: String,
    /// The unified diff (empty with `--stat`, which prints no patch).
    patch: String,
    /// With `--stat`: what each file's change amounts to.
    #[serde(skip_serializing_if = "Option::is_none")]
    stat: Option<DiffStat>,
    /// For a merged task: the branch it landed on (full ref name; `null` for a patch-mode task
    /// accepted in place). The diff then shows what landed there.
    #[serde(skip_serializing_if = "Option::is_none")]
    landed_on: Option<Option<String>>,
    #[serde(skip)]
    bytes: Vec<u8>,
}

impl Report for DiffReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        out.raw_bytes(&self.bytes)
    }
}

/// The width git gives a stat: `COLUMNS` when set, else 80.
fn stat_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0)
        .unwrap_or(80)
}

pub fn run(ctx: &Ctx, args: &DiffArgs) -> CmdResult {
    let record = crate::resolve::resolve(&ctx.repo, &ctx.settings, args.id.as_ref())?;
    let paths = crate::work::repo_paths(
        &record,
        std::env::current_dir().ok().as_deref(),
        &args.paths,
    )?;
    let (old, new, skip, landed_on) = match crate::work::landed(&ctx.repo, &record)? {
        Some(l) => (
            l.before,
            l.after,
            crate::work::skipped(record.state.mode),
            Some(l.into),
        ),
        None if record.state.status == crate::task::Status::Removed => {
            return Err(crate::work::nothing_to_show(&ctx.repo, &record));
        }
        None => {
            let w = crate::work::open(&ctx.repo, &record)?;
            (w.origin_tree, w.state.worktree_tree, w.skip(), None)
        }
    };
    if let Some(Some(into)) = &landed_on {
        ctx.out.note(format_args!(
            "Task '{}' is merged: showing what it landed on '{}'",
            record.state.id,
            crate::git::refs::short_name(into)
        ));
    }
    let pairs = unified::pairs(&ctx.repo, old, new, &paths, skip, args.renames.find_renames)?;
    let (bytes, stat) = if args.stat {
        let files = stat::files(&ctx.repo, &pairs)?;
        let text = stat::format(&files, stat_width());
        let (insertions, deletions) = files
            .iter()
            .filter(|f| !f.binary)
            .fold((0, 0), |(a, d), f| (a + f.insertions, d + f.deletions));
        let stat = DiffStat {
            files_changed: files.len(),
            files,
            insertions,
            deletions,
        };
        (text.into_bytes(), Some(stat))
    } else {
        (unified::patch(&ctx.repo, &pairs)?, None)
    };
    let patch = if args.stat {
        String::new()
    } else {
        String::from_utf8_lossy(&bytes).into_owned()
    };
    emit(
        ctx,
        &DiffReport {
            kind: "diff",
            task: record.state.id.into(),
            patch,
            stat,
            landed_on,
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
