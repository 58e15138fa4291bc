//! Removing a task's worktree and branch, saving any work first (SPEC §2.2).
//!
//! Everything that would be lost is saved before anything is deleted: the
//! worktree's uncommitted state and every commit no safe ref reaches, as one
//! attempt ([`crate::attempt`]); repositories nested in the worktree are moved
//! whole into the task's attic. Ignored files are counted so the report can say
//! what goes with the worktree. A `remove` run from inside the worktree first
//! moves the process to the main worktree and tells the user to `cd` there.
//!
//! Long on purpose: worktree and patch mode, nested repositories and submodules each have
//! their own way of being saved before anything goes, and they are read in one place.

use crate::attempt::{self, Attempt, Saved, SavedAttempt};
use crate::config::Settings;
use crate::error::{Error, Result};
use crate::git::refs::Update;
use crate::git::status::ignored::{self, Ignored};
use crate::git::{worktree, ObjectId, Repo};
use crate::record::event::{self, Event};
use crate::record::{self, Record, Step};
use crate::snapshot;
use crate::task::{Mode, Status, TaskId};
use std::path::{Path, PathBuf};

/// What `remove` did.
#[derive(Debug)]
pub enum Removed {
    /// The task was removed.
    Done(Box<RemoveDone>),
    /// It was already removed (or never existed).
    AlreadyGone(Option<Box<Record>>),
}

/// A finished removal.
#[derive(Debug)]
pub struct RemoveDone {
    /// Attempts holding what would otherwise be lost.
    pub attempts: Vec<SavedAttempt>,
    /// Where the repositories nested in the worktree were moved to, if any.
    pub attic: Option<PathBuf>,
    /// The ignored files deleted with the worktree.
    pub ignored: Ignored,
    /// Where the process moved to because its directory was inside the worktree: the user should `cd` there.
    pub cd: Option<PathBuf>,
    /// Things that did not work but leave the task consistently removed.
    pub warnings: Vec<String>,
    /// The worktree's files, moved aside: deleted in the background when this is dropped
    /// (after the report is printed).
    pub aside: Option<worktree::Aside>,
}

/// Why `remove` refused.
pub struct Dirty {
    /// The task id.
    pub id: TaskId,
    /// The worktree with uncommitted changes.
    pub path: String,
    /// Paths with changes.
    pub changed: Vec<String>,
    /// Repositories nested in the worktree (a subset of `changed`).
    pub nested: Vec<String>,
}

/// Saves what discarding the task's worktree (at `path`, if it is there) and branch would lose.
///
/// `state` is the worktree's state when it was read (it is dirty); the worktree's
/// HEAD, when it differs from the branch, is saved too.
fn save_work(
    repo: &Repo,
    record: &Record,
    path: Option<&Path>,
    state: Option<&snapshot::WorktreeState>,
    head: Option<ObjectId>,
    why: &str,
) -> Result<Option<SavedAttempt>> {
    let mut saved = Saved::for_record(repo, record, why)?;
    saved.worktree = path.zip(state);
    saved.commits.extend(head);
    saved.commits.extend(repo.find_ref(&record.state.branch)?);
    Attempt::save(repo, &record.state.task_id(), &saved)
}

/// After the submodule checkouts went to `attic` (with the nested repositories), moves their
/// repositories from the worktree's administrative directory in with them (each checkout a
/// repository of its own again), and whatever else is left there (a submodule no longer
/// checked out) to `<attic>/.git-modules`. Returns the attic, made if needed.
fn move_submodules_aside(
    repo: &Repo,
    id: &TaskId,
    linked: &worktree::Linked,
    subs: &[worktree::submodules::Checkout],
    attic: Option<PathBuf>,
) -> Result<Option<PathBuf>> {
    let admin = crate::git::canonical(&linked.git_dir);
    if let Some(attic) = &attic {
        for sub in subs {
            if crate::git::canonical(&sub.git_dir).starts_with(&admin) {
                let moved = attic.join(crate::git::path::from_repo(sub.path.as_ref())?);
                worktree::submodules::embed(&sub.git_dir, &moved)?;
            }
        }
    }
    if !linked.has_submodule_repositories() {
        return Ok(attic);
    }
    let attic = match attic {
        Some(a) => a,
        None => attempt::new_attic(repo, id)?,
    };
    let from = linked.git_dir.join("modules");
    let to = attic.join(".git-modules");
    std::fs::rename(&from, &to).map_err(|e| {
        Error::repo(
            format!("could not move '{}' to '{}'", from.display(), to.display()),
            e,
        )
    })?;
    Ok(Some(attic))
}

/// The worktree directories that an earlier removal moved aside and whose background delete
/// failed or died (noted, still there, held by no delete): one warning each, naming `sweep`,
/// which deletes them. Said by the next `remove`, since the one that started the delete had
/// already returned.
fn unfinished_deletes(repo: &Repo) -> Vec<String> {
    worktree::leftover_removals(repo.common_dir())
        .into_iter()
        .map(|(path, _)| {
            format!(
                "the background delete of a removed worktree did not finish: '{}' is still there; 'git task sweep' deletes it",
                path.display()
            )
        })
        .collect()
}

/// Removes the worktree and branch of a task. A dirty worktree is refused unless `force`.
pub fn remove(
    repo: &Repo,
    settings: &Settings,
    id: &TaskId,
    force: bool,
) -> Result<std::result::Result<Removed, Dirty>> {
    crate::recover::abandoned::repair_abandoned_starts(repo, settings);
    let Some(record) = record::load(repo, id)? else {
        return Ok(Ok(Removed::AlreadyGone(None)));
    };
    if record.state.status == Status::Removed {
        return Ok(Ok(Removed::AlreadyGone(Some(Box::new(record)))));
    }
    if record.state.status == Status::Provisioning {
        if !crate::recover::liveness::provisioning_is_abandoned(&record.state) {
            return Err(
                Error::input(format!("task '{id}' is still being started")).hint(format!(
                    "wait for 'git task start {id}' to finish, then remove it"
                )),
            );
        }
        // A start that died: undo it the way sweep would, saving any work.
        return match crate::recover::abandoned::roll_back_abandoned(repo, settings, &record)? {
            Some(attempts) => Ok(Ok(Removed::Done(Box::new(RemoveDone {
                attempts,
                attic: None,
                ignored: Ignored::default(),
                cd: None,
                warnings: Vec::new(),
                aside: None,
            })))),
            None => Err(
                Error::repo_msg(format!("task '{id}' changed while it was being removed"))
                    .hint(format!("run 'git task remove {id}' again")),
            ),
        };
    }
    // The branch and worktree it deletes are the ones frozen at start (tests/cmd/hostile_records.rs).
    super::frozen_untouched(repo, &record, "nothing was removed")?;
    if record.state.mode == Mode::Patch {
        return remove_patch(repo, record).map(Ok);
    }
    let linked = record.state.worktree_now(repo)?;
    if let Some(linked) = &linked {
        // Before anything is saved or deleted, `--force` or not (git wants `-f -f`).
        linked.check_unlocked()?;
    }
    let mut attempts = Vec::new();
    let mut attic = None;
    let mut ignored = Ignored::default();
    if let Some(linked) = linked.as_ref().filter(|l| l.exists()) {
        let wt = worktree::open_at(&linked.path)?;
        // Submodules have repositories of their own, which go with the worktree: like nested
        // repositories, they make it dirty and are moved into the attic, never deleted.
        let subs = worktree::submodules::checkouts(&wt)?;
        let sub_repos = !subs.is_empty() || linked.has_submodule_repositories();
        // The cheap check first: a clean worktree needs no snapshot (SPEC §10: remove is fast).
        // Its HEAD is the tip of the branch `worktree::list` read, without opening it.
        let head = match &linked.branch {
            Some(branch) => repo.find_ref(branch)?,
            None => worktree::head_of(&linked.path)?,
        };
        let clean = !sub_repos
            && head.is_some_and(|head| {
                super::summary::worktree_is_clean(repo, &linked.path, head, &mut Default::default())
                    .unwrap_or(false)
            });
        let state = match clean {
            true => None,
            false => Some(snapshot::read_to_keep(&wt)?).filter(|s| s.is_dirty() || sub_repos),
        };
        // What `revert` leaves (the base's files, staged over the branch's commits) holds no
        // work: the revert saved it already, and the commits stay reachable from that attempt.
        let state = match state {
            Some(s) if !sub_repos && holds_only_the_base(repo, &record, &s)? => None,
            state => state,
        };
        if let Some(state) = &state {
            if !force {
                let mut nested: Vec<String> = state.nested.iter().map(|n| n.to_string()).collect();
                nested.extend(subs.iter().map(|s| s.path.to_string()));
                if nested.is_empty() && sub_repos {
                    nested.push(linked.git_dir.join("modules").display().to_string());
                }
                let mut changed = state.changed.clone();
                for n in &nested {
                    if !changed.contains(n) {
                        changed.push(n.clone());
                    }
                }
                return Ok(Err(Dirty {
                    id: id.clone(),
                    path: linked.path.display().to_string(),
                    changed,
                    nested,
                }));
            }
        }
        let why = if force { "remove --force" } else { "remove" };
        let head = wt.head_commit()?;
        attempts.extend(save_work(
            repo,
            &record,
            Some(&linked.path),
            state.as_ref(),
            head,
            why,
        )?);
        if let Some(state) = &state {
            // SPEC §2.2: a nested repository's history cannot go into a commit; it is moved, never deleted.
            let mut nested = state.nested.clone();
            nested.extend(
                subs.iter()
                    .filter(|s| !state.nested.contains(&s.path))
                    .map(|s| s.path.clone()),
            );
            attic = attempt::move_nested_aside(repo, id, &linked.path, &nested)?;
            attic = move_submodules_aside(repo, id, linked, &subs, attic)?;
        }
        ignored = ignored::count(&wt).unwrap_or_default();
    } else {
        attempts.extend(save_work(repo, &record, None, None, None, "remove")?);
    }
    // Leave the worktree before it goes, so that nothing after this runs in a deleted directory,
    // and write through the main repository, not through the worktree's administrative files.
    let cd = match &linked {
        Some(l) => crate::git::leave_if_inside(&l.path, &repo.main_worktree()?)?,
        None => None,
    };
    let outside = match &linked {
        Some(l) => worktree::reopen_outside(repo, l)?,
        None => None,
    };
    let repo = outside.as_ref().unwrap_or(repo);
    let tip = repo.find_ref(&record.state.branch)?;
    // Deleted in the background once the record says removed and the report is printed.
    let aside = match &linked {
        Some(linked) => Some(worktree::move_aside(repo, linked)?),
        None => None,
    };
    // The worktree is gone now, so finish even if another command (drop, a hook) appended an
    // event meanwhile: retry against the record's new tip, saving any branch commits it brought.
    let mut saved_tip = tip;
    let updated = record::update(repo, record, &format!("remove task '{id}'"), |current| {
        if current.state.status == Status::Removed {
            // Another command removed it meanwhile.
            return Ok(Step::Stop(Some(Box::new(current.clone()))));
        }
        let branch_tip = repo.find_ref(&current.state.branch)?;
        if branch_tip != saved_tip {
            attempts.extend(save_work(repo, current, None, None, None, "remove")?);
            saved_tip = branch_tip;
        }
        let mut state = current.state.clone();
        let previous = state.status;
        state.status = Status::Removed;
        let extra: Vec<Update> = branch_tip
            .map(|tip| {
                Update::delete(
                    current.state.branch.clone(),
                    tip,
                    format!("git-task: remove {id}"),
                )
            })
            .into_iter()
            .collect();
        let removed = Event::Removed(event::Removed::Removed {
            previous_status: previous,
            attempts: attempts.clone(),
            attic: attic.as_ref().map(|a| a.display().to_string()),
            ignored,
        });
        Ok(Step::Append {
            event: removed,
            state,
            extra,
            then: None,
        })
    })?;
    let record = match updated {
        record::Updated::Appended(record, _) => record,
        record::Updated::Stopped(removed) => return Ok(Ok(Removed::AlreadyGone(removed))),
        record::Updated::Gone => return Ok(Ok(Removed::AlreadyGone(None))),
    };
    let mut warnings = Vec::new();
    // A removed task's claims end here (`sweep` drops one a killed remove left).
    let _ = crate::claims::release_all(repo, &record.state.id);
    if let Err(e) = remove_scratch(repo, id) {
        warnings.push(e.to_string());
    }
    // The gate checkout its failed checks were kept in (`merge`).
    if let Err(e) = crate::gate::clean(repo, Some(&record.state.id), false) {
        warnings.push(e.to_string());
    }
    warnings.extend(unfinished_deletes(repo));
    Ok(Ok(Removed::Done(Box::new(RemoveDone {
        attempts,
        attic,
        ignored,
        cd,
        warnings,
        aside,
    }))))
}

/// Whether the worktree `state` holds nothing but the task's base (its files and index are the
/// base's, the contract file aside): what `revert` of everything leaves. Discarding it loses
/// nothing that the branch, an attempt or the base does not keep.
fn holds_only_the_base(
    repo: &Repo,
    record: &Record,
    state: &snapshot::WorktreeState,
) -> Result<bool> {
    if state.index_tree != state.worktree_tree || !state.nested.is_empty() {
        return Ok(false);
    }
    let base = crate::changes::task_base(repo, record)?;
    let base_tree = crate::git::objects::commit_tree(repo, base)?;
    Ok(
        crate::git::diff::tree_to_tree(repo, base_tree, state.worktree_tree)?
            .iter()
            .all(|c| c.path == crate::contract::file::CONTRACT_FILE),
    )
}

/// Removes a patch-mode task: its work is saved as an attempt when it differs from the snapshot
/// (the files stay as they are: the worktree is the user's), then the snapshot ref, the active
/// mark and the scratch directory go, and the record says `removed`.
fn remove_patch(repo: &Repo, record: Record) -> Result<Removed> {
    let id = record.state.task_id();
    let path = PathBuf::from(&record.state.worktree);
    let snap = snapshot::snapshot_commit(repo, &id)?;
    let mut attempts = Vec::new();
    let wt = match path.is_dir() {
        true => Some(worktree::open_at(&path)?),
        false => None,
    };
    if let Some(wt) = &wt {
        let state = snapshot::read_to_keep(wt)?;
        let unchanged = match snap {
            Some(snap) => {
                let at_start = snapshot::parse_snapshot(repo, snap)?;
                state.worktree_tree == at_start.worktree_tree
                    && state.index_tree == at_start.index_tree
                    && state.head == Some(at_start.head)
            }
            None => false,
        };
        if !unchanged {
            let saved = crate::attempt::Saved {
                worktree: Some((path.as_path(), &state)),
                commits: state.head.into_iter().collect(),
                ..crate::attempt::Saved::for_record(repo, &record, "remove")?
            };
            attempts.extend(Attempt::save(repo, &id, &saved)?);
        }
    }
    let updated = record::update(repo, record, &format!("remove task '{id}'"), |current| {
        if current.state.status == Status::Removed {
            return Ok(Step::Stop(Some(Box::new(current.clone()))));
        }
        let mut state = current.state.clone();
        let previous = state.status;
        state.status = Status::Removed;
        let extra: Vec<Update> = snap
            .map(|snap| {
                Update::delete(
                    crate::task::layout::snapshot_ref(&id),
                    snap,
                    format!("git-task: remove {id}"),
                )
            })
            .into_iter()
            .collect();
        Ok(Step::Append {
            event: Event::Removed(event::Removed::Removed {
                previous_status: previous,
                attempts: attempts.clone(),
                attic: None,
                ignored: Ignored::default(),
            }),
            state,
            extra,
            then: None,
        })
    })?;
    let record = match updated {
        record::Updated::Appended(record, _) => record,
        record::Updated::Stopped(removed) => return Ok(Removed::AlreadyGone(removed)),
        record::Updated::Gone => return Ok(Removed::AlreadyGone(None)),
    };
    let mut warnings = Vec::new();
    if let Some(wt) = &wt {
        if crate::resolve::read_mark(wt).as_ref() == Some(&id) {
            if let Err(e) = crate::resolve::clear_mark(wt.git_dir()) {
                warnings.push(e.to_string());
            }
        }
    }
    let _ = crate::claims::release_all(repo, &record.state.id);
    if let Err(e) = remove_scratch(repo, &id) {
        warnings.push(e.to_string());
    }
    Ok(Removed::Done(Box::new(RemoveDone {
        attempts,
        attic: None,
        ignored: Ignored::default(),
        cd: None,
        warnings,
        aside: None,
    })))
}

/// Returns the per-task scratch directory (under the common git dir, outside every worktree).
pub fn scratch_dir(repo: &Repo, id: &TaskId) -> std::path::PathBuf {
    crate::task::layout::scratch_dir(repo.common_dir(), id)
}

/// Deletes the task's scratch directory; a failure is reported, not fatal (the task is removed).
fn remove_scratch(repo: &Repo, id: &TaskId) -> Result<()> {
    crate::confine::settle(repo, id)?;
    let dir = scratch_dir(repo, id);
    match std::fs::remove_dir_all(&dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::repo(
            format!("could not delete the scratch directory '{}'", dir.display()),
            e,
        )),
    }
}

/// The decisions of `remove`: a dirty worktree is refused without `--force` and nothing moves;
/// with it, the work is saved as an attempt before anything is deleted.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{write, Fixture};

    #[test]
    fn a_dirty_worktree_is_refused_without_force_and_nothing_moves() {
        let f = Fixture::new();
        let rec = f.start("dirty", &["src/**"]);
        let wt = std::path::PathBuf::from(&rec.state.worktree);
        write(&wt, "src/new.rs", "unsaved\n");
        let before = f.refs();
        let id = TaskId::parse("dirty").unwrap();
        match remove(&f.repo(), &f.settings(), &id, false).unwrap() {
            Err(d) => assert_eq!(d.changed, ["src/new.rs"]),
            Ok(_) => panic!("a dirty worktree was removed without --force"),
        }
        assert_eq!(f.refs(), before);
        assert!(wt.join("src/new.rs").exists());
    }

    #[test]
    fn force_saves_the_work_before_it_deletes_anything() {
        let f = Fixture::new();
        let rec = f.start("forced", &["src/**"]);
        let wt = std::path::PathBuf::from(&rec.state.worktree);
        write(&wt, "src/new.rs", "unsaved\n");
        let id = TaskId::parse("forced").unwrap();
        let Ok(Removed::Done(done)) = remove(&f.repo(), &f.settings(), &id, true).unwrap() else {
            panic!("remove --force did not remove");
        };
        assert_eq!(done.attempts.len(), 1, "{:?}", done.attempts);
        let saved = &done.attempts[0].name;
        assert_eq!(f.git(&["show", &format!("{saved}:src/new.rs")]), "unsaved");
        assert!(f.git(&["branch", "--list", "task/forced"]).is_empty());
        assert!(!wt.join("src/new.rs").exists());
        // Removing it again is a no-op.
        assert!(matches!(
            remove(&f.repo(), &f.settings(), &id, false).unwrap(),
            Ok(Removed::AlreadyGone(Some(_)))
        ));
    }
}
