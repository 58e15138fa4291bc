//! `lstat` of many paths inside one worktree.
//!
//! The clean check ([`crate::git::status::dirty`]) stats every tracked file of a worktree,
//! and `list` does it for a thousand worktrees. Most of an `lstat`'s cost is
//! the kernel walking its path, component by component; relative to an open
//! handle on the worktree's root, a path is as long as it is in the index, not
//! the dozen more components of the worktree's absolute path.

use gix::bstr::BStr;
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
    /// Opens the directory `path` (not following a final symlink's target's content: only to look up names in it).
    pub fn open(path: &Path) -> Option<Root> {
        #[cfg(unix)]
        {
            use rustix::fs::{Mode, OFlags};
            let fd = rustix::fs::open(
                path,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .ok()?;
            Some(Root { fd })
        }
        #[cfg(not(unix))]
        Some(Root {
            path: path.to_owned(),
        })
    }

    /// The root directory itself.
    pub fn itself(&self) -> Option<Entry> {
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
            let file_type = rustix::fs::FileType::from_raw_mode(st.st_mode as _);
            let kind = match file_type {
                rustix::fs::FileType::RegularFile if st.st_mode as u32 & 0o100 != 0 => {
                    Kind::Executable
                }
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
            Some(Entry {
                stat,
                kind,
                len: st.st_size as u64,
            })
        }
        #[cfg(not(unix))]
        {
            let path = self.path.join(gix::path::from_bstr(rel));
            let meta = gix::index::fs::Metadata::from_path_no_follow(&path).ok()?;
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
                stat: Stat::from_fs(&meta).ok()?,
                kind,
                len: meta.len(),
            })
        }
    }
}
