//! What the gate trusts of a record, checked against a digest kept outside refs (SPEC §7.4).
//!
//! An agent can point `refs/tasks/<id>/record` at any commit it makes with git
//! plumbing, so the record alone cannot prove which contract was frozen at
//! start. When a task's life begins, `start` writes the digest of the parts the
//! gate relies on (frozen contract, frozen policy, task branch, base branch,
//! mode) to `<common dir>/git-task/frozen/<id>/<started event commit>`, before
//! the record ref is created (a `reset` that freezes a new contract writes one
//! for its own event). The gate walks the record it reads back to the latest
//! commit with a digest on file and compares: no such commit, or another
//! digest, is `record_tampered`. A file per `started` commit lets two racing starts of one
//! id each write their own, so the loser cannot overwrite the winner's.
//!
//! Records made before digests existed have no `frozen/<id>` directory at all;
//! they are not refused (nothing proves them, nothing contradicts them).

use super::Record;
use crate::error::{Context, Result};
use crate::git::{objects, ObjectId, Repo};
use crate::task::{layout, TaskId, TaskState};
use std::path::PathBuf;

fn dir(repo: &Repo, id: &TaskId) -> PathBuf {
    crate::git::state_dir(repo.common_dir())
        .join("frozen")
        .join(id.as_str())
}

/// The digest of what the gate trusts in a record.
pub fn digest(
    repo: &Repo,
    state: &TaskState,
    contract_text: &str,
    policy_text: Option<&str>,
) -> ObjectId {
    let text = format!(
        "contract\0{contract_text}\0policy\0{}\0branch\0{}\0base\0{}\0mode\0{}\0",
        policy_text.unwrap_or("\u{1}none"),
        state.branch,
        state.base_branch.as_deref().unwrap_or("\u{1}none"),
        state.mode,
    );
    objects::hash_blob(repo, text.as_bytes())
}

/// Writes the digest for the `started` event commit `started` (before any ref points to it).
pub fn write(repo: &Repo, state: &TaskState, started: ObjectId, digest: ObjectId) -> Result<()> {
    let dir = dir(repo, &state.task_id());
    std::fs::create_dir_all(&dir).context(|| format!("could not create '{}'", dir.display()))?;
    let path = dir.join(started.to_string());
    crate::git::fs::write_atomically(&path, format!("{digest}\n").as_bytes())
        .context(|| format!("could not write '{}'", path.display()))
}

/// A record that does not match what was frozen at start.
#[derive(Clone, Debug)]
pub struct Tampered {
    /// What does not match.
    pub why: String,
    /// The `allowed` globs of the contract really frozen at start, when it can still be found.
    pub frozen_allowed: Option<Vec<String>>,
}

/// Returns how `record` cannot be trusted, or `None` when its frozen parts match the digest written at start.
pub fn verify(repo: &Repo, record: &Record) -> Result<Option<Tampered>> {
    let id = record.state.task_id();
    let dir = dir(repo, &id);
    if !dir.is_dir() {
        return Ok(None);
    }
    let tampered = |why: String| {
        Ok(Some(Tampered {
            why,
            frozen_allowed: genuine_allowed(repo, &dir),
        }))
    };
    let Some(expected) = latest_frozen(repo, record.tip, &dir)? else {
        return tampered(format!(
            "the record of '{id}' ({}) does not descend from the start git-task recorded",
            layout::record_ref(&id)
        ));
    };
    let actual = digest(
        repo,
        &record.state,
        &record.contract_text,
        record.policy_text.as_deref(),
    );
    if expected.trim().parse::<ObjectId>().ok() == Some(actual) {
        return Ok(None);
    }
    tampered(format!(
        "the frozen contract, policy or branches in the record of '{id}' were changed after start"
    ))
}

/// Notes outside refs, before any ref names it, that git-task itself appended the `merged`
/// event commit `commit` of task `id`.
pub fn note_merged(repo: &Repo, id: &TaskId, commit: ObjectId) -> Result<()> {
    let dir = dir(repo, id);
    std::fs::create_dir_all(&dir).context(|| format!("could not create '{}'", dir.display()))?;
    let path = dir.join(format!("{commit}.merged"));
    crate::git::fs::write_atomically(&path, b"")
        .context(|| format!("could not write '{}'", path.display()))
}

/// Whether the life of `record` was ended by a merge git-task made: a `merged` event commit
/// on its record since its latest start on file is noted ([`note_merged`]). An agent can
/// append a `merged` event of its own with git plumbing; only a noted one lets the task start
/// again with a contract its own could not become. Records from before digests (no
/// `frozen/<id>` at all) are taken as they say.
pub fn merged_by_git_task(repo: &Repo, record: &Record) -> Result<bool> {
    let dir = dir(repo, &record.state.task_id());
    if !dir.is_dir() {
        return Ok(true);
    }
    let mut next = Some(record.tip);
    while let Some(commit) = next {
        if dir.join(format!("{commit}.merged")).exists() {
            return Ok(true);
        }
        if dir.join(commit.to_string()).exists() {
            return Ok(false);
        }
        next = objects::commit_parents(repo, commit)?.first().copied();
    }
    Ok(false)
}

/// Returns the allowed globs of the latest genuine start whose digest is on file.
fn genuine_allowed(repo: &Repo, dir: &std::path::Path) -> Option<Vec<String>> {
    genuine_start(repo, dir).map(|rec| rec.contract.allowed)
}

/// The contract of the latest genuine start of task `id` on file, for a start of `id` that finds
/// no record: git-task never deletes a record it made a life of, so one deleted by hand (or
/// with `git update-ref -d`) is the same task, whose contract a new start cannot loosen.
pub fn earlier_contract(
    repo: &Repo,
    id: &TaskId,
) -> Option<(String, crate::contract::file::ContractFile)> {
    let dir = dir(repo, id);
    dir.is_dir()
        .then(|| genuine_start(repo, &dir))
        .flatten()
        .map(|rec| (rec.contract_text, rec.contract))
}

/// The record at the latest start (or contract-freezing reset) whose digest on file matches.
fn genuine_start(repo: &Repo, dir: &std::path::Path) -> Option<Record> {
    let mut starts: Vec<(std::time::SystemTime, ObjectId, String)> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter_map(|e| {
            let id = e.file_name().to_str()?.parse::<ObjectId>().ok()?;
            let when = e.metadata().ok()?.modified().ok()?;
            let digest = std::fs::read_to_string(e.path()).ok()?;
            Some((when, id, digest.trim().to_owned()))
        })
        .collect();
    starts.sort();
    starts.into_iter().rev().find_map(|(_, started, digest)| {
        let rec = super::read_at(repo, started).ok()?;
        let actual = self::digest(
            repo,
            &rec.state,
            &rec.contract_text,
            rec.policy_text.as_deref(),
        );
        (digest.parse::<ObjectId>().ok() == Some(actual)).then_some(rec)
    })
}

/// Returns the digest written for the latest commit at or below `tip` (first parents) that has
/// one: its `started` event, or a `reset` that froze a new contract.
fn latest_frozen(repo: &Repo, tip: ObjectId, dir: &std::path::Path) -> Result<Option<String>> {
    let mut next = Some(tip);
    while let Some(commit) = next {
        if let Ok(text) = std::fs::read_to_string(dir.join(commit.to_string())) {
            return Ok(Some(text));
        }
        next = objects::commit_parents(repo, commit)?.first().copied();
    }
    Ok(None)
}

/// Deletes the digest written for the start of `record` (a start rolled back, whose record
/// ref is gone): the latest commit at or below its tip with a digest on file, and only that one
/// (an earlier life's start stays on file), then the task's directory when nothing else is left
/// in it. A failed start leaves nothing behind: its contract binds no later start of the id,
/// and a task of the same id adopted later is not taken for a tampered one.
pub fn forget(repo: &Repo, record: &Record) {
    let dir = dir(repo, &record.state.task_id());
    if !dir.is_dir() {
        return;
    }
    let mut next = Some(record.tip);
    while let Some(commit) = next {
        let file = dir.join(commit.to_string());
        if file.is_file() {
            let _ = std::fs::remove_file(file);
            break;
        }
        next = objects::commit_parents(repo, commit)
            .ok()
            .and_then(|p| p.first().copied());
    }
    // Only when empty: a racing start of the same id may have written its own meanwhile.
    let _ = std::fs::remove_dir(&dir);
}

/// Keeps the digest written for record commit `from` (if any) for `to` as well: an event
/// replayed onto another machine's record (`git task push`) stays provably the one frozen.
pub fn carry(repo: &Repo, id: &TaskId, from: ObjectId, to: ObjectId) -> Result<()> {
    let dir = dir(repo, id);
    let Ok(text) = std::fs::read_to_string(dir.join(from.to_string())) else {
        return Ok(());
    };
    let path = dir.join(to.to_string());
    crate::git::fs::write_atomically(&path, text.as_bytes())
        .context(|| format!("could not write '{}'", path.display()))
}

/// Trusts the record at `tip`, fetched from another machine and adopted here, as frozen: writes
/// its digest so that the gate on this machine refuses any later change to its frozen parts.
/// Does nothing for a task whose start (or adoption) this machine already recorded: a digest
/// is on file (a directory empty but for a temporary file is what a process killed before it
/// wrote one leaves).
pub fn adopt(repo: &Repo, record: &Record) -> Result<()> {
    let recorded = std::fs::read_dir(dir(repo, &record.state.task_id())).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.parse::<ObjectId>().is_ok())
        })
    });
    if recorded {
        return Ok(());
    }
    let digest = digest(
        repo,
        &record.state,
        &record.contract_text,
        record.policy_text.as_deref(),
    );
    write(repo, &record.state, record.tip, digest)
}
