//! Commits of a worktree's state: HEAD, index and untracked (non-ignored) files.
//!
//! Used for attempts (work saved before anything discards it), checkpoints and
//! the patch-mode snapshot. Reading the state never touches the worktree or
//! its index.

use crate::error::{Context, Error, Result};
use crate::git::objects::{self, TreeEdit};
use crate::git::refs::{self, RefError, Update};
use crate::git::{ObjectId, Repo};
use crate::task::{layout, TaskId};
use gix::bstr::ByteSlice;
use gix::object::tree::EntryKind;
use std::collections::BTreeMap;

/// The state of one worktree, written as trees (nothing is changed on disk).
#[derive(Clone, Debug)]
pub struct WorktreeState {
    /// The commit HEAD points to (`None` on an unborn branch).
    pub head: Option<ObjectId>,
    /// The tree of HEAD (the empty tree when unborn).
    pub head_tree: ObjectId,
    /// The tree the index holds (staged state).
    pub index_tree: ObjectId,
    /// The tree of the files on disk, untracked non-ignored files included.
    pub worktree_tree: ObjectId,
    /// Paths that differ between HEAD and the worktree (staged, unstaged or untracked).
    pub changed: Vec<String>,
}

impl WorktreeState {
    /// Returns whether anything differs from HEAD, untracked files included.
    pub fn is_dirty(&self) -> bool {
        self.worktree_tree != self.head_tree || self.index_tree != self.head_tree
    }
}

/// Reads the state of the worktree `repo` was opened in.
pub fn read(repo: &Repo) -> Result<WorktreeState> {
    let workdir = repo.require_workdir()?.to_path_buf();
    let head = repo.head_commit()?;
    let head_tree = match head {
        Some(c) => objects::commit_tree(repo, c)?,
        None => objects::empty_tree(repo),
    };
    let status = repo
        .inner
        .status(gix::progress::Discard)
        .context(|| "could not read the worktree status".into())?
        .untracked_files(gix::status::UntrackedFiles::Files)
        .index_worktree_rewrites(None)
        .tree_index_track_renames(gix::status::tree_index::TrackRenames::Disabled)
        .index_worktree_submodules(gix::status::Submodule::Given {
            ignore: gix::submodule::config::Ignore::All,
            check_dirty: false,
        })
        .into_iter(None)
        .context(|| "could not read the worktree status".into())?;
    // path -> new entry (None = removed), first for the index, then for the worktree.
    let mut staged: BTreeMap<String, Option<(EntryKind, ObjectId)>> = BTreeMap::new();
    let mut on_disk: BTreeMap<String, Option<(EntryKind, ObjectId)>> = BTreeMap::new();
    for item in status {
        let item = item.map_err(|e| Error::repo("could not read the worktree status", e))?;
        match item {
            gix::status::Item::TreeIndex(change) => {
                use gix::diff::index::ChangeRef;
                match change {
                    ChangeRef::Addition {
                        location,
                        entry_mode,
                        id,
                        ..
                    }
                    | ChangeRef::Modification {
                        location,
                        entry_mode,
                        id,
                        ..
                    } => {
                        if let Some(kind) = crate::git::staged::entry_kind(entry_mode) {
                            staged.insert(location.to_string(), Some((kind, id.into_owned())));
                        }
                    }
                    ChangeRef::Deletion { location, .. } => {
                        staged.insert(location.to_string(), None);
                    }
                    ChangeRef::Rewrite {
                        location,
                        entry_mode,
                        id,
                        source_location,
                        ..
                    } => {
                        staged.insert(source_location.to_string(), None);
                        if let Some(kind) = crate::git::staged::entry_kind(entry_mode) {
                            staged.insert(location.to_string(), Some((kind, id.into_owned())));
                        }
                    }
                }
            }
            gix::status::Item::IndexWorktree(item) => {
                use gix::status::index_worktree::Item;
                use gix::status::plumbing::index_as_worktree::{Change, EntryStatus};
                match item {
                    Item::Modification {
                        rela_path,
                        status,
                        entry,
                        ..
                    } => {
                        let path = rela_path.to_string();
                        match status {
                            EntryStatus::Change(Change::Removed) => {
                                on_disk.insert(path, None);
                            }
                            EntryStatus::Change(Change::SubmoduleModification(_)) => {}
                            EntryStatus::NeedsUpdate(_) => {}
                            EntryStatus::Conflict { .. }
                            | EntryStatus::Change(_)
                            | EntryStatus::IntentToAdd => {
                                let _ = entry;
                                on_disk.insert(path.clone(), hash_file(repo, &workdir, &path)?);
                            }
                        }
                    }
                    Item::DirectoryContents { entry, .. } => {
                        if matches!(entry.status, gix::dir::entry::Status::Untracked) {
                            let path = entry.rela_path.to_string();
                            on_disk.insert(path.clone(), hash_file(repo, &workdir, &path)?);
                        }
                    }
                    Item::Rewrite { .. } => {}
                }
            }
        }
    }
    let to_edits = |map: &BTreeMap<String, Option<(EntryKind, ObjectId)>>| -> Vec<(String, Option<(EntryKind, ObjectId)>)> {
        map.iter().map(|(p, e)| (p.clone(), *e)).collect()
    };
    let index_tree = apply(repo, head_tree, &to_edits(&staged))?;
    let worktree_tree = apply(repo, index_tree, &to_edits(&on_disk))?;
    let mut changed: Vec<String> = staged.keys().chain(on_disk.keys()).cloned().collect();
    changed.sort();
    changed.dedup();
    Ok(WorktreeState {
        head,
        head_tree,
        index_tree,
        worktree_tree,
        changed,
    })
}

fn apply(
    repo: &Repo,
    tree: ObjectId,
    edits: &[(String, Option<(EntryKind, ObjectId)>)],
) -> Result<ObjectId> {
    if edits.is_empty() {
        return Ok(tree);
    }
    let edits: Vec<TreeEdit<'_>> = edits
        .iter()
        .map(|(path, e)| match e {
            Some((kind, id)) => TreeEdit::Upsert(path.as_str(), *kind, *id),
            None => TreeEdit::Remove(path.as_str()),
        })
        .collect();
    objects::edit_tree(repo, tree, &edits)
}

/// Writes the file at `path` (relative to `workdir`) as a blob; `None` if it is gone.
pub fn hash_file(
    repo: &Repo,
    workdir: &std::path::Path,
    path: &str,
) -> Result<Option<(EntryKind, ObjectId)>> {
    let full = workdir.join(path);
    let meta = match std::fs::symlink_metadata(&full) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::repo(format!("could not read '{path}'"), e)),
    };
    if meta.file_type().is_symlink() {
        let target =
            std::fs::read_link(&full).context(|| format!("could not read link '{path}'"))?;
        let bytes = gix::path::into_bstr(target)
            .map_err(|e| Error::repo(format!("could not read link '{path}'"), e))?
            .as_bytes()
            .to_vec();
        return Ok(Some((EntryKind::Link, objects::write_blob(repo, &bytes)?)));
    }
    if meta.is_dir() {
        return Ok(None);
    }
    let bytes = std::fs::read(&full).context(|| format!("could not read '{path}'"))?;
    let kind = if crate::git::is_executable(&meta) {
        EntryKind::BlobExecutable
    } else {
        EntryKind::Blob
    };
    Ok(Some((kind, objects::write_blob(repo, &bytes)?)))
}

/// Saves `tree` (with `parents`) as the next free `refs/tasks/<id>/attempts/<n>` and returns `(n, ref, commit)`.
pub fn save_attempt(
    repo: &Repo,
    id: &TaskId,
    tree: ObjectId,
    parents: &[ObjectId],
    why: &str,
) -> Result<(u32, String, ObjectId)> {
    let message = format!("git-task: attempt of {id}: {why}\n\nTask-Id: {id}\n");
    let commit = objects::write_own_commit(repo, tree, parents, &message)?;
    let mut n = next_number(repo, &layout::task_prefix(id), "attempts/")?;
    loop {
        let name = layout::attempt_ref(id, n);
        match refs::apply(
            repo,
            vec![Update::create(
                name.clone(),
                commit,
                format!("git-task: save attempt of {id}"),
            )],
        ) {
            Ok(()) => return Ok((n, name, commit)),
            Err(RefError::Conflict(_)) if n < 100_000 => n += 1,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Returns one more than the highest `<n>` under `<prefix><kind><n>`, starting at 1.
pub fn next_number(repo: &Repo, prefix: &str, kind: &str) -> Result<u32> {
    let full = format!("{prefix}{kind}");
    let max = repo
        .refs_under(&full)?
        .iter()
        .filter_map(|(name, _)| name.strip_prefix(&full)?.parse::<u32>().ok())
        .max()
        .unwrap_or(0);
    Ok(max + 1)
}
