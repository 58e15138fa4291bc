//! `git task reset`: put a task back to its base (or onto a new one), saving its work first.

use crate::app::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::output::{Out, Report};
use crate::task::TaskId;
use crate::undo::{self, ResetDone};

/// Put a task back to its base, or onto a new base, saving its work first
#[derive(clap::Args, Debug)]
pub struct ResetArgs {
    /// Task id (default: the active task of this worktree)
    #[arg(value_parser = TaskId::parse)]
    pub id: Option<TaskId>,
    /// Start the task over from REV instead (moves its base)
    #[arg(long, value_name = "REV")]
    pub onto: Option<String>,
}

#[derive(serde::Serialize)]
struct ResetReport {
    kind: &'static str,
    task: String,
    #[serde(flatten)]
    done: ResetDone,
}

impl Report for ResetReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        match &self.done.attempt {
            Some(a) => {
                out.note(format_args!("Saved the discarded work as {}", a.name));
                out.note(format_args!(
                    "Reset task '{}' to {}",
                    self.task,
                    &self.done.base[..12]
                ));
                out.line(&a.name)
            }
            None => {
                out.note(format_args!(
                    "Task '{}' is already at its base {}; nothing to do",
                    self.task,
                    &self.done.base[..12]
                ));
                Ok(())
            }
        }
    }
}

pub fn run(ctx: &Ctx, args: &ResetArgs) -> CmdResult {
    let record = crate::task::resolve(&ctx.repo, &ctx.settings, args.id.as_ref())?;
    let done = undo::reset(&ctx.repo, &record, args.onto.as_deref())?;
    emit(
        ctx,
        &ResetReport {
            kind: "reset",
            task: record.state.id,
            done,
        },
        Done::Ok,
    )
}
