//! The states of record commits already read, for `list`.
//!
//! A record tip is a commit: what it says never changes, so its state can be
//! kept by commit id and trusted for as long as the id is the tip. `list`
//! reads the states of a thousand tasks from this one file instead of a
//! thousand loose commits (SPEC §10: 1,000 tasks in 100 ms), and writes it
//! back when a tip moved. It is a cache, not state: deleting it, or a line it
//! cannot parse, only costs reading the commits again.
//!
//! File: `<common dir>/git-task/states`, one line per task:
//! `<record tip> <state as JSON>`.

use crate::git::{ObjectId, Repo};
use crate::task::TaskState;
use std::path::PathBuf;

/// The states the file holds, by record tip.
pub struct StateCache {
    path: PathBuf,
    text: String,
    /// Where each tip's state is in `text` (parsed when asked for, on the thread asking).
    lines: foldhash::HashMap<ObjectId, std::ops::Range<usize>>,
}

impl StateCache {
    /// Reads the file; a missing or unreadable one is an empty cache.
    pub fn load(repo: &Repo) -> StateCache {
        let path = crate::git::state_dir(repo.common_dir()).join("states");
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        // A line is some 400 bytes.
        let mut lines =
            foldhash::HashMap::with_capacity_and_hasher(text.len() / 256, Default::default());
        let mut at = 0;
        for line in text.split_inclusive('\n') {
            let start = at;
            at += line.len();
            let Some((hex, json)) = line.trim_end_matches('\n').split_once(' ') else {
                continue;
            };
            if let Ok(tip) = ObjectId::from_hex(hex.as_bytes()) {
                let from = start + hex.len() + 1;
                lines.insert(tip, from..from + json.len());
            }
        }
        StateCache { path, text, lines }
    }

    /// Returns the state of record commit `tip`, if the file has a readable one.
    pub fn get(&self, tip: ObjectId) -> Option<TaskState> {
        let json = self.text.get(self.lines.get(&tip)?.clone())?;
        let state: TaskState = serde_json::from_str(json).ok()?;
        Some(state)
    }

    /// Whether the file holds exactly the tips in `current`: no state is missing and none is stale.
    pub fn holds_exactly(&self, current: &[ObjectId]) -> bool {
        self.lines.len() == current.len() && current.iter().all(|t| self.lines.contains_key(t))
    }

    /// Replaces the file with `states` (best effort: a cache that cannot be
    /// written only costs speed next time). Written aside and renamed, so a
    /// concurrent reader never sees half of it.
    pub fn store<'a>(&self, states: impl IntoIterator<Item = (ObjectId, &'a TaskState)>) {
        let mut text = String::new();
        for (tip, state) in states {
            if let Ok(json) = serde_json::to_string(state) {
                text.push_str(&format!("{tip} {json}\n"));
            }
        }
        let Some(dir) = self.path.parent() else {
            return;
        };
        let _ = std::fs::create_dir_all(dir)
            .and_then(|()| crate::git::fs::write_atomically(&self.path, text.as_bytes()));
    }
}
