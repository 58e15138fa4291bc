//! Checkpoints (`refs/tasks/<id>/checkpoints/<n>`).
//!
//! A checkpoint saves the task's whole state, untracked files included and
//! ignored files left out. It is judged against the contract in process first
//! (gix runs no hooks): a violation saves nothing.
//!
//! - worktree mode: a commit on the task branch whose tree is the state (the
//!   index is then rewritten to match it, everything staged);
//! - patch mode: a ref chain beside the user's history: parent 1 is the
//!   previous checkpoint (or the snapshot), parent 2 a commit of the index
//!   (its parent HEAD at that time), so `revert --to N` restores staged and
//!   unstaged work apart. HEAD, index and files are not touched.
//!
//! Each checkpoint commit gets a note under `refs/notes/tasks` with its
//! number, time and changed files.

use crate::contract::Verdict;
use crate::error::Result;
use crate::git::refs::Update;
use crate::git::{checkout::inplace, diff, objects, refs::note, ObjectId, Repo};
use crate::record::event::{self, Event};
use crate::record::{self, Record, Step};
use crate::task::{layout, Mode};
use crate::work;

/// A saved checkpoint.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Saved {
    /// Its number.
    pub number: u32,
    /// `refs/tasks/<id>/checkpoints/<n>`.
    #[serde(rename = "ref")]
    pub name: String,
    /// Its commit.
    pub commit: String,
    /// Files changed since the previous checkpoint (or the start).
    pub files: Vec<String>,
}

/// How `checkpoint` ended.
pub enum Outcome {
    /// Saved.
    Saved(Saved),
    /// The state breaks the contract; nothing was saved.
    Violation(Verdict),
}

/// Saves the current state of the task as its next checkpoint.
pub fn save(repo: &Repo, record: &Record, message: Option<&str>) -> Result<Outcome> {
    let id = record.state.task_id();
    let w = work::open(repo, record)?;
    let verdict = crate::changes::judge_tree(repo, record, w.state.worktree_tree)?;
    if !verdict.is_clean() {
        let files: Vec<&str> = verdict.violations.iter().map(|v| v.file.as_str()).collect();
        let violation = Event::Violation(event::Violation::Checkpoint {
            during: "checkpoint".into(),
            files: files.into_iter().map(str::to_owned).collect(),
        });
        record::note(repo, &id, violation)?;
        return Ok(Outcome::Violation(verdict));
    }
    if w.mode == Mode::Worktree {
        let branch = w.wt.head_branch()?;
        if branch.as_deref() != Some(record.state.branch.as_str()) {
            return Err(crate::Error::input(format!(
                "the worktree of task '{id}' is not on its branch '{}'",
                record.state.branch_short()
            ))
            .hint(format!(
                "switch back: git -C {} switch {}",
                record.state.worktree,
                record.state.branch_short()
            )));
        }
    }
    let what = format!("save a checkpoint of '{id}'");
    // Worktree mode: the index follows the branch to the checkpoint commit; journaled before the
    // branch moves, so a kill in between is finished by the next command (`recover`).
    let mut journal = None;
    let saved = record::update(repo, record.clone(), &what, |record| {
        let all = work::checkpoints(repo, &id)?;
        let n = all.last().map(|c| c.n + 1).unwrap_or(1);
        let before = all.last().map(|c| c.tree).unwrap_or_else(|| w.start_tree());
        let files: Vec<String> = diff::tree_to_tree(repo, before, w.state.worktree_tree)?
            .into_iter()
            .map(|c| c.path)
            .filter(|p| !w.skip().contains(&p.as_str()))
            .collect();
        let subject = message
            .map(str::to_owned)
            .unwrap_or_else(|| format!("checkpoint {n} of {id}"));
        let body = format!("{subject}\n\nTask-Id: {id}\nTask-Checkpoint: {n}\n");
        let cp_ref = layout::checkpoint_ref(&id, n);
        let reflog = format!("git-task: checkpoint {n} of {id}");
        let (commit, mut extra) = match w.mode {
            Mode::Worktree => {
                let parents: Vec<ObjectId> = w.state.head.into_iter().collect();
                let commit =
                    objects::write_own_commit(repo, w.state.worktree_tree, &parents, &body)?;
                journal = Some(crate::git::journal::Journal::in_place(
                    repo,
                    id.as_str(),
                    w.wt.require_workdir()?,
                    None,
                    w.state.worktree_tree,
                    Some(commit),
                )?);
                let branch = match w.state.head {
                    Some(head) => {
                        Update::update(record.state.branch.clone(), head, commit, reflog.clone())
                    }
                    None => Update::create(record.state.branch.clone(), commit, reflog.clone()),
                };
                (commit, vec![branch])
            }
            Mode::Patch => {
                let prev = all
                    .last()
                    .map(|c| c.commit)
                    .or(w.snapshot.map(|s| s.commit))
                    .expect("patch mode has a snapshot");
                let head: Vec<ObjectId> = w.state.head.into_iter().collect();
                let index = objects::write_own_commit(
                    repo,
                    w.state.index_tree,
                    &head,
                    &format!("index at checkpoint {n} of {id}\n"),
                )?;
                let commit =
                    objects::write_own_commit(repo, w.state.worktree_tree, &[prev, index], &body)?;
                (commit, Vec::new())
            }
        };
        extra.push(Update::create(cp_ref.clone(), commit, reflog));
        // The note lands in the same transaction as the checkpoint.
        let mut text = format!(
            "task: {id}\nevent: checkpoint\ncheckpoint: {n}\ntime: {}\n",
            crate::task::now()
        );
        if let Some(m) = message {
            text.push_str(&format!("message: {m}\n"));
        }
        text.push_str(&format!("files: {}\n", files.len()));
        for f in &files {
            text.push_str(&format!("  {f}\n"));
        }
        if let Some(update) = note::prepare(
            repo,
            layout::NOTES_REF,
            &[(commit, text)],
            &format!("git-task: checkpoint {n} of {id}"),
        )? {
            extra.push(update);
        }
        let checkpoint = Event::Checkpoint(event::Checkpoint {
            number: n,
            commit: commit.to_string(),
            files: files.clone(),
        });
        Ok(Step::Append {
            event: checkpoint,
            state: record.state.clone(),
            extra,
            then: Saved {
                number: n,
                name: cp_ref,
                commit: commit.to_string(),
                files,
            },
        })
    })?
    .into_value(&id)?;
    if w.mode == Mode::Worktree {
        // Everything is committed now: the index holds the checkpoint's tree.
        inplace::write_index(&w.wt, w.state.worktree_tree, w.state.worktree_tree)?;
    }
    drop(journal);
    Ok(Outcome::Saved(saved))
}
