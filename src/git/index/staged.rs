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

use crate::error::{Context, Error, Result};
use crate::git::diff::{ChangeKind, ChangedPath};
use crate::git::{ObjectId, Repo};
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
    let io = |e: std::io::Error| {
        Error::repo(format!("could not read the index '{}'", path.display()), e)
    };
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(e)),
    };
    let mut chunks = Chunks::new(file);
    root_in_index(&mut chunks, hash).map_err(io)
}

/// Reads a file front to back through a window of at least the bytes asked for,
/// so that entries are skipped inside the buffer instead of read one by one.
struct Chunks {
    file: std::fs::File,
    buf: Vec<u8>,
    /// The window is `buf[lo..hi]`.
    lo: usize,
    hi: usize,
    /// Whether a read returned nothing: no use asking again.
    eof: bool,
}

impl Chunks {
    const SIZE: usize = 1 << 18;

    fn new(file: std::fs::File) -> Chunks {
        Chunks {
            file,
            buf: vec![0; Self::SIZE],
            lo: 0,
            hi: 0,
            eof: false,
        }
    }

    /// The next `n` or more bytes, fewer only at the end of the file.
    fn window(&mut self, n: usize) -> std::io::Result<&[u8]> {
        use std::io::Read;
        if self.hi - self.lo < n && !self.eof {
            self.buf.copy_within(self.lo..self.hi, 0);
            self.hi -= self.lo;
            self.lo = 0;
            if self.buf.len() < n {
                self.buf.resize(n.max(Self::SIZE), 0);
            }
            while self.hi < n {
                match self.file.read(&mut self.buf[self.hi..]) {
                    Ok(0) => {
                        self.eof = true;
                        break;
                    }
                    Ok(k) => self.hi += k,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(&self.buf[self.lo..self.hi])
    }

    /// How many bytes the window holds now.
    fn available(&self) -> usize {
        self.hi - self.lo
    }

    /// Moves past `n` bytes of the window (no more than it holds).
    fn consume(&mut self, n: usize) {
        debug_assert!(n <= self.available());
        self.lo += n;
    }
}

/// Finds the cached root tree of the index read by `chunks` (see [`cached_root_tree`]):
/// `None` when the index has none, or is not one this can read.
fn root_in_index(chunks: &mut Chunks, hash: gix::hash::Kind) -> std::io::Result<Option<ObjectId>> {
    let be32 = |b: &[u8], at: usize| u32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"));
    // The longest entry path stored with its length; longer ones end at their NUL.
    const NAME_MAX: usize = 0x0fff;
    let header = chunks.window(12)?;
    if header.len() < 12 || &header[..4] != b"DIRC" {
        return Ok(None);
    }
    let (version, entries) = (be32(header, 4), be32(header, 8));
    if !(2..=4).contains(&version) {
        return Ok(None);
    }
    chunks.consume(12);
    for _ in 0..entries {
        let w = chunks.window(64 + NAME_MAX + 8)?;
        if w.len() < 62 {
            return Ok(None);
        }
        let flags = u16::from_be_bytes([w[60], w[61]]);
        let name = if flags & 0x4000 != 0 { 64 } else { 62 };
        let size = if version == 4 {
            // A varint (bytes of the previous path to drop), then the rest of the path up to NUL.
            let Some(varint) = w
                .get(name..)
                .and_then(|r| r.iter().position(|b| b & 0x80 == 0))
            else {
                return Ok(None);
            };
            let rest = name + varint + 1;
            match position_of_nul(chunks, rest)? {
                Some(nul) => nul + 1,
                None => return Ok(None),
            }
        } else {
            let name_len = match usize::from(flags & 0x0fff) {
                NAME_MAX => match position_of_nul(chunks, name)? {
                    Some(nul) => nul - name,
                    None => return Ok(None),
                },
                n => n,
            };
            // Entries are NUL-padded to a multiple of 8 bytes, with at least one NUL.
            (name + name_len + 8) & !7
        };
        if size > chunks.available() {
            return Ok(None);
        }
        chunks.consume(size);
    }
    let hash_len = hash.len_in_bytes();
    loop {
        let w = chunks.window(8 + hash_len)?;
        if w.len() < 8 + hash_len {
            return Ok(None);
        }
        let (signature, len) = ([w[0], w[1], w[2], w[3]], be32(w, 4) as usize);
        chunks.consume(8);
        match &signature {
            b"TREE" => {
                let body = chunks.window(len)?;
                return Ok(body.get(..len).and_then(|b| parse_tree_root(b, hash)));
            }
            // A split index: the entries live in another file; let gix put it together.
            b"link" => return Ok(None),
            _ => {
                // Skipped in windows of at most a chunk: an extension can be large.
                let mut left = len;
                while left > 0 {
                    let step = chunks.window(left.min(Chunks::SIZE))?.len().min(left);
                    if step == 0 {
                        return Ok(None);
                    }
                    chunks.consume(step);
                    left -= step;
                }
            }
        }
    }
}

/// The offset of the first NUL at or after `from` in the window, growing it as needed.
fn position_of_nul(chunks: &mut Chunks, from: usize) -> std::io::Result<Option<usize>> {
    let mut want = from + 256;
    loop {
        let w = chunks.window(want)?;
        if let Some(i) = w.get(from..).and_then(|r| r.iter().position(|&b| b == 0)) {
            return Ok(Some(from + i));
        }
        if w.len() < want {
            return Ok(None);
        }
        want *= 2;
    }
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

#[cfg(test)]
mod tests {
    use super::cached_root_tree;

    /// An index cut short (a disk full, a copy in progress) has no cached tree: the
    /// caller falls back to gix, which reports the damage.
    #[test]
    fn a_truncated_index_has_no_cached_tree() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index");
        let mut entry = vec![0u8; 62];
        entry[61] = 100; // a 100-byte path, of which only 5 bytes are there
        for cut in [4, 12, 40, 62, 67] {
            let mut bytes = b"DIRC\0\0\0\x02\0\0\0\x01".to_vec();
            bytes.extend_from_slice(&entry);
            bytes.extend_from_slice(b"short");
            bytes.truncate(cut);
            std::fs::write(&path, &bytes).unwrap();
            let found = cached_root_tree(&path, gix::hash::Kind::Sha1).unwrap();
            assert_eq!(found, None, "cut at {cut}");
        }
    }
}
