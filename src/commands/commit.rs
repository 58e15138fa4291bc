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
    /// The commits an unfinished merge brought in (a `sync` that stopped on conflicts): the
    /// commit concluded it and has them as its other parents.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    merged: Vec<String>,
    /// The base tip recorded as the task's new base once the concluded merge holds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    synced: Option<String>,
    /// Nothing committed: what to do next (`hint: …` lines).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    hints: Vec<String>,
    /// The same steps as `git task mcp` tool calls.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    next: Vec<crate::error::Call>,
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
                if !self.merged.is_empty() {
                    out.note(format_args!(
                        "Concluded the merge of {} into task '{}'",
                        self.merged
                            .iter()
                            .map(|m| &m[..12.min(m.len())])
                            .collect::<Vec<_>>()
                            .join(", "),
                        self.task
                    ));
                }
                if let Some(base) = &self.synced {
                    out.note(format_args!(
                        "Task '{}' now has {} as its base",
                        self.task,
                        &base[..12.min(base.len())]
                    ));
                }
                out.line(c)
            }
            None => {
                let msg = if self.skipped.is_empty() {
                    format!("nothing to commit in task '{}'", self.task)
                } else {
                    format!("nothing eligible to commit in task '{}': every change is outside the contract or excluded", self.task)
                };
                let mut err = crate::Error::negative(msg);
                for hint in &self.hints {
                    err = err.hint(hint.clone());
                }
                out.error(&err.hint(format!(
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
    let task = record.state.id.to_string();
    match autocommit::commit(&ctx.repo, &ctx.settings, &record, args.message.as_deref())? {
        Outcome::Committed {
            commit,
            branch,
            files,
            skipped,
            merged,
        } => {
            // A concluded sync merge: its base is recorded as `sync` would now.
            let synced = match merged.is_empty() {
                true => None,
                false => crate::sync::record_concluded(&ctx.repo, &record.state.task_id())?
                    .map(|s| s.base),
            };
            emit(
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
                    merged: merged.iter().map(ToString::to_string).collect(),
                    synced,
                    hints: Vec::new(),
                    next: Vec::new(),
                },
                Done::Ok,
            )
        }
        Outcome::NothingEligible { skipped, verdict } => {
            let (hints, next) = nothing_eligible(&task, &skipped, verdict.as_ref());
            emit(
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
                    merged: Vec::new(),
                    synced: None,
                    hints,
                    next,
                },
                Done::Negative,
            )
        }
    }
}

/// The way on when nothing could be committed: changes outside the contract are put back
/// (`revert`, which saves them first) and what the branch holds is merged; with no change left
/// at all, the branch is what lands.
fn nothing_eligible(
    task: &str,
    skipped: &[Skipped],
    verdict: Option<&crate::contract::Verdict>,
) -> (Vec<String>, Vec<crate::error::Call>) {
    use crate::error::Call;
    let merge = Call::new("merge").arg("ids", vec![task.to_owned()]);
    if let Some(v) = verdict.filter(|v| !v.next.is_empty()) {
        let hints = vec![
            v.hints.first().cloned().unwrap_or_default(),
            format!("then merge what the branch holds: git task merge {task}"),
        ];
        let next = vec![v.next[0].clone(), merge];
        return (hints, next);
    }
    if skipped.is_empty() {
        return (
            vec![format!(
                "the worktree holds no change; what the branch holds lands with: git task merge {task}"
            )],
            vec![merge],
        );
    }
    (
        vec![format!(
            "the changes left are excluded from commits (task.autoCommitExclude, ignored files): commit them with git if they belong to the task (git -C \"$(git task path {task})\" add -f PATH), or delete them"
        )],
        Vec::new(),
    )
}

/// The JSON Schemas of what `--json` prints, one per shape (published in `schema/`).
pub fn json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    use crate::output::schema_of;
    vec![schema_of::<CommitReport>(generator)]
}
