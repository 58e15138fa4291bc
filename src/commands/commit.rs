//! `git task commit`: stage and commit only the eligible changes.

use crate::autocommit::{self, Outcome, Skipped};
use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::output::{escape, Out, Report};
use crate::task::TaskId;

/// Stage and commit the task's changes that keep the contract
#[derive(clap::Args, Debug)]
pub struct CommitArgs {
    /// Task id (default: the active task of this worktree)
    #[arg(value_parser = TaskId::parse)]
    pub id: Option<TaskId>,
    /// Commit message (default: "task <id>: N files")
    #[arg(short, long, value_name = "MSG")]
    pub message: Option<String>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct CommitReport {
    #[schemars(extend("const" = "commit"))]
    kind: &'static str,
    task: String,
    committed: bool,
    commit: Option<String>,
    branch: Option<String>,
    files: Vec<String>,
    skipped: Vec<Skipped>,
    violations: Vec<crate::contract::Violation>,
}

impl Report for CommitReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        for s in &self.skipped {
            out.note(format_args!(
                "skipped  {}  {}  {}",
                escape(&s.path),
                s.reason,
                escape(&s.rule)
            ));
        }
        match &self.commit {
            Some(c) => {
                let n = self.files.len();
                out.note(format_args!(
                    "Committed {n} file{} of task '{}' on '{}'",
                    if n == 1 { "" } else { "s" },
                    self.task,
                    crate::git::refs::short_name(self.branch.as_deref().unwrap_or("HEAD"))
                ));
                out.line(c)
            }
            None => {
                let msg = if self.skipped.is_empty() {
                    format!("nothing to commit in task '{}'", self.task)
                } else {
                    format!("nothing eligible to commit in task '{}': every change is outside the contract or excluded", self.task)
                };
                out.error(&crate::Error::negative(msg).hint(format!(
                    "see the task's changes with 'git task changes {}'",
                    self.task
                )));
                Ok(())
            }
        }
    }
}

pub fn run(ctx: &Ctx, args: &CommitArgs) -> CmdResult {
    let record = crate::resolve::resolve(&ctx.repo, &ctx.settings, args.id.as_ref())?;
    let task = record.state.id.clone();
    match autocommit::commit(&ctx.repo, &ctx.settings, &record, args.message.as_deref())? {
        Outcome::Committed {
            commit,
            branch,
            files,
            skipped,
        } => emit(
            ctx,
            &CommitReport {
                kind: "commit",
                task,
                committed: true,
                commit: Some(commit.to_string()),
                branch: Some(branch),
                files,
                skipped,
                violations: Vec::new(),
            },
            Done::Ok,
        ),
        Outcome::NothingEligible { skipped, verdict } => emit(
            ctx,
            &CommitReport {
                kind: "commit",
                task,
                committed: false,
                commit: None,
                branch: None,
                files: Vec::new(),
                skipped,
                violations: verdict.map(|v| v.violations).unwrap_or_default(),
            },
            Done::Negative,
        ),
    }
}

/// The JSON Schemas of what `--json` prints, one per shape (published in `schema/`).
pub fn json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    use crate::output::schema_of;
    vec![schema_of::<CommitReport>(generator)]
}
