//! A cheap "has uncommitted changes" check for `list`.
//!
//! `git status` in every one of a thousand worktrees is far too slow for
//! `list` (SPEC §10: 1,000 tasks in 100 ms). This checks tracked files the way
//! git refreshes its index: the index's cached tree (or its entries) against
//! HEAD's tree for staged changes, then an `lstat` of every entry against its
//! stat data, hashing a file only when its stat data cannot be trusted (racy
//! git). Untracked files are found like git's untracked cache does: after a
//! full status found the worktree clean, the stat data of every entry and of
//! every directory holding one is remembered beside the index
//! (`git-task-clean`). A new file changes its directory's mtime, so while the
//! directories are unchanged there is nothing untracked to look for.

use super::ObjectId;
use gix::bstr::{BStr, BString, ByteSlice};
use gix::index::entry::{Flags, Mode, Stat};
use gix::object::tree::EntryKind;
use std::path::{Path, PathBuf};

/// What the quick look found.
pub enum Quick {
    /// Something tracked is staged or changed.
    Dirty,
    /// Nothing changed since a full status found the worktree clean.
    Clean,
    /// Tracked files are unchanged but untracked ones may exist (or the look could not decide):
    /// run a full status, and if it is clean, call [`Pending::remember`].
    NeedsFull(Option<Pending>),
}

/// What to remember once a full status confirmed a clean worktree.
pub struct Pending {
    path: PathBuf,
    memo: Memo,
}

impl Pending {
    /// Remembers the worktree as clean, so the next quick look needs only `lstat`s.
    pub fn remember(self) {
        self.memo.write(&self.path);
    }
}

/// Looks at the worktree at `path`, whose HEAD is `head_commit`, for uncommitted changes.
///
/// `head_tree()` and `head_entries(tree)` (the flattened HEAD tree in path order)
/// are only called when the index changed since the last clean look.
pub fn quick_check(
    path: &Path,
    head_commit: ObjectId,
    head_tree: impl FnOnce() -> Option<ObjectId>,
    head_entries: impl FnOnce(ObjectId) -> Option<std::rc::Rc<Vec<(BString, EntryKind, ObjectId)>>>,
) -> Quick {
    match look(path, head_commit, head_tree, head_entries) {
        Some(q) => q,
        None => Quick::NeedsFull(None),
    }
}

fn look(
    path: &Path,
    head_commit: ObjectId,
    head_tree: impl FnOnce() -> Option<ObjectId>,
    head_entries: impl FnOnce(ObjectId) -> Option<std::rc::Rc<Vec<(BString, EntryKind, ObjectId)>>>,
) -> Option<Quick> {
    let git_dir = git_dir_of(path)?;
    let index_path = git_dir.join("index");
    let index_meta = gix::index::fs::Metadata::from_path_no_follow(&index_path).ok()?;
    let index_stat = Stat::from_fs(&index_meta).ok()?;
    let memo_path = git_dir.join(CLEAN_MEMO);
    let memo = Memo::read(&memo_path);
    // The memo is only written when everything was clean: with the same HEAD and
    // an untouched index, nothing can be staged now either.
    let index_unchanged = memo
        .as_ref()
        .is_some_and(|m| m.head == head_commit && m.index == Fingerprint::of_stat(&index_stat));
    let index =
        gix::index::File::at(&index_path, gix::hash::Kind::Sha1, true, Default::default()).ok()?;
    if !index_unchanged {
        let head_tree = head_tree()?;
        match index.tree().filter(|t| t.num_entries.is_some()) {
            Some(tree) if tree.id != head_tree => return Some(Quick::Dirty),
            Some(_) => {}
            None => {
                let head = head_entries(head_tree)?;
                if head.len() != index.entries().len() {
                    return Some(Quick::Dirty);
                }
                // Both are in full-path byte order: git's tree order recursed equals index order.
                for (entry, (path, kind, id)) in index.entries().iter().zip(head.iter()) {
                    if entry.path(&index) != path
                        || *id != entry.id
                        || entry.mode.to_tree_entry_mode().map(|m| m.kind()) != Some(*kind)
                    {
                        return Some(Quick::Dirty);
                    }
                }
            }
        }
    }
    let timestamp = index.timestamp();
    let options = gix::index::entry::stat::Options::default();
    let mut files = Fingerprint::new();
    let mut dirs = Fingerprint::new();
    let mut paths = Fingerprint::new();
    let mut needs_hash = Vec::new();
    let mut file = FilePath::new(path);
    let mut walk = Dirs::new(path, &mut dirs)?;
    for entry in index.entries() {
        if entry.flags.contains(Flags::SKIP_WORKTREE) {
            continue;
        }
        if entry.stage_raw() != 0 || entry.flags.contains(Flags::INTENT_TO_ADD) {
            return Some(Quick::Dirty);
        }
        let rel = entry.path(&index);
        paths.path(rel);
        walk.visit(rel, &mut file, &mut dirs)?;
        let Ok(meta) = gix::index::fs::Metadata::from_path_no_follow(file.set(rel)) else {
            return Some(Quick::Dirty);
        };
        if entry.mode == Mode::COMMIT {
            continue;
        }
        let stat = Stat::from_fs(&meta).ok()?;
        let kind_matches = if entry.mode == Mode::SYMLINK {
            meta.is_symlink()
        } else {
            meta.is_file() && meta.is_executable() == (entry.mode == Mode::FILE_EXECUTABLE)
        };
        if !kind_matches {
            return Some(Quick::Dirty);
        }
        files.add(rel, &stat);
        if entry.stat.matches(&stat, options) && !entry.stat.is_racy(timestamp, options) {
            continue;
        }
        if u64::from(entry.stat.size) != meta.len()
            && entry.mode != Mode::SYMLINK
            && entry.stat.size != 0
        {
            return Some(Quick::Dirty);
        }
        needs_hash.push(entry);
    }
    let now = Memo {
        head: head_commit,
        index: Fingerprint::of_stat(&index_stat),
        files: files.0,
        dirs: dirs.0,
        paths: paths.0,
    };
    let remembered = memo
        .as_ref()
        .filter(|m| index_unchanged && m.files == now.files);
    if remembered.is_none() {
        // Stat data is stale or racy: compare content. Right after a checkout and a commit in the
        // same second this is many files, so two threads share them.
        let same = if needs_hash.len() >= PARALLEL_HASH_MIN {
            let (a, b) = needs_hash.split_at(needs_hash.len() / 2);
            std::thread::scope(|s| {
                let other = s.spawn(|| contents_match(path, &index, a));
                let here = contents_match(path, &index, b);
                match (other.join().ok().flatten(), here) {
                    (Some(x), Some(y)) => Some(x && y),
                    _ => None,
                }
            })
        } else {
            contents_match(path, &index, &needs_hash)
        };
        if !same? {
            return Some(Quick::Dirty);
        }
    }
    // Tracked files are clean now. Nothing untracked can have appeared while the same paths
    // are tracked and no directory holding them gained or lost an entry since the clean look.
    if memo
        .as_ref()
        .is_some_and(|m| m.dirs == now.dirs && m.paths == now.paths)
    {
        if remembered.is_none() {
            now.write(&memo_path);
        }
        return Some(Quick::Clean);
    }
    Some(Quick::NeedsFull(Some(Pending {
        path: memo_path,
        memo: now,
    })))
}

/// From this many files to hash on, [`look`] hashes on two threads.
const PARALLEL_HASH_MIN: usize = 64;

/// Returns whether every file of `entries` (below the worktree `root`) hashes to its entry's id;
/// `None` when one cannot be read.
fn contents_match(
    root: &Path,
    index: &gix::index::File,
    entries: &[&gix::index::Entry],
) -> Option<bool> {
    let mut file = FilePath::new(root);
    for entry in entries {
        let file = file.set(entry.path(index));
        let bytes = if entry.mode == Mode::SYMLINK {
            std::fs::read_link(file)
                .ok()
                .and_then(|t| gix::path::into_bstr(t).ok().map(|b| b.to_vec()))?
        } else {
            std::fs::read(file).ok()?
        };
        let id =
            gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::object::Kind::Blob, &bytes).ok()?;
        if id != entry.id {
            return Some(false);
        }
    }
    Some(true)
}

/// Remembers a worktree that was just checked out as clean, so the first quick look needs no full status.
///
/// Only for a checkout that nothing has touched yet, with `index` the index just
/// written for it: the stat data gix recorded while writing each file is taken
/// as what a clean look would see. Anything that changes a file or adds one
/// later changes a stat or a directory's mtime, and the next look falls back to
/// a full status. Best effort: without the memo, the first look is slower.
pub fn remember_index(path: &Path, head_commit: ObjectId, index: &gix::index::File) {
    let _ = remember(path, head_commit, index);
}

fn remember(path: &Path, head_commit: ObjectId, index: &gix::index::File) -> Option<()> {
    let git_dir = git_dir_of(path)?;
    let index_stat =
        Stat::from_fs(&gix::index::fs::Metadata::from_path_no_follow(index.path()).ok()?).ok()?;
    let mut files = Fingerprint::new();
    let mut dirs = Fingerprint::new();
    let mut paths = Fingerprint::new();
    let mut file = FilePath::new(path);
    let mut walk = Dirs::new(path, &mut dirs)?;
    for entry in index.entries() {
        if entry.flags.contains(Flags::SKIP_WORKTREE) {
            continue;
        }
        let rel = entry.path(index);
        paths.path(rel);
        walk.visit(rel, &mut file, &mut dirs)?;
        if entry.mode != Mode::COMMIT {
            files.add(rel, &entry.stat);
        }
    }
    Memo {
        head: head_commit,
        index: Fingerprint::of_stat(&index_stat),
        files: files.0,
        dirs: dirs.0,
        paths: paths.0,
    }
    .write(&git_dir.join(CLEAN_MEMO));
    Some(())
}

/// Visits every directory holding an index entry once, adding its stat data to a fingerprint.
struct Dirs<'a> {
    last: Option<&'a BStr>,
}

impl<'a> Dirs<'a> {
    /// Starts with the worktree's root directory.
    fn new(root: &Path, dirs: &mut Fingerprint) -> Option<Self> {
        dirs.add_dir(
            BStr::new(""),
            &Stat::from_fs(&gix::index::fs::Metadata::from_path_no_follow(root).ok()?).ok()?,
        );
        Some(Dirs { last: None })
    }

    /// Adds the directories of `rel` not seen yet (entries are sorted, so a directory's entries are together).
    fn visit(&mut self, rel: &'a BStr, file: &mut FilePath, dirs: &mut Fingerprint) -> Option<()> {
        let mut dir = rel.rfind_byte(b'/').map(|i| &rel[..i]);
        while let Some(d) = dir {
            if self
                .last
                .is_some_and(|l| l == d || l.starts_with(d) && l.get(d.len()) == Some(&b'/'))
            {
                break;
            }
            let meta = gix::index::fs::Metadata::from_path_no_follow(file.set(d.as_bstr())).ok()?;
            dirs.add_dir(d.as_bstr(), &Stat::from_fs(&meta).ok()?);
            dir = d.rfind_byte(b'/').map(|i| &d[..i]);
        }
        self.last = rel.rfind_byte(b'/').map(|i| rel[..i].as_bstr());
        Some(())
    }
}

/// A reusable `<worktree>/<path>` buffer: `Path::join` per entry costs more than the `lstat`.
struct FilePath {
    buf: std::path::PathBuf,
    root_len: usize,
}

impl FilePath {
    fn new(root: &Path) -> Self {
        let buf = root.join("");
        let root_len = buf.as_os_str().len();
        FilePath { buf, root_len }
    }

    fn set(&mut self, rel: &gix::bstr::BStr) -> &Path {
        let mut bytes = std::mem::take(&mut self.buf)
            .into_os_string()
            .into_encoded_bytes();
        bytes.truncate(self.root_len);
        bytes.extend_from_slice(rel);
        self.buf = gix::path::from_bstring(BString::from(bytes)).unwrap_or_default();
        &self.buf
    }
}

/// File in a worktree's private git dir remembering its last clean check.
const CLEAN_MEMO: &str = "git-task-clean";

/// What a clean check saw: HEAD, and the stat data of the index file, of every entry and of their directories.
#[derive(PartialEq, Eq)]
struct Memo {
    head: ObjectId,
    index: u64,
    files: u64,
    dirs: u64,
    paths: u64,
}

impl Memo {
    fn read(path: &Path) -> Option<Memo> {
        let text = std::fs::read_to_string(path).ok()?;
        let mut parts = text.split_whitespace();
        let head = parts.next()?.parse().ok()?;
        let index = parts.next()?.parse().ok()?;
        let files = parts.next()?.parse().ok()?;
        let dirs = parts.next()?.parse().ok()?;
        let paths = parts.next()?.parse().ok()?;
        Some(Memo {
            paths,
            head,
            index,
            files,
            dirs,
        })
    }

    fn write(&self, path: &Path) {
        // Best effort: a memo that cannot be written only costs speed next time.
        let _ = std::fs::write(
            path,
            format!(
                "{} {} {} {} {}\n",
                self.head, self.index, self.files, self.dirs, self.paths
            ),
        );
    }
}

/// FNV-1a over paths and full stat data.
struct Fingerprint(u64);

impl Fingerprint {
    fn new() -> Self {
        Fingerprint(0xcbf2_9ce4_8422_2325)
    }
    fn of_stat(stat: &Stat) -> u64 {
        let mut f = Fingerprint::new();
        f.add(gix::bstr::BStr::new(""), stat);
        f.0
    }
    fn bytes(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn path(&mut self, path: &BStr) {
        self.bytes(path);
        self.bytes(b"\0");
    }
    fn add_dir(&mut self, path: &BStr, stat: &Stat) {
        self.bytes(path);
        for n in [stat.mtime.secs, stat.mtime.nsecs, stat.ino] {
            self.bytes(&n.to_le_bytes());
        }
    }
    fn add(&mut self, path: &gix::bstr::BStr, stat: &Stat) {
        self.bytes(path);
        for n in [
            stat.mtime.secs,
            stat.mtime.nsecs,
            stat.ctime.secs,
            stat.ctime.nsecs,
            stat.size,
            stat.ino,
            stat.dev,
        ] {
            self.bytes(&n.to_le_bytes());
        }
    }
}

/// Returns the private git dir of the worktree at `path` (from its `.git` file or directory).
fn git_dir_of(path: &Path) -> Option<PathBuf> {
    let dot_git = path.join(".git");
    if dot_git.is_dir() {
        return Some(dot_git);
    }
    let text = std::fs::read_to_string(&dot_git).ok()?;
    let dir = PathBuf::from(text.strip_prefix("gitdir:")?.trim());
    Some(if dir.is_relative() {
        super::normalize(&path.join(dir))
    } else {
        dir
    })
}
