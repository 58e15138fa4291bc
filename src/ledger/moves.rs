//! Every move of a branch that git-task saw, attributed (SPEC §4, `git task audit`).
//!
//! One file per branch under `ledger/moves/` (the ref name with `/` as `%2F`), one line per
//! move: `<old> <new> <time> <who>`, appended with `O_APPEND` (a line is one `write`, so
//! concurrent writers never interleave within a line). `who` is `merge <id>..` for a
//! git-task merge, `worktree <path>` for a move the `reference-transaction` hook saw, and
//! `unattributed` for a move git-task found without having seen it happen. The last line's
//! `<new>` is the tip git-task last knew.

use crate::git::{ObjectId, Repo};
use std::io::Write;
use std::path::PathBuf;

const ZERO: &str = "0000000000000000000000000000000000000000";

/// Who moved a branch, as the ledger says.
pub const UNATTRIBUTED: &str = "unattributed";

fn file(repo: &Repo, branch: &str) -> PathBuf {
    super::dir(repo)
        .join("moves")
        .join(branch.replace('%', "%25").replace('/', "%2F"))
}

/// One move of a branch.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Move {
    /// The commit the branch was at (`None`: created).
    pub old: Option<String>,
    /// The commit it moved to (`None`: deleted).
    pub new: Option<String>,
    /// Seconds since the epoch when git-task saw it.
    pub time: i64,
    /// Who moved it: `merge <id>..`, `worktree <path>`, `git-task`, or `unattributed`.
    pub who: String,
}

/// Appends a move of `branch` from `old` to `new` by `who` (best effort: the ledger of moves
/// is a report, not a gate).
pub fn note(repo: &Repo, branch: &str, old: Option<&str>, new: Option<&str>, who: &str) {
    let path = file(repo, branch);
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let line = format!(
        "{} {} {} {}\n",
        old.unwrap_or(ZERO),
        new.unwrap_or(ZERO),
        crate::task::now(),
        who.replace('\n', " ")
    );
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    {
        let _ = f.write_all(line.as_bytes());
    }
}

/// Every move of `branch` on file, oldest first.
pub fn read(repo: &Repo, branch: &str) -> Vec<Move> {
    let text = std::fs::read_to_string(file(repo, branch)).unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let mut parts = line.splitn(4, ' ');
            let id = |s: &str| (s != ZERO).then(|| s.to_owned());
            let old = id(parts.next()?);
            let new = id(parts.next()?);
            let time = parts.next()?.parse().ok()?;
            let who = parts.next()?.to_owned();
            Some(Move {
                old,
                new,
                time,
                who,
            })
        })
        .collect()
}

/// Whether the ledger watches `branch` (some move of it is on file).
pub fn watched(repo: &Repo, branch: &str) -> bool {
    file(repo, branch).exists()
}

/// Starts watching `branch` at `tip` when nothing is on file yet (a task starts from it).
pub fn watch(repo: &Repo, branch: &str, tip: ObjectId) {
    if !watched(repo, branch) {
        note(repo, branch, None, Some(&tip.to_string()), "git-task");
    }
}

/// Compares `branch`, now at `tip`, with the tip the ledger last knew; a difference is a move
/// git-task did not see: it is noted as unattributed (once) and returned with every other
/// unattributed move on file since `since` (seconds since the epoch).
pub fn unattributed_since(
    repo: &Repo,
    branch: &str,
    tip: Option<ObjectId>,
    since: i64,
) -> Vec<Move> {
    let moves = read(repo, branch);
    let Some(last) = moves.last() else {
        return Vec::new();
    };
    let now = tip.map(|t| t.to_string());
    let mut found: Vec<Move> = moves
        .iter()
        .filter(|m| m.who == UNATTRIBUTED && m.time >= since)
        .cloned()
        .collect();
    if last.new != now {
        note(
            repo,
            branch,
            last.new.as_deref(),
            now.as_deref(),
            UNATTRIBUTED,
        );
        found.push(Move {
            old: last.new.clone(),
            new: now,
            time: crate::task::now(),
            who: UNATTRIBUTED.into(),
        });
    }
    found
}
