//! Ignored files of a worktree: how many and how large, so a command that deletes
//! them with the worktree can say so first (they are never saved in an attempt).

use super::Repo;
use crate::error::{Error, Result};
use gix::bstr::ByteSlice;
use std::path::Path;

/// What is ignored in a worktree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Ignored {
    /// Ignored files (each file below an ignored directory counts).
    pub files: u64,
    /// Their total size in bytes.
    pub bytes: u64,
}

/// Counts the ignored files of the worktree `wt` (a repository opened at the worktree).
pub fn count(wt: &Repo) -> Result<Ignored> {
    use gix::dir::walk::EmissionMode;
    let workdir = wt.require_workdir()?.to_path_buf();
    let err = |e| Error::repo("could not list the ignored files", e);
    let index_path = super::staged::index_path(wt);
    let index = if index_path.exists() {
        super::staged::open_index(wt, &index_path)?
    } else {
        gix::index::File::from_state(
            gix::index::State::new(wt.inner.object_hash()),
            index_path.clone(),
        )
    };
    let options = wt
        .inner
        .dirwalk_options()
        .map_err(err)?
        .emit_ignored(Some(EmissionMode::CollapseDirectory))
        .emit_untracked(EmissionMode::CollapseDirectory);
    let mut collect = gix::dir::walk::delegate::Collect::default();
    let interrupt = std::sync::atomic::AtomicBool::new(false);
    wt.inner
        .dirwalk(&index, None::<&str>, &interrupt, options, &mut collect)
        .map_err(err)?;
    let mut out = Ignored::default();
    for (entry, _) in collect.unorded_entries {
        if !matches!(entry.status, gix::dir::entry::Status::Ignored(_)) {
            continue;
        }
        let Ok(rel) = gix::path::from_bstr(entry.rela_path.as_bstr()) else {
            continue;
        };
        add(&workdir.join(rel), &mut out);
    }
    Ok(out)
}

/// Adds the file at `path`, or every file below the directory at `path`.
fn add(path: &Path, out: &mut Ignored) {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    if !meta.is_dir() {
        out.files += 1;
        out.bytes += meta.len();
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return;
    };
    for e in entries.flatten() {
        add(&e.path(), out);
    }
}
