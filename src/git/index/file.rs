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
