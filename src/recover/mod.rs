//! Crash recovery in one place (SPEC §2.7, §11): the journal a mutating command
//! writes before each step that leaves a worktree half made if the process dies,
//! and the repairs that finish or undo those steps once the process is gone.
//!
//! A journal entry is one JSON file `<common dir>/git-task/journal/<pid>.<n>.json`,
//! written whole (temporary file, then rename) *before* the step starts and deleted
//! when the step is over (also on an error return: the command then reported and
//! cleaned up itself). So an entry whose process is gone names exactly what a
//! killed command was making, and recovery touches only that:
//!
//! - [`Step::Checkout`]: a checked-out worktree follows its branch from `old` to
//!   `new` (merge into a checked-out target). If the branch is at `new` the move is
//!   finished, if it is at `old` (the refs never moved, or were moved back) it is
//!   undone; either way only the paths that differ between the two commits are
//!   touched, a file changed by the user is never overwritten, and the killed
//!   process's `index.lock` and `*.git-task-<pid>.tmp` files go ([`twoway::settle`]).
//! - [`Step::InPlace`]: a worktree's files and index are rewritten in place
//!   (reset, revert, commit, checkpoint). The killed process's lock and temporary
//!   files go; then files and index are brought to the journaled target (files
//!   first, if any; the index always), after saving the worktree as an attempt when
//!   its files are not already the target.
//!
//! - [`Step::Provision`]: a worktree was being made for a task fetched from another
//!   machine (`adopt`). If the task's record names it, it was finished; otherwise the
//!   half-made checkout (nothing in it is anyone's work yet) is removed, and `adopt`
//!   makes it again.
//!
//! [`quick`] runs at the start of every mutating command (one read of a usually
//! missing directory) and `sweep` runs [`recover`] and reports each repair.
//!
//! Starts killed half way are rolled back in [`abandoned`]; whether a process is still alive
//! is asked in [`liveness`].

pub mod abandoned;
pub mod liveness;

use crate::attempt::SavedAttempt as Attempt;
use crate::error::{Error, Result};
use crate::git::{checkout::inplace, checkout::twoway, worktree, ObjectId, Repo};
use crate::snapshot;
use crate::task::TaskId;
use serde::Serialize;
use std::path::{Path, PathBuf};

use crate::git::journal::{journal_dir, Entry, RefChange};
pub use crate::git::journal::{Journal, Step};
use crate::git::refs::{Expect, Update};

/// One repair made (or, dry, planned) from a journal entry of a killed process.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Recovered {
    /// `interrupted_checkout` or `interrupted_in_place_update`.
    pub problem: &'static str,
    /// The task concerned, if known.
    pub task: Option<String>,
    /// What was (or would be) done.
    pub action: String,
    /// Work saved before anything was overwritten.
    pub attempts: Vec<Attempt>,
    /// Why the repair could not be made (the entry is kept for the next try).
    pub error: Option<String>,
}

/// Returns the entries whose process is gone, with their files.
fn abandoned(repo: &Repo) -> Vec<(PathBuf, Option<Entry>)> {
    let Ok(entries) = std::fs::read_dir(journal_dir(repo)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let path = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .trim_start_matches('.')
            .split('.')
            .next()
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == std::process::id() || !liveness::process_is_gone(pid) {
            continue;
        }
        if name.starts_with('.') {
            // An entry cut short while being written: its step never started.
            out.push((path, None));
            continue;
        }
        let entry = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Entry>(&b).ok());
        out.push((path, entry));
    }
    // Interrupted ref transactions first: they settle which commit each branch names, and a
    // checkout is finished (or undone) against that. Then each process's steps in order.
    let order = |(path, entry): &(PathBuf, Option<Entry>)| {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let mut numbers = name
            .as_deref()
            .unwrap_or("")
            .trim_start_matches('.')
            .split('.');
        let pid = numbers.next().and_then(|p| p.parse::<u32>().ok());
        let n = numbers.next().and_then(|n| n.parse::<u32>().ok());
        let refs_first = !matches!(
            entry,
            Some(Entry {
                step: Step::RefLocks { .. },
                ..
            })
        );
        (refs_first, pid, n)
    };
    out.sort_by_key(order);
    out
}

/// Finishes or undoes the steps of killed processes; cheap when there are none.
///
/// Mutating commands call this first. Failures stay in the journal for `sweep` to report.
pub fn quick(repo: &Repo) {
    let _ = recover(repo, false);
}

/// Finishes or undoes (unless `dry_run`) every step a killed process left; returns each repair.
pub fn recover(repo: &Repo, dry_run: bool) -> Vec<Recovered> {
    let mut out = Vec::new();
    for (path, entry) in abandoned(repo) {
        let Some(entry) = entry else {
            if !dry_run {
                let _ = std::fs::remove_file(&path);
            }
            continue;
        };
        let mut rec = describe(&entry);
        if !dry_run {
            match apply(repo, &entry, &mut rec.attempts) {
                Ok(action) => {
                    rec.action = action;
                    let _ = std::fs::remove_file(&path);
                }
                Err(e) => rec.error = Some(e.to_string()),
            }
        }
        out.push(rec);
    }
    out
}

fn describe(entry: &Entry) -> Recovered {
    match &entry.step {
        Step::Checkout {
            worktree,
            branch,
            old,
            new,
        } => Recovered {
            problem: "interrupted_checkout",
            task: None,
            action: format!(
                "'{}' was being moved from {old} to {new} with '{}': finish or undo that move",
                worktree.display(),
                crate::git::refs::short_name(branch)
            ),
            attempts: Vec::new(),
            error: None,
        },
        Step::RefLocks { locks, .. } => Recovered {
            problem: "interrupted_ref_update",
            task: None,
            action: format!(
                "a ref update was killed holding its locks: delete {}, and finish the update if it had begun to move its refs",
                locks
                    .iter()
                    .map(|l| format!("'{}'", l.display()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            attempts: Vec::new(),
            error: None,
        },
        Step::Provision { task, worktree } => Recovered {
            problem: "interrupted_adopt",
            task: Some(task.clone()),
            action: format!(
                "the worktree '{}' was being made: remove it unless the task's record names it",
                worktree.display()
            ),
            attempts: Vec::new(),
            error: None,
        },
        Step::InPlace { task, worktree, .. } => Recovered {
            problem: "interrupted_in_place_update",
            task: Some(task.clone()),
            action: format!(
                "the files and index of '{}' were being rewritten: finish that",
                worktree.display()
            ),
            attempts: Vec::new(),
            error: None,
        },
    }
}

/// Finishes a ref transaction a killed process had begun to apply: once any of its refs holds
/// its new value, the transaction was being committed, so every ref still at its old value
/// moves too (each by compare-and-swap). A transaction that moved nothing is left undone.
/// Returns the refs moved now.
fn finish_ref_update(repo: &Repo, updates: &[RefChange]) -> Result<Vec<String>> {
    let parse = |v: &Option<String>| v.as_deref().map(oid).transpose();
    let mut begun = false;
    let mut left = Vec::new();
    for u in updates {
        let (old, new) = (parse(&u.old)?, parse(&u.new)?);
        let now = repo.find_ref(&u.name)?;
        if now == new {
            // A change to what it already was proves nothing; any other does.
            begun |= old != new;
            continue;
        }
        let at_old = now == old;
        if u.any || !at_old {
            continue;
        }
        left.push(Update {
            name: u.name.clone(),
            new,
            expect: match now {
                Some(id) => Expect::Is(id),
                None => Expect::Absent,
            },
            message: u.message.clone(),
        });
    }
    if !begun || left.is_empty() {
        return Ok(Vec::new());
    }
    let names = left.iter().map(|u| format!("'{}'", u.name)).collect();
    crate::ledger::commit(repo, left)?;
    Ok(names)
}

fn oid(text: &str) -> Result<ObjectId> {
    text.parse()
        .map_err(|_| Error::repo_msg(format!("bad object id '{text}' in a journal entry")))
}

fn apply(repo: &Repo, entry: &Entry, attempts: &mut Vec<Attempt>) -> Result<String> {
    match &entry.step {
        Step::RefLocks { locks, updates } => {
            let mut deleted = Vec::new();
            // Every transaction takes the packed-refs lock too (entries written before it was
            // journaled do not name it).
            let packed = repo.common_dir().join("packed-refs.lock");
            let packed = (!locks.contains(&packed)).then_some(&packed);
            for lock in locks.iter().chain(packed) {
                match std::fs::remove_file(lock) {
                    Ok(()) => deleted.push(format!("'{}'", lock.display())),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => {
                        return Err(Error::repo(
                            format!("could not delete '{}'", lock.display()),
                            e,
                        ))
                    }
                }
            }
            let finished = finish_ref_update(repo, updates)?;
            let mut done = match deleted.is_empty() {
                true => "no lock was left".to_owned(),
                false => format!("deleted {}", deleted.join(", ")),
            };
            if !finished.is_empty() {
                done.push_str(&format!("; finished the update of {}", finished.join(", ")));
            }
            Ok(done)
        }
        Step::Provision { task, worktree } => {
            let id = TaskId::parse(task).map_err(|e| Error::repo_msg(e.to_string()))?;
            // The `provisioned` event written here names it: the record's own state, not the
            // place this machine notes for the task before its worktree is made.
            let named = match crate::record::load(repo, &id)? {
                Some(r) => crate::record::read_state(repo, r.tip)
                    .is_ok_and(|s| Path::new(&s.worktree) == worktree.as_path()),
                None => false,
            };
            if named {
                return Ok(format!("'{}' was finished", worktree.display()));
            }
            match worktree::list(repo)?
                .into_iter()
                .find(|w| &w.path == worktree)
            {
                Some(w) => worktree::remove(repo, &w)?,
                None if worktree.exists() => std::fs::remove_dir_all(worktree).map_err(|e| {
                    Error::repo(format!("could not delete '{}'", worktree.display()), e)
                })?,
                None => {}
            }
            Ok(format!(
                "removed the half-made worktree '{}'; adopt '{task}' again",
                worktree.display()
            ))
        }
        Step::Checkout {
            worktree,
            branch,
            old,
            new,
        } => {
            if !worktree.join(".git").exists() {
                return Ok(format!(
                    "'{}' is gone: nothing to finish",
                    worktree.display()
                ));
            }
            let (old, new) = (oid(old)?, oid(new)?);
            let tip = repo.find_ref(branch)?;
            let short = crate::git::refs::short_name(branch);
            let (from, to, what) = if tip == Some(new) {
                (old, new, "finished")
            } else if tip == Some(old) {
                (new, old, "undid")
            } else {
                return Err(Error::repo_msg(format!(
                    "'{short}' moved on since '{}' was being updated from {old} to {new}",
                    worktree.display()
                ))
                .hint(format!(
                    "look at 'git -C {0} status' and save your changes, then: git -C {0} read-tree -m -u {old} {new}",
                    crate::contract::judge::shell_quote(&worktree.display().to_string()),
                )));
            };
            let written = twoway::settle(repo, worktree, from, to, entry.pid)?;
            Ok(format!(
                "{what} the update of '{}' to '{short}' ({to}): {} file(s) written",
                worktree.display(),
                written.len()
            ))
        }
        Step::InPlace {
            task,
            worktree: path,
            files,
            index,
            head,
            attach,
        } => {
            if !path.join(".git").exists() {
                return Ok(format!("'{}' is gone: nothing to finish", path.display()));
            }
            if let (Some(branch), Some(head)) = (attach, head) {
                // Killed between moving the branch and putting the worktree's HEAD back on it.
                let wt = worktree::open_at(path)?;
                if repo.find_ref(branch)? == Some(oid(head)?)
                    && wt.head_branch()?.as_deref() != Some(branch.as_str())
                {
                    inplace::attach_head(wt.git_dir(), branch)?;
                }
            }
            if let Some(head) = head {
                // Journaled before the branch moved: if it never did, nothing was rewritten.
                if worktree::open_at(path)?.head_commit()? != Some(oid(head)?) {
                    return Ok(format!(
                        "the branch of '{}' had not moved yet: nothing to finish",
                        path.display()
                    ));
                }
            }
            remove_leftovers(path, entry.pid)?;
            let wt = worktree::open_at(path)?;
            let lock = wt.index_path().with_file_name("index.lock");
            match std::fs::remove_file(&lock) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(Error::repo(
                        format!("could not delete '{}'", lock.display()),
                        e,
                    ))
                }
            }
            let index = oid(index)?;
            let current = snapshot::read(&wt)?;
            match files {
                Some(files) => {
                    let files = oid(files)?;
                    if current.worktree_tree != files {
                        if let Ok(id) = TaskId::parse(task) {
                            let parents: Vec<ObjectId> = current.head.into_iter().collect();
                            let (name, commit) = crate::attempt::write(
                                repo,
                                &id,
                                current.worktree_tree,
                                &parents,
                                "interrupted update",
                            )?;
                            attempts.push(Attempt {
                                name,
                                commit: commit.to_string(),
                                what: format!("the files of '{}'", path.display()),
                            });
                        }
                    }
                    let written = inplace::apply(&wt, current.worktree_tree, files, index)?;
                    Ok(format!(
                        "finished rewriting '{}': {} file(s) written",
                        path.display(),
                        written.len()
                    ))
                }
                None => {
                    inplace::write_index(&wt, index, current.worktree_tree)?;
                    Ok(format!(
                        "finished writing the index of '{}'",
                        path.display()
                    ))
                }
            }
        }
    }
}

/// Deletes the temporary files process `pid` left below `dir` (not inside `.git`).
fn remove_leftovers(dir: &Path, pid: u32) -> Result<()> {
    let suffix = format!(".git-task-{pid}.tmp");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for e in entries.flatten() {
        let name = e.file_name();
        if name == ".git" {
            continue;
        }
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            remove_leftovers(&e.path(), pid)?;
        } else if name.to_string_lossy().ends_with(&suffix) {
            std::fs::remove_file(e.path()).map_err(|err| {
                Error::repo(format!("could not delete '{}'", e.path().display()), err)
            })?;
        }
    }
    Ok(())
}

/// The decision of recovery for a killed ref transaction: finish it once it had begun to move
/// its refs, never move a ref someone else moved since, and leave one that moved nothing.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::Fixture;

    fn change(name: &str, old: Option<&str>, new: Option<&str>) -> RefChange {
        RefChange {
            name: name.into(),
            old: old.map(str::to_owned),
            new: new.map(str::to_owned),
            any: false,
            message: String::new(),
        }
    }

    /// A repository with two commits: (first, second).
    fn two_commits(f: &Fixture) -> (String, String) {
        let first = f.git(&["rev-parse", "HEAD"]);
        f.write("docs/b.md", "b\n");
        f.git(&["add", "-A"]);
        f.git(&["commit", "-q", "-m", "second"]);
        (first, f.git(&["rev-parse", "HEAD"]))
    }

    #[test]
    fn a_transaction_that_moved_nothing_is_left_undone() {
        let f = Fixture::new();
        let (a, b) = two_commits(&f);
        f.git(&["update-ref", "refs/heads/x", &a]);
        f.git(&["update-ref", "refs/heads/y", &a]);
        let updates = [
            change("refs/heads/x", Some(&a), Some(&b)),
            change("refs/heads/y", Some(&a), Some(&b)),
        ];
        assert!(finish_ref_update(&f.repo(), &updates).unwrap().is_empty());
        assert_eq!(f.git(&["rev-parse", "x", "y"]), format!("{a}\n{a}"));
    }

    #[test]
    fn a_transaction_half_applied_is_finished() {
        let f = Fixture::new();
        let (a, b) = two_commits(&f);
        f.git(&["update-ref", "refs/heads/x", &b]);
        f.git(&["update-ref", "refs/heads/y", &a]);
        let updates = [
            change("refs/heads/x", Some(&a), Some(&b)),
            change("refs/heads/y", Some(&a), Some(&b)),
            change("refs/heads/z", None, Some(&b)),
        ];
        let moved = finish_ref_update(&f.repo(), &updates).unwrap();
        assert_eq!(moved, ["'refs/heads/y'", "'refs/heads/z'"]);
        assert_eq!(
            f.git(&["rev-parse", "x", "y", "z"]),
            format!("{b}\n{b}\n{b}")
        );
    }

    #[test]
    fn a_ref_moved_by_someone_else_since_is_never_moved() {
        let f = Fixture::new();
        let (a, b) = two_commits(&f);
        let c = f.git(&[
            "commit-tree",
            "-p",
            &b,
            "-m",
            "elsewhere",
            &format!("{b}^{{tree}}"),
        ]);
        f.git(&["update-ref", "refs/heads/x", &b]);
        f.git(&["update-ref", "refs/heads/y", &c]);
        let updates = [
            change("refs/heads/x", Some(&a), Some(&b)),
            change("refs/heads/y", Some(&a), Some(&b)),
        ];
        assert!(finish_ref_update(&f.repo(), &updates).unwrap().is_empty());
        assert_eq!(f.git(&["rev-parse", "y"]), c);
    }

    #[test]
    fn a_change_to_what_a_ref_already_was_proves_nothing() {
        let f = Fixture::new();
        let (a, b) = two_commits(&f);
        f.git(&["update-ref", "refs/heads/x", &a]);
        f.git(&["update-ref", "refs/heads/y", &a]);
        let updates = [
            change("refs/heads/x", Some(&a), Some(&a)),
            change("refs/heads/y", Some(&a), Some(&b)),
        ];
        assert!(finish_ref_update(&f.repo(), &updates).unwrap().is_empty());
        assert_eq!(f.git(&["rev-parse", "y"]), a);
    }
}
