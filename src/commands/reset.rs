//! `git task reset`: put a task back to its base (or onto a new one), saving its work first.

use crate::attempt::SavedAttempt;
use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::lifecycle::reset::{self, ResetOptions};
use crate::output::{Out, Report};
use crate::task::TaskId;

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

#[derive(serde::Serialize, schemars::JsonSchema)]
struct ResetReport {
    #[schemars(extend("const" = "reset"))]
    kind: &'static str,
    task: String,
    attempt: Option<SavedAttempt>,
    base: String,
    files: Vec<String>,
    /// False when the task was already at its base and nothing was done.
    changed: bool,
    /// Where the user should `cd`, when the reset deleted or replaced their directory.
    cd: Option<String>,
}

impl Report for ResetReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        if let Some(a) = &self.attempt {
            out.note(format_args!("Saved {} as {}", a.what, a.name));
        }
        if !self.changed {
            out.note(format_args!(
                "Task '{}' is already at its base {}; nothing to do",
                self.task,
                &self.base[..12]
            ));
        } else {
            out.note(format_args!(
                "Reset task '{}' to {}",
                self.task,
                &self.base[..12]
            ));
        }
        if let Some(dir) = &self.cd {
            out.hint(format_args!(
                "your directory was replaced by the reset: cd {dir}"
            ));
        }
        match &self.attempt {
            Some(a) => out.line(&a.name),
            None => Ok(()),
        }
    }
}

pub fn run(ctx: &Ctx, args: &ResetArgs) -> CmdResult {
    let record = crate::resolve::resolve(&ctx.repo, &ctx.settings, args.id.as_ref())?;
    let onto = args
        .onto
        .as_deref()
        .map(|rev| ctx.repo.rev_parse_commit(rev))
        .transpose()?;
    let opts = ResetOptions {
        onto,
        ..ResetOptions::default()
    };
    let done = reset::reset(&ctx.repo, &ctx.settings, &record, &opts)?;
    emit(
        ctx,
        &ResetReport {
            kind: "reset",
            task: record.state.id.into(),
            attempt: done.attempt,
            base: done.base.to_string(),
            files: done.files,
            changed: done.changed,
            cd: done.cd.map(|p| p.display().to_string()),
        },
        Done::Ok,
    )
}

/// The JSON Schemas of what `--json` prints, one per shape (published in `schema/`).
pub fn json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    use crate::output::schema_of;
    vec![schema_of::<ResetReport>(generator)]
}
