//! `drop`: mark a task failed or abandoned; its worktree stays for inspection.

use crate::config::Settings;
use crate::error::{Error, Result};
use crate::git::Repo;
use crate::record::event::{self, Event};
use crate::record::{self, Record, Step, Updated};
use crate::task::{Status, TaskId};

/// How `drop` ended.
#[derive(Debug)]
pub struct Dropped {
    /// The record now.
    pub record: Record,
    /// Whether this call dropped it (false: it was already dropped, merged or removed).
    pub changed: bool,
}

/// Marks the task `id` (default: the active task) dropped, with `message` in its event.
///
/// A task that is already dropped, merged or removed is left as it is; one still being started is refused.
pub fn drop(
    repo: &Repo,
    settings: &Settings,
    id: Option<&TaskId>,
    message: Option<&str>,
) -> Result<Dropped> {
    crate::recover::abandoned::repair_abandoned_starts(repo, settings);
    let record = crate::resolve::resolve(repo, settings, id)?;
    let id = record.state.task_id();
    // Another command may append to the record at the same moment: `update` retries against its new tip.
    let updated = record::update(repo, record, &format!("drop task '{id}'"), |current| {
        match current.state.status {
            Status::Dropped | Status::Merged | Status::Removed => {
                return Ok(Step::Stop(Some(current.clone())))
            }
            Status::Provisioning => {
                return Err(Error::input(format!("task '{id}' is still being started"))
                    .hint("wait for 'git task start' to finish, or run 'git task sweep' if it was interrupted"));
            }
            Status::Active => {}
            Status::Tampered => return Err(Status::tampered_error(id.as_str())),
        }
        let mut state = current.state.clone();
        state.status = Status::Dropped;
        Ok(Step::Append {
            event: Event::Dropped(event::Dropped {
                message: message.map(str::to_owned),
            }),
            state,
            extra: Vec::new(),
            then: None,
        })
    })?;
    match updated {
        Updated::Appended(record, _) => {
            // A dropped task's claims end here (`sweep` drops one a killed drop left).
            let _ = crate::claims::release_all(repo, &record.state.id);
            Ok(Dropped {
                record,
                changed: true,
            })
        }
        Updated::Stopped(record) => Ok(Dropped {
            record: record.expect("a stop carries the record"),
            changed: false,
        }),
        Updated::Gone => Err(record::missing(&id)),
    }
}
