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
    super::dir(repo).join("moves").join(escape(branch))
}

/// The file name of `branch`'s moves (the `reference-transaction` hook computes the same).
pub fn escape(branch: &str) -> String {
    branch.replace('%', "%25").replace('/', "%2F")
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
/// is a report, not a gate). When `old` is not the tip the ledger last knew, the branch moved
/// in between without git-task seeing it: that move is appended first, as unattributed.
pub fn note(repo: &Repo, branch: &str, old: Option<&str>, new: Option<&str>, who: &str) {
    if let Some(old) = old {
        if let Some(last) = read(repo, branch).last() {
            if last.new.as_deref() != Some(old) {
                append(repo, branch, last.new.as_deref(), Some(old), UNATTRIBUTED);
            }
        }
    }
    append(repo, branch, old, new, who);
}

fn append(repo: &Repo, branch: &str, old: Option<&str>, new: Option<&str>, who: &str) {
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

/// Starts watching `branch` at `tip` when nothing is on file yet (a task starts from it); a
/// branch already watched is compared with `tip` ([`check`]), so a move nobody saw before this
/// start is on file as unattributed.
pub fn watch(repo: &Repo, branch: &str, tip: ObjectId) {
    if watched(repo, branch) {
        check(repo, branch, Some(tip));
    } else {
        append(repo, branch, None, Some(&tip.to_string()), "git-task");
    }
}

/// Every move of `branch` on file, oldest first, after a fresh comparison with its tip now
/// (`tip`, `None`: the branch is gone): when the tip differs from the one the ledger last
/// knew, git-task did not see that move, and it is noted as unattributed first. `None` when
/// the ledger does not watch the branch.
pub fn check(repo: &Repo, branch: &str, tip: Option<ObjectId>) -> Option<Vec<Move>> {
    let mut moves = read(repo, branch);
    let last = moves.last()?;
    let now = tip.map(|t| t.to_string());
    if last.new != now {
        let old = last.new.clone();
        append(repo, branch, old.as_deref(), now.as_deref(), UNATTRIBUTED);
        moves.push(Move {
            old,
            new: now,
            time: crate::task::now(),
            who: UNATTRIBUTED.into(),
        });
    }
    Some(moves)
}

/// The unattributed moves of `branch` on file since `since` (seconds since the epoch: when a
/// task started from it), after [`check`] compared it with `tip`. Empty when the ledger does
/// not watch the branch (the hooks are not installed).
pub fn unattributed_since(
    repo: &Repo,
    branch: &str,
    tip: Option<ObjectId>,
    since: i64,
) -> Vec<Move> {
    check(repo, branch, tip)
        .unwrap_or_default()
        .into_iter()
        .filter(|m| m.who == UNATTRIBUTED && m.time >= since)
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn file_names_escape_percents_then_slashes() {
        assert_eq!(super::escape("refs/heads/a%2Fb"), "refs%2Fheads%2Fa%252Fb");
        assert_eq!(super::escape("refs/heads/main"), "refs%2Fheads%2Fmain");
    }
}
