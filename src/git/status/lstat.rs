//! `lstat` of many paths inside one worktree.
//!
//! The clean check ([`crate::git::status::dirty`]) stats every tracked file of a worktree,
//! and `list` does it for a thousand worktrees. Besides the system call itself, an `lstat`
//! costs the kernel's walk of its path, component by component. So paths are looked up
//! from open handles: [`Anchors`] on the directories above the worktrees and the git dirs,
//! [`Root`] on a worktree, and [`Walk`] on the directory of each tracked path in turn, so
//! that most lookups are of a single name.

use gix::bstr::{BStr, ByteSlice};
use gix::index::entry::Stat;
use std::path::Path;

/// What an `lstat` says about a path, as the index compares it.
pub struct Entry {
    /// The stat data in the index's form.
    pub stat: Stat,
    /// Its kind.
    pub kind: Kind,
    /// Its full size (the index keeps only 32 bits).
    pub len: u64,
}

/// The kinds of file the index tells apart.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Executable,
    Symlink,
    Dir,
    Other,
}

/// A worktree root that paths are stat'ed relative to.
pub struct Root {
    #[cfg(unix)]
    fd: rustix::fd::OwnedFd,
    #[cfg(not(unix))]
    path: std::path::PathBuf,
}

impl Root {
    /// Opens the directory `path`, only to look up names in it.
    pub fn open(path: &Path) -> Option<Root> {
        Anchors::default().open_dir(path)
    }

    /// The root directory itself.
    pub fn itself(&self) -> Option<Entry> {
        #[cfg(unix)]
        return rustix::fs::fstat(&self.fd).ok().map(|st| entry_of(&st));
        #[cfg(not(unix))]
        self.lstat(BStr::new("."))
    }

    /// `lstat`s `rel`, a path relative to the root in the index's form (`/`-separated).
    pub fn lstat(&self, rel: &BStr) -> Option<Entry> {
        #[cfg(unix)]
        {
            let st = rustix::fs::statat(
                &self.fd,
                rel.as_ref() as &[u8],
                rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
            )
            .ok()?;
            Some(entry_of(&st))
        }
        #[cfg(not(unix))]
        {
            let path = self.path.join(gix::path::from_bstr(rel));
            let meta = gix::index::fs::Metadata::from_path_no_follow(&path).ok()?;
            entry_of_meta(&meta)
        }
    }
}

/// An `lstat` in the index's terms, where there are no handles.
#[cfg(not(unix))]
fn entry_of_meta(meta: &gix::index::fs::Metadata) -> Option<Entry> {
    let kind = if meta.is_symlink() {
        Kind::Symlink
    } else if meta.is_dir() {
        Kind::Dir
    } else if meta.is_file() && meta.is_executable() {
        Kind::Executable
    } else if meta.is_file() {
        Kind::File
    } else {
        Kind::Other
    };
    Some(Entry {
        stat: Stat::from_fs(meta).ok()?,
        kind,
        len: meta.len(),
    })
}

/// Handles on the directories that most paths a look at many worktrees meets lie under (the
/// common git dir, the directory holding the task worktrees): a path under one is looked up
/// from there, so the kernel walks only the rest of it, not the dozen components above.
///
/// A handle stands for the directory it was opened on: should that be moved away meanwhile,
/// paths under it are found where it went, as they would have been a moment earlier.
#[derive(Default)]
pub struct Anchors {
    #[cfg(unix)]
    held: Vec<(Vec<u8>, rustix::fd::OwnedFd)>,
}

impl Anchors {
    /// At most this many directories are held.
    const MAX: usize = 8;

    /// Holds a handle on the directory `dir` (an absolute path) from now on, unless one is
    /// held already or too many are. Best effort: a path under no handle is looked up whole.
    pub fn hold(&mut self, dir: &Path) {
        #[cfg(unix)]
        {
            use rustix::fs::{Mode, OFlags};
            let bytes = dir.as_os_str().as_encoded_bytes();
            let bytes = bytes.strip_suffix(b"/").unwrap_or(bytes);
            if !dir.is_absolute()
                || self.held.len() >= Self::MAX
                || self.held.iter().any(|(d, _)| d == bytes)
            {
                return;
            }
            let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
            if let Ok(fd) = rustix::fs::open(dir, flags, Mode::empty()) {
                self.held.push((bytes.to_vec(), fd));
            }
        }
        #[cfg(not(unix))]
        let _ = dir;
    }

    /// The handle on the deepest held directory `path` lies under, and the rest of `path`.
    #[cfg(unix)]
    fn split<'p>(&self, path: &'p Path) -> Option<(&rustix::fd::OwnedFd, &'p [u8])> {
        let bytes = path.as_os_str().as_encoded_bytes();
        self.held
            .iter()
            .filter(|(dir, _)| {
                bytes.len() > dir.len() + 1 && bytes.starts_with(dir) && bytes[dir.len()] == b'/'
            })
            .max_by_key(|(dir, _)| dir.len())
            .map(|(dir, fd)| (fd, &bytes[dir.len() + 1..]))
    }

    /// `lstat`s `path`.
    pub fn lstat(&self, path: &Path) -> Option<Entry> {
        #[cfg(unix)]
        {
            let flags = rustix::fs::AtFlags::SYMLINK_NOFOLLOW;
            let st = match self.split(path) {
                Some((fd, rest)) => rustix::fs::statat(fd, rest, flags),
                None => rustix::fs::statat(rustix::fs::CWD, path, flags),
            };
            st.ok().map(|st| entry_of(&st))
        }
        #[cfg(not(unix))]
        {
            let meta = gix::index::fs::Metadata::from_path_no_follow(path).ok()?;
            entry_of_meta(&meta)
        }
    }

    /// Opens the directory `path`, only to look up names in it.
    pub fn open_dir(&self, path: &Path) -> Option<Root> {
        #[cfg(unix)]
        {
            use rustix::fs::{Mode, OFlags};
            let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
            let fd = match self.split(path) {
                Some((at, rest)) => rustix::fs::openat(at, rest, flags, Mode::empty()),
                None => rustix::fs::open(path, flags, Mode::empty()),
            };
            fd.ok().map(|fd| Root { fd })
        }
        #[cfg(not(unix))]
        Some(Root {
            path: path.to_owned(),
        })
    }
}

/// An `lstat` in the index's terms.
#[cfg(unix)]
#[allow(clippy::unnecessary_cast)] // `st_mode` is a `u16` on some platforms
fn entry_of(st: &rustix::fs::Stat) -> Entry {
    let file_type = rustix::fs::FileType::from_raw_mode(st.st_mode as _);
    let kind = match file_type {
        rustix::fs::FileType::RegularFile if st.st_mode as u32 & 0o100 != 0 => Kind::Executable,
        rustix::fs::FileType::RegularFile => Kind::File,
        rustix::fs::FileType::Symlink => Kind::Symlink,
        rustix::fs::FileType::Directory => Kind::Dir,
        _ => Kind::Other,
    };
    // The same truncations as git and gix make (`Stat::from_fs`).
    let stat = Stat {
        mtime: gix::index::entry::stat::Time {
            secs: st.st_mtime as u32,
            nsecs: st.st_mtime_nsec as u32,
        },
        ctime: gix::index::entry::stat::Time {
            secs: st.st_ctime as u32,
            nsecs: st.st_ctime_nsec as u32,
        },
        dev: st.st_dev as u32,
        ino: st.st_ino as u32,
        uid: st.st_uid,
        gid: st.st_gid,
        size: st.st_size as u32,
    };
    Entry {
        stat,
        kind,
        len: st.st_size as u64,
    }
}

/// `lstat`s the tracked paths of one worktree in index order, and each directory holding one
/// once, the first time a path in it comes.
///
/// A handle is kept on the directory of the current path (and on those above it that hold
/// paths too), so an `lstat` looks up one name instead of walking the whole path again: the
/// kernel's cost of a stat is mostly its path walk. Every directory is looked at without
/// following a symlink, so a tracked directory replaced by a symlink (or by a file) cannot be
/// walked through: the walk stops there.
pub struct Walk<'r> {
    root: &'r Root,
    /// The directory whose directories have been counted (that of the last path).
    seen: Vec<u8>,
    /// The directory the walk is in, and handles on some of its directories (always on itself
    /// after a successful step), each with the end of its component in it.
    #[cfg(unix)]
    open: (Vec<u8>, Vec<(usize, rustix::fd::OwnedFd)>),
}

/// A directory of a path cannot be entered: it is missing, or not a directory (a symlink, say).
#[derive(Debug)]
pub struct Blocked;

/// A directory the walk met first: its path relative to the root, and its `lstat`.
pub type NewDir<'a> = (&'a BStr, &'a Entry);

impl<'r> Walk<'r> {
    /// A walk from the root, counting the directories of `after` (a path) as seen: a walk that
    /// goes on where another stopped.
    pub fn new(root: &'r Root, after: Option<&BStr>) -> Walk<'r> {
        Walk {
            root,
            seen: after.map_or(Vec::new(), |p| dir_of(p).to_vec()),
            #[cfg(unix)]
            open: (Vec::new(), Vec::new()),
        }
    }

    /// `lstat`s `rel` (`None` when it is not there), after handing each of its directories
    /// not under the last path's directory to `new_dir`. `Err` when a directory of `rel`
    /// cannot be entered: it is missing, or not a directory.
    pub fn lstat(
        &mut self,
        rel: &BStr,
        mut new_dir: impl FnMut(NewDir<'_>),
    ) -> Result<Option<Entry>, Blocked> {
        let dir = dir_of(rel);
        // Most paths are in the same directory as the last one.
        if !self.is_in(dir) {
            self.enter(dir, &mut new_dir)?;
            self.seen.clear();
            self.seen.extend_from_slice(dir);
        }
        let name: &[u8] = &rel[if dir.is_empty() { 0 } else { dir.len() + 1 }..];
        #[cfg(unix)]
        {
            let parent = self.open.1.last().map_or(&self.root.fd, |(_, fd)| fd);
            Ok(
                rustix::fs::statat(parent, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
                    .ok()
                    .map(|st| entry_of(&st)),
            )
        }
        #[cfg(not(unix))]
        {
            let _ = name;
            Ok(self.root.lstat(rel))
        }
    }

    /// Whether the walk is in `dir`: its directories counted (and on unix, handles on them).
    fn is_in(&self, dir: &[u8]) -> bool {
        #[cfg(unix)]
        if dir != &self.open.0[..] {
            return false;
        }
        dir == &self.seen[..]
    }

    /// Goes to `dir`, handing each directory not under the last path's to `new_dir`.
    ///
    /// Only a directory that directly holds a path gets a handle: one above it is stat'ed
    /// from the nearest handle, which is one system call where a handle costs three.
    #[cfg(unix)]
    fn enter(&mut self, dir: &[u8], new_dir: &mut impl FnMut(NewDir<'_>)) -> Result<(), Blocked> {
        use rustix::fs::{AtFlags, FileType, Mode, OFlags};
        let seen = common_dirs(dir, &self.seen);
        let (path, fds) = &mut self.open;
        let keep = common_dirs(dir, path);
        while fds.last().is_some_and(|(end, _)| *end > keep) {
            fds.pop();
        }
        path.truncate(keep);
        let base_end = fds.last().map_or(0, |(end, _)| *end);
        let base = fds.last().map_or(&self.root.fd, |(_, fd)| fd);
        // The part of a path inside `base`.
        let below = |end: usize| &dir[if base_end == 0 { 0 } else { base_end + 1 }..end];
        let mut at = keep;
        while at < dir.len() {
            let end = next_dir(dir, at);
            if end == dir.len() {
                break;
            }
            if end > seen {
                let st = rustix::fs::statat(base, below(end), AtFlags::SYMLINK_NOFOLLOW)
                    .map_err(|_| Blocked)?;
                if FileType::from_raw_mode(st.st_mode as _) != FileType::Directory {
                    return Err(Blocked);
                }
                new_dir((dir[..end].as_bstr(), &entry_of(&st)));
            }
            at = end;
        }
        if base_end != dir.len() {
            let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let fd = rustix::fs::openat(base, below(dir.len()), flags, Mode::empty())
                .map_err(|_| Blocked)?;
            if dir.len() > seen {
                let st = rustix::fs::fstat(&fd).map_err(|_| Blocked)?;
                new_dir((dir.as_bstr(), &entry_of(&st)));
            }
            fds.push((dir.len(), fd));
        }
        path.clear();
        path.extend_from_slice(dir);
        Ok(())
    }

    /// Hands each directory of `rel` not under the last path's directory to `new_dir`, without
    /// looking at `rel` itself (for a memo of a worktree whose files' stat data the index holds).
    pub fn dirs_of(
        &mut self,
        rel: &BStr,
        mut new_dir: impl FnMut(NewDir<'_>),
    ) -> Result<(), Blocked> {
        let dir = dir_of(rel);
        if dir != &self.seen[..] {
            self.count_dirs(dir, &mut new_dir)?;
            self.seen.clear();
            self.seen.extend_from_slice(dir);
        }
        Ok(())
    }

    /// Goes to `dir`, handing each directory not under the last path's to `new_dir`.
    #[cfg(not(unix))]
    fn enter(&mut self, dir: &[u8], new_dir: &mut impl FnMut(NewDir<'_>)) -> Result<(), Blocked> {
        self.count_dirs(dir, new_dir)
    }

    /// Hands each directory of `dir` not under the last path's to `new_dir`, each `lstat`ed
    /// from the root: one system call a directory, and no handle.
    fn count_dirs(
        &mut self,
        dir: &[u8],
        new_dir: &mut impl FnMut(NewDir<'_>),
    ) -> Result<(), Blocked> {
        let mut at = common_dirs(dir, &self.seen);
        while at < dir.len() {
            let end = next_dir(dir, at);
            let entry = self.root.lstat(dir[..end].as_bstr()).ok_or(Blocked)?;
            if entry.kind != Kind::Dir {
                return Err(Blocked);
            }
            new_dir((dir[..end].as_bstr(), &entry));
            at = end;
        }
        Ok(())
    }
}

/// Where the component of the directory path `dir` after its first `at` bytes ends.
fn next_dir(dir: &[u8], at: usize) -> usize {
    let from = if at == 0 { 0 } else { at + 1 };
    dir[from..]
        .iter()
        .position(|b| *b == b'/')
        .map_or(dir.len(), |i| from + i)
}

/// The directory part of a `/`-separated path (empty for a path in the root).
fn dir_of(rel: &[u8]) -> &[u8] {
    rel.iter()
        .rposition(|b| *b == b'/')
        .map_or(&[], |i| &rel[..i])
}

/// The length of the longest run of whole directories `a` and `b` (directory paths) start with.
fn common_dirs(a: &[u8], b: &[u8]) -> usize {
    let same = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let whole = |p: &[u8]| p.len() == same || p[same] == b'/';
    if whole(a) && whole(b) {
        same
    } else {
        a[..same].iter().rposition(|c| *c == b'/').unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_dirs_stops_at_whole_components() {
        assert_eq!(common_dirs(b"a/b", b"a/b"), 3);
        assert_eq!(common_dirs(b"a/b/c", b"a/b"), 3);
        assert_eq!(common_dirs(b"a/b", b"a/b/c"), 3);
        assert_eq!(common_dirs(b"a/bc", b"a/b"), 1);
        assert_eq!(common_dirs(b"ab", b"a"), 0);
        assert_eq!(common_dirs(b"a", b""), 0);
        assert_eq!(common_dirs(b"", b""), 0);
        assert_eq!(common_dirs(b"x/y", b"a/b"), 0);
    }

    #[test]
    fn dir_of_a_path() {
        assert_eq!(dir_of(b"a/b/c"), b"a/b");
        assert_eq!(dir_of(b"c"), b"");
    }
}
