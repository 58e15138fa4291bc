//! Failed setups. A `start` whose setup command fails (or runs past its timeout) rolls back
//! everything it made, record included, so its `setup_failed` event cannot live in a record:
//! it is kept outside refs, one small JSON file per failure under
//! `<common>/git-task/failed-setups/` (the latest [`KEEP`]), where `log --follow --all` finds
//! and streams it like a record's events.

use crate::git::Repo;
use crate::record::{Entry, Event};
use crate::task::TaskId;
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::path::PathBuf;

/// The event's name.
pub const EVENT: &str = "setup_failed";

/// How many failures are kept.
const KEEP: usize = 50;

/// How much of the command's output is kept (its end).
const OUTPUT_TAIL: usize = 2000;

fn dir(repo: &Repo) -> PathBuf {
    crate::git::state_dir(repo.common_dir()).join("failed-setups")
}

/// Notes that the setup of the start of `failed.id` failed (best effort: a note that cannot be
/// written leaves only the start's own error, which the user sees anyway).
pub fn note(repo: &Repo, failed: &super::SetupFailed) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let o = &failed.outcome;
    let mut cut = o.output.len().saturating_sub(OUTPUT_TAIL);
    while !o.output.is_char_boundary(cut) {
        cut += 1;
    }
    let body = serde_json::json!({
        "event": EVENT,
        "task": failed.id.as_str(),
        "time": now.as_secs(),
        "command": o.command,
        "code": o.code,
        "timed_out": o.timed_out,
        "timeout": failed.timeout,
        "millis": o.millis,
        "output": &o.output[cut..],
    });
    let dir = dir(repo);
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let name = format!(
        "{:020}-{}-{}.json",
        now.as_nanos(),
        std::process::id(),
        failed.id
    );
    let _ = crate::git::fs::write_atomically(&dir.join(name), body.to_string().as_bytes());
    let mut names = file_names(&dir);
    if names.len() > KEEP {
        names.sort();
        for old in &names[..names.len() - KEEP] {
            let _ = std::fs::remove_file(dir.join(old));
        }
    }
}

fn file_names(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| e.file_name().to_str().map(str::to_owned))
                .filter(|n| n.ends_with(".json"))
                .collect()
        })
        .unwrap_or_default()
}

/// The failed setups noted since the last call (every one kept, on the first), each as an
/// event of its task (with no record commit), oldest first; `seen` remembers what was returned.
pub fn since(repo: &Repo, seen: &mut HashSet<String>) -> Vec<(TaskId, Entry)> {
    let dir = dir(repo);
    let mut names = file_names(&dir);
    names.sort();
    let mut out = Vec::new();
    for name in names {
        if seen.contains(&name) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(dir.join(&name)) else {
            continue;
        };
        seen.insert(name);
        let Ok(Value::Object(mut body)) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        let Some(id) = body
            .get("task")
            .and_then(Value::as_str)
            .and_then(|t| TaskId::parse(t).ok())
        else {
            continue;
        };
        let time = body.get("time").and_then(Value::as_i64);
        for key in ["event", "task", "time"] {
            body.remove(key);
        }
        let details: Map<String, Value> = body;
        out.push((
            id.clone(),
            Entry {
                commit: String::new(),
                task: Some(id.as_str().to_owned()),
                time,
                event: Event::Other {
                    name: EVENT.to_owned(),
                    details,
                },
            },
        ));
    }
    out
}
