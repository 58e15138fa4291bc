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

use super::diff::{ChangeKind, ChangedPath};
use super::{ObjectId, Repo};
use crate::error::{Context, Error, Result};
use gix::bstr::{BStr, ByteSlice};
use gix::index::entry::{Flags, Mode};
use gix::index::extension::Tree as CacheTree;
use gix::object::tree::EntryKind;
use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;

/// Opens the index at `path` the way git reads it (no checksum verification, which only `git fsck` does).
pub fn open_index(repo: &Repo, path: &Path) -> Result<gix::index::File> {
    gix::index::File::at(
        path,
        repo.inner.object_hash(),
        true,
        gix::index::decode::Options {
            thread_limit: None,
            min_extension_block_in_bytes_for_threading: 0,
            expected_checksum: None,
            alloc_limit_bytes: None,
        },
    )
    .map_err(|e| Error::repo(format!("could not read the index '{}'", path.display()), e))
}

/// Returns the index the caller's git would commit: `GIT_INDEX_FILE` when set (hooks), else the worktree's index.
pub fn index_path(repo: &Repo) -> std::path::PathBuf {
    repo.inner.index_path()
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
    };
    let root = index.tree().filter(|t| t.name.is_empty());
    walk.dir(b"", head_tree, root, 0..index.entries().len())?;
    walk.out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(walk.out)
}

struct Walk<'a> {
    repo: &'a Repo,
    index: &'a gix::index::State,
    out: Vec<ChangedPath>,
}

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

impl Walk<'_> {
    /// Compares directory `prefix` (empty, or ending in `/`) of HEAD (`tree`) with the index entries in `range`.
    fn dir(
        &mut self,
        prefix: &[u8],
        tree: Option<ObjectId>,
        cache: Option<&CacheTree>,
        range: Range<usize>,
    ) -> Result<()> {
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
                            self.dir(&child_prefix, Some(*sub_tree), None, range.end..range.end)?;
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
        cache: Option<&CacheTree>,
        range: Range<usize>,
    ) -> Result<()> {
        let entries = self.index.entries();
        if range.len() == 1 && entries[range.start].mode.is_sparse() {
            // Sparse index: the entry stands for a whole tree that is not checked out.
            let sparse_tree = entries[range.start].id;
            let old = tree.unwrap_or_else(|| super::objects::empty_tree(self.repo));
            let base = String::from_utf8_lossy(prefix).into_owned();
            for mut change in super::diff::tree_to_tree(self.repo, old, sparse_tree)? {
                change.path = format!("{base}{}", change.path);
                self.out.push(change);
            }
            return Ok(());
        }
        self.dir(prefix, tree, cache, range)
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

/// The tree entry kind an index entry is committed as; `None` for a sparse directory.
pub fn entry_kind(mode: Mode) -> Option<EntryKind> {
    // Exact comparisons: the mode bits overlap (a gitlink's bits contain a symlink's).
    if mode == Mode::FILE {
        Some(EntryKind::Blob)
    } else if mode == Mode::FILE_EXECUTABLE {
        Some(EntryKind::BlobExecutable)
    } else if mode == Mode::SYMLINK {
        Some(EntryKind::Link)
    } else if mode == Mode::COMMIT {
        Some(EntryKind::Commit)
    } else {
        None
    }
}

/// Returns the staged entry at `path` (stage 0), as (kind, id); `None` when the index has no such file.
pub fn entry_at(index: &gix::index::State, path: &str) -> Option<(EntryKind, ObjectId)> {
    let entry = index.entry_by_path(BStr::new(path))?;
    if entry.flags.contains(Flags::INTENT_TO_ADD) {
        return None;
    }
    Some((entry_kind(entry.mode)?, entry.id))
}

/// Sets `path` in the index file at `index_path` to `entry` (kind and id), or removes it (`None`), then
/// writes the index back without its cached-tree extension (which would now be stale).
///
/// The file is written beside the index and renamed over it, so this works
/// while git holds `index.lock` during a commit (it rolls that lock back when
/// the pre-commit hook fails). Changed entries get an empty stat, so git
/// re-reads their files before trusting them.
pub fn set_index_entries(
    repo: &Repo,
    index_path: &Path,
    edits: &[(String, Option<(EntryKind, ObjectId)>)],
) -> Result<()> {
    use gix::index::entry::{Stage, Stat};
    let mut index = if index_path.exists() {
        open_index(repo, index_path)?
    } else {
        gix::index::File::from_state(
            gix::index::State::new(repo.inner.object_hash()),
            index_path.to_path_buf(),
        )
    };
    let removed: Vec<&str> = edits
        .iter()
        .filter(|(_, e)| e.is_none())
        .map(|(p, _)| p.as_str())
        .collect();
    if !removed.is_empty() {
        index.remove_entries(|_, path, _| removed.iter().any(|r| path == r.as_bytes()));
    }
    let mut pushed = false;
    for (path, entry) in edits {
        let Some((kind, id)) = entry else { continue };
        let mode = match kind {
            EntryKind::Blob => Mode::FILE,
            EntryKind::BlobExecutable => Mode::FILE_EXECUTABLE,
            EntryKind::Link => Mode::SYMLINK,
            EntryKind::Commit => Mode::COMMIT,
            EntryKind::Tree => continue,
        };
        match index.entry_mut_by_path_and_stage(BStr::new(path), Stage::Unconflicted) {
            Some(e) => {
                e.id = *id;
                e.mode = mode;
                e.stat = Stat::default();
                e.flags.remove(Flags::INTENT_TO_ADD);
            }
            None => {
                index.dangerously_push_entry(
                    Stat::default(),
                    *id,
                    Flags::empty(),
                    mode,
                    BStr::new(path),
                );
                pushed = true;
            }
        }
    }
    if pushed {
        index.sort_entries();
    }
    index.remove_tree();
    let tmp = index_path.with_file_name(format!("index.git-task-{}.tmp", std::process::id()));
    let result = (|| -> Result<()> {
        let file = std::fs::File::create(&tmp)
            .context(|| format!("could not write '{}'", tmp.display()))?;
        let mut out = std::io::BufWriter::new(file);
        index
            .write_to(&mut out, gix::index::write::Options::default())
            .map_err(|e| Error::repo(format!("could not write '{}'", tmp.display()), e))?;
        use std::io::Write;
        out.flush()
            .context(|| format!("could not write '{}'", tmp.display()))?;
        std::fs::rename(&tmp, index_path)
            .context(|| format!("could not replace '{}'", index_path.display()))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Returns the tree a commit of the index at `path` would record, read from the root of its
/// cached-tree extension, or `None` when that is not known (no extension, an invalidated root, a
/// split index).
///
/// Git refreshes the cached tree before it runs `pre-commit` for `git commit` and `git commit -a`,
/// and commits exactly that tree, so the hook can diff HEAD's tree against it without decoding a
/// single index entry. The entries are only skipped over (their lengths are in their flags), in
/// one buffered pass; nothing is allocated per entry.
pub fn cached_root_tree(path: &Path, hash: gix::hash::Kind) -> Result<Option<ObjectId>> {
    use std::io::{BufRead, Read};
    let io = |e: std::io::Error| {
        Error::repo(format!("could not read the index '{}'", path.display()), e)
    };
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(e)),
    };
    let len = file.metadata().map_err(io)?.len();
    let hash_len = hash.len_in_bytes() as u64;
    let mut r = std::io::BufReader::with_capacity(1 << 18, file);
    let mut header = [0u8; 12];
    r.read_exact(&mut header).map_err(io)?;
    if &header[..4] != b"DIRC" {
        return Ok(None);
    }
    let version = u32::from_be_bytes(header[4..8].try_into().expect("4 bytes"));
    let entries = u32::from_be_bytes(header[8..12].try_into().expect("4 bytes"));
    if !(2..=4).contains(&version) {
        return Ok(None);
    }
    let mut pos: u64 = 12;
    let mut fixed = [0u8; 62];
    for _ in 0..entries {
        r.read_exact(&mut fixed).map_err(io)?;
        let flags = u16::from_be_bytes([fixed[60], fixed[61]]);
        let mut size = 62u64;
        if flags & 0x4000 != 0 {
            r.seek_relative(2).map_err(io)?;
            size += 2;
        }
        if version == 4 {
            // A varint (bytes of the previous path to drop), then the rest of the path up to NUL.
            loop {
                let mut b = [0u8; 1];
                r.read_exact(&mut b).map_err(io)?;
                size += 1;
                if b[0] & 0x80 == 0 {
                    break;
                }
            }
            let mut skipped = Vec::new();
            size += r.read_until(0, &mut skipped).map_err(io)? as u64;
        } else {
            let name_len = u64::from(flags & 0x0fff);
            let name_len = if name_len < 0x0fff {
                r.seek_relative(name_len as i64).map_err(io)?;
                name_len
            } else {
                let mut skipped = Vec::new();
                r.read_until(0, &mut skipped).map_err(io)? as u64 - 1
            };
            // Entries are NUL-padded to a multiple of 8 bytes, with at least one NUL.
            let padded = (size + name_len + 8) & !7;
            let consumed = size + name_len + u64::from(name_len >= 0x0fff);
            r.seek_relative((padded - consumed) as i64).map_err(io)?;
            size = padded;
        }
        pos += size;
    }
    while pos + 8 + hash_len <= len {
        let mut ext = [0u8; 8];
        r.read_exact(&mut ext).map_err(io)?;
        let ext_len = u64::from(u32::from_be_bytes(ext[4..8].try_into().expect("4 bytes")));
        match &ext[..4] {
            b"TREE" => {
                let mut body = vec![0u8; ext_len as usize];
                r.read_exact(&mut body).map_err(io)?;
                return Ok(parse_tree_root(&body, hash));
            }
            // A split index: the entries live in another file; let gix put it together.
            b"link" => return Ok(None),
            _ => r.seek_relative(ext_len as i64).map_err(io)?,
        }
        pos += 8 + ext_len;
    }
    Ok(None)
}

/// Parses the first record of a `TREE` extension body: `<name>\0<entry count> <subtrees>\n<id>`.
fn parse_tree_root(body: &[u8], hash: gix::hash::Kind) -> Option<ObjectId> {
    let nul = body.iter().position(|&b| b == 0)?;
    if nul != 0 {
        return None;
    }
    let nl = nul + body[nul..].iter().position(|&b| b == b'\n')?;
    let counts = std::str::from_utf8(&body[nul + 1..nl]).ok()?;
    let (count, _) = counts.split_once(' ')?;
    if count.parse::<i64>().ok()? < 0 {
        return None;
    }
    let id = body.get(nl + 1..nl + 1 + hash.len_in_bytes())?;
    ObjectId::try_from(id).ok()
}
