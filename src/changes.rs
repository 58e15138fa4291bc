//! From repository state to what the judge sees: changed paths, the policy,
//! the branch's contract file, and the effective contract of a task.

use crate::contract::file::{CONTRACT_FILE, POLICY_FILE};
use crate::contract::judge::RepairContext;
use crate::contract::{self, BranchFile, Change, Effective, Verdict};
use crate::error::Result;
use crate::git::diff::{self, ChangedPath};
use crate::git::{objects, staged, ObjectId, Repo};
use crate::record::Record;
use crate::task::{layout, Mode};
use gix::object::tree::EntryKind;

/// Turns tree changes into judge input, resolving symlink targets to repository paths.
pub fn to_judged(repo: &Repo, changes: &[ChangedPath]) -> Result<Vec<Change>> {
    let mut out = Vec::with_capacity(changes.len());
    for c in changes {
        let link_target = match c.new {
            Some((EntryKind::Link, id)) => {
                let blob = repo.inner.find_blob(id).map_err(|e| {
                    crate::Error::repo(format!("could not read link '{}'", c.path), e)
                })?;
                resolve_link(&c.path, &String::from_utf8_lossy(&blob.data))
            }
            _ => None,
        };
        out.push(Change {
            path: c.path.clone(),
            kind: c.kind,
            link_target,
        });
    }
    Ok(out)
}

/// Resolves a symlink's target relative to the link's directory; `None` if it leaves the repository.
pub fn resolve_link(link: &str, target: &str) -> Option<String> {
    if target.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = link.split('/').collect();
    parts.pop();
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Returns the text of `.task-policy.toml` on the task's base branch (its current tip), if any.
pub fn policy_text(repo: &Repo, record: &Record) -> Result<Option<String>> {
    let tip = match &record.state.base_branch {
        Some(branch) => repo.find_ref(branch)?,
        None => None,
    };
    let tip = match tip {
        Some(t) => t,
        None => match record.state.base_commit.parse::<ObjectId>() {
            Ok(id) => id,
            Err(_) => return Ok(None),
        },
    };
    Ok(objects::read_blob_at(repo, tip, POLICY_FILE)?
        .map(|b| String::from_utf8_lossy(&b).into_owned()))
}

/// Returns the branch level of a task whose files are `tree` (`NotApplicable` in patch mode).
pub fn branch_file_in_tree(repo: &Repo, record: &Record, tree: ObjectId) -> Result<BranchFile> {
    if record.state.mode == Mode::Patch {
        return Ok(BranchFile::NotApplicable);
    }
    Ok(
        match objects::read_blob_in_tree(repo, tree, CONTRACT_FILE)? {
            Some(b) => BranchFile::Present(String::from_utf8_lossy(&b).into_owned()),
            None => BranchFile::Deleted,
        },
    )
}

/// Builds the effective contract of a task: policy ∩ frozen ∩ branch file.
pub fn effective(repo: &Repo, record: &Record, branch: &BranchFile) -> Result<Effective> {
    let policy = policy_text(repo, record)?;
    Effective::new(
        &record.state.id,
        policy.as_deref(),
        &record.contract,
        branch,
        repo.ignore_case(),
    )
}

/// Where a task's changes are measured from: the base ref (worktree mode) or the snapshot (patch mode).
///
/// In patch mode the snapshot commit itself: its tree holds the files as they were at the start,
/// so the user's own uncommitted edits made before the start, left as they were, are not the
/// task's (SPEC §9), and a repair `git restore --source=<snapshot>` puts a file back as it was.
pub fn task_base(repo: &Repo, record: &Record) -> Result<ObjectId> {
    let id = record.state.task_id();
    if record.state.mode == Mode::Patch {
        if let Some(snap) = repo.find_ref(&layout::snapshot_ref(&id))? {
            return Ok(snap);
        }
    }
    if let Some(base) = repo.find_ref(&layout::base_ref(&id))? {
        return Ok(base);
    }
    record
        .state
        .base_commit
        .parse()
        .map_err(|e| crate::Error::repo(format!("task '{id}' has a bad base commit"), e))
}

/// Judges a task's tree `tree` (committed work, or the worktree state) against its contract.
pub fn judge_tree(repo: &Repo, record: &Record, tree: ObjectId) -> Result<Verdict> {
    let base = task_base(repo, record)?;
    let base_tree = objects::commit_tree(repo, base)?;
    let changed = diff::tree_to_tree(repo, base_tree, tree)?;
    let judged = to_judged(repo, &changed)?;
    let branch = branch_file_in_tree(repo, record, tree)?;
    let contract = effective(repo, record, &branch)?;
    let ctx = RepairContext {
        source: base.to_string(),
        staged: false,
    };
    Ok(contract::judge(&contract, &judged, &ctx))
}

/// What a commit made now would contain: HEAD, the index, and the staged changes between them.
pub struct Staged {
    /// The commit HEAD points to (`None` on an unborn branch).
    pub head: Option<ObjectId>,
    /// The tree of HEAD (the empty tree when unborn).
    pub head_tree: ObjectId,
    /// The tree the commit would record, when the index's cached tree says so (then `index` is `None`).
    pub tree: Option<ObjectId>,
    /// The index being committed, decoded, when its cached tree could not give `tree`.
    pub index: Option<gix::index::File>,
    /// Paths whose staged entry differs from HEAD, sorted.
    pub changes: Vec<ChangedPath>,
}

/// Reads what is staged in the index git would commit (`GIT_INDEX_FILE` when git set it, as it does for
/// `git commit -a` and `git commit -- <paths>`), compared with HEAD.
///
/// Fast path: git refreshes the index's cached tree before running `pre-commit`, so the tree being
/// committed is known without decoding the index, and only the trees that differ from HEAD's are
/// read. Otherwise the index is decoded and walked together with HEAD's tree (see [`crate::git::staged`]).
pub fn read_staged(repo: &Repo) -> Result<Staged> {
    let head = repo.head_commit()?;
    let head_tree = match head {
        Some(c) => objects::commit_tree(repo, c)?,
        None => objects::empty_tree(repo),
    };
    let path = staged::index_path(repo);
    if let Some(tree) = staged::cached_root_tree(&path, repo.inner.object_hash())? {
        let changes = diff::tree_to_tree(repo, head_tree, tree)?;
        return Ok(Staged {
            head,
            head_tree,
            tree: Some(tree),
            index: None,
            changes,
        });
    }
    let index = if path.exists() {
        staged::open_index(repo, &path)?
    } else {
        gix::index::File::from_state(gix::index::State::new(repo.inner.object_hash()), path)
    };
    let changes = staged::changes(repo, &index, head.map(|_| head_tree))?;
    Ok(Staged {
        head,
        head_tree,
        tree: None,
        index: Some(index),
        changes,
    })
}

/// Judges what is staged for task `record`: the pre-commit hook and `check --staged`.
///
/// The branch level of the contract is the index's `.task-contract.toml`
/// (none in the index: deleted, which is `contract_tampered`); patch-mode
/// tasks have no branch level. The repair names `HEAD` as the source.
pub fn judge_staged(repo: &Repo, record: &Record, staged: &Staged) -> Result<Verdict> {
    let branch = if record.state.mode == Mode::Patch {
        BranchFile::NotApplicable
    } else {
        let text = match (&staged.tree, &staged.index) {
            (Some(tree), _) => objects::read_blob_in_tree(repo, *tree, CONTRACT_FILE)?,
            (None, Some(index)) => match staged::entry_at(index, CONTRACT_FILE) {
                Some((_, id)) => Some(
                    repo.inner
                        .find_blob(id)
                        .map_err(|e| {
                            crate::Error::repo(
                                format!("could not read the staged {CONTRACT_FILE}"),
                                e,
                            )
                        })?
                        .data
                        .clone(),
                ),
                None => None,
            },
            (None, None) => None,
        };
        match text {
            Some(bytes) => BranchFile::Present(String::from_utf8_lossy(&bytes).into_owned()),
            None => BranchFile::Deleted,
        }
    };
    let mut own = own_changes(repo, &staged.changes)?;
    if record.state.mode == Mode::Patch {
        own = crate::patch::without_pre_start_edits(repo, record, own)?;
    }
    let judged = to_judged(repo, &own)?;
    let contract = effective(repo, record, &branch)?;
    let ctx = RepairContext {
        source: "HEAD".into(),
        staged: true,
    };
    Ok(contract::judge(&contract, &judged, &ctx))
}

/// Returns the changes the commit makes itself: while a merge is being concluded (`MERGE_HEAD`
/// exists, as after `git merge` stopped on a conflict), a path whose staged entry is exactly the
/// merged commit's is taken from that commit, not written by the task, and is left out.
///
/// A merge without conflicts runs no `pre-commit` at all, so this opens no new way around the
/// hook; the merge gate judges the whole task either way.
fn own_changes(repo: &Repo, changes: &[ChangedPath]) -> Result<Vec<ChangedPath>> {
    let Ok(text) = std::fs::read_to_string(repo.git_dir().join("MERGE_HEAD")) else {
        return Ok(changes.to_vec());
    };
    let mut merged = Vec::new();
    for line in text.lines() {
        if let Ok(commit) = line.trim().parse::<ObjectId>() {
            let tree = objects::commit_tree(repo, commit)?;
            merged.push(
                repo.inner
                    .find_tree(tree)
                    .map_err(|e| crate::Error::repo(format!("could not read tree {tree}"), e))?,
            );
        }
    }
    let mut own = Vec::with_capacity(changes.len());
    for c in changes {
        let mut taken = false;
        for tree in &merged {
            let entry = tree
                .lookup_entry_by_path(&c.path)
                .map_err(|e| crate::Error::repo(format!("could not look up '{}'", c.path), e))?
                .filter(|e| !e.mode().is_tree())
                .map(|e| (e.mode().kind(), e.object_id()));
            if entry == c.new {
                taken = true;
                break;
            }
        }
        if !taken {
            own.push(c.clone());
        }
    }
    Ok(own)
}

/// Judges a commit that git-task itself is about to make for task `record` (`commit`, `checkpoint`):
/// the change from `parent_tree` to `tree`, with `tree`'s `.task-contract.toml` as the branch level.
///
/// gix runs no hooks, so git-task's own commits call this in process where
/// `git commit` would have run the pre-commit hook (SPEC §8). The result is
/// the same verdict the hook gives for the same change.
pub fn judge_commit(
    repo: &Repo,
    record: &Record,
    parent_tree: ObjectId,
    tree: ObjectId,
) -> Result<Verdict> {
    let changed = diff::tree_to_tree(repo, parent_tree, tree)?;
    let judged = to_judged(repo, &changed)?;
    let branch = branch_file_in_tree(repo, record, tree)?;
    let contract = effective(repo, record, &branch)?;
    let ctx = RepairContext {
        source: "HEAD".into(),
        staged: true,
    };
    Ok(contract::judge(&contract, &judged, &ctx))
}

/// Judges the whole task: everything since the base, committed or not, untracked files included.
pub fn judge_task(repo: &Repo, record: &Record) -> Result<Verdict> {
    let path = std::path::Path::new(&record.state.worktree);
    let tree = if path.join(".git").exists() {
        let wt = crate::git::worktree::open_at(path)?;
        crate::snapshot::read(&wt)?.worktree_tree
    } else {
        match repo.find_ref(&record.state.branch)? {
            Some(tip) => objects::commit_tree(repo, tip)?,
            None => {
                return Err(crate::Error::input(format!(
                    "task '{}' has neither a worktree nor a branch",
                    record.state.id
                )))
            }
        }
    };
    judge_tree(repo, record, tree)
}

#[cfg(test)]
mod tests {
    #[test]
    fn link_targets_resolve_inside_the_repository() {
        use super::resolve_link;
        assert_eq!(
            resolve_link("src/link", "db/x.rs").as_deref(),
            Some("src/db/x.rs")
        );
        assert_eq!(
            resolve_link("src/link", "../secrets/k").as_deref(),
            Some("secrets/k")
        );
        assert_eq!(resolve_link("link", "./a/./b").as_deref(), Some("a/b"));
        assert_eq!(resolve_link("link", "../outside"), None);
        assert_eq!(resolve_link("a/link", "/etc/passwd"), None);
    }
}
