//! `git task merge`: the gate; lands tasks whose whole diff keeps the contract and whose checks pass.
//!
//! About 500 lines: most of it is the rendering of the eight refusals (human and JSON), each
//! with the commands that fix it; the gate itself is `src/merge/`.

use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::contract::judge::shell_quote;
use crate::contract::Verdict;
use crate::error::Call;
use crate::merge::{self, Landed, Options, Outcome, Refusal, Strategy};
use crate::output::{escape, Out, Palette, Refusal as WithNext, Report, Said};
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
    /// Land on the branch of remote R: fetched, judged on its tip, pushed with a lease
    #[arg(long, value_name = "R")]
    pub remote: Option<String>,
}

/// The answer of a merge that landed.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct MergeReport {
    #[schemars(extend("const" = "merge"))]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    remote: Option<String>,
    #[serde(flatten)]
    landed: Landed,
    /// Live tasks on the same branch that conflict with its new tip.
    now_conflicting: Vec<crate::overlaps::BaseConflict>,
}

fn short_id(id: &str) -> &str {
    &id[..12.min(id.len())]
}

fn short_ref(name: &str) -> &str {
    crate::git::refs::short_name(name)
}

impl MergeReport {
    /// The target as the user knows it: `main`, or `origin/main` on a remote.
    fn shown(&self, into: &str) -> String {
        match &self.remote {
            Some(r) => format!("{r}/{}", short_ref(into)),
            None => short_ref(into).to_owned(),
        }
    }
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
                    self.shown(&t.into),
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
                self.shown(&t.into),
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
            let syncs: Vec<String> = self
                .now_conflicting
                .iter()
                .map(|c| format!("git task sync {}", c.task))
                .collect();
            out.hint(format_args!(
                "bring the new commits into those tasks and resolve there: {}",
                syncs.join("; ")
            ));
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

/// A refused merge's JSON is always one of [`RefusedJson`].
impl schemars::JsonSchema for Refused {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        RefusedJson::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        WithNext::<RefusedJson>::json_schema(generator)
    }
}

/// The JSON of a refused merge, one variant per refusal (`kind` tells them apart).
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum RefusedJson {
    /// The changes break the contract (`contract_violation`): the SPEC §5 report.
    #[serde(rename = "contract_violation")]
    Violation(Verdict),
    /// The task's worktree has uncommitted work; only its branch tip would land.
    UncommittedWork {
        task: String,
        worktree: String,
        paths: Vec<String>,
    },
    /// The task's worktree is not on its branch.
    WorktreeNotOnBranch {
        task: String,
        worktree: String,
        branch: String,
        head: String,
    },
    /// The task's record was moved or rewritten by hand.
    RecordTampered {
        task: String,
        reason: String,
        /// The allowed globs frozen at start (`null`: that contract could not be found).
        allowed: Option<Vec<String>>,
    },
    /// A commit of the task holds a path git would never write (`contract_violation`).
    #[serde(rename = "contract_violation")]
    UnsafeHistory {
        task: String,
        commit: String,
        violations: Vec<crate::contract::Violation>,
        repair: String,
    },
    /// A check failed on the tree that would land.
    ChecksFailed {
        task: String,
        checks: crate::checks::Run,
        /// The checkout the checks ran in, kept for inspection.
        checkout: Option<String>,
        /// Whether the checks also fail on the target's tip without the task (then the target,
        /// not the task, breaks them); absent when that was not run.
        #[serde(skip_serializing_if = "Option::is_none")]
        fails_without_task: Option<bool>,
    },
    /// The task conflicts with the target branch.
    MergeConflict {
        task: String,
        into: String,
        paths: Vec<String>,
        hint: String,
    },
    /// The worktree where the target branch is checked out has changes in the way.
    TargetDirty {
        into: String,
        worktree: String,
        paths: Vec<String>,
        detail: String,
    },
    /// `--remote`: the remote's branch moved during every try.
    RemoteMoved {
        into: String,
        remote: String,
        tries: u32,
    },
}

/// The JSON value of a refusal (keys sorted, as `serde_json::Value` keeps them).
fn to_value(refused: WithNext<RefusedJson>) -> serde_json::Value {
    serde_json::to_value(refused).unwrap_or_default()
}

impl From<Verdict> for RefusedJson {
    fn from(verdict: Verdict) -> Self {
        RefusedJson::Violation(verdict)
    }
}

impl Report for Refused {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        out.raw_err(&self.text);
        Ok(())
    }
}

/// A refusal's JSON: its report, its `hints` and its `next` calls.
fn refusal_value(
    report: impl Into<RefusedJson>,
    hints: Vec<String>,
    next: Vec<Call>,
) -> serde_json::Value {
    to_value(WithNext {
        report: report.into(),
        hints,
        next,
    })
}

/// `merge` of `task` again, as the tool call.
fn merge_again(task: &str) -> Call {
    Call::new("merge").arg("ids", vec![task.to_owned()])
}

/// The target's tips before and after a landing that only wrote new squash commits on top of
/// it (what lets the post-merge forecast reuse what it knew of the tip before).
fn squashed(landed: &Landed) -> Option<(crate::git::ObjectId, crate::git::ObjectId)> {
    if !landed.tasks.iter().all(|t| t.strategy == Strategy::Squash) {
        return None;
    }
    Some((
        landed.old_tip.as_deref()?.parse().ok()?,
        landed.new_tip.as_deref()?.parse().ok()?,
    ))
}

/// For uncommitted work, the task's whole verdict when part of what it changed breaks its
/// contract: `commit` would leave that part behind, so the way out puts it back first.
fn outside_contract(ctx: &Ctx, refusal: &Refusal) -> Option<crate::contract::Verdict> {
    let Refusal::UncommittedWork { task, .. } = refusal else {
        return None;
    };
    let id = TaskId::parse(task).ok()?;
    let record = crate::resolve::existing(&ctx.repo, &id).ok()?;
    crate::changes::judge_task(&ctx.repo, &record)
        .ok()
        .filter(|v| !v.is_clean() && !v.next.is_empty())
}

fn refused(p: &Palette, refusal: Refusal, outside: Option<&crate::contract::Verdict>) -> Refused {
    let mut said = Said::new(p);
    let (value, text) = match refusal {
        Refusal::Violation(mut verdict) => {
            said.raw(&crate::output::violation::render(&verdict, p));
            said.hint("nothing was merged");
            // Unless its way out is a merge already (another strategy): then merge again.
            if verdict.next.last().is_none_or(|c| c.tool != "merge") {
                let again = format!("then merge again: git task merge {}", verdict.task);
                said.hint(again.as_str());
                verdict.hints.push(again);
                verdict.next.push(merge_again(&verdict.task));
            }
            let (hints, next) = (verdict.hints.clone(), verdict.next.clone());
            (refusal_value(verdict, hints, next), said.text)
        }
        Refusal::UncommittedWork {
            task,
            worktree,
            paths,
        } => {
            said.error(&format!(
                "task '{task}' has uncommitted work in '{worktree}': {}; only its branch tip lands, so nothing was merged",
                list(&paths)
            ));
            let mut next = Vec::new();
            if let Some(v) = outside {
                let revert = &v.next[0];
                let paths: Vec<String> = revert.arguments["paths"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|p| p.as_str().map(str::to_owned))
                    .collect();
                let options: Vec<String> = paths
                    .iter()
                    .map(|p| format!("--path {}", shell_quote(p)))
                    .collect();
                said.hint(format!(
                    "part of it breaks the contract ({}), which commit leaves out: put that back first, saved as an attempt: git task revert {task} {}",
                    list(&paths),
                    options.join(" ")
                ));
                next.push(revert.clone());
            }
            said.hint(format!(
                "commit it first: git task commit {task}   (or: git -C {} commit)",
                shell_quote(&worktree)
            ));
            said.hint(format!("then merge again: git task merge {task}"));
            next.extend([Call::on("commit", &task), merge_again(&task)]);
            let report = RefusedJson::UncommittedWork {
                task,
                worktree,
                paths,
            };
            (refusal_value(report, said.hints, next), said.text)
        }
        Refusal::NotOnBranch {
            task,
            worktree,
            branch,
            head,
        } => {
            said.error(&format!(
                "the worktree of task '{task}' ('{worktree}') is not on its branch '{branch}' but on {}; nothing was merged",
                escape(&head)
            ));
            said.hint(format!(
                "return it to the branch: git -C {} switch {}",
                shell_quote(&worktree),
                shell_quote(&branch)
            ));
            said.hint(format!("then merge again: git task merge {task}"));
            let report = RefusedJson::WorktreeNotOnBranch {
                task,
                worktree,
                branch,
                head,
            };
            // Switching a worktree back is git's, not a tool's.
            (refusal_value(report, said.hints, Vec::new()), said.text)
        }
        Refusal::RecordTampered { task, why, allowed } => {
            said.error(&format!("{}; nothing was merged", escape(&why)));
            let shown = match &allowed {
                Some(globs) if globs.is_empty() => "any path not forbidden".to_owned(),
                Some(globs) => globs
                    .iter()
                    .map(|g| escape(g).into_owned())
                    .collect::<Vec<_>>()
                    .join(", "),
                None => "(it could not be found)".to_owned(),
            };
            said.hint(format!(
                "the contract frozen at start allows: {shown}; the record of '{task}' (refs/tasks/{task}/record) was moved or rewritten by hand"
            ));
            said.hint(format!(
                "see what happened with: git log -g refs/tasks/{task}/record"
            ));
            let report = RefusedJson::RecordTampered {
                task,
                reason: why,
                allowed,
            };
            (refusal_value(report, said.hints, Vec::new()), said.text)
        }
        Refusal::UnsafeHistory { task, commit, path } => {
            said.error(&format!(
                "unsafe_path: commit {} of task '{task}' holds the path '{}', which git would never write; nothing was merged",
                short_id(&commit),
                escape(&path)
            ));
            said.hint(
                "rewrite the task's history without that path (reset the branch to a commit before it and redo the work), then merge again",
            );
            said.hint(format!(
                "or start the task over from its base, saving the work as an attempt first: git task reset {task}"
            ));
            let repair = format!("Commit {commit} adds '{path}', a path git would never write; rewrite the task's history without it (e.g. reset the branch to a commit before it and redo the work), then merge again.");
            let next = vec![Call::on("reset", &task)];
            let report = RefusedJson::UnsafeHistory {
                task,
                commit,
                violations: vec![crate::contract::Violation {
                    file: path,
                    reason: crate::contract::Reason::UnsafePath,
                    rule: "git's verify_path".into(),
                }],
                repair,
            };
            (refusal_value(report, said.hints, next), said.text)
        }
        Refusal::ChecksFailed {
            task,
            checks,
            checkout,
            baseline,
        } => {
            if let Some(last) = checks.commands.last() {
                said.raw(&last.output);
                if !last.output.is_empty() && !last.output.ends_with('\n') {
                    said.raw("\n");
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
                said.error(&format!(
                    "check '{}' of task '{task}' {how}; nothing was merged",
                    last.command
                ));
            }
            if let Some(dir) = &checkout {
                said.hint(format!("the checks ran on the tree that would land, checked out in '{dir}' (kept for inspection)"));
            }
            let fails_without_task = baseline.as_ref().map(|b| b.fails_without_task);
            if fails_without_task == Some(true) {
                said.hint(format!(
                    "the check also fails on the target's tip without the task: the target breaks it, not the task; fix it there, or fix the contract's check (git task start {task} --reset with another --check), or land without the checks: git task merge {task} --no-checks"
                ));
            } else {
                said.hint(format!("the worktree is kept: cd \"$(git task path {task})\", fix it, commit (git task commit {task}), and merge again (git task merge {task})"));
            }
            if baseline.as_ref().is_some_and(|b| !b.worktreeinclude) {
                said.hint("the target has no .worktreeinclude: no ignored file (node_modules/, target/, ...) is copied into the checkout the checks run in; list what they need there".to_owned());
            }
            // After the fix (the agent's own edit): commit it, then merge again; a check the
            // target itself fails is the user's to decide (`--no-checks` is no MCP argument).
            let next = if fails_without_task == Some(true) {
                Vec::new()
            } else {
                vec![Call::on("commit", &task), merge_again(&task)]
            };
            let report = RefusedJson::ChecksFailed {
                task,
                checks,
                checkout,
                fails_without_task,
            };
            (refusal_value(report, said.hints, next), said.text)
        }
        Refusal::Conflict {
            task,
            into,
            paths,
            lands_with,
        } if !lands_with.is_empty() => {
            said.error(&format!(
                "replaying the commits of task '{task}' one by one on '{}' conflicts; nothing was merged. Conflicting paths:",
                short_ref(&into)
            ));
            for path in &paths {
                said.raw(&format!("  {}\n", escape(path)));
            }
            let modes: Vec<String> = lands_with.iter().map(|m| format!("--{m}")).collect();
            let hint = format!("git task merge {task} --{}", lands_with[0]);
            said.hint(format!(
                "the task's net change lands without a conflict with {}: {hint}",
                modes.join(" or ")
            ));
            let next = vec![merge_again(&task).arg("strategy", lands_with[0])];
            let report = RefusedJson::MergeConflict {
                task,
                into,
                paths,
                hint,
            };
            (refusal_value(report, said.hints, next), said.text)
        }
        Refusal::Conflict {
            task, into, paths, ..
        } => {
            said.error(&format!(
                "task '{task}' conflicts with '{}'; nothing was merged. Conflicting paths:",
                short_ref(&into)
            ));
            for path in &paths {
                said.raw(&format!("  {}\n", escape(path)));
            }
            let hint = format!("git task sync {task}");
            said.hint(format!(
                "bring '{}' into the task and resolve there: {hint}",
                short_ref(&into)
            ));
            said.hint(format!("then merge again: git task merge {task}"));
            let next = vec![Call::on("sync", &task)];
            let report = RefusedJson::MergeConflict {
                task,
                into,
                paths,
                hint,
            };
            (refusal_value(report, said.hints, next), said.text)
        }
        Refusal::RemoteMoved {
            into,
            remote,
            tries,
        } => {
            said.error(&format!(
                "'{}' on '{remote}' moved during each of {tries} tries; nothing was merged",
                short_ref(&into)
            ));
            said.hint("each landing was judged on the tip fetched, and another push landed first");
            said.hint("run the merge again");
            let report = RefusedJson::RemoteMoved {
                into,
                remote,
                tries,
            };
            // The merge tool lands locally only: no call lands on a remote.
            (refusal_value(report, said.hints, Vec::new()), said.text)
        }
        Refusal::TargetDirty {
            into,
            worktree,
            paths,
            detail,
        } => {
            if paths.is_empty() {
                // Not a file in the way (e.g. an unfinished merge there): pass on what git said.
                let shown: Vec<&str> = detail
                    .lines()
                    .map(|l| {
                        l.trim_start_matches("error: ")
                            .trim_start_matches("fatal: ")
                            .trim()
                    })
                    .filter(|l| !l.is_empty())
                    .collect();
                said.error(&format!(
                    "cannot update '{worktree}', where '{}' is checked out: {}; nothing was merged",
                    short_ref(&into),
                    escape(&shown.join("; "))
                ));
            } else {
                said.error(&format!(
                    "merging would overwrite local changes in '{worktree}', where '{}' is checked out: {}; nothing was merged",
                    short_ref(&into),
                    list(&paths)
                ));
            }
            said.hint(format!("commit or stash the changes there (git -C {worktree} stash -u), or finish what is in progress, then merge again"));
            let report = RefusedJson::TargetDirty {
                into,
                worktree,
                paths,
                detail,
            };
            (refusal_value(report, said.hints, Vec::new()), said.text)
        }
    };
    Refused { value, text }
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

/// The progress line of a merge waiting for its turn on the target (stderr is a terminal).
fn show_wait(w: &merge::Waiting) {
    use std::io::Write;
    let text = if w.taken {
        format!(
            "\rWaited {} s for the merge into '{}'; merging now\x1b[K\n",
            w.waited.as_secs(),
            w.branch
        )
    } else {
        format!(
            "\rWaiting for the merge into '{}' by {}{}: {} s\x1b[K",
            w.branch,
            w.holder(),
            match w.ahead {
                0 => String::new(),
                n => format!(", {n} more ahead"),
            },
            w.waited.as_secs()
        )
    };
    let _ = std::io::stderr().write_all(text.as_bytes());
}

pub fn run(ctx: &Ctx, args: &MergeArgs) -> CmdResult {
    let ids = if args.ids.is_empty() {
        vec![crate::resolve::resolve(&ctx.repo, &ctx.settings, None)?
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
        on_wait: ctx
            .out
            .progress_enabled()
            .then_some(show_wait as fn(&merge::Waiting)),
    };
    let remote = args
        .remote
        .as_deref()
        .map(|r| crate::remote::resolve(&ctx.repo, Some(r)))
        .transpose()?;
    // A base moved outside git-task: looked at before the landing moves it (SPEC §11).
    let moved = match &remote {
        Some(_) => Vec::new(),
        None => crate::audit::before_merge(&ctx.repo, &ids, args.into.as_deref())?,
    };
    let outcome = match &remote {
        Some(r) => crate::remote::merge::merge(&ctx.repo, &ctx.settings, &ids, &opts, r)?,
        None => merge::merge(&ctx.repo, &ctx.settings, &ids, &opts)?,
    };
    if !matches!(outcome, Outcome::Landed(_)) {
        super::warn_base_moved(&ctx.out, &moved);
    }
    match outcome {
        Outcome::Landed(mut landed) => {
            // Said with the landing's own warnings (and in its JSON `warnings`).
            landed
                .warnings
                .extend(moved.iter().map(super::base_moved_text));
            // The forecast is advice: failing to compute it does not undo a landed merge. It
            // looks at the branch here, so not after a landing on a remote.
            let now_conflicting = match &remote {
                Some(_) => Vec::new(),
                None => {
                    crate::overlaps::conflicting_with(&ctx.repo, &landed.into, squashed(&landed))
                        .unwrap_or_default()
                }
            };
            let done = emit(
                ctx,
                &MergeReport {
                    kind: "merge",
                    remote,
                    landed,
                    now_conflicting,
                },
                Done::Ok,
            );
            super::hint_base_moved(&ctx.out, &moved);
            done
        }
        Outcome::Refused(refusal) => {
            let outside = outside_contract(ctx, &refusal);
            emit(
                ctx,
                &refused(&ctx.out.err_palette, refusal, outside.as_ref()),
                Done::Negative,
            )
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
                hints: Vec::new(),
                next: Vec::new(),
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
                hints: Vec::new(),
                next: Vec::new(),
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
                hints: vec![format!("fix it, then run 'git task merge {task}' again")],
                next: vec![merge_again(&task)],
                task,
                already: false,
                checks,
            },
            Done::Negative,
        ),
    }
}

/// The answer of accepting a patch-mode task.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct AcceptReport {
    #[schemars(extend("enum" = ["accept", "checks_failed"]))]
    kind: &'static str,
    task: String,
    already: bool,
    checks: Vec<crate::checks::Outcome>,
    /// What to run next when the checks failed (`hint: …` lines).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    hints: Vec<String>,
    /// The same steps as `git task mcp` tool calls.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    next: Vec<Call>,
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
                    .hint(self.hints.first().cloned().unwrap_or_default()),
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

/// The JSON Schemas of what `--json` prints, one per shape (published in `schema/`).
pub fn json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    use crate::output::schema_of;
    vec![
        schema_of::<MergeReport>(generator),
        schema_of::<AcceptReport>(generator),
        schema_of::<Refused>(generator),
        schema_of::<crate::output::violation::ViolationReport<'static>>(generator),
    ]
}
