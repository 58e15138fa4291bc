//! Ignored files of a worktree: how many and how large, so a command that deletes
//! them with the worktree can say so first (they are never saved in an attempt).

use crate::error::{Context, Error, Result};
use crate::git::Repo;
use gix::bstr::ByteSlice;
use std::path::Path;

/// What is ignored in a worktree.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
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
    let index_path = wt.index_path();
    let index = if index_path.exists() {
        crate::git::index::file::open_index(wt, &index_path)?
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

/// Adds the file at `path`, or every file below the directory at `path` (links are not followed).
fn add(path: &Path, out: &mut Ignored) {
    for entry in walkdir::WalkDir::new(path).into_iter().flatten() {
        if entry.file_type().is_dir() {
            continue;
        }
        if let Ok(meta) = entry.metadata() {
            out.files += 1;
            out.bytes += meta.len();
        }
    }
}

/// Returns the path relative to `root` (with `/` separators) of every file and link
/// below the directory `dir`; links are not followed, unreadable directories are skipped.
pub fn files_below(root: &Path, dir: &Path) -> Vec<String> {
    walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .flatten()
        .filter(|e| !e.file_type().is_dir())
        .filter_map(|e| {
            let rel = e.path().strip_prefix(root).ok()?;
            Some(rel.to_string_lossy().replace('\\', "/"))
        })
        .collect()
}

/// Returns the ignored files and (collapsed) directories of the worktree `repo` runs in,
/// as repository paths in path order (what `start --include` may copy).
pub fn entries(repo: &Repo) -> Result<Vec<String>> {
    let index = repo
        .inner
        .index_or_empty()
        .context(|| "could not read the index".into())?;
    let options = repo
        .inner
        .dirwalk_options()
        .context(|| "could not prepare a directory walk".into())?
        .emit_ignored(Some(gix::dir::walk::EmissionMode::CollapseDirectory))
        .emit_untracked(gix::dir::walk::EmissionMode::Matching);
    let mut collect = gix::dir::walk::delegate::Collect::default();
    repo.inner
        .dirwalk(
            &index,
            None::<&str>,
            crate::git::interrupt::flag(),
            options,
            &mut collect,
        )
        .context(|| "could not walk the worktree for ignored files".into())?;
    Ok(collect
        .into_entries_by_path()
        .into_iter()
        .filter(|(e, _)| matches!(e.status, gix::dir::entry::Status::Ignored(_)))
        .map(|(e, _)| e.rela_path.to_string())
        .filter(|p| !p.is_empty())
        .collect())
}
