//! The events of a task's record (SPEC §4): one type, [`Event`], with one variant per event.
//!
//! On disk an event is the message of its record commit: the event name, a blank line, then one
//! JSON object holding `event` (the name again), `task`, `time`, the event's own fields, and
//! `state` (the task state after it, for `list`). This module is the only place that turns an
//! event into those fields and back.
//!
//! Reading is exact: a stored event becomes a typed variant only when writing that variant again
//! gives back every field as stored. Anything else (an event a newer version wrote, a field an
//! older version wrote differently) reads as [`Event::Other`] with its fields untouched, so old
//! and new records always read, and `git task log` shows them as they are.
//!
//! Over 500 lines on purpose: this is the whole on-disk schema of the event log, kept in one
//! file so that a change to any event's fields is one diff; most lines document those fields.

use crate::checks::{Outcome, Run};
use crate::contract::Violation as Broken;
use crate::copy::Copied;
use crate::git::status::ignored::Ignored;
use crate::task::{BranchName, Mode, Status};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `start` claimed the id.
pub const STARTED: &str = "started";
/// The worktree (or snapshot) is ready.
pub const PROVISIONED: &str = "provisioned";
/// A checkpoint was saved.
pub const CHECKPOINT: &str = "checkpoint";
/// A commit was refused by the contract.
pub const VIOLATION: &str = "violation";
/// Checks ran (or were skipped).
pub const CHECKS: &str = "checks";
/// The task landed on its base.
pub const MERGED: &str = "merged";
/// The task was marked failed or abandoned.
pub const DROPPED: &str = "dropped";
/// Worktree and branch were deleted.
pub const REMOVED: &str = "removed";
/// Work was reverted (saved as an attempt first).
pub const REVERTED: &str = "reverted";
/// The task was put back to its base.
pub const RESET: &str = "reset";
/// The base's new commits were brought in.
pub const SYNCED: &str = "synced";
/// The user moved the worktree (`git worktree move`); the record follows it.
pub const MOVED: &str = "moved";
/// `git task commit` committed the eligible changes on the task's branch.
pub const COMMITTED: &str = "committed";
/// `git task commit` found changes but none it may commit.
pub const BLOCKED: &str = "blocked";

/// One event of a task's life.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// `start` claimed the id (`started`).
    Started(Started),
    /// The worktree (or snapshot) is ready (`provisioned`).
    Provisioned(Provisioned),
    /// A checkpoint was saved (`checkpoint`).
    Checkpoint(Checkpoint),
    /// Changes were refused by the contract (`violation`).
    Violation(Violation),
    /// The frozen checks ran, or were skipped (`checks`).
    Checks(Checks),
    /// The task landed (`merged`).
    Merged(Merged),
    /// The task was marked failed or abandoned (`dropped`).
    Dropped(Dropped),
    /// Worktree and branch were deleted (`removed`).
    Removed(Removed),
    /// Work was reverted (`reverted`).
    Reverted(Reverted),
    /// The task was put back to its base (`reset`).
    Reset(Reset),
    /// The base's new commits were brought in (`synced`).
    Synced(Synced),
    /// The worktree was moved and the record followed it (`moved`).
    Moved(Moved),
    /// `git task commit` committed (`committed`).
    Committed(Committed),
    /// `git task commit` had nothing eligible to commit (`blocked`).
    Blocked(Blocked),
    /// An event this version has no type for (a newer version wrote it), or one whose fields
    /// are not the shape this version writes (an older version wrote it): kept as stored.
    Other {
        /// The event name (the first line of the record commit).
        name: String,
        /// Its fields, as stored (without `event`, `task`, `time` and `state`).
        details: Map<String, Value>,
    },
}

/// `started`: the task was started (or started again after it was removed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Started {
    /// Worktree or patch mode.
    pub mode: Mode,
    /// The base commit.
    pub base: String,
    /// The branch the task merges into (full ref name), if started from one.
    #[schemars(with = "Option<String>")]
    pub base_branch: Option<BranchName>,
    /// Worktree mode: the task branch (full ref name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub branch: Option<BranchName>,
    /// Patch mode: the snapshot commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<String>,
    /// The worktree the task works in.
    pub worktree: String,
    /// `<pid>-<nanoseconds>`: makes the record's first commit unique (set when it is written).
    #[serde(default)]
    pub nonce: String,
    /// The record commit of the task's earlier life, when it was started again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_of: Option<String>,
}

/// `provisioned`: the task is ready for work.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Provisioned {
    /// Patch mode: the snapshot guards the worktree.
    Patch {
        /// The worktree.
        worktree: String,
        /// The snapshot commit.
        snapshot: String,
    },
    /// Worktree mode: the linked worktree is checked out.
    Worktree {
        /// The worktree.
        worktree: String,
        /// The setup command that ran, if any.
        setup: Option<String>,
        /// What `--copy-ignored` copied, if asked.
        copied_ignored: Option<Copied>,
    },
}

/// `checkpoint`: the task's state was saved as `refs/tasks/<id>/checkpoints/<number>`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Checkpoint {
    /// The checkpoint's number.
    pub number: u32,
    /// Its commit.
    pub commit: String,
    /// The files it changed since the one before.
    pub files: Vec<String>,
}

/// `violation`: changes were refused by the contract.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Violation {
    /// A commit, judged by the pre-commit hook.
    Staged {
        /// Who judged: `pre-commit`.
        source: String,
        /// Always true: what was judged is the staged changes.
        staged: bool,
        /// The worktree's HEAD then.
        head: Option<String>,
        /// What broke the contract.
        violations: Vec<Broken>,
    },
    /// A checkpoint, judged before it was saved.
    Checkpoint {
        /// What was refused: `checkpoint`.
        during: String,
        /// The offending files.
        files: Vec<String>,
    },
}

/// What the frozen checks were run for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    /// `git task check --run`.
    Check,
    /// The merge gate (`git task merge`, patch mode included).
    Merge,
}

/// `checks`: the frozen checks ran (or were skipped). One shape, whoever ran them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Checks {
    /// Who ran them.
    #[serde(rename = "for")]
    pub purpose: Purpose,
    /// The checks ran, how they went, and the commands without their output.
    #[serde(flatten)]
    pub run: ChecksSummary,
}

/// How the checks went, without the commands' output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChecksSummary {
    /// Whether `--no-checks` skipped them.
    pub skipped: bool,
    /// Whether every command that ran succeeded (true when skipped or none).
    pub passed: bool,
    /// One entry per command run, in order.
    pub commands: Vec<Command>,
}

/// One check command as the record keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Command {
    /// The command line.
    pub command: String,
    /// Its exit code (`null` if killed by a signal or the timeout).
    pub code: Option<i32>,
    /// Whether it ran past its timeout and was killed.
    pub timed_out: bool,
    /// How long it ran, in milliseconds.
    pub millis: u64,
}

impl From<&Outcome> for Command {
    fn from(o: &Outcome) -> Command {
        Command {
            command: o.command.clone(),
            code: o.code,
            timed_out: o.timed_out,
            millis: o.millis,
        }
    }
}

impl From<&Run> for ChecksSummary {
    fn from(run: &Run) -> ChecksSummary {
        ChecksSummary {
            skipped: run.skipped,
            passed: run.passed,
            commands: run.commands.iter().map(Command::from).collect(),
        }
    }
}

impl Event {
    /// The `checks` event of `run`, run for `purpose`.
    pub fn checks(run: &Run, purpose: Purpose) -> Event {
        Event::Checks(Checks {
            purpose,
            run: run.into(),
        })
    }
}

/// `merged`: the task landed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Merged {
    /// Patch mode: the work was accepted in place.
    Patch {
        /// Always `patch`.
        mode: Mode,
        /// The tree of the files accepted.
        accepted: String,
        /// The worktree's HEAD then.
        head: Option<String>,
        /// How the checks went.
        checks: ChecksSummary,
    },
    /// Worktree mode: the task branch landed on the target.
    Branch {
        /// The last commit that carries the task on the target (`null`: it changed nothing).
        commit: Option<String>,
        /// Every commit the merge made on the target.
        commits: Vec<String>,
        /// The strategy: `squash`, `merge` or `rebase`.
        mode: String,
        /// The target branch (full ref name).
        #[schemars(with = "String")]
        into: BranchName,
        /// Whether the worktree and branch were kept.
        keep: bool,
        /// The task branch's tip that landed.
        task_tip: String,
        /// How the checks went.
        checks: Option<ChecksSummary>,
    },
}

/// `dropped`: the task was marked failed or abandoned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Dropped {
    /// Why (`drop -m`).
    pub message: Option<String>,
}

/// `removed`: worktree and branch were deleted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Removed {
    /// `git task remove`.
    Removed {
        /// The status before.
        previous_status: Status,
        /// Work saved before anything was deleted.
        attempts: Vec<SavedAttempt>,
        /// Where nested repositories were moved, if any.
        attic: Option<String>,
        /// The ignored files deleted with the worktree.
        ignored: Ignored,
    },
    /// `git task sweep` found the worktree gone.
    Swept {
        /// Why (`worktree vanished`).
        reason: String,
        /// Work saved before the branch was deleted.
        attempts: Vec<SavedAttempt>,
    },
}

/// A ref that holds saved work (SPEC §2.2).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SavedAttempt {
    /// `refs/tasks/<id>/attempts/<n>`.
    #[serde(rename = "ref")]
    pub name: String,
    /// The commit it points to.
    pub commit: String,
    /// What was saved, for people.
    pub what: String,
}

/// `reverted`: work was reverted, saved as an attempt first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Reverted {
    /// What was reverted, for people.
    pub what: String,
    /// The attempt ref that saved it, if anything needed saving.
    pub attempt: Option<String>,
    /// The files written or deleted.
    pub files: Vec<String>,
}

/// `reset`: the task was put back to its base (or onto another commit).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Reset {
    /// The one reset (`git task reset`, `start --reset`).
    Task {
        /// The base now.
        base: String,
        /// The commit asked for with `--onto`.
        onto: Option<String>,
        /// The task branch's tip before.
        previous_head: Option<String>,
        /// Work saved first.
        attempts: Vec<SavedAttempt>,
        /// Whether a new contract was frozen.
        contract_replaced: bool,
    },
    /// A patch-mode task put back to its snapshot, or onto `onto`.
    Patch {
        /// The base now.
        base: String,
        /// The commit asked for with `--onto` (absent: back to the snapshot).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        onto: Option<String>,
        /// The attempt ref that saved the work, if any.
        attempt: Option<String>,
    },
}

/// `synced`: the base's new commits were brought in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Synced {
    /// The base commit now.
    pub base: String,
    /// The task branch's tip now.
    pub commit: String,
    /// Whether the base was merged into the task branch.
    pub merged: bool,
    /// Whether that was a fast-forward (only when the branch moved).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fast_forward: Option<bool>,
}

/// `moved`: the user moved the worktree; the record follows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Moved {
    /// The path recorded before.
    pub from: String,
    /// Where git says the worktree is now.
    pub to: String,
}

/// `committed`: `git task commit` committed the eligible changes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Committed {
    /// The new commit.
    pub commit: String,
    /// The branch it moved (full ref name).
    #[schemars(with = "String")]
    pub branch: BranchName,
    /// The committed paths.
    pub files: Vec<String>,
    /// The changed paths left out (excluded, or outside the contract).
    pub skipped: Vec<String>,
}

/// `blocked`: `git task commit` found changes, but none it may commit; nothing was committed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Blocked {
    /// What was blocked: `commit`.
    pub during: String,
    /// Every changed path, each left out with its reason.
    pub skipped: Vec<Left>,
}

/// A changed path a `commit` left out, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Left {
    /// The path.
    pub path: String,
    /// `excluded` (`task.autoCommitExclude`), `before_start` (patch mode) or a contract reason.
    pub reason: String,
    /// The rule that left it out.
    pub rule: String,
}

/// The keys every event body has besides its own fields.
const HEADER: [&str; 4] = ["event", "task", "time", "state"];

impl Event {
    /// The event's name, the first line of its record commit.
    pub fn name(&self) -> &str {
        match self {
            Event::Started(_) => STARTED,
            Event::Provisioned(_) => PROVISIONED,
            Event::Checkpoint(_) => CHECKPOINT,
            Event::Violation(_) => VIOLATION,
            Event::Checks(_) => CHECKS,
            Event::Merged(_) => MERGED,
            Event::Dropped(_) => DROPPED,
            Event::Removed(_) => REMOVED,
            Event::Reverted(_) => REVERTED,
            Event::Reset(_) => RESET,
            Event::Synced(_) => SYNCED,
            Event::Moved(_) => MOVED,
            Event::Committed(_) => COMMITTED,
            Event::Blocked(_) => BLOCKED,
            Event::Other { name, .. } => name,
        }
    }

    /// The event's own fields, as they are stored.
    pub fn fields(&self) -> Map<String, Value> {
        fn map(value: &impl Serialize) -> Map<String, Value> {
            match serde_json::to_value(value) {
                Ok(Value::Object(map)) => map,
                // Every payload is a struct of plain data: it always encodes as an object.
                _ => Map::new(),
            }
        }
        match self {
            Event::Started(e) => map(e),
            Event::Provisioned(e) => map(e),
            Event::Checkpoint(e) => map(e),
            Event::Violation(e) => map(e),
            Event::Checks(e) => map(e),
            Event::Merged(e) => map(e),
            Event::Dropped(e) => map(e),
            Event::Removed(e) => map(e),
            Event::Reverted(e) => map(e),
            Event::Reset(e) => map(e),
            Event::Synced(e) => map(e),
            Event::Moved(e) => map(e),
            Event::Committed(e) => map(e),
            Event::Blocked(e) => map(e),
            Event::Other { details, .. } => details.clone(),
        }
    }

    /// Reads the event named `name` with the fields `details` (header keys are ignored).
    ///
    /// The typed variant when it holds every field exactly, else [`Event::Other`].
    pub fn parse(name: &str, mut details: Map<String, Value>) -> Event {
        for key in HEADER {
            details.remove(key);
        }
        let typed = match name {
            STARTED => exact(&details).map(Event::Started),
            PROVISIONED => exact(&details).map(Event::Provisioned),
            CHECKPOINT => exact(&details).map(Event::Checkpoint),
            VIOLATION => exact(&details).map(Event::Violation),
            CHECKS => exact(&details).map(Event::Checks),
            MERGED => exact(&details).map(Event::Merged),
            DROPPED => exact(&details).map(Event::Dropped),
            REMOVED => exact(&details).map(Event::Removed),
            REVERTED => exact(&details).map(Event::Reverted),
            RESET => exact(&details).map(Event::Reset),
            SYNCED => exact(&details).map(Event::Synced),
            MOVED => exact(&details).map(Event::Moved),
            COMMITTED => exact(&details).map(Event::Committed),
            BLOCKED => exact(&details).map(Event::Blocked),
            _ => None,
        };
        typed.unwrap_or_else(|| Event::Other {
            name: name.to_owned(),
            details,
        })
    }
}

/// Reads `details` as `T` if writing that `T` gives back exactly `details`.
fn exact<T: Serialize + DeserializeOwned>(details: &Map<String, Value>) -> Option<T> {
    let value = Value::Object(details.clone());
    let typed: T = serde_json::from_value(value.clone()).ok()?;
    (serde_json::to_value(&typed).ok()? == value).then_some(typed)
}

/// One entry of a record: an event with the commit that holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// The record commit.
    pub commit: String,
    /// The task id as the event stored it, shown as it is (`log`): the task a record belongs
    /// to is its ref's and its state's (a [`crate::task::TaskId`] each), never this.
    pub task: Option<String>,
    /// When it happened, in seconds since the epoch.
    pub time: Option<i64>,
    /// The event.
    pub event: Event,
}

impl Entry {
    /// Reads the message of record commit `commit`: the event name, then its JSON body.
    pub fn parse(commit: String, message: &str) -> Entry {
        let (name, rest) = message.split_once('\n').unwrap_or((message, ""));
        let body = match serde_json::from_str(rest.trim()) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        };
        Entry {
            commit,
            task: body.get("task").and_then(Value::as_str).map(str::to_owned),
            time: body.get("time").and_then(Value::as_i64),
            event: Event::parse(name.trim(), body),
        }
    }

    /// The event's body without `state`: `event`, `task`, `time` and the event's fields.
    pub fn details(&self) -> Map<String, Value> {
        let mut map = self.event.fields();
        map.insert("event".into(), self.event.name().into());
        if let Some(task) = &self.task {
            map.insert("task".into(), task.clone().into());
        }
        if let Some(time) = self.time {
            map.insert("time".into(), time.into());
        }
        map
    }
}

/// `{"event": <name>, "commit": <record commit>, "details": <body without state>}`, as `log --json` shows it.
impl Serialize for Entry {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Entry", 3)?;
        st.serialize_field("event", self.event.name())?;
        st.serialize_field("commit", &self.commit)?;
        st.serialize_field("details", &self.details())?;
        st.end()
    }
}

/// `log --json`'s entry: `event`, `commit`, and `details`, the event's body (one of the
/// published event schemas, or any object for an event this version has no type for).
impl schemars::JsonSchema for Entry {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Entry".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut details: Vec<Value> = TYPED
            .iter()
            .filter_map(|name| schema(name, generator))
            .map(schemars::Schema::to_value)
            .collect();
        details.push(serde_json::json!({
            "description": "An event this version has no type for (a newer version wrote it), or one an older version wrote differently: its fields as stored.",
            "type": "object",
            "properties": { "event": { "type": "string" } },
            "required": ["event"],
        }));
        schemars::json_schema!({
            "type": "object",
            "properties": {
                "event": { "description": "The event's name.", "type": "string" },
                "commit": { "description": "The record commit that holds it.", "type": "string" },
                "details": {
                    "description": "The event's body without `state`: `event`, `task`, `time` and the event's own fields.",
                    "anyOf": details,
                },
            },
            "required": ["event", "commit", "details"],
        })
    }
}

/// The events this version has a type for, in the order of their life.
pub const TYPED: [&str; 14] = [
    STARTED,
    PROVISIONED,
    CHECKPOINT,
    VIOLATION,
    CHECKS,
    MERGED,
    DROPPED,
    REMOVED,
    REVERTED,
    RESET,
    SYNCED,
    MOVED,
    COMMITTED,
    BLOCKED,
];

/// The schema of a typed event's body as `log --json` shows it (`details`): `event`, `task`,
/// `time` and the event's own fields. `None` for a name not in [`TYPED`].
pub fn schema(name: &str, generator: &mut schemars::SchemaGenerator) -> Option<schemars::Schema> {
    let fields = match name {
        STARTED => generator.subschema_for::<Started>(),
        PROVISIONED => generator.subschema_for::<Provisioned>(),
        CHECKPOINT => generator.subschema_for::<Checkpoint>(),
        VIOLATION => generator.subschema_for::<Violation>(),
        CHECKS => generator.subschema_for::<Checks>(),
        MERGED => generator.subschema_for::<Merged>(),
        DROPPED => generator.subschema_for::<Dropped>(),
        REMOVED => generator.subschema_for::<Removed>(),
        REVERTED => generator.subschema_for::<Reverted>(),
        RESET => generator.subschema_for::<Reset>(),
        SYNCED => generator.subschema_for::<Synced>(),
        MOVED => generator.subschema_for::<Moved>(),
        COMMITTED => generator.subschema_for::<Committed>(),
        BLOCKED => generator.subschema_for::<Blocked>(),
        _ => return None,
    };
    let header = serde_json::json!({
        "type": "object",
        "properties": {
            "event": { "const": name },
            "task": { "description": "The task id.", "type": "string" },
            "time": { "description": "When it happened, in seconds since the epoch.", "type": "integer" },
        },
        "required": ["event", "task", "time"],
    });
    Some(schemars::json_schema!({
        "title": name,
        "allOf": [header, fields],
    }))
}

/// Builds the JSON body of a record commit: header, the event's fields, then `state`.
pub(super) fn body(task: &str, time: i64, event: &Event, state: Value) -> Value {
    let mut map = Map::new();
    map.insert("event".into(), event.name().into());
    map.insert("task".into(), task.into());
    map.insert("time".into(), time.into());
    map.extend(event.fields());
    map.insert("state".into(), state);
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every event kind and shape as git-task wrote it at 7ef3388, before the typed event:
    /// `name<TAB>body` (the body without `state`). Most lines come from real records.
    const OLD: &str = include_str!("../../tests/fixtures/events-7ef3388.tsv");

    /// The events typed since 7ef3388, one line each in the same form, as this version writes them.
    const NEWER: &str = concat!(
        "committed\t{\"branch\":\"refs/heads/task/c\",\"commit\":\"5e1f3a0c6c1b8d2f4e7a9b0c1d2e3f4a5b6c7d8e\",\"event\":\"committed\",\"files\":[\"src/lib.rs\"],\"skipped\":[\"target/x\"],\"task\":\"c\",\"time\":1795481670}\n",
        "blocked\t{\"during\":\"commit\",\"event\":\"blocked\",\"skipped\":[{\"path\":\"src/store/mod.rs\",\"reason\":\"forbidden\",\"rule\":\"src/store/**\"}],\"task\":\"c\",\"time\":1795481671}\n",
    );

    fn old_entries() -> Vec<(String, Map<String, Value>)> {
        OLD.lines()
            .chain(NEWER.lines())
            .map(|line| {
                let (name, json) = line.split_once('\t').unwrap();
                let Ok(Value::Object(body)) = serde_json::from_str(json) else {
                    panic!("bad fixture line {line}");
                };
                (name.to_owned(), body)
            })
            .collect()
    }

    /// The shapes this version no longer writes: the `checks` of `check --run` and of a
    /// patch-mode accept, and the `merged` of an accept with its checks' full output.
    fn retired(name: &str, body: &Map<String, Value>) -> bool {
        match name {
            CHECKS => body.contains_key("ok") || body.contains_key("results"),
            MERGED => body.contains_key("accepted") && !body["checks"].is_object(),
            _ => false,
        }
    }

    #[test]
    fn every_old_event_reads_back_exactly() {
        for (name, body) in old_entries() {
            let message = format!("{name}\n\n{}\n", Value::Object(body.clone()));
            let entry = Entry::parse("c0ffee".into(), &message);
            assert_eq!(entry.event.name(), name);
            assert_eq!(entry.details(), body, "{name} changed on reading");
            let typed = !matches!(entry.event, Event::Other { .. });
            assert_eq!(
                typed,
                !retired(&name, &body),
                "{name}: {body:?} read as {:?}",
                entry.event
            );
        }
    }

    #[test]
    fn every_event_kind_has_a_typed_old_line() {
        let typed: std::collections::BTreeSet<String> = old_entries()
            .into_iter()
            .filter(|(name, body)| !retired(name, body))
            .map(|(name, _)| name)
            .collect();
        assert_eq!(typed, TYPED.iter().map(|s| s.to_string()).collect());
    }

    /// The man page's "Events" section names every event and every field it writes.
    #[test]
    fn the_man_page_documents_every_event() {
        let man = include_str!("../../man/git-task.1").replace("\\-", "-");
        let start = man
            .find(".SS Events")
            .expect("man/git-task.1 has an Events section");
        let section = &man[start..man[start..].find("\n.SH ").map_or(man.len(), |e| start + e)];
        for (name, body) in old_entries().iter().filter(|(n, b)| !retired(n, b)) {
            assert!(section.contains(&format!("\\fB{name}\\fR")), "{name}");
            for key in body.keys().filter(|k| !HEADER.contains(&k.as_str())) {
                assert!(section.contains(&format!("\"{key}\"")), "{name}: {key}");
            }
        }
    }

    #[test]
    fn an_unknown_event_is_kept_as_stored() {
        let message = "frobnicated\n\n{\"event\":\"frobnicated\",\"how\":{\"deep\":[1,2]},\"state\":{},\"task\":\"a\",\"time\":5}\n";
        let entry = Entry::parse("c0ffee".into(), message);
        let Event::Other { name, details } = &entry.event else {
            panic!("{entry:?}");
        };
        assert_eq!(name, "frobnicated");
        assert_eq!(details["how"]["deep"][1], 2);
        assert_eq!(entry.time, Some(5));
        let json = serde_json::to_value(&entry).unwrap();
        assert_eq!(json["event"], "frobnicated");
        assert_eq!(json["details"]["how"]["deep"][0], 1);
        assert!(json["details"].get("state").is_none());
    }

    #[test]
    fn a_known_event_with_an_unknown_field_is_kept_as_stored() {
        let message = "dropped\n\n{\"event\":\"dropped\",\"message\":\"m\",\"why\":3,\"task\":\"a\",\"time\":5}\n";
        let entry = Entry::parse("c0ffee".into(), message);
        assert!(matches!(entry.event, Event::Other { .. }), "{entry:?}");
        assert_eq!(entry.details()["why"], 3);
    }

    /// A branch no task could have (`refs/heads/../x`, a short name, a wrong type): the event is
    /// kept as stored, not typed, so no reader takes it for a branch; a good one is typed.
    #[test]
    fn a_hostile_branch_keeps_the_event_as_stored() {
        let committed = |branch: Value| {
            let body = serde_json::json!({"event": "committed", "task": "t", "time": 1,
                "commit": "c", "branch": branch, "files": [], "skipped": []});
            Entry::parse("c0ffee".into(), &format!("committed\n\n{body}\n"))
        };
        let merged = |into: Value| {
            let body = serde_json::json!({"event": "merged", "task": "t", "time": 1,
                "commit": null, "commits": [], "mode": "squash", "into": into, "keep": false,
                "task_tip": "c", "checks": null});
            Entry::parse("c0ffee".into(), &format!("merged\n\n{body}\n"))
        };
        for bad in [
            Value::from("refs/heads/../x"),
            Value::from("main"),
            Value::from("refs/heads/-x"),
            Value::from(""),
            Value::from(5),
        ] {
            for entry in [committed(bad.clone()), merged(bad.clone())] {
                assert!(
                    matches!(entry.event, Event::Other { .. }),
                    "{bad}: {entry:?}"
                );
                assert!(entry.details().values().any(|v| *v == bad), "{bad}");
            }
        }
        let good = Value::from("refs/heads/main");
        assert!(matches!(committed(good.clone()).event, Event::Committed(_)));
        assert!(matches!(
            merged(good).event,
            Event::Merged(Merged::Branch { .. })
        ));
    }

    #[test]
    fn checks_have_one_shape_whoever_ran_them() {
        let run = Run {
            skipped: false,
            passed: false,
            commands: vec![Outcome {
                command: "make test".into(),
                code: Some(2),
                timed_out: false,
                output: "not kept".into(),
                millis: 7,
            }],
        };
        for (purpose, name) in [(Purpose::Check, "check"), (Purpose::Merge, "merge")] {
            let fields = Value::Object(Event::checks(&run, purpose).fields());
            assert_eq!(
                fields,
                serde_json::json!({
                    "for": name,
                    "skipped": false,
                    "passed": false,
                    "commands": [{ "command": "make test", "code": 2, "timed_out": false, "millis": 7 }],
                })
            );
        }
    }
}
