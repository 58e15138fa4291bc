//! The ledger: what git-task itself wrote, kept under `<common dir>/git-task/ledger/`, where
//! git commands cannot reach (SPEC §2 principle 8, §4).
//!
//! An agent can rewrite any ref with git plumbing, so a task record read from a ref proves
//! nothing by itself. The ledger holds, for every task id, the record tip git-task last wrote
//! ([`records`]): a record whose tip is not that one (rewritten, rolled back, deleted,
//! re-created) is `record_tampered`, and no command acts on its fields. It also holds every
//! move of a base branch that git-task saw ([`moves`]), so a move that skipped the gate is
//! reported. Every ref transaction that moves a record or a base branch goes through
//! [`apply`], which keeps the two in step.

pub mod lock;
pub mod moves;
pub mod records;

use crate::error::Result;
use crate::git::refs::{self, RefError, Update};
use crate::git::Repo;
use std::path::PathBuf;

/// `<common dir>/git-task/ledger`.
pub fn dir(repo: &Repo) -> PathBuf {
    crate::git::state_dir(repo.common_dir()).join("ledger")
}

/// Who moves a branch in a transaction git-task makes (for the ledger of base moves).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mover {
    /// Nothing but records moves here (or nothing git-task attributes).
    GitTask,
    /// A merge of these tasks.
    Merge(Vec<String>),
}

/// Applies `updates` as one transaction, keeping the ledger in step: the record tips it
/// moves are noted as pending before the refs move and as the ledger's tips after, under
/// each record's lock; the watched branches it moves (bases of tasks) are noted as moves by
/// `mover`.
pub fn apply(repo: &Repo, mover: Mover, updates: Vec<Update>) -> Result<(), RefError> {
    let pending = records::Pending::begin(repo, &updates).map_err(RefError::Other)?;
    let branch_moves: Vec<(String, Option<String>, Option<String>)> = updates
        .iter()
        .filter(|u| u.name.starts_with("refs/heads/") && moves::watched(repo, &u.name))
        .map(|u| {
            (
                u.name.clone(),
                match u.expect {
                    refs::Expect::Is(o) => Some(o.to_string()),
                    refs::Expect::Absent | refs::Expect::Any => None,
                },
                u.new.map(|n| n.to_string()),
            )
        })
        .collect();
    match refs::apply(repo, updates) {
        Ok(()) => {
            pending.commit(repo);
            let who = match &mover {
                Mover::GitTask => "git-task".to_owned(),
                Mover::Merge(ids) => format!("merge {}", ids.join(" ")),
            };
            for (name, old, new) in branch_moves {
                moves::note(repo, &name, old.as_deref(), new.as_deref(), &who);
            }
            Ok(())
        }
        Err(e) => {
            pending.abandon(repo);
            Err(e)
        }
    }
}

/// [`apply`] by git-task itself, a lost race turned into a repository error with a retry hint.
pub fn commit(repo: &Repo, updates: Vec<Update>) -> Result<()> {
    apply(repo, Mover::GitTask, updates).map_err(crate::Error::from)
}
