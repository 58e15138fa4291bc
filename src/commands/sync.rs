//! `git task sync`: bring the base branch's new commits into a task branch, in its worktree.

use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::error::Call;
use crate::output::{escape, Out, Refusal, Report, Said};
use crate::sync::{self, Stopped, Synced};
use crate::task::TaskId;
use owo_colors::OwoColorize;

/// Bring the base branch's new commits into a task branch
#[derive(clap::Args, Debug)]
pub struct SyncArgs {
    /// Task to sync (default: the active task of this worktree)
    #[arg(value_parser = TaskId::parse)]
    pub id: Option<TaskId>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct SyncReport {
    #[schemars(extend("const" = "sync"))]
    kind: &'static str,
    #[serde(flatten)]
    synced: Synced,
}

impl Report for SyncReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        let s = &self.synced;
        let base = crate::git::refs::short_name(&s.base_branch);
        let tip = &s.base[..12.min(s.base.len())];
        if !s.changed {
            return out.line(format_args!(
                "Task '{}' is up to date with {base} ({tip}); nothing to do",
                s.task.style(out.palette.id)
            ));
        }
        if !s.merged {
            return out.line(format_args!(
                "Task '{}' now has {base} ({tip}) as its base",
                s.task.style(out.palette.id)
            ));
        }
        let how = if s.fast_forward {
            "fast-forward"
        } else {
            "merge commit"
        };
        out.line(format_args!(
            "Synced task '{}' with {base} ({tip}): {how} {}",
            s.task.style(out.palette.id),
            &s.commit[..12.min(s.commit.len())]
        ))
    }
}

/// A sync that stopped: conflicts to resolve, or local changes in the way.
struct StoppedReport {
    value: serde_json::Value,
    text: String,
}

impl serde::Serialize for StoppedReport {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(s)
    }
}

/// A stopped sync's JSON is always one of [`Stopped`].
impl schemars::JsonSchema for StoppedReport {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        Stopped::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        Refusal::<Stopped>::json_schema(generator)
    }
}

/// The JSON value of a stopped sync with what to do next (keys sorted, as
/// `serde_json::Value` keeps them).
fn to_value(stopped: Stopped, hints: Vec<String>, next: Vec<Call>) -> serde_json::Value {
    serde_json::to_value(Refusal {
        report: stopped,
        hints,
        next,
    })
    .unwrap_or_default()
}

impl Report for StoppedReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        out.raw_err(&self.text);
        Ok(())
    }
}

pub fn run(ctx: &Ctx, args: &SyncArgs) -> CmdResult {
    let rec = crate::resolve::resolve(&ctx.repo, &ctx.settings, args.id.as_ref())?;
    let id = rec.state.task_id();
    let p = &ctx.out.err_palette;
    let mut said = Said::new(p);
    match sync::sync(&ctx.repo, &id)? {
        Ok(synced) => emit(
            ctx,
            &SyncReport {
                kind: "sync",
                synced,
            },
            Done::Ok,
        ),
        Err(stopped @ Stopped::Conflict { .. }) => {
            let Stopped::Conflict {
                task,
                worktree,
                paths,
                resolve,
                abort,
                ..
            } = &stopped
            else {
                unreachable!("matched above")
            };
            said.error(&format!(
                "syncing task '{task}' conflicts; git's conflict state is left in '{worktree}':"
            ));
            for path in paths {
                said.raw(&format!("  {}\n", escape(path)));
            }
            for (n, step) in resolve.iter().enumerate() {
                said.hint(match n {
                    0 => step.clone(),
                    _ => format!("then: {step}"),
                });
            }
            said.hint(format!("or give up the sync: {abort}"));
            // The merge tool takes `ids`.
            let next = vec![
                Call::on("commit", task),
                Call::new("merge").arg("ids", vec![task.clone()]),
            ];
            let value = to_value(stopped.clone(), said.hints, next);
            let text = said.text;
            emit(ctx, &StoppedReport { value, text }, Done::Negative)
        }
        Err(Stopped::Dirty {
            task,
            worktree,
            paths,
            merging,
        }) => {
            let next = if merging {
                said.error(&format!(
                    "task '{task}' has an unfinished merge in '{worktree}'"
                ));
                said.hint(format!(
                    "resolve the conflicts (no <<<<<<< ======= >>>>>>> left), then conclude the merge: git task commit {task}"
                ));
                said.hint(format!(
                    "or give it up: git -C {} merge --abort",
                    crate::contract::judge::shell_quote(&worktree)
                ));
                vec![Call::on("commit", &task)]
            } else {
                let shown: Vec<String> = paths
                    .iter()
                    .take(10)
                    .map(|p| escape(p).into_owned())
                    .collect();
                said.error(&format!(
                    "task '{task}' has uncommitted changes in '{worktree}': {}",
                    shown.join(", ")
                ));
                said.hint(format!(
                    "commit them (git task commit {task}), then sync again (git task sync {task})"
                ));
                vec![Call::on("commit", &task), Call::on("sync", &task)]
            };
            said.hint("nothing was changed");
            let value = to_value(
                Stopped::Dirty {
                    task,
                    worktree,
                    paths,
                    merging,
                },
                said.hints,
                next,
            );
            let text = said.text;
            emit(ctx, &StoppedReport { value, text }, Done::Negative)
        }
    }
}

/// The JSON Schemas of what `--json` prints, one per shape (published in `schema/`).
pub fn json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    use crate::output::schema_of;
    vec![
        schema_of::<SyncReport>(generator),
        schema_of::<StoppedReport>(generator),
    ]
}
