//! Moves of a base branch that skipped git-task (SPEC §4, §11): watching a task's base, the
//! unattributed moves since a task started, and the refusal of a merge that would land nothing
//! over one. Core: it prints nothing (the commands warn through `commands::warn_base_moved`).

use crate::git::Repo;
use crate::ledger::moves;

use crate::task::TaskState;
use std::collections::BTreeMap;

/// The first seven digits of a commit id, or `(none)`.
pub fn short(id: Option<&str>) -> &str {
    match id {
        Some(id) => &id[..7.min(id.len())],
        None => "(none)",
    }
}

/// A branch's short name (`main`).
pub fn short_branch(name: &str) -> &str {
    crate::git::refs::short_name(name)
}

/// The full ref name of a branch given as `main` or `refs/heads/main`.
pub fn full_name(branch: &str) -> String {
    if branch.starts_with("refs/") {
        branch.to_owned()
    } else {
        format!("refs/heads/{branch}")
    }
}

/// A base branch that moved outside git-task since a task started from it.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct BaseMoved {
    #[schemars(extend("const" = "base_moved_unattributed"))]
    kind: &'static str,
    /// The branch (short name: `main`).
    pub branch: String,
    /// The commits it was moved to outside git-task, oldest first (`null`: deleted).
    pub commits: Vec<Option<String>>,
}

/// Starts watching the base branch of a task that just started, when the hooks that see its
/// moves are installed (without them every move of the user's would look unattributed).
pub fn watch_base(repo: &Repo, state: &TaskState) {
    let Some(base) = state.base_branch.as_deref() else {
        return;
    };
    if !crate::hooks::sees_ref_moves(repo) {
        return;
    }
    if let Ok(Some(tip)) = repo.find_ref(base) {
        moves::watch(repo, base, tip);
    }
}

/// The unattributed moves of the bases of `tasks` since each started, one entry per branch;
/// nothing for a branch the ledger does not watch.
pub fn base_moved<'a>(
    repo: &Repo,
    tasks: impl IntoIterator<Item = &'a TaskState>,
) -> Vec<BaseMoved> {
    // Each branch once, from the oldest task on it.
    let mut since: BTreeMap<&str, i64> = BTreeMap::new();
    for t in tasks {
        if let Some(base) = t.base_branch.as_deref() {
            let at = since.entry(base).or_insert(t.created);
            *at = (*at).min(t.created);
        }
    }
    since
        .into_iter()
        .filter_map(|(branch, since)| moved_on(repo, branch, since))
        .collect()
}

/// The unattributed moves of `branch` since `since`, after a fresh look at its tip.
fn moved_on(repo: &Repo, branch: &str, since: i64) -> Option<BaseMoved> {
    if !moves::watched(repo, branch) {
        return None;
    }
    let tip = repo.find_ref(branch).ok().flatten();
    let found = moves::unattributed_since(repo, branch, tip, since);
    (!found.is_empty()).then(|| BaseMoved {
        kind: "base_moved_unattributed",
        branch: short_branch(branch).to_owned(),
        commits: found.into_iter().map(|m| m.new).collect(),
    })
}

/// Before a merge of `ids` (into `into`, else each task's base): the unattributed moves of
/// each target since its task started, looked at before the landing moves it (after, the move
/// would hide behind the merge's). A landing that would change nothing on a target that moved
/// outside git-task is refused (`base_moved_unattributed`): the task's work is already there,
/// and not through the gate. Returns the moves to warn about otherwise.
pub fn before_merge(
    repo: &Repo,
    ids: &[crate::task::TaskId],
    into: Option<&str>,
) -> crate::Result<Vec<BaseMoved>> {
    let mut warnings: Vec<BaseMoved> = Vec::new();
    for id in ids {
        let Ok(Some(record)) = crate::record::load(repo, id) else {
            continue;
        };
        let state = &record.state;
        let Some(target) = into
            .map(full_name)
            .or_else(|| state.base_branch.as_ref().map(String::from))
        else {
            continue;
        };
        let Some(moved) = moved_on(repo, &target, state.created) else {
            continue;
        };
        // A task merged already lands nothing by right (the merge says so); a live one whose
        // landing would change nothing has its work on the target by another way.
        if state.mode == crate::task::Mode::Worktree
            && state.status.is_live()
            && lands_nothing(repo, state, &target)?
        {
            let to: Vec<&str> = moved
                .commits
                .iter()
                .map(|c| c.as_deref().map_or("(deleted)", |c| short(Some(c))))
                .collect();
            return Err(crate::Error::negative(format!(
                "base_moved_unattributed: '{}' moved to {} outside git-task (not through a merge, nor seen by the hooks), and merging task '{id}' would change nothing there: its work is already on '{}' without having passed the gate; nothing was merged",
                moved.branch,
                to.join(", "),
                moved.branch
            ))
            .with_code("base_moved_unattributed")
            .hint(format!(
                "see every move: git task audit {}",
                crate::contract::judge::shell_quote(&moved.branch)
            ))
            .hint(format!(
                "put '{}' back where git-task last saw it (git task audit shows it), then merge again",
                moved.branch
            )));
        }
        if !warnings.iter().any(|w| w.branch == moved.branch) {
            warnings.push(moved);
        }
    }
    Ok(warnings)
}

/// Whether landing the task's branch on `target` would leave `target`'s tree as it is.
fn lands_nothing(repo: &Repo, state: &TaskState, target: &str) -> crate::Result<bool> {
    let (Some(tip), Some(onto)) = (repo.find_ref(&state.branch)?, repo.find_ref(target)?) else {
        return Ok(false);
    };
    if crate::git::objects::merge_base(repo, tip, onto)? == Some(tip) {
        return Ok(true);
    }
    let theirs = crate::git::objects::commit_tree(repo, tip)?;
    let ours = crate::git::objects::commit_tree(repo, onto)?;
    if theirs == ours {
        return Ok(true);
    }
    let ancestor = match state.base_commit_id(repo)? {
        Some(base) => crate::git::objects::commit_tree(repo, base)?,
        None => return Ok(false),
    };
    let scratch = repo.with_objects_in_memory();
    let merged = crate::git::merge::merge_trees(
        &scratch,
        ancestor,
        ours,
        theirs,
        ["base", "target", "task"],
    )?;
    Ok(merged.tree == Some(ours))
}
