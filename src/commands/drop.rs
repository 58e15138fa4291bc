//! `git task drop`: mark a task failed or abandoned; its worktree stays.

use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::git::refs::RefError;
use crate::output::{Out, Report};
use crate::record::{self, event};
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

#[derive(serde::Serialize)]
struct DropReport {
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
    crate::task::sweep::repair_abandoned_starts(&ctx.repo, &ctx.settings);
    let mut rec = crate::task::resolve(&ctx.repo, &ctx.settings, args.id.as_ref())?;
    let id = rec.state.task_id();
    // Another command may append to the record at the same moment: retry against its new tip.
    for _ in 0..10 {
        match rec.state.status {
            Status::Dropped | Status::Merged | Status::Removed => {
                let report = DropReport {
                    kind: "drop",
                    mode: rec.state.mode,
                    task: id.to_string(),
                    status: rec.state.status,
                    changed: false,
                    worktree: rec.state.worktree.clone(),
                };
                return emit(ctx, &report, Done::Ok);
            }
            Status::Provisioning => {
                return Err(crate::Error::input(format!("task '{id}' is still being started"))
                    .hint("wait for 'git task start' to finish, or run 'git task sweep' if it was interrupted"));
            }
            Status::Active => {}
        }
        let mut state = rec.state.clone();
        state.status = Status::Dropped;
        let details = serde_json::json!({ "message": args.message });
        match record::append(&ctx.repo, &rec, event::DROPPED, &state, details, Vec::new()) {
            Ok(rec) => {
                let report = DropReport {
                    kind: "drop",
                    mode: rec.state.mode,
                    task: id.to_string(),
                    status: Status::Dropped,
                    changed: true,
                    worktree: rec.state.worktree,
                };
                return emit(ctx, &report, Done::Ok);
            }
            Err(RefError::Conflict(_)) => rec = record::load_existing(&ctx.repo, &id)?,
            Err(e) => return Err(e.into()),
        }
    }
    Err(crate::Error::repo_msg(format!(
        "could not drop task '{id}': its record kept changing"
    ))
    .hint(format!("run 'git task drop {id}' again")))
}
