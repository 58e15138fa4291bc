//! Index files: opening one as git reads it, finding the index the caller's git
//! would commit, looking up a staged entry, and changing entries in place (the
//! pre-commit hook's revert).

use crate::error::{Context, Error, Result};
use crate::git::bstr::BStr;
use crate::git::{EntryKind, ObjectId, Repo};
use gix::index::entry::{Flags, Mode};
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

/// The directories that hold the tracked files of the index at `path` (SHA-1), each once,
/// `""` for the top.
pub fn entry_dirs(path: &Path) -> Result<std::collections::BTreeSet<String>> {
    let index = gix::index::File::at(
        path,
        gix::hash::Kind::Sha1,
        false,
        gix::index::decode::Options::default(),
    )
    .map_err(|e| Error::repo(format!("could not read the index '{}'", path.display()), e))?;
    let mut dirs = std::collections::BTreeSet::new();
    dirs.insert(String::new());
    for entry in index.entries() {
        let rel = entry.path(&index).to_string();
        let mut dir = rel.as_str();
        while let Some(i) = dir.rfind('/') {
            dir = &dir[..i];
            if !dirs.insert(dir.to_owned()) {
                break;
            }
        }
    }
    Ok(dirs)
}

/// Returns the index the caller's git would commit: `GIT_INDEX_FILE` when set (hooks), else the worktree's index.
pub fn index_path(repo: &Repo) -> std::path::PathBuf {
    repo.inner.index_path()
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
    crate::git::fs::replace_file(index_path, None, |file| {
        let mut out = std::io::BufWriter::new(file);
        index
            .write_to(&mut out, gix::index::write::Options::default())
            .map_err(std::io::Error::other)?;
        std::io::Write::flush(&mut out)
    })
    .context(|| format!("could not replace '{}'", index_path.display()))
}

/// Encodes `index` byte for byte as gix's `State::write_to` does with the default options (the
/// cached tree, the sparse marker and the end-of-index-entry extension as it writes them),
/// without the trailing checksum. gix writes each field of each entry through its own
/// `write_all`: at 100,000 entries that cost more than all the rest of a two-way move; this
/// copies each entry's fixed part from one buffer.
pub fn encode(index: &gix::index::State) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    encode_into(index, &mut |bytes| {
        out.extend_from_slice(bytes);
        Ok(())
    })?;
    Ok(out)
}

/// Writes `index` to `out` as [`encode`] encodes it, then its checksum, hashing each piece as
/// it goes: no 10 MB buffer for 100,000 entries, and each piece is hashed while it is still in
/// the processor's cache. `path` names the index in errors.
pub fn write_with_checksum(
    index: &gix::index::State,
    out: &mut dyn std::io::Write,
    path: &Path,
) -> Result<()> {
    let mut hasher = gix::hash::hasher(index.object_hash());
    let what = || format!("could not write the index '{}'", path.display());
    encode_into(index, &mut |bytes| {
        hasher.update(bytes);
        out.write_all(bytes)
    })
    .map_err(|e| Error::repo(what(), e))?;
    let sum = hasher
        .try_finalize()
        .map_err(|e| Error::repo_msg(format!("{}: {e}", what())))?;
    out.write_all(sum.as_slice())
        .map_err(|e| Error::repo(what(), e))
}

/// [`encode`], handing the bytes to `sink` a piece (about 256 KiB) at a time.
fn encode_into(
    index: &gix::index::State,
    sink: &mut dyn FnMut(&[u8]) -> std::io::Result<()>,
) -> Result<()> {
    const PIECE: usize = 256 * 1024;
    let written = |e: std::io::Error| Error::repo("could not write the index", e);
    let entries = index.entries();
    let backing = index.path_backing();
    let extended = entries.iter().any(|e| e.flags.contains(Flags::EXTENDED));
    let mut out = Vec::with_capacity(PIECE + 8192);
    // Bytes handed to `sink` so far.
    let mut flushed = 0usize;
    out.extend_from_slice(b"DIRC");
    out.extend_from_slice(&(if extended { 3u32 } else { 2 }).to_be_bytes());
    let live = entries
        .iter()
        .filter(|e| !e.flags.contains(Flags::REMOVE))
        .count();
    let live = u32::try_from(live).map_err(|e| Error::repo("too many index entries", e))?;
    out.extend_from_slice(&live.to_be_bytes());
    let header = out.len();
    for e in entries.iter().filter(|e| !e.flags.contains(Flags::REMOVE)) {
        let s = &e.stat;
        let fields = [
            s.ctime.secs,
            s.ctime.nsecs,
            s.mtime.secs,
            s.mtime.nsecs,
            s.dev,
            s.ino,
            e.mode.bits(),
            s.uid,
            s.gid,
            s.size,
        ];
        let mut fixed = [0u8; 40];
        for (at, value) in fixed.chunks_exact_mut(4).zip(fields) {
            at.copy_from_slice(&value.to_be_bytes());
        }
        out.extend_from_slice(&fixed);
        out.extend_from_slice(e.id.as_bytes());
        let path = e.path_in(backing);
        let len = path.len().min(Flags::PATH_LEN.bits() as usize) as u16;
        // As gix's `Flags::to_storage`: the low 16 bits without the in-memory path length.
        let stored = ((e.flags - Flags::PATH_LEN).bits() as u16) | len;
        out.extend_from_slice(&stored.to_be_bytes());
        if e.flags.contains(Flags::EXTENDED) {
            let more =
                ((e.flags & (Flags::INTENT_TO_ADD | Flags::SKIP_WORKTREE)).bits() >> 16) as u16;
            out.extend_from_slice(&more.to_be_bytes());
        }
        out.extend_from_slice(path);
        // The path's NUL, then NULs up to a multiple of 8 bytes from the first entry.
        out.push(0);
        let pad = (8 - (flushed + out.len() - header) % 8) % 8;
        out.resize(out.len() + pad, 0);
        if out.len() >= PIECE {
            sink(&out).map_err(written)?;
            flushed += out.len();
            out.clear();
        }
    }
    let to_extensions =
        u32::try_from(flushed + out.len()).map_err(|e| Error::repo("index too big", e))?;
    let mut toc = Vec::new();
    let mut before = out.len();
    if let Some(tree) = index.tree() {
        tree.write_to(&mut out).map_err(written)?;
        toc.push((
            gix::index::extension::tree::SIGNATURE,
            (out.len() - before - 8) as u32,
        ));
        before = out.len();
    }
    if index.is_sparse() {
        gix::index::extension::sparse::write_to(&mut out).map_err(written)?;
        toc.push((
            gix::index::extension::sparse::SIGNATURE,
            (out.len() - before - 8) as u32,
        ));
    }
    if !entries.is_empty() && !toc.is_empty() {
        gix::index::extension::end_of_index_entry::write_to(
            &mut out,
            index.object_hash(),
            to_extensions,
            toc,
        )
        .map_err(|e| Error::repo_msg(format!("could not encode the index: {e}")))?;
    }
    sink(&out).map_err(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let out = std::process::Command::new("git")
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{:?}", out);
    }

    fn gix_encoding(index: &gix::index::State) -> Vec<u8> {
        let mut bytes = Vec::new();
        index
            .write_to(&mut bytes, gix::index::write::Options::default())
            .unwrap();
        bytes
    }

    /// The fast encoder writes what gix writes: v2 and v3 entries, a long path, executable and
    /// symlink modes, the cached tree (valid and invalidated), an
    /// entry removed and one added, and an index without extensions.
    #[test]
    fn encode_writes_what_gix_writes() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        git(dir, &["init", "-q"]);
        let long = format!("d/{}", "x".repeat(300));
        std::fs::create_dir_all(dir.join("d/e")).unwrap();
        for (path, text) in [("a.txt", "a"), ("d/e/f.txt", "f"), ("d/g", "g"), ("z", "z")] {
            std::fs::write(dir.join(path), text).unwrap();
        }
        // A name past NAME_MAX: added to the index only.
        git(dir, &["add", "-A"]);
        let blob = {
            let out = std::process::Command::new("git")
                .current_dir(dir)
                .args(["hash-object", "-w", "--stdin"])
                .output()
                .unwrap();
            String::from_utf8(out.stdout).unwrap().trim().to_owned()
        };
        git(
            dir,
            &[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("100755,{blob},{long}"),
            ],
        );
        git(dir, &["write-tree"]);
        let path = dir.join(".git/index");
        let open = || {
            gix::index::File::at(
                &path,
                gix::hash::Kind::Sha1,
                false,
                gix::index::decode::Options::default(),
            )
            .unwrap()
        };
        let index = open();
        assert!(index.tree().is_some(), "git wrote the cached tree");
        assert_eq!(encode(&index).unwrap(), gix_encoding(&index));
        // v3: an extended flag.
        git(dir, &["update-index", "--skip-worktree", "d/g"]);
        let mut index = open();
        assert_eq!(index.version(), gix::index::Version::V3);
        assert_eq!(encode(&index).unwrap(), gix_encoding(&index));
        // Invalidated cached tree, a removed entry, a new one sorted in.
        if let Some(tree) = index.tree_mut() {
            tree.num_entries = None;
        }
        index.remove_entries(|_, p, _| p == "a.txt");
        let id = index.entries()[0].id;
        index.dangerously_push_entry(
            gix::index::entry::Stat::default(),
            id,
            Flags::empty(),
            Mode::SYMLINK,
            BStr::new("b-link"),
        );
        index.sort_entries();
        assert_eq!(encode(&index).unwrap(), gix_encoding(&index));
        index.remove_tree();
        assert_eq!(encode(&index).unwrap(), gix_encoding(&index));
        assert_checksummed(&index);
    }

    /// What `write_with_checksum` writes: the encoding and its SHA-1, as gix verifies it.
    fn assert_checksummed(index: &gix::index::State) {
        let mut written = Vec::new();
        write_with_checksum(index, &mut written, Path::new("index")).unwrap();
        let body = encode(index).unwrap();
        let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
        hasher.update(&body);
        let mut want = body;
        want.extend_from_slice(hasher.try_finalize().unwrap().as_slice());
        assert_eq!(written, want);
    }

    /// An index bigger than one piece of the encoder (256 KiB): paths of every length modulo 8
    /// cross the pieces' boundaries, and the padding still counts from the first entry.
    #[test]
    fn encode_in_pieces_writes_what_gix_writes() {
        let mut index = gix::index::State::new(gix::hash::Kind::Sha1);
        let id = ObjectId::from_hex(b"0123456789abcdef0123456789abcdef01234567").unwrap();
        for i in 0..6000u32 {
            let path = format!("dir{:03}/{}{i}", i % 97, "n".repeat((i % 23) as usize));
            let stat = gix::index::entry::Stat {
                mtime: gix::index::entry::stat::Time { secs: i, nsecs: 7 },
                size: i * 3,
                ino: i + 1,
                ..Default::default()
            };
            index.dangerously_push_entry(stat, id, Flags::empty(), Mode::FILE, BStr::new(&path));
        }
        index.sort_entries();
        let bytes = encode(&index).unwrap();
        assert!(bytes.len() > 2 * 256 * 1024);
        assert_eq!(bytes, gix_encoding(&index));
        assert_checksummed(&index);
    }
}
