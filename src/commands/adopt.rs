//! `git task adopt`: give a task fetched from another machine a worktree here.

use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::lifecycle::start::StartError;
use crate::output::{Out, Report};
use crate::remote::Reconciled;
use crate::task::TaskId;

/// Give a task from a remote its branch and a worktree here
#[derive(clap::Args, Debug)]
pub struct AdoptArgs {
    /// The task to adopt
    #[arg(value_parser = TaskId::parse)]
    pub id: TaskId,
    /// The remote (default: origin)
    #[arg(long, value_name = "R")]
    pub remote: Option<String>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct AdoptReport {
    #[schemars(extend("const" = "adopt"))]
    kind: &'static str,
    task: String,
    remote: String,
    branch: String,
    worktree: String,
    already: bool,
    record: Reconciled,
}

impl Report for AdoptReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        if self.already {
            out.note(format_args!(
                "Task '{}' already has a worktree here",
                self.task
            ));
        } else {
            out.note(format_args!(
                "Adopted task '{}' from {} on branch {}",
                self.task,
                self.remote,
                crate::git::refs::short_name(&self.branch)
            ));
        }
        out.line(&self.worktree)
    }
}

pub fn run(ctx: &Ctx, args: &AdoptArgs) -> CmdResult {
    let remote = crate::remote::resolve(&ctx.repo, args.remote.as_deref())?;
    let adopted = match crate::remote::adopt::adopt(
        &ctx.repo,
        &ctx.settings,
        &remote,
        &args.id,
        &mut |_, _, _| {},
    ) {
        Ok(adopted) => adopted,
        Err(StartError::Other(e)) => return Err(e),
        Err(StartError::Setup(failed)) => {
            ctx.out.raw_err(&failed.outcome.output);
            return Err(crate::Error::negative(format!(
                "setup '{}' of task '{}' failed; the worktree was removed",
                failed.outcome.command, failed.id
            ))
            .hint(format!(
                "fix it, then adopt again: git task adopt {}",
                failed.id
            )));
        }
    };
    let state = adopted.record.state;
    emit(
        ctx,
        &AdoptReport {
            kind: "adopt",
            task: state.id.into(),
            remote,
            branch: state.branch.into(),
            worktree: state.worktree,
            already: adopted.already,
            record: adopted.reconciled,
        },
        Done::Ok,
    )
}

/// The JSON documents `adopt --json` prints (`schema/`).
pub fn json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    vec![crate::output::schema_of::<AdoptReport>(generator)]
}
