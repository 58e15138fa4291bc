//! Repair: return the repository to a consistent state after a crash (SPEC §2.7),
//! touching only what git-task made.
//!
//! Half-made states and what happens to them:
//! - a step a killed command journaled (`recover`): finished or undone;
//! - a record still `provisioning` whose process is gone: roll back the start
//!   (worktree, branch, base ref and record are deleted, or for a removed task
//!   started again, put back as they were; any work saved first). Mutating
//!   commands do this too, cheaply, for the starts whose marker file is left;
//! - a live worktree-mode task whose worktree the user moved (`git worktree
//!   move`): the record follows it (git's admin files say where it is);
//! - a live worktree-mode task whose worktree directory vanished: the stale
//!   worktree entry is pruned, branch commits saved as an attempt, the task
//!   marked removed;
//! - a task branch with no record: its commits and worktree changes are saved
//!   as attempts, then branch and worktree are deleted;
//! - a linked worktree of a merged or removed task left on its deleted branch (a
//!   clean-up that died): saved, then deleted. One whose branch still exists
//!   was kept on purpose (`merge --keep`) and is left alone;
//! - leftovers of an interrupted removal, noted under `<common>/git-task/asides/` when
//!   git-task moved them aside, are deleted; no directory is deleted for its name;
//! - pool entries a killed `pool fill` or pooled `start` left (`pool::repair`);
//! - scratch directories of finished tasks;
//! - stale lock files under `refs/tasks/` and the task branches;
//! - claims of tasks that are not live any more.
//!
//! A repair that fails is reported with its error; the others still run.

use crate::attempt::{
    save_commits as save_branch_commits, save_worktree as save_dirty_worktree,
    SavedAttempt as Attempt,
};
use crate::config::Settings;
use crate::contract::file::CONTRACT_FILE;
use crate::error::{Error, Result};
use crate::git::objects;
use crate::git::refs::Update;
use crate::git::{worktree, Repo};
use crate::record::{self, event, Event};
use crate::task::{layout, Mode, Status, TaskId};
use std::path::{Path, PathBuf};

/// One repair, done or (with `--dry-run`) planned.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Repair {
    /// What kind of half-made state was found.
    pub problem: &'static str,
    /// The task it concerns, if known.
    pub task: Option<String>,
    /// What was (or would be) done.
    pub action: String,
    /// Work saved before anything was deleted.
    pub attempts: Vec<Attempt>,
    /// Why the repair could not be made; `None` when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Runs `apply` for `repair` unless `dry_run`, and records it: an error becomes
/// the repair's `error` (the sweep goes on with the others); `Ok(false)` drops it
/// (nothing needed doing after all).
fn run_repair(
    repairs: &mut Vec<Repair>,
    mut repair: Repair,
    dry_run: bool,
    apply: impl FnOnce(&mut Repair) -> Result<bool>,
) {
    if !dry_run {
        match apply(&mut repair) {
            Ok(true) => {}
            Ok(false) => return,
            Err(e) => repair.error = Some(e.to_string()),
        }
    }
    repairs.push(repair);
}

fn repair(problem: &'static str, task: Option<String>, action: String) -> Repair {
    Repair {
        problem,
        task,
        action,
        attempts: Vec::new(),
        error: None,
    }
}

/// Finds (and unless `dry_run`, repairs) every half-made state git-task left.
///
/// The plan is what is found; with `dry_run` it is returned as is, otherwise each
/// repair is applied in turn, and one that fails carries its `error` while the
/// others still run. Only what git-task made is touched: journaled steps of killed
/// commands, starts that never finished, task branches and worktrees whose other
/// half is gone, directories of interrupted removals, scratch directories of
/// finished tasks and stale lock files. A worktree kept with `merge --keep`, one the
/// user moved with `git worktree move` (followed through git's own admin files),
/// and any directory git-task did not make are left alone.
pub fn sweep(repo: &Repo, settings: &Settings, dry_run: bool) -> Result<Swept> {
    let mut repairs = Vec::new();
    // 0. Steps a killed command journaled: finished or undone first.
    for r in crate::recover::recover(repo, dry_run) {
        repairs.push(Repair {
            problem: r.problem,
            task: r.task,
            action: r.action,
            attempts: r.attempts,
            error: r.error,
        });
    }
    // 0b. Pool entries a killed fill or claim left (`pool`).
    for r in crate::pool::repair(repo, &settings.worktree_dir, dry_run)? {
        repairs.push(repair(r.problem, None, r.action));
    }
    // 0c. Objects of confined sessions that ended, into the shared store (`exec --confine`).
    // 0d. Ledger entries a killed transaction left pending (`ledger::records`).
    if !dry_run {
        crate::confine::settle_all(repo)?;
        crate::ledger::records::settle(repo)?;
    }
    let linked = worktree::list(repo)?;
    let mut ids = record::all_ids(repo)?;
    ids.extend(crate::ledger::records::known_ids(repo));
    ids.sort();
    ids.dedup();
    let mut records = Vec::new();
    // Records the ledger does not vouch for: reported, and nothing of theirs is touched.
    let mut tampered = Vec::new();
    for id in &ids {
        match record::load(repo, id) {
            Ok(Some(r)) => records.push(r),
            Ok(None) => {}
            Err(e) if e.code() == "record_tampered" => tampered.push(id.clone()),
            Err(e) => return Err(e),
        }
    }
    let is_tampered = |id: &TaskId| tampered.contains(id);
    // The branch checked out in the main worktree is the user's, whatever its name.
    let main_head = std::fs::read_to_string(repo.common_dir().join("HEAD"))
        .ok()
        .and_then(|h| h.trim().strip_prefix("ref: ").map(str::to_owned));
    // Branches that are the base of a task: never taken for a half-made task branch.
    let bases: Vec<&str> = records
        .iter()
        .filter_map(|r| r.state.base_branch.as_deref())
        .collect();

    // 1. Starts that never finished.
    for r in &records {
        if crate::recover::liveness::provisioning_is_abandoned(&r.state) {
            let plan = repair(
                "unfinished_start",
                Some(r.state.id.to_string()),
                "rolled back the start: deleted its worktree, branch, base ref and record".into(),
            );
            run_repair(&mut repairs, plan, dry_run, |repair| {
                match crate::recover::abandoned::roll_back_abandoned(repo, settings, r)? {
                    Some(attempts) => {
                        repair.attempts = attempts;
                        Ok(true)
                    }
                    None => Ok(false),
                }
            });
        }
    }

    if !dry_run {
        // Markers of starts that died; their records were handled just above.
        crate::recover::abandoned::repair_abandoned_starts(repo, settings);
    }

    // 2. Live worktree tasks: moved by the user (the record follows), or whose directory vanished.
    for r in &records {
        let s = &r.state;
        if s.mode != Mode::Worktree || !matches!(s.status, Status::Active | Status::Dropped) {
            continue;
        }
        let path = PathBuf::from(&s.worktree);
        let id = s.task_id();
        // This machine's worktree as last written here (`record::place`; the record's own path
        // may be another machine's, which no event here ever moves).
        let known = record::place::get(repo, s.id.as_str()).or_else(|| {
            record::read_state(repo, r.tip)
                .ok()
                .map(|stored| stored.worktree)
        });
        if let Some(known) = known.filter(|known| *known != s.worktree) {
            // `record::load` found the branch checked out elsewhere: record where it is now.
            let plan = repair(
                "worktree_moved",
                Some(s.id.to_string()),
                format!(
                    "worktree '{known}' was moved to '{}': recorded the new path",
                    s.worktree
                ),
            );
            run_repair(&mut repairs, plan, dry_run, |_| {
                let moved = Event::Moved(event::Moved {
                    from: known.clone(),
                    to: s.worktree.clone(),
                });
                record::append(repo, r, moved, s, Vec::new())?;
                Ok(true)
            });
            continue;
        }
        if path.join(".git").exists() {
            continue;
        }
        // A locked worktree's directory may be on a drive that is not mounted: as
        // `git worktree prune` does, leave it (and its task) alone.
        if linked
            .iter()
            .any(|l| s.is_worktree(l) && l.lock_reason().is_some())
        {
            continue;
        }
        // Never made here: the record's last event is another machine's (its path is not this
        // machine's) and git knows no worktree of the task: an `adopt` that did not finish
        // (run it again), not a worktree that vanished. Nothing of it is removed.
        let known_to_git = linked.iter().any(|l| s.is_worktree(l));
        let last_written_here = record::read_state(repo, r.tip)
            .map(|stored| stored.worktree == s.worktree)
            .unwrap_or(true);
        if !known_to_git && !last_written_here {
            continue;
        }
        let plan = repair(
            "worktree_vanished",
            Some(s.id.to_string()),
            format!(
                "worktree '{}' is gone: pruned it, deleted branch '{}', marked the task removed",
                path.display(),
                s.branch_short()
            ),
        );
        run_repair(&mut repairs, plan, dry_run, |repair| {
            for l in linked.iter().filter(|l| s.is_worktree(l)) {
                worktree::remove_admin(l)?;
            }
            let mut extra = Vec::new();
            if let Some(tip) = repo.find_ref(&s.branch)? {
                let base = repo.find_ref(&layout::base_ref(&id))?;
                if let Some(a) = save_branch_commits(repo, &id, tip, base, "worktree vanished")? {
                    repair.attempts.push(a);
                }
                extra.push(Update::delete(
                    s.branch.clone(),
                    tip,
                    format!("git-task: sweep {id}"),
                ));
            }
            let mut state = s.clone();
            state.status = Status::Removed;
            let removed = Event::Removed(event::Removed::Swept {
                reason: "worktree vanished".into(),
                attempts: repair.attempts.clone(),
            });
            record::append(repo, r, removed, &state, extra)?;
            Ok(true)
        });
    }

    // 3. Task branches without a record, and worktrees of tasks that are gone.
    let branch_ns = format!("refs/heads/{}", settings.branch_prefix);
    for (name, tip) in repo.refs_under(&branch_ns)? {
        let Some(id) = name
            .strip_prefix(&branch_ns)
            .and_then(|s| TaskId::parse(s).ok())
        else {
            continue;
        };
        if records.iter().any(|r| r.state.task_id() == id)
            || is_tampered(&id)
            || bases.contains(&name.as_str())
            || main_head.as_deref() == Some(name.as_str())
        {
            continue;
        }
        // Only a branch git-task made (its tree holds the contract file) is a half-made task;
        // a branch of the user's that happens to match the prefix is left alone.
        let tree = objects::commit_tree(repo, tip)?;
        if objects::read_blob_in_tree(repo, tree, CONTRACT_FILE)?.is_none() {
            continue;
        }
        let plan = repair(
            "branch_without_record",
            Some(id.to_string()),
            format!(
                "branch '{}' has no task record: saved its commits and deleted it",
                crate::git::refs::short_name(&name)
            ),
        );
        run_repair(&mut repairs, plan, dry_run, |repair| {
            for l in linked
                .iter()
                .filter(|l| l.branch.as_deref() == Some(name.as_str()))
            {
                if l.exists() {
                    if let Some(a) = save_dirty_worktree(repo, &id, &l.path, "sweep")? {
                        repair.attempts.push(a);
                    }
                }
                worktree::remove(repo, l)?;
            }
            let tree = objects::commit_tree(repo, tip)?;
            let (aname, commit) =
                crate::attempt::write(repo, &id, tree, &[tip], "sweep: branch without record")?;
            repair.attempts.push(Attempt {
                name: aname,
                commit: commit.to_string(),
                what: "commits of the branch".into(),
            });
            crate::ledger::commit(
                repo,
                vec![Update::delete(
                    name.clone(),
                    tip,
                    format!("git-task: sweep {id}"),
                )],
            )?;
            Ok(true)
        });
    }
    for l in &linked {
        let Some(branch) = l.branch.as_deref() else {
            continue;
        };
        let Some(id) = branch
            .strip_prefix(&branch_ns)
            .and_then(|s| TaskId::parse(s).ok())
        else {
            continue;
        };
        let Some(r) = records.iter().find(|r| r.state.task_id() == id) else {
            continue;
        };
        if r.state.status.is_live() || r.state.mode != Mode::Worktree || r.state.branch != branch {
            continue;
        }
        // A finished task whose branch still exists keeps its worktree on purpose
        // (`merge --keep`): only a worktree left on a deleted branch is a clean-up that died.
        if repo.find_ref(branch)?.is_some() {
            continue;
        }
        let plan = repair(
            "worktree_of_finished_task",
            Some(id.to_string()),
            format!(
                "task '{id}' is {}, but worktree '{}' is still there: saved its changes and deleted it",
                r.state.status,
                l.path.display()
            ),
        );
        run_repair(&mut repairs, plan, dry_run, |repair| {
            if l.exists() {
                if let Some(a) = save_dirty_worktree(repo, &id, &l.path, "sweep")? {
                    repair.attempts.push(a);
                }
            }
            worktree::remove(repo, l)?;
            Ok(true)
        });
    }

    // 3b. Administrative entries a killed worktree add left (no `gitdir`): `git worktree prune`'s.
    // With no start or pool fill running, nothing of git-task's is adding one right now.
    let adding =
        crate::recover::abandoned::live_starts(repo) || crate::pool::filler(repo).is_some();
    let min_age = match adding {
        true => worktree::HALF_ADDED_AGE,
        false => std::time::Duration::ZERO,
    };
    for dir in worktree::half_added(repo.common_dir(), min_age) {
        let plan = repair(
            "half_added_worktree",
            None,
            format!(
                "deleted '{}', left by an interrupted worktree add",
                dir.display()
            ),
        );
        run_repair(&mut repairs, plan, dry_run, |_| {
            worktree::remove_half_added(&dir)?;
            Ok(true)
        });
    }

    // 4. Leftovers of interrupted removals: only the directories git-task noted when it moved
    //    them aside (never one chosen by its name, which anybody can give a directory).
    for (path, note) in worktree::leftover_removals(repo.common_dir()) {
        let plan = repair(
            "interrupted_removal",
            None,
            format!("deleted '{}'", path.display()),
        );
        run_repair(&mut repairs, plan, dry_run, |_| {
            worktree::delete_moved_aside(&path, &note)?;
            Ok(true)
        });
    }

    // 5. Scratch directories of tasks that are finished (and keep no worktree) or gone.
    let scratch_root = repo.common_dir().join("git-task").join("scratch");
    if let Ok(entries) = std::fs::read_dir(&scratch_root) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(id) = TaskId::parse(&name) else {
                continue;
            };
            if is_tampered(&id) {
                continue;
            }
            let finished = match records.iter().find(|r| r.state.task_id() == id) {
                None => true,
                Some(r) => {
                    let keeps_worktree = r.state.mode == Mode::Worktree
                        && linked
                            .iter()
                            .any(|l| l.branch.as_deref() == Some(r.state.branch.as_str()));
                    !r.state.status.is_live() && !keeps_worktree
                }
            };
            if !finished {
                continue;
            }
            let path = entry.path();
            let plan = repair(
                "scratch_of_finished_task",
                Some(id.to_string()),
                format!("deleted the scratch directory '{}'", path.display()),
            );
            run_repair(&mut repairs, plan, dry_run, |_| {
                crate::confine::settle(repo, &id)?;
                worktree::delete_dir_shared(&path)?;
                Ok(true)
            });
        }
    }

    // 6. Stale lock files left by a killed process.
    for dir in [
        repo.common_dir().join("refs/tasks"),
        repo.common_dir()
            .join(format!("refs/heads/{}", settings.branch_prefix)),
    ] {
        for lock in stale_locks(&dir) {
            let plan = repair(
                "stale_lock",
                None,
                format!("deleted stale lock '{}'", lock.display()),
            );
            run_repair(&mut repairs, plan, dry_run, |_| {
                std::fs::remove_file(&lock).map_err(|e| {
                    Error::repo(format!("could not delete '{}'", lock.display()), e)
                })?;
                Ok(true)
            });
        }
    }
    // 6a. Gate checkouts a failed check left for inspection, or damaged (`merge`, issue 33).
    for found in crate::gate::clean(repo, None, true)? {
        let plan = repair(
            "gate_checkout",
            found.task.clone(),
            format!("deleted the gate checkout '{}'", found.path.display()),
        );
        run_repair(&mut repairs, plan, dry_run, |_| {
            crate::gate::clean_one(repo, &found.path)
        });
    }
    // 6b. The `.keep` of a pack whose command was killed before its refs named the pack.
    for keep in crate::git::pack::stale_keeps(repo, crate::recover::liveness::process_is_gone) {
        let plan = repair(
            "stale_pack_keep",
            None,
            format!("deleted '{}', left by a killed git-task", keep.display()),
        );
        run_repair(&mut repairs, plan, dry_run, |_| {
            std::fs::remove_file(&keep)
                .map_err(|e| Error::repo(format!("could not delete '{}'", keep.display()), e))?;
            Ok(true)
        });
    }
    // 7. Claims of tasks that are not live any more (a release that was interrupted).
    for task in crate::claims::stale(repo)? {
        if is_tampered(&task) {
            continue;
        }
        let plan = repair(
            "stale_claim",
            Some(task.to_string()),
            "dropped the claims of a task that is not live".into(),
        );
        run_repair(&mut repairs, plan, dry_run, |_| {
            crate::claims::release_all(repo, &task)?;
            Ok(true)
        });
    }
    // 7b. The claims ref changed outside git-task (a blob, garbage, rewound): git-task's own
    // copy is what counts; the ref is written again from it.
    if let Some(why) = crate::claims::problem(repo)? {
        let plan = repair(
            "claims_ref_changed",
            None,
            format!("{why}; wrote refs/tasks/_claims again from that copy"),
        );
        run_repair(&mut repairs, plan, dry_run, |_| {
            crate::claims::restore_ref(repo)?;
            Ok(true)
        });
    }
    Ok(Swept { repairs, tampered })
}

/// What `sweep` did, and the records it left alone because the ledger does not vouch for them.
pub struct Swept {
    /// The repairs, done or planned.
    pub repairs: Vec<Repair>,
    /// Tasks whose record is tampered: reported, never acted on.
    pub tampered: Vec<TaskId>,
}

/// Lock files older than a minute: no ref transaction holds a lock that long.
fn stale_locks(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(stale_locks(&path));
        } else if path.extension().is_some_and(|e| e == "lock") {
            let old = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age.as_secs() >= 60);
            if old {
                out.push(path);
            }
        }
    }
    out
}

/// The decisions of `sweep`: what the dry run plans is exactly what the sweep then does, and
/// nothing is planned for what the ledger vouches for or a user's branch.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{write, Fixture};

    /// The repairs as (problem, task, action), the plan's comparable part.
    fn plan(swept: &Swept) -> Vec<(&'static str, Option<String>, String)> {
        swept
            .repairs
            .iter()
            .map(|r| (r.problem, r.task.clone(), r.action.clone()))
            .collect()
    }

    /// A task branch (its first commit adds a contract) with no record: what a start killed
    /// before its record was written leaves.
    fn lone_branch(f: &Fixture, id: &str) {
        let dir = f.root.parent().unwrap().join(format!("lone-{id}"));
        let dir_s = dir.to_str().unwrap();
        f.git(&["worktree", "add", "-q", "-b", &format!("task/{id}"), dir_s]);
        write(&dir, ".task-contract.toml", "version = 1\n");
        write(&dir, "notes.txt", "work\n");
        f.git_in(&dir, &["add", ".task-contract.toml", "notes.txt"]);
        f.git_in(&dir, &["commit", "-q", "-m", "work"]);
        f.git(&["worktree", "remove", dir_s]);
    }

    #[test]
    fn a_healthy_repository_plans_nothing_and_moves_nothing() {
        let f = Fixture::new();
        f.start("ok", &["src/**"]);
        let before = f.refs();
        let swept = sweep(&f.repo(), &f.settings(), true).unwrap();
        assert!(plan(&swept).is_empty(), "{:?}", plan(&swept));
        assert!(swept.tampered.is_empty());
        let swept = sweep(&f.repo(), &f.settings(), false).unwrap();
        assert!(plan(&swept).is_empty());
        assert_eq!(f.refs(), before);
    }

    #[test]
    fn the_dry_run_plans_exactly_what_the_sweep_does() {
        let f = Fixture::new();
        lone_branch(&f, "lonely");
        let before = f.refs();
        let planned = plan(&sweep(&f.repo(), &f.settings(), true).unwrap());
        assert_eq!(f.refs(), before, "a dry run moves nothing");
        assert_eq!(planned.len(), 1, "{planned:?}");
        assert_eq!(planned[0].0, "branch_without_record");
        let done = sweep(&f.repo(), &f.settings(), false).unwrap();
        assert_eq!(plan(&done), planned);
        assert!(done.repairs[0].error.is_none());
        assert!(f.git(&["branch", "--list", "task/lonely"]).is_empty());
        assert_eq!(
            done.repairs[0].attempts.len(),
            1,
            "the branch's work is saved first"
        );
    }

    #[test]
    fn a_task_the_ledger_knows_is_reported_never_repaired() {
        let f = Fixture::new();
        f.start("known", &["src/**"]);
        // Deleting the record with plain git does not make the branch a stray one.
        f.git(&["update-ref", "-d", "refs/tasks/known/record"]);
        let before = f.refs();
        for dry_run in [true, false] {
            let swept = sweep(&f.repo(), &f.settings(), dry_run).unwrap();
            assert_eq!(swept.tampered, [TaskId::parse("known").unwrap()]);
            assert!(
                plan(&swept).iter().all(|r| r.1.as_deref() != Some("known")),
                "{:?}",
                plan(&swept)
            );
        }
        assert_eq!(f.refs(), before);
    }

    #[test]
    fn a_branch_checked_out_in_the_main_worktree_is_never_deleted() {
        let f = Fixture::new();
        lone_branch(&f, "mine");
        f.git(&["checkout", "-q", "task/mine"]);
        let before = f.refs();
        let swept = sweep(&f.repo(), &f.settings(), false).unwrap();
        assert!(
            plan(&swept).iter().all(|r| r.1.as_deref() != Some("mine")),
            "{:?}",
            plan(&swept)
        );
        assert_eq!(f.refs(), before);
    }
}
