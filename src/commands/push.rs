//! `git task push`: send tasks (branch, `refs/tasks/<id>/*`, notes) to a remote.

use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::output::{Out, Report};
use crate::remote::push::Pushed;
use crate::task::TaskId;

/// Send tasks' branches, records and notes to a remote
#[derive(clap::Args, Debug)]
pub struct PushArgs {
    /// Tasks to push (default: every task)
    #[arg(value_parser = TaskId::parse)]
    pub ids: Vec<TaskId>,
    /// The remote (default: origin)
    #[arg(long, value_name = "R")]
    pub remote: Option<String>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct PushReport {
    #[schemars(extend("const" = "push"))]
    kind: &'static str,
    #[serde(flatten)]
    pushed: Pushed,
}

impl Report for PushReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        if self.pushed.tasks.is_empty() {
            out.note("No tasks to push; start one with 'git task start <id>'");
        }
        for t in &self.pushed.tasks {
            if let Some(w) = &t.warning {
                out.warn(w);
            }
            let n = t.pushed.len();
            if n == 0 && t.refused.is_empty() {
                out.line(format_args!(
                    "Task '{}' is up to date on {}",
                    t.task, self.pushed.remote
                ))?;
                continue;
            }
            if n == 0 {
                // Only refusals: nothing went, and no count says otherwise.
                out.line(format_args!(
                    "Sent nothing of task '{}' to {}",
                    t.task, self.pushed.remote
                ))?;
            } else {
                out.line(format_args!(
                    "Pushed task '{}' to {}: {n} ref{} sent",
                    t.task,
                    self.pushed.remote,
                    if n == 1 { "" } else { "s" }
                ))?;
            }
            for (name, why) in &t.refused {
                out.warn(format_args!("not pushed: {name}: {why}"));
            }
        }
        if self.pushed.refused_any() {
            out.hint(format_args!(
                "fetch first and look: git task fetch {}; git task list --remote {}",
                self.pushed.remote, self.pushed.remote
            ));
        }
        Ok(())
    }
}

pub fn run(ctx: &Ctx, args: &PushArgs) -> CmdResult {
    let remote = crate::remote::resolve(&ctx.repo, args.remote.as_deref())?;
    let pushed = crate::remote::push::push(&ctx.repo, &remote, &args.ids)?;
    let done = if pushed.refused_any() {
        Done::Negative
    } else {
        Done::Ok
    };
    emit(
        ctx,
        &PushReport {
            kind: "push",
            pushed,
        },
        done,
    )
}

/// The JSON documents `push --json` prints (`schema/`).
pub fn json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    vec![crate::output::schema_of::<PushReport>(generator)]
}
