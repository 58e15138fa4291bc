//! `commit`: stage and commit only the eligible changes of a task.
//!
//! Eligible: changed since HEAD (staged, unstaged or untracked), not ignored
//! (ignored files are never in the state), not matched by
//! `task.autoCommitExclude`, and without a violation in the task's verdict
//! (judged in process, as the pre-commit hook would: gix runs no hooks). The
//! commit is written in process on the branch checked out in the task's
//! worktree (the task branch, or in patch mode the user's branch); the index
//! is updated for the committed paths and left alone for the others.

use crate::config::Settings;
use crate::contract::glob::Patterns;
use crate::contract::Verdict;
use crate::error::{Error, Result};
use crate::git::objects::{self, TreeEdit};
use crate::git::refs::{self, Update};
use crate::git::{checkout::inplace, diff, ObjectId, Repo};
use crate::record::event::{self, Event};
use crate::record::Record;
use crate::work;
use std::collections::BTreeMap;

/// A path left out of the commit, and why.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Skipped {
    /// The path.
    pub path: String,
    /// `excluded` (task.autoCommitExclude), `before_start` (patch mode: the user's own edit made
    /// before the task started) or a contract reason.
    pub reason: String,
    /// The rule that left it out.
    pub rule: String,
}

/// How `commit` ended.
pub enum Outcome {
    /// A commit was made with `files`.
    Committed {
        /// The new commit.
        commit: ObjectId,
        /// The branch moved (full ref name, or `HEAD` when detached).
        branch: String,
        /// The committed paths.
        files: Vec<String>,
        /// Paths left out.
        skipped: Vec<Skipped>,
        /// The commits an unfinished merge in the worktree brought in (`MERGE_HEAD`): the
        /// commit's other parents; the merge is concluded. Empty for a plain commit.
        merged: Vec<ObjectId>,
    },
    /// Nothing eligible: nothing was committed.
    NothingEligible {
        /// Paths left out (empty when nothing changed at all).
        skipped: Vec<Skipped>,
        /// The verdict, when it has violations.
        verdict: Option<Verdict>,
    },
}

/// Commits the eligible changes in the task's worktree.
pub fn commit(
    repo: &Repo,
    settings: &Settings,
    record: &Record,
    message: Option<&str>,
) -> Result<Outcome> {
    let id = record.state.task_id();
    let w = work::open(repo, record)?;
    if w.mode == crate::task::Mode::Worktree {
        let head = w.wt.head_branch()?;
        if head.as_deref() != Some(record.state.branch.as_str()) {
            let on = match (head, w.state.head) {
                (Some(name), _) => {
                    format!("on '{}'", crate::git::refs::short_name(&name))
                }
                (None, Some(commit)) => format!("detached at {}", &commit.to_string()[..12]),
                (None, None) => "on no commit".to_owned(),
            };
            let branch = record.state.branch_short();
            return Err(Error::negative(format!(
                "the worktree of task '{id}' is not on its branch '{branch}' but {on}; nothing was committed"
            ))
            .with_code("worktree_not_on_branch")
            .hint(format!(
                "return it to the branch: git -C {} switch {branch}",
                crate::contract::judge::shell_quote(&record.state.worktree)
            ))
            .hint(format!("then commit again: git task commit {id}")));
        }
    }
    // An unfinished merge (a `sync` that stopped on conflicts): concluded with its parents,
    // once no conflict is still marked in a file.
    let merging = match w.mode {
        crate::task::Mode::Worktree => unfinished_merge(repo, &w.wt, record)?,
        crate::task::Mode::Patch => None,
    };
    let cur = &w.state;
    let excludes = Patterns::new(&settings.auto_commit_exclude, repo.ignore_case())
        .map_err(|e| Error::input(format!("bad task.autoCommitExclude pattern {e}")))?;
    let verdict = crate::changes::judge_tree(repo, record, cur.worktree_tree)?;
    let violations: BTreeMap<&str, (&str, String)> = verdict
        .violations
        .iter()
        .map(|v| (v.file.as_str(), (v.rule.as_str(), v.reason.to_string())))
        .collect();
    let everything_refused = violations.contains_key("*");
    // Patch mode: the user's own edits made before the start, left as they were, are not the
    // task's (SPEC §9); the task's commit leaves them as they are.
    let before_start: std::collections::BTreeSet<String> = match &w.snapshot {
        Some(s) => {
            let task: std::collections::BTreeSet<String> =
                diff::tree_to_tree(repo, s.worktree_tree, cur.worktree_tree)?
                    .into_iter()
                    .map(|c| c.path)
                    .collect();
            diff::tree_to_tree(repo, cur.head_tree, cur.worktree_tree)?
                .into_iter()
                .map(|c| c.path)
                .filter(|p| !task.contains(p))
                .collect()
        }
        None => Default::default(),
    };
    // What the merge itself staged (the base's changes, the resolutions): all of it is
    // committed, or the merge is not concluded.
    let merge_paths: std::collections::BTreeSet<String> = match &merging {
        Some(m) => diff::tree_to_tree(repo, cur.head_tree, cur.index_tree)?
            .into_iter()
            .map(|c| c.path)
            .chain(m.unmerged.iter().cloned())
            .collect(),
        None => Default::default(),
    };
    // Of those, the paths left as the merged-in side has them are the base's work, not the
    // task's: committed as they are, whatever the contract says (the gate never blames a task
    // for work that came from the base).
    let theirs: std::collections::BTreeSet<String> = match &merging {
        Some(m) => {
            let theirs_tree = objects::commit_tree(repo, m.heads[0])?;
            let differ: std::collections::BTreeSet<String> =
                diff::tree_to_tree(repo, theirs_tree, cur.worktree_tree)?
                    .into_iter()
                    .map(|c| c.path)
                    .collect();
            merge_paths
                .iter()
                .filter(|p| !differ.contains(*p))
                .cloned()
                .collect()
        }
        None => Default::default(),
    };
    let mut skipped = Vec::new();
    let mut eligible = Vec::new();
    for c in diff::tree_to_tree(repo, cur.head_tree, cur.worktree_tree)? {
        let excluded = excludes.first_match(&c.path);
        if theirs.contains(&c.path) || (excluded.is_some() && merge_paths.contains(&c.path)) {
            eligible.push(c);
        } else if before_start.contains(&c.path) {
            skipped.push(Skipped {
                path: c.path,
                reason: "before_start".into(),
                rule: "edited before the task started".into(),
            });
        } else if let Some(rule) = excluded {
            skipped.push(Skipped {
                path: c.path,
                reason: "excluded".into(),
                rule: rule.to_owned(),
            });
        } else if let Some((rule, reason)) = violations.get(c.path.as_str()) {
            skipped.push(Skipped {
                path: c.path,
                reason: reason.clone(),
                rule: (*rule).to_owned(),
            });
        } else if everything_refused {
            let (rule, reason) = &violations["*"];
            skipped.push(Skipped {
                path: c.path,
                reason: reason.clone(),
                rule: (*rule).to_owned(),
            });
        } else {
            eligible.push(c);
        }
    }
    if let Some(m) = &merging {
        let left: Vec<&str> = skipped
            .iter()
            .map(|s| s.path.as_str())
            .filter(|p| merge_paths.contains(*p))
            .collect();
        if !left.is_empty() {
            return Err(m
                .refusal(
                    &id,
                    format!(
                        "the merge in the worktree of task '{id}' cannot be concluded without {}, which the task may not change; nothing was committed",
                        left.join(", ")
                    ),
                )
                .with_code("merge_not_concluded"));
        }
    }
    if eligible.is_empty() && merging.is_none() {
        if !skipped.is_empty() {
            let blocked = Event::Blocked(event::Blocked {
                during: "commit".into(),
                skipped: skipped
                    .iter()
                    .map(|s| event::Left {
                        path: s.path.clone(),
                        reason: s.reason.clone(),
                        rule: s.rule.clone(),
                    })
                    .collect(),
            });
            crate::record::note(repo, &id, blocked)?;
        }
        let verdict = (!verdict.is_clean()).then_some(verdict);
        return Ok(Outcome::NothingEligible { skipped, verdict });
    }
    let edits: Vec<TreeEdit<'_>> = eligible
        .iter()
        .map(|c| match c.new {
            Some((k, oid)) => TreeEdit::Upsert(c.path.as_str(), k, oid),
            None => TreeEdit::Remove(c.path.as_str()),
        })
        .collect();
    let tree = objects::edit_tree(repo, cur.head_tree, &edits)?;
    let index = objects::edit_tree(repo, cur.index_tree, &edits)?;
    let files: Vec<String> = eligible.iter().map(|c| c.path.clone()).collect();
    let subject = match message {
        Some(m) if !m.trim().is_empty() => m.trim_end().to_owned(),
        _ if merging.as_ref().is_some_and(|m| m.message.is_some()) => merging
            .as_ref()
            .and_then(|m| m.message.clone())
            .unwrap_or_default(),
        _ => format!(
            "task {id}: {} file{}",
            files.len(),
            if files.len() == 1 { "" } else { "s" }
        ),
    };
    let body = if subject.contains("Task-Id:") {
        format!("{subject}\n")
    } else {
        format!("{subject}\n\nTask-Id: {id}\n")
    };
    let merged: Vec<ObjectId> = merging
        .as_ref()
        .map(|m| m.heads.clone())
        .unwrap_or_default();
    let parents: Vec<ObjectId> = cur.head.into_iter().chain(merged.iter().copied()).collect();
    let commit = objects::write_commit(repo, tree, &parents, &body)?;
    let branch = w.wt.head_branch()?.unwrap_or_else(|| "HEAD".into());
    let branch_name = crate::task::BranchName::parse(&branch)
        .map_err(|why| Error::repo_msg(format!("the branch checked out for task '{id}': {why}")))?;
    let reflog = format!("commit: {}", subject.lines().next().unwrap_or_default());
    let update = match cur.head {
        Some(old) => Update::update(branch.clone(), old, commit, reflog),
        None => Update::create(branch.clone(), commit, reflog),
    };
    // Journaled from before the branch moves until the index follows it (`recover`).
    let _journal = crate::git::journal::Journal::in_place(
        repo,
        id.as_str(),
        w.wt.require_workdir()?,
        None,
        index,
        None,
    )?;
    refs::commit(&w.wt, vec![update])?;
    inplace::write_index(&w.wt, index, cur.worktree_tree)?;
    if merging.is_some() {
        // As `git commit` does once it recorded the merge.
        inplace::end_operations(w.wt.git_dir());
    }
    let committed = Event::Committed(event::Committed {
        commit: commit.to_string(),
        branch: branch_name,
        files: files.clone(),
        skipped: skipped.iter().map(|s| s.path.clone()).collect(),
    });
    crate::record::note(repo, &id, committed)?;
    Ok(Outcome::Committed {
        commit,
        branch,
        files,
        skipped,
        merged,
    })
}

/// A merge git left unfinished in a task worktree.
struct Merging {
    /// The commits it brings in (`MERGE_HEAD`).
    heads: Vec<ObjectId>,
    /// The message git prepared for it.
    message: Option<String>,
    /// The paths the index still holds unmerged (resolved in the files, or not).
    unmerged: Vec<String>,
    /// The worktree, for the hints.
    worktree: String,
}

impl Merging {
    /// A refusal to conclude the merge, with the ways to finish it or give it up.
    fn refusal(&self, id: &crate::task::TaskId, message: String) -> Error {
        let wt = crate::contract::judge::shell_quote(&self.worktree);
        Error::negative(message)
            .hint(format!(
                "resolve every conflict in {wt} (edit the files: no <<<<<<< ======= >>>>>>> left), then: git task commit {id}"
            ))
            .hint(format!(
                "or conclude the merge with git itself, in the worktree: cd {wt} && git add <paths> && git commit --no-edit"
            ))
            .hint(format!("or give it up: git -C {wt} merge --abort"))
    }
}

/// The merge left unfinished in the task worktree `wt` (`MERGE_HEAD`), read; `Err` when a
/// conflict is still marked in a file, or `MERGE_HEAD` names no commit.
fn unfinished_merge(repo: &Repo, wt: &Repo, record: &Record) -> Result<Option<Merging>> {
    use crate::git::merge::pending;
    let Some(heads) = pending::merge_heads(wt.git_dir()) else {
        return Ok(None);
    };
    let id = record.state.task_id();
    let merging = Merging {
        heads,
        message: pending::merge_message(wt.git_dir()),
        unmerged: pending::unmerged_paths(wt)?,
        worktree: wt
            .workdir()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| record.state.worktree.clone()),
    };
    let bad_head = merging.heads.is_empty()
        || merging
            .heads
            .iter()
            .any(|h| objects::commit_tree(repo, *h).is_err());
    if bad_head {
        return Err(merging.refusal(
            &id,
            format!("the worktree of task '{id}' has a merge in progress whose MERGE_HEAD names no commit; nothing was committed"),
        ));
    }
    let root = wt.require_workdir()?;
    let marked: Vec<&str> = merging
        .unmerged
        .iter()
        .filter(|p| {
            std::fs::read(root.join(p.as_str())).is_ok_and(|bytes| pending::has_markers(&bytes))
        })
        .map(String::as_str)
        .collect();
    if !marked.is_empty() {
        return Err(merging
            .refusal(
                &id,
                format!(
                    "the merge in the worktree of task '{id}' still has conflicts marked in {}; nothing was committed",
                    marked.join(", ")
                ),
            )
            .with_code("unresolved_conflicts"));
    }
    Ok(Some(merging))
}
