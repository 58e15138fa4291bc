//! Every task worktree's `.git` and clean memo in one file, for `list`.
//!
//! `list` looks at a thousand worktrees. For each, the quick clean look
//! ([`super::dirty`]) needs the private git dir its `.git` file names and the
//! memo of its last clean look; reading both is six system calls a worktree, a
//! tenth of the whole `list`. This file, `<common git dir>/git-task/clean`, keeps
//! a copy of both for every worktree `list` looked at, so a worktree costs one
//! `lstat` of `.git` (unchanged stat data: the file says what it said) and no read.
//!
//! It is only ever a cache: a memo is a statement about stat data ("with these
//! stat data, the worktree was clean"), true for as long as they are unchanged,
//! so an old copy is as sound as the memo file itself, and one that no longer
//! holds only sends the look back to the memo file. Two `list`s writing at once
//! lose one of the copies, never correctness.
//!
//! Format: a line per tracked-path list, `T <key> <list>` (worktrees checked out at one
//! commit share one), then a line per worktree, `W <worktree>\t<.git fingerprint>\t<git
//! dir>\t<tracked key or ->\t<memo header>`, paths escaped (`\\`, `\n`, `\t`).

use super::dirty::{DotGit, Memo};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What `list` knew of one worktree.
#[derive(Clone, PartialEq, Eq)]
pub struct Known {
    dot_git: u64,
    git_dir: PathBuf,
    memo: Option<Memo>,
}

impl Known {
    /// What is known of a worktree after a look: its `.git` (read through
    /// [`DotGit::read_known`]) and the memo that holds now, if any.
    pub fn new(dot_git: &DotGit, memo: Option<Memo>) -> Option<Known> {
        Some(Known {
            dot_git: dot_git.fingerprint()?,
            git_dir: dot_git.git_dir()?.to_owned(),
            memo,
        })
    }

    /// The `.git` file's fingerprint and the git dir it named, for [`DotGit::read_known`].
    pub fn dot_git(&self) -> (u64, &Path) {
        (self.dot_git, &self.git_dir)
    }

    /// The memo, for [`super::dirty::quick_check`].
    pub fn memo(&self) -> Option<&Memo> {
        self.memo.as_ref()
    }
}

/// The file's entries, by worktree path.
pub struct Memos {
    path: PathBuf,
    bytes: Vec<u8>,
    /// Where each worktree's line is in `bytes` (after `W `), by the hash of its path; parsed
    /// when asked for, on the thread looking at it. Of two paths with the same hash, one is
    /// not found: that only costs a look.
    lines: foldhash::HashMap<u64, std::ops::Range<usize>>,
    tracked: HashMap<u64, Arc<[u8]>>,
}

impl Memos {
    /// Reads the file of the repository whose common git dir is `common_dir`; a missing or
    /// unreadable one is empty.
    pub fn load(common_dir: &Path) -> Memos {
        let path = crate::git::state_dir(common_dir).join("clean");
        let bytes = std::fs::read(&path).unwrap_or_default();
        // A line is some 300 bytes.
        let mut lines =
            foldhash::HashMap::with_capacity_and_hasher(bytes.len() / 200, Default::default());
        let mut tracked = HashMap::new();
        let mut at = 0;
        for line in bytes.split_inclusive(|b| *b == b'\n') {
            let start = at;
            at += line.len();
            let line = line.strip_suffix(b"\n").unwrap_or(line);
            if let Some(rest) = line.strip_prefix(b"W ") {
                if let Some(tab) = rest.iter().position(|b| *b == b'\t') {
                    let key = crate::git::fs::key_hash(&unescape_if_needed(&rest[..tab]));
                    lines.insert(key, start + 2..start + line.len());
                }
            } else if let Some((key, list)) = line.strip_prefix(b"T ").and_then(parse_tracked) {
                tracked.insert(key, list);
            }
        }
        Memos {
            path,
            bytes,
            lines,
            tracked,
        }
    }

    /// What is known of the worktree at `worktree`, if anything.
    pub fn get(&self, worktree: &Path) -> Option<Known> {
        let worktree = worktree.as_os_str().as_encoded_bytes();
        let line = &self.bytes[self.lines.get(&crate::git::fs::key_hash(worktree))?.clone()];
        let mut fields = line.split(|b| *b == b'\t');
        if *unescape_if_needed(fields.next()?) != *worktree {
            return None;
        }
        let dot_git = std::str::from_utf8(fields.next()?).ok()?.parse().ok()?;
        let git_dir = path_of(unescape(fields.next()?))?;
        let key = fields.next()?;
        let header = fields.next()?;
        let memo = if header.is_empty() {
            None
        } else {
            let tracked = match key {
                b"-" => None,
                key => Some(
                    self.tracked
                        .get(&std::str::from_utf8(key).ok()?.parse().ok()?)?,
                ),
            };
            Some(Memo::parse(header, tracked.cloned())?)
        };
        Some(Known {
            dot_git,
            git_dir,
            memo,
        })
    }

    /// How many worktrees the file knows.
    pub fn count(&self) -> usize {
        self.lines.len()
    }

    /// Replaces the file with `now`. Best effort: a file that cannot be written only costs
    /// speed next time.
    pub fn store(&self, now: &[(PathBuf, Known)]) {
        let mut out = Vec::new();
        let mut keys: HashMap<&[u8], u64> = HashMap::new();
        for (_, known) in now {
            let Some(list) = known.memo.as_ref().and_then(Memo::tracked) else {
                continue;
            };
            if keys.contains_key(&list[..]) {
                continue;
            }
            let key = keys.len() as u64;
            keys.insert(list, key);
            out.extend_from_slice(format!("T {key} ").as_bytes());
            escape(list, &mut out);
            out.push(b'\n');
        }
        for (worktree, known) in now {
            out.extend_from_slice(b"W ");
            escape(worktree.as_os_str().as_encoded_bytes(), &mut out);
            out.extend_from_slice(format!("\t{}\t", known.dot_git).as_bytes());
            escape(known.git_dir.as_os_str().as_encoded_bytes(), &mut out);
            out.push(b'\t');
            match known.memo.as_ref() {
                Some(memo) => {
                    match memo.tracked().and_then(|list| keys.get(&list[..])) {
                        Some(key) => out.extend_from_slice(key.to_string().as_bytes()),
                        None => out.push(b'-'),
                    }
                    out.push(b'\t');
                    out.extend_from_slice(memo.header().as_bytes());
                }
                None => out.extend_from_slice(b"-\t"),
            }
            out.push(b'\n');
        }
        if let Some(dir) = self.path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = crate::git::fs::write_atomically(&self.path, &out);
    }
}

fn parse_tracked(rest: &[u8]) -> Option<(u64, Arc<[u8]>)> {
    let space = rest.iter().position(|b| *b == b' ')?;
    let key = std::str::from_utf8(&rest[..space]).ok()?.parse().ok()?;
    Some((key, Arc::from(unescape(&rest[space + 1..]))))
}

fn path_of(bytes: Vec<u8>) -> Option<PathBuf> {
    gix::path::from_bstring(gix::bstr::BString::from(bytes)).ok()
}

/// Writes `bytes` with `\`, newline and tab escaped, so a path is one field of one line.
fn escape(bytes: &[u8], out: &mut Vec<u8>) {
    for b in bytes {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b => out.push(*b),
        }
    }
}

/// [`unescape`], without a copy when there is nothing to unescape.
fn unescape_if_needed(bytes: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    match bytes.contains(&b'\\') {
        true => unescape(bytes).into(),
        false => bytes.into(),
    }
}

fn unescape(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut it = bytes.iter();
    while let Some(b) = it.next() {
        if *b != b'\\' {
            out.push(*b);
            continue;
        }
        match it.next() {
            Some(b'n') => out.push(b'\n'),
            Some(b't') => out.push(b'\t'),
            Some(other) => out.push(*other),
            None => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{escape, unescape, Known, Memos};
    use std::path::{Path, PathBuf};

    /// Paths that need escaping are found again, each under its own path only.
    #[test]
    fn stored_worktrees_are_found_by_their_path() {
        let dir = tempfile::tempdir().unwrap();
        let worktrees = ["/w/plain", "/w/tab\there", "/w/back\\slash", "/w/new\nline"];
        let known: Vec<(PathBuf, Known)> = worktrees
            .iter()
            .enumerate()
            .map(|(n, w)| {
                let known = Known {
                    dot_git: n as u64,
                    git_dir: PathBuf::from(format!("/g/{n}")),
                    memo: None,
                };
                (PathBuf::from(w), known)
            })
            .collect();
        Memos::load(dir.path()).store(&known);
        let memos = Memos::load(dir.path());
        assert_eq!(memos.count(), worktrees.len());
        for (path, k) in &known {
            assert!(memos.get(path) == Some(k.clone()), "{}", path.display());
        }
        assert!(memos.get(Path::new("/w/other")).is_none());
        assert!(memos.get(Path::new("/w/tab\\there")).is_none());
    }

    #[test]
    fn escaped_paths_read_back() {
        for path in [
            &b"/a/b"[..],
            b"/a\tb\nc\\d",
            b"\\n",
            b"",
            b"\xff\xfe",
            b"fa\0fb/c\0",
        ] {
            let mut out = Vec::new();
            escape(path, &mut out);
            assert!(!out.contains(&b'\n') && !out.contains(&b'\t'));
            assert_eq!(unescape(&out), path);
        }
    }
}
