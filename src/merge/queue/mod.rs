//! The local landing queue (SPEC §6 `queue`, issue 33): a persistent queue of tasks per target
//! branch, landed by a runner (`run.rs`) under the not-rocket-science rule. Never prints.
//!
//! * **State in git.** Each branch's queue is the ref `refs/tasks/_queue/<branch>`, a chain of
//!   commits whose tree holds `queue.toml`: the tasks waiting, in order, and the last ones landed
//!   and ejected (`store.rs`). Every change is a compare-and-swap through the ledger, in the same
//!   transaction as the record events of the tasks it concerns: `queued` (`queue add`),
//!   `unqueued` (`queue remove`), `landed` and `queue_ejected` (the runner). `git task log`
//!   (and `log --follow`) show them with the task's other events.
//! * **Every landing is a merge.** The runner lands through [`super::merge_batch`]: the same
//!   selection, judgement, gate checkout, compare-and-swap and clean-up as `git task merge`,
//!   computed on the target's tip at that moment, with the batch's checks run once on the tree
//!   that lands. A batch whose checks fail lands nothing.
//! * **Batches and bisection.** The runner takes up to `--batch` ready tasks; when their checks
//!   fail it looks for the first failing prefix by halving (each half that passes lands at
//!   once), ejects the task that makes it fail with the check output, and goes on with the rest.
//!   Sixteen good tasks take one check run; one bad among them at most six.
//! * **Crash-safe.** A landing is one transaction; the `landed` event and the queue move in a
//!   second one. A runner killed between the two leaves a merged task in the queue, which the
//!   next runner records as landed. What the runner knows of a failed batch is journaled under
//!   `<common dir>/git-task/queue/` so the next one resumes the bisection instead of starting it
//!   again; one runner per branch at a time (an `flock` the kernel lets go on `kill -9`).

mod run;
mod store;

pub use run::{run, RunOptions, RunReport, Step};

use crate::config::Settings;
use crate::error::{Error, Result};
use crate::git::refs::Update;
use crate::git::Repo;
use crate::record::{self, Event};
use crate::task::{BranchName, Mode, Status, TaskId};
use serde_json::{Map, Value};

/// A task was added to a landing queue.
pub const QUEUED: &str = "queued";
/// A task was taken out of a landing queue by hand.
pub const UNQUEUED: &str = "unqueued";
/// The queue landed the task.
pub const LANDED: &str = "landed";
/// The queue ejected the task (its checks failed in the batch, or it could not land).
pub const EJECTED: &str = "queue_ejected";

/// How many landed and ejected tasks a queue remembers (for `queue status`).
const HISTORY: usize = 50;

/// One branch's queue, as `queue.toml` holds it.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Queue {
    /// The tasks waiting, in landing order.
    #[serde(default)]
    pub queued: Vec<Item>,
    /// The last tasks it landed, oldest first.
    #[serde(default)]
    pub landed: Vec<Done>,
    /// The last tasks it ejected, oldest first.
    #[serde(default)]
    pub ejected: Vec<Done>,
}

/// A task waiting in a queue.
#[derive(
    Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Item {
    /// The task id.
    #[schemars(with = "String")]
    pub task: TaskId,
    /// When it was queued, in seconds since the epoch.
    pub time: i64,
}

/// A task a queue landed or ejected.
#[derive(
    Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Done {
    /// The task id.
    #[schemars(with = "String")]
    pub task: TaskId,
    /// When, in seconds since the epoch.
    pub time: i64,
    /// Landed: the commit that carries it on the branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Ejected: why, as a kind (`checks_failed`, `merge_conflict`, `contract_violation`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Ejected: why, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Queue {
    fn position(&self, task: &str) -> Option<usize> {
        self.queued.iter().position(|i| i.task == task)
    }

    /// Takes `task` out of the waiting list; its entry, if it was there.
    fn take(&mut self, task: &str) -> Option<Item> {
        self.position(task).map(|i| self.queued.remove(i))
    }

    fn remember(list: &mut Vec<Done>, done: Done) {
        list.push(done);
        if list.len() > HISTORY {
            let extra = list.len() - HISTORY;
            list.drain(..extra);
        }
    }
}

/// Prepares appending the queue event `name` with `details` to task `id`'s record.
fn event_update(
    repo: &Repo,
    id: &TaskId,
    name: &str,
    details: Map<String, Value>,
) -> Result<Update> {
    let rec = record::load_existing(repo, id)?;
    let event = Event::Other {
        name: name.to_owned(),
        details,
    };
    Ok(record::prepare_append(repo, &rec, &event, &rec.state)?.0)
}

fn details(pairs: &[(&str, Value)]) -> Map<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

/// What `queue add` did.
#[derive(Clone, Debug)]
pub struct Added {
    /// The target branch.
    pub into: BranchName,
    /// The tasks added now, in order.
    pub added: Vec<TaskId>,
    /// The tasks named that were queued already (nothing done).
    pub already: Vec<TaskId>,
    /// The queue after it.
    pub queued: Vec<Item>,
}

/// The branch `--into` names (as `merge --into` takes it).
fn branch(repo: &Repo, settings: &Settings, into: &str) -> Result<BranchName> {
    let full = super::resolve_branch(repo, settings, into)?;
    BranchName::parse(&full).map_err(|why| {
        Error::input(format!("--into '{into}' is not a branch: {why}"))
            .hint("--into takes the name of an existing branch; 'git branch' lists them")
    })
}

/// The branch a task lands on: `into` (a branch, as `merge --into` takes it), else its base branch.
fn target_for(
    repo: &Repo,
    settings: &Settings,
    into: Option<&str>,
    records: &[record::Record],
) -> Result<BranchName> {
    if let Some(b) = into {
        return branch(repo, settings, b);
    }
    let mut target: Option<BranchName> = None;
    for rec in records {
        let Some(base) = rec.state.base_branch.clone() else {
            return Err(Error::input(format!(
                "task '{}' was started from a commit, not a branch",
                rec.state.id
            ))
            .hint(format!(
                "name the branch to land on: git task queue add {} --into <branch>",
                rec.state.id
            )));
        };
        match &target {
            Some(t) if *t != base => {
                return Err(Error::input(format!(
                    "the tasks have different base branches ('{}' and '{}')",
                    t.short(),
                    base.short()
                ))
                .hint("queue them separately, or name one branch for all: --into <branch>"))
            }
            _ => target = Some(base),
        }
    }
    let target = target.ok_or_else(|| Error::input("no task named"))?;
    if repo.find_ref(&target)?.is_none() {
        return Err(
            Error::input(format!("branch '{}' does not exist", target.short()))
                .hint("name the branch to land on: --into <branch>"),
        );
    }
    Ok(target)
}

/// Refuses a task the queue could never land: bad input, nothing written.
fn refuse_unqueueable(rec: &record::Record) -> Result<()> {
    let id = &rec.state.id;
    match rec.state.status {
        Status::Active => {}
        Status::Dropped => {
            return Err(Error::input(format!(
                "task '{id}' was dropped; the queue lands live tasks only"
            ))
            .hint(format!(
                "to land it anyway, merge it by hand: git task merge {id}"
            )))
        }
        Status::Merged => {
            return Err(Error::input(format!("task '{id}' is merged already"))
                .hint(format!("see its history with 'git task log {id}'")))
        }
        Status::Removed => {
            return Err(Error::input(format!(
                "task '{id}' was removed; there is nothing left to land"
            ))
            .hint(format!("see its history with 'git task log {id}'")))
        }
        Status::Provisioning => return Err(Error::input(format!(
            "task '{id}' is still being started"
        ))
        .hint(
            "wait for 'git task start' to finish, or run 'git task sweep' if it was interrupted",
        )),
        Status::Tampered => return Err(Status::tampered_error(id)),
    }
    if rec.state.mode == Mode::Patch {
        return Err(Error::input(format!(
            "task '{id}' works in patch mode: its work is accepted where it is, not queued"
        ))
        .hint(format!("accept it: git task merge {id}")));
    }
    Ok(())
}

/// `queue add`: appends the tasks `ids` to the queue of `into` (else of their base branch), in
/// order; a task queued already stays where it is. Every task is looked at before anything is
/// written: one that cannot be queued is bad input and nothing is written.
pub fn add(repo: &Repo, settings: &Settings, ids: &[TaskId], into: Option<&str>) -> Result<Added> {
    let mut seen = std::collections::HashSet::new();
    for id in ids {
        if !seen.insert(id.as_str()) {
            return Err(Error::input(format!("task '{id}' is named twice")));
        }
    }
    let mut records = Vec::new();
    for id in ids {
        let rec = record::load_existing(repo, id)?;
        refuse_unqueueable(&rec)?;
        records.push(rec);
    }
    let target = target_for(repo, settings, into, &records)?;
    // A task waits in one queue at a time.
    for other in store::targets(repo)? {
        if other == target {
            continue;
        }
        let q = store::read(repo, &other)?.queue;
        if let Some(id) = ids.iter().find(|id| q.position(id.as_str()).is_some()) {
            return Err(Error::input(format!(
                "task '{id}' is queued to land on '{}' already",
                other.short()
            ))
            .hint(format!(
                "take it out first: git task queue remove {id} --into {}",
                other.short()
            )));
        }
    }
    let what = format!(
        "queue {} for {}",
        ids.iter().map(TaskId::as_str).collect::<Vec<_>>().join(" "),
        target.short()
    );
    let now = crate::task::now();
    store::update(repo, &target, &what, |q| {
        let mut updates = Vec::new();
        let mut added = Vec::new();
        let mut already = Vec::new();
        for id in ids {
            if q.position(id).is_some() {
                already.push(id.clone());
                continue;
            }
            q.queued.push(Item {
                task: id.clone(),
                time: now,
            });
            let d = details(&[
                ("into", target.as_str().into()),
                ("position", (q.queued.len()).into()),
            ]);
            updates.push(event_update(repo, id, QUEUED, d)?);
            added.push(id.clone());
        }
        Ok((
            updates,
            Added {
                into: target.clone(),
                added,
                already,
                queued: q.queued.clone(),
            },
        ))
    })
}

/// Starts `git task queue run --into TARGET --detached` as a detached background process (the
/// runner `queue add --run` starts); it lands the queue and exits when no task in it is ready,
/// or at once when another runner holds the queue. Whether it could be started.
pub fn spawn_runner(repo: &Repo, target: &BranchName) -> bool {
    let Ok(exe) = std::env::current_exe() else {
        return false;
    };
    let dir = repo
        .workdir()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_else(|| repo.common_dir().to_path_buf());
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("-C")
        .arg(&dir)
        .args(["queue", "run", "--into", target.as_str(), "--detached"])
        .current_dir(&dir);
    crate::git::spawn_detached(cmd)
}

/// Leaves the terminal's session (the background runner): a terminal closing does not stop it.
pub fn detach() {
    #[cfg(unix)]
    {
        let _ = rustix::process::setsid();
    }
}

/// What `queue remove` did.
#[derive(Clone, Debug)]
pub struct Unqueued {
    /// The task.
    pub task: TaskId,
    /// The branch whose queue it left (`None`: it was in none).
    pub from: Option<BranchName>,
}

/// `queue remove`: takes task `id` out of the queue of `into` (else of whichever queue holds it),
/// with an `unqueued` event. A task in no queue is left as it is. A batch a runner is landing
/// at this moment may still land it.
pub fn remove(
    repo: &Repo,
    settings: &Settings,
    id: &TaskId,
    into: Option<&str>,
) -> Result<Unqueued> {
    record::load_existing(repo, id)?;
    let targets = match into {
        Some(b) => vec![branch(repo, settings, b)?],
        None => store::targets(repo)?,
    };
    for target in targets {
        if store::read(repo, &target)?.queue.position(id).is_none() {
            continue;
        }
        let what = format!("take {id} out of the queue for {}", target.short());
        let removed = store::update(repo, &target, &what, |q| {
            if q.take(id).is_none() {
                return Ok((Vec::new(), false));
            }
            let d = details(&[("into", target.as_str().into())]);
            Ok((vec![event_update(repo, id, UNQUEUED, d)?], true))
        })?;
        if removed {
            return Ok(Unqueued {
                task: id.clone(),
                from: Some(target),
            });
        }
    }
    Ok(Unqueued {
        task: id.clone(),
        from: None,
    })
}

/// One queued task as `queue status` shows it.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Waiting {
    /// The task id.
    #[schemars(with = "String")]
    pub task: TaskId,
    /// When it was queued, in seconds since the epoch.
    pub time: i64,
    /// The task's status now (`active`, `dropped`, `merged`, ...; `missing` when it has no record).
    pub status: String,
}

/// One branch's queue as `queue status` shows it.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct QueueStatus {
    /// The target branch (full ref name).
    #[schemars(with = "String")]
    pub into: BranchName,
    /// The pid of the runner landing it now, if one is.
    pub runner: Option<String>,
    /// The tasks waiting, in landing order.
    pub queued: Vec<Waiting>,
    /// The last tasks it landed, oldest first.
    pub landed: Vec<Done>,
    /// The last tasks it ejected, oldest first.
    pub ejected: Vec<Done>,
}

/// `queue status`: the queue of `into`, or of every branch that has one.
pub fn status(repo: &Repo, settings: &Settings, into: Option<&str>) -> Result<Vec<QueueStatus>> {
    let targets = match into {
        Some(b) => vec![branch(repo, settings, b)?],
        None => store::targets(repo)?,
    };
    let mut out = Vec::new();
    for target in targets {
        let q = store::read(repo, &target)?.queue;
        let mut queued = Vec::new();
        for item in q.queued {
            let status = match record::load(repo, &item.task) {
                Ok(Some(r)) => r.state.status.to_string(),
                Ok(None) => "missing".to_owned(),
                Err(e) if e.code() == "record_tampered" => "tampered".to_owned(),
                Err(e) => return Err(e),
            };
            queued.push(Waiting {
                task: item.task,
                time: item.time,
                status,
            });
        }
        out.push(QueueStatus {
            runner: store::runner(repo, &target)?,
            into: target,
            queued,
            landed: q.landed,
            ejected: q.ejected,
        });
    }
    Ok(out)
}
