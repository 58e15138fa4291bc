//! Following records as they grow (`git task log --follow`): which events were appended
//! since the last look.
//!
//! Idle, a look costs a few `stat`s ([`crate::git::refs::stamp`]); only when they change are
//! the record refs read, and then only the commits above the last tip seen are.

use crate::error::Result;
use crate::git::objects;
use crate::git::refs::stamp::stamp;
use crate::git::{ObjectId, Repo};
use crate::record::Entry;
use crate::task::{layout, TaskId};
use std::collections::{BTreeMap, HashSet};

/// Follows the record of one task, or of every task.
pub struct Follower {
    only: Option<TaskId>,
    stamp: Option<u64>,
    tips: BTreeMap<TaskId, ObjectId>,
    seen: HashSet<ObjectId>,
}

impl Follower {
    /// Follows the record of `only`, or of every task (those started later too) when `None`.
    pub fn new(only: Option<TaskId>) -> Follower {
        Follower {
            only,
            stamp: None,
            tips: BTreeMap::new(),
            seen: HashSet::new(),
        }
    }

    /// The events appended since the last call (every event on the first), each with its
    /// task, oldest first (by time across tasks, in record order within one).
    pub fn poll(&mut self, repo: &Repo) -> Result<Vec<(TaskId, Entry)>> {
        let now = stamp(
            repo,
            layout::TASKS_NS,
            self.only.as_ref().map(TaskId::as_str),
            "record",
        );
        if self.stamp == Some(now) {
            return Ok(Vec::new());
        }
        let ids = match &self.only {
            Some(id) => vec![id.clone()],
            None => super::all_ids(repo)?,
        };
        let mut new = Vec::new();
        for id in ids {
            let tip = repo.find_ref(&layout::record_ref(&id))?;
            // Events of a record git-task did not write are not streamed as the task's.
            if crate::ledger::records::verify(repo, id.as_str(), tip).is_err() {
                continue;
            }
            let Some(tip) = tip else {
                self.tips.remove(&id);
                continue;
            };
            if self.tips.get(&id) == Some(&tip) {
                continue;
            }
            // Down the first parents to the last event seen (or the root: a new task, or
            // one started again after it was removed).
            let mut entries = Vec::new();
            let mut next = Some(tip);
            while let Some(commit) = next.filter(|c| !self.seen.contains(c)) {
                let message = objects::commit_message(repo, commit)?;
                entries.push(Entry::parse(commit.to_string(), &message));
                self.seen.insert(commit);
                next = objects::commit_parents(repo, commit)?.first().copied();
            }
            entries.reverse();
            self.tips.insert(id.clone(), tip);
            new.extend(entries.into_iter().map(|e| (id.clone(), e)));
        }
        // Stable: one task's events keep their record order.
        new.sort_by_key(|(_, e)| e.time.unwrap_or(0));
        self.stamp = Some(now);
        Ok(new)
    }
}
