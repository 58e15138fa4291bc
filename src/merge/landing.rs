//! The landing, computed in memory on the target's tip and judged (SPEC §7.2–7.3): squash,
//! merge commit or replay, chained in the order given; what lands is exactly what is judged.

use super::message::{merge_message, squash_message};
use super::{select::short, Options, Pending, Refusal, Strategy};
use crate::changes;
use crate::contract::file::CONTRACT_FILE;
use crate::error::Result;
use crate::git::merge::{self as gmerge, CommitInfo};
use crate::git::{objects, pack, ObjectId, Repo};
use crate::task::TaskId;

/// Computes the landing of every pending task in memory, chained in order onto `onto`, and
/// judges it (SPEC §7.2–7.3): the task's changes are exactly what its landing changes on the
/// target; with `--rebase` each replayed commit is judged on its own too, and with `--merge`
/// every commit that would become reachable must hold only paths git would write.
///
/// The landing's trees and commits are written as one pack ([`pack::batch_if`]); a refused
/// one's are written loose (nothing will name them).
pub(super) fn land_and_judge(
    repo: &Repo,
    pending: &mut [Pending],
    onto: ObjectId,
    target: &str,
    opts: &Options,
) -> Result<std::result::Result<(), Refusal>> {
    pack::batch_if(
        repo,
        |repo| judged_landing(repo, pending, onto, target, opts),
        |judged| judged.is_ok(),
    )
}

fn judged_landing(
    repo: &Repo,
    pending: &mut [Pending],
    onto: ObjectId,
    target: &str,
    opts: &Options,
) -> Result<std::result::Result<(), Refusal>> {
    let mut cur = onto;
    let mut cur_tree = objects::commit_tree(repo, onto)?;
    for p in pending.iter_mut() {
        let id = p.record.state.task_id();
        let landing = match opts.strategy {
            Strategy::Squash | Strategy::Merge => land_whole(repo, &id, cur, p.tip, target, opts)?,
            Strategy::Rebase => replay(repo, &id, cur, p.tip, target)?,
        };
        let mut commits = match landing {
            Ok(commits) => commits,
            Err(paths) => {
                // A replay that conflicts where the whole task lands cleanly: the other modes
                // land it, and a sync would bring nothing to resolve.
                let mut lands_with = Vec::new();
                if opts.strategy == Strategy::Rebase {
                    let merge =
                        &mut engine(|a, o, t, labels| gmerge::merge_trees(repo, a, o, t, labels));
                    if whole_tree(repo, merge, &id, cur, p.tip, target)?.is_ok() {
                        lands_with = vec!["squash", "merge"];
                    }
                }
                return Ok(Err(Refusal::Conflict {
                    task: id.to_string(),
                    into: target.to_owned(),
                    paths,
                    lands_with,
                }));
            }
        };
        let branch =
            changes::branch_file_in_tree(repo, &p.record, objects::commit_tree(repo, p.tip)?)?;
        // The policy that counts: the target's, at the tip the landing is computed on, and the frozen one.
        let contract = changes::effective_at(repo, &p.record, &branch, Some(onto))?;
        let source = changes::repair_source(repo, onto, Some(p.tip))?.to_string();
        let new_tree = match commits.last() {
            Some(c) => objects::commit_tree(repo, *c)?,
            None => cur_tree,
        };
        let root = changes::worktree_root(&p.record);
        let verdict =
            changes::judge_change(repo, &contract, cur_tree, new_tree, &source, root.clone())?;
        if !verdict.is_clean() {
            return Ok(Err(Refusal::Violation(verdict)));
        }
        // With `--rebase`, each replayed commit is judged on its own change too; a commit whose
        // change a later commit of the task repaired lands together with its repair.
        if opts.strategy == Strategy::Rebase {
            let judge = &mut |before, after| {
                changes::judge_change(repo, &contract, before, after, &source, root.clone())
            };
            commits = match by_clean_ranges(repo, cur, &commits, judge)? {
                Ok(commits) => commits,
                Err(verdict) => return Ok(Err(Refusal::Violation(squash_instead(verdict)))),
            };
        }
        // A merge commit makes the task's whole history reachable from the target: each commit
        // of it is judged on its own change, as each replayed commit is with `--rebase`.
        if opts.strategy == Strategy::Merge && !commits.is_empty() {
            if let Some(verdict) =
                history_violation(repo, &p.record, &contract, cur, p.tip, &source)?
            {
                return Ok(Err(Refusal::Violation(squash_instead(verdict))));
            }
        }
        if let Some(last) = commits.last() {
            cur = *last;
        }
        cur_tree = new_tree;
        p.commits = commits;
        p.landed_tree = Some(new_tree);
    }
    Ok(Ok(()))
}

/// A violation in a commit of the task's history whose net change keeps the contract (judged
/// first): putting paths back would not change that commit, so the way out is the squash
/// landing of the net change, which lands.
fn squash_instead(mut verdict: crate::contract::Verdict) -> crate::contract::Verdict {
    let task = verdict.task.clone();
    verdict.hints = vec![format!(
        "the task's net change keeps the contract: land it as one squash commit instead: git task merge {task} --squash (or rewrite the branch so that no commit holds the change)"
    )];
    verdict.next = vec![crate::error::Call::new("merge")
        .arg("ids", vec![task])
        .arg("strategy", "squash")];
    verdict
}

/// The first commit reachable from `tip` but not from `onto` whose own change breaks
/// `contract`, judged; its violations name the commit.
fn history_violation(
    repo: &Repo,
    record: &crate::record::Record,
    contract: &crate::contract::Effective,
    onto: ObjectId,
    tip: ObjectId,
    source: &str,
) -> Result<Option<crate::contract::Verdict>> {
    let mut history = objects::commits_between(repo, onto, tip)?;
    history.reverse();
    for (commit, parents) in history {
        let root = changes::worktree_root(record);
        let mut verdict =
            changes::judge_history_commit(repo, contract, commit, &parents, source, root)?;
        if !verdict.is_clean() {
            let short = &commit.to_string()[..12];
            for v in &mut verdict.violations {
                v.rule = format!("{} (in commit {short}, which --merge would land)", v.rule);
            }
            verdict.repair = format!(
                "{}\nWith --merge every commit of the task lands: merge without it (one squash commit of the net change), or rewrite the branch so that no commit holds the change.",
                verdict.repair
            );
            return Ok(Some(verdict));
        }
    }
    Ok(None)
}

/// Squash or merge commit of `task_tip` onto `onto`: `Ok(commits)` (empty when the task changes nothing), or `Err(conflicting paths)`.
pub(super) fn land_whole(
    repo: &Repo,
    id: &TaskId,
    onto: ObjectId,
    task_tip: ObjectId,
    target: &str,
    opts: &Options,
) -> Result<std::result::Result<Vec<ObjectId>, Vec<String>>> {
    let merge = &mut engine(|a, o, t, labels| gmerge::merge_trees(repo, a, o, t, labels));
    let tree = match whole_tree(repo, merge, id, onto, task_tip, target)? {
        Ok(tree) => tree,
        Err(conflicts) => return Ok(Err(conflicts)),
    };
    let ours = objects::commit_tree(repo, onto)?;
    let own = own_commits(repo, onto, task_tip)?;
    let commit = match opts.strategy {
        Strategy::Squash => {
            if tree == ours {
                return Ok(Ok(Vec::new()));
            }
            let message = squash_message(id, &own, opts.message.as_deref());
            gmerge::write_commit(repo, tree, &[onto], &message, None)?
        }
        _ => {
            let message = merge_message(id, target, &own, opts.message.as_deref());
            gmerge::write_commit(repo, tree, &[onto, task_tip], &message, None)?
        }
    };
    Ok(Ok(vec![commit]))
}

/// A three-way tree merge: the gate's is [`gmerge::merge_trees`], trial merges use a
/// [`gmerge::Merger`] that keeps its caches (same engine, options and conflict rule).
pub(super) fn engine<F>(f: F) -> F
where
    F: FnMut(ObjectId, ObjectId, ObjectId, [&str; 3]) -> Result<gmerge::TreeMerge>,
{
    f
}

/// A three-way tree merge of `ancestor`, `ours` and `theirs`, with conflict labels.
pub(super) type Engine<'a> =
    dyn FnMut(ObjectId, ObjectId, ObjectId, [&str; 3]) -> Result<gmerge::TreeMerge> + 'a;

/// The tree of the task at `task_tip` merged onto `onto` (squash and merge commit alike), the
/// contract file kept as `onto` has it: `Ok(tree)`, or `Err(conflicting paths)`. The overlap
/// forecast's trial merges are this very merge (see [`super::trial`]).
pub(super) fn whole_tree(
    repo: &Repo,
    merge: &mut Engine<'_>,
    id: &TaskId,
    onto: ObjectId,
    task_tip: ObjectId,
    target: &str,
) -> Result<std::result::Result<ObjectId, Vec<String>>> {
    let ancestor = gmerge::ancestor_tree(repo, onto, task_tip)?;
    let ours = objects::commit_tree(repo, onto)?;
    // The task side's contract file is set to the ancestor's: the merge then keeps whatever the target holds.
    let keep_contract = gmerge::root_entry(repo, ancestor, CONTRACT_FILE)?;
    let theirs = gmerge::with_root_entry(
        repo,
        objects::commit_tree(repo, task_tip)?,
        CONTRACT_FILE,
        keep_contract,
    )?;
    let merged = merge(
        ancestor,
        ours,
        theirs,
        ["base", short(target), &format!("task {id}")],
    )?;
    let Some(tree) = merged.tree else {
        return Ok(Err(merged.conflicts));
    };
    Ok(Ok(gmerge::with_root_entry(
        repo,
        tree,
        CONTRACT_FILE,
        gmerge::root_entry(repo, ours, CONTRACT_FILE)?,
    )?))
}

/// The replayed commits `commits` (chained onto `onto`), each judged on its own change by
/// `judge`: a commit whose change breaks the contract lands together with the commits after it
/// up to the first one whose net result since it keeps the contract (the task's own repair),
/// as one commit of that net result; a range whose net result is nothing (the task undid it)
/// lands no commit. `Err`: the verdict of a commit no later commit repairs, with the mode that
/// lands the net result named.
fn by_clean_ranges(
    repo: &Repo,
    onto: ObjectId,
    commits: &[ObjectId],
    judge: &mut dyn FnMut(ObjectId, ObjectId) -> Result<crate::contract::Verdict>,
) -> Result<std::result::Result<Vec<ObjectId>, crate::contract::Verdict>> {
    let trees = commits
        .iter()
        .map(|c| objects::commit_tree(repo, *c))
        .collect::<Result<Vec<_>>>()?;
    let mut out = Vec::with_capacity(commits.len());
    let mut parent = onto;
    let mut parent_tree = objects::commit_tree(repo, onto)?;
    let mut rewritten = false;
    let mut i = 0;
    while i < commits.len() {
        let first = judge(parent_tree, trees[i])?;
        let mut j = i;
        let mut verdict = first.clone();
        while !verdict.is_clean() && j + 1 < commits.len() {
            j += 1;
            verdict = judge(parent_tree, trees[j])?;
        }
        if !verdict.is_clean() {
            let mut first = first;
            let short = &commits[i].to_string()[..12];
            for v in &mut first.violations {
                v.rule = format!("{} (in replayed commit {short})", v.rule);
            }
            first.repair = format!(
                "{}\nWith --rebase every commit of the task lands on its own, and no later commit puts this back: merge with --squash (one commit of the task's net change, which keeps the contract), or rewrite the branch so that no commit holds the change.",
                first.repair
            );
            return Ok(Err(first));
        }
        if j == i && !rewritten {
            out.push(commits[i]);
            parent = commits[i];
        } else if trees[j] != parent_tree {
            rewritten = true;
            let infos = commits[i..=j]
                .iter()
                .map(|c| gmerge::commit_info(repo, *c))
                .collect::<Result<Vec<_>>>()?;
            let message = infos
                .iter()
                .map(|c| c.message.trim_end())
                .collect::<Vec<_>>()
                .join("\n\n");
            parent = gmerge::write_commit(
                repo,
                trees[j],
                &[parent],
                &format!("{message}\n"),
                Some(&infos[0].author),
            )?;
            out.push(parent);
        } else {
            // The range changes nothing in the end: the task undid it.
            rewritten = true;
        }
        parent_tree = trees[j];
        i = j + 1;
    }
    Ok(Ok(out))
}

/// Replays the task's own commits onto `onto`, skipping merges and commits that change nothing
/// but the contract file. When a commit meets a conflict that a merge of the base into the task
/// (a `sync`) resolved later, the task's net result up to its last such merge lands as one
/// commit (the resolution included), and the commits after it are replayed on it.
pub(super) fn replay(
    repo: &Repo,
    id: &TaskId,
    onto: ObjectId,
    task_tip: ObjectId,
    target: &str,
) -> Result<std::result::Result<Vec<ObjectId>, Vec<String>>> {
    let line = gmerge::first_parent_line(repo, onto, task_tip)?;
    let conflicts = match replay_line(repo, onto, &line, target)? {
        Ok(made) => return Ok(Ok(made)),
        Err(conflicts) => conflicts,
    };
    let Some(last) = line.iter().rposition(|c| c.parents.len() > 1) else {
        return Ok(Err(conflicts));
    };
    let merge = &mut engine(|a, o, t, labels| gmerge::merge_trees(repo, a, o, t, labels));
    let tree = match whole_tree(repo, merge, id, onto, line[last].id, target)? {
        Ok(tree) => tree,
        Err(_) => return Ok(Err(conflicts)),
    };
    let mut made = Vec::new();
    let mut cur = onto;
    if tree != objects::commit_tree(repo, onto)? {
        let own = own_commits(repo, onto, line[last].id)?;
        let message = squash_message(id, &own, None);
        cur = gmerge::write_commit(repo, tree, &[onto], &message, None)?;
        made.push(cur);
    }
    match replay_line(repo, cur, &line[last + 1..], target)? {
        Ok(rest) => {
            made.extend(rest);
            Ok(Ok(made))
        }
        Err(conflicts) => Ok(Err(conflicts)),
    }
}

/// Replays the single-parent commits of `line` onto `onto`, one by one (see [`replay`]).
fn replay_line(
    repo: &Repo,
    onto: ObjectId,
    line: &[CommitInfo],
    target: &str,
) -> Result<std::result::Result<Vec<ObjectId>, Vec<String>>> {
    let mut cur = onto;
    let mut cur_tree = objects::commit_tree(repo, onto)?;
    let keep_contract = gmerge::root_entry(repo, cur_tree, CONTRACT_FILE)?;
    let mut made = Vec::new();
    let mut i = 0;
    while i < line.len() {
        let c = &line[i];
        i += 1;
        if c.parents.len() != 1 {
            continue;
        }
        let parent_tree = objects::commit_tree(repo, c.parents[0])?;
        let ancestor = gmerge::with_root_entry(repo, parent_tree, CONTRACT_FILE, keep_contract)?;
        let theirs = gmerge::with_root_entry(repo, c.tree, CONTRACT_FILE, keep_contract)?;
        if ancestor == theirs {
            continue;
        }
        let label = format!("{} ({})", c.subject(), &c.id.to_string()[..12]);
        let merged = gmerge::merge_trees(
            repo,
            ancestor,
            cur_tree,
            theirs,
            ["parent", short(target), &label],
        )?;
        let (tree, message) = match merged.tree {
            Some(tree) => (tree, c.message.clone()),
            None => {
                // The commit conflicts on its own: with the later commits of the task up to
                // the first whose net result since its parent lands cleanly (a later commit
                // undid what conflicts), as one commit.
                let mut found = None;
                for (j, later) in line.iter().enumerate().skip(i) {
                    let theirs =
                        gmerge::with_root_entry(repo, later.tree, CONTRACT_FILE, keep_contract)?;
                    let merged = gmerge::merge_trees(
                        repo,
                        ancestor,
                        cur_tree,
                        theirs,
                        ["parent", short(target), &label],
                    )?;
                    if let Some(tree) = merged.tree {
                        found = Some((j, tree));
                        break;
                    }
                }
                let Some((j, tree)) = found else {
                    return Ok(Err(merged.conflicts));
                };
                let message = line[i - 1..=j]
                    .iter()
                    .filter(|c| c.parents.len() == 1)
                    .map(|c| c.message.trim_end())
                    .collect::<Vec<_>>()
                    .join("\n\n");
                i = j + 1;
                (tree, format!("{message}\n"))
            }
        };
        if tree == cur_tree {
            continue;
        }
        // The commit keeps its author and message; the note on the last one names the task.
        cur = gmerge::write_commit(repo, tree, &[cur], &message, Some(&c.author))?;
        cur_tree = tree;
        made.push(cur);
    }
    Ok(Ok(made))
}

/// Returns the task's own commits between `onto` and `tip` (first-parent line, no merges, not the contract-only ones).
pub(super) fn own_commits(repo: &Repo, onto: ObjectId, tip: ObjectId) -> Result<Vec<CommitInfo>> {
    let mut out = Vec::new();
    for c in gmerge::first_parent_line(repo, onto, tip)? {
        if c.parents.len() != 1 {
            continue;
        }
        let parent = gmerge::with_root_entry(
            repo,
            objects::commit_tree(repo, c.parents[0])?,
            CONTRACT_FILE,
            None,
        )?;
        let this = gmerge::with_root_entry(repo, c.tree, CONTRACT_FILE, None)?;
        if parent != this {
            out.push(c);
        }
    }
    Ok(out)
}
