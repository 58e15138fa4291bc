//! What a task is: its id, mode, status and where it lives.

pub mod id;
pub mod layout;

pub use crate::git::refs::BranchName;
pub use id::TaskId;

use crate::error::Result;
use crate::git::worktree::Linked;
use crate::git::{ObjectId, Repo};
use serde::{Deserialize, Serialize};

/// Where the task's work happens.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// A linked worktree on the task's own branch (`task/<id>`, `task.branchPrefix`); the
    /// default.
    #[default]
    Worktree,
    /// The worktree it was started in, guarded by a snapshot.
    Patch,
}

impl Mode {
    /// The mode's name, as the record and the output spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Worktree => "worktree",
            Mode::Patch => "patch",
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where the task is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// `start` has claimed the id but not finished making the task.
    Provisioning,
    /// Ready for work.
    Active,
    /// Marked failed or abandoned; the worktree stays for inspection.
    Dropped,
    /// Landed on its base branch.
    Merged,
    /// Worktree and branch deleted; the record stays for history.
    Removed,
    /// The record is not the one git-task last wrote (rewritten, rolled back, deleted or
    /// re-created with git commands), or does not read as a task state: nothing of it is
    /// trusted. Never read from a record.
    #[serde(skip_deserializing)]
    Tampered,
}

impl Status {
    /// Returns whether the task still has a place to work (worktree or patch snapshot).
    pub fn is_live(self) -> bool {
        matches!(
            self,
            Status::Provisioning | Status::Active | Status::Dropped
        )
    }
}

impl Status {
    /// The refusal for a task whose record did not verify (never read from a record: the
    /// ledger's verdict, SPEC §4).
    pub fn tampered_error(id: &str) -> crate::Error {
        crate::Error::negative(format!(
            "record_tampered: the record of '{id}' is not the one git-task last wrote"
        ))
        .with_code("record_tampered")
        .hint(format!(
            "see what changed: git log -p refs/tasks/{id}/record"
        ))
    }

    /// The status's name, as the record and the output spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Provisioning => "provisioning",
            Status::Active => "active",
            Status::Dropped => "dropped",
            Status::Merged => "merged",
            Status::Removed => "removed",
            Status::Tampered => "tampered",
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The current state of a task, stored as `task.toml` in each record commit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskState {
    /// The task id (validated when the state is read: a bad one is an error, never a panic).
    pub id: TaskId,
    /// Worktree or patch mode.
    pub mode: Mode,
    /// Where the task is in its life.
    pub status: Status,
    /// The task branch, full ref name (`refs/heads/task/<id>`); in patch mode, the branch it
    /// was started on, or `HEAD` when it was started on a detached HEAD.
    pub branch: BranchName,
    /// The branch the task merges into (full ref name), if it was started from a branch.
    #[serde(default)]
    pub base_branch: Option<BranchName>,
    /// The base commit at start (or after the last `sync`/`reset --onto`).
    #[serde(deserialize_with = "object_id")]
    pub base_commit: String,
    /// The worktree the task works in (absolute path).
    #[serde(deserialize_with = "absolute_path")]
    pub worktree: String,
    /// Seconds since the epoch when the task was started.
    pub created: i64,
    /// Process id of the `start` that provisions the task (crash detection).
    pub pid: u32,
    /// The setup command run after provisioning, if any.
    #[serde(default)]
    pub setup: Option<String>,
    /// The first commit of the task branch (the one adding the contract file), if any.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "some_object_id"
    )]
    pub contract_commit: Option<String>,
}

impl TaskState {
    /// What is shown of a task whose record did not verify: its id, and nothing read from it.
    pub fn tampered(id: &TaskId) -> TaskState {
        TaskState {
            id: id.clone(),
            mode: Mode::Worktree,
            status: Status::Tampered,
            branch: BranchName::detached(),
            base_branch: None,
            base_commit: String::new(),
            worktree: String::new(),
            created: 0,
            pid: 0,
            setup: None,
            contract_commit: None,
        }
    }

    /// Returns the id (checked when the state was read or made: `TaskId`'s `Deserialize`).
    pub fn task_id(&self) -> TaskId {
        self.id.clone()
    }

    /// Returns the base branch's short name (`main`), if any.
    pub fn base_branch_short(&self) -> Option<&str> {
        self.base_branch.as_ref().map(BranchName::short)
    }

    /// Returns the task branch's short name (`task/x`); nothing for the [`TaskState::tampered`]
    /// stand-in, which knows no branch.
    pub fn branch_short(&self) -> &str {
        match self.status {
            Status::Tampered => "",
            _ => self.branch.short(),
        }
    }

    /// The commit the task's changes are counted from: the record's base commit (a full id in
    /// every state read from a record), else (the [`TaskState::tampered`] stand-in, which has
    /// none) `refs/tasks/<id>/base`.
    ///
    /// Every command that moves the base ref appends its event with the new base in the same
    /// transaction, so the two agree; a base ref moved by hand changes nothing, as at the gate,
    /// and `list` reads one ref less per task.
    pub fn base_commit_id(&self, repo: &Repo) -> Result<Option<ObjectId>> {
        match self.base_commit.parse().ok() {
            Some(base) => Ok(Some(base)),
            None => repo.find_ref(&layout::base_ref(&self.task_id())),
        }
    }

    /// Whether `linked` is this task's worktree: the one at the recorded path, or the one on
    /// the task's branch (moved with `git worktree move`). The one rule every verb asks.
    pub fn is_worktree(&self, linked: &Linked) -> bool {
        linked.path == std::path::Path::new(&self.worktree)
            || linked.branch.as_deref() == Some(self.branch.as_str())
    }

    /// The task's worktree among `linked` (see [`TaskState::is_worktree`]).
    pub fn find_worktree<'a>(&self, linked: &'a [Linked]) -> Option<&'a Linked> {
        linked.iter().find(|w| self.is_worktree(w))
    }

    /// The task's worktree as git lists the linked worktrees now (see
    /// [`TaskState::is_worktree`]).
    pub fn worktree_now(&self, repo: &Repo) -> Result<Option<Linked>> {
        Ok(crate::git::worktree::list(repo)?
            .into_iter()
            .find(|w| self.is_worktree(w)))
    }

    /// Returns the environment a task's commands run with (`exec`, setup, checks).
    pub fn task_env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("GIT_TASK_ID", self.id.to_string()),
            ("GIT_TASK_BASE", self.base_commit.clone()),
            (
                "GIT_TASK_BASE_BRANCH",
                self.base_branch_short().unwrap_or_default().to_owned(),
            ),
            ("GIT_TASK_BRANCH", self.branch_short().to_owned()),
            ("GIT_TASK_WORKTREE", self.worktree.clone()),
        ]
    }
}

/// Reads a state's commit id: a full hexadecimal object id, else an error that fails reading
/// the record (a revision such as `main~1` is never resolved from a record).
fn object_id<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<String, D::Error> {
    let text = String::deserialize(d)?;
    if matches!(text.len(), 40 | 64) && text.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(text)
    } else {
        let shown: String = text.chars().take(80).collect();
        Err(serde::de::Error::custom(format!(
            "bad commit id {shown:?}: not a full hexadecimal object id"
        )))
    }
}

/// Reads an optional commit id (see [`object_id`]).
fn some_object_id<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<String>, D::Error> {
    object_id(d).map(Some)
}

/// Reads a state's worktree: an absolute path without NUL, else an error that fails reading
/// the record (a relative path would be taken from wherever a command runs).
fn absolute_path<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<String, D::Error> {
    let text = String::deserialize(d)?;
    if std::path::Path::new(&text).is_absolute() && !text.contains('\0') {
        Ok(text)
    } else {
        let shown: String = text.chars().take(80).collect();
        Err(serde::de::Error::custom(format!(
            "bad worktree {shown:?}: not an absolute path"
        )))
    }
}

/// Returns the current time in seconds since the epoch.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(id: &str, branch: &str, base: &str) -> String {
        format!(
            "id = {id}\nmode = \"worktree\"\nstatus = \"active\"\nbranch = {branch}\n\
             base_branch = {base}\nbase_commit = \"{}\"\nworktree = \"/w\"\ncreated = 1\npid = 1\n",
            "0".repeat(40)
        )
    }

    #[test]
    fn a_bad_id_or_branch_fails_reading_the_state() {
        let good = state("\"t1\"", "\"refs/heads/task/t1\"", "\"refs/heads/main\"");
        let read: TaskState = toml::from_str(&good).unwrap();
        assert_eq!(read.task_id().as_str(), "t1");
        for (id, branch, base) in [
            ("\"../x\"", "\"refs/heads/task/t1\"", "\"refs/heads/main\""),
            ("\"\"", "\"refs/heads/task/t1\"", "\"refs/heads/main\""),
            ("\"a b\"", "\"refs/heads/task/t1\"", "\"refs/heads/main\""),
            ("\"t1\"", "\"refs/heads/task/../x\"", "\"refs/heads/main\""),
            ("\"t1\"", "\"\"", "\"refs/heads/main\""),
            ("\"t1\"", "\"refs/heads/task/t1\"", "\"refs/heads/ma in\""),
        ] {
            let text = state(id, branch, base);
            assert!(toml::from_str::<TaskState>(&text).is_err(), "{text}");
        }
        let base = format!("base_commit = \"{}\"", "0".repeat(40));
        for (from, to) in [
            ("worktree = \"/w\"", "worktree = \"w\""),
            ("worktree = \"/w\"", "worktree = \"\""),
            ("worktree = \"/w\"", "worktree = \"/a\\u0000b\""),
            (base.as_str(), "base_commit = \"main~1\""),
            (base.as_str(), "base_commit = \"\""),
        ] {
            let text = good.replacen(from, to, 1);
            assert_ne!(text, good);
            assert!(toml::from_str::<TaskState>(&text).is_err(), "{text}");
        }
    }
}
