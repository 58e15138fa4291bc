//! What is staged: the index compared with HEAD's tree, fast enough for a pre-commit hook.
//!
//! The walk goes down HEAD's tree and the index together, directory by
//! directory. The index's cached-tree extension (`TREE`) records, for each
//! directory whose entries have not changed since the last tree was written,
//! the id of that tree; where it equals HEAD's subtree, nothing below it is
//! staged and the whole directory is skipped without looking at its entries.
//! This is what git itself does, and it keeps a commit of a few files in a
//! 100,000-file repository from touching more than a handful of trees. Without
//! the extension (or below an invalidated directory) every entry is compared
//! with the tree, which is slower but gives the same answer.
//!
//! Guarantees: the result equals `git diff --cached --no-renames` for the
//! given index (intent-to-add entries are not staged content and are left
//! out, as git leaves them out of a commit); nothing reads the worktree; no
//! process is started.

use super::cachetree::cached_root_tree;
use super::file::{entry_at, entry_kind, open_index};
use crate::error::{Context, Result};
use crate::git::diff::{self, ChangeKind, ChangedPath};
use crate::git::{objects, ObjectId, Repo};
use gix::bstr::ByteSlice;
use gix::index::entry::Flags;
use gix::index::extension::Tree as CacheTree;
use gix::object::tree::EntryKind;
use std::collections::HashMap;
use std::ops::Range;

/// What a commit made now would contain: HEAD, the index, and the staged changes between them.
pub struct Staged {
    /// The commit HEAD points to (`None` on an unborn branch).
    pub head: Option<ObjectId>,
    /// The tree of HEAD (the empty tree when unborn).
    pub head_tree: ObjectId,
    /// The tree the commit would record, when the index's cached tree says so (then `index` is `None`).
    pub tree: Option<ObjectId>,
    /// The index being committed, decoded, when its cached tree could not give `tree`.
    index: Option<gix::index::File>,
    /// Paths whose staged entry differs from HEAD, sorted.
    pub changes: Vec<ChangedPath>,
}

/// Reads what is staged in the index git would commit (`GIT_INDEX_FILE` when git set it, as it does for
/// `git commit -a` and `git commit -- <paths>`), compared with HEAD.
///
/// Fast path: git refreshes the index's cached tree before running `pre-commit`, so the tree being
/// committed is known without decoding the index, and only the trees that differ from HEAD's are
/// read. Otherwise the index is decoded and walked together with HEAD's tree (see [`changes`]).
pub fn read_staged(repo: &Repo) -> Result<Staged> {
    let head = repo.head_commit()?;
    let head_tree = match head {
        Some(c) => objects::commit_tree(repo, c)?,
        None => objects::empty_tree(repo),
    };
    let path = repo.index_path();
    if let Some(tree) = cached_root_tree(&path, repo.inner.object_hash())? {
        let changes = diff::tree_to_tree(repo, head_tree, tree)?;
        return Ok(Staged {
            head,
            head_tree,
            tree: Some(tree),
            index: None,
            changes,
        });
    }
    let index = if path.exists() {
        open_index(repo, &path)?
    } else {
        gix::index::File::from_state(gix::index::State::new(repo.inner.object_hash()), path)
    };
    let changes = changes(repo, &index, head.map(|_| head_tree))?;
    Ok(Staged {
        head,
        head_tree,
        tree: None,
        index: Some(index),
        changes,
    })
}

impl Staged {
    /// Returns the entry a commit made now would hold at `path`: a file's kind and id, or a
    /// directory (`EntryKind::Tree`; its id is the null id when only the index knows it);
    /// `None` when there is nothing there.
    pub fn entry(&self, repo: &Repo, path: &str) -> Result<Option<(EntryKind, ObjectId)>> {
        match (&self.tree, &self.index) {
            // A path below a file is simply not there.
            (Some(tree), _) => Ok(objects::Tree::read(repo, *tree)?.entry(path).ok().flatten()),
            (None, Some(index)) => {
                if let Some(found) = entry_at(index, path) {
                    return Ok(Some(found));
                }
                let prefix = format!("{path}/");
                let below = index
                    .prefixed_entries(prefix.as_bytes().as_bstr())
                    .is_some_and(|e| !e.is_empty());
                Ok(below.then(|| (EntryKind::Tree, ObjectId::null(repo.inner.object_hash()))))
            }
            (None, None) => Ok(None),
        }
    }

    /// Reads the staged blob at `path` (what a commit made now would hold there); `None` when
    /// nothing is staged at `path`.
    pub fn read_blob(&self, repo: &Repo, path: &str) -> Result<Option<Vec<u8>>> {
        match (&self.tree, &self.index) {
            (Some(tree), _) => objects::read_blob_in_tree(repo, *tree, path),
            (None, Some(index)) => match entry_at(index, path) {
                Some((_, id)) => objects::read_blob(repo, id).map(Some),
                None => Ok(None),
            },
            (None, None) => Ok(None),
        }
    }
}

/// Returns every path whose staged entry differs from `head_tree` (`None`: unborn branch), sorted by path.
///
/// A rename appears as a deletion plus an addition; a path that turned from a
/// file into a directory (or back) appears as a deletion plus additions.
pub fn changes(
    repo: &Repo,
    index: &gix::index::State,
    head_tree: Option<ObjectId>,
) -> Result<Vec<ChangedPath>> {
    let mut walk = Walk {
        repo,
        index,
        out: Vec::new(),
        pending: Vec::new(),
    };
    let root = index.tree().filter(|t| t.name.is_empty());
    walk.dir(b"", head_tree, root, 0..index.entries().len())?;
    // Subdirectories are walked from a list, not by recursion: a tree of any depth costs no stack.
    while let Some((prefix, tree, cache, range)) = walk.pending.pop() {
        walk.dir(&prefix, tree, cache, range)?;
    }
    walk.out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(walk.out)
}

struct Walk<'a> {
    repo: &'a Repo,
    index: &'a gix::index::State,
    out: Vec<ChangedPath>,
    /// Subdirectories still to compare: (prefix, HEAD's tree, cached tree, index entries).
    pending: Vec<Pending<'a>>,
}

/// A subdirectory still to compare: its prefix, HEAD's tree of it, its cached tree, and the
/// range of index entries below it.
type Pending<'a> = (
    Vec<u8>,
    Option<ObjectId>,
    Option<&'a CacheTree>,
    Range<usize>,
);

/// One item of a directory: a file (no `/` after the name) or a subdirectory.
enum Item<'t> {
    File {
        name: &'t [u8],
        kind: EntryKind,
        id: ObjectId,
    },
    Dir {
        name: &'t [u8],
        id: ObjectId,
    },
}

impl Item<'_> {
    /// The tree-order sort key: directories sort as if their name ended in `/`.
    fn cmp_key(&self, other_name: &[u8], other_is_dir: bool) -> std::cmp::Ordering {
        let (name, is_dir) = match self {
            Item::File { name, .. } => (*name, false),
            Item::Dir { name, .. } => (*name, true),
        };
        let a = name.iter().chain(is_dir.then_some(&b'/'));
        let b = other_name.iter().chain(other_is_dir.then_some(&b'/'));
        a.cmp(b)
    }
}

impl<'a> Walk<'a> {
    /// Compares directory `prefix` (empty, or ending in `/`) of HEAD (`tree`) with the index entries
    /// in `range`; its subdirectories go to `pending`.
    fn dir(
        &mut self,
        prefix: &[u8],
        tree: Option<ObjectId>,
        cache: Option<&'a CacheTree>,
        range: Range<usize>,
    ) -> Result<()> {
        // Never deeper than git itself goes.
        if prefix.iter().filter(|b| **b == b'/').count() > crate::git::pathsafe::MAX_TREE_DEPTH {
            return Err(crate::git::pathsafe::too_deep("the staged tree"));
        }
        if let (Some(tree), Some(cache)) = (tree, cache) {
            if cache.num_entries.is_some() && cache.id == tree {
                return Ok(());
            }
        }
        if tree.is_none() && range.is_empty() {
            return Ok(());
        }
        let tree_obj = match tree {
            Some(id) => Some(
                self.repo
                    .inner
                    .find_tree(id)
                    .context(|| format!("could not read tree {id}"))?,
            ),
            None => None,
        };
        let decoded = match &tree_obj {
            Some(t) => Some(
                t.decode()
                    .context(|| format!("could not decode tree {}", t.id))?,
            ),
            None => None,
        };
        let tree_items: Vec<Item<'_>> = decoded
            .iter()
            .flat_map(|t| t.entries.iter())
            .map(|e| {
                if e.mode.is_tree() {
                    Item::Dir {
                        name: e.filename.as_bytes(),
                        id: e.oid.to_owned(),
                    }
                } else {
                    Item::File {
                        name: e.filename.as_bytes(),
                        kind: e.mode.kind(),
                        id: e.oid.to_owned(),
                    }
                }
            })
            .collect();
        let children = Children::new(cache);
        let entries = self.index.entries();
        let mut t = 0;
        let mut i = range.start;
        while i < range.end || t < tree_items.len() {
            // The next index item: a file of this directory, or a subdirectory with its entry range.
            let next = if i < range.end {
                let entry = &entries[i];
                let path = entry.path(self.index);
                let rel = &path[prefix.len()..];
                match rel.find_byte(b'/') {
                    Some(slash) => {
                        let name_end = prefix.len() + slash + 1;
                        let dir_prefix = &path[..name_end];
                        let end = i + entries[i..range.end]
                            .partition_point(|e| e.path(self.index).starts_with(dir_prefix));
                        Some((rel[..slash].to_vec(), true, i..end))
                    }
                    None => Some((rel.to_vec(), false, i..i + 1)),
                }
            } else {
                None
            };
            let order = match (&next, tree_items.get(t)) {
                (Some((name, is_dir, _)), Some(item)) => item.cmp_key(name, *is_dir).reverse(),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => break,
            };
            match order {
                // Only in the index.
                std::cmp::Ordering::Less => {
                    let (name, is_dir, sub) =
                        next.expect("order is Less only when there is an index item");
                    i = sub.end;
                    if is_dir {
                        let child_prefix = join(prefix, &name, true);
                        self.sub_dir(&child_prefix, None, children.get(&name), sub)?;
                    } else {
                        self.added(prefix, &name, sub.start);
                    }
                }
                // Only in HEAD.
                std::cmp::Ordering::Greater => {
                    match &tree_tree_item(&tree_items[t]) {
                        (name, None, kind, id) => self.push(
                            join(prefix, name, false),
                            ChangeKind::Deleted,
                            Some((*kind, *id)),
                            None,
                        ),
                        (name, Some(sub_tree), _, _) => {
                            let child_prefix = join(prefix, name, true);
                            self.pending.push((
                                child_prefix,
                                Some(*sub_tree),
                                None,
                                range.end..range.end,
                            ));
                        }
                    }
                    t += 1;
                }
                std::cmp::Ordering::Equal => {
                    let (name, is_dir, sub) =
                        next.expect("order is Equal only when there is an index item");
                    i = sub.end;
                    match &tree_items[t] {
                        Item::Dir { id, .. } => {
                            debug_assert!(is_dir);
                            let child_prefix = join(prefix, &name, true);
                            self.sub_dir(&child_prefix, Some(*id), children.get(&name), sub)?;
                        }
                        Item::File { kind, id, .. } => {
                            let entry = &entries[sub.start];
                            if entry.flags.contains(Flags::INTENT_TO_ADD) {
                                // An intent-to-add entry is not committed: HEAD's file is removed by the commit.
                                self.push(
                                    join(prefix, &name, false),
                                    ChangeKind::Deleted,
                                    Some((*kind, *id)),
                                    None,
                                );
                            } else if let Some(new_kind) = entry_kind(entry.mode) {
                                if new_kind != *kind || entry.id != *id {
                                    self.push(
                                        join(prefix, &name, false),
                                        ChangeKind::Modified,
                                        Some((*kind, *id)),
                                        Some((new_kind, entry.id)),
                                    );
                                }
                            }
                        }
                    }
                    t += 1;
                }
            }
        }
        Ok(())
    }

    /// A subdirectory whose index entries are `range`: a sparse-index directory entry is compared as a tree.
    fn sub_dir(
        &mut self,
        prefix: &[u8],
        tree: Option<ObjectId>,
        cache: Option<&'a CacheTree>,
        range: Range<usize>,
    ) -> Result<()> {
        let entries = self.index.entries();
        if range.len() == 1 && entries[range.start].mode.is_sparse() {
            // Sparse index: the entry stands for a whole tree that is not checked out.
            let sparse_tree = entries[range.start].id;
            let old = tree.unwrap_or_else(|| crate::git::objects::empty_tree(self.repo));
            let base = String::from_utf8_lossy(prefix).into_owned();
            for mut change in crate::git::diff::tree_to_tree(self.repo, old, sparse_tree)? {
                change.path = format!("{base}{}", change.path);
                let dir = prefix.strip_suffix(b"/").unwrap_or(prefix);
                change.unsafe_path |= !dir.is_empty() && !crate::git::pathsafe::is_safe_path(dir);
                self.out.push(change);
            }
            return Ok(());
        }
        self.pending.push((prefix.to_vec(), tree, cache, range));
        Ok(())
    }

    fn added(&mut self, prefix: &[u8], name: &[u8], at: usize) {
        let entry = &self.index.entries()[at];
        if entry.flags.contains(Flags::INTENT_TO_ADD) {
            return;
        }
        if let Some(kind) = entry_kind(entry.mode) {
            self.push(
                join(prefix, name, false),
                ChangeKind::Added,
                None,
                Some((kind, entry.id)),
            );
        }
    }

    fn push(
        &mut self,
        path: Vec<u8>,
        kind: ChangeKind,
        old: Option<(EntryKind, ObjectId)>,
        new: Option<(EntryKind, ObjectId)>,
    ) {
        let link = new.is_some_and(|(k, _)| k == EntryKind::Link);
        let unsafe_path = !crate::git::pathsafe::is_safe_entry(&path, link);
        let path = String::from_utf8_lossy(&path).into_owned();
        // A conflicted path has several stages; it is one change.
        if self.out.last().is_some_and(|last| last.path == path) {
            return;
        }
        self.out.push(ChangedPath {
            path,
            kind,
            old,
            new,
            unsafe_path,
        });
    }
}

/// Splits a HEAD item into (name, subtree id if a directory, kind, id).
fn tree_tree_item<'t>(item: &Item<'t>) -> (&'t [u8], Option<ObjectId>, EntryKind, ObjectId) {
    match item {
        Item::File { name, kind, id } => (name, None, *kind, *id),
        Item::Dir { name, id } => (name, Some(*id), EntryKind::Tree, *id),
    }
}

fn join(prefix: &[u8], name: &[u8], dir: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(prefix.len() + name.len() + 1);
    out.extend_from_slice(prefix);
    out.extend_from_slice(name);
    if dir {
        out.push(b'/');
    }
    out
}

/// The cached-tree children of one directory, found by name.
enum Children<'c> {
    None,
    Few(&'c [CacheTree]),
    Many(HashMap<&'c [u8], &'c CacheTree>),
}

impl<'c> Children<'c> {
    fn new(cache: Option<&'c CacheTree>) -> Self {
        match cache {
            None => Children::None,
            Some(c) if c.children.len() <= 16 => Children::Few(&c.children),
            Some(c) => Children::Many(c.children.iter().map(|t| (&t.name[..], t)).collect()),
        }
    }

    fn get(&self, name: &[u8]) -> Option<&'c CacheTree> {
        match self {
            Children::None => None,
            Children::Few(list) => list.iter().find(|t| &t.name[..] == name),
            Children::Many(map) => map.get(name).copied(),
        }
    }
}
