//! From repository state to what the judge sees: changed paths, the policy,
//! the branch's contract file, and the effective contract of a task.

use crate::contract::file::{CONTRACT_FILE, POLICY_FILE};
use crate::contract::judge::Link;
use crate::contract::judge::RepairContext;
use crate::contract::{self, BranchFile, Change, Effective, Verdict};
use crate::error::Result;
use crate::git::diff::{self, ChangeKind, ChangedPath};
pub use crate::git::index::staged::{read_staged, Staged};
use crate::git::objects::{self, Tree};
use crate::git::{EntryKind, ObjectId, Repo};
use crate::record::Record;
use crate::task::Mode;

/// Turns tree changes into judge input; a symlink's target is resolved in `tree` (the tree the
/// changes lead to), through the symlinks met on the way, and told a directory from a file
/// (SPEC §5 `symlink_escape`, see [`follow_link`]).
pub fn to_judged_in(
    repo: &Repo,
    changes: &[ChangedPath],
    tree: Option<ObjectId>,
) -> Result<Vec<Change>> {
    let Some(tree) = tree else {
        return judged_with(repo, changes, None);
    };
    let mut in_tree: Option<Tree> = None;
    let mut lookup = |path: &str| -> Result<Option<(EntryKind, ObjectId)>> {
        if in_tree.is_none() {
            in_tree = Some(Tree::read(repo, tree)?);
        }
        Ok(in_tree
            .as_ref()
            .expect("set above")
            .entry(path)
            .ok()
            .flatten())
    };
    judged_with(repo, changes, Some(&mut lookup))
}

/// Looks up the entry at a path of the tree (or index) the changes lead to.
type Lookup<'a> = dyn FnMut(&str) -> Result<Option<(EntryKind, ObjectId)>> + 'a;

/// Judges what is staged: like [`to_judged_in`] on the tree being committed, looked up in the
/// index when git left no cached tree to read it from.
pub fn to_judged_staged(
    repo: &Repo,
    changes: &[ChangedPath],
    staged: &Staged,
) -> Result<Vec<Change>> {
    judged_with(
        repo,
        changes,
        Some(&mut |path: &str| staged.entry(repo, path)),
    )
}

/// Turns tree changes into judge input; symlinks are followed through `lookup` (lexically
/// without one).
fn judged_with(
    repo: &Repo,
    changes: &[ChangedPath],
    mut lookup: Option<&mut Lookup<'_>>,
) -> Result<Vec<Change>> {
    let mut out = Vec::with_capacity(changes.len());
    for c in changes {
        let link_target = match c.new {
            Some((EntryKind::Link, id)) => {
                let target = link_text(repo, &c.path, id)?;
                Some(match lookup.as_mut() {
                    Some(lookup) => follow_link(repo, &mut **lookup, &c.path, &target)?,
                    None => resolve_link(&c.path, &target),
                })
            }
            _ => None,
        };
        out.push(Change {
            path: c.path.clone(),
            kind: c.kind,
            link_target,
            unsafe_path: c.unsafe_path,
            content: match c.kind {
                ChangeKind::Deleted => c.old.map(|(_, id)| id),
                ChangeKind::Added => c.new.map(|(_, id)| id),
                ChangeKind::Modified => None,
            },
        });
    }
    Ok(out)
}

fn link_text(repo: &Repo, path: &str, id: ObjectId) -> Result<String> {
    let blob = objects::read_blob(repo, id)
        .map_err(|e| crate::Error::repo(format!("could not read link '{path}'"), e))?;
    Ok(String::from_utf8_lossy(&blob).into_owned())
}

/// How many symlinks one resolution may pass through (Linux's own limit): more is a loop.
const MAX_LINK_HOPS: usize = 40;

/// Resolves the symlink `link` (its target text `target`) in `tree`, the tree the change leads
/// to, as the file system will once it is checked out: from the link's directory, component by
/// component, and through every symlink of the tree met on the way (`a -> b/x` with `b -> ../db`
/// in the tree lands in `db/x`). A lexical resolution alone would take `b/x` for a path inside
/// the allowed directory `b` leads from. The answer says whether the end is a directory in
/// `tree`; a target that is absolute, climbs above the root or loops is [`Link::Outside`].
fn follow_link(repo: &Repo, lookup: &mut Lookup<'_>, link: &str, target: &str) -> Result<Link> {
    let mut parts: Vec<String> = link.split('/').map(str::to_owned).collect();
    parts.pop();
    let mut todo: std::collections::VecDeque<String> =
        target.split('/').map(str::to_owned).collect();
    if target.starts_with('/') {
        return Ok(Link::Outside(target.to_owned()));
    }
    let mut hops = 0;
    while let Some(part) = todo.pop_front() {
        match part.as_str() {
            "" | "." => continue,
            ".." => {
                if parts.pop().is_none() {
                    return Ok(Link::Outside(target.to_owned()));
                }
                continue;
            }
            _ => parts.push(part),
        }
        let here = parts.join("/");
        if let Some((EntryKind::Link, id)) = lookup(&here)? {
            hops += 1;
            let next = link_text(repo, &here, id)?;
            if hops > MAX_LINK_HOPS || next.starts_with('/') {
                return Ok(Link::Outside(format!(
                    "{target} (through '{here}' -> '{next}')"
                )));
            }
            parts.pop();
            for (i, p) in next.split('/').enumerate() {
                todo.insert(i, p.to_owned());
            }
        }
    }
    let path = parts.join("/");
    let dir = if path.is_empty() {
        Some(true)
    } else {
        lookup(&path)?.map(|(kind, _)| kind == EntryKind::Tree)
    };
    Ok(Link::Inside { path, dir })
}

/// Resolves a symlink's target lexically from the link's directory (SPEC §5): a repository
/// path (`""` for the root), or [`Link::Outside`] when it is absolute or climbs above the root.
pub fn resolve_link(link: &str, target: &str) -> Link {
    if target.starts_with('/') {
        return Link::Outside(target.to_owned());
    }
    let mut parts: Vec<&str> = link.split('/').collect();
    parts.pop();
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Link::Outside(target.to_owned());
                }
            }
            p => parts.push(p),
        }
    }
    Link::Inside {
        path: parts.join("/"),
        dir: None,
    }
}

/// Returns the current tip of the task's base branch (its base commit when it has no branch).
pub fn base_tip(repo: &Repo, record: &Record) -> Result<Option<ObjectId>> {
    if let Some(branch) = &record.state.base_branch {
        if let Some(tip) = repo.find_ref(branch)? {
            return Ok(Some(tip));
        }
    }
    Ok(record.state.base_commit.parse::<ObjectId>().ok())
}

/// Returns the policies that count for a task: `.task-policy.toml` at `tip` (the base
/// branch's or the merge target's current tip) and the one frozen at start.
pub fn policies(repo: &Repo, record: &Record, tip: Option<ObjectId>) -> Result<Vec<String>> {
    let mut out = Vec::new();
    if let Some(tip) = tip {
        if let Some(b) = objects::read_blob_at(repo, tip, POLICY_FILE)? {
            out.push(String::from_utf8_lossy(&b).into_owned());
        }
    }
    out.extend(record.policy_text.clone());
    Ok(out)
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
    effective_at(repo, record, branch, base_tip(repo, record)?)
}

/// Builds the effective contract of a task with the policy at `tip` (a merge target's tip).
pub fn effective_at(
    repo: &Repo,
    record: &Record,
    branch: &BranchFile,
    tip: Option<ObjectId>,
) -> Result<Effective> {
    let policies = policies(repo, record, tip)?;
    let policies: Vec<&str> = policies.iter().map(String::as_str).collect();
    let mut contract = Effective::with_policies(
        &record.state.id,
        &policies,
        &record.contract,
        branch,
        repo.ignore_case(),
    )?;
    // Paths another live task claims are off-limits here (`claimed_by`): in the hook, `check`
    // and the gate alike, since every verdict is judged against this contract.
    for claim in crate::claims::of_others(repo, &record.state.id)? {
        contract.add_claim(&claim.task, &claim.globs, repo.ignore_case());
    }
    Ok(contract)
}

/// Where a task's changes are measured from: the base ref (worktree mode) or the snapshot (patch mode).
///
/// In patch mode the snapshot commit itself: its tree holds the files as they were at the start,
/// so the user's own uncommitted edits made before the start, left as they were, are not the
/// task's (SPEC §9), and a repair `git restore --source=<snapshot>` puts a file back as it was.
pub fn task_base(repo: &Repo, record: &Record) -> Result<ObjectId> {
    let id = record.state.task_id();
    if record.state.mode == Mode::Patch {
        if let Some(snap) = crate::snapshot::snapshot_commit(repo, &id)? {
            return Ok(snap);
        }
    }
    record
        .state
        .base_commit_id(repo)?
        .ok_or_else(|| crate::Error::repo_msg(format!("task '{id}' has a bad base commit")))
}

/// Returns the task's worktree, where its repair commands act (`git -C`), when it exists.
pub fn worktree_root(record: &Record) -> Option<String> {
    let path = std::path::Path::new(&record.state.worktree);
    (!record.state.worktree.is_empty() && path.is_dir()).then(|| record.state.worktree.clone())
}

/// Judges a task's tree `tree` (committed work, or the worktree state) against its contract.
///
/// In worktree mode this is what the merge gate would see (SPEC §7.3): `tree`, as if committed
/// on the task branch, landed on the base branch's current tip; the task's changes are what that
/// landing changes there (when it would conflict: what the task changed since the common
/// ancestor). It never depends on `refs/tasks/<id>/base`, which the task can move.
pub fn judge_tree(repo: &Repo, record: &Record, tree: ObjectId) -> Result<Verdict> {
    if record.state.mode == Mode::Worktree {
        if let Some(target) = base_tip(repo, record)? {
            let head = repo.find_ref(&record.state.branch)?;
            let (before, after) = landing_trees(repo, target, head, tree)?;
            let branch = branch_file_in_tree(repo, record, tree)?;
            let contract = effective_at(repo, record, &branch, Some(target))?;
            let source = repair_source(repo, target, head)?;
            let root = worktree_root(record);
            return judge_change(repo, &contract, before, after, &source.to_string(), root);
        }
    }
    let base = task_base(repo, record)?;
    let base_tree = objects::commit_tree(repo, base)?;
    let changed = diff::tree_to_tree(repo, base_tree, tree)?;
    let judged = to_judged_in(repo, &changed, Some(tree))?;
    let branch = branch_file_in_tree(repo, record, tree)?;
    let contract = effective(repo, record, &branch)?;
    let ctx = RepairContext {
        source: base.to_string(),
        staged: false,
        root: worktree_root(record),
    };
    Ok(contract::judge(&contract, &judged, &ctx))
}

/// Returns the commit a task's repair restores from: the common ancestor of the task and the
/// target, so the repair never hands the task the base's newer work (after a merge of the base,
/// that ancestor is the target's tip, and restoring from it undoes a revert of the base's work).
pub fn repair_source(repo: &Repo, target: ObjectId, head: Option<ObjectId>) -> Result<ObjectId> {
    Ok(match head {
        Some(head) => objects::merge_base(repo, target, head)?.unwrap_or(target),
        None => target,
    })
}

/// Returns `(before, after)`: the target's tree at `target` and its tree once `tree`, committed on
/// top of `head`, would land there by a 3-way merge; or, when that merge conflicts, the common
/// ancestor's tree and `tree`.
fn landing_trees(
    repo: &Repo,
    target: ObjectId,
    head: Option<ObjectId>,
    tree: ObjectId,
) -> Result<(ObjectId, ObjectId)> {
    let target_tree = objects::commit_tree(repo, target)?;
    let Some(head) = head else {
        return Ok((target_tree, tree));
    };
    if objects::merge_base(repo, target, head)? == Some(target) {
        return Ok((target_tree, tree));
    }
    let ancestor = crate::git::merge::ancestor_tree(repo, target, head)?;
    let merged = crate::git::merge::merge_trees(
        repo,
        ancestor,
        target_tree,
        tree,
        ["base", "target", "task"],
    )?;
    Ok(match merged.tree {
        Some(result) => (target_tree, result),
        None => (ancestor, tree),
    })
}

/// Judges the change from tree `before` to tree `after` against `contract` (the merge gate:
/// a landing, or one replayed commit); the repair restores from `source`.
pub fn judge_change(
    repo: &Repo,
    contract: &Effective,
    before: ObjectId,
    after: ObjectId,
    source: &str,
    root: Option<String>,
) -> Result<Verdict> {
    let changed = diff::tree_to_tree(repo, before, after)?;
    let judged = to_judged_in(repo, &changed, Some(after))?;
    let ctx = RepairContext {
        source: source.to_owned(),
        staged: false,
        root,
    };
    Ok(contract::judge(contract, &judged, &ctx))
}

/// Judges commit `commit`'s own change against `contract` (a commit of the task's history that
/// a landing makes reachable from the target, `merge --merge`). A commit with one parent: what
/// it changes there. A merge: the paths whose entry differs from every parent's (git's combined
/// diff), so the work it brings from one side is not blamed but what the merge itself adds is.
/// A root commit: everything in it.
pub fn judge_history_commit(
    repo: &Repo,
    contract: &Effective,
    commit: ObjectId,
    parents: &[ObjectId],
    source: &str,
    root: Option<String>,
) -> Result<Verdict> {
    let after = objects::commit_tree(repo, commit)?;
    let first = match parents.first() {
        Some(p) => objects::commit_tree(repo, *p)?,
        None => objects::empty_tree(repo),
    };
    let mut changed = diff::tree_to_tree(repo, first, after)?;
    if parents.len() > 1 {
        let others = parents[1..]
            .iter()
            .map(|p| Tree::read(repo, objects::commit_tree(repo, *p)?))
            .collect::<Result<Vec<_>>>()?;
        let mut own = Vec::with_capacity(changed.len());
        for c in changed {
            let mut from_a_parent = false;
            for t in &others {
                let entry = t
                    .entry(&c.path)?
                    .filter(|(kind, _)| *kind != EntryKind::Tree);
                from_a_parent |= entry == c.new;
            }
            if !from_a_parent || c.unsafe_path {
                own.push(c);
            }
        }
        changed = own;
    }
    let judged = to_judged_in(repo, &changed, Some(after))?;
    let ctx = RepairContext {
        source: source.to_owned(),
        staged: false,
        root,
    };
    Ok(contract::judge(contract, &judged, &ctx))
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
        let text = staged.read_blob(repo, CONTRACT_FILE)?;
        match text {
            Some(bytes) => BranchFile::Present(String::from_utf8_lossy(&bytes).into_owned()),
            None => BranchFile::Deleted,
        }
    };
    let tip = base_tip(repo, record)?;
    let mut own = own_changes(repo, record, tip, &staged.changes)?;
    if record.state.mode == Mode::Patch {
        own = crate::snapshot::without_pre_start_edits(repo, record, own)?;
    }
    let judged = to_judged_staged(repo, &own, staged)?;
    let contract = effective_at(repo, record, &branch, tip)?;
    let ctx = RepairContext {
        source: "HEAD".into(),
        staged: true,
        root: repo
            .workdir()
            .and_then(|w| std::path::absolute(w).ok())
            .map(|w| w.to_string_lossy().into_owned()),
    };
    Ok(contract::judge(&contract, &judged, &ctx))
}

/// Returns the staged changes that are the task's own (SPEC §7.2): a path whose staged entry
/// is exactly what the base branch's current tip holds arrived from the base (a `git merge` of
/// the base, a `git task sync`), so it is not the task's. A path whose staged entry differs from
/// both HEAD and the base's tip is the task's, even when it restores an older version of the
/// base's work. Nothing the task can write (`MERGE_HEAD`, its own refs) decides this.
///
/// `base_tip` is the task's base branch's tip ([`base_tip`]).
fn own_changes(
    repo: &Repo,
    record: &Record,
    base_tip: Option<ObjectId>,
    changes: &[ChangedPath],
) -> Result<Vec<ChangedPath>> {
    if record.state.mode == Mode::Patch || changes.is_empty() {
        return Ok(changes.to_vec());
    }
    let Some(tip) = base_tip else {
        return Ok(changes.to_vec());
    };
    let tree = objects::commit_tree(repo, tip)?;
    let tree = Tree::read(repo, tree)?;
    let mut own = Vec::with_capacity(changes.len());
    for c in changes {
        let entry = tree
            .entry(&c.path)?
            .filter(|(kind, _)| *kind != EntryKind::Tree);
        // A path git would never write is always judged, whoever's it is.
        let unsafe_path = c.unsafe_path || !crate::git::pathsafe::is_safe_path(c.path.as_bytes());
        if entry != c.new || unsafe_path {
            own.push(c.clone());
        }
    }
    Ok(own)
}

/// Judges the whole task: everything since the base, committed or not, untracked files included.
pub fn judge_task(repo: &Repo, record: &Record) -> Result<Verdict> {
    let path = std::path::Path::new(&record.state.worktree);
    let tree = if path.join(".git").exists() {
        // SPEC §5: files on disk cannot hold `..` or `.git`, but the branch can (`git mktree`):
        // a tip with a path git refuses is judged as it is (no snapshot could even be written).
        if record.state.mode == Mode::Worktree {
            if let Some(tip) = repo.find_ref(&record.state.branch)? {
                let tip_tree = objects::commit_tree(repo, tip)?;
                let base_tree = objects::commit_tree(repo, task_base(repo, record)?)?;
                if diff::tree_to_tree(repo, base_tree, tip_tree)?
                    .iter()
                    .any(|c| c.unsafe_path)
                {
                    return judge_tree(repo, record, tip_tree);
                }
            }
        }
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
        use crate::contract::judge::Link;
        let inside = |p: &str| Link::Inside {
            path: p.into(),
            dir: None,
        };
        assert_eq!(resolve_link("src/link", "db/x.rs"), inside("src/db/x.rs"));
        assert_eq!(
            resolve_link("src/link", "../secrets/k"),
            inside("secrets/k")
        );
        assert_eq!(resolve_link("link", "./a/./b"), inside("a/b"));
        assert_eq!(resolve_link("src/d", ".."), inside(""));
        assert_eq!(
            resolve_link("link", "../outside"),
            Link::Outside("../outside".into())
        );
        assert_eq!(
            resolve_link("a/link", "/etc/passwd"),
            Link::Outside("/etc/passwd".into())
        );
        assert_eq!(
            resolve_link("a/link", "../../x"),
            Link::Outside("../../x".into())
        );
    }
}
