//! Undo without losing anything: `revert` (all, paths, one checkpoint, back to
//! a checkpoint) and `reset` (back to the base, or onto a new one).
//!
//! Every operation first computes the target state (index tree, file tree
//! and, in patch mode, HEAD), refuses before any change when it cannot be
//! reached (a conflict, something in the way), then saves the current state
//! as `refs/tasks/<id>/attempts/<n>` (files incl. untracked as the tree,
//! parent 1 HEAD, parent 2 a commit of the index) before writing anything
//! (SPEC §2.2). Nothing discarded means nothing saved and nothing written.
//!
//! In worktree mode `revert` changes files and index only (the task branch
//! keeps its history; the undo shows as staged changes), and `reset` moves
//! the task branch back to a fresh contract commit on the base. In patch mode
//! reverting everything restores the snapshot exactly: HEAD, index, files.
//! The patch-mode reset is `reset.rs`.
//!
//! Long on purpose: the target of each kind of revert and the one carry-out that saves,
//! writes and moves HEAD are one flow, read top to bottom.

mod reset;
pub use reset::reset_patch;

use crate::contract::file::CONTRACT_FILE;
use crate::error::{Error, Result};
use crate::git::journal::Journal;
use crate::git::objects::{self, TreeEdit};
use crate::git::refs::Update;
use crate::git::EntryKind;
use crate::git::{checkout::inplace, diff, diff::unified, merge, ObjectId, Repo};
use crate::patch;
use crate::record::{self, event, Event, Record};
use crate::snapshot;
use crate::task::Mode;
use crate::work::{self, Work};
use std::path::Path;

/// What to undo.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum What {
    /// Everything, back to the base (worktree mode) or the snapshot (patch mode).
    All,
    /// These files or directories, back to their content at the start.
    Paths(Vec<String>),
    /// Only what checkpoint N changed, keeping later work where it does not overlap.
    Checkpoint(u32),
    /// Back to the state of checkpoint N.
    To(u32),
}

impl What {
    fn describe(&self) -> String {
        match self {
            What::All => "everything".into(),
            What::Paths(p) => format!("paths {}", p.join(", ")),
            What::Checkpoint(n) => format!("checkpoint {n}"),
            What::To(n) => format!("back to checkpoint {n}"),
        }
    }
}

pub use crate::attempt::SavedAttempt;

/// What an undo did.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Undone {
    /// The attempt holding what was discarded (`None`: nothing was discarded).
    pub attempt: Option<SavedAttempt>,
    /// Files written or deleted.
    pub files: Vec<String>,
    /// Where the discarded work was written as a patch, if asked.
    pub patch_file: Option<String>,
    /// Whether HEAD (patch mode) or the task branch (reset) moved.
    pub moved_head: bool,
    /// Patch mode: commits since the start that are not the task's own, which HEAD kept (then only
    /// the task's paths were put back).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kept_commits: Vec<String>,
}

/// How an undo ended.
pub enum Outcome {
    /// Done (or nothing to do).
    Done(Undone),
    /// `--checkpoint N` overlaps later work on these paths; nothing changed.
    Conflict(Vec<String>),
}

/// The state an undo goes to.
pub(super) struct Target {
    index: ObjectId,
    files: ObjectId,
    /// Patch mode: the commit HEAD goes back to.
    head: Option<ObjectId>,
}

/// Undoes `what` in the task's worktree, saving the current state first.
pub fn revert(
    repo: &Repo,
    record: &Record,
    what: &What,
    patch_file: Option<&Path>,
) -> Result<Outcome> {
    if let Some(path) = patch_file {
        check_patch_file(path)?;
    }
    let w = work::open(repo, record)?;
    let (target, kept) = match target(repo, record, &w, what)? {
        Ok(t) => t,
        Err(conflicts) => return Ok(Outcome::Conflict(conflicts)),
    };
    let mut done = carry_out(
        repo,
        record,
        &w,
        &target,
        patch_file,
        &format!("revert {}", what.describe()),
    )?;
    done.kept_commits = kept.iter().map(|c| c.to_string()).collect();
    if done.attempt.is_some() || !done.files.is_empty() {
        let details = Event::Reverted(event::Reverted {
            what: what.describe(),
            attempt: done.attempt.as_ref().map(|a| a.name.clone()),
            files: done.files.clone(),
        });
        record::note(repo, &record.state.task_id(), details)?;
    }
    Ok(Outcome::Done(done))
}

/// Refuses a `--patch-file` that cannot be written (a directory, or in a directory that does
/// not exist) before anything is saved or reverted (exit 2).
fn check_patch_file(path: &Path) -> Result<()> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let problem = if path.is_dir() {
        Some("it is a directory")
    } else if !parent.is_dir() {
        Some("its directory does not exist")
    } else {
        None
    };
    match problem {
        Some(why) => Err(Error::input(format!(
            "cannot write the patch file '{}': {why}",
            path.display()
        ))
        .hint("name a file in an existing directory, e.g. --patch-file attempt.patch")),
        None => Ok(()),
    }
}

/// Patch mode: the commits HEAD keeps because they are not the task's own.
type Kept = Vec<ObjectId>;

/// Returns the state `what` goes to, with the commits HEAD keeps because they are not the task's
/// own (patch mode), or the paths of a `--checkpoint` conflict.
fn target(
    repo: &Repo,
    record: &Record,
    w: &Work,
    what: &What,
) -> Result<std::result::Result<(Target, Kept), Vec<String>>> {
    let id = record.state.task_id();
    let cur = &w.state;
    let target = match what {
        What::All => match &w.snapshot {
            Some(s) => {
                // Off the task's branch, HEAD cannot go back: `carry_out` refuses and says why.
                let on_branch =
                    w.wt.head_branch()?.unwrap_or_else(|| "HEAD".into()) == record.state.branch;
                let behind = match on_branch {
                    true => patch::left_behind(&w.wt, &record.state.branch, cur.head, s.head)?,
                    false => patch::LeftBehind::default(),
                };
                if behind.foreign.is_empty() {
                    Target {
                        index: s.index_tree,
                        files: s.worktree_tree,
                        head: Some(s.head),
                    }
                } else {
                    return Ok(Ok(task_paths_target(repo, record, w, s, &behind, None)?));
                }
            }
            None => {
                let files = with_contract_file(repo, w.origin_tree, cur.worktree_tree)?;
                Target {
                    index: files,
                    files,
                    head: None,
                }
            }
        },
        What::Paths(paths) => {
            let (origin_files, origin_index) = match &w.snapshot {
                Some(s) => (s.worktree_tree, s.index_tree),
                None => (w.origin_tree, w.origin_tree),
            };
            let paths: Vec<String> = paths.iter().map(|p| normalize_path(p)).collect();
            // A renamed file goes back under its old name: its new path and its old one.
            let paths =
                with_rename_sources(repo, origin_files, cur.worktree_tree, paths, w.skip())?;
            let file_edits =
                restore_edits(repo, cur.worktree_tree, origin_files, &paths, w.skip())?;
            let index_edits = restore_edits(repo, cur.index_tree, origin_index, &paths, w.skip())?;
            if file_edits.is_empty()
                && index_edits.is_empty()
                && !paths_exist(
                    repo,
                    &[cur.worktree_tree, origin_files, cur.index_tree],
                    &paths,
                )?
            {
                return Err(Error::input(format!(
                    "no such path in task '{id}': {}",
                    paths.join(", ")
                ))
                .hint(format!(
                    "'git task changes {id}' lists the files the task changed"
                )));
            }
            if let Some(s) = &w.snapshot {
                // Putting a path back to the snapshot must not undo commits that are not the task's.
                let behind = patch::left_behind(&w.wt, &record.state.branch, cur.head, s.head)?;
                if !behind.foreign.is_empty() {
                    return Ok(Ok(task_paths_target(
                        repo,
                        record,
                        w,
                        s,
                        &behind,
                        Some(&paths),
                    )?));
                }
            }
            Target {
                index: apply_edits(repo, cur.index_tree, &index_edits)?,
                files: apply_edits(repo, cur.worktree_tree, &file_edits)?,
                head: None,
            }
        }
        What::To(n) => {
            let (cp, _) = work::checkpoint(repo, &id, *n)?;
            match w.mode {
                Mode::Patch => {
                    let parsed = crate::snapshot::parse_snapshot(repo, cp.commit)?;
                    Target {
                        index: parsed.index_tree,
                        files: cp.tree,
                        head: None,
                    }
                }
                Mode::Worktree => Target {
                    index: cp.tree,
                    files: cp.tree,
                    head: None,
                },
            }
        }
        What::Checkpoint(n) => {
            let (cp, all) = work::checkpoint(repo, &id, *n)?;
            let before = all
                .iter()
                .rev()
                .find(|c| c.n < *n)
                .map(|c| c.tree)
                .unwrap_or_else(|| w.start_tree());
            // Undoing a checkpoint never touches the task's contract file.
            let before = match w.mode {
                Mode::Worktree => with_contract_file(repo, before, cp.tree)?,
                Mode::Patch => before,
            };
            // The labels would only name the sides of conflict markers, and a merge with a
            // conflict is refused whole.
            let labels = ["checkpoint", "worktree", "before the checkpoint"];
            let files = match merge::merge_trees(repo, cp.tree, cur.worktree_tree, before, labels)?
            {
                merge::TreeMerge {
                    tree: Some(tree), ..
                } => tree,
                merge::TreeMerge { conflicts, .. } => return Ok(Err(conflicts)),
            };
            // Staged entries follow their file where the index agreed with the file before.
            let index = follow_index(repo, cur.index_tree, cur.worktree_tree, files)?;
            Target {
                index,
                files,
                head: None,
            }
        }
    };
    Ok(Ok((target, Vec::new())))
}

/// Patch mode, when commits that are not the task's own reached HEAD since the start (another
/// task's merge, a commit from elsewhere): HEAD stays, and only the task's paths (all, or those
/// under `paths`) are put back (SPEC §9).
///
/// A path that differs from the snapshot goes back to the snapshot's file and index entry when
/// no foreign commit changed it. Where a foreign commit changed it and the task did not (no own
/// commit touched it, no pre-start edit there), it goes back to HEAD's entry: that undoes the
/// task's uncommitted edits and keeps the foreign work. Where both changed it, nothing can be
/// put back without undoing someone else's work: the revert is refused before anything changes.
fn task_paths_target(
    repo: &Repo,
    record: &Record,
    w: &Work,
    s: &crate::snapshot::Snapshot,
    behind: &patch::LeftBehind,
    paths: Option<&[String]>,
) -> Result<(Target, Kept)> {
    let cur = &w.state;
    let foreign = patch::paths_changed_by(repo, &behind.foreign)?;
    let own = patch::paths_changed_by(repo, &behind.own)?;
    let start_head = objects::commit_tree(repo, s.head)?;
    let mut candidates: Vec<String> = diff::tree_to_tree(repo, cur.worktree_tree, s.worktree_tree)?
        .into_iter()
        .chain(diff::tree_to_tree(repo, cur.index_tree, s.index_tree)?)
        .map(|c| c.path)
        .filter(|p| paths.is_none_or(|sel| unified::selected(p, sel)))
        .collect();
    candidates.sort();
    candidates.dedup();
    let (mut file_edits, mut index_edits, mut conflicts): (Edits, Edits, Vec<String>) =
        Default::default();
    for path in candidates {
        if !foreign.contains(&path) {
            file_edits.push((path.clone(), patch::entry_in(repo, s.worktree_tree, &path)?));
            index_edits.push((path.clone(), patch::entry_in(repo, s.index_tree, &path)?));
            continue;
        }
        let at_start = patch::entry_in(repo, start_head, &path)?;
        let edited_before = patch::entry_in(repo, s.worktree_tree, &path)? != at_start
            || patch::entry_in(repo, s.index_tree, &path)? != at_start;
        if own.contains(&path) || edited_before {
            conflicts.push(path);
            continue;
        }
        let at_head = patch::entry_in(repo, cur.head_tree, &path)?;
        file_edits.push((path.clone(), at_head));
        index_edits.push((path, at_head));
    }
    let kept: Vec<String> = behind.foreign.iter().map(|c| c.to_string()).collect();
    if !conflicts.is_empty() {
        let short: Vec<&str> = kept.iter().map(|c| &c[..12.min(c.len())]).collect();
        let quoted: Vec<String> = conflicts
            .iter()
            .map(|p| format!("'{}'", p.escape_debug()))
            .collect();
        return Err(Error::negative(format!(
            "cannot revert {}: the task changed it, and so did {} commit(s) that are not the task's own ({})",
            quoted.join(", "),
            kept.len(),
            short.join(", ")
        ))
        .hint("nothing was changed; HEAD never goes back past another task's merge or a commit made elsewhere")
        .hint(format!(
            "put back the other files with 'git task revert {} --path <file>', and edit these by hand",
            record.state.id
        )));
    }
    let target = Target {
        index: apply_edits(repo, cur.index_tree, &index_edits)?,
        files: apply_edits(repo, cur.worktree_tree, &file_edits)?,
        head: None,
    };
    Ok((target, behind.foreign.clone()))
}

/// Saves the attempt, writes the patch file, moves HEAD back (patch mode) and writes files and index.
pub(super) fn carry_out(
    repo: &Repo,
    record: &Record,
    w: &Work,
    target: &Target,
    patch_file: Option<&Path>,
    why: &str,
) -> Result<Undone> {
    let id = record.state.task_id();
    let cur = &w.state;
    let move_head = target.head.filter(|h| Some(*h) != cur.head);
    if let Some(h) = move_head {
        check_head_movable(&w.wt, record, h)?;
    }
    let discards =
        cur.worktree_tree != target.files || cur.index_tree != target.index || move_head.is_some();
    if !discards {
        return Ok(Undone {
            attempt: None,
            files: Vec::new(),
            patch_file: None,
            moved_head: false,
            kept_commits: Vec::new(),
        });
    }
    inplace::check(&w.wt, cur.worktree_tree, target.files)?;
    let attempt = save_state(repo, &id, &w.wt, &w.state, why)?;
    let patch_file = match patch_file {
        Some(path) => {
            let text = unified::trees(repo, target.files, cur.worktree_tree, &[], w.skip())?;
            std::fs::write(path, text)
                .map_err(|e| Error::repo(format!("could not write '{}'", path.display()), e))?;
            Some(crate::git::absolute(path).display().to_string())
        }
        None => None,
    };
    let files = write_target(repo, record, w, target)?;
    Ok(Undone {
        attempt: Some(attempt),
        files,
        patch_file,
        moved_head: move_head.is_some(),
        kept_commits: Vec::new(),
    })
}

/// Rewrites the task's files and index in place to `target` (journaled, so a kill is finished
/// by the next command), then moves HEAD where the target says (patch mode); returns the files
/// written or deleted. The current state is saved as an attempt before this is called.
pub(super) fn write_target(
    repo: &Repo,
    record: &Record,
    w: &Work,
    target: &Target,
) -> Result<Vec<String>> {
    let cur = &w.state;
    let _journal = Journal::in_place(
        repo,
        &record.state.id,
        w.wt.require_workdir()?,
        Some(target.files),
        target.index,
        None,
    )?;
    let files = inplace::apply(&w.wt, cur.worktree_tree, target.files, target.index)?;
    if let Some(h) = target.head.filter(|h| Some(*h) != cur.head) {
        move_head_to(&w.wt, record, cur.head, h)?;
    }
    Ok(files)
}

/// Saves the state of the task's worktree `wt` as the task's next attempt ([`crate::attempt`]:
/// files as the tree, parents HEAD and a commit of the index).
pub fn save_state(
    repo: &Repo,
    id: &crate::task::TaskId,
    wt: &Repo,
    state: &snapshot::WorktreeState,
    why: &str,
) -> Result<SavedAttempt> {
    let workdir = wt.workdir().map(Path::to_path_buf).unwrap_or_default();
    let saved = crate::attempt::Saved {
        why,
        worktree: Some((&workdir, state)),
        always: true,
        ..Default::default()
    };
    Ok(crate::attempt::Attempt::save(repo, id, &saved)?
        .expect("an attempt with `always` and a worktree is always written"))
}

/// Refuses (before anything changes) when HEAD is no longer on the branch the patch-mode task
/// started on, or when moving it back to `to` would leave behind commits that are not the task's
/// own (SPEC §9: another task's merge, a commit made on the branch from elsewhere).
pub(super) fn check_head_movable(wt: &Repo, record: &Record, to: ObjectId) -> Result<()> {
    let now = wt.head_branch()?.unwrap_or_else(|| "HEAD".into());
    if now != record.state.branch {
        let short = |b: &str| crate::git::refs::short_name(b).to_owned();
        return Err(Error::input(format!(
            "HEAD is on '{}', but task '{}' started on '{}'",
            short(&now),
            record.state.id,
            short(&record.state.branch)
        ))
        .hint(format!(
            "check out '{}' again, then run the command again",
            short(&record.state.branch)
        )));
    }
    let behind = patch::left_behind(wt, &now, wt.head_commit()?, to)?;
    if let Some(first) = behind.foreign.first() {
        return Err(Error::input(format!(
            "moving HEAD back to {} would drop {} commit(s) that task '{}' did not make, e.g. {first}",
            &to.to_string()[..12],
            behind.foreign.len(),
            record.state.id
        ))
        .hint("another task's merge or a commit made elsewhere landed on the branch since the start; nothing was changed")
        .hint(format!(
            "put the task's files back instead: git task revert {}",
            record.state.id
        )));
    }
    Ok(())
}

pub(super) fn move_head_to(
    wt: &Repo,
    record: &Record,
    from: Option<ObjectId>,
    to: ObjectId,
) -> Result<()> {
    let name = record.state.branch.clone();
    let msg = format!("git-task: revert {}", record.state.id);
    let update = match from {
        Some(old) => Update::update(name, old, to, msg),
        None => Update::create(name, to, msg),
    };
    crate::ledger::commit(wt, vec![update])
}

/// Returns `files` with the `.task-contract.toml` entry of `current` (worktree mode keeps its contract file).
fn with_contract_file(repo: &Repo, files: ObjectId, current: ObjectId) -> Result<ObjectId> {
    let tree = objects::Tree::read(repo, current)?;
    match tree.top_entry(CONTRACT_FILE) {
        Some((kind, id)) => {
            objects::edit_tree(repo, files, &[TreeEdit::Upsert(CONTRACT_FILE, kind, id)])
        }
        None => Ok(files),
    }
}

/// `paths` and, for each file under them that the task renamed (paired as `git diff -M` pairs
/// them, from `origin` to `now`), its old path: reverting the new name restores the old one.
fn with_rename_sources(
    repo: &Repo,
    origin: ObjectId,
    now: ObjectId,
    mut paths: Vec<String>,
    skip: &[&str],
) -> Result<Vec<String>> {
    let pairs = unified::pairs(
        repo,
        origin,
        now,
        &[],
        skip,
        Some(crate::git::diff::similarity::DEFAULT_SCORE),
    )?;
    let mut sources = Vec::new();
    for p in &pairs {
        if let Some((from, _)) = &p.renamed_from {
            if unified::selected(&p.change.path, &paths) && !unified::selected(from, &paths) {
                sources.push(from.clone());
            }
        }
    }
    paths.extend(sources);
    Ok(paths)
}

fn normalize_path(p: &str) -> String {
    let p = p.trim_start_matches("./").trim_end_matches('/');
    p.to_owned()
}

type Edits = Vec<(String, Option<(EntryKind, ObjectId)>)>;

/// Edits that make the paths under `paths` in `cur` what they are in `origin`.
fn restore_edits(
    repo: &Repo,
    cur: ObjectId,
    origin: ObjectId,
    paths: &[String],
    skip: &[&str],
) -> Result<Edits> {
    Ok(diff::tree_to_tree(repo, cur, origin)?
        .into_iter()
        .filter(|c| unified::selected(&c.path, paths) && !skip.contains(&c.path.as_str()))
        .map(|c| (c.path, c.new))
        .collect())
}

fn apply_edits(repo: &Repo, tree: ObjectId, edits: &Edits) -> Result<ObjectId> {
    if edits.is_empty() {
        return Ok(tree);
    }
    let edits: Vec<TreeEdit<'_>> = edits
        .iter()
        .map(|(p, e)| match e {
            Some((k, id)) => TreeEdit::Upsert(p.as_str(), *k, *id),
            None => TreeEdit::Remove(p.as_str()),
        })
        .collect();
    objects::edit_tree(repo, tree, &edits)
}

fn paths_exist(repo: &Repo, trees: &[ObjectId], paths: &[String]) -> Result<bool> {
    for p in paths {
        let mut found = false;
        for t in trees {
            if objects::Tree::read(repo, *t)?.entry(p)?.is_some() {
                found = true;
                break;
            }
        }
        if !found {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Returns `index` with each entry that equalled its file in `files_before` set to that file in `files_after`.
fn follow_index(
    repo: &Repo,
    index: ObjectId,
    files_before: ObjectId,
    files_after: ObjectId,
) -> Result<ObjectId> {
    let out_of_sync: std::collections::BTreeSet<String> =
        diff::tree_to_tree(repo, index, files_before)?
            .into_iter()
            .map(|c| c.path)
            .collect();
    let edits: Edits = diff::tree_to_tree(repo, files_before, files_after)?
        .into_iter()
        .filter(|c| !out_of_sync.contains(&c.path))
        .map(|c| (c.path, c.new))
        .collect();
    apply_edits(repo, index, &edits)
}

#[cfg(test)]
mod tests {
    #[test]
    fn paths_are_normalized() {
        assert_eq!(super::normalize_path("./src/"), "src");
        assert_eq!(super::normalize_path("a/b"), "a/b");
    }
}
