//! Facts about a task for `list` and `status`: ahead/behind, changed files, dirty.
//!
//! Long on purpose: `list`'s speed (SPEC §10) comes from the caches, batches and threads kept
//! here beside the facts they speed up.

use crate::contract::file::CONTRACT_FILE;
use crate::error::Result;
use crate::git::diff::{self, ChangedPath};
use crate::git::refs::read::{RefReader, RefStats};
use crate::git::status::dirty::{DotGit, Memo, Place, Quick};
use crate::git::status::lstat::Anchors;
use crate::git::status::memos::{Known, Memos};
use crate::git::{objects, ObjectId, Repo};
use crate::record::cache::StateCache;
use crate::task::{layout, Mode, Status, TaskState};
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;

/// Where a task stands against its base.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Summary {
    /// The task's current commit (branch tip, or HEAD of the patch-mode worktree), if any.
    pub head: Option<String>,
    /// The base branch's current tip, if the task has a base branch.
    pub base_tip: Option<String>,
    /// The task's own commits not on the base branch (the contract commit is not counted).
    pub ahead: usize,
    /// Commits on the base branch not on the task branch.
    pub behind: usize,
    /// Paths changed between the base commit and the task's commit (the contract file excluded).
    pub changed_files: usize,
    /// Whether the worktree has uncommitted changes (`None` when not looked at or not there).
    pub dirty: Option<bool>,
    /// Whether the worktree directory exists.
    pub worktree_exists: bool,
}

impl Summary {
    /// A task `list` shows without counts: nothing of it could be (or may be) read.
    fn unknown(worktree_exists: bool) -> Summary {
        Summary {
            head: None,
            base_tip: None,
            ahead: 0,
            behind: 0,
            changed_files: 0,
            dirty: None,
            worktree_exists,
        }
    }
}

/// How hard to look at the worktree for uncommitted changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dirty {
    /// Staged, modified, deleted and untracked files: from stat data when possible, else a full status.
    Quick,
}

/// The refs summaries read, each looked up once.
///
/// Lookups are lazy: `status` reads three refs, not every ref of the
/// repository, and `list` reads each task's refs on the thread summarising it.
pub struct RefMap<'r> {
    reader: RefReader<'r>,
    seen: RefCell<HashMap<String, Option<ObjectId>>>,
}

impl<'r> RefMap<'r> {
    /// Looks refs up in `repo`.
    pub fn new(repo: &'r Repo) -> RefMap<'r> {
        RefMap {
            reader: RefReader::new(repo),
            seen: RefCell::new(HashMap::new()),
        }
    }

    /// Looks refs up in `repo`, loose ones known to `stats` by their stat data alone.
    fn with_stats(repo: &'r Repo, stats: &'r RefStats) -> RefMap<'r> {
        RefMap {
            reader: RefReader::with_stats(repo, stats),
            seen: RefCell::new(HashMap::new()),
        }
    }

    /// Returns the commit a ref points to, if the ref exists.
    pub fn get(&self, name: &str) -> Result<Option<ObjectId>> {
        if let Some(id) = self.seen.borrow().get(name) {
            return Ok(*id);
        }
        let id = self.reader.target(name)?;
        self.seen.borrow_mut().insert(name.to_owned(), id);
        Ok(id)
    }
}

/// Computes the summary of a task.
///
/// `cache` keeps flattened trees between calls, so summarising many tasks that share a base is cheap.
pub fn summarize(
    repo: &Repo,
    refs: &RefMap,
    s: &TaskState,
    dirty: Dirty,
    cache: &mut objects::FlatCache,
) -> Result<Summary> {
    Ok(summarize_known(repo, refs, s, dirty, cache, None, &Anchors::default())?.0)
}

/// [`summarize`], starting from what an earlier look knew of the task's worktree (`list` keeps
/// it in [`Memos`]), and returning what is known now.
fn summarize_known(
    repo: &Repo,
    refs: &RefMap,
    s: &TaskState,
    dirty: Dirty,
    cache: &mut objects::FlatCache,
    known: Option<&Known>,
    anchors: &Anchors,
) -> Result<(Summary, Option<Known>)> {
    let id = s.task_id();
    let dot_git = DotGit::read_known(Path::new(&s.worktree), known.map(Known::dot_git), anchors);
    let worktree_exists = dot_git.exists;
    let base_commit = s.base_commit_id(repo)?;
    let head = match s.mode {
        Mode::Worktree if s.status.is_live() => refs.get(&s.branch)?,
        Mode::Patch if s.status.is_live() && worktree_exists => {
            crate::git::worktree::head_of(Path::new(&s.worktree))
                .ok()
                .flatten()
        }
        _ => None,
    };
    let base_tip = match s.base_branch.as_deref() {
        Some(b) => refs.get(b)?,
        None => None,
    };
    let look = worktree_exists && s.status.is_live() && s.status != Status::Provisioning;
    // Patch mode: the task's changes are the files that differ from the snapshot's (SPEC §9).
    let snapshot = match s.mode {
        Mode::Patch if look => refs.get(&layout::snapshot_ref(&id))?,
        _ => None,
    };
    let patch = match snapshot {
        Some(snap) => Some(crate::snapshot::changes_since(
            repo,
            snap,
            Path::new(&s.worktree),
        )?),
        None => None,
    };
    let (mut ahead, mut behind, mut changed_files) = (0, 0, 0);
    if let (Some(head), Some(base)) = (head, base_commit) {
        let against = base_tip.unwrap_or(base);
        let fresh = s
            .contract_commit
            .as_deref()
            .and_then(|c| c.parse::<ObjectId>().ok())
            == Some(head)
            && against == base;
        if !fresh {
            ahead = objects::count_between(repo, against, head)?;
            if s.mode == Mode::Worktree {
                ahead = ahead.saturating_sub(1);
            }
            behind = objects::count_between(repo, head, against)?;
            changed_files = task_changes(repo, base, head)?.len();
        }
    }
    if let Some((_, changes)) = &patch {
        changed_files = changes.len();
    }
    let mut memo = None;
    let dirty = match dirty {
        _ if !look => None,
        Dirty::Quick if patch.is_some() => patch.as_ref().map(|(state, _)| state.is_dirty()),
        Dirty::Quick => match head {
            Some(h) if s.mode == Mode::Worktree => {
                let path = Path::new(&s.worktree);
                let known = known.and_then(Known::memo);
                let clean;
                let place = Place {
                    path,
                    git_dir: dot_git.git_dir(),
                    anchors,
                };
                (clean, memo) = clean_at(repo, place, h, cache, known)?;
                Some(!clean)
            }
            _ => Some(full_dirty(s)?),
        },
    };
    let known = Known::new(&dot_git, memo);
    let summary = Summary {
        head: head.map(|h| h.to_string()),
        base_tip: base_tip.map(|t| t.to_string()),
        ahead,
        behind,
        changed_files,
        dirty,
        worktree_exists,
    };
    Ok((summary, known))
}

/// Reads and summarises every task (live ones only unless `all`), sorted by id.
///
/// The work is spread over the available cores, each with its own repository
/// handle, handing out a few tasks at a time so that no core idles while another
/// still has a long list; reading a thousand records and worktrees is what `list`
/// spends its time on (SPEC §10: 1,000 tasks in 50 ms). States come from the state
/// cache ([`crate::record::cache`]), what is known of each worktree from [`Memos`] and
/// unchanged loose refs from [`RefStats`] when they have them, and all three are brought
/// up to date.
///
/// `alongside` runs on another core once the worktrees are being looked at (`list` reads the
/// COLLIDES cache there); its result is `None` only if that thread panicked.
pub fn list<T: Send>(
    repo: &Repo,
    all: bool,
    alongside: impl FnOnce() -> T + Send,
) -> (Result<Vec<(TaskState, Summary)>>, Option<T>) {
    // The three caches are read side by side.
    let common = repo.common_dir();
    let (ids, cache, (memos, ref_stats)) = std::thread::scope(|scope| {
        let others = scope.spawn(|| (Memos::load(common), RefStats::load(common)));
        let ids = task_ids(repo);
        let cache = StateCache::load(repo);
        let others = others
            .join()
            .unwrap_or_else(|_| (Memos::load(common), RefStats::load(common)));
        (ids, cache, others)
    });
    let ids = match ids {
        Ok(ids) => ids,
        Err(e) => return (Err(e), None),
    };
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(8)
        .min(ids.len().div_ceil(LIST_BATCH))
        .max(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    // Takes batches of tasks until none are left; each batch keeps its place in `ids`.
    let work = |repo: &Repo| -> Result<Vec<Batch>> {
        let mut worker = Worker {
            refs: RefMap::with_stats(repo, &ref_stats),
            flat: objects::FlatCache::new(),
            anchors: Anchors::default(),
        };
        worker.anchors.hold(common);
        let mut done = Vec::new();
        loop {
            let Some((start, batch)) = take_batch(&next, &ids, threads) else {
                return Ok(done);
            };
            let mut out = Vec::with_capacity(batch.len());
            for id in batch {
                if let Some(listed) = list_one(repo, &mut worker, &cache, &memos, id, all)? {
                    out.push(listed);
                }
            }
            done.push((start, out));
        }
    };
    let (parts, side) = std::thread::scope(|scope| {
        let mut alongside = Some(alongside);
        let handles: Vec<_> = (1..threads)
            .map(|_| {
                let handle = repo.for_thread();
                let work = &work;
                let side = alongside.take();
                scope.spawn(move || (side.map(|f| f()), work(&handle)))
            })
            .collect();
        let mut side = alongside.map(|f| f());
        let mut parts = vec![work(repo)];
        for h in handles {
            match h.join() {
                Ok((done, part)) => {
                    side = side.or(done);
                    parts.push(part);
                }
                Err(_) => parts.push(Err(crate::Error::repo_msg("a list worker panicked"))),
            }
        }
        (parts, side)
    });
    let listed = gather(parts, &cache, &memos, &ref_stats);
    (listed, side)
}

/// Puts the workers' batches back in id order, brings the caches up to date, and returns what
/// `list` shows.
fn gather(
    parts: Vec<Result<Vec<Batch>>>,
    cache: &StateCache,
    memos: &Memos,
    ref_stats: &RefStats,
) -> Result<Vec<(TaskState, Summary)>> {
    let mut batches = Vec::new();
    for part in parts {
        batches.extend(part?);
    }
    batches.sort_unstable_by_key(|(start, _)| *start);
    let listed: Vec<Listed> = batches.into_iter().flat_map(|(_, b)| b).collect();
    let trusted = || listed.iter().filter(|l| l.state.status != Status::Tampered);
    let tips: Vec<ObjectId> = trusted().map(|l| l.tip).collect();
    if trusted().any(|l| l.read) || !cache.holds_exactly(&tips) {
        cache.store(trusted().map(|l| (l.tip, &l.state)));
    }
    let knowing = listed.iter().filter(|l| l.known.is_some()).count();
    if listed.iter().any(|l| l.known_changed) || memos.count() != knowing {
        let known: Vec<(std::path::PathBuf, Known)> = listed
            .iter()
            .filter_map(|l| Some((l.state.worktree.clone().into(), l.known.clone()?)))
            .collect();
        memos.store(&known);
    }
    ref_stats.store();
    Ok(listed
        .into_iter()
        .filter_map(|l| Some((l.state, l.summary?)))
        .collect())
}

/// A batch of listed tasks with the place of its first in the sorted ids.
type Batch = (usize, Vec<Listed>);

/// Tasks a `list` worker takes at most at a time.
const LIST_BATCH: usize = 16;

/// The next batch of `ids` for one of `threads` workers, and where it starts: a share of what
/// is left, so that batches get smaller towards the end and the cores finish together.
fn take_batch<'a, T>(
    next: &std::sync::atomic::AtomicUsize,
    ids: &'a [T],
    threads: usize,
) -> Option<(usize, &'a [T])> {
    use std::sync::atomic::Ordering::Relaxed;
    let mut start = next.load(Relaxed);
    loop {
        let left = ids.len().checked_sub(start).filter(|n| *n > 0)?;
        let size = (left / (4 * threads)).clamp(1, LIST_BATCH);
        match next.compare_exchange_weak(start, start + size, Relaxed, Relaxed) {
            Ok(_) => return Some((start, &ids[start..start + size])),
            Err(now) => start = now,
        }
    }
}

/// What a `list` worker keeps from one task to the next.
struct Worker<'r> {
    refs: RefMap<'r>,
    flat: objects::FlatCache,
    /// Handles on the common git dir and the directories holding the task worktrees.
    anchors: Anchors,
}

/// Reads one task's state (from the cache when it has it) and summarises it; `None` when the
/// task has no record.
fn list_one(
    repo: &Repo,
    worker: &mut Worker,
    cache: &StateCache,
    memos: &Memos,
    id: &crate::task::TaskId,
    all: bool,
) -> Result<Option<Listed>> {
    let refs = &worker.refs;
    let tip = refs.get(&layout::record_ref(id))?;
    // A record the ledger does not vouch for is listed as tampered, and nothing of it is read.
    if crate::ledger::records::verify(repo, id.as_str(), tip).is_err() {
        return Ok(Some(Listed::tampered(id, tip)));
    }
    let Some(tip) = tip else {
        return Ok(None);
    };
    let (mut state, read) = match cache.get(tip) {
        Some(state) => (state, false),
        None => match crate::record::read_state(repo, tip) {
            Ok(state) => (state, true),
            // git-task never writes a record that does not read: listed as tampered, as
            // `record::load` refuses it.
            Err(_) => return Ok(Some(Listed::tampered(id, Some(tip)))),
        },
    };
    // This machine's worktree, never the one of the machine that wrote the last event.
    crate::record::place::resolve(repo, &mut state);
    let (summary, known, known_changed) =
        if !all && matches!(state.status, Status::Merged | Status::Removed) {
            (None, None, false)
        } else {
            let worktree = Path::new(&state.worktree);
            if let Some(parent) = worktree.parent() {
                worker.anchors.hold(parent);
            }
            let before = memos.get(worktree);
            // One task whose content cannot be summarised (a tree deeper than git allows) is
            // listed without its counts; the others are listed as usual.
            match summarize_known(
                repo,
                &worker.refs,
                &state,
                Dirty::Quick,
                &mut worker.flat,
                before.as_ref(),
                &worker.anchors,
            ) {
                Ok((summary, now)) => {
                    let changed = now.is_some() && now != before;
                    (Some(summary), now, changed)
                }
                Err(_) => (Some(Summary::unknown(worktree.exists())), None, false),
            }
        };
    Ok(Some(Listed {
        tip,
        state,
        read,
        summary,
        known,
        known_changed,
    }))
}

/// Every task id with a record ref, sorted, found without reading a ref:
/// a thousand records are read on the threads that summarise them.
fn task_ids(repo: &Repo) -> Result<Vec<crate::task::TaskId>> {
    let mut ids: Vec<crate::task::TaskId> = repo
        .ref_children(layout::TASKS_NS)?
        .iter()
        .filter_map(|name| crate::task::TaskId::parse(name).ok())
        .collect();
    // Ids the ledger knows whose refs are all gone: a deleted record is listed as tampered.
    ids.extend(crate::ledger::records::known_ids(repo));
    ids.sort();
    ids.dedup();
    Ok(ids)
}

impl Listed {
    /// A task whose record did not verify: its id and nothing else.
    fn tampered(id: &crate::task::TaskId, tip: Option<ObjectId>) -> Listed {
        Listed {
            tip: tip.unwrap_or_else(crate::git::null_id),
            state: TaskState::tampered(id),
            read: false,
            summary: Some(Summary::unknown(false)),
            known: None,
            known_changed: false,
        }
    }
}

/// One task as `list` found it.
struct Listed {
    tip: ObjectId,
    state: TaskState,
    /// Whether the state was read from the record commit (not in the cache).
    read: bool,
    /// `None` for a finished task `list` does not show.
    summary: Option<Summary>,
    /// What is known of its worktree now, for [`Memos`].
    known: Option<Known>,
    /// Whether that differs from what [`Memos`] held.
    known_changed: bool,
}

/// Returns whether the worktree at `path`, whose HEAD is `head`, has nothing uncommitted
/// (staged, modified, deleted or untracked), as cheaply as it can be told.
///
/// The quick look ([`crate::git::status::dirty`]) answers from stat data alone while nothing
/// changed since the last clean answer; otherwise a full status decides, and a clean
/// answer is remembered for the next look. `list` and the merge gate both rely on it.
pub fn worktree_is_clean(
    repo: &Repo,
    path: &Path,
    head: ObjectId,
    cache: &mut objects::FlatCache,
) -> Result<bool> {
    let dot_git = DotGit::read(path);
    let place = Place {
        path,
        git_dir: dot_git.git_dir(),
        anchors: &Anchors::default(),
    };
    Ok(clean_at(repo, place, head, cache, None)?.0)
}

/// [`worktree_is_clean`] for a worktree whose `.git` was read already.
/// With the memo that holds now, when clean and there is one; `known` is a memo the
/// worktree had before, tried first.
fn clean_at(
    repo: &Repo,
    place: Place<'_>,
    head: ObjectId,
    cache: &mut objects::FlatCache,
    known: Option<&Memo>,
) -> Result<(bool, Option<Memo>)> {
    let mut flat = |t| objects::flatten_tree(repo, t, cache).ok();
    let path = place.path;
    match crate::git::status::dirty::quick_check(
        place,
        head,
        repo.ignore_files(),
        known,
        || objects::commit_tree(repo, head).ok(),
        &mut flat,
    ) {
        Quick::Dirty => Ok((false, None)),
        Quick::Clean(memo) => Ok((true, memo)),
        Quick::NeedsFull(pending) => {
            let wt = crate::git::worktree::open_at(path)?;
            let clean = match crate::git::status::is_clean_fast(&wt)? {
                Some(clean) => clean,
                None => !crate::snapshot::read(&wt)?.is_dirty(),
            };
            let memo = match (clean, pending) {
                (true, Some(p)) => Some(p.remember()),
                _ => None,
            };
            Ok((clean, memo))
        }
    }
}

fn full_dirty(s: &TaskState) -> Result<bool> {
    let wt = crate::git::worktree::open_at(Path::new(&s.worktree))?;
    Ok(crate::snapshot::read(&wt)?.is_dirty())
}

/// Returns the paths a task changed between `base` and `head`, without the contract file.
pub fn task_changes(repo: &Repo, base: ObjectId, head: ObjectId) -> Result<Vec<ChangedPath>> {
    let old = objects::commit_tree(repo, base)?;
    let new = objects::commit_tree(repo, head)?;
    let mut changes = diff::tree_to_tree(repo, old, new)?;
    changes.retain(|c| c.path != CONTRACT_FILE);
    Ok(changes)
}

#[cfg(test)]
mod tests {
    use super::{take_batch, LIST_BATCH};
    use std::sync::atomic::AtomicUsize;

    /// Batches cover every id once, in order, never more than `LIST_BATCH`, smaller at the end.
    #[test]
    fn batches_cover_every_id_once() {
        for len in [0, 1, 7, 100, 1000] {
            let ids: Vec<usize> = (0..len).collect();
            let next = AtomicUsize::new(0);
            let mut seen = Vec::new();
            let mut sizes = Vec::new();
            while let Some((start, batch)) = take_batch(&next, &ids, 2) {
                assert_eq!(batch.first(), Some(&start));
                seen.extend_from_slice(batch);
                sizes.push(batch.len());
            }
            assert_eq!(seen, ids);
            assert!(sizes.iter().all(|n| (1..=LIST_BATCH).contains(n)));
            if len == 1000 {
                assert_eq!((sizes[0], *sizes.last().unwrap()), (LIST_BATCH, 1));
            }
        }
    }
}
