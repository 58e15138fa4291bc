//! The task event log under `refs/tasks/<id>/record`.
//!
//! Each event is one commit whose tree holds `task.toml` (state after the
//! event) and `contract.toml` (frozen at start, never changed), and whose
//! message is the event name, a blank line, then a JSON object. Appending is a
//! compare-and-swap on the ref: two writers cannot both win, and the loser
//! retries against the new tip or gets a clear error. Readers need no lock.

use crate::contract::file::ContractFile;
use crate::error::{Context, Error, Result};
use crate::git::objects::{self, TreeEdit};
use crate::git::refs::{RefError, Update};
use crate::git::EntryKind;
use crate::git::{ObjectId, Repo};
use crate::task::{layout, Status, TaskId, TaskState};

pub mod cache;
pub mod event;
pub mod follow;
pub mod frozen;
pub mod place;

pub use event::{Entry, Event};

/// The latest state of a task as read from its record.
#[derive(Clone, Debug)]
pub struct Record {
    /// State after the last event.
    pub state: TaskState,
    /// The contract frozen at start.
    pub contract: ContractFile,
    /// The frozen contract exactly as stored (for digests).
    pub contract_text: String,
    /// The base's `.task-policy.toml` frozen at start, if it had one.
    pub policy_text: Option<String>,
    /// The record ref's current commit.
    pub tip: ObjectId,
}

impl Record {
    /// The checks of the contract frozen at start, with their timeout and the task's environment.
    pub fn frozen_checks(&self) -> crate::checks::Frozen {
        crate::checks::Frozen {
            commands: self.contract.check_commands().to_vec(),
            timeout: self.contract.check_timeout(),
            env: self.state.task_env(),
        }
    }
}

const STATE_FILE: &str = "task.toml";
const CONTRACT_FILE: &str = "contract.toml";
const POLICY_FILE: &str = "policy.toml";

/// Reads the record of `id`; `None` if the task does not exist.
///
/// A record that is not the one git-task last wrote (the ledger says so: rewritten, rolled
/// back, deleted or re-created with git commands) is refused as `record_tampered`: no command
/// acts on any of its fields (SPEC §2 principle 8).
pub fn load(repo: &Repo, id: &TaskId) -> Result<Option<Record>> {
    let tip = repo.find_ref(&layout::record_ref(id))?;
    crate::ledger::records::verify(repo, id.as_str(), tip).map_err(|t| t.error())?;
    let Some(tip) = tip else {
        return Ok(None);
    };
    let mut record = read_at(repo, tip).map_err(|e| unreadable(id, e))?;
    if record.state.id != id.as_str() {
        return Err(crate::ledger::records::Tampered {
            id: id.to_string(),
            why: format!(
                "the record of '{id}' holds the state of task '{}'",
                record.state.id
            ),
            genuine: None,
        }
        .error());
    }
    // This machine's worktree, never the one of the machine that wrote the last event.
    place::resolve(repo, &mut record.state);
    follow_moved_worktree(repo, &mut record.state);
    Ok(Some(record))
}

/// Points `state.worktree` at where git says the task branch is checked out, when the
/// user moved the worktree (`git worktree move`) away from the recorded path.
///
/// Costs one `stat` when the worktree is where the record says. A task still being provisioned
/// has no worktree to follow yet (its `start` is making it at the recorded path, or was killed
/// before: `sweep` rolls it back from the record): not looked for among every worktree.
pub fn follow_moved_worktree(repo: &Repo, state: &mut TaskState) {
    if state.mode != crate::task::Mode::Worktree
        || !matches!(state.status, Status::Active | Status::Dropped)
        || std::path::Path::new(&state.worktree).join(".git").exists()
    {
        return;
    }
    if let Ok(Some(linked)) = crate::git::worktree::find_by_branch(repo, &state.branch) {
        if linked.exists() {
            state.worktree = linked.path.display().to_string();
        }
    }
}

/// The error for a record commit whose `task.toml` does not read as a task state: what is
/// wrong, from the field's own check (`bad task id "../x": ...`), never a panic later.
fn bad_state(tip: ObjectId, e: &toml::de::Error) -> Error {
    Error::repo_msg(format!(
        "record commit {tip} holds a bad {STATE_FILE}: {}",
        e.message().trim()
    ))
}

/// A record of `id` that does not read as git-task's: git-task never writes one, so it is
/// refused as tampered (exit 1, `record_tampered`), named as the record it is.
fn unreadable(id: &TaskId, e: Error) -> Error {
    let name = layout::record_ref(id);
    Error::negative(format!(
        "record_tampered: the record of '{id}' ({name}) cannot be read: {}",
        e.message()
    ))
    .with_code("record_tampered")
    .hint(format!("see what changed: git log -p {name}"))
}

/// Reads the record of `id`, failing with a hint when it does not exist.
pub fn load_existing(repo: &Repo, id: &TaskId) -> Result<Record> {
    load(repo, id)?.ok_or_else(|| missing(id))
}

/// The error for a task that has no record.
pub fn missing(id: &TaskId) -> Error {
    Error::input(format!("no task '{id}'"))
        .hint("list tasks with 'git task list --all'")
        .hint(format!("start it with 'git task start {id}'"))
}

/// Reads only the task state stored in record commit `tip`: what `list` needs.
///
/// The state is read from the event message when it carries one (one object
/// read), else from `task.toml` in the commit's tree.
pub fn read_state(repo: &Repo, tip: ObjectId) -> Result<TaskState> {
    /// The part of an event's body `list` reads; the rest is skipped unparsed.
    #[derive(serde::Deserialize)]
    struct Body {
        state: TaskState,
    }
    let message = objects::commit_message(repo, tip)?;
    if let Some((_, json)) = message.split_once("\n\n") {
        if let Ok(body) = serde_json::from_str::<Body>(json.trim()) {
            return Ok(body.state);
        }
    }
    let tree = objects::commit_tree(repo, tip)?;
    let state = objects::read_blob_in_tree(repo, tree, STATE_FILE)?
        .ok_or_else(|| Error::repo_msg(format!("record commit {tip} has no {STATE_FILE}")))?;
    toml::from_str(&String::from_utf8_lossy(&state)).map_err(|e| bad_state(tip, &e))
}

/// Returns an event commit's `message` with the task state it carries replaced by `state`:
/// an event kept as history on top of another record whose state must stay current.
pub fn message_with_state(message: &str, state: &TaskState) -> Result<String> {
    let (name, json) = message.split_once("\n\n").unwrap_or((message.trim(), "{}"));
    let mut body: serde_json::Value =
        serde_json::from_str(json.trim()).unwrap_or_else(|_| serde_json::json!({}));
    if let Some(map) = body.as_object_mut() {
        let state =
            serde_json::to_value(state).context(|| "could not encode the task state".into())?;
        map.insert("state".into(), state);
    }
    Ok(format!("{name}\n\n{body}\n"))
}

/// Reads the record state stored in record commit `tip`.
pub fn read_at(repo: &Repo, tip: ObjectId) -> Result<Record> {
    let tree = objects::commit_tree(repo, tip)?;
    let state = objects::read_blob_in_tree(repo, tree, STATE_FILE)?
        .ok_or_else(|| Error::repo_msg(format!("record commit {tip} has no {STATE_FILE}")))?;
    let state: TaskState =
        toml::from_str(&String::from_utf8_lossy(&state)).map_err(|e| bad_state(tip, &e))?;
    let contract_text = objects::read_blob_in_tree(repo, tree, CONTRACT_FILE)?
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .ok_or_else(|| Error::repo_msg(format!("record commit {tip} has no {CONTRACT_FILE}")))?;
    let contract = ContractFile::parse(&contract_text, CONTRACT_FILE)
        .map_err(|e| Error::repo_msg(format!("record commit {tip}: {e}")))?;
    let policy_text = objects::read_blob_in_tree(repo, tree, POLICY_FILE)?
        .map(|b| String::from_utf8_lossy(&b).into_owned());
    Ok(Record {
        state,
        contract,
        contract_text,
        policy_text,
        tip,
    })
}

fn event_commit(
    repo: &Repo,
    parent: Option<ObjectId>,
    state: &TaskState,
    frozen: (&str, Option<&str>),
    event: &Event,
) -> Result<ObjectId> {
    let (contract_text, policy_text) = frozen;
    // Every event written here names this machine's worktree: it is noted as this machine's.
    place::note(repo, state);
    let state_blob = objects::write_blob(
        repo,
        toml::to_string(state)
            .context(|| "could not encode task.toml".into())?
            .as_bytes(),
    )?;
    let contract_blob = objects::write_blob(repo, contract_text.as_bytes())?;
    let mut edits = vec![
        TreeEdit::Upsert(STATE_FILE, EntryKind::Blob, state_blob),
        TreeEdit::Upsert(CONTRACT_FILE, EntryKind::Blob, contract_blob),
    ];
    if let Some(policy) = policy_text {
        let policy_blob = objects::write_blob(repo, policy.as_bytes())?;
        edits.push(TreeEdit::Upsert(POLICY_FILE, EntryKind::Blob, policy_blob));
    }
    let tree = objects::edit_tree(repo, objects::empty_tree(repo), &edits)?;
    // The state after the event, also in the message: `list` reads one object per task instead of three.
    let state_json =
        serde_json::to_value(state).context(|| "could not encode the task state".into())?;
    let body = event::body(&state.id, crate::task::now(), event, state_json);
    let message = format!("{}\n\n{body}\n", event.name());
    let parents: Vec<ObjectId> = parent.into_iter().collect();
    objects::write_own_commit(repo, tree, &parents, &message)
}

/// Creates the record of a new task with its `started` event, together with `extra` ref changes, atomically.
///
/// Fails with [`RefError::Conflict`] when the record already exists.
pub fn create(
    repo: &Repo,
    state: &TaskState,
    contract_text: &str,
    started: event::Started,
    extra: Vec<Update>,
) -> std::result::Result<ObjectId, RefError> {
    start_event(repo, None, state, contract_text, started, extra)
}

/// Starts a removed task again: appends a new `started` event (with a new frozen contract) to
/// its record, moving it from `previous.tip`, together with `extra` ref changes, atomically.
///
/// The record keeps the task's earlier life as history. Fails with [`RefError::Conflict`]
/// when the record moved meanwhile (another process restarted it first).
pub fn restart(
    repo: &Repo,
    previous: &Record,
    state: &TaskState,
    contract_text: &str,
    started: event::Started,
    extra: Vec<Update>,
) -> std::result::Result<ObjectId, RefError> {
    start_event(repo, Some(previous), state, contract_text, started, extra)
}

/// The base's `.task-policy.toml` as text, refused (exit 2, before anything is written) when it
/// is not a valid policy: frozen as it is, it would make every check and merge of the task
/// fail, and only a person can fix it on the base branch.
fn checked_policy(state: &TaskState, bytes: Vec<u8>) -> Result<String> {
    use crate::contract::file::{ContractFile, POLICY_FILE};
    let base = state
        .base_branch
        .as_deref()
        .map(|b| crate::git::refs::short_name(b).to_owned())
        .unwrap_or_else(|| state.base_commit.clone());
    let fix = format!(
        "the policy is fixed on '{base}' by a person: correct {POLICY_FILE} there and commit it, then start the task again"
    );
    let text = String::from_utf8(bytes).map_err(|_| {
        Error::input(format!("{POLICY_FILE} on '{base}' is not UTF-8 text")).hint(fix.clone())
    })?;
    ContractFile::parse(&text, POLICY_FILE).map_err(|e| {
        Error::input(format!("{} (on '{base}')", e.message()))
            .hint(fix)
            .hint("see 'man git-task', section CONTRACT FILE, for what a policy may hold")
    })?;
    Ok(text)
}

fn start_event(
    repo: &Repo,
    previous: Option<&Record>,
    state: &TaskState,
    contract_text: &str,
    mut started: event::Started,
    extra: Vec<Update>,
) -> std::result::Result<ObjectId, RefError> {
    let id = state.task_id();
    // The commit carries the time and pid, so it is unique: `MustNotExist` cannot be fooled by an equal value.
    started.nonce = format!("{}-{}", std::process::id(), nanos());
    started.restart_of = previous.map(|p| p.tip.to_string());
    let parent = previous.map(|p| p.tip);
    // The base's policy is frozen with the contract: the gate counts it beside the target's current one.
    let policy = match state.base_commit.parse::<ObjectId>() {
        Ok(base) => objects::read_blob_at(repo, base, crate::contract::file::POLICY_FILE)
            .map_err(RefError::Other)?
            .map(|b| checked_policy(state, b))
            .transpose()
            .map_err(RefError::Other)?,
        Err(_) => None,
    };
    let frozen = (contract_text, policy.as_deref());
    let commit = event_commit(repo, parent, state, frozen, &Event::Started(started))
        .map_err(RefError::Other)?;
    // The digest goes outside refs before any ref names the record (SPEC §7.4).
    let digest = frozen::digest(repo, state, contract_text, policy.as_deref());
    frozen::write(repo, state, commit, digest).map_err(RefError::Other)?;
    let name = layout::record_ref(&id);
    let update = match parent {
        Some(old) => Update::update(name, old, commit, format!("git-task: start {id} again")),
        None => Update::create(name, commit, format!("git-task: start {id}")),
    };
    let mut updates = vec![update];
    updates.extend(extra);
    crate::ledger::apply(repo, crate::ledger::Mover::GitTask, updates)?;
    Ok(commit)
}

/// Returns the record as it was before the current life of the task began, if it had an earlier one.
///
/// That is the parent of the latest `started` event: a task that was removed and started again.
pub fn before_current_start(repo: &Repo, record: &Record) -> Result<Option<Record>> {
    let mut next = Some(record.tip);
    while let Some(commit) = next {
        let message = objects::commit_message(repo, commit)?;
        let parent = objects::commit_parents(repo, commit)?.first().copied();
        if message.lines().next().map(str::trim) == Some(event::STARTED) {
            return parent.map(|p| read_at(repo, p)).transpose();
        }
        next = parent;
    }
    Ok(None)
}

/// Appends `event` to the record, moving it from `record.tip`, together with `extra` ref changes.
pub fn append(
    repo: &Repo,
    record: &Record,
    event: Event,
    state: &TaskState,
    extra: Vec<Update>,
) -> std::result::Result<Record, RefError> {
    let (update, next) = prepare_append(repo, record, &event, state).map_err(RefError::Other)?;
    let mut updates = vec![update];
    updates.extend(extra);
    crate::ledger::apply(repo, crate::ledger::Mover::GitTask, updates)?;
    Ok(next)
}

/// Prepares appending `event` to the record without moving any ref: returns the
/// ref change (a compare-and-swap from `record.tip`) and the record as it will
/// be once that change is applied. Lets one transaction append to several
/// records at once (a multi-task merge).
pub fn prepare_append(
    repo: &Repo,
    record: &Record,
    event: &Event,
    state: &TaskState,
) -> Result<(Update, Record)> {
    let id = state.task_id();
    let commit = event_commit(
        repo,
        Some(record.tip),
        state,
        (&record.contract_text, record.policy_text.as_deref()),
        event,
    )?;
    if let Event::Reset(_) = event {
        // A reset may freeze a new contract (`start --reset` with contract options): its digest
        // goes outside refs before the record names it, as a start's does.
        let digest = frozen::digest(
            repo,
            state,
            &record.contract_text,
            record.policy_text.as_deref(),
        );
        frozen::write(repo, state, commit, digest)?;
    }
    if let Event::Merged(_) = event {
        // A life git-task ended by a merge may be started again with any contract; a `merged`
        // event an agent wrote itself may not (see `frozen::merged_by_git_task`).
        frozen::note_merged(repo, &id, commit)?;
    }
    let update = Update::update(
        layout::record_ref(&id),
        record.tip,
        commit,
        format!("git-task: {} {id}", event.name()),
    );
    let next = Record {
        state: state.clone(),
        contract: record.contract.clone(),
        contract_text: record.contract_text.clone(),
        policy_text: record.policy_text.clone(),
        tip: commit,
    };
    Ok((update, next))
}

/// What a writer wants done with the record as it is now (see [`update`]).
#[allow(clippy::large_enum_variant)] // made and matched once per try, never stored
pub enum Step<T> {
    /// Append `event`, with the task state after it and other ref changes in the same
    /// transaction; [`update`] then returns the new record and `then`.
    Append {
        /// The event.
        event: Event,
        /// The task state after it.
        state: TaskState,
        /// Other ref changes that land with it (all or nothing).
        extra: Vec<Update>,
        /// What the writer returns once the event is written.
        then: T,
    },
    /// Write nothing and finish with this.
    Stop(T),
}

/// How [`update`] ended.
#[allow(clippy::large_enum_variant)] // returned once and taken apart at once, never stored
pub enum Updated<T> {
    /// The event was appended: the record after it, and the writer's `then`.
    Appended(Record, T),
    /// The writer stopped without writing.
    Stopped(T),
    /// The record was deleted meanwhile.
    Gone,
}

/// The one compare-and-swap loop over a record: asks `step` what to write given the record
/// as it is now, appends it, and when another writer moved the record first, reads it again
/// and asks again (at most ten times, then fails with an error saying `what` could not be done:
/// "drop task 'x'").
///
/// `step` may run several times: it must only prepare (objects it writes are harmless when
/// no ref names them).
pub fn update<T>(
    repo: &Repo,
    mut record: Record,
    what: &str,
    mut step: impl FnMut(&Record) -> Result<Step<T>>,
) -> Result<Updated<T>> {
    let id = record.state.task_id();
    for _ in 0..10 {
        let (event, state, extra, then) = match step(&record)? {
            Step::Stop(value) => return Ok(Updated::Stopped(value)),
            Step::Append {
                event,
                state,
                extra,
                then,
            } => (event, state, extra, then),
        };
        match append(repo, &record, event, &state, extra) {
            Ok(next) => return Ok(Updated::Appended(next, then)),
            Err(RefError::Conflict(_)) => match load(repo, &id)? {
                Some(now) => record = now,
                None => return Ok(Updated::Gone),
            },
            Err(RefError::Other(e)) => return Err(e),
        }
    }
    Err(
        Error::repo_msg(format!("could not {what}: its record kept changing"))
            .hint("run the command again"),
    )
}

impl<T> Updated<T> {
    /// The writer's value, failing as [`load_existing`] does when the record was deleted.
    pub fn into_value(self, id: &TaskId) -> Result<T> {
        match self {
            Updated::Appended(_, value) | Updated::Stopped(value) => Ok(value),
            Updated::Gone => Err(missing(id)),
        }
    }
}

/// Appends an event that only records something (no state change, no other refs), retrying if another writer moved the record.
pub fn note(repo: &Repo, id: &TaskId, event: Event) -> Result<()> {
    let what = format!("record '{}' for task '{id}'", event.name());
    update(repo, load_existing(repo, id)?, &what, |record| {
        Ok(Step::Append {
            event: event.clone(),
            state: record.state.clone(),
            extra: Vec::new(),
            then: (),
        })
    })?
    .into_value(id)
}

/// Returns the events of the record, oldest first.
pub fn events(repo: &Repo, record: &Record) -> Result<Vec<Entry>> {
    let mut out = Vec::new();
    let mut next = Some(record.tip);
    while let Some(commit) = next {
        let message = objects::commit_message(repo, commit)?;
        out.push(Entry::parse(commit.to_string(), &message));
        next = objects::commit_parents(repo, commit)?.first().copied();
    }
    out.reverse();
    Ok(out)
}

/// Every record that verifies, and the ids whose record does not (`record_tampered`): what a
/// command that looks at every task reads, so one tampered record neither stops it nor steers it.
pub fn load_all(repo: &Repo) -> Result<(Vec<Record>, Vec<TaskId>)> {
    let mut records = Vec::new();
    let mut tampered = Vec::new();
    for id in all_ids(repo)? {
        match load(repo, &id) {
            Ok(Some(r)) => records.push(r),
            Ok(None) => {}
            Err(e) if e.code() == "record_tampered" => tampered.push(id),
            Err(e) => return Err(e),
        }
    }
    Ok((records, tampered))
}

/// Returns the ids of every task that has a record, sorted.
pub fn all_ids(repo: &Repo) -> Result<Vec<TaskId>> {
    let mut ids: Vec<TaskId> = repo
        .refs_under(layout::TASKS_NS)?
        .into_iter()
        .filter_map(|(name, _)| {
            let rest = name.strip_prefix(layout::TASKS_NS)?;
            let id = rest.strip_suffix("/record")?;
            TaskId::parse(id).ok()
        })
        .collect();
    ids.sort();
    ids.dedup();
    Ok(ids)
}

fn nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}
