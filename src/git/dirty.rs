//! A cheap "has uncommitted changes to tracked files" check for `list`.
//!
//! `git status` in every one of a thousand worktrees is far too slow for
//! `list` (SPEC §10: 1,000 tasks in 100 ms). Like `git describe --dirty`, this
//! looks at tracked files only: the index's cached tree against HEAD's tree
//! (staged changes), then an `lstat` of every index entry against its stat
//! data (unstaged changes), hashing a file only when its stat data cannot be
//! trusted (racy git). Untracked files are not looked at here; `status`,
//! `remove` and every command that saves work do look at them.

use super::ObjectId;
use gix::bstr::BString;
use gix::index::entry::{Flags, Mode, Stat};
use gix::object::tree::EntryKind;
use std::path::{Path, PathBuf};

/// Returns whether the worktree at `path` has staged or unstaged changes to tracked files.
///
/// `None` means the quick check could not decide (no cached tree in the index,
/// unreadable index); the caller should fall back to a full status.
///
/// Without a usable cached tree in the index (gix's checkout writes none), the
/// index is compared with `head_entries()`, the flattened HEAD tree in path order.
pub fn tracked_changes(
    path: &Path,
    head_commit: ObjectId,
    head_tree: impl FnOnce() -> Option<ObjectId>,
    head_entries: impl FnOnce(ObjectId) -> Option<std::rc::Rc<Vec<(BString, EntryKind, ObjectId)>>>,
) -> Option<bool> {
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
            Some(tree) if tree.id != head_tree => return Some(true),
            Some(_) => {}
            None => {
                let head = head_entries(head_tree)?;
                if head.len() != index.entries().len() {
                    return Some(true);
                }
                // Both are in full-path byte order: git's tree order recursed equals index order.
                for (entry, (path, kind, id)) in index.entries().iter().zip(head.iter()) {
                    if entry.path(&index) != path
                        || *id != entry.id
                        || entry.mode.to_tree_entry_mode().map(|m| m.kind()) != Some(*kind)
                    {
                        return Some(true);
                    }
                }
            }
        }
    }
    let timestamp = index.timestamp();
    let options = gix::index::entry::stat::Options::default();
    // Racy entries (written in the same second as the index, as after a fresh
    // checkout) must be hashed; once they were found clean, the exact stat data
    // of every entry is remembered beside the index, so the next look is lstat only.
    let mut fingerprint = Fingerprint::new();
    let mut needs_hash = Vec::new();
    let mut file = FilePath::new(path);
    for entry in index.entries() {
        if entry.flags.contains(Flags::SKIP_WORKTREE) {
            continue;
        }
        if entry.stage_raw() != 0 || entry.flags.contains(Flags::INTENT_TO_ADD) {
            return Some(true);
        }
        let rel = entry.path(&index);
        let Ok(meta) = gix::index::fs::Metadata::from_path_no_follow(file.set(rel)) else {
            return Some(true);
        };
        if entry.mode == Mode::COMMIT {
            continue;
        }
        let Ok(stat) = Stat::from_fs(&meta) else {
            return None;
        };
        let kind_matches = if entry.mode == Mode::SYMLINK {
            meta.is_symlink()
        } else {
            meta.is_file() && meta.is_executable() == (entry.mode == Mode::FILE_EXECUTABLE)
        };
        if !kind_matches {
            return Some(true);
        }
        fingerprint.add(rel, &stat);
        if entry.stat.matches(&stat, options) && !entry.stat.is_racy(timestamp, options) {
            continue;
        }
        if u64::from(entry.stat.size) != meta.len()
            && entry.mode != Mode::SYMLINK
            && entry.stat.size != 0
        {
            return Some(true);
        }
        needs_hash.push(entry);
    }
    let memo_now = Memo {
        head: head_commit,
        index: Fingerprint::of_stat(&index_stat),
        files: fingerprint.0,
    };
    if index_unchanged && memo.as_ref().is_some_and(|m| m.files == memo_now.files) {
        return Some(false);
    }
    for entry in needs_hash {
        // Stat data is stale or racy: compare content.
        let file = file.set(entry.path(&index));
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
            return Some(true);
        }
    }
    memo_now.write(&memo_path);
    Some(false)
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

/// What a clean check saw: HEAD, the index file's stat data, every entry's stat data.
#[derive(PartialEq, Eq)]
struct Memo {
    head: ObjectId,
    index: u64,
    files: u64,
}

impl Memo {
    fn read(path: &Path) -> Option<Memo> {
        let text = std::fs::read_to_string(path).ok()?;
        let mut parts = text.split_whitespace();
        let head = parts.next()?.parse().ok()?;
        let index = parts.next()?.parse().ok()?;
        let files = parts.next()?.parse().ok()?;
        Some(Memo { head, index, files })
    }

    fn write(&self, path: &Path) {
        // Best effort: a memo that cannot be written only costs speed next time.
        let _ = std::fs::write(
            path,
            format!("{} {} {}\n", self.head, self.index, self.files),
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
