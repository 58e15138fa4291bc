//! The MCP tools: one per command, each with an input schema (derived from its argument
//! type) and the command line it stands for. A call becomes a `Command` by parsing that
//! command line with the CLI's own parser, so a tool takes exactly what the command takes.
//!
//! Left out on purpose, so that no tool runs a command the client chose: `exec`,
//! `start --setup` and `--check` (checks come from the contract a person committed or
//! configured), `start --contract FILE`, `merge --no-checks`, and `revert --patch-file`
//! (a write to any path).

use crate::commands::Command;
use crate::error::Error;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{Map, Value};

/// What a tool does to the repository, for MCP's annotations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Reads only (`readOnlyHint`).
    ReadOnly,
    /// Writes, but discards nothing.
    Writes,
    /// May discard or replace state (`destructiveHint`); work is saved as an attempt first.
    Destructive,
}

/// One tool: its name, what it says about itself, and how a call becomes a command line.
pub struct ToolDef {
    /// The tool's name: the command's.
    pub name: &'static str,
    /// One line for people.
    pub title: &'static str,
    /// What it does, for the model.
    pub description: &'static str,
    /// What it does to the repository.
    pub effect: Effect,
    /// Whether calling it again with the same arguments changes nothing more.
    pub idempotent: bool,
    /// The input schema (without `repo`, which [`schema`] adds).
    schema: fn() -> Map<String, Value>,
    /// Turns the call's arguments (without `repo`) into the command line after `git task --json`.
    argv: fn(Value) -> Result<Vec<String>, Error>,
}

impl ToolDef {
    /// The tool's input schema: its arguments plus `repo`.
    pub fn schema(&self) -> Map<String, Value> {
        let mut schema = (self.schema)();
        if let Some(Value::Object(props)) = schema.get_mut("properties") {
            // An optional argument is left out, not null: one `type` per property reads in
            // every client's dialect (`["string","null"]` does not).
            for prop in props.values_mut().filter_map(Value::as_object_mut) {
                if let Some(Value::Array(types)) = prop.get("type") {
                    let one: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
                    if let [only] = one.as_slice() {
                        prop.insert("type".into(), only.clone());
                    }
                }
                if let Some(Value::Array(values)) = prop.get_mut("enum") {
                    values.retain(|v| !v.is_null());
                }
            }
            props.insert(
                "repo".into(),
                serde_json::json!({
                    "type": "string",
                    "description": "Directory to run in, like 'git -C' (default: the server's working directory); relative paths are relative to it. Only a directory of the repository the server serves (a task's worktree, for one)"
                }),
            );
        }
        schema
    }

    /// Turns a call's arguments into the command it stands for.
    pub fn command(&self, args: Map<String, Value>) -> Result<Command, Error> {
        let mut argv = vec!["git-task".to_owned(), "--json".to_owned()];
        argv.extend((self.argv)(Value::Object(args))?);
        let command = crate::cli::parse_command(&argv).map_err(|e| {
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or_default();
            Error::input(first.strip_prefix("error: ").unwrap_or(first).to_owned()).hint(format!(
                "see the input schema of '{}' (tools/list)",
                self.name
            ))
        })?;
        Ok(command)
    }
}

fn schema_of<T: JsonSchema + 'static>() -> Map<String, Value> {
    (*rmcp::handler::server::tool::schema_for_input::<T>().unwrap_or_default()).clone()
}

fn parse<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T, Error> {
    serde_json::from_value(args).map_err(|e| {
        Error::input(format!("bad arguments for '{tool}': {e}"))
            .hint(format!("see the input schema of '{tool}' (tools/list)"))
    })
}

/// A command line under construction; values go as `--name=value`, so none is read as an option.
struct Line(Vec<String>);

impl Line {
    fn new(command: &str) -> Self {
        Line(vec![command.to_owned()])
    }

    fn flag(mut self, name: &str, on: bool) -> Self {
        if on {
            self.0.push(format!("--{name}"));
        }
        self
    }

    fn opt(mut self, name: &str, value: Option<impl std::fmt::Display>) -> Self {
        if let Some(v) = value {
            self.0.push(format!("--{name}={v}"));
        }
        self
    }

    fn opts(mut self, name: &str, values: &[String]) -> Self {
        for v in values {
            self.0.push(format!("--{name}={v}"));
        }
        self
    }

    /// A task id; one that would read as an option is refused here (no id starts with '-').
    fn id(mut self, id: Option<&str>) -> Result<Self, Error> {
        if let Some(id) = id {
            if id.starts_with('-') {
                return Err(Error::input(format!("'{id}' is not a valid task id"))
                    .hint("a task id is 1-64 characters of letters, digits, '.', '_' and '-', starting with a letter or digit"));
            }
            self.0.push(id.to_owned());
        }
        Ok(self)
    }

    /// Paths after `--`.
    fn paths(mut self, paths: &[String]) -> Self {
        if !paths.is_empty() {
            self.0.push("--".into());
            self.0.extend(paths.iter().cloned());
        }
        self
    }

    fn done(self) -> Result<Vec<String>, Error> {
        Ok(self.0)
    }
}

/// Arguments of tools that take only a task id.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct IdArgs {
    /// Task id (default: the active task of the directory the call runs in)
    id: Option<String>,
}

/// Arguments of `start`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct StartArgs {
    /// Task id (default: a generated two-word name)
    id: Option<String>,
    /// Branch or commit of the repository to start from (default: the current branch)
    base: Option<String>,
    /// Where the work happens: "worktree" (default: a linked worktree on branch task/<id>) or "patch" (the current worktree)
    mode: Option<Mode>,
    /// Worktree location, inside the tasks directory (default: task.worktreeDir/<id>, else ../<repo>.tasks/<id>)
    path: Option<String>,
    /// Globs of the paths the task may touch (default: any path not forbidden)
    #[serde(default)]
    allow: Vec<String>,
    /// Globs of the paths the task may never touch
    #[serde(default)]
    forbid: Vec<String>,
    /// Forbid adding files
    #[serde(default)]
    no_new_files: bool,
    /// Forbid deleting files
    #[serde(default)]
    no_deletions: bool,
    /// Copy ignored files (node_modules/, target/...) into the worktree
    #[serde(default)]
    copy_ignored: bool,
    /// Check out only the allowed paths (plus task.sparseAlways)
    #[serde(default)]
    sparse: bool,
    /// Put an existing task back to its base, saving its work as an attempt first
    #[serde(default)]
    reset: bool,
    /// With reset: take the task's own commits off its branch too (saved as an attempt first),
    /// so a looser contract may replace the frozen one
    #[serde(default)]
    discard_commits: bool,
    /// Globs to claim for the new task: no other task may change them while it is live
    #[serde(default)]
    claim: Vec<String>,
    /// Start even if the contract allows paths another task claims (they stay off-limits)
    #[serde(default)]
    share: bool,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
enum Mode {
    Worktree,
    Patch,
}

/// Arguments of `list`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListArgs {
    /// Include merged and removed tasks
    #[serde(default)]
    all: bool,
}

/// Arguments of `check`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CheckArgs {
    /// Task id (default: the active task of the directory the call runs in)
    id: Option<String>,
    /// Judge only what is staged, as the pre-commit hook does
    #[serde(default)]
    staged: bool,
    /// Also run the checks of the frozen contract
    #[serde(default)]
    run: bool,
}

/// Arguments of tools that take a task id and a message.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct MessageArgs {
    /// Task id (default: the active task of the directory the call runs in)
    id: Option<String>,
    /// Message stored with the result
    message: Option<String>,
}

/// Arguments of `diff`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DiffArgs {
    /// Task id (default: the active task of the directory the call runs in)
    id: Option<String>,
    /// Limit the diff to these files or directories
    #[serde(default)]
    paths: Vec<String>,
    /// Lines added and removed per file and git's summary line instead of the patch
    #[serde(default)]
    stat: bool,
    /// Pair renames at this minimum similarity, as `git diff -M<N>` ("50%", "90%"; default: no rename detection)
    find_renames: Option<String>,
}

/// Arguments of `changes`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ChangesArgs {
    /// Task id (default: the active task of the directory the call runs in)
    id: Option<String>,
    /// Also count the lines each file added and removed, with git's summary line
    #[serde(default)]
    stat: bool,
    /// Pair renames at this minimum similarity, as `git diff -M<N>` ("50%", "90%"; default: no rename detection)
    find_renames: Option<String>,
}

/// Arguments of `revert`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RevertArgs {
    /// Task id (default: the active task of the directory the call runs in)
    id: Option<String>,
    /// Put only these files or directories back
    #[serde(default)]
    paths: Vec<String>,
    /// Undo only what checkpoint N changed, keeping later work
    checkpoint: Option<u32>,
    /// Go back to the state of checkpoint N
    to: Option<u32>,
}

/// Arguments of `merge`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct MergeArgs {
    /// Tasks to merge, in this order (default: the active task of the directory the call runs in)
    #[serde(default)]
    ids: Vec<String>,
    /// How each task lands: "squash" (default, one commit), "merge" (a merge commit) or "rebase" (its own commits replayed)
    strategy: Option<Strategy>,
    /// Land on this branch instead of the tasks' base branch
    into: Option<String>,
    /// Keep worktree and branch afterwards (default: task.keepOnMerge)
    #[serde(default)]
    keep: bool,
    /// Message of the squash or merge commit
    message: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
enum Strategy {
    Squash,
    Merge,
    Rebase,
}

/// Arguments of `overlaps`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct OverlapsArgs {
    /// Task ids (default: every live task)
    #[serde(default)]
    ids: Vec<String>,
}

/// Arguments of `remove`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RemoveArgs {
    /// Task id
    id: String,
    /// Remove a dirty worktree too, saving its changes as an attempt first
    #[serde(default)]
    force: bool,
}

/// Arguments of `reset`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ResetArgs {
    /// Task id (default: the active task of the directory the call runs in)
    id: Option<String>,
    /// Start the task over from this revision instead (moves its base)
    onto: Option<String>,
}

/// Arguments of `queue`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct QueueArgs {
    /// "add" (queue 'ids' to land, in order), "status", "remove" (take 'ids' out) or "run" (land the queue now: batches of ready tasks, each judged and checked as merge does; a failing batch is bisected and its culprit ejected)
    action: QueueVerb,
    /// Tasks to add or remove
    #[serde(default)]
    ids: Vec<String>,
    /// The target branch (default: the tasks' base branch; for status and run, every branch that has a queue)
    into: Option<String>,
    /// run: at most this many tasks per landing and per check run
    batch: Option<u32>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
enum QueueVerb {
    Add,
    Status,
    Remove,
    Run,
}

/// Every tool, in the order `tools/list` gives them.
pub fn all() -> Vec<ToolDef> {
    use Effect::*;
    vec![
        ToolDef {
            name: "start",
            title: "Start a task",
            description: "Create a task: a worktree on branch task/<id> (or patch mode in place) with a contract fencing the paths it may touch. Starting an existing task changes nothing and returns it. Returns the JSON of 'git task start --json' (its 'worktree' is where to work).",
            effect: Writes,
            idempotent: true,
            schema: schema_of::<StartArgs>,
            argv: |v| {
                let a: StartArgs = parse("start", v)?;
                Line::new("start")
                    .opt("base", a.base)
                    .opt("mode", a.mode.map(|m| match m {
                        Mode::Worktree => "worktree",
                        Mode::Patch => "patch",
                    }))
                    .opt("path", a.path)
                    .opts("allow", &a.allow)
                    .opts("forbid", &a.forbid)
                    .flag("no-new-files", a.no_new_files)
                    .flag("no-deletions", a.no_deletions)
                    .flag("copy-ignored", a.copy_ignored)
                    .flag("sparse", a.sparse)
                    .flag("reset", a.reset)
                    .flag("discard-commits", a.discard_commits)
                    .opts("claim", &a.claim)
                    .flag("share", a.share)
                    .id(a.id.as_deref())?
                    .done()
            },
        },
        ToolDef {
            name: "list",
            title: "List tasks",
            description: "List the live tasks (all, with 'all'): id, mode, status, branch, base, ahead/behind, changed files, dirty, path. Returns the JSON of 'git task list --json'.",
            effect: ReadOnly,
            idempotent: true,
            schema: schema_of::<ListArgs>,
            argv: |v| {
                let a: ListArgs = parse("list", v)?;
                Line::new("list").flag("all", a.all).done()
            },
        },
        ToolDef {
            name: "status",
            title: "Show a task",
            description: "One task: its contract, each changed file with its verdict, checkpoints, last events. Returns the JSON of 'git task status --json'.",
            effect: ReadOnly,
            idempotent: true,
            schema: schema_of::<IdArgs>,
            argv: |v| {
                let a: IdArgs = parse("status", v)?;
                Line::new("status").id(a.id.as_deref())?.done()
            },
        },
        ToolDef {
            name: "check",
            title: "Judge a task's changes",
            description: "Judge the task's changes (or only the staged ones) against its contract; with 'run', also run the frozen contract's checks. A violation or failed check is a tool error whose content is the report, with the repair instruction.",
            effect: ReadOnly,
            idempotent: true,
            schema: schema_of::<CheckArgs>,
            argv: |v| {
                let a: CheckArgs = parse("check", v)?;
                Line::new("check")
                    .flag("staged", a.staged)
                    .flag("run", a.run)
                    .id(a.id.as_deref())?
                    .done()
            },
        },
        ToolDef {
            name: "checkpoint",
            title: "Save a checkpoint",
            description: "Save the task's current state (untracked files too) as checkpoint n, with a note. Returns the JSON of 'git task checkpoint --json'.",
            effect: Writes,
            idempotent: false,
            schema: schema_of::<MessageArgs>,
            argv: |v| {
                let a: MessageArgs = parse("checkpoint", v)?;
                Line::new("checkpoint")
                    .opt("message", a.message)
                    .id(a.id.as_deref())?
                    .done()
            },
        },
        ToolDef {
            name: "changes",
            title: "List a task's changed files",
            description: "Each file changed since the base (or snapshot): created, modified, deleted, renamed, and which checkpoint last touched it. Returns the JSON of 'git task changes --json'.",
            effect: ReadOnly,
            idempotent: true,
            schema: schema_of::<ChangesArgs>,
            argv: |v| {
                let a: ChangesArgs = parse("changes", v)?;
                Line::new("changes")
                    .flag("stat", a.stat)
                    .opt("find-renames", a.find_renames)
                    .id(a.id.as_deref())?
                    .done()
            },
        },
        ToolDef {
            name: "diff",
            title: "Show a task's diff",
            description: "The unified diff of the task since its base (or snapshot), optionally limited to some paths. Returns the JSON of 'git task diff --json'.",
            effect: ReadOnly,
            idempotent: true,
            schema: schema_of::<DiffArgs>,
            argv: |v| {
                let a: DiffArgs = parse("diff", v)?;
                Line::new("diff")
                    .flag("stat", a.stat)
                    .opt("find-renames", a.find_renames)
                    .id(a.id.as_deref())?
                    .paths(&a.paths)
                    .done()
            },
        },
        ToolDef {
            name: "revert",
            title: "Undo a task's work",
            description: "Undo everything, some paths, one checkpoint's changes, or go back to checkpoint N. The discarded work is saved as an attempt first (refs/tasks/<id>/attempts/<n>). Returns the JSON of 'git task revert --json'.",
            effect: Destructive,
            idempotent: false,
            schema: schema_of::<RevertArgs>,
            argv: |v| {
                let a: RevertArgs = parse("revert", v)?;
                Line::new("revert")
                    .opts("path", &a.paths)
                    .opt("checkpoint", a.checkpoint)
                    .opt("to", a.to)
                    .id(a.id.as_deref())?
                    .done()
            },
        },
        ToolDef {
            name: "commit",
            title: "Commit a task's eligible changes",
            description: "Stage and commit the changes inside the contract (never ignored files, never task.autoCommitExclude). Nothing eligible is a tool error. Returns the JSON of 'git task commit --json'.",
            effect: Writes,
            idempotent: false,
            schema: schema_of::<MessageArgs>,
            argv: |v| {
                let a: MessageArgs = parse("commit", v)?;
                Line::new("commit")
                    .opt("message", a.message)
                    .id(a.id.as_deref())?
                    .done()
            },
        },
        ToolDef {
            name: "merge",
            title: "Merge tasks through the gate",
            description: "Land tasks on their base branch (or 'into') through the gate: the whole task diff is judged against the frozen contract and the target's policy, the frozen checks run, then the branch moves. A refused merge is a tool error whose content is the report with the repair instruction.",
            effect: Destructive,
            idempotent: false,
            schema: schema_of::<MergeArgs>,
            argv: |v| {
                let a: MergeArgs = parse("merge", v)?;
                let mut line = Line::new("merge")
                    .flag("squash", matches!(a.strategy, Some(Strategy::Squash)))
                    .flag("merge", matches!(a.strategy, Some(Strategy::Merge)))
                    .flag("rebase", matches!(a.strategy, Some(Strategy::Rebase)))
                    .opt("into", a.into)
                    .flag("keep", a.keep)
                    .opt("message", a.message);
                for id in &a.ids {
                    line = line.id(Some(id))?;
                }
                line.done()
            },
        },
        ToolDef {
            name: "queue",
            title: "The local landing queue",
            description: "A persistent landing queue per target branch: 'add' queues tasks (idempotent), 'status' shows the queues, 'remove' takes a task out, 'run' lands the queue now: ready tasks in order, batched into one landing and one check run, each landing judged and checked exactly as merge does on the branch's tip; a batch whose checks fail is bisected, the others land and the culprit is ejected with its check output (a 'queue_ejected' event in its log). A run that ejected a task is a tool error whose content is the report. Returns the JSON of 'git task queue <action> --json'.",
            effect: Destructive,
            idempotent: false,
            schema: schema_of::<QueueArgs>,
            argv: |v| {
                let a: QueueArgs = parse("queue", v)?;
                let mut out = Vec::new();
                match a.action {
                    QueueVerb::Add | QueueVerb::Remove => {
                        let verb = if matches!(a.action, QueueVerb::Add) { "add" } else { "remove" };
                        if a.ids.is_empty() {
                            return Err(Error::input(format!("'queue' with action '{verb}' needs 'ids'")));
                        }
                        if matches!(a.action, QueueVerb::Remove) && a.ids.len() > 1 {
                            return Err(Error::input("'queue' with action 'remove' takes one id"));
                        }
                        let mut line = Line::new("queue");
                        line.0.push(verb.to_owned());
                        line = line.opt("into", a.into);
                        for id in &a.ids {
                            line = line.id(Some(id))?;
                        }
                        out.extend(line.done()?);
                    }
                    QueueVerb::Status => {
                        let mut line = Line::new("queue");
                        line.0.push("status".into());
                        out.extend(line.opt("into", a.into).done()?);
                    }
                    QueueVerb::Run => {
                        let mut line = Line::new("queue");
                        line.0.push("run".into());
                        out.extend(line.opt("into", a.into).opt("batch", a.batch).done()?);
                    }
                }
                Ok(out)
            },
        },
        ToolDef {
            name: "log",
            title: "Show a task's event log",
            description: "The task's event log (started, checkpoint, violation, checks, merged, ...). Returns the JSON of 'git task log --json'.",
            effect: ReadOnly,
            idempotent: true,
            schema: schema_of::<IdArgs>,
            argv: |v| {
                let a: IdArgs = parse("log", v)?;
                Line::new("log").id(a.id.as_deref())?.done()
            },
        },
        ToolDef {
            name: "overlaps",
            title: "Forecast collisions between tasks",
            description: "For every pair of live tasks (or those given): contracts whose allowed paths meet, files both changed, and a trial merge onto the base tip (clean or conflict, with the paths); also each task against the base's new commits. A conflict is a tool error whose content is the report. Returns the JSON of 'git task overlaps --json'.",
            effect: ReadOnly,
            idempotent: true,
            schema: schema_of::<OverlapsArgs>,
            argv: |v| {
                let a: OverlapsArgs = parse("overlaps", v)?;
                let mut line = Line::new("overlaps");
                for id in &a.ids {
                    line = line.id(Some(id))?;
                }
                line.done()
            },
        },
        ToolDef {
            name: "drop",
            title: "Drop a task",
            description: "Mark the task failed/abandoned; its worktree stays for inspection. Returns the JSON of 'git task drop --json'.",
            effect: Destructive,
            idempotent: true,
            schema: schema_of::<MessageArgs>,
            argv: |v| {
                let a: MessageArgs = parse("drop", v)?;
                Line::new("drop")
                    .opt("message", a.message)
                    .id(a.id.as_deref())?
                    .done()
            },
        },
        ToolDef {
            name: "remove",
            title: "Remove a task",
            description: "Delete the task's worktree and branch. A dirty worktree is refused unless 'force', and then its work is saved as an attempt first. Removing a missing task changes nothing. Returns the JSON of 'git task remove --json'.",
            effect: Destructive,
            idempotent: true,
            schema: schema_of::<RemoveArgs>,
            argv: |v| {
                let a: RemoveArgs = parse("remove", v)?;
                Line::new("remove")
                    .flag("force", a.force)
                    .id(Some(&a.id))?
                    .done()
            },
        },
        ToolDef {
            name: "reset",
            title: "Reset a task to its base",
            description: "Put the task's worktree back to its base (or 'onto', a new base), saving its work as an attempt first. Returns the JSON of 'git task reset --json'.",
            effect: Destructive,
            idempotent: false,
            schema: schema_of::<ResetArgs>,
            argv: |v| {
                let a: ResetArgs = parse("reset", v)?;
                Line::new("reset")
                    .opt("onto", a.onto)
                    .id(a.id.as_deref())?
                    .done()
            },
        },
        ToolDef {
            name: "sync",
            title: "Bring the base into a task",
            description: "Bring the base branch's new commits into the task branch (in its worktree). Returns the JSON of 'git task sync --json'.",
            effect: Writes,
            idempotent: true,
            schema: schema_of::<IdArgs>,
            argv: |v| {
                let a: IdArgs = parse("sync", v)?;
                Line::new("sync").id(a.id.as_deref())?.done()
            },
        },
    ]
}
