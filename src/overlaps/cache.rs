//! The collision column of `list`: how many paths each live task conflicts on with its base's
//! tip, and with how many other live tasks its trial merge conflicts, kept in a cache keyed by
//! the refs involved so that `list` recomputes only what a ref change made stale.
//!
//! Per task the cache holds, under its branch tip and its base's tip, the paths it changed
//! since their merge base and the paths that conflict when it alone is merged onto the base's
//! tip. Per pair it holds, under both tips and the base's tip, whether both merged onto the
//! base conflict; only pairs whose changed paths meet are merged at all (see
//! [`super::touch`]). A moved ref changes the key, so its entries are simply not found and are
//! computed again. Committed work only: uncommitted work cannot be merged (`overlaps` shows it).
//!
//! File: `<common dir>/git-task/overlaps`, JSON. It is a cache, not state: deleting it, or
//! one that cannot be read, only costs computing again.

use super::{merge_both, touch, Side};
use crate::error::Result;
use crate::git::merge::Merger;
use crate::git::{diff, objects, ObjectId, Repo};
use crate::task::TaskId;
use std::collections::BTreeMap;
use std::collections::BTreeSet;

/// One live task as `list` shows it.
pub struct Listed {
    /// The task.
    pub id: TaskId,
    /// Its branch tip.
    pub tip: ObjectId,
    /// Its base branch (full name) and that branch's tip.
    pub base: String,
    /// The base branch's tip.
    pub base_tip: ObjectId,
}

/// What collides with one task.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Collisions {
    /// Paths that conflict when the task alone is merged onto its base's tip.
    pub with_base: usize,
    /// Other live tasks on the same base whose trial merge together with it conflicts.
    pub with_tasks: usize,
}

#[derive(Clone, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct TaskEntry {
    tip: String,
    base_tip: String,
    paths: Vec<String>,
    base_conflicts: Vec<String>,
    /// The task merged alone onto the base's tip (a commit in memory only: not kept).
    #[serde(skip)]
    landed: Option<ObjectId>,
}

#[derive(Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct PairEntry {
    key: String,
    conflict: bool,
}

#[derive(Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct File {
    tasks: BTreeMap<String, TaskEntry>,
    pairs: BTreeMap<String, PairEntry>,
}

/// The cache as read from its file (`list` reads it while it looks at the worktrees).
pub struct Cache {
    path: std::path::PathBuf,
    old: File,
}

impl Cache {
    /// Reads the cache of the repository whose common git dir is `common_dir`; a missing or
    /// unreadable one is empty.
    pub fn load(common_dir: &std::path::Path) -> Cache {
        let path = crate::git::state_dir(common_dir).join("overlaps");
        let old = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        Cache { path, old }
    }
}

/// Returns the collisions of each task in `tasks`, computing only what `cache` lacks, and
/// brings its file up to date.
pub fn collisions(repo: &Repo, cache: Cache, tasks: &[Listed]) -> Result<Vec<Collisions>> {
    // Entries still good move from `old` to `new`; the file is written again only when one
    // was made or one is left over.
    let Cache { path, mut old } = cache;
    // Made only when something is stale: preparing a merger reads the index and attributes.
    let memory = std::cell::OnceCell::new();
    let memory = || memory.get_or_init(|| repo.with_objects_in_memory());
    let mut merger = None;
    let mut new = File::default();
    let mut stale = false;
    let is = |hex: &str, id: ObjectId| ObjectId::from_hex(hex.as_bytes()).ok() == Some(id);
    for t in tasks {
        let (id, entry) = match old.tasks.remove_entry(t.id.as_str()) {
            Some((id, e)) if is(&e.tip, t.tip) && is(&e.base_tip, t.base_tip) => (id, e),
            _ => {
                stale = true;
                let entry = task_entry(repo, made(&mut merger, memory())?, t)?;
                (t.id.to_string(), entry)
            }
        };
        new.tasks.insert(id, entry);
    }
    let mut out = vec![Collisions::default(); tasks.len()];
    // A thousand tasks are half a million pairs: only those that both changed something are looked at.
    let paths: Vec<BTreeSet<String>> = tasks
        .iter()
        .map(|t| new.tasks[t.id.as_str()].paths.iter().cloned().collect())
        .collect();
    let changed: Vec<usize> = (0..tasks.len()).filter(|&i| !paths[i].is_empty()).collect();
    for (i, a) in tasks.iter().enumerate() {
        out[i].with_base = new.tasks[a.id.as_str()].base_conflicts.len();
    }
    for (n, &i) in changed.iter().enumerate() {
        for &j in &changed[n + 1..] {
            let (a, b) = (&tasks[i], &tasks[j]);
            if a.base != b.base || a.base_tip != b.base_tip || !touch(&paths[i], &paths[j]) {
                continue;
            }
            let (ea, eb) = (&new.tasks[a.id.as_str()], &new.tasks[b.id.as_str()]);
            let name = format!("{} {}", a.id, b.id);
            let key = format!("{} {} {}", a.tip, b.tip, a.base_tip);
            let conflict = match old.pairs.remove(&name) {
                Some(p) if p.key == key => p.conflict,
                _ => {
                    stale = true;
                    pair_conflicts(made(&mut merger, memory())?, a, ea, b, eb)?
                }
            };
            new.pairs.insert(name, PairEntry { key, conflict });
            if conflict {
                out[i].with_tasks += 1;
                out[j].with_tasks += 1;
            }
        }
    }
    if stale || !old.tasks.is_empty() || !old.pairs.is_empty() {
        if let Ok(text) = serde_json::to_vec(&new) {
            // Best effort: a cache that cannot be written only costs time next `list`.
            let _ = std::fs::create_dir_all(path.parent().expect("a file in a directory"));
            let _ = crate::git::fs::write_atomically(&path, &text);
        }
    }
    Ok(out)
}

/// The merger in `slot`, made on first use.
fn made<'s, 'r>(slot: &'s mut Option<Merger<'r>>, memory: &'r Repo) -> Result<&'s mut Merger<'r>> {
    if slot.is_none() {
        *slot = Some(Merger::new(memory)?);
    }
    Ok(slot.as_mut().expect("just made"))
}

fn task_entry(repo: &Repo, merger: &mut Merger, t: &Listed) -> Result<TaskEntry> {
    let from = objects::merge_base(repo, t.tip, t.base_tip)?.unwrap_or(t.base_tip);
    let paths: Vec<String> = diff::tree_to_tree(
        repo,
        objects::commit_tree(repo, from)?,
        objects::commit_tree(repo, t.tip)?,
    )?
    .into_iter()
    .map(|c| c.path)
    .filter(|p| p != crate::contract::file::CONTRACT_FILE)
    .collect();
    let (mut base_conflicts, mut landed) = (Vec::new(), Some(t.base_tip));
    if !paths.is_empty() {
        match crate::merge::trial(merger, &t.id, t.base_tip, t.tip, &t.base)? {
            Ok(commit) => landed = Some(commit),
            Err(conflicts) => (base_conflicts, landed) = (conflicts, None),
        }
    }
    Ok(TaskEntry {
        tip: t.tip.to_string(),
        base_tip: t.base_tip.to_string(),
        paths,
        base_conflicts,
        landed,
    })
}

/// Whether `a` and `b` merged onto their base's tip one after the other conflict.
fn pair_conflicts(
    merger: &mut Merger,
    a: &Listed,
    ea: &TaskEntry,
    b: &Listed,
    eb: &TaskEntry,
) -> Result<bool> {
    // An entry read from the file has no landing in memory: merge it alone again.
    let mut side = |t: &Listed, e: &TaskEntry| -> Result<Side> {
        let landed = match e.landed {
            Some(c) => Some(c),
            None if e.base_conflicts.is_empty() => {
                crate::merge::trial(merger, &t.id, t.base_tip, t.tip, &t.base)?.ok()
            }
            None => None,
        };
        Ok(Side {
            id: t.id.clone(),
            tip: t.tip,
            landed,
        })
    };
    let (sa, sb) = (side(a, ea)?, side(b, eb)?);
    Ok(merge_both(merger, &sa, &sb, &a.base)?.is_some_and(|paths| !paths.is_empty()))
}
