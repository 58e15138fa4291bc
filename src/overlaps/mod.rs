//! The overlap forecast (SPEC §6 `overlaps`): which live tasks will collide, and why, before
//! any of them is merged. Never prints.
//!
//! For every pair of live tasks:
//! - *contract overlap*: their effective contracts (policy, frozen contract, other tasks'
//!   claims) both allow some path — decided on the globs themselves
//!   ([`crate::contract::overlap`]), "may overlap" when it cannot be told for sure;
//! - *same files*: paths both have changed, committed or not;
//! - *trial merge*: both tasks merged onto their base's tip in memory, one after the other,
//!   with the merge gate's own merge ([`crate::merge::trial`]): clean, or the conflicting paths.
//!   A pair whose changed paths share no path and no directory-file clash cannot conflict
//!   there and is not merged: only pairs whose changes meet are;
//!
//! and every task against its base's commits since it started: how far behind, and the paths
//! that conflict when it alone is merged onto the base's tip.
//!
//! Trial merges write their trees and commits to memory only: nothing is left in the object
//! database.

use crate::contract::file::CONTRACT_FILE;
use crate::contract::overlap::{self, Overlap, PathSet};
use crate::contract::BranchFile;
use crate::error::Result;
use crate::git::merge::Merger;
use crate::git::{diff, objects, ObjectId, Repo};
use crate::lifecycle::summary;
use crate::record::{self, Record};
use crate::task::{Mode, Status, TaskId};
use std::collections::BTreeSet;
use std::path::Path;

pub mod cache;
pub mod index;

/// One live task as the forecast sees it.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct TaskView {
    /// The task id.
    pub task: String,
    /// Its base branch (short name); `null` for a detached base.
    pub base: Option<String>,
    /// Commits on the base since the task's merge base with it.
    pub behind: usize,
    /// Paths that conflict when this task alone is merged onto its base's tip (empty: clean).
    pub conflicts_with_base: Vec<String>,
    /// How many paths the task changed, committed or not.
    pub changed: usize,
    /// Whether uncommitted work was counted (its worktree was not clean).
    pub uncommitted: bool,
    #[serde(skip)]
    paths: BTreeSet<String>,
    #[serde(skip)]
    contract: Option<PathSet>,
    #[serde(skip)]
    tip: Option<ObjectId>,
    #[serde(skip)]
    base_tip: Option<ObjectId>,
    #[serde(skip)]
    base_ref: String,
    /// This task merged alone onto its base's tip (a commit in memory), when that is clean.
    #[serde(skip)]
    landed: Option<ObjectId>,
}

/// What two tasks share.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Their contracts allow a common path (or may).
    ContractOverlap,
    /// Both changed some of the same paths.
    SameFiles,
    /// Merging both onto the base conflicts.
    Conflict,
}

/// Whether two contracts allow a common path.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct ContractOverlap {
    /// `yes`, `may` (could not be told for sure) or `no`.
    pub overlap: &'static str,
    /// A path both allow, when one was found.
    pub example: Option<String>,
}

/// The trial merge of a pair.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct TrialMerge {
    /// `clean`, `conflict`, or `not_merged` (see `reason`).
    pub verdict: &'static str,
    /// The conflicting paths.
    pub paths: Vec<String>,
    /// Why there was no trial merge (different bases, a patch-mode task, nothing committed…).
    pub reason: Option<String>,
}

/// One pair of live tasks that share something.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Pair {
    /// The most severe thing they share.
    pub kind: Severity,
    /// The two task ids, in id order.
    pub tasks: [String; 2],
    /// Whether their contracts overlap.
    pub contract: ContractOverlap,
    /// Paths both changed, committed or not.
    pub files: Vec<String>,
    /// Both merged onto the base's tip.
    pub merge: TrialMerge,
}

/// The whole forecast.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct Forecast {
    /// Every live task looked at.
    pub tasks: Vec<TaskView>,
    /// How many pairs were looked at.
    pub pairs_checked: usize,
    /// Whether uncommitted work was looked at (not with `--committed`).
    pub uncommitted_counted: bool,
    /// The pairs that share something, most severe first.
    pub pairs: Vec<Pair>,
}

impl Forecast {
    /// Returns whether any trial merge conflicts (a pair's, or a task's with its base).
    pub fn has_conflict(&self) -> bool {
        self.pairs.iter().any(|p| p.kind == Severity::Conflict)
            || self.tasks.iter().any(|t| !t.conflicts_with_base.is_empty())
    }
}

/// Forecasts the collisions between the live tasks `ids` (all live tasks when empty).
///
/// With `committed_only`, no worktree is looked at: "same files" counts committed work only.
/// Telling uncommitted work costs a status of every task worktree (an `lstat` of each tracked
/// file), which at 100,000 files is most of the forecast's time.
pub fn forecast(repo: &Repo, ids: &[TaskId], committed_only: bool) -> Result<Forecast> {
    let records = live_records(repo, ids)?;
    let memory = repo.with_objects_in_memory();
    let mut merger = Merger::new(&memory)?;
    let clean = match committed_only {
        true => vec![true; records.len()],
        false => clean_worktrees(repo, &records),
    };
    let mut tasks = Vec::new();
    for (record, clean) in records.iter().zip(clean) {
        tasks.push(view(repo, &mut merger, record, clean)?);
    }
    let mut pairs = Vec::new();
    let mut checked = 0;
    for i in 0..tasks.len() {
        for j in i + 1..tasks.len() {
            checked += 1;
            if let Some(pair) = pair(&mut merger, &tasks[i], &tasks[j])? {
                pairs.push(pair);
            }
        }
    }
    pairs.sort_by(|a, b| b.kind.cmp(&a.kind).then_with(|| a.tasks.cmp(&b.tasks)));
    Ok(Forecast {
        tasks,
        pairs_checked: checked,
        uncommitted_counted: !committed_only,
        pairs,
    })
}

/// A live task whose contract allows some path another task's contract allows too.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Neighbour {
    /// The other task.
    pub task: String,
    /// `yes`, or `may` when it could not be told for sure.
    pub overlap: &'static str,
    /// A path both contracts allow, when one was found.
    pub example: Option<String>,
}

/// Returns the other active tasks whose contracts allow a path `record`'s contract allows (what
/// `start` warns about): decided on the globs alone, so it costs no checkout and no merge.
///
/// Only the tasks whose contract can meet `record`'s are read: the overlaps index
/// ([`index`]) keeps, per record tip, each task's status and the literal directory prefixes
/// its frozen contract allows; a task whose prefixes cannot meet the new contract's is
/// `Disjoint` without being read (as [`overlap::intersect`] would say). A task whose contract
/// could not be read (a policy or claims that do not compile) is read and said "may", as before.
pub fn contract_neighbours(repo: &Repo, record: &Record) -> Result<Vec<Neighbour>> {
    let mine = contract_of(repo, record);
    // Without a contract of its own, or with claims that cannot be read, every task "may" meet
    // it: there is nothing to sort out.
    let Some(set) = mine
        .as_ref()
        .filter(|_| crate::claims::of_others(repo, &record.state.task_id()).is_ok())
    else {
        let others = live_records(repo, &[])?;
        return Ok(others
            .iter()
            .filter(|o| o.state.id != record.state.id)
            .filter_map(|o| neighbour(repo, mine.as_ref(), o))
            .collect());
    };
    let mut idx = index::Index::load(repo);
    idx.sync(repo)?;
    let mut policies = index::BasePolicies::new(repo);
    let meeting: Vec<TaskId> = idx
        .entries()
        .filter(|(id, _)| *id != record.state.id.as_str())
        .filter(|(_, e)| e.active && (!e.frozen_ok || !policies.ok(e) || set.may_meet(&e.hull)))
        .filter_map(|(id, _)| TaskId::parse(id).ok())
        .collect();
    idx.save();
    let mut out = Vec::new();
    for id in meeting {
        let Some(other) = index::load_live(repo, &id)? else {
            continue;
        };
        if other.state.status != Status::Active {
            continue;
        }
        out.extend(neighbour(repo, mine.as_ref(), &other));
    }
    Ok(out)
}

/// `other` as a neighbour of a task whose contract is `mine`, if their contracts may meet.
fn neighbour(repo: &Repo, mine: Option<&PathSet>, other: &Record) -> Option<Neighbour> {
    let found = match (mine, contract_of(repo, other)) {
        (Some(a), Some(b)) => overlap::intersect(a, &b),
        _ => Overlap::MayOverlap,
    };
    let (overlap, example) = match found {
        Overlap::Disjoint => return None,
        Overlap::Overlap { witness } => ("yes", Some(witness)),
        Overlap::MayOverlap => ("may", None),
    };
    Some(Neighbour {
        task: other.state.id.to_string(),
        overlap,
        example,
    })
}

/// The paths a task's effective contract lets it change; `None` when it cannot be read.
fn contract_of(repo: &Repo, record: &Record) -> Option<PathSet> {
    crate::changes::effective(repo, record, &BranchFile::NotApplicable)
        .ok()
        .and_then(|e| PathSet::from_effective(&e).ok())
}

/// A live task that conflicts with its base's tip.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct BaseConflict {
    /// The task.
    pub task: String,
    /// The conflicting paths.
    pub paths: Vec<String>,
}

/// Returns the active tasks based on `branch` (full ref name) that conflict with its tip now
/// (what `merge` names after it lands): each merged alone onto the tip in memory.
///
/// Only a task whose committed work can meet the branch's changes since their common ancestor
/// is merged ([`index::conflicting`]); the others merge cleanly. `squashed`: the branch's tips
/// before and after a landing that only wrote new commits on top of it (squashes): while the
/// branch is still at the latter, every other task's merge base with it is the one it had with
/// the former, and what the index knows of each task against that tip still holds.
pub fn conflicting_with(
    repo: &Repo,
    branch: &str,
    squashed: Option<(ObjectId, ObjectId)>,
) -> Result<Vec<BaseConflict>> {
    let Some(tip) = repo.find_ref(branch)? else {
        return Ok(Vec::new());
    };
    let before = squashed.and_then(|(old, new)| (new == tip).then_some(old));
    let memory = repo.with_objects_in_memory();
    Ok(index::conflicting(repo, &memory, branch, tip, before)?
        .into_iter()
        .map(|(task, paths)| BaseConflict { task, paths })
        .collect())
}

/// The live tasks to look at: the named ones (each must exist and be live), or every active one.
fn live_records(repo: &Repo, ids: &[TaskId]) -> Result<Vec<Record>> {
    if ids.is_empty() {
        let (records, _tampered) = record::load_all(repo)?;
        return Ok(records
            .into_iter()
            .filter(|r| r.state.status == Status::Active)
            .collect());
    }
    let mut out: Vec<Record> = Vec::new();
    for id in ids {
        let r = crate::resolve::existing(repo, id)?;
        if !r.state.status.is_live() || r.state.status == Status::Provisioning {
            return Err(crate::Error::input(format!(
                "task '{id}' is {}: only live tasks can collide",
                r.state.status
            ))
            .hint("see the live tasks with 'git task list'"));
        }
        if !out.iter().any(|o| o.state.id == r.state.id) {
            out.push(r);
        }
    }
    Ok(out)
}

/// Tells, for each task, whether its worktree is clean (nothing uncommitted), from stat data
/// where it can: the one cost of the forecast that grows with the worktrees' size, so the
/// worktrees are looked at on every core. `false` where it cannot be told cheaply.
fn clean_worktrees(repo: &Repo, records: &[Record]) -> Vec<bool> {
    let look = |part: &[Record], repo: &Repo| -> Vec<bool> {
        let mut cache = objects::FlatCache::new();
        part.iter()
            .map(|r| {
                let s = &r.state;
                let head = match s.mode {
                    Mode::Worktree => repo.find_ref(&s.branch).ok().flatten(),
                    Mode::Patch => None,
                };
                head.is_some_and(|head| {
                    summary::worktree_is_clean(repo, Path::new(&s.worktree), head, &mut cache)
                        .unwrap_or(false)
                })
            })
            .collect()
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    if records.len() < 2 || threads < 2 {
        return look(records, repo);
    }
    let chunk = records.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = records
            .chunks(chunk)
            .map(|part| {
                let handle = repo.for_thread();
                let look = &look;
                scope.spawn(move || look(part, &handle))
            })
            .collect();
        handles
            .into_iter()
            .zip(records.chunks(chunk))
            .flat_map(|(h, part)| h.join().unwrap_or_else(|_| vec![false; part.len()]))
            .collect()
    })
}

/// Reads what the forecast needs of one task, and merges it alone onto its base's tip.
fn view(repo: &Repo, merger: &mut Merger, record: &Record, clean: bool) -> Result<TaskView> {
    let s = &record.state;
    let id = s.task_id();
    let base_ref = s.base_branch.as_ref().map(String::from).unwrap_or_default();
    let base_tip = match &s.base_branch {
        Some(b) => repo.find_ref(b)?,
        None => s.base_commit.parse().ok(),
    };
    let tip = match s.mode {
        Mode::Worktree => repo.find_ref(&s.branch)?,
        Mode::Patch => None,
    };
    let mut paths = BTreeSet::new();
    let mut behind = 0;
    let mut conflicts = Vec::new();
    let mut landed = None;
    if let (Some(tip), Some(base_tip)) = (tip, base_tip) {
        let from = objects::merge_base(repo, tip, base_tip)?.unwrap_or(base_tip);
        for c in diff::tree_to_tree(
            repo,
            objects::commit_tree(repo, from)?,
            objects::commit_tree(repo, tip)?,
        )? {
            paths.insert(c.path);
        }
        behind = objects::count_between(repo, tip, base_tip)?;
        if paths.iter().all(|p| p == CONTRACT_FILE) {
            // Nothing committed: it lands as the base's tip itself.
            landed = Some(base_tip);
        } else {
            match crate::merge::trial(merger, &id, base_tip, tip, &base_ref)? {
                Ok(commit) => landed = Some(commit),
                Err(paths) => conflicts = paths,
            }
        }
    }
    // Uncommitted work counts for "same files" (a clean worktree was told from stat data).
    let mut uncommitted = false;
    if Path::new(&s.worktree).is_dir() && !clean {
        if let Ok(w) = crate::work::open(repo, record) {
            let changed = diff::tree_to_tree(repo, w.origin_tree, w.state.worktree_tree)?;
            uncommitted = !changed.is_empty();
            paths.extend(changed.into_iter().map(|c| c.path));
        }
    }
    paths.remove(CONTRACT_FILE);
    let contract = contract_of(repo, record);
    Ok(TaskView {
        task: s.id.to_string(),
        base: s.base_branch_short().map(str::to_owned),
        behind,
        conflicts_with_base: conflicts,
        changed: paths.len(),
        uncommitted,
        paths,
        contract,
        tip,
        base_tip,
        base_ref,
        landed,
    })
}

/// What tasks `a` and `b` share; `None` when nothing.
fn pair(merger: &mut Merger, a: &TaskView, b: &TaskView) -> Result<Option<Pair>> {
    let contract = match (&a.contract, &b.contract) {
        (Some(ca), Some(cb)) => match overlap::intersect(ca, cb) {
            Overlap::Disjoint => ContractOverlap {
                overlap: "no",
                example: None,
            },
            Overlap::Overlap { witness } => ContractOverlap {
                overlap: "yes",
                example: Some(witness),
            },
            Overlap::MayOverlap => ContractOverlap {
                overlap: "may",
                example: None,
            },
        },
        // A contract that cannot be read: say it may overlap rather than that it does not.
        _ => ContractOverlap {
            overlap: "may",
            example: None,
        },
    };
    let files: Vec<String> = a.paths.intersection(&b.paths).cloned().collect();
    let merge = trial_pair(merger, a, b)?;
    let kind = if merge.verdict == "conflict" {
        Severity::Conflict
    } else if !files.is_empty() {
        Severity::SameFiles
    } else if contract.overlap != "no" {
        Severity::ContractOverlap
    } else {
        return Ok(None);
    };
    Ok(Some(Pair {
        kind,
        tasks: [a.task.clone(), b.task.clone()],
        contract,
        files,
        merge,
    }))
}

fn not_merged(reason: impl Into<String>) -> TrialMerge {
    TrialMerge {
        verdict: "not_merged",
        paths: Vec::new(),
        reason: Some(reason.into()),
    }
}

/// Both tasks merged onto their base's tip, one after the other, in memory.
fn trial_pair(merger: &mut Merger, a: &TaskView, b: &TaskView) -> Result<TrialMerge> {
    let (Some(tip_a), Some(tip_b)) = (a.tip, b.tip) else {
        return Ok(not_merged("a patch-mode task has no branch to merge"));
    };
    if a.base_ref != b.base_ref || a.base_tip != b.base_tip || a.base_tip.is_none() {
        return Ok(not_merged("the tasks land on different branches"));
    }
    if !touch(&a.paths, &b.paths) {
        return Ok(TrialMerge {
            verdict: "clean",
            paths: Vec::new(),
            reason: None,
        });
    }
    // The views were made from records, whose ids are checked when read: no `expect` here.
    let side = |t: &TaskView, tip| -> Result<Side> {
        Ok(Side {
            id: TaskId::parse(&t.task).map_err(crate::Error::repo_msg)?,
            tip,
            landed: t.landed,
        })
    };
    Ok(
        match merge_both(merger, &side(a, tip_a)?, &side(b, tip_b)?, &a.base_ref)? {
            None => not_merged("a task conflicts with the base on its own (see the task)"),
            Some(paths) if paths.is_empty() => TrialMerge {
                verdict: "clean",
                paths,
                reason: None,
            },
            Some(paths) => TrialMerge {
                verdict: "conflict",
                paths,
                reason: None,
            },
        },
    )
}

/// One task of a pair's trial merge.
struct Side {
    id: TaskId,
    tip: ObjectId,
    /// The task merged alone onto the base's tip (a commit in memory), when that is clean.
    landed: Option<ObjectId>,
}

/// Merges both tasks onto the base's tip, in memory: `a` (as it landed alone), then `b` onto
/// that. `Some(conflicting paths)` (empty: clean); `None` when either conflicts with the base on
/// its own: that is reported per task, and a pair merge could not tell it from a pair conflict.
fn merge_both(merger: &mut Merger, a: &Side, b: &Side, base: &str) -> Result<Option<Vec<String>>> {
    let (Some(onto), Some(_)) = (a.landed, b.landed) else {
        return Ok(None);
    };
    Ok(Some(
        crate::merge::trial(merger, &b.id, onto, b.tip, base)?
            .err()
            .unwrap_or_default(),
    ))
}

/// Returns whether two sets of changed paths meet: a path in both, or a path of one that is a
/// directory of a path of the other (a file on one side where the other has a directory).
fn touch(a: &BTreeSet<String>, b: &BTreeSet<String>) -> bool {
    let below = |x: &BTreeSet<String>, y: &BTreeSet<String>| {
        y.iter().any(|p| {
            let mut dir = p.as_str();
            while let Some(i) = dir.rfind('/') {
                dir = &dir[..i];
                if x.contains(dir) {
                    return true;
                }
            }
            false
        })
    };
    a.intersection(b).next().is_some() || below(a, b) || below(b, a)
}

#[cfg(test)]
mod tests {
    use super::touch;
    use std::collections::BTreeSet;

    fn set(paths: &[&str]) -> BTreeSet<String> {
        paths.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn changed_paths_meet_on_a_path_or_a_directory_file_clash() {
        assert!(touch(&set(&["a/x"]), &set(&["a/x", "b"])));
        assert!(
            touch(&set(&["a"]), &set(&["a/x"])),
            "a file where the other has a directory"
        );
        assert!(touch(&set(&["a/b/c"]), &set(&["a/b"])));
        assert!(!touch(&set(&["a/x"]), &set(&["a/y", "ax/x"])));
        assert!(!touch(&set(&[]), &set(&["a"])));
    }
}
