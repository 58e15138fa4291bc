//! The overlaps index: what `start`'s overlap warning and `merge`'s post-merge forecast need of
//! each live task, so that they look closely only at the tasks that can meet the new contract or
//! the landed paths, and their cost stays flat in the number of live tasks (issue 33).
//!
//! Per task, under its **record tip** (a record commit never changes, so an entry is good for as
//! long as the tip is the record's; a moved tip makes it stale, and it is made again from the
//! record, read and verified as every command reads it):
//! - whether it is active, in worktree mode, its base and branch;
//! - the [`hull`](crate::contract::overlap::hull) of its frozen contract's `allowed` rules (every
//!   path the task may change is at or below one of these prefixes; policies and claims only
//!   narrow that), and whether its frozen contract and policy compile.
//!
//! Per task, under its **branch tip** and the base tips it was looked at against: the tree the
//! trial merge onto that base takes as the common ancestor, and the paths the task changed since
//! it (a merge's new squash commits leave the merge base of every other task unchanged, so the
//! entry is good for the tip before and after a landing: such a landing is kept once, as a pair
//! of tips in `<common dir>/git-task/overlaps-landings`, not in each entry).
//!
//! File: `<common dir>/git-task/overlaps-index`, JSON. It is advice, never a gate decision: a
//! missing or unreadable file only costs computing again, and every task it lets through is
//! judged as before from its verified record. An entry can only let a task be skipped whose
//! record tip (or branch tip) is the one it was made from.
//!
//! It is written back only when something worth keeping changed (an active task's entry, a
//! task's work computed again): with a thousand live tasks a command that merely notices a
//! task gone, or a task no longer active, does not rewrite it; those ride along with the next
//! write (or once they are many).

use crate::contract::overlap::{self, PathSet};
use crate::contract::{BranchFile, ContractFile, Effective};
use crate::error::Result;
use crate::git::diff::{self, ChangeKind};
use crate::git::refs::read::{RefReader, RefStats};
use crate::git::{objects, ObjectId, Repo};
use crate::ledger::records::{Changes, Mark};
use crate::record::{self, Record};
use crate::task::{layout, Mode, Status, TaskId};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// How many entries of tasks no longer active are made again before the index is written.
const INACTIVE_UNWRITTEN: usize = 8;

/// The landings file's name, beside the index.
const LANDINGS: &str = "overlaps-landings";

/// The work file's name, beside the index.
const WORK: &str = "overlaps-work";

/// The files' format; another version is read as empty.
const VERSION: u32 = 2;

/// How many landings `overlaps-landings` keeps (older ones only cost computing again).
const MAX_LANDINGS: usize = 64;

/// What the index keeps of one task's record.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Entry {
    /// The record tip it was made from.
    record: String,
    /// Whether the task is active.
    pub active: bool,
    /// Whether it is a worktree-mode task.
    pub worktree: bool,
    /// Its base branch (full name).
    pub base_branch: Option<String>,
    /// Its base commit.
    pub base_commit: String,
    /// Its branch (full name).
    pub branch: String,
    /// The hull of its frozen contract's `allowed` (`[""]`: anywhere).
    pub hull: Vec<String>,
    /// Whether its frozen contract and policy compile (if not, its contract reads as unknown).
    pub frozen_ok: bool,
}

/// What the index keeps of one task's committed work against its base.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Work {
    /// The branch tip.
    tip: String,
    /// The base tips whose merge with `tip` takes `ancestor` as the common ancestor.
    bases: Vec<String>,
    /// The common ancestor's tree.
    ancestor: String,
    /// The paths the task changed since `ancestor` (the contract file left out).
    paths: Vec<String>,
    /// Those of `paths` that it deleted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    deleted: Vec<String>,
    /// A changed path could not be told exactly (not UTF-8, or a component git refuses).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    lossy: bool,
}

#[derive(Default, serde::Serialize, serde::Deserialize)]
struct File {
    version: u32,
    ignore_case: bool,
    /// Where the ledger's change log was when `tasks` held every task with a record: the ids
    /// appended since are the only records that may have changed ([`Index::sync`]).
    #[serde(default)]
    mark: Option<Mark>,
    tasks: BTreeMap<String, Entry>,
}

/// What the index knows of tasks' work, in a file of its own (`overlaps-work`): read only when
/// some task is looked at closely, which with a thousand live tasks is seldom any.
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct WorkFile {
    version: u32,
    ignore_case: bool,
    work: BTreeMap<String, Work>,
}

/// The index as read, brought up to date as it is used and written back by [`Index::save`].
pub struct Index {
    path: PathBuf,
    file: File,
    changed: bool,
    /// The work file, once read.
    work: Option<WorkFile>,
    work_changed: bool,
    /// Entries made for tasks no longer active, not yet written.
    inactive_made: usize,
    /// Landings that wrote only new commits on a branch, `(tip after, tip before)`: every
    /// task's merge base with the one is its merge base with the other.
    landings: Vec<(ObjectId, ObjectId)>,
    landings_changed: bool,
}

impl Index {
    /// Reads the index of `repo`; a missing, unreadable or other-version one is empty.
    pub fn load(repo: &Repo) -> Index {
        let path = crate::git::state_dir(repo.common_dir()).join("overlaps-index");
        let ignore_case = repo.ignore_case();
        let file = read_json(&path, |f: &File| {
            f.version == VERSION && f.ignore_case == ignore_case
        })
        .unwrap_or(File {
            version: VERSION,
            ignore_case,
            ..File::default()
        });
        let landings = std::fs::read_to_string(path.with_file_name(LANDINGS))
            .unwrap_or_default()
            .lines()
            .filter_map(|line| {
                let (after, before) = line.split_once(' ')?;
                let id = |hex: &str| ObjectId::from_hex(hex.as_bytes()).ok();
                Some((id(after)?, id(before)?))
            })
            .collect();
        Index {
            path,
            file,
            changed: false,
            work: None,
            work_changed: false,
            inactive_made: 0,
            landings,
            landings_changed: false,
        }
    }

    /// Remembers that the landing from `before` to `after` wrote only new commits on its branch.
    fn landed(&mut self, after: ObjectId, before: ObjectId) {
        if !self.landings.contains(&(after, before)) {
            self.landings.push((after, before));
            let extra = self.landings.len().saturating_sub(MAX_LANDINGS);
            self.landings.drain(..extra);
            self.landings_changed = true;
        }
    }

    /// `onto` and every tip it has the same merge bases as, through the landings remembered.
    /// (With a task that merged a landed squash in and a branch then moved back past it, that
    /// can be wrong for that task: the forecast then may skip its trial merge. Advice only.)
    fn same_bases(&self, onto: ObjectId) -> HashSet<ObjectId> {
        let mut out = HashSet::from([onto]);
        let mut grew = true;
        while grew {
            grew = false;
            // Having the same merge bases goes both ways: `onto` may be the tip before one
            // landing, or after another from the same tip.
            for (after, before) in &self.landings {
                for (from, to) in [(after, before), (before, after)] {
                    if out.contains(from) && out.insert(*to) {
                        grew = true;
                    }
                }
            }
        }
        out
    }

    /// Writes the index back if something worth keeping changed (best effort: a cache that
    /// cannot be written only costs time next run).
    pub fn save(mut self) {
        if self.landings_changed {
            let text: String = self
                .landings
                .iter()
                .map(|(after, before)| format!("{after} {before}\n"))
                .collect();
            let _ = crate::git::fs::write_atomically(
                &self.path.with_file_name(LANDINGS),
                text.as_bytes(),
            );
        }
        if self.work_changed {
            if let Some(work) = &mut self.work {
                // Work of tasks the index no longer knows goes with the next write.
                let tasks = &self.file.tasks;
                work.work.retain(|id, _| tasks.contains_key(id));
                write_json(&self.path.with_file_name(WORK), work);
            }
        }
        if self.changed {
            write_json(&self.path, &self.file);
        }
    }

    /// The work file, read on first use (a missing, unreadable or other-version one is empty).
    fn work_file(&mut self) -> &mut WorkFile {
        let (path, ignore_case) = (self.path.with_file_name(WORK), self.file.ignore_case);
        self.work.get_or_insert_with(|| {
            read_json(&path, |w: &WorkFile| {
                w.version == VERSION && w.ignore_case == ignore_case
            })
            .unwrap_or(WorkFile {
                version: VERSION,
                ignore_case,
                ..WorkFile::default()
            })
        })
    }

    /// Brings the entries up to date with every task that has a record (read and verified as
    /// [`record::load`] does; a task whose record does not verify has none). When the index
    /// knows where it last read the ledger's change log ([`Changes`]), only the tasks whose
    /// ledger entry changed since are looked at: with a thousand live tasks no record ref is
    /// read. Otherwise every record ref is, and where the log ends is kept for next time.
    pub fn sync(&mut self, repo: &Repo) -> Result<()> {
        if let Some(changes) = self.file.mark.and_then(|m| Changes::since(repo, m)) {
            let before = self.changed;
            let ids: std::collections::BTreeSet<String> = changes.ids.into_iter().collect();
            for id in &ids {
                let Ok(id) = TaskId::parse(id) else {
                    continue;
                };
                match repo.find_ref(&layout::record_ref(&id))? {
                    Some(tip) if self.entry(repo, &id, tip)?.is_some() => {}
                    _ => self.forget(id.as_str()),
                }
            }
            // Not written for a few: until the new mark is, the same ids are read again next
            // time (a ref and a record each), which costs less than writing the entry of every
            // task. Written once they are more.
            self.changed = before || ids.len() > INACTIVE_UNWRITTEN;
            self.file.mark = Some(changes.mark);
            return Ok(());
        }
        let mark = Changes::start(repo);
        let mut seen = HashSet::new();
        for (id, tip) in record_tips(repo)? {
            if self.entry(repo, &id, tip)?.is_some() {
                seen.insert(id.to_string());
            }
        }
        let gone: Vec<String> = (self.file.tasks.keys())
            .filter(|id| !seen.contains(*id))
            .cloned()
            .collect();
        for id in gone {
            self.forget(&id);
        }
        self.file.mark = mark;
        self.changed = true;
        Ok(())
    }

    /// Drops what the index knows of task `id` (it has no record that verifies).
    fn forget(&mut self, id: &str) {
        // Its work, if any, goes when the work file is next written.
        self.changed |= self.file.tasks.remove(id).is_some();
    }

    /// Every task with a record and its entry, in id order (after [`Index::sync`]).
    pub fn entries(&self) -> impl Iterator<Item = (&str, &Entry)> {
        self.file.tasks.iter().map(|(id, e)| (id.as_str(), e))
    }

    /// The entry of task `id` whose record tip is `tip`, made from its record (read and verified
    /// as [`record::load`] does) when the index has none for that tip. `None`: the task has no
    /// record, or one that does not verify (commands that look at every task skip those).
    pub fn entry(&mut self, repo: &Repo, id: &TaskId, tip: ObjectId) -> Result<Option<&Entry>> {
        let good = self
            .file
            .tasks
            .get(id.as_str())
            .is_some_and(|e| ObjectId::from_hex(e.record.as_bytes()).ok() == Some(tip));
        if !good {
            match load_live(repo, id)? {
                Some(r) => {
                    let entry = Entry::of(repo, &r);
                    // A task no longer active is one record read next time, if not written:
                    // written once there are a few (`merge` makes one for the task it landed).
                    self.inactive_made += usize::from(!entry.active);
                    self.changed |= entry.active || self.inactive_made >= INACTIVE_UNWRITTEN;
                    self.file.tasks.insert(id.to_string(), entry);
                }
                None => {
                    self.file.tasks.remove(id.as_str());
                    return Ok(None);
                }
            }
        }
        Ok(self.file.tasks.get(id.as_str()))
    }

    /// The common ancestor's tree and the changed paths of the task `id` at branch tip `tip`
    /// merged onto base tip `onto`, from the index when it has them for `onto` or a tip in
    /// `same` (those with the same merge bases: [`Index::same_bases`]), else computed.
    fn work(
        &mut self,
        memory: &Repo,
        id: &TaskId,
        tip: ObjectId,
        onto: ObjectId,
        same: &HashSet<ObjectId>,
    ) -> Result<Work> {
        let is = |hex: &str, id: ObjectId| ObjectId::from_hex(hex.as_bytes()).ok() == Some(id);
        if let Some(w) = self.work_file().work.get(id.as_str()) {
            let holds = w
                .bases
                .iter()
                .any(|b| ObjectId::from_hex(b.as_bytes()).is_ok_and(|b| same.contains(&b)));
            if is(&w.tip, tip) && holds {
                return Ok(w.clone());
            }
        }
        let ancestor = crate::git::merge::ancestor_tree(memory, onto, tip)?;
        let changes = diff::tree_to_tree(memory, ancestor, objects::commit_tree(memory, tip)?)?;
        let changes: Vec<_> = changes
            .into_iter()
            .filter(|c| c.path != crate::contract::file::CONTRACT_FILE)
            .collect();
        let work = Work {
            tip: tip.to_string(),
            bases: vec![onto.to_string()],
            ancestor: ancestor.to_string(),
            deleted: changes
                .iter()
                .filter(|c| c.kind == ChangeKind::Deleted)
                .map(|c| c.path.clone())
                .collect(),
            lossy: changes.iter().any(|c| c.unsafe_path),
            paths: changes.into_iter().map(|c| c.path).collect(),
        };
        // Kept only when the ancestor is one merge base's tree, which the object database holds
        // (a virtual base of several is written to memory only).
        let base = objects::merge_base(memory, onto, tip)?;
        let real = match base {
            Some(b) => objects::commit_tree(memory, b)? == ancestor,
            None => false,
        };
        self.work_changed = true;
        let file = self.work_file();
        match real {
            true => {
                file.work.insert(id.to_string(), work.clone());
            }
            false => {
                file.work.remove(id.as_str());
            }
        }
        Ok(work)
    }
}

impl Entry {
    fn of(repo: &Repo, r: &Record) -> Entry {
        let s = &r.state;
        let ignore_case = repo.ignore_case();
        let hull = match r.contract.allowed.is_empty() {
            true => vec![String::new()],
            false => overlap::hull(&r.contract.allowed, ignore_case),
        };
        let policies: Vec<&str> = r.policy_text.iter().map(String::as_str).collect();
        let frozen_ok = Effective::with_policies(
            &s.id,
            &policies,
            &r.contract,
            &BranchFile::NotApplicable,
            ignore_case,
        )
        .is_ok_and(|e| PathSet::from_effective(&e).is_ok());
        Entry {
            record: r.tip.to_string(),
            active: s.status == Status::Active,
            worktree: s.mode == Mode::Worktree,
            base_branch: s.base_branch.as_ref().map(|b| b.to_string()),
            base_commit: s.base_commit.clone(),
            branch: s.branch.to_string(),
            hull,
            frozen_ok,
        }
    }
}

/// The record of `id` as commands that look at every task read it: `None` when it has none or
/// one that does not verify (`record_tampered`, skipped); other errors are errors.
pub fn load_live(repo: &Repo, id: &TaskId) -> Result<Option<Record>> {
    match record::load(repo, id) {
        Ok(r) => Ok(r),
        Err(e) if e.code() == "record_tampered" => Ok(None),
        Err(e) => Err(e),
    }
}

/// Every task id with a record ref and that ref's tip, in id order (a record ref that cannot
/// be read quickly is read through git).
///
/// A record ref whose loose file has the stat data it had when last read is not read again
/// ([`RefStats`], `<common dir>/git-task/record-refs`): with a thousand live tasks, `start` and
/// `merge` `stat` a thousand files rather than read them.
pub fn record_tips(repo: &Repo) -> Result<Vec<(TaskId, ObjectId)>> {
    let stats = RefStats::load_file(repo.common_dir(), "record-refs");
    let reader = RefReader::with_stats(repo, &stats);
    let mut out = Vec::new();
    for name in repo.ref_children(layout::TASKS_NS)? {
        let Ok(id) = TaskId::parse(&name) else {
            continue;
        };
        if let Some(tip) = reader.target(&layout::record_ref(&id))? {
            out.push((id, tip));
        }
    }
    stats.store();
    Ok(out)
}

/// Tells, per base, whether the policy a task's effective contract takes from its base's
/// current tip compiles (if not, that contract reads as unknown: "may overlap").
pub struct BasePolicies<'r> {
    repo: &'r Repo,
    tips: HashMap<Option<String>, Option<ObjectId>>,
    ok: HashMap<Option<ObjectId>, bool>,
}

impl<'r> BasePolicies<'r> {
    /// Looks at `repo`.
    pub fn new(repo: &'r Repo) -> BasePolicies<'r> {
        BasePolicies {
            repo,
            tips: HashMap::new(),
            ok: HashMap::new(),
        }
    }

    /// Whether the policy at the current tip of `entry`'s base compiles, as
    /// [`crate::changes::effective`] reads it (`false` also when it cannot be read).
    pub fn ok(&mut self, entry: &Entry) -> bool {
        let repo = self.repo;
        let tip = match &entry.base_branch {
            Some(b) => match self.tips.get(&Some(b.clone())) {
                Some(t) => Ok(*t),
                None => repo.find_ref(b).inspect(|t| {
                    self.tips.insert(Some(b.clone()), *t);
                }),
            },
            None => Ok(None),
        };
        let tip = match tip {
            Ok(Some(t)) => Some(t),
            Ok(None) => entry.base_commit.parse::<ObjectId>().ok(),
            Err(_) => return false,
        };
        if let Some(ok) = self.ok.get(&tip) {
            return *ok;
        }
        let ok = match tip {
            None => true,
            Some(t) => match objects::read_blob_at(repo, t, crate::contract::file::POLICY_FILE) {
                Err(_) => false,
                Ok(None) => true,
                Ok(Some(text)) => {
                    let text = String::from_utf8_lossy(&text);
                    let empty = ContractFile {
                        version: 1,
                        ..ContractFile::default()
                    };
                    Effective::with_policies(
                        "policy",
                        &[&text],
                        &empty,
                        &BranchFile::NotApplicable,
                        repo.ignore_case(),
                    )
                    .is_ok_and(|e| PathSet::from_effective(&e).is_ok())
                }
            },
        };
        self.ok.insert(tip, ok);
        ok
    }
}

/// The paths a landing changed on a branch, with their directories, to tell which tasks' work
/// can meet them ([`Landed::may_meet`]).
pub struct Landed {
    /// Every changed path, and every directory above one (not the root).
    around: HashSet<String>,
    /// Every directory above a deleted path (a directory the landing may have renamed).
    vacated: HashSet<String>,
    /// The changed paths themselves.
    paths: HashSet<String>,
    lossy: bool,
    ignore_case: bool,
}

impl Landed {
    /// The changes from tree `from` to tree `to`.
    fn between(repo: &Repo, from: ObjectId, to: ObjectId) -> Result<Landed> {
        let ignore_case = repo.ignore_case();
        let fold = |p: &str| match ignore_case {
            true => p.to_lowercase(),
            false => p.to_owned(),
        };
        let mut out = Landed {
            around: HashSet::new(),
            vacated: HashSet::new(),
            paths: HashSet::new(),
            lossy: false,
            ignore_case,
        };
        for c in diff::tree_to_tree(repo, from, to)? {
            out.lossy |= c.unsafe_path;
            let path = fold(&c.path);
            for dir in dirs(&path) {
                out.around.insert(dir.to_owned());
                if c.kind == ChangeKind::Deleted {
                    out.vacated.insert(dir.to_owned());
                }
            }
            out.around.insert(path.clone());
            out.paths.insert(path);
        }
        Ok(out)
    }

    /// Whether the 3-way merge of `work` (its side's changes since the common ancestor) with
    /// this side's can hold a conflict: a path both changed, a path of one that is a directory
    /// of the other's, or a directory one side emptied (a rename of that directory, which the
    /// merge follows) above a path of the other's. When none holds, the merge takes each path
    /// from the one side that changed it, and is clean.
    fn may_meet(&self, work: &Work) -> bool {
        if self.lossy || work.lossy {
            return true;
        }
        let fold = |p: &str| match self.ignore_case {
            true => p.to_lowercase(),
            false => p.to_owned(),
        };
        let deleted: HashSet<&str> = work.deleted.iter().map(String::as_str).collect();
        work.paths.iter().any(|p| {
            let is_deleted = deleted.contains(p.as_str());
            let p = fold(p);
            self.around.contains(&p)
                || dirs(&p).any(|d| {
                    self.paths.contains(d)
                        || self.vacated.contains(d)
                        || (is_deleted && self.around.contains(d))
                })
        })
    }
}

impl Landed {
    /// The changes from `from` to `to`, made once per `from` in `memo`.
    fn memo<'m>(
        memo: &'m mut HashMap<ObjectId, Landed>,
        repo: &Repo,
        from: ObjectId,
        to: ObjectId,
    ) -> Result<&'m Landed> {
        Ok(match memo.entry(from) {
            std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(Landed::between(repo, from, to)?)
            }
        })
    }

    /// Whether a task that changes only paths at or below the prefixes of `hull` (`""`:
    /// anywhere) can meet these changes, as [`Landed::may_meet`] tells for paths: a path changed
    /// at or below a prefix, a path changed where a prefix or a directory above it is (a
    /// file-directory clash), or a directory above a prefix emptied (a rename the merge
    /// follows).
    fn may_reach(&self, hull: &[String]) -> bool {
        self.lossy
            || hull.iter().any(|h| {
                if h.is_empty() {
                    return true;
                }
                let h = match self.ignore_case {
                    true => h.to_lowercase(),
                    false => h.clone(),
                };
                self.around.contains(&h)
                    || std::iter::once(h.as_str())
                        .chain(dirs(&h))
                        .any(|d| self.paths.contains(d) || self.vacated.contains(d))
            })
    }
}

/// `T` read from the JSON file at `path` when `good` says it is of this format; `None` when
/// missing, unreadable or of another.
fn read_json<T: serde::de::DeserializeOwned>(path: &Path, good: impl Fn(&T) -> bool) -> Option<T> {
    let bytes = std::fs::read(path).ok()?;
    serde_json::from_slice::<T>(&bytes).ok().filter(|t| good(t))
}

/// Writes `value` as JSON to `path` (best effort: a cache that cannot be written only costs
/// time next run).
fn write_json(path: &Path, value: &impl serde::Serialize) {
    if let Ok(text) = serde_json::to_vec(value) {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = crate::git::fs::write_atomically(path, &text);
    }
}

/// The directories above `path`, deepest first (not the root).
fn dirs(path: &str) -> impl Iterator<Item = &str> {
    let mut rest = path;
    std::iter::from_fn(move || {
        let i = rest.rfind('/')?;
        rest = &rest[..i];
        Some(rest)
    })
}

/// The live worktree tasks based on `branch` whose trial merge onto its tip `onto` conflicts,
/// each with the conflicting paths, in id order: each task's committed work since the common
/// ancestor is compared with the branch's, and only a task whose changed paths can meet the
/// branch's is merged in memory (with `merger`, made on first use). `before`: the branch's tip
/// before a landing that wrote only new commits on it (a squash), for which the index's entries
/// still hold.
///
/// A task is looked at (its branch read, its work computed or taken from the work file) only
/// when the hull of its frozen contract can meet what the branch changed since the task's base
/// commit: whatever it may change is there (work beyond its contract would be refused at its
/// own merge, so the forecast does not look for it), and the branch changed no less since then
/// than since the merge base it has with it now. With a thousand live tasks, the others cost
/// nothing but their entry.
pub fn conflicting(
    repo: &Repo,
    memory: &Repo,
    branch: &str,
    onto: ObjectId,
    before: Option<ObjectId>,
) -> Result<Vec<(String, Vec<String>)>> {
    let mut index = Index::load(repo);
    if let Some(before) = before {
        index.landed(onto, before);
    }
    let same = index.same_bases(onto);
    index.sync(repo)?;
    let onto_tree = objects::commit_tree(repo, onto)?;
    let mut sides: HashMap<ObjectId, Landed> = HashMap::new();
    let mut base_trees: HashMap<ObjectId, ObjectId> = HashMap::new();
    let mut looked = Vec::new();
    for (id, e) in index.entries() {
        if !(e.active && e.worktree && e.base_branch.as_deref() == Some(branch)) {
            continue;
        }
        // What the branch changed since the task started from it (or last synced with it): at
        // least what it changed since the task's merge base with it now.
        let base = ObjectId::from_hex(e.base_commit.as_bytes()).ok();
        let from = match base.map(|c| base_trees.get(&c).copied().ok_or(c)) {
            Some(Ok(tree)) => Some(tree),
            Some(Err(c)) => objects::commit_tree(memory, c).ok().inspect(|t| {
                base_trees.insert(c, *t);
            }),
            None => None,
        };
        let reach = match from {
            Some(from) => Landed::memo(&mut sides, memory, from, onto_tree)?.may_reach(&e.hull),
            None => true,
        };
        if !e.frozen_ok || reach {
            looked.push((TaskId::parse(id), e.branch.clone()));
        }
    }
    // Task branches whose loose files have not changed since the last forecast are not read
    // again (a `stat` each), as record refs are not ([`record_tips`]).
    let stats = RefStats::load_file(repo.common_dir(), "branch-refs");
    let reader = RefReader::with_stats(repo, &stats);
    let mut merger = None;
    let mut out = Vec::new();
    for (id, task_branch) in looked {
        let Ok(id) = id else { continue };
        let Some(task_tip) = reader.target(&task_branch)? else {
            continue;
        };
        let work = index.work(memory, &id, task_tip, onto, &same)?;
        let ancestor: ObjectId = ObjectId::from_hex(work.ancestor.as_bytes())
            .map_err(|_| crate::Error::repo_msg("bad object id in the overlaps index"))?;
        if !Landed::memo(&mut sides, memory, ancestor, onto_tree)?.may_meet(&work) {
            continue;
        }
        if merger.is_none() {
            merger = Some(crate::git::merge::Merger::new(memory)?);
        }
        let merger = merger.as_mut().expect("just made");
        if let Err(paths) = crate::merge::trial(merger, &id, onto, task_tip, branch)? {
            out.push((id.to_string(), paths));
        }
    }
    index.save();
    stats.store();
    Ok(out)
}
