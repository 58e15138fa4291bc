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
    /// A patch-mode task's mark was cleared by this call (its guard was lifted).
    #[serde(skip)]
    #[schemars(skip)]
    lifted: bool,
}

impl Report for DropReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        if self.changed {
            out.note(format_args!(
                "Dropped task '{}'; its worktree stays at {}",
                self.task, self.worktree
            ));
            if self.mode == crate::task::Mode::Patch {
                out.note(format_args!(
                    "It no longer guards {}: commits and branches there are the user's again",
                    self.worktree
                ));
                out.hint(format_args!(
                    "undo its changes with 'git task revert {}', or keep them; 'git task remove {}' then forgets the task",
                    self.task, self.task
                ));
            } else {
                out.hint(format_args!(
                    "delete it with 'git task remove {}'",
                    self.task
                ));
            }
        } else if self.lifted {
            out.note(format_args!(
                "Task '{}' is already {}; its mark in {} is cleared: it no longer guards that worktree",
                self.task, self.status, self.worktree
            ));
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
    // A dropped patch-mode task no longer guards the user's worktree: its mark goes (also
    // one that an older git-task left behind on an earlier drop).
    let lifted = crate::hooks::patch::lift(&dropped.record)?;
    let s = dropped.record.state;
    let report = DropReport {
        lifted,
        kind: "drop",
        mode: s.mode,
        task: s.id.into(),
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
