//! `check`: judge a task's changes against its frozen contract, and optionally run its frozen checks.

use crate::checks::{How, Run};
use crate::config::Settings;
use crate::contract::Verdict;
use crate::error::{Error, Result};
use crate::git::Repo;
use crate::record::event::{Event, Purpose};
use crate::record::{self, Record};
use crate::task::TaskId;
use std::path::Path;

/// What `check` found.
#[derive(Debug)]
pub struct Checked {
    /// The contract's verdict.
    pub verdict: Verdict,
    /// The frozen checks, when asked to run them.
    pub checks: Option<Run>,
}

impl Checked {
    /// Whether everything passed: no violation, no failed check.
    pub fn passed(&self) -> bool {
        self.verdict.is_clean() && self.checks.as_ref().is_none_or(|c| c.passed)
    }
}

/// Judges the task `id` (default: the active task): its staged changes with `staged` (as the
/// pre-commit hook does), else all its work; with `run`, also runs its frozen checks in its
/// worktree (all of them, even after a failure) and records a `checks` event.
/// `progress` hears how the checks go (see [`crate::checks::Progress`]).
pub fn check(
    repo: &Repo,
    settings: &Settings,
    id: Option<&TaskId>,
    staged: bool,
    run: bool,
    progress: &mut dyn FnMut(crate::checks::Progress<'_>),
) -> Result<Checked> {
    let record = crate::resolve::resolve(repo, settings, id)?;
    let verdict = if staged {
        judge_staged(repo, settings, &record)?
    } else {
        crate::changes::judge_task(repo, &record)?
    };
    let checks = match run {
        true => Some(run_checks(repo, &record, progress)?),
        false => None,
    };
    Ok(Checked { verdict, checks })
}

/// Judges what is staged in the task's worktree.
fn judge_staged(repo: &Repo, settings: &Settings, record: &Record) -> Result<Verdict> {
    let here = crate::resolve::active_task(repo, settings)?;
    if here.as_ref().map(TaskId::as_str) == Some(record.state.id.as_str()) {
        // This worktree, opened as git handed it over (GIT_INDEX_FILE included).
        let staged = crate::changes::read_staged(repo)?;
        return crate::changes::judge_staged(repo, record, &staged);
    }
    let path = Path::new(&record.state.worktree);
    if !path.join(".git").exists() {
        return Err(Error::input(format!(
            "task '{}' has no worktree, so nothing is staged",
            record.state.id
        ))
        .hint(format!(
            "judge its committed work instead: git task check {}",
            record.state.id
        )));
    }
    let wt = crate::git::worktree::open_at(path)?;
    let staged = crate::changes::read_staged(&wt)?;
    crate::changes::judge_staged(&wt, record, &staged)
}

/// Runs the frozen contract's checks in the task worktree and records a `checks` event.
fn run_checks(
    repo: &Repo,
    record: &Record,
    progress: &mut dyn FnMut(crate::checks::Progress<'_>),
) -> Result<Run> {
    let dir = Path::new(&record.state.worktree);
    if !dir.is_dir() {
        return Err(Error::input(format!(
            "task '{}' has no worktree to run its checks in",
            record.state.id
        )));
    }
    let how = How {
        stream: false,
        keep_going: true,
    };
    let run = record.frozen_checks().run(dir, how, progress)?;
    record::note(
        repo,
        &record.state.task_id(),
        Event::checks(&run, Purpose::Check),
    )?;
    Ok(run)
}
