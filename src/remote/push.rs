//! `git task push`: a task's branch, `refs/tasks/<id>/*` and the notes, sent in one atomic push
//! with a lease on every ref, after its record and the notes were reconciled with the remote's.

use super::{fetch, lease_failed, merge_notes, reconcile_why, relation, Reconciled, Relation};
use crate::error::{Error, Result};
use crate::git::cli::{self, PushRef};
use crate::git::Repo;
use crate::record;
use crate::task::{layout, TaskId};

/// How often a push whose lease failed (someone pushed meanwhile) starts again from the fetch.
const TRIES: u32 = 10;

/// One task's part of a push.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct TaskPushed {
    /// The task id.
    pub task: String,
    /// What reconciling its record with the remote's did.
    pub record: Reconciled,
    /// The refs sent (full names, the same on the remote).
    pub pushed: Vec<String>,
    /// Refs not sent because the remote's differ in a way a push would lose: `(ref, why)`.
    pub refused: Vec<(String, String)>,
    /// Why the remote's record was not taken in here, when it was not (`record` is `refused`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// What [`push`] did.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Pushed {
    /// The remote.
    pub remote: String,
    /// Each task, in the order given (all tasks with a record when none was named).
    pub tasks: Vec<TaskPushed>,
    /// Whether the notes were sent.
    pub notes: bool,
}

impl Pushed {
    /// Whether some ref was not sent because the remote's differs (the user must look first).
    pub fn refused_any(&self) -> bool {
        self.tasks.iter().any(|t| !t.refused.is_empty())
    }
}

/// Pushes the tasks `ids` (every task here when empty) to `remote`.
pub fn push(repo: &Repo, remote: &str, ids: &[TaskId]) -> Result<Pushed> {
    let ids = if ids.is_empty() {
        // A tampered record is never sent: the remote would take it for the task's.
        record::load_all(repo)?
            .0
            .iter()
            .map(|r| r.state.task_id())
            .collect()
    } else {
        for id in ids {
            record::load_existing(repo, id)?;
        }
        ids.to_vec()
    };
    for _ in 0..TRIES {
        fetch(repo, remote)?;
        let notes_lease = merge_notes(repo, remote)?;
        let mut refs = Vec::new();
        let mut tasks = Vec::new();
        for id in &ids {
            let (record, warning) = reconcile_why(repo, remote, id)?;
            let mut task = TaskPushed {
                task: id.to_string(),
                record,
                pushed: Vec::new(),
                refused: Vec::new(),
                warning,
            };
            let rec = record::load_existing(repo, id)?;
            let mut names = repo.refs_under(&layout::task_prefix(id))?;
            if rec.state.mode == crate::task::Mode::Worktree {
                if let Some(tip) = repo.find_ref(&rec.state.branch)? {
                    names.push((rec.state.branch.to_string(), tip));
                }
            }
            for (name, tip) in names {
                let copy = layout::remote_copy(remote, &name).expect("task refs have a copy");
                let theirs = repo.find_ref(&copy)?;
                // The remote's copy may be anything (a blob written there): what cannot be
                // compared is not sent, and fails nothing else.
                let Ok(relation) = relation(repo, Some(tip), theirs) else {
                    task.refused.push((
                        name,
                        format!(
                            "'{remote}' holds an object there that is no commit of this history"
                        ),
                    ));
                    continue;
                };
                match relation {
                    Relation::Same(_) => {}
                    Relation::LocalOnly(_) | Relation::Ahead { .. } => {
                        task.pushed.push(name.clone());
                        refs.push(PushRef {
                            name,
                            new: Some(tip),
                            expect: theirs,
                        });
                    }
                    // The remote has more: nothing here to send, nothing lost.
                    Relation::Behind { .. } => {}
                    Relation::Diverged { .. } | Relation::Neither | Relation::RemoteOnly(_) => {
                        task.refused.push((
                            name,
                            format!("'{remote}' holds a different commit; a push would lose it"),
                        ))
                    }
                }
            }
            tasks.push(task);
        }
        // The notes here contain the remote's now (merged above): only then are they sent.
        let local_notes = repo.find_ref(layout::NOTES_REF)?;
        let notes = matches!(
            relation(repo, local_notes, notes_lease)?,
            Relation::LocalOnly(_) | Relation::Ahead { .. }
        );
        if notes {
            refs.push(PushRef {
                name: layout::NOTES_REF.to_owned(),
                new: local_notes,
                expect: notes_lease,
            });
        }
        let pushed = Pushed {
            remote: remote.to_owned(),
            tasks,
            notes,
        };
        if refs.is_empty() {
            return Ok(pushed);
        }
        let run = cli::push_atomic(super::git_dir(repo), remote, &refs)?;
        if run.success {
            super::record_pushed(repo, remote, &refs)?;
            return Ok(pushed);
        }
        if !lease_failed(&run) {
            return Err(Error::repo_msg(format!(
                "'{remote}' refused the push: {}",
                run.stderr.trim()
            ))
            .hint("nothing was pushed"));
        }
    }
    Err(Error::repo_msg(format!(
        "'{remote}' kept changing while pushing; nothing was pushed"
    ))
    .hint("run the push again"))
}
