//! `git task remove`: delete a task's worktree and branch, saving work first.

use crate::attempt::SavedAttempt;
use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::git::status::ignored::Ignored;
use crate::lifecycle::remove::{self, Removed};
use crate::output::{Out, Report};
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

#[derive(serde::Serialize, schemars::JsonSchema)]
struct RemoveReport {
    #[schemars(extend("const" = "remove"))]
    kind: &'static str,
    task: String,
    removed: bool,
    existed: bool,
    attempts: Vec<SavedAttempt>,
    /// Where repositories nested in the worktree were moved to.
    #[serde(skip_serializing_if = "Option::is_none")]
    attic: Option<String>,
    /// Ignored files deleted with the worktree.
    #[serde(skip_serializing_if = "is_none_ignored")]
    ignored: Ignored,
    /// Where the user should `cd`: they stood in the removed worktree.
    #[serde(skip_serializing_if = "Option::is_none")]
    cd: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<String>,
}

fn is_none_ignored(i: &Ignored) -> bool {
    i.files == 0
}

/// Writes a size for people: bytes, KiB, MiB or GiB.
fn size(bytes: u64) -> String {
    const UNITS: [&str; 3] = ["KiB", "MiB", "GiB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
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
        if let Some(attic) = &self.attic {
            out.note(format_args!(
                "Moved the repositories nested in the worktree to '{attic}'"
            ));
        }
        if self.ignored.files > 0 {
            let s = if self.ignored.files == 1 { "" } else { "s" };
            out.note(format_args!(
                "Deleting {} ignored file{s} ({}) with the worktree",
                self.ignored.files,
                size(self.ignored.bytes)
            ));
        }
        for w in &self.warnings {
            out.warn(w);
        }
        out.note(format_args!("Removed task '{}'", self.task));
        if let Some(dir) = &self.cd {
            out.hint(format_args!(
                "your directory was removed with the task: cd {dir}"
            ));
        }
        Ok(())
    }
}

pub fn run(ctx: &Ctx, args: &RemoveArgs) -> CmdResult {
    match remove::remove(&ctx.repo, &ctx.settings, &args.id, args.force)? {
        Ok(Removed::Done(done)) => {
            let done = *done;
            let report = RemoveReport {
                kind: "remove",
                task: args.id.to_string(),
                removed: true,
                existed: true,
                attempts: done.attempts,
                attic: done.attic.map(|a| a.display().to_string()),
                ignored: done.ignored,
                cd: done.cd.map(|p| p.display().to_string()),
                warnings: done.warnings,
            };
            let result = emit(ctx, &report, Done::Ok);
            // The worktree's files (ignored ones included) are deleted only now, after the report.
            if let Some(mut aside) = done.aside {
                if let Err(e) = aside.start_delete() {
                    ctx.out.warn(format_args!("{e}"));
                    ctx.out
                        .hint("the task is removed; 'git task sweep' deletes what is left");
                }
            }
            result
        }
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
                    attic: None,
                    ignored: Ignored::default(),
                    cd: None,
                    warnings: Vec::new(),
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
            if !dirty.nested.is_empty() {
                err = err.hint(format!(
                    "{} holds a repository of its own; with --force it is moved into the task's attic under the git dir, never deleted",
                    dirty.nested.join(", ")
                ));
            }
            err = err
                .hint(format!(
                    "commit them in the worktree, or see them with: git -C {} status",
                    crate::contract::judge::shell_quote(&dirty.path)
                ))
                .hint(format!("or remove anyway (the changes are saved as an attempt): git task remove --force {}", dirty.id));
            Err(err)
        }
    }
}

/// The JSON Schemas of what `--json` prints, one per shape (published in `schema/`).
pub fn json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    use crate::output::schema_of;
    vec![schema_of::<RemoveReport>(generator)]
}
