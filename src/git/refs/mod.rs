//! Refs: transactions (this file), cheap bulk reads (`read`), notes prepared
//! as part of a transaction (`note`).
//!
//! Ref transactions with expected old values: the only place that writes refs.
//!
//! Every change names what it expects to find (nothing, or a given id), so two
//! concurrent invocations can never both win (SPEC §4). Several changes given
//! together land all or nothing.

pub mod branch;
pub mod note;
pub mod read;
pub mod stamp;

pub use branch::BranchName;

use crate::error::{Error, Result};
use crate::git::{ObjectId, Repo};
use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
use gix::refs::{FullName, Target};

/// What a ref must hold before the change applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// The ref must not exist (a creation).
    Absent,
    /// The ref must point at this id.
    Is(ObjectId),
    /// No expectation (only for refs no other process owns).
    Any,
}

/// One change to one ref.
#[derive(Clone, Debug)]
pub struct Update {
    /// Full ref name (`refs/tasks/x/record`).
    pub name: String,
    /// The new target, or `None` to delete.
    pub new: Option<ObjectId>,
    /// What the ref must hold now.
    pub expect: Expect,
    /// Reflog message (`git-task: start x`).
    pub message: String,
}

impl Update {
    /// Creates `name` at `id`; fails if it exists.
    pub fn create(name: impl Into<String>, id: ObjectId, message: impl Into<String>) -> Update {
        Update {
            name: name.into(),
            new: Some(id),
            expect: Expect::Absent,
            message: message.into(),
        }
    }
    /// Moves `name` from `old` to `new`.
    #[allow(clippy::self_named_constructors)] // `Update::update` reads as the verb it is
    pub fn update(
        name: impl Into<String>,
        old: ObjectId,
        new: ObjectId,
        message: impl Into<String>,
    ) -> Update {
        Update {
            name: name.into(),
            new: Some(new),
            expect: Expect::Is(old),
            message: message.into(),
        }
    }
    /// Deletes `name` if it still points at `old`.
    pub fn delete(name: impl Into<String>, old: ObjectId, message: impl Into<String>) -> Update {
        Update {
            name: name.into(),
            new: None,
            expect: Expect::Is(old),
            message: message.into(),
        }
    }

    /// The change as the crash journal keeps it.
    fn journaled(&self) -> crate::git::journal::RefChange {
        let old = match self.expect {
            Expect::Is(id) => Some(id.to_string()),
            Expect::Absent | Expect::Any => None,
        };
        crate::git::journal::RefChange {
            name: self.name.clone(),
            old,
            new: self.new.map(|id| id.to_string()),
            any: matches!(self.expect, Expect::Any),
            message: self.message.clone(),
        }
    }
}

/// Why a transaction did not apply.
#[derive(Debug)]
pub enum RefError {
    /// A ref did not hold what was expected: another process got there first.
    Conflict(String),
    /// Anything else (I/O, bad name).
    Other(Error),
}

impl From<RefError> for Error {
    fn from(err: RefError) -> Error {
        match err {
            RefError::Conflict(msg) => Error::repo_msg(msg).hint(
                "another git-task command changed the task at the same time; run the command again",
            ),
            RefError::Other(e) => e,
        }
    }
}

/// Where branches live: the one place that spells `refs/heads/`.
pub const HEADS: &str = "refs/heads/";

/// The short name of a branch ref (`main` for `refs/heads/main`); `None` for a ref that is not
/// a branch.
pub fn branch_short(name: &str) -> Option<&str> {
    // Spelled out rather than `HEADS`, so a grep for the prefix finds its one home.
    name.strip_prefix("refs/heads/")
}

/// The short name of a branch ref, or the name as it is when it is not a branch's.
pub fn short_name(name: &str) -> &str {
    branch_short(name).unwrap_or(name)
}

/// Applies all `updates` as one transaction.
pub fn apply(repo: &Repo, updates: Vec<Update>) -> std::result::Result<(), RefError> {
    apply_with(repo, updates, true)
}

fn apply_with(
    repo: &Repo,
    updates: Vec<Update>,
    retry_packed: bool,
) -> std::result::Result<(), RefError> {
    if updates.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = updates.iter().map(|u| u.name.clone()).collect();
    // The lock files this transaction takes, journaled so that a kill -9 mid-transaction
    // does not leave them to block every later update of these refs (`git::journal`).
    let mut locks: Vec<std::path::PathBuf> = names
        .iter()
        .map(|n| repo.common_dir().join(format!("{n}.lock")))
        .collect();
    // gix takes the packed-refs lock in every transaction, creations included: one left by a
    // kill made every later transaction fail as "changed meanwhile".
    locks.push(repo.common_dir().join("packed-refs.lock"));
    let journaled = updates.iter().map(Update::journaled).collect();
    let asked = updates.clone();
    let _journal = crate::git::journal::Journal::begin(
        repo,
        crate::git::journal::Step::RefLocks {
            locks,
            updates: journaled,
        },
    )
    .ok();
    let mut edits = Vec::with_capacity(updates.len());
    for u in updates {
        let name: FullName = u.name.as_str().try_into().map_err(|e| {
            RefError::Other(Error::repo(format!("invalid ref name '{}'", u.name), e))
        })?;
        let expected = match u.expect {
            Expect::Absent => PreviousValue::MustNotExist,
            Expect::Is(id) => PreviousValue::MustExistAndMatch(Target::Object(id)),
            Expect::Any => PreviousValue::Any,
        };
        let change = match u.new {
            Some(id) => Change::Update {
                log: LogChange {
                    mode: RefLog::AndReference,
                    force_create_reflog: false,
                    message: u.message.into(),
                },
                expected,
                new: Target::Object(id),
            },
            None => Change::Delete {
                expected,
                log: RefLog::AndReference,
            },
        };
        edits.push(RefEdit {
            change,
            name,
            deref: false,
        });
    }
    // Reflog entries are signed like git-task's own commits: gix's default
    // signature would load the local time zone database first.
    let signature = repo.own_signature().map_err(RefError::Other)?;
    let mut time = gix::date::parse::TimeBuf::default();
    match repo
        .inner
        .edit_references_as(edits, Some(signature.to_ref(&mut time)))
    {
        Ok(_) => Ok(()),
        // gix moved the updated refs, then failed to delete a `packed-refs` another process had
        // just deleted (it raced for the file, not for our refs): what is left, the deletions,
        // is applied again on its own.
        Err(err) if retry_packed && is_packed_refs_gone(&err) => {
            let mut left = Vec::new();
            for u in asked {
                let now = repo.find_ref(&u.name).map_err(RefError::Other)?;
                if now != u.new {
                    left.push(u);
                }
            }
            apply_with(repo, left, false)
        }
        Err(err) if err.is_conflict() || is_lock_contention(&err) || is_vanished(&err) => {
            Err(RefError::Conflict(format!(
                "could not update {}: it was changed meanwhile",
                names.join(", ")
            )))
        }
        Err(err) => Err(RefError::Other(Error::repo(
            format!("could not update {}", names.join(", ")),
            err,
        ))),
    }
}

/// Applies `updates`, turning a lost race into a repository error with a retry hint.
pub fn commit(repo: &Repo, updates: Vec<Update>) -> Result<()> {
    apply(repo, updates).map_err(Error::from)
}

/// gix's commit of a packed-refs transaction that left no line found the file already gone.
fn is_packed_refs_gone(err: &gix::Error) -> bool {
    format!("{err:?}").contains("Could not delete empty packed refs")
}

/// A delete (with an expected value) of a ref another process deleted first: it lost the race.
fn is_vanished(err: &gix::Error) -> bool {
    format!("{err:?}").contains("The reference to delete must exist")
}

fn is_lock_contention(err: &gix::Error) -> bool {
    let text = format!("{err:?}");
    text.contains("lock") && (text.contains("exist") || text.contains("Lock"))
}

/// Returns the ids the reflog of `name` moved the ref to, in the entries whose message
/// starts with `message_prefix` (`commit` for what `git commit` made); oldest first,
/// empty when the ref or its log does not exist.
pub fn reflog_ids(repo: &Repo, name: &str, message_prefix: &str) -> Result<Vec<ObjectId>> {
    let err = |e| Error::repo(format!("could not read the reflog of '{name}'"), e);
    let Some(reference) = repo.inner.try_find_reference(name).map_err(err)? else {
        return Ok(Vec::new());
    };
    let mut log = reference.log_iter();
    let Some(lines) = log
        .all()
        .map_err(|e| Error::repo(format!("could not read the reflog of '{name}'"), e))?
    else {
        return Ok(Vec::new());
    };
    Ok(lines
        .flatten()
        .filter(|line| line.message.starts_with(message_prefix.as_bytes()))
        .map(|line| line.new_oid())
        .collect())
}

/// Whether `name` is a full ref name git accepts (`refs/heads/main`; no `..`, no `.lock`, …).
pub fn is_valid_name(name: &str) -> bool {
    gix::validate::reference::name(gix::bstr::BStr::new(name.as_bytes())).is_ok()
}
