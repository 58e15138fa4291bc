//! `git task drop`: mark a task failed or abandoned; its worktree stays.

use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::output::{Out, Report};
use crate::task::{Status, TaskId};

/// Mark a task failed or abandoned, keeping its worktree for inspection
#[derive(clap::Args, Debug)]
pub struct DropArgs {
    /// Task id (default: the active task of this worktree)
    #[arg(value_parser = TaskId::parse)]
    pub id: Option<TaskId>,
    /// Why the task is dropped, stored in the event log
    #[arg(short, long, value_name = "MSG")]
    pub message: Option<String>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct DropReport {
    #[schemars(extend("const" = "drop"))]
    kind: &'static str,
    task: String,
    mode: crate::task::Mode,
    status: Status,
    changed: bool,
    worktree: String,
}

impl Report for DropReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        if self.changed {
            out.note(format_args!(
                "Dropped task '{}'; its worktree stays at {}",
                self.task, self.worktree
            ));
            if self.mode == crate::task::Mode::Patch {
                out.hint(format_args!(
                    "undo its changes with 'git task revert {}'",
                    self.task
                ));
            } else {
                out.hint(format_args!(
                    "delete it with 'git task remove {}'",
                    self.task
                ));
            }
        } else {
            out.note(format_args!(
                "Task '{}' is already {}; nothing changed",
                self.task, self.status
            ));
        }
        Ok(())
    }
}

pub fn run(ctx: &Ctx, args: &DropArgs) -> CmdResult {
    let dropped = crate::lifecycle::drop::drop(
        &ctx.repo,
        &ctx.settings,
        args.id.as_ref(),
        args.message.as_deref(),
    )?;
    let s = dropped.record.state;
    let report = DropReport {
        kind: "drop",
        mode: s.mode,
        task: s.id,
        status: s.status,
        changed: dropped.changed,
        worktree: s.worktree,
    };
    emit(ctx, &report, Done::Ok)
}

/// The JSON Schemas of what `--json` prints, one per shape (published in `schema/`).
pub fn json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    use crate::output::schema_of;
    vec![schema_of::<DropReport>(generator)]
}
