//! Diffs: changed-path lists between trees (this file), with renames
//! (`renames`), and unified text patches (`unified`).
//!
//! Lists of changed paths between trees.

pub mod renames;
pub mod similarity;
pub mod stat;
pub mod unified;

use crate::error::{Context, Result};
use crate::git::{ObjectId, Repo};
use gix::bstr::{BStr, BString};
use gix::object::tree::EntryKind;
use std::collections::VecDeque;

/// How one path changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// The path is new.
    Added,
    /// Content or mode changed.
    Modified,
    /// The path is gone.
    Deleted,
}

/// One changed path; a rename appears as a deletion plus an addition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangedPath {
    /// Repository-relative path with `/`.
    pub path: String,
    /// How it changed.
    pub kind: ChangeKind,
    /// Entry kind before (`None` when added).
    pub old: Option<(EntryKind, ObjectId)>,
    /// Entry kind after (`None` when deleted).
    pub new: Option<(EntryKind, ObjectId)>,
    /// A component of the raw path is one git refuses (`..`, `.git`, a name holding `/`: SPEC §5,
    /// [`crate::git::pathsafe`]); `path` is lossy and cannot tell.
    pub unsafe_path: bool,
}

/// Returns every path that differs between two trees, without rename detection, sorted by path.
///
/// Only subtrees whose ids differ are read. This uses gix's plain tree diff,
/// not `Repository::diff_tree_to_tree`, which sets up a blob-diff cache and
/// with it loads the whole index for attributes (a 100,000-entry index costs
/// more than the diff itself).
pub fn tree_to_tree(repo: &Repo, old: ObjectId, new: ObjectId) -> Result<Vec<ChangedPath>> {
    Ok(tree_to_tree_raw(repo, old, new)?
        .iter()
        .map(RawChange::to_changed)
        .collect())
}

/// One changed path with its name as git's bytes (which need not be UTF-8): for
/// writing to disk, where a lossy name would miss the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawChange {
    /// Repository-relative path with `/`, as stored in the tree.
    pub path: BString,
    /// How it changed.
    pub kind: ChangeKind,
    /// Entry kind before (`None` when added).
    pub old: Option<(EntryKind, ObjectId)>,
    /// Entry kind after (`None` when deleted).
    pub new: Option<(EntryKind, ObjectId)>,
    /// A component of the raw path is one git refuses ([`crate::git::pathsafe`]).
    pub unsafe_path: bool,
}

impl RawChange {
    /// The same change with its path as (lossy) text.
    pub fn to_changed(&self) -> ChangedPath {
        ChangedPath {
            path: self.path.to_string(),
            kind: self.kind,
            old: self.old,
            new: self.new,
            unsafe_path: self.unsafe_path,
        }
    }
}

/// [`tree_to_tree`] with the paths as git's bytes.
pub fn tree_to_tree_raw(repo: &Repo, old: ObjectId, new: ObjectId) -> Result<Vec<RawChange>> {
    let mut out = Vec::new();
    if old == new {
        return Ok(out);
    }
    let old_tree = repo
        .inner
        .find_tree(old)
        .context(|| format!("could not read tree {old}"))?;
    let new_tree = repo
        .inner
        .find_tree(new)
        .context(|| format!("could not read tree {new}"))?;
    let mut recorder = Recorder::default();
    let walked = gix::diff::tree(
        gix::objs::TreeRefIter::from_bytes(&old_tree.data, old.kind()),
        gix::objs::TreeRefIter::from_bytes(&new_tree.data, new.kind()),
        gix::diff::tree::State::default(),
        &repo.inner.objects,
        &mut recorder,
    );
    if recorder.too_deep {
        return Err(crate::git::pathsafe::too_deep(&format!(
            "the difference between trees {old} and {new}"
        )));
    }
    walked.context(|| format!("could not diff {old} and {new}"))?;
    use gix::diff::tree::visit::Change as C;
    for (change, path, unsafe_path, leaf_unsafe) in recorder.records {
        let (old_entry, new_entry) = match change {
            C::Addition {
                entry_mode, oid, ..
            } => (None, Some((entry_mode, oid))),
            C::Deletion {
                entry_mode, oid, ..
            } => (Some((entry_mode, oid)), None),
            C::Modification {
                previous_entry_mode,
                previous_oid,
                entry_mode,
                oid,
            } => (
                Some((previous_entry_mode, previous_oid)),
                Some((entry_mode, oid)),
            ),
        };
        // Trees are not changes of their own, except an unsafe name (an empty `..` tree has no files
        // to carry the verdict). A file that became a directory or the reverse: the file side counts.
        let keep = |e: &Option<(gix::objs::tree::EntryMode, ObjectId)>| {
            e.filter(|(m, _)| !m.is_tree() || leaf_unsafe)
                .map(|(m, id)| (m.kind(), id))
        };
        let (before, after) = (keep(&old_entry), keep(&new_entry));
        let kind = match (before, after) {
            (None, None) => continue,
            (None, Some(_)) => ChangeKind::Added,
            (Some(_), None) => ChangeKind::Deleted,
            (Some(_), Some(_)) => ChangeKind::Modified,
        };
        out.push(RawChange {
            path,
            kind,
            old: before,
            new: after,
            unsafe_path,
        });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// A tree-diff delegate like gix's `Recorder` that also keeps, for every change, whether a
/// component of its raw path is unsafe ([`crate::git::pathsafe`]). It keeps empty names and names
/// holding `/` as components of their own, which a joined path cannot show.
#[derive(Default)]
struct Recorder {
    /// The current path.
    path: BString,
    /// Per component of `path`: where it starts (its `/` included) and whether it is unsafe.
    parts: Vec<(usize, bool)>,
    queue: VecDeque<(BString, Vec<(usize, bool)>)>,
    /// (change, path, any component unsafe, the last component unsafe).
    records: Vec<(gix::diff::tree::visit::Change, BString, bool, bool)>,
    /// A path went deeper than [`crate::git::pathsafe::MAX_TREE_DEPTH`]: the walk stopped.
    too_deep: bool,
}

impl Recorder {
    fn push(&mut self, name: &BStr) {
        let start = self.path.len();
        if !self.parts.is_empty() {
            self.path.push(b'/');
        }
        self.path.extend_from_slice(name);
        // Whether it is a symlink is only known at the change: see `visit`.
        self.parts
            .push((start, !crate::git::pathsafe::is_safe_component(name, false)));
    }
}

impl gix::diff::tree::Visit for Recorder {
    fn pop_front_tracked_path_and_set_current(&mut self) {
        let (path, parts) = self.queue.pop_front().expect("every parent is queued once");
        self.path = path;
        self.parts = parts;
    }

    fn push_back_tracked_path_component(&mut self, component: &BStr) {
        self.push(component);
        self.queue
            .push_back((self.path.clone(), self.parts.clone()));
    }

    fn push_path_component(&mut self, component: &BStr) {
        self.push(component);
    }

    fn pop_path_component(&mut self) {
        if let Some((start, _)) = self.parts.pop() {
            self.path.truncate(start);
        }
    }

    fn visit(&mut self, change: gix::diff::tree::visit::Change) -> gix::diff::tree::visit::Action {
        if self.parts.len() > crate::git::pathsafe::MAX_TREE_DEPTH {
            self.too_deep = true;
            return std::ops::ControlFlow::Break(());
        }
        let mut leaf_unsafe = self.parts.last().is_some_and(|p| p.1);
        // `.gitmodules` (any spelling) must not be a symlink.
        if !leaf_unsafe && change.entry_mode().is_link() {
            let start = self.parts.last().map_or(0, |p| p.0);
            let name = self.path[start..]
                .strip_prefix(b"/")
                .unwrap_or(&self.path[start..]);
            leaf_unsafe = !crate::git::pathsafe::is_safe_component(name, true);
        }
        let any = leaf_unsafe || self.parts.iter().any(|p| p.1);
        self.records
            .push((change, self.path.clone(), any, leaf_unsafe));
        std::ops::ControlFlow::Continue(())
    }
}

/// Refuses (before anything is written) when any path that moving from tree `old` to `new` touches is unsafe.
///
/// `what` names the source in the message (`"checkpoint 2"`, `"the base"`).
pub fn check_safe(changes: &[ChangedPath], what: &str) -> crate::error::Result<()> {
    match changes.iter().find(|c| c.unsafe_path) {
        Some(c) => Err(crate::git::pathsafe::refusal(&c.path, what)),
        None => Ok(()),
    }
}
