//! `git task revert`: undo all or part of a task's work, saving it first.

use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::output::{Out, Report};
use crate::task::TaskId;
use crate::undo::{self, Outcome, Undone, What};
use std::path::PathBuf;

/// Undo a task's work: everything, some files, one checkpoint, or back to one
#[derive(clap::Args, Debug)]
pub struct RevertArgs {
    /// Task id (default: the active task of this worktree)
    #[arg(value_parser = TaskId::parse)]
    pub id: Option<TaskId>,
    /// Put only this file or directory back (can be repeated)
    #[arg(long = "path", value_name = "P", conflicts_with_all = ["checkpoint", "to"])]
    pub paths: Vec<String>,
    /// Undo only what checkpoint N changed, keeping later work
    #[arg(long, value_name = "N", conflicts_with = "to")]
    pub checkpoint: Option<u32>,
    /// Go back to the state of checkpoint N
    #[arg(long, value_name = "N")]
    pub to: Option<u32>,
    /// Also write the discarded work to FILE as a unified diff
    #[arg(long, value_name = "FILE")]
    pub patch_file: Option<PathBuf>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct RevertReport {
    #[schemars(extend("const" = "revert"))]
    kind: &'static str,
    task: String,
    #[serde(flatten)]
    done: Undone,
    /// A live patch-mode task keeps guarding its worktree after a revert: the command that lifts it.
    #[serde(skip)]
    #[schemars(skip)]
    still_guards: bool,
}

impl Report for RevertReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        let Some(attempt) = &self.done.attempt else {
            out.note(format_args!("Nothing to revert in task '{}'", self.task));
            return Ok(());
        };
        out.note(format_args!("Saved the discarded work as {}", attempt.name));
        if let Some(p) = &self.done.patch_file {
            out.note(format_args!("Wrote the discarded work to '{p}'"));
        }
        if !self.done.kept_commits.is_empty() {
            let n = self.done.kept_commits.len();
            out.note(format_args!(
                "HEAD stays: {n} commit{} since the start {} not the task's own (another task's merge, or a commit made elsewhere); only the task's files were put back",
                if n == 1 { "" } else { "s" },
                if n == 1 { "is" } else { "are" },
            ));
        }
        let n = self.done.files.len();
        out.note(format_args!(
            "Reverted {n} file{} of task '{}'",
            if n == 1 { "" } else { "s" },
            self.task
        ));
        if self.still_guards {
            out.hint(format_args!(
                "task '{}' still guards this worktree (its commits and branches); 'git task drop {}' lifts that",
                self.task, self.task
            ));
        }
        out.line(&attempt.name)
    }
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct ConflictReport {
    #[schemars(extend("const" = "revert_conflict"))]
    kind: &'static str,
    task: String,
    checkpoint: u32,
    conflicts: Vec<String>,
    /// What to do next (`hint: …` lines).
    hints: Vec<String>,
    /// The next steps as `git task mcp` tool calls.
    next: Vec<crate::error::Call>,
}

impl Report for ConflictReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        out.error(&crate::Error::negative(format!(
            "cannot undo checkpoint {} of '{}': later work changed the same lines in {}",
            self.checkpoint,
            self.task,
            self.conflicts
                .iter()
                .map(|p| format!("'{p}'"))
                .collect::<Vec<_>>()
                .join(", ")
        )));
        for hint in &self.hints {
            out.hint(hint);
        }
        Ok(())
    }
}

pub fn run(ctx: &Ctx, args: &RevertArgs) -> CmdResult {
    let record = crate::resolve::resolve(&ctx.repo, &ctx.settings, args.id.as_ref())?;
    let what = match (args.checkpoint, args.to, args.paths.is_empty()) {
        (Some(n), _, _) => What::Checkpoint(n),
        (_, Some(n), _) => What::To(n),
        (_, _, false) => What::Paths(crate::work::repo_paths(
            &record,
            std::env::current_dir().ok().as_deref(),
            &args.paths,
        )?),
        _ => What::All,
    };
    match undo::revert(&ctx.repo, &record, &what, args.patch_file.as_deref())? {
        Outcome::Done(done) => emit(
            ctx,
            &RevertReport {
                kind: "revert",
                still_guards: record.state.mode == crate::task::Mode::Patch
                    && crate::hooks::patch::guards(record.state.status),
                task: record.state.id.into(),
                done,
            },
            Done::Ok,
        ),
        Outcome::Conflict(conflicts) => emit(
            ctx,
            &{
                let task = record.state.id.to_string();
                let checkpoint = args.checkpoint.unwrap_or_default();
                let before = checkpoint.saturating_sub(1).max(1);
                ConflictReport {
                    kind: "revert_conflict",
                    hints: vec![
                        format!("nothing was changed; go back to the checkpoint before it instead: git task revert {task} --to {before}"),
                        format!("or put single files back: git task revert {task} --path <file>"),
                    ],
                    next: vec![crate::error::Call::on("revert", &task).arg("to", before)],
                    task,
                    checkpoint,
                    conflicts,
                }
            },
            Done::Negative,
        ),
    }
}

/// The JSON Schemas of what `--json` prints, one per shape (published in `schema/`).
pub fn json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    use crate::output::schema_of;
    vec![
        schema_of::<RevertReport>(generator),
        schema_of::<ConflictReport>(generator),
    ]
}
