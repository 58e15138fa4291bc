//! `git task queue add <id>.. | status | remove <id> | run`: the local landing queue
//! (`merge::queue`).

use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::merge::queue::{self, Done as Finished, Item, QueueStatus, RunOptions, RunReport, Step};
use crate::output::{escape, Out, Report};
use crate::task::TaskId;

/// A persistent local landing queue per target branch: batches, checks once, bisects failures
#[derive(clap::Args, Debug)]
pub struct QueueArgs {
    #[command(subcommand)]
    pub action: QueueAction,
}

/// What to do with the queue.
#[derive(clap::Subcommand, Debug)]
pub enum QueueAction {
    /// Add tasks to the queue of their base branch (or --into), in order; a queued task stays where it is
    Add {
        /// Task ids
        #[arg(value_parser = TaskId::parse, required = true)]
        ids: Vec<TaskId>,
        /// The branch to land on (default: the tasks' base branch)
        #[arg(long, value_name = "BRANCH")]
        into: Option<String>,
        /// Then land the queue in the background (a runner that exits when the queue is empty)
        #[arg(long)]
        run: bool,
    },
    /// Show the queue of a branch (default: every branch that has one)
    Status {
        /// The branch whose queue to show
        #[arg(long, value_name = "BRANCH")]
        into: Option<String>,
    },
    /// Take a task out of the queue
    Remove {
        /// Task id
        #[arg(value_parser = TaskId::parse)]
        id: TaskId,
        /// The branch whose queue it is in (default: whichever holds it)
        #[arg(long, value_name = "BRANCH")]
        into: Option<String>,
    },
    /// Land the queue: batches of ready tasks, each judged and checked as merge does, on the branch's tip
    Run {
        /// The branch whose queue to land (default: every branch that has one)
        #[arg(long, value_name = "BRANCH")]
        into: Option<String>,
        /// At most N tasks per landing and per check run
        #[arg(long, value_name = "N", default_value_t = 32)]
        batch: usize,
        /// At most J check runs at once
        #[arg(long, value_name = "J", default_value_t = 1)]
        jobs: usize,
        /// Keep running: land tasks as they are added, until interrupted
        #[arg(long)]
        follow: bool,
        /// Run as the detached background runner (set by git-task itself)
        #[arg(long, hide = true)]
        detached: bool,
    },
}

fn short(name: &str) -> &str {
    crate::git::refs::short_name(name)
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Added {
    #[schemars(extend("const" = "queue_add"))]
    kind: &'static str,
    /// The target branch (full ref name).
    into: String,
    /// The tasks added now, in order.
    added: Vec<String>,
    /// The tasks named that were queued already (left where they were).
    already: Vec<String>,
    /// The queue after it, in landing order.
    queued: Vec<Item>,
    /// `--run`: whether the background runner was started (it does nothing when another
    /// runner holds the queue).
    #[serde(skip_serializing_if = "Option::is_none")]
    runner_started: Option<bool>,
}

impl Report for Added {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        for t in &self.added {
            let pos = self.queued.iter().position(|i| &i.task == t).unwrap_or(0) + 1;
            out.note(format_args!(
                "Queued '{t}' to land on '{}' (position {pos})",
                escape(short(&self.into))
            ));
        }
        for t in &self.already {
            out.note(format_args!(
                "Task '{t}' is queued already for '{}'",
                escape(short(&self.into))
            ));
        }
        match self.runner_started {
            Some(true) => out.note(format_args!(
                "Landing it in the background: git task queue status; git task log --follow --all"
            )),
            Some(false) => {
                out.warn("could not start the background runner: run git task queue run")
            }
            None => out.hint("land the queue with: git task queue run"),
        }
        Ok(())
    }
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Removed {
    #[schemars(extend("const" = "queue_remove"))]
    kind: &'static str,
    task: String,
    /// The branch (full ref name) whose queue it left; `null`: it was in none.
    from: Option<String>,
}

impl Report for Removed {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        match &self.from {
            Some(b) => out.note(format_args!(
                "Took '{}' out of the queue for '{}'",
                self.task,
                escape(short(b))
            )),
            None => out.note(format_args!("Task '{}' is not queued", self.task)),
        }
        Ok(())
    }
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Status {
    #[schemars(extend("const" = "queue_status"))]
    kind: &'static str,
    /// One entry per branch that has a queue.
    queues: Vec<QueueStatus>,
}

fn done_line(d: &Finished) -> String {
    match (&d.commit, &d.kind) {
        (Some(c), _) => format!("{} {}", d.task, &c[..c.len().min(12)]),
        (None, Some(kind)) => format!(
            "{} {kind}: {}",
            d.task,
            escape(d.reason.as_deref().unwrap_or(""))
        ),
        (None, None) => d.task.to_string(),
    }
}

impl Report for Status {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        if self.queues.is_empty() {
            out.line("No landing queue")?;
        }
        for q in &self.queues {
            let runner = q
                .runner
                .as_deref()
                .map(|p| format!(" (runner: pid {p})"))
                .unwrap_or_default();
            out.line(format_args!(
                "Queue for '{}': {} waiting{runner}",
                escape(short(&q.into)),
                q.queued.len()
            ))?;
            for (i, w) in q.queued.iter().enumerate() {
                out.line(format_args!("  {:>3}. {}  {}", i + 1, w.task, w.status))?;
            }
            if let Some(last) = q.landed.last() {
                out.line(format_args!("  last landed: {}", done_line(last)))?;
            }
            for e in q.ejected.iter().rev().take(5) {
                out.line(format_args!("  ejected: {}", done_line(e)))?;
            }
        }
        Ok(())
    }
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Ran {
    #[schemars(extend("const" = "queue_run"))]
    kind: &'static str,
    /// One entry per branch whose queue was run.
    queues: Vec<RunReport>,
}

impl Report for Ran {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        if self.queues.is_empty() {
            out.note("No landing queue: queue tasks with 'git task queue add <id>..'");
        }
        for q in &self.queues {
            let into = escape(short(&q.into));
            if let Some(pid) = &q.busy {
                out.note(format_args!(
                    "The queue for '{into}' is being landed by another runner (pid {pid})"
                ));
                continue;
            }
            out.note(format_args!(
                "Queue for '{into}': {} landed, {} ejected, {} check run{}, {} waiting",
                q.landed.len(),
                q.ejected.len(),
                q.check_runs,
                if q.check_runs == 1 { "" } else { "s" },
                q.remaining.len()
            ));
            for e in &q.ejected {
                out.hint(format_args!(
                    "'{}' was ejected ({}): fix it, then queue it again: git task queue add {}",
                    e.task, e.kind, e.task
                ));
            }
        }
        Ok(())
    }
}

/// The ids of `tasks`, separated by spaces.
fn ids(tasks: &[TaskId]) -> String {
    let ids: Vec<&str> = tasks.iter().map(TaskId::as_str).collect();
    ids.join(" ")
}

fn show_step(out: &Out, step: Step<'_>) {
    if out.is_json() {
        return;
    }
    match step {
        Step::Trying { into, tasks } => out.note(format_args!(
            "Landing {} task{} on '{}': {}",
            tasks.len(),
            if tasks.len() == 1 { "" } else { "s" },
            escape(short(into)),
            ids(tasks)
        )),
        Step::Checking {
            into,
            tasks,
            prefixes,
        } => out.note(format_args!(
            "Checking {} landings on '{}' at once: the first {} of {}",
            prefixes.len(),
            escape(short(into)),
            prefixes
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            ids(tasks)
        )),
        Step::Landed { into, tasks } => {
            for t in tasks {
                out.note(format_args!(
                    "Landed '{}' on '{}'{}",
                    t.task,
                    escape(short(into)),
                    t.commit
                        .as_deref()
                        .map(|c| format!(" as {}", &c[..c.len().min(12)]))
                        .unwrap_or_default()
                ));
            }
        }
        Step::Ejected { into, task } => {
            if let Some(output) = task
                .checks
                .as_ref()
                .and_then(|c| c.get("commands"))
                .and_then(|c| c.as_array())
                .and_then(|c| c.last())
                .and_then(|c| c.get("output"))
                .and_then(|o| o.as_str())
            {
                out.raw_err(output);
                if !output.is_empty() && !output.ends_with('\n') {
                    out.raw_err("\n");
                }
            }
            out.warn(format_args!(
                "ejected '{}' from the queue for '{}': {}",
                task.task,
                short(into),
                task.reason
            ));
            if let Some(dir) = &task.checkout {
                out.hint(format_args!(
                    "the checks ran on the tree that would land, checked out in '{dir}' (kept for inspection)"
                ));
            }
        }
    }
}

pub fn run(ctx: &Ctx, args: &QueueArgs) -> CmdResult {
    let (repo, settings) = (&ctx.repo, &ctx.settings);
    match &args.action {
        QueueAction::Add { ids, into, run } => {
            let added = queue::add(repo, settings, ids, into.as_deref())?;
            let runner_started = run.then(|| queue::spawn_runner(repo, &added.into));
            emit(
                ctx,
                &Added {
                    kind: "queue_add",
                    into: added.into.into(),
                    added: added.added.into_iter().map(String::from).collect(),
                    already: added.already.into_iter().map(String::from).collect(),
                    queued: added.queued,
                    runner_started,
                },
                Done::Ok,
            )
        }
        QueueAction::Remove { id, into } => {
            let removed = queue::remove(repo, settings, id, into.as_deref())?;
            emit(
                ctx,
                &Removed {
                    kind: "queue_remove",
                    task: removed.task.into(),
                    from: removed.from.map(String::from),
                },
                Done::Ok,
            )
        }
        QueueAction::Status { into } => {
            let queues = queue::status(repo, settings, into.as_deref())?;
            emit(
                ctx,
                &Status {
                    kind: "queue_status",
                    queues,
                },
                Done::Ok,
            )
        }
        QueueAction::Run {
            into,
            batch,
            jobs,
            follow,
            detached,
        } => {
            if *detached {
                queue::detach();
            }
            let opts = RunOptions {
                into: into.clone(),
                batch: *batch,
                jobs: *jobs,
                follow: *follow,
                stream_checks: ctx.out.progress_enabled(),
            };
            let queues = queue::run(repo, settings, &opts, &mut |step| show_step(&ctx.out, step))?;
            let done = if queues.iter().any(|q| !q.ejected.is_empty()) {
                Done::Negative
            } else {
                Done::Ok
            };
            emit(
                ctx,
                &Ran {
                    kind: "queue_run",
                    queues,
                },
                done,
            )
        }
    }
}

/// The JSON Schemas of what `--json` prints, one per shape (published in `schema/`).
pub fn json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    use crate::output::schema_of;
    vec![
        schema_of::<Added>(generator),
        schema_of::<Removed>(generator),
        schema_of::<Status>(generator),
        schema_of::<Ran>(generator),
    ]
}
