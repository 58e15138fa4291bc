//! `git task remove`: delete a task's worktree and branch, saving work first.

use crate::app::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::output::{Out, Report};
use crate::task::remove::{self, Attempt, Removed};
use crate::task::TaskId;

/// Delete a task's worktree and branch (the record stays)
#[derive(clap::Args, Debug)]
pub struct RemoveArgs {
    /// Task id
    #[arg(value_parser = TaskId::parse)]
    pub id: TaskId,
    /// Remove a dirty worktree too, saving its changes as an attempt first
    #[arg(short, long)]
    pub force: bool,
}

#[derive(serde::Serialize)]
struct RemoveReport {
    kind: &'static str,
    task: String,
    removed: bool,
    existed: bool,
    attempts: Vec<Attempt>,
}

impl Report for RemoveReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        if !self.existed {
            out.note(format_args!("No task '{}'; nothing to remove", self.task));
            return Ok(());
        }
        if !self.removed {
            out.note(format_args!(
                "Task '{}' is already removed; nothing to do",
                self.task
            ));
            return Ok(());
        }
        for a in &self.attempts {
            out.note(format_args!("Saved {} as {}", a.what, a.name));
        }
        out.note(format_args!("Removed task '{}'", self.task));
        Ok(())
    }
}

pub fn run(ctx: &Ctx, args: &RemoveArgs) -> CmdResult {
    match remove::remove(&ctx.repo, &ctx.settings, &args.id, args.force)? {
        Ok(Removed::Done { attempts, .. }) => emit(
            ctx,
            &RemoveReport {
                kind: "remove",
                task: args.id.to_string(),
                removed: true,
                existed: true,
                attempts,
            },
            Done::Ok,
        ),
        Ok(Removed::AlreadyGone(record)) => {
            let existed = record.is_some();
            emit(
                ctx,
                &RemoveReport {
                    kind: "remove",
                    task: args.id.to_string(),
                    removed: false,
                    existed,
                    attempts: Vec::new(),
                },
                Done::Ok,
            )
        }
        Err(dirty) => {
            let shown: Vec<&str> = dirty.changed.iter().take(10).map(String::as_str).collect();
            let more = dirty.changed.len().saturating_sub(shown.len());
            let mut err = crate::Error::negative(format!(
                "task '{}' has uncommitted changes in '{}': {}{}",
                dirty.id,
                dirty.path,
                shown.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            ));
            err = err
                .hint(format!("commit them in the worktree, or see them with 'git -C {} status'", dirty.path))
                .hint(format!("or remove anyway (the changes are saved as an attempt): git task remove --force {}", dirty.id));
            Err(err)
        }
    }
}
