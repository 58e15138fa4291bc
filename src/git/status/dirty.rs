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
//! directories are unchanged, and so are the ignore rules (the tracked
//! `.gitignore` blobs, `info/exclude`, `core.excludesFile`), there is nothing
//! untracked to look for.
//!
//! For a small worktree the memo also keeps the tracked paths, so a look at an
//! unchanged index is only `lstat`s, without decoding the index. A big one is
//! scanned on several threads.
//!
//! Longer than 500 lines on purpose: the memo's format, the rules that say when
//! it still holds and the scan that writes it change together, and its unit
//! tests sit beside them.

use crate::git::{read_small, status::lstat, ObjectId};
use gix::bstr::{BStr, BString, ByteSlice};
use gix::index::entry::{Flags, Mode, Stat};
use gix::object::tree::EntryKind;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What the quick look found.
pub enum Quick {
    /// Something tracked is staged or changed.
    Dirty,
    /// Nothing changed since a full status found the worktree clean; with the memo that says so
    /// (to keep in [`super::memos`]), when there is one.
    Clean(Option<Memo>),
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
    /// Remembers the worktree as clean, so the next quick look needs only `lstat`s; returns the memo.
    pub fn remember(self) -> Memo {
        self.memo.write(&self.path);
        self.memo
    }
}

/// A worktree to look at: where it is, its private git dir, and handles on directories
/// above them ([`lstat::Anchors`]).
pub struct Place<'a> {
    pub path: &'a Path,
    pub git_dir: Option<&'a Path>,
    pub anchors: &'a lstat::Anchors,
}

/// Looks at the worktree at `place`, whose HEAD is `head_commit`, for uncommitted changes.
///
/// `known` is a memo this worktree had before (kept by [`super::memos`]): when it still
/// holds, the memo file is not read. Any memo once written stays true for as long as the
/// stat data it names is unchanged, so an older one is as good a witness as the newest.
///
/// `head_tree()` and `head_entries(tree)` (the flattened HEAD tree in path order)
/// are only called when the index changed since the last clean look.
pub fn quick_check(
    place: Place<'_>,
    head_commit: ObjectId,
    ignores: &IgnoreFiles,
    known: Option<&Memo>,
    head_tree: impl FnOnce() -> Option<ObjectId>,
    head_entries: impl FnOnce(ObjectId) -> Option<std::rc::Rc<Vec<(BString, EntryKind, ObjectId)>>>,
) -> Quick {
    let Some(git_dir) = place.git_dir else {
        return Quick::NeedsFull(None);
    };
    match look(
        &place,
        git_dir,
        head_commit,
        ignores,
        known,
        head_tree,
        head_entries,
    ) {
        Some(q) => q,
        None => Quick::NeedsFull(None),
    }
}

fn look(
    place: &Place<'_>,
    git_dir: &Path,
    head_commit: ObjectId,
    ignores: &IgnoreFiles,
    known: Option<&Memo>,
    head_tree: impl FnOnce() -> Option<ObjectId>,
    head_entries: impl FnOnce(ObjectId) -> Option<std::rc::Rc<Vec<(BString, EntryKind, ObjectId)>>>,
) -> Option<Quick> {
    let path = place.path;
    let index_path = git_dir.join("index");
    let index_found = place.anchors.lstat(&index_path)?;
    let index_stat = index_found.stat;
    let index_hash = file_hash(BStr::new(""), &index_stat);
    let global_ignores = ignores.fingerprint();
    // The memo is only written when everything was clean: with the same HEAD and
    // an untouched index, nothing can be staged now either.
    let index_unchanged = |m: &Memo| m.head == head_commit && m.index == index_hash;
    // Same index as at the clean look: its paths are in the memo, no need to decode it.
    let unchanged = |m: &Memo| {
        index_unchanged(m)
            && m.ignores_global == global_ignores
            && m.tracked
                .as_deref()
                .is_some_and(|t| Tracked::unchanged(place, m, t))
    };
    if let Some(m) = known.filter(|m| unchanged(m)) {
        return Some(Quick::Clean(Some(m.clone())));
    }
    let memo_path = git_dir.join(CLEAN_MEMO);
    let memo = Memo::read(&memo_path);
    // The file holds the memo just tried: no need to `lstat` everything again for it.
    let tried = memo.is_some() && memo.as_ref() == known;
    if let Some(m) = memo.as_ref().filter(|m| !tried && unchanged(m)) {
        return Some(Quick::Clean(Some(m.clone())));
    }
    let index_unchanged = memo.as_ref().is_some_and(index_unchanged);
    let index = gix::index::File::at(
        &index_path,
        gix::hash::Kind::Sha1,
        true,
        decode_options(index_found.len),
    )
    .ok()?;
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
    let scan = match scan_entries(path, &index) {
        Scanned::Done(scan) => scan,
        Scanned::Dirty => return Some(Quick::Dirty),
        Scanned::Unknown => return None,
    };
    let Scan {
        files,
        dirs,
        paths,
        ignores: ignores_index,
        needs_hash,
    } = scan;
    let now = Memo {
        head: head_commit,
        index: index_hash,
        files,
        dirs,
        paths,
        ignores_index,
        ignores_global: global_ignores,
        tracked: Tracked::of(&index),
    };
    let remembered = memo
        .as_ref()
        .filter(|m| index_unchanged && m.files == now.files);
    if remembered.is_none() {
        // Stat data is stale or racy: compare content. Right after a checkout and a commit in the
        // same second this is many files, so two threads share them.
        let needs_hash: Vec<&gix::index::Entry> = needs_hash
            .into_iter()
            .map(|i| &index.entries()[i])
            .collect();
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
    // are tracked, no directory holding them gained or lost an entry, and the same ignore
    // rules hold since the clean look.
    if memo
        .as_ref()
        .is_some_and(|m| m.dirs == now.dirs && m.paths == now.paths && m.ignores() == now.ignores())
    {
        // Rewritten when it can save work next time: new stat data, or the index changed.
        if remembered.is_none() || !index_unchanged || memo.is_some_and(|m| m.tracked.is_none()) {
            now.write(&memo_path);
        }
        return Some(Quick::Clean(Some(now)));
    }
    Some(Quick::NeedsFull(Some(Pending {
        path: memo_path,
        memo: now,
    })))
}

/// What the `lstat` of every tracked path saw, when nothing was certainly changed.
struct Scan {
    files: u64,
    dirs: u64,
    paths: u64,
    /// The tracked `.gitignore` files' blob ids.
    ignores: u64,
    /// Entries whose stat data cannot tell: their content must be compared.
    needs_hash: Vec<usize>,
}

enum Scanned {
    Done(Scan),
    Dirty,
    /// Something could not be read: let a full status decide.
    Unknown,
}

/// Entries per thread below which starting one costs more than it saves.
const ENTRIES_PER_THREAD: usize = 2048;

/// `lstat`s every tracked path of the worktree at `root` (and every directory
/// holding one) against the index, on several threads for a big index.
///
/// Every fingerprint is a sum over its items, and every directory is counted by
/// the first entry under it, so the result does not depend on how the entries
/// were split between threads.
fn scan_entries(root: &Path, index: &gix::index::File) -> Scanned {
    let Some(root) = lstat::Root::open(root) else {
        return Scanned::Unknown;
    };
    let Some(root_dir) = root.itself().map(|e| e.stat) else {
        return Scanned::Unknown;
    };
    let root = &root;
    let len = index.entries().len();
    let threads = if len < 2 * ENTRIES_PER_THREAD {
        1
    } else {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(len / ENTRIES_PER_THREAD)
            .clamp(1, 8)
    };
    let chunk = len.div_ceil(threads).max(1);
    let parts: Vec<Scanned> = if threads == 1 {
        vec![scan_range(root, index, 0..len)]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..len)
                .step_by(chunk)
                .map(|start| {
                    let range = start..(start + chunk).min(len);
                    scope.spawn(move || scan_range(root, index, range))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or(Scanned::Unknown))
                .collect()
        })
    };
    let mut total = Scan {
        files: 0,
        dirs: item_hash(
            b"",
            &[root_dir.mtime.secs, root_dir.mtime.nsecs, root_dir.ino],
        ),
        paths: 0,
        ignores: 0,
        needs_hash: Vec::new(),
    };
    for part in parts {
        match part {
            Scanned::Done(scan) => {
                total.files = total.files.wrapping_add(scan.files);
                total.dirs = total.dirs.wrapping_add(scan.dirs);
                total.paths = total.paths.wrapping_add(scan.paths);
                total.ignores = total.ignores.wrapping_add(scan.ignores);
                total.needs_hash.extend(scan.needs_hash);
            }
            other => return other,
        }
    }
    Scanned::Done(total)
}

/// Scans the entries in `range` (see [`scan_entries`]).
fn scan_range(
    root: &lstat::Root,
    index: &gix::index::File,
    range: std::ops::Range<usize>,
) -> Scanned {
    let timestamp = index.timestamp();
    let options = gix::index::entry::stat::Options::default();
    let entries = index.entries();
    let mut scan = Scan {
        files: 0,
        dirs: 0,
        paths: 0,
        ignores: 0,
        needs_hash: Vec::new(),
    };
    // The directories already counted: those of the last tracked entry before this range.
    let before = entries[..range.start]
        .iter()
        .rev()
        .find(|e| !e.flags.contains(Flags::SKIP_WORKTREE))
        .map(|e| e.path(index));
    let mut walk = lstat::Walk::new(root, before);
    for i in range {
        let entry = &entries[i];
        if entry.flags.contains(Flags::SKIP_WORKTREE) {
            continue;
        }
        if entry.stage_raw() != 0 || entry.flags.contains(Flags::INTENT_TO_ADD) {
            return Scanned::Dirty;
        }
        let rel = entry.path(index);
        scan.paths = scan.paths.wrapping_add(item_hash(rel, &[]));
        scan.ignores = scan.ignores.wrapping_add(ignore_hash(rel, &entry.id));
        let dirs = &mut scan.dirs;
        let Ok(found) = walk.lstat(rel, |dir| *dirs = dirs.wrapping_add(dir_hash(dir))) else {
            return Scanned::Unknown;
        };
        let Some(found) = found else {
            return Scanned::Dirty;
        };
        if entry.mode == Mode::COMMIT {
            continue;
        }
        let stat = found.stat;
        let kind_matches = match found.kind {
            lstat::Kind::Symlink => entry.mode == Mode::SYMLINK,
            lstat::Kind::File => entry.mode == Mode::FILE,
            lstat::Kind::Executable => entry.mode == Mode::FILE_EXECUTABLE,
            lstat::Kind::Dir | lstat::Kind::Other => false,
        };
        if !kind_matches {
            return Scanned::Dirty;
        }
        scan.files = scan.files.wrapping_add(file_hash(rel, &stat));
        if entry.stat.matches(&stat, options) && !entry.stat.is_racy(timestamp, options) {
            continue;
        }
        if u64::from(entry.stat.size) != found.len
            && entry.mode != Mode::SYMLINK
            && entry.stat.size != 0
        {
            return Scanned::Dirty;
        }
        scan.needs_hash.push(i);
    }
    Scanned::Done(scan)
}

/// Decodes a small index on this thread: finding out how many cores there are
/// reads cgroup files, a dozen syscalls, which costs more than decoding a
/// worktree of a few thousand entries (`list` opens a thousand of them).
fn decode_options(index_len: u64) -> gix::index::decode::Options {
    gix::index::decode::Options {
        thread_limit: Some(if index_len < 4 << 20 { 1 } else { 0 }),
        ..Default::default()
    }
}

fn stat_of(path: &Path) -> Option<Stat> {
    Stat::from_fs(&gix::index::fs::Metadata::from_path_no_follow(path).ok()?).ok()
}

/// From this many files to hash on, [`look`] hashes on two threads.
const PARALLEL_HASH_MIN: usize = 16;

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
pub fn remember_index(
    path: &Path,
    head_commit: ObjectId,
    ignores: &IgnoreFiles,
    index: &gix::index::File,
) {
    let _ = remember(path, head_commit, ignores, index);
}

/// [`remember_index`] with the index on disk in `git_dir`, the private git dir of the worktree
/// at `path` (which need not name it: the merge gate's checkout, just made clean). Best effort.
pub fn remember_index_on_disk(
    path: &Path,
    git_dir: &Path,
    head_commit: ObjectId,
    ignores: &IgnoreFiles,
) {
    let index = gix::index::File::at(
        git_dir.join("index"),
        gix::hash::Kind::Sha1,
        false,
        gix::index::decode::Options::default(),
    );
    if let Ok(index) = index {
        let _ = remember_in(path, git_dir, head_commit, ignores, &index);
    }
}

/// [`remember_index_on_disk`] with the index the caller just wrote there, in memory: not
/// decoded (and its checksum not verified) a second time. Best effort.
pub fn remember_index_in(
    path: &Path,
    git_dir: &Path,
    head_commit: ObjectId,
    ignores: &IgnoreFiles,
    index: &gix::index::File,
) {
    let _ = remember_in(path, git_dir, head_commit, ignores, index);
}

/// Where the directories of `dir` not among those of `seen` (the last path's directory) begin:
/// the byte after the whole components the two share.
fn shared_dirs(dir: &[u8], seen: &[u8]) -> usize {
    if seen.is_empty() {
        return 0;
    }
    let mut at = 0;
    loop {
        let end = dir[at..].find_byte(b'/').map_or(dir.len(), |i| at + i);
        let same = seen.len() >= end
            && seen[..end] == dir[..end]
            && (seen.len() == end || seen[end] == b'/');
        if !same {
            return at;
        }
        if end == dir.len() {
            return dir.len();
        }
        at = end + 1;
    }
}

/// The stat data of a directory the memo keeps: mtime (seconds, nanoseconds) and inode, with
/// the truncations to 32 bits git and gix make.
pub type DirStamp = (u32, u32, u32);

/// [`remember_index_in`] taking the stat data of the directories `known` gives (relative path
/// with `/`, the top one never asked) instead of `lstat`ing them: for a worktree whose
/// directories the caller saw a moment ago and has not touched since but where `known` says
/// `None`. Each other directory holding a tracked file is `lstat`ed. Best effort.
pub fn remember_index_knowing(
    path: &Path,
    git_dir: &Path,
    head_commit: ObjectId,
    ignores: &IgnoreFiles,
    index: &gix::index::File,
    known: &dyn Fn(&str) -> Option<DirStamp>,
) {
    let _ = remember_knowing(path, git_dir, head_commit, ignores, index, known);
}

fn remember_knowing(
    path: &Path,
    git_dir: &Path,
    head_commit: ObjectId,
    ignores: &IgnoreFiles,
    index: &gix::index::File,
    known: &dyn Fn(&str) -> Option<DirStamp>,
) -> Option<()> {
    let index_stat = stat_of(index.path())?;
    let dir = lstat::Root::open(path)?;
    let root = dir.itself()?.stat;
    let mut files = 0u64;
    let mut dirs = item_hash(b"", &[root.mtime.secs, root.mtime.nsecs, root.ino]);
    let mut paths = 0u64;
    let mut ignores_index = 0u64;
    // The directory of the last path: the directories of the next one not under it are new.
    let mut seen: &[u8] = b"";
    for entry in index.entries() {
        if entry.flags.contains(Flags::SKIP_WORKTREE) {
            continue;
        }
        let rel = entry.path(index);
        paths = paths.wrapping_add(item_hash(rel, &[]));
        ignores_index = ignores_index.wrapping_add(ignore_hash(rel, &entry.id));
        let at_dir = rel.rfind_byte(b'/').map_or(&rel[..0], |i| &rel[..i]);
        if at_dir != seen {
            let mut at = shared_dirs(at_dir, seen);
            while at < at_dir.len() {
                let end = at_dir[at..]
                    .find_byte(b'/')
                    .map_or(at_dir.len(), |i| at + i);
                let sub = &at_dir[..end];
                let stamp = match sub.to_str().ok().and_then(known) {
                    Some(stamp) => stamp,
                    None => {
                        let e = dir.lstat(sub.as_bstr())?;
                        if e.kind != lstat::Kind::Dir {
                            return None;
                        }
                        (e.stat.mtime.secs, e.stat.mtime.nsecs, e.stat.ino)
                    }
                };
                dirs = dirs.wrapping_add(item_hash(sub, &[stamp.0, stamp.1, stamp.2]));
                at = end + 1;
            }
            seen = at_dir;
        }
        if entry.mode != Mode::COMMIT {
            files = files.wrapping_add(file_hash(rel, &entry.stat));
        }
    }
    let sums = Sums {
        files,
        dirs,
        paths,
        ignores_index,
    };
    sums.write(git_dir, head_commit, &index_stat, ignores, index);
    Some(())
}

/// What a look at a worktree added up, entry by entry, for its [`Memo`].
struct Sums {
    files: u64,
    dirs: u64,
    paths: u64,
    ignores_index: u64,
}

impl Sums {
    /// Writes the memo of the worktree whose private git dir is `git_dir`: these sums, with
    /// `head_commit`, the index's stat data and what the ignore rules and the index hold.
    fn write(
        self,
        git_dir: &Path,
        head_commit: ObjectId,
        index_stat: &Stat,
        ignores: &IgnoreFiles,
        index: &gix::index::File,
    ) {
        Memo {
            head: head_commit,
            index: file_hash(BStr::new(""), index_stat),
            files: self.files,
            dirs: self.dirs,
            paths: self.paths,
            ignores_index: self.ignores_index,
            ignores_global: ignores.fingerprint(),
            tracked: Tracked::of(index),
        }
        .write(&git_dir.join(CLEAN_MEMO));
    }
}

fn remember(
    path: &Path,
    head_commit: ObjectId,
    ignores: &IgnoreFiles,
    index: &gix::index::File,
) -> Option<()> {
    let git_dir = DotGit::read(path).git_dir?;
    remember_in(path, &git_dir, head_commit, ignores, index)
}

fn remember_in(
    path: &Path,
    git_dir: &Path,
    head_commit: ObjectId,
    ignores: &IgnoreFiles,
    index: &gix::index::File,
) -> Option<()> {
    let index_stat = stat_of(index.path())?;
    let dir = lstat::Root::open(path)?;
    let root = dir.itself()?.stat;
    let mut files = 0u64;
    let mut dirs = item_hash(b"", &[root.mtime.secs, root.mtime.nsecs, root.ino]);
    let mut paths = 0u64;
    let mut ignores_index = 0u64;
    let mut walk = lstat::Walk::new(&dir, None);
    for entry in index.entries() {
        if entry.flags.contains(Flags::SKIP_WORKTREE) {
            continue;
        }
        let rel = entry.path(index);
        paths = paths.wrapping_add(item_hash(rel, &[]));
        ignores_index = ignores_index.wrapping_add(ignore_hash(rel, &entry.id));
        walk.dirs_of(rel, |dir| dirs = dirs.wrapping_add(dir_hash(dir)))
            .ok()?;
        if entry.mode != Mode::COMMIT {
            files = files.wrapping_add(file_hash(rel, &entry.stat));
        }
    }
    let sums = Sums {
        files,
        dirs,
        paths,
        ignores_index,
    };
    sums.write(git_dir, head_commit, &index_stat, ignores, index);
    Some(())
}

/// The HEAD at which [`remember_index`] last recorded the worktree whose private git dir is
/// `git_dir` as clean, if it ever did (a pool entry's fill finished its checkout).
pub fn remembered_head(git_dir: &Path) -> Option<ObjectId> {
    Memo::read(&git_dir.join(CLEAN_MEMO)).map(|m| m.head)
}

/// Whether the index in `git_dir` is the one the clean memo there was taken with, at `head`:
/// its stat data (ctime included) unchanged since. For a worktree only git-task writes (the
/// merge gate's), an index that is not is not to be trusted at all: its cached tree and its
/// entries' stat data could say what a later look wants to hear.
pub fn index_as_remembered(git_dir: &Path, head: ObjectId) -> bool {
    let Some(memo) = Memo::read(&git_dir.join(CLEAN_MEMO)) else {
        return false;
    };
    stat_of(&git_dir.join("index"))
        .is_some_and(|s| memo.head == head && memo.index == file_hash(BStr::new(""), &s))
}

/// Whether the worktree at `path` (private git dir `git_dir`) still looks as it did
/// when [`remember_index`] recorded it at `head`: HEAD and the index file's stat data
/// are unchanged, and for a worktree whose memo keeps its tracked paths, every
/// tracked file and directory too. A pool entry is taken only then (`pool`); for a
/// big worktree this is a few syscalls, not an `lstat` of every file.
pub fn untouched_since_remembered(path: &Path, git_dir: &Path, head: ObjectId) -> bool {
    let Some(memo) = Memo::read(&git_dir.join(CLEAN_MEMO)) else {
        return false;
    };
    let Some(index_stat) = stat_of(&git_dir.join("index")) else {
        return false;
    };
    if memo.head != head || memo.index != file_hash(BStr::new(""), &index_stat) {
        return false;
    }
    match memo.tracked.as_deref() {
        Some(tracked) => {
            let place = Place {
                path,
                git_dir: Some(git_dir),
                anchors: &lstat::Anchors::default(),
            };
            Tracked::unchanged(&place, &memo, tracked)
        }
        None => true,
    }
}

/// A directory's item in the `dirs` fingerprint: its path, mtime and inode.
fn dir_hash((path, entry): lstat::NewDir<'_>) -> u64 {
    let stat = &entry.stat;
    item_hash(path, &[stat.mtime.secs, stat.mtime.nsecs, stat.ino])
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
#[derive(Clone, PartialEq, Eq)]
pub struct Memo {
    head: ObjectId,
    index: u64,
    files: u64,
    dirs: u64,
    paths: u64,
    /// The blob ids of the tracked `.gitignore` files.
    ignores_index: u64,
    /// The stat data of the ignore files outside the tree ([`IgnoreFiles`]).
    ignores_global: u64,
    /// The tracked paths (see [`Tracked`]), kept for small worktrees only; shared, since
    /// worktrees checked out at one commit have the same.
    tracked: Option<Arc<[u8]>>,
}

impl Memo {
    /// Everything that decides which files are ignored.
    fn ignores(&self) -> (u64, u64) {
        (self.ignores_index, self.ignores_global)
    }

    fn read(path: &Path) -> Option<Memo> {
        let bytes = read_small(path).ok()?;
        let (header, rest) = match bytes.iter().position(|b| *b == b'\n') {
            Some(end) => (&bytes[..end], &bytes[end + 1..]),
            None => (&bytes[..], &[][..]),
        };
        Memo::parse(header, (!rest.is_empty()).then(|| Arc::from(rest)))
    }

    /// A memo from its header line ([`Memo::header`]) and its tracked paths.
    pub(super) fn parse(header: &[u8], tracked: Option<Arc<[u8]>>) -> Option<Memo> {
        let mut parts = std::str::from_utf8(header).ok()?.split_whitespace();
        let head = parts.next()?.parse().ok()?;
        let index = parts.next()?.parse().ok()?;
        let files = parts.next()?.parse().ok()?;
        let dirs = parts.next()?.parse().ok()?;
        let paths = parts.next()?.parse().ok()?;
        let ignores_index = parts.next()?.parse().ok()?;
        let ignores_global = parts.next()?.parse().ok()?;
        Some(Memo {
            paths,
            ignores_index,
            ignores_global,
            head,
            index,
            files,
            dirs,
            tracked,
        })
    }

    /// Everything but the tracked paths, on one line.
    pub(super) fn header(&self) -> String {
        format!(
            "{} {} {} {} {} {} {}",
            self.head,
            self.index,
            self.files,
            self.dirs,
            self.paths,
            self.ignores_index,
            self.ignores_global
        )
    }

    /// The tracked paths, when the memo keeps them.
    pub(super) fn tracked(&self) -> Option<&Arc<[u8]>> {
        self.tracked.as_ref()
    }

    fn write(&self, path: &Path) {
        let mut bytes = self.header().into_bytes();
        bytes.push(b'\n');
        if let Some(tracked) = &self.tracked {
            bytes.extend_from_slice(tracked);
        }
        // Best effort: a memo that cannot be written only costs speed next time.
        // Written aside and renamed, so a concurrent look never reads half of it.
        let _ = crate::git::fs::write_atomically(path, &bytes);
    }
}

/// The tracked paths of a small worktree, as the memo keeps them: for each
/// entry in index order, `c` (a submodule) or `f` (anything else), the path,
/// and a NUL. With them, a look at a worktree whose index did not change needs
/// no index decoding at all (`list` looks at a thousand worktrees).
struct Tracked;

impl Tracked {
    /// Worktrees with more entries than this keep no list (the index is read instead).
    const MAX_ENTRIES: usize = 4096;

    fn of(index: &gix::index::File) -> Option<Arc<[u8]>> {
        if index.entries().len() > Self::MAX_ENTRIES {
            return None;
        }
        let mut out = Vec::new();
        for entry in index.entries() {
            if entry.flags.contains(Flags::SKIP_WORKTREE) {
                continue;
            }
            out.push(if entry.mode == Mode::COMMIT {
                b'c'
            } else {
                b'f'
            });
            out.extend_from_slice(entry.path(index));
            out.push(0);
        }
        Some(Arc::from(out))
    }

    /// Whether every listed path (and its directories) still has the stat data
    /// the memo saw; `false` when anything differs or cannot be read.
    fn unchanged(place: &Place<'_>, memo: &Memo, tracked: &[u8]) -> bool {
        let Some(dir) = place.anchors.open_dir(place.path) else {
            return false;
        };
        let Some(root_dir) = dir.itself().map(|e| e.stat) else {
            return false;
        };
        let mut dirs = item_hash(
            b"",
            &[root_dir.mtime.secs, root_dir.mtime.nsecs, root_dir.ino],
        );
        let (mut files, mut paths) = (0u64, 0u64);
        let mut walk = lstat::Walk::new(&dir, None);
        for item in tracked.split_str("\0").filter(|i| !i.is_empty()) {
            let (kind, rel) = (item[0], item[1..].as_bstr());
            paths = paths.wrapping_add(item_hash(rel, &[]));
            let found = walk.lstat(rel, |dir| dirs = dirs.wrapping_add(dir_hash(dir)));
            let Ok(Some(stat)) = found.map(|e| e.map(|e| e.stat)) else {
                return false;
            };
            if kind != b'c' {
                files = files.wrapping_add(file_hash(rel, &stat));
            }
        }
        files == memo.files && dirs == memo.dirs && paths == memo.paths
    }
}

/// Hashes one item of a fingerprint: a path and some of its stat numbers.
///
/// A fingerprint is the wrapping sum of its items' hashes, so it can be summed
/// up on several threads. It is only ever compared with one this binary wrote:
/// a different hasher after an upgrade only costs one full status.
fn item_hash(path: &[u8], numbers: &[u32]) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = foldhash::quality::FixedState::with_seed(0x6769_742d_7461_736b).build_hasher();
    h.write(path);
    h.write_u8(0);
    for n in numbers {
        h.write_u32(*n);
    }
    h.finish()
}

/// Hashes a tracked `.gitignore` file by its blob id (nothing for any other path).
fn ignore_hash(rel: &BStr, id: &ObjectId) -> u64 {
    let name = rel.rfind_byte(b'/').map_or(rel, |i| rel[i + 1..].as_bstr());
    if name == b".gitignore" {
        item_hash(id.as_bytes(), &[])
    } else {
        0
    }
}

/// The ignore files outside the worktree's tree that decide what is untracked
/// in it: the repository's `info/exclude` and `core.excludesFile` (or its
/// default). Editing one can turn an ignored file into an untracked one
/// without touching the worktree, so their stat data is part of the memo.
pub struct IgnoreFiles {
    /// The stat data of the files, taken once: a process looks at worktrees in
    /// a moment, and a look racing an edit of an ignore file is no worse than
    /// one just before it.
    fingerprint: u64,
}

impl IgnoreFiles {
    /// The ignore files of the repository whose common git dir is `common_dir`, with `excludes_file`
    /// the configured `core.excludesFile` if any.
    pub fn new(common_dir: &Path, excludes_file: Option<PathBuf>) -> IgnoreFiles {
        let default = || crate::git::fs::xdg_git_file("ignore");
        let mut files = vec![common_dir.join("info").join("exclude")];
        files.extend(excludes_file.or_else(default));
        let fingerprint = files.iter().fold(0u64, |sum, file| {
            let path = file.as_os_str().as_encoded_bytes();
            let item = match stat_of(file) {
                Some(s) => item_hash(
                    path,
                    &[
                        s.mtime.secs,
                        s.mtime.nsecs,
                        s.ctime.secs,
                        s.ctime.nsecs,
                        s.size,
                        s.ino,
                    ],
                ),
                None => item_hash(path, &[]),
            };
            sum.wrapping_add(item)
        });
        IgnoreFiles { fingerprint }
    }

    /// The stat data of the ignore files, hashed: while it is the same, so are their rules.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }
}

/// Hashes a path with its full stat data.
fn file_hash(path: &BStr, stat: &Stat) -> u64 {
    item_hash(
        path,
        &[
            stat.mtime.secs,
            stat.mtime.nsecs,
            stat.ctime.secs,
            stat.ctime.nsecs,
            stat.size,
            stat.ino,
            stat.dev,
        ],
    )
}

/// A worktree's `.git`, read once: `list` asks whether a task's worktree is
/// there and then where its private git dir is.
pub struct DotGit {
    /// Whether `<worktree>/.git` exists.
    pub exists: bool,
    /// The private git dir it names (the `.git` directory itself in a main worktree).
    git_dir: Option<PathBuf>,
    /// The stat data of a `.git` file, hashed: while it is the same, so is what the file says.
    fingerprint: Option<u64>,
}

impl DotGit {
    /// Reads `<path>/.git`: one `open`, one `read`.
    pub fn read(path: &Path) -> DotGit {
        let dot_git = path.join(".git");
        let (exists, git_dir) = match read_small(&dot_git) {
            Ok(text) => (true, crate::git::fs::gitdir_line(path, &text)),
            Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => (true, Some(dot_git)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (false, None),
            Err(_) => (dot_git.exists(), None),
        };
        DotGit {
            exists,
            git_dir,
            fingerprint: None,
        }
    }

    /// Like [`DotGit::read`], but when `known` holds the fingerprint of the `.git` file as it
    /// was and the private git dir it named then, and the file's stat data is unchanged, that
    /// is the answer without reading the file: one `lstat`.
    pub fn read_known(
        path: &Path,
        known: Option<(u64, &Path)>,
        anchors: &lstat::Anchors,
    ) -> DotGit {
        let dot_git = path.join(".git");
        let Some(fingerprint) = anchors
            .lstat(&dot_git)
            .filter(|found| matches!(found.kind, lstat::Kind::File | lstat::Kind::Executable))
            .map(|found| file_hash(BStr::new(".git"), &found.stat))
        else {
            return DotGit::read(path);
        };
        if let Some((_, git_dir)) = known.filter(|(k, _)| *k == fingerprint) {
            return DotGit {
                exists: true,
                git_dir: Some(git_dir.to_owned()),
                fingerprint: Some(fingerprint),
            };
        }
        // Stat data taken before the read: a `.git` rewritten in between is read again next time.
        DotGit {
            fingerprint: Some(fingerprint),
            ..DotGit::read(path)
        }
    }

    /// The hashed stat data of the `.git` file, when read through [`DotGit::read_known`].
    pub fn fingerprint(&self) -> Option<u64> {
        self.fingerprint
    }

    /// The private git dir, if `.git` names one.
    pub fn git_dir(&self) -> Option<&Path> {
        self.git_dir.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::DotGit;
    use std::path::Path;

    /// The memo taken with some directories' stat data given is the memo taken by `lstat`ing
    /// them all, when what is given is what an `lstat` sees; a directory given wrong shows in
    /// the memo (the caller's knowledge is used, not looked over).
    #[test]
    fn a_memo_knowing_directories_is_the_memo_looking_at_them() {
        use gix::index::entry::{Flags, Mode, Stat};
        let tmp = tempfile::tempdir().unwrap();
        let wt = tmp.path().join("wt");
        let git_dir = tmp.path().join("admin");
        std::fs::create_dir_all(&git_dir).unwrap();
        let paths = [
            "a.txt", "a/b.txt", "a/b/c", "a/b/d/e", "a/bb/f", "a/c", "b/x/y/z", "b/x2", "top",
        ];
        let mut state = gix::index::State::new(gix::hash::Kind::Sha1);
        let id = gix::ObjectId::empty_blob(gix::hash::Kind::Sha1);
        for p in paths {
            let full = wt.join(p);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(&full, "").unwrap();
            let meta = gix::index::fs::Metadata::from_path_no_follow(&full).unwrap();
            let stat = Stat::from_fs(&meta).unwrap();
            state.dangerously_push_entry(stat, id, Flags::empty(), Mode::FILE, p.into());
        }
        state.sort_entries();
        std::fs::write(git_dir.join("index"), "stand-in").unwrap();
        let index = gix::index::File::from_state(state, git_dir.join("index"));
        let ignores = super::IgnoreFiles::new(tmp.path(), None);
        let head = gix::ObjectId::empty_tree(gix::hash::Kind::Sha1);
        let memo = || std::fs::read(git_dir.join(super::CLEAN_MEMO)).unwrap();
        super::remember_index_in(&wt, &git_dir, head, &ignores, &index);
        let looked = memo();
        let lstat = |dir: &str| {
            let e = super::lstat::Root::open(&wt)?.lstat(dir.into())?;
            Some((e.stat.mtime.secs, e.stat.mtime.nsecs, e.stat.ino))
        };
        super::remember_index_knowing(&wt, &git_dir, head, &ignores, &index, &|_| None);
        assert_eq!(memo(), looked);
        super::remember_index_knowing(&wt, &git_dir, head, &ignores, &index, &lstat);
        assert_eq!(memo(), looked);
        let mut asked = Vec::new();
        let cell = std::cell::RefCell::new(&mut asked);
        super::remember_index_knowing(&wt, &git_dir, head, &ignores, &index, &|d| {
            cell.borrow_mut().push(d.to_owned());
            lstat(d)
        });
        assert_eq!(
            asked,
            ["a", "a/b", "a/b/d", "a/bb", "b", "b/x", "b/x/y"],
            "each directory once"
        );
        let wrong = |d: &str| {
            lstat(d).map(|(s, n, i)| {
                if d == "a/bb" {
                    (s, n, i + 1)
                } else {
                    (s, n, i)
                }
            })
        };
        super::remember_index_knowing(&wt, &git_dir, head, &ignores, &index, &wrong);
        assert_ne!(memo(), looked);
    }

    /// What gix's discovery makes of the `.git` at `worktree` (the oracle for [`DotGit`]).
    fn gix_reads(worktree: &Path) -> Option<std::path::PathBuf> {
        let dot_git = worktree.join(".git");
        if dot_git.is_dir() {
            return Some(dot_git);
        }
        gix::discover::path::from_gitdir_file(&dot_git).ok()
    }

    /// `DotGit` (one `read` on `list`'s path) agrees with gix's reading of `.git` files:
    /// absolute and relative `gitdir:` lines, CRLF and extra blanks, a `.git` directory, none.
    #[test]
    fn dot_git_reads_what_gix_discovery_reads() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let admin = root.join("repo/.git/worktrees/t");
        std::fs::create_dir_all(&admin).unwrap();
        let cases = [
            ("abs", format!("gitdir: {}\n", admin.display())),
            ("crlf", format!("gitdir: {}\r\n", admin.display())),
            ("rel", "gitdir: ../repo/.git/worktrees/t\n".to_owned()),
            ("rel-dot", "gitdir: ./../repo/.git/worktrees/t\n".to_owned()),
        ];
        for (name, text) in cases {
            let wt = root.join(name);
            std::fs::create_dir_all(&wt).unwrap();
            std::fs::write(wt.join(".git"), text).unwrap();
            let ours = DotGit::read(&wt);
            assert!(ours.exists, "{name}");
            let want = gix_reads(&wt).expect("gix reads it");
            assert_eq!(
                ours.git_dir().map(|p| p.canonicalize().unwrap()),
                Some(want.canonicalize().unwrap()),
                "{name}"
            );
        }
        let main = root.join("repo");
        let ours = DotGit::read(&main);
        assert!(ours.exists);
        assert_eq!(ours.git_dir(), gix_reads(&main).as_deref());
        let none = root.join("none");
        std::fs::create_dir_all(&none).unwrap();
        let ours = DotGit::read(&none);
        assert!(!ours.exists && ours.git_dir().is_none());
        assert!(gix_reads(&none).is_none());
        // A `.git` file without a `gitdir: ` line names nothing, for gix (and git) neither.
        for garbage in ["garbage\n", "gitdir:/no/space\n", "gitdir: \n", ""] {
            std::fs::write(none.join(".git"), garbage).unwrap();
            let ours = DotGit::read(&none);
            assert!(ours.exists && ours.git_dir().is_none(), "{garbage:?}");
            assert!(gix_reads(&none).is_none(), "{garbage:?}");
        }
    }
}
