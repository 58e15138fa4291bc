//! Pure naming: task id → ref names, branch name, worktree path (SPEC §4).
//!
//! A task's refs (`refs/tasks/<id>/…`), branch and worktree path are named here and nowhere
//! else, from a validated [`TaskId`]; the shared refs beside them are named by their owners
//! (`claims::CLAIMS_REF`, `merge::queue`'s `refs/tasks/_queue/<branch>`).

use super::TaskId;
use std::path::{Path, PathBuf};

/// The namespace of all task refs.
pub const TASKS_NS: &str = "refs/tasks/";
/// The notes ref that carries human-readable notes.
pub const NOTES_REF: &str = "refs/notes/tasks";
/// Default branch prefix (`task.branchPrefix`).
pub const DEFAULT_BRANCH_PREFIX: &str = "task/";

/// Returns `refs/tasks/<id>/record`.
pub fn record_ref(id: &TaskId) -> String {
    format!("{TASKS_NS}{id}/record")
}

/// Returns `refs/tasks/<id>/base`.
pub fn base_ref(id: &TaskId) -> String {
    format!("{TASKS_NS}{id}/base")
}

/// Returns `refs/tasks/<id>/snapshot`.
pub fn snapshot_ref(id: &TaskId) -> String {
    format!("{TASKS_NS}{id}/snapshot")
}

/// Returns `refs/tasks/<id>/checkpoints/<n>`.
pub fn checkpoint_ref(id: &TaskId, n: u32) -> String {
    format!("{TASKS_NS}{id}/checkpoints/{n}")
}

/// Returns `refs/tasks/<id>/attempts/<n>`.
pub fn attempt_ref(id: &TaskId, n: u32) -> String {
    format!("{TASKS_NS}{id}/attempts/{n}")
}

/// Returns the prefix under which all refs of a task live: `refs/tasks/<id>/`.
pub fn task_prefix(id: &TaskId) -> String {
    format!("{TASKS_NS}{id}/")
}

/// Returns the task's scratch directory, `<common>/git-task/scratch/<id>` (`git task
/// scratch`): outside every worktree, removed with the task.
pub fn scratch_dir(common_dir: &Path, id: &TaskId) -> PathBuf {
    crate::git::state_dir(common_dir)
        .join("scratch")
        .join(id.as_str())
}

/// Returns the short branch name, `<prefix><id>` (e.g. `task/auth-fix`).
pub fn branch_name(prefix: &str, id: &TaskId) -> String {
    format!("{prefix}{id}")
}

/// Returns the full branch ref, `refs/heads/<prefix><id>`.
pub fn branch_ref(prefix: &str, id: &TaskId) -> String {
    format!("{}{}", crate::git::refs::HEADS, branch_name(prefix, id))
}

/// Returns the task id a short branch name belongs to, if it is a task branch.
pub fn id_from_branch(prefix: &str, branch: &str) -> Option<TaskId> {
    branch
        .strip_prefix(prefix)
        .and_then(|rest| TaskId::parse(rest).ok())
}

/// Returns where `git task fetch` keeps remote `remote`'s task refs: `refs/remotes/<remote>/tasks/`.
pub fn remote_tasks_ns(remote: &str) -> String {
    format!("refs/remotes/{remote}/tasks/")
}

/// Returns the fetched copy of a task's record: `refs/remotes/<remote>/tasks/<id>/record`.
pub fn remote_record_ref(remote: &str, id: &TaskId) -> String {
    format!("{}{id}/record", remote_tasks_ns(remote))
}

/// Returns the fetched copy of the notes: `refs/remotes/<remote>/notes/tasks`.
pub fn remote_notes_ref(remote: &str) -> String {
    format!("refs/remotes/{remote}/notes/tasks")
}

/// Returns the fetched copy of a branch (full name `refs/heads/<b>`): `refs/remotes/<remote>/<b>`.
pub fn remote_branch_ref(remote: &str, branch: &str) -> String {
    let short = crate::git::refs::short_name(branch);
    format!("refs/remotes/{remote}/{short}")
}

/// Returns the fetched copy of any ref of the remote: its branch or task ref copy, or `None` for
/// a ref `git task fetch` does not bring (`refs/heads/x`, `refs/tasks/…`, `refs/notes/…`).
pub fn remote_copy(remote: &str, name: &str) -> Option<String> {
    if let Some(rest) = name.strip_prefix(TASKS_NS) {
        return Some(format!("{}{rest}", remote_tasks_ns(remote)));
    }
    if let Some(rest) = name.strip_prefix("refs/notes/") {
        return Some(format!("refs/remotes/{remote}/notes/{rest}"));
    }
    crate::git::refs::branch_short(name).map(|_| remote_branch_ref(remote, name))
}

/// The refspecs of `git task fetch <remote>` (documented in the man page, "Several machines"):
/// branches as `git fetch` brings them, task refs and notes into their own namespaces, so that
/// nothing local is ever overwritten.
pub fn fetch_refspecs(remote: &str) -> Vec<String> {
    vec![
        format!("+refs/heads/*:refs/remotes/{remote}/*"),
        format!("+{TASKS_NS}*:{}*", remote_tasks_ns(remote)),
        format!("+refs/notes/*:refs/remotes/{remote}/notes/*"),
    ]
}

/// Returns the default directory holding task worktrees: `../<repo-name>.tasks` beside the main worktree.
pub fn default_worktree_dir(main_worktree: &Path) -> PathBuf {
    let name = main_worktree
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "repo".into());
    main_worktree
        .parent()
        .unwrap_or(main_worktree)
        .join(format!("{name}.tasks"))
}

/// Returns where the worktree of `id` goes: `<dir>/<id>`.
pub fn worktree_path(dir: &Path, id: &TaskId) -> PathBuf {
    dir.join(id.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> TaskId {
        TaskId::parse(s).unwrap()
    }

    #[test]
    fn names() {
        assert_eq!(record_ref(&id("a")), "refs/tasks/a/record");
        assert_eq!(attempt_ref(&id("a"), 3), "refs/tasks/a/attempts/3");
        assert_eq!(branch_ref("task/", &id("a")), "refs/heads/task/a");
        assert_eq!(id_from_branch("task/", "task/a-b"), Some(id("a-b")));
        assert_eq!(id_from_branch("task/", "main"), None);
        assert_eq!(
            remote_record_ref("origin", &id("a")),
            "refs/remotes/origin/tasks/a/record"
        );
        assert_eq!(
            remote_copy("o", "refs/heads/task/a").as_deref(),
            Some("refs/remotes/o/task/a")
        );
        assert_eq!(
            remote_copy("o", "refs/tasks/a/checkpoints/1").as_deref(),
            Some("refs/remotes/o/tasks/a/checkpoints/1")
        );
        assert_eq!(
            remote_copy("o", NOTES_REF).as_deref(),
            Some("refs/remotes/o/notes/tasks")
        );
        assert_eq!(id_from_branch("task/", "task/a..b"), None);
        assert_eq!(
            default_worktree_dir(Path::new("/src/app")),
            PathBuf::from("/src/app.tasks")
        );
        assert_eq!(
            worktree_path(Path::new("/src/app.tasks"), &id("x")),
            PathBuf::from("/src/app.tasks/x")
        );
    }
}
