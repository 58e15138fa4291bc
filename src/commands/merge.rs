//! `git task merge`: the gate; lands tasks whose whole diff keeps the contract and whose checks pass.
//!
//! About 500 lines: most of it is the rendering of the eight refusals (human and JSON), each
//! with the commands that fix it; the gate itself is `src/merge/`.

use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::contract::judge::shell_quote;
use crate::merge::{self, Landed, Options, Outcome, Refusal, Strategy};
use crate::output::{escape, Out, Palette, Report};
use crate::task::TaskId;
use owo_colors::OwoColorize;

/// Land tasks on their base branch if their contract holds and checks pass
#[derive(clap::Args, Debug)]
pub struct MergeArgs {
    /// Tasks to merge, in this order (default: the active task of this worktree)
    #[arg(value_parser = TaskId::parse)]
    pub ids: Vec<TaskId>,
    /// Land each task as one squash commit (default)
    #[arg(long, conflicts_with_all = ["merge", "rebase"])]
    pub squash: bool,
    /// Land each task as a merge commit
    #[arg(long, conflicts_with = "rebase")]
    pub merge: bool,
    /// Replay each task's own commits onto the branch
    #[arg(long, conflicts_with = "message")]
    pub rebase: bool,
    /// Land on BRANCH instead of the tasks' base branch
    #[arg(long, value_name = "BRANCH")]
    pub into: Option<String>,
    /// Keep worktree and branch afterwards (default: task.keepOnMerge)
    #[arg(long)]
    pub keep: bool,
    /// Skip the contract's checks (recorded in the event log)
    #[arg(long)]
    pub no_checks: bool,
    /// Message of the squash or merge commit
    #[arg(short, long, value_name = "MSG")]
    pub message: Option<String>,
}

/// The answer of a merge that landed.
#[derive(serde::Serialize)]
struct MergeReport {
    kind: &'static str,
    #[serde(flatten)]
    landed: Landed,
    /// Live tasks on the same branch that conflict with its new tip.
    now_conflicting: Vec<crate::overlaps::BaseConflict>,
}

fn short_id(id: &str) -> &str {
    &id[..12.min(id.len())]
}

fn short_ref(name: &str) -> &str {
    name.strip_prefix("refs/heads/").unwrap_or(name)
}

impl Report for MergeReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        let p = &out.palette;
        for t in &self.landed.tasks {
            let commit = t.commit.as_deref().map(short_id).unwrap_or("(no change)");
            if t.already_merged {
                out.line(format_args!(
                    "Task '{}' was already merged into {} as {commit} ({}); nothing to do",
                    t.task.style(p.id),
                    short_ref(&t.into),
                    t.strategy
                ))?;
                continue;
            }
            let checks = match &t.checks {
                Some(c) if c.skipped => "checks skipped".to_owned(),
                Some(c) if c.commands.is_empty() => "no checks".to_owned(),
                Some(c) => format!(
                    "{} check{} passed",
                    c.commands.len(),
                    if c.commands.len() == 1 { "" } else { "s" }
                ),
                None => "no checks".to_owned(),
            };
            let how = match (t.strategy, t.commits.len()) {
                (Strategy::Rebase, n) => {
                    format!("{n} replayed commit{}", if n == 1 { "" } else { "s" })
                }
                (s, _) => s.to_string(),
            };
            out.line(format_args!(
                "Merged task '{}' into {} as {} ({how}; {checks})",
                t.task.style(p.id),
                short_ref(&t.into),
                commit.style(p.ok)
            ))?;
            if t.removed {
                out.note(format_args!(
                    "Removed the worktree and branch of '{}'",
                    t.task
                ));
            } else {
                out.note(format_args!(
                    "Kept the worktree of '{}' at {}",
                    t.task, t.worktree
                ));
            }
        }
        for w in &self.landed.updated_worktrees {
            out.note(format_args!(
                "Updated {} in '{}'",
                short_ref(&self.landed.into),
                w
            ));
        }
        for w in &self.landed.warnings {
            out.warn(w);
        }
        for c in &self.now_conflicting {
            out.warn(format_args!(
                "task '{}' now conflicts with {}: {}",
                c.task,
                short_ref(&self.landed.into),
                crate::output::escape(&c.paths.join(" "))
            ));
        }
        if !self.now_conflicting.is_empty() {
            out.hint("bring the new commits into those tasks with 'git task sync <id>' and resolve there");
        }
        if let Some(dir) = &self.landed.leave_cwd {
            out.note(format_args!(
                "The worktree you ran this from is gone: cd {}",
                shell_quote(dir)
            ));
        }
        Ok(())
    }
}

/// A refused merge: one JSON object for scripts, git-style text on stderr for people.
pub(crate) struct Refused {
    value: serde_json::Value,
    text: String,
}

impl serde::Serialize for Refused {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(s)
    }
}

impl Report for Refused {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        out.raw_err(&self.text);
        Ok(())
    }
}

fn error_line(p: &Palette, text: &str) -> String {
    format!("{} {text}\n", "error:".style(p.error))
}

fn hint_line(p: &Palette, text: &str) -> String {
    format!("{} {text}\n", "hint:".style(p.hint))
}

fn refused(p: &Palette, refusal: Refusal) -> Refused {
    match refusal {
        Refusal::Violation(verdict) => {
            let mut text = crate::output::violation::render(&verdict, p);
            text.push_str(&hint_line(p, "nothing was merged"));
            Refused {
                value: serde_json::to_value(&verdict).unwrap_or_default(),
                text,
            }
        }
        Refusal::UncommittedWork {
            task,
            worktree,
            paths,
        } => {
            let mut text = error_line(
                p,
                &format!(
                    "task '{task}' has uncommitted work in '{worktree}': {}; only its branch tip lands, so nothing was merged",
                    list(&paths)
                ),
            );
            text.push_str(&hint_line(
                p,
                &format!(
                    "commit it first: git task commit {task}   (or: git -C {} commit)",
                    shell_quote(&worktree)
                ),
            ));
            text.push_str(&hint_line(
                p,
                &format!("then merge again: git task merge {task}"),
            ));
            let value = serde_json::json!({ "kind": "uncommitted_work", "task": task, "worktree": worktree, "paths": paths });
            Refused { value, text }
        }
        Refusal::NotOnBranch {
            task,
            worktree,
            branch,
            head,
        } => {
            let mut text = error_line(
                p,
                &format!(
                    "the worktree of task '{task}' ('{worktree}') is not on its branch '{branch}' but on {}; nothing was merged",
                    escape(&head)
                ),
            );
            text.push_str(&hint_line(
                p,
                &format!(
                    "return it to the branch: git -C {} switch {}",
                    shell_quote(&worktree),
                    shell_quote(&branch)
                ),
            ));
            text.push_str(&hint_line(
                p,
                &format!("then merge again: git task merge {task}"),
            ));
            let value = serde_json::json!({ "kind": "worktree_not_on_branch", "task": task, "worktree": worktree, "branch": branch, "head": head });
            Refused { value, text }
        }
        Refusal::RecordTampered { task, why, allowed } => {
            let mut text = error_line(p, &format!("{}; nothing was merged", escape(&why)));
            let shown = match &allowed {
                Some(globs) if globs.is_empty() => "any path not forbidden".to_owned(),
                Some(globs) => globs
                    .iter()
                    .map(|g| escape(g).into_owned())
                    .collect::<Vec<_>>()
                    .join(", "),
                None => "(it could not be found)".to_owned(),
            };
            text.push_str(&hint_line(
                p,
                &format!(
                    "the contract frozen at start allows: {shown}; the record of '{task}' (refs/tasks/{task}/record) was moved or rewritten by hand"
                ),
            ));
            text.push_str(&hint_line(
                p,
                &format!("see what happened with: git log -g refs/tasks/{task}/record"),
            ));
            let value = serde_json::json!({ "kind": "record_tampered", "task": task, "reason": why, "allowed": allowed });
            Refused { value, text }
        }
        Refusal::UnsafeHistory { task, commit, path } => {
            let mut text = error_line(
                p,
                &format!(
                    "unsafe_path: commit {} of task '{task}' holds the path '{}', which git would never write; nothing was merged",
                    short_id(&commit),
                    escape(&path)
                ),
            );
            text.push_str(&hint_line(
                p,
                "rewrite the task's history without that path (reset the branch to a commit before it and redo the work), then merge again",
            ));
            let repair = format!("Commit {commit} adds '{path}', a path git would never write; rewrite the task's history without it (e.g. reset the branch to a commit before it and redo the work), then merge again.");
            let value = serde_json::json!({ "kind": "contract_violation", "task": task, "commit": commit, "violations": [{ "file": path, "reason": "unsafe_path", "rule": "git's verify_path" }], "repair": repair });
            Refused { value, text }
        }
        Refusal::ChecksFailed {
            task,
            checks,
            checkout,
        } => {
            let mut text = String::new();
            if let Some(last) = checks.commands.last() {
                text.push_str(&last.output);
                if !last.output.is_empty() && !last.output.ends_with('\n') {
                    text.push('\n');
                }
                let how = if last.timed_out {
                    "timed out".to_owned()
                } else {
                    format!(
                        "failed (exit {})",
                        last.code
                            .map(|c| c.to_string())
                            .unwrap_or_else(|| "by a signal".into())
                    )
                };
                text.push_str(&error_line(
                    p,
                    &format!(
                        "check '{}' of task '{task}' {how}; nothing was merged",
                        last.command
                    ),
                ));
            }
            if let Some(dir) = &checkout {
                text.push_str(&hint_line(
                    p,
                    &format!("the checks ran on the tree that would land, checked out in '{dir}' (kept for inspection)"),
                ));
            }
            text.push_str(&hint_line(p, &format!("the worktree is kept: cd \"$(git task path {task})\", fix it, commit, and merge again")));
            let value = serde_json::json!({ "kind": "checks_failed", "task": task, "checks": checks, "checkout": checkout });
            Refused { value, text }
        }
        Refusal::Conflict { task, into, paths } => {
            let mut text = error_line(
                p,
                &format!(
                    "task '{task}' conflicts with '{}'; nothing was merged. Conflicting paths:",
                    short_ref(&into)
                ),
            );
            for path in &paths {
                text.push_str(&format!("  {}\n", escape(path)));
            }
            let hint = format!("git task sync {task}");
            text.push_str(&hint_line(
                p,
                &format!(
                    "bring '{}' into the task and resolve there: {hint}",
                    short_ref(&into)
                ),
            ));
            let value = serde_json::json!({ "kind": "merge_conflict", "task": task, "into": into, "paths": paths, "hint": hint });
            Refused { value, text }
        }
        Refusal::TargetDirty {
            into,
            worktree,
            paths,
            detail,
        } => {
            let mut text = if paths.is_empty() {
                // Not a file in the way (e.g. an unfinished merge there): pass on what git said.
                let said: Vec<&str> = detail
                    .lines()
                    .map(|l| {
                        l.trim_start_matches("error: ")
                            .trim_start_matches("fatal: ")
                            .trim()
                    })
                    .filter(|l| !l.is_empty())
                    .collect();
                error_line(
                    p,
                    &format!(
                        "cannot update '{worktree}', where '{}' is checked out: {}; nothing was merged",
                        short_ref(&into),
                        escape(&said.join("; "))
                    ),
                )
            } else {
                error_line(
                    p,
                    &format!(
                        "merging would overwrite local changes in '{worktree}', where '{}' is checked out: {}; nothing was merged",
                        short_ref(&into),
                        list(&paths)
                    ),
                )
            };
            text.push_str(&hint_line(
                p,
                &format!("commit or stash the changes there (git -C {worktree} stash -u), or finish what is in progress, then merge again"),
            ));
            let value = serde_json::json!({ "kind": "target_dirty", "into": into, "worktree": worktree, "paths": paths, "detail": detail });
            Refused { value, text }
        }
    }
}

fn list(paths: &[String]) -> String {
    let shown: Vec<String> = paths
        .iter()
        .take(10)
        .map(|p| escape(p).into_owned())
        .collect();
    let more = paths.len().saturating_sub(shown.len());
    let mut text = shown.join(", ");
    if more > 0 {
        text.push_str(&format!(" and {more} more"));
    }
    if text.is_empty() {
        text.push_str("(see 'git status')");
    }
    text
}

pub fn run(ctx: &Ctx, args: &MergeArgs) -> CmdResult {
    let ids = if args.ids.is_empty() {
        vec![crate::task::resolve(&ctx.repo, &ctx.settings, None)?
            .state
            .task_id()]
    } else {
        args.ids.clone()
    };
    let strategy = if args.merge {
        Strategy::Merge
    } else if args.rebase {
        Strategy::Rebase
    } else {
        Strategy::Squash
    };
    let opts = Options {
        strategy,
        into: args.into.clone(),
        keep: args.keep,
        no_checks: args.no_checks,
        message: args.message.clone(),
        stream_checks: ctx.out.progress_enabled(),
    };
    match merge::merge(&ctx.repo, &ctx.settings, &ids, &opts)? {
        Outcome::Landed(landed) => {
            // The forecast is advice: failing to compute it does not undo a landed merge.
            let now_conflicting =
                crate::overlaps::conflicting_with(&ctx.repo, &landed.into).unwrap_or_default();
            emit(
                ctx,
                &MergeReport {
                    kind: "merge",
                    landed,
                    now_conflicting,
                },
                Done::Ok,
            )
        }
        Outcome::Refused(refusal) => {
            emit(ctx, &refused(&ctx.out.err_palette, refusal), Done::Negative)
        }
        Outcome::Accepted { task, accepted } => report_accepted(ctx, task, *accepted),
    }
}

/// Reports what accepting a patch-mode task did.
fn report_accepted(ctx: &Ctx, task: String, accepted: crate::patch::Accepted) -> CmdResult {
    match accepted {
        crate::patch::Accepted::Done { checks, .. } => emit(
            ctx,
            &AcceptReport {
                kind: "accept",
                task,
                already: false,
                checks,
            },
            Done::Ok,
        ),
        crate::patch::Accepted::Already(_) => emit(
            ctx,
            &AcceptReport {
                kind: "accept",
                task,
                already: true,
                checks: Vec::new(),
            },
            Done::Ok,
        ),
        crate::patch::Accepted::Violation(verdict) => emit(
            ctx,
            &crate::output::violation::ViolationReport(&verdict),
            Done::Negative,
        ),
        crate::patch::Accepted::ChecksFailed(checks) => emit(
            ctx,
            &AcceptReport {
                kind: "checks_failed",
                task,
                already: false,
                checks,
            },
            Done::Negative,
        ),
    }
}

/// The answer of accepting a patch-mode task.
#[derive(serde::Serialize)]
struct AcceptReport {
    kind: &'static str,
    task: String,
    already: bool,
    checks: Vec<crate::checks::Outcome>,
}

impl Report for AcceptReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        if self.kind == "checks_failed" {
            for c in self.checks.iter().filter(|c| !c.ok()) {
                out.raw_err(&c.output);
                out.error(
                    &crate::Error::negative(format!(
                        "check '{}' failed; task '{}' was not accepted",
                        c.command, self.task
                    ))
                    .hint(format!(
                        "fix it, then run 'git task merge {}' again",
                        self.task
                    )),
                );
            }
            return Ok(());
        }
        if self.already {
            out.note(format_args!(
                "Task '{}' was already accepted; nothing to do",
                self.task
            ));
        } else {
            out.note(format_args!(
                "Accepted patch-mode task '{}' in place ({} check{} passed); its snapshot is dropped",
                self.task,
                self.checks.len(),
                if self.checks.len() == 1 { "" } else { "s" }
            ));
        }
        Ok(())
    }
}
