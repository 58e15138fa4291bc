//! Moving a checked-out worktree from one commit to another in process: what
//! `git read-tree -m -u <old> <new>` does, for the cases where git's answer is
//! certain, without a `git` process that reads and rewrites the whole index.
//!
//! The rules are git's two-way merge rules, applied to the paths that differ
//! between `old` and `new` (every other index entry and file is left alone, so
//! unrelated local edits and staged changes stay):
//!
//! - a path `old` has must be in the index exactly as in `old` (same id and
//!   mode, stage 0, no skip-worktree / assume-unchanged / intent-to-add flag)
//!   and its file must be unmodified: its stat data matches the entry and is
//!   not racy (mtime not before the index's own), or else its content hashes
//!   to the entry's id with the same kind (file, executable file, symlink); a
//!   missing file is fine (git treats it as unmodified too);
//! - a path only `new` has must be absent from the index (and no index entry
//!   may sit at one of its parent directories or below it) and absent on disk;
//! - every parent directory of a changed path must be a real directory (not a
//!   symlink, not a file) or not exist yet;
//! - no entry anywhere in the index may be unmerged.
//!
//! Anything else (a local change, an untracked or ignored file or directory in
//! the way, a file becoming a directory or the reverse, a submodule) is
//! *declined*: nothing is written and the caller lets git decide, which either
//! does the update or refuses with its usual message. Declined as well, before
//! anything is read, is every setup whose effect on file contents or on the
//! index format gix cannot reproduce exactly: content conversion (any
//! attributes file, `core.autocrlf`, `core.eol`), a case-insensitive or
//! symlink-less or mode-less file system, sparse checkouts, and index
//! extensions gix 0.90 does not write (split index `link`, untracked cache
//! `UNTR`, fsmonitor `FSMN`, resolve-undo `REUC`, sparse `sdir`, index v4,
//! `index.skipHash`).
//!
//! When the update is certain it is done under the index lock (`index.lock`,
//! taken before the index is read, as git does; like git outside `git fsck`,
//! the index's trailing checksum is not verified on reading, and it is
//! computed afresh on writing): every new file is first
//! written to a temporary sibling (so running out of space fails before the
//! worktree changes), then deletions happen (emptied directories are removed),
//! then the temporary files are renamed into place; symlinks and the
//! executable bit follow the entry. The index gets the new entries with fresh
//! stat data, and its cached tree (`TREE`) is invalidated along every changed
//! path, as git's `cache_tree_invalidate_path` does, so no stale subtree id
//! survives. A freshly written file is racily clean (its mtime is not before
//! the index's), so git and gix re-hash it once rather than trust its stat.
//!
//! Longer than 500 lines on purpose: the two-way rules, the plan made from them,
//! the update that follows the plan and the crash repair ([`settle`]) must agree
//! line by line, so they are read together; files are written by `checkout`'s
//! one writer.

use super::{delete, remove_empty_parents, temp_name, write_temp};
use crate::error::{Context, Error, Result};
use crate::git::diff::{tree_to_tree, ChangedPath};
use crate::git::{objects, ObjectId, Repo};
use gix::bstr::{BStr, BString, ByteSlice};
use gix::index::entry::{Flags, Mode, Stage, Stat};
use gix::object::tree::EntryKind;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// An index [`update_keeping`] wrote, as it is on disk.
pub type Index = gix::index::File;

/// What [`update`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Update {
    /// Index and files of the worktree moved from `old` to `new`.
    Done,
    /// Nothing was written; git has to decide. The text says why.
    Declined(&'static str),
}

/// The paths that differ between two commits: what moving a worktree from one to the other changes.
#[derive(Default)]
pub struct Changes(Vec<ChangedPath>);

impl Changes {
    /// Returns how many paths differ.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Returns whether `index` holds every changed path exactly as the new commit has it
    /// (same blob and mode, stage 0), and none that it deletes.
    pub fn in_index(&self, index: &gix::index::File) -> bool {
        self.0.iter().all(|c| {
            let path = BStr::new(c.path.as_bytes());
            let at = index.entry_by_path_and_stage(path, Stage::Unconflicted);
            match (c.new, at) {
                (None, None) => true,
                (Some((kind, id)), Some(e)) => e.id == id && e.mode == mode_of(kind),
                _ => false,
            }
        })
    }

    /// Returns whether the move changes a `.gitignore` file: what is ignored, and so what is
    /// untracked, may differ afterwards.
    pub fn changes_ignore_rules(&self) -> bool {
        self.0
            .iter()
            .any(|c| c.path == ".gitignore" || c.path.ends_with("/.gitignore"))
    }

    /// Returns every path that differs.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|c| c.path.as_str())
    }

    /// Returns the paths the move adds (absent at the old commit).
    pub fn added(&self) -> impl Iterator<Item = &str> {
        self.0
            .iter()
            .filter(|c| c.old.is_none() && c.new.is_some())
            .map(|c| c.path.as_str())
    }
}

/// Finds what moving a worktree from commit `old` to commit `new` changes (for [`is_certainly_safe`] and [`update`]).
///
/// A path git refuses (SPEC §5) is an error (`unsafe_path`): such a tree is never written to disk.
pub fn changes(repo: &Repo, old: ObjectId, new: ObjectId) -> Result<Changes> {
    let changes = tree_to_tree(
        repo,
        objects::commit_tree(repo, old)?,
        objects::commit_tree(repo, new)?,
    )?;
    crate::git::diff::check_safe(&changes, &format!("commit {new}"))?;
    Ok(Changes(changes))
}

/// Returns `true` when moving the worktree at `worktree` (with its branch at
/// the old commit of `changes`) to the new one certainly overwrites nothing:
/// every path that differs between the two is, in that worktree's index and on
/// disk, exactly as in the old commit, and nothing is in the way of a path the
/// new one adds.
///
/// `false` means "not certain": the caller then asks git (`git read-tree -n -m
/// -u`) for the authoritative answer and its message. This is a look ahead of
/// the real [`update`], which checks everything again under the index lock.
pub fn is_certainly_safe(repo: &Repo, worktree: &Path, changes: &Changes) -> Result<bool> {
    let changes = &changes.0;
    if changes.is_empty() {
        return Ok(true);
    }
    let opened;
    let wt = if is_workdir_of(repo, worktree) {
        repo
    } else {
        opened = crate::git::worktree::open_at(worktree)?;
        &opened
    };
    let index_path = wt.inner.index_path();
    if !index_path.exists() {
        return Ok(false);
    }
    let index = read_index(repo, &index_path)?;
    let stat = wt
        .inner
        .stat_options()
        .context(|| "could not read the stat options".into())?;
    Ok(plan(repo, worktree, &index, changes, stat)?.is_ok())
}

/// Moves the index and files of the worktree at `worktree` from the old commit
/// of `changes` to the new one when that is certain to overwrite nothing (module docs);
/// otherwise writes nothing and returns [`Update::Declined`].
///
/// Anything that goes wrong before the first tracked file changes (an unreadable
/// index or file, a temporary file that cannot be written) declines too, so that
/// git decides and the caller can still roll back. An error after that (a
/// deletion or rename that fails) leaves the index as it was; the files already
/// changed stay.
pub fn update(repo: &Repo, worktree: &Path, changes: &Changes) -> Result<Update> {
    update_with(repo, worktree, changes, &mut |_| {})
}

/// [`update`], calling `written` with the new index once it replaced the old one (a
/// caller that needs it saves reading it again: 10 MB at 100,000 files).
pub fn update_with(
    repo: &Repo,
    worktree: &Path,
    changes: &Changes,
    written: &mut dyn FnMut(&gix::index::File),
) -> Result<Update> {
    let (update, index) = update_keeping(repo, worktree, changes)?;
    if let Some(index) = &index {
        written(index);
    }
    Ok(update)
}

/// [`update`], giving back the new index once it replaced the old one (`None` when nothing was
/// written: declined, or nothing differs).
pub fn update_keeping(
    repo: &Repo,
    worktree: &Path,
    changes: &Changes,
) -> Result<(Update, Option<Index>)> {
    let declined = |why| Ok((Update::Declined(why), None));
    let changes = &changes.0;
    if changes.is_empty() {
        return Ok((Update::Done, None));
    }
    let opened;
    let wt = if is_workdir_of(repo, worktree) {
        repo
    } else {
        opened = crate::git::worktree::open_at(worktree)?;
        &opened
    };
    if let Some(why) = unsupported_setup(repo, wt, changes)? {
        return declined(why);
    }
    let stat = wt
        .inner
        .stat_options()
        .context(|| "could not read the stat options".into())?;
    let index_path = wt.inner.index_path();
    if !index_path.exists() {
        return declined("the worktree has no index");
    }
    // Held from before the index is read until the new index replaces it, as git does.
    let Ok(lock) = gix::lock::File::acquire_to_update_resource(
        &index_path,
        gix::lock::acquire::Fail::Immediately,
        None,
        0,
    ) else {
        return declined("the index is locked");
    };
    // Until the first file is written, anything that goes wrong leaves the answer to git.
    let Ok(mut index) = read_index(repo, &index_path) else {
        return declined("the index cannot be read");
    };
    if let Some(why) = unsupported_index(&index) {
        return declined(why);
    }
    let steps = match plan(repo, worktree, &index, changes, stat) {
        Ok(Ok(steps)) => steps,
        Ok(Err(why)) => return declined(why),
        Err(_) => return declined("a path cannot be read"),
    };

    // 1. Every new content goes to a temporary sibling first: nothing tracked has changed yet.
    let mut staged: Vec<(PathBuf, PathBuf)> = Vec::new();
    for step in steps.iter().filter(|s| s.change.new.is_some()) {
        let (kind, id) = step.change.new.expect("filtered");
        match write_temp(repo, worktree, Path::new(&step.change.path), kind, id) {
            Ok(pair) => staged.push(pair),
            Err(_) => {
                discard(worktree, &staged);
                let full = worktree.join(&step.change.path);
                remove_empty_parents(worktree, &full);
                return declined("a file cannot be written");
            }
        }
    }
    // 2. Deletions, with the directories they leave empty; 3. the new files into place.
    for step in steps.iter().filter(|s| s.change.new.is_none()) {
        if let Err(e) = delete(worktree, Path::new(&step.change.path)) {
            discard(worktree, &staged);
            return Err(e);
        }
    }
    for (i, (tmp, full)) in staged.iter().enumerate() {
        if let Err(e) = std::fs::rename(tmp, full) {
            discard(worktree, &staged[i..]);
            return Err(Error::repo(
                format!("could not write '{}'", full.display()),
                e,
            ));
        }
    }

    // 4. The index: changed entries with fresh stat data, deleted ones gone, added ones sorted in.
    let mut removed: BTreeSet<BString> = BTreeSet::new();
    let mut added = Vec::new();
    for step in &steps {
        let path = &step.change.path;
        match (step.change.new, step.entry) {
            (Some((kind, id)), at) => {
                let full = worktree.join(path);
                let stat = gix::index::fs::Metadata::from_path_no_follow(&full)
                    .ok()
                    .and_then(|m| Stat::from_fs(&m).ok())
                    .unwrap_or_default();
                match at {
                    Some(i) => {
                        let entry = &mut index.entries_mut()[i];
                        entry.id = id;
                        entry.mode = mode_of(kind);
                        entry.stat = stat;
                    }
                    None => added.push((stat, id, mode_of(kind), BString::from(path.as_str()))),
                }
            }
            (None, _) => {
                removed.insert(BString::from(path.as_str()));
            }
        }
    }
    if !removed.is_empty() {
        index.remove_entries(|_, path, _| removed.contains(path));
    }
    let sort = !added.is_empty();
    for (stat, id, mode, path) in added {
        index.dangerously_push_entry(stat, id, Flags::empty(), mode, path.as_bstr());
    }
    if sort {
        index.sort_entries();
    }
    if let Some(tree) = index.tree_mut() {
        for c in changes {
            invalidate(tree, &c.path);
        }
    }
    // Encoded and hashed a piece at a time (gix hashing each small write costs more than all the rest).
    let mut lock = lock;
    crate::git::index::file::write_with_checksum(&index, &mut lock, &index_path)?;
    lock.commit().map_err(|e| {
        Error::repo(
            format!("could not replace the index of '{}'", worktree.display()),
            e.error,
        )
    })?;
    Ok((Update::Done, Some(index)))
}

/// Returns the kind and blob id of what is on disk at `full` (`None`: nothing, or a directory).
fn on_disk(repo: &Repo, full: &Path) -> Option<(EntryKind, ObjectId)> {
    let meta = std::fs::symlink_metadata(full).ok()?;
    let (kind, bytes) = if meta.file_type().is_symlink() {
        let target = std::fs::read_link(full).ok()?;
        let bytes: Vec<u8> = gix::path::into_bstr(target).ok()?.into_owned().into();
        (EntryKind::Link, bytes)
    } else if meta.is_file() {
        let kind = if crate::git::is_executable(&meta) {
            EntryKind::BlobExecutable
        } else {
            EntryKind::Blob
        };
        (kind, std::fs::read(full).ok()?)
    } else {
        return None;
    };
    let id =
        gix::objs::compute_hash(repo.inner.object_hash(), gix::object::Kind::Blob, &bytes).ok()?;
    Some((kind, id))
}

/// Finishes a move of the worktree at `worktree` from commit `from` to commit `to`
/// that process `pid` (gone: killed) left half done, or undoes it (`from`/`to` swapped).
///
/// For every path that differs between the two commits: the temporary file `pid`
/// may have left beside it is deleted; a file still as in `from` (or missing) is
/// written as in `to` (or deleted); a file as in `to` is left; a file that is
/// neither is a change of the user's and is left as it is. Then the index entries
/// of exactly those paths are set to `to` (fresh stat data where the file matches,
/// zeroed where it does not, so git re-hashes it), under the index lock; a lock left
/// by `pid` is deleted first. Every other index entry and file is left alone.
///
/// Returns the paths whose files were written or deleted.
pub fn settle(
    repo: &Repo,
    worktree: &Path,
    from: ObjectId,
    to: ObjectId,
    pid: u32,
) -> Result<Vec<String>> {
    let changes = tree_to_tree(
        repo,
        objects::commit_tree(repo, from)?,
        objects::commit_tree(repo, to)?,
    )?;
    let opened;
    let wt = if is_workdir_of(repo, worktree) {
        repo
    } else {
        opened = crate::git::worktree::open_at(worktree)?;
        &opened
    };
    let index_path = wt.inner.index_path();
    clear_stale_index_lock(&index_path)?;
    let mut written = Vec::new();
    for c in &changes {
        let full = worktree.join(&c.path);
        let tmp = temp_name(&full, pid);
        if std::fs::remove_file(&tmp).is_ok() {
            remove_empty_parents(worktree, &tmp);
        }
        let now = on_disk(repo, &full);
        if now == c.new {
            continue;
        }
        if now.is_some() && now != c.old {
            continue; // the user's own change: never overwritten
        }
        match c.new {
            Some((EntryKind::Commit, _)) | Some((EntryKind::Tree, _)) => continue,
            Some((kind, id)) => {
                if std::fs::symlink_metadata(&full).is_ok_and(|m| m.is_dir()) {
                    continue;
                }
                let (tmp, full) = write_temp(repo, worktree, Path::new(&c.path), kind, id)?;
                if let Err(e) = std::fs::rename(&tmp, &full) {
                    let _ = std::fs::remove_file(&tmp);
                    return Err(Error::repo(
                        format!("could not write '{}'", full.display()),
                        e,
                    ));
                }
            }
            None => delete(worktree, Path::new(&c.path))?,
        }
        written.push(c.path.clone());
    }
    if !index_path.exists() {
        return Ok(written);
    }
    let lock = gix::lock::File::acquire_to_update_resource(
        &index_path,
        gix::lock::acquire::Fail::AfterDurationWithBackoff(std::time::Duration::from_secs(2)),
        None,
        0,
    )
    .map_err(|e| Error::repo(format!("could not lock '{}'", index_path.display()), e))?;
    let mut index = read_index(repo, &index_path)?;
    let mut removed: BTreeSet<BString> = BTreeSet::new();
    let mut added = Vec::new();
    for c in &changes {
        let path = BStr::new(c.path.as_bytes());
        let at = index.entry_index_by_path_and_stage(path, Stage::Unconflicted);
        match c.new {
            Some((kind, id)) => {
                let full = worktree.join(&c.path);
                let stat = if on_disk(repo, &full) == c.new {
                    gix::index::fs::Metadata::from_path_no_follow(&full)
                        .ok()
                        .and_then(|m| Stat::from_fs(&m).ok())
                        .unwrap_or_default()
                } else {
                    Stat::default()
                };
                match at {
                    Some(i) => {
                        let entry = &mut index.entries_mut()[i];
                        entry.id = id;
                        entry.mode = mode_of(kind);
                        entry.stat = stat;
                    }
                    None => added.push((stat, id, mode_of(kind), BString::from(c.path.as_str()))),
                }
            }
            None => {
                if at.is_some() {
                    removed.insert(BString::from(c.path.as_str()));
                }
            }
        }
    }
    if !removed.is_empty() {
        index.remove_entries(|_, path, _| removed.contains(path));
    }
    let sort = !added.is_empty();
    for (stat, id, mode, path) in added {
        index.dangerously_push_entry(stat, id, Flags::empty(), mode, path.as_bstr());
    }
    if sort {
        index.sort_entries();
    }
    if let Some(tree) = index.tree_mut() {
        for c in &changes {
            invalidate(tree, &c.path);
        }
    }
    let mut lock = lock;
    crate::git::index::file::write_with_checksum(&index, &mut lock, &index_path)?;
    lock.commit().map_err(|e| {
        Error::repo(
            format!("could not replace the index of '{}'", worktree.display()),
            e.error,
        )
    })?;
    Ok(written)
}

/// One changed path that passed the checks, with the position of its index entry (when it has one).
struct Step<'a> {
    change: &'a ChangedPath,
    entry: Option<usize>,
}

fn is_workdir_of(repo: &Repo, worktree: &Path) -> bool {
    repo.workdir()
        .is_some_and(|w| crate::git::normalize(w) == crate::git::normalize(worktree))
}

/// Reads an index without verifying its trailing checksum, as git does outside `git fsck`
/// (`verify_index_checksum`): hashing a 100,000-entry index costs more than decoding it.
fn read_index(repo: &Repo, path: &Path) -> Result<gix::index::File> {
    gix::index::File::at(
        path,
        repo.inner.object_hash(),
        true,
        gix::index::decode::Options::default(),
    )
    .context(|| format!("could not read the index '{}'", path.display()))
}

/// Returns why this worktree's setup could make git write other contents or another index than gix would.
fn unsupported_setup(
    repo: &Repo,
    wt: &Repo,
    changes: &[ChangedPath],
) -> Result<Option<&'static str>> {
    let fs = wt
        .inner
        .filesystem_options()
        .context(|| "could not read the file system options".into())?;
    if fs.ignore_case || fs.precompose_unicode || !fs.symlink || !fs.executable_bit {
        return Ok(Some("the file system options need git"));
    }
    let set = |key: &str| wt.config_string(key).filter(|v| !v.is_empty());
    let on = |key: &str| wt.config_bool(key).unwrap_or(false);
    if set("core.autocrlf").is_some_and(|v| !v.eq_ignore_ascii_case("false"))
        || set("core.eol").is_some()
        || set("core.attributesFile").is_some()
        || set("attr.tree").is_some()
        || std::env::var_os("GIT_ATTR_SOURCE").is_some()
    {
        return Ok(Some("content conversion is configured"));
    }
    if on("core.sparseCheckout")
        || on("core.splitIndex")
        || on("core.untrackedCache")
        || on("index.skipHash")
        || on("feature.manyFiles")
        || set("index.version").is_some()
        || set("core.fsmonitor").is_some_and(|v| !v.eq_ignore_ascii_case("false"))
        || set("core.sharedRepository").is_some()
    {
        return Ok(Some("the index format or checkout settings need git"));
    }
    // gix merges a split index into one on reading, so only its shared file tells (a stale one merely costs a git run).
    for dir in [wt.git_dir(), repo.common_dir()] {
        let shared = std::fs::read_dir(dir)
            .map(|d| {
                d.flatten()
                    .any(|e| e.file_name().to_string_lossy().starts_with("sharedindex."))
            })
            .unwrap_or(false);
        if shared {
            return Ok(Some("split index"));
        }
    }
    // Attributes files that could apply to a changed path: global, repository-wide, per directory.
    let mut files: Vec<PathBuf> = vec![
        repo.common_dir().join("info").join("attributes"),
        PathBuf::from("/etc/gitattributes"),
    ];
    files.extend(crate::git::fs::xdg_git_file("attributes"));
    let workdir = wt.require_workdir()?;
    let mut dirs = BTreeSet::new();
    for c in changes {
        if c.path == ".gitattributes" || c.path.ends_with("/.gitattributes") {
            return Ok(Some("the change touches an attributes file"));
        }
        let mut dir = c.path.as_str();
        while let Some(cut) = dir.rfind('/') {
            dir = &dir[..cut];
            if !dirs.insert(dir) {
                break;
            }
        }
    }
    files.push(workdir.join(".gitattributes"));
    files.extend(dirs.iter().map(|d| workdir.join(d).join(".gitattributes")));
    if files.iter().any(|f| std::fs::symlink_metadata(f).is_ok()) {
        return Ok(Some("an attributes file may apply"));
    }
    Ok(None)
}

/// Returns why gix could not write this index back with everything it holds.
fn unsupported_index(index: &gix::index::File) -> Option<&'static str> {
    if index.version() == gix::index::Version::V4 {
        return Some("index version 4");
    }
    if index.link().is_some() {
        return Some("split index"); // not reached in gix 0.90, which merges a split index when reading it
    }
    if index.untracked().is_some() {
        return Some("untracked cache");
    }
    if index.fs_monitor().is_some() {
        return Some("fsmonitor data");
    }
    if index.resolve_undo().is_some() {
        return Some("resolve-undo data");
    }
    if index.is_sparse() {
        return Some("sparse index");
    }
    None
}

/// Checks every changed path (module docs); `Err(why)` when git has to decide.
fn plan<'a>(
    repo: &Repo,
    workdir: &Path,
    index: &gix::index::File,
    changes: &'a [ChangedPath],
    stat: gix::index::entry::stat::Options,
) -> Result<std::result::Result<Vec<Step<'a>>, &'static str>> {
    // An unfinished merge anywhere in the index makes git refuse any two-tree update.
    if index.entries().iter().any(|e| e.stage_raw() != 0) {
        return Ok(Err("the index has unmerged entries"));
    }
    let mut steps = Vec::with_capacity(changes.len());
    for change in changes {
        let kinds = change.old.iter().chain(change.new.iter());
        if kinds
            .clone()
            .any(|(k, _)| matches!(k, EntryKind::Commit | EntryKind::Tree))
        {
            return Ok(Err("a submodule changes"));
        }
        let path = change.path.as_bytes().as_bstr();
        let at = index.entry_index_by_path_and_stage(path, Stage::Unconflicted);
        let full = workdir.join(&change.path);
        let on_disk = match parents(workdir, &change.path) {
            Parents::Blocked => return Ok(Err("something is in the way of a parent directory")),
            Parents::Missing => None,
            Parents::Dirs => match std::fs::symlink_metadata(&full) {
                Ok(meta) => Some(meta),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(_) => return Ok(Err("a path cannot be read")),
            },
        };
        match (change.old, at) {
            (Some((kind, id)), Some(i)) => {
                let entry = &index.entries()[i];
                if entry.id != id || entry.mode != mode_of(kind) {
                    return Ok(Err("the index differs from the old commit"));
                }
                if entry
                    .flags
                    .intersects(Flags::SKIP_WORKTREE | Flags::ASSUME_VALID | Flags::INTENT_TO_ADD)
                {
                    return Ok(Err("an index entry has special flags"));
                }
                if let Some(meta) = on_disk {
                    if !file_is_unmodified(repo, &full, &meta, index, entry, kind, stat)? {
                        return Ok(Err("a local change"));
                    }
                }
            }
            (None, None) => {
                if on_disk.is_some() {
                    return Ok(Err("an untracked path is in the way"));
                }
                // No index entry at a parent of the new path, nor below it.
                let mut prefix = change.path.as_str();
                while let Some(cut) = prefix.rfind('/') {
                    prefix = &prefix[..cut];
                    if index
                        .entry_index_by_path_and_stage(
                            prefix.as_bytes().as_bstr(),
                            Stage::Unconflicted,
                        )
                        .is_some()
                    {
                        return Ok(Err("a file becomes a directory"));
                    }
                }
                let below = format!("{}/", change.path);
                if index
                    .prefixed_entries(below.as_bytes().as_bstr())
                    .is_some_and(|e| !e.is_empty())
                {
                    return Ok(Err("a directory becomes a file"));
                }
            }
            _ => return Ok(Err("the index differs from the old commit")),
        }
        steps.push(Step { change, entry: at });
    }
    Ok(Ok(steps))
}

enum Parents {
    /// Every parent directory exists and is a real directory.
    Dirs,
    /// A parent directory does not exist (so neither does the path).
    Missing,
    /// A parent is a file, a symlink or unreadable.
    Blocked,
}

fn parents(workdir: &Path, path: &str) -> Parents {
    let mut dir = workdir.to_path_buf();
    let mut parts = path.split('/').peekable();
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            break;
        }
        dir.push(part);
        match std::fs::symlink_metadata(&dir) {
            Ok(m) if m.file_type().is_dir() => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Parents::Missing,
            _ => return Parents::Blocked,
        }
    }
    Parents::Dirs
}

/// Returns whether the file at `full` holds what `entry` records: same kind, and
/// trustworthy equal stat data or else the same content (racy-git aware, like git's `ie_match_stat`).
fn file_is_unmodified(
    repo: &Repo,
    full: &Path,
    meta: &std::fs::Metadata,
    index: &gix::index::File,
    entry: &gix::index::Entry,
    kind: EntryKind,
    stat: gix::index::entry::stat::Options,
) -> Result<bool> {
    let kind_on_disk = if meta.file_type().is_symlink() {
        EntryKind::Link
    } else if meta.is_file() {
        if crate::git::is_executable(meta) {
            EntryKind::BlobExecutable
        } else {
            EntryKind::Blob
        }
    } else {
        return Ok(false);
    };
    if kind_on_disk != kind {
        return Ok(false);
    }
    let Ok(now) = gix::index::fs::Metadata::from_path_no_follow(full) else {
        return Ok(false);
    };
    if let Ok(now) = Stat::from_fs(&now) {
        if entry.stat.matches(&now, stat) && !entry.stat.is_racy(index.timestamp(), stat) {
            return Ok(true);
        }
    }
    let bytes = if kind == EntryKind::Link {
        let target = std::fs::read_link(full)
            .context(|| format!("could not read link '{}'", full.display()))?;
        match gix::path::into_bstr(target) {
            Ok(b) => b.into_owned().into(),
            Err(_) => return Ok(false),
        }
    } else {
        std::fs::read(full).context(|| format!("could not read '{}'", full.display()))?
    };
    let id = gix::objs::compute_hash(repo.inner.object_hash(), gix::object::Kind::Blob, &bytes)
        .context(|| format!("could not hash '{}'", full.display()))?;
    Ok(id == entry.id)
}

fn mode_of(kind: EntryKind) -> Mode {
    match kind {
        EntryKind::BlobExecutable => Mode::FILE_EXECUTABLE,
        EntryKind::Link => Mode::SYMLINK,
        EntryKind::Commit => Mode::COMMIT,
        EntryKind::Tree => Mode::DIR,
        EntryKind::Blob => Mode::FILE,
    }
}

/// Marks the cached tree of every directory above `path` (and the root) as needing a rebuild.
fn invalidate(root: &mut gix::index::extension::Tree, path: &str) {
    root.num_entries = None;
    let mut node = root;
    let mut parts = path.split('/').peekable();
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            break;
        }
        let Some(child) = node
            .children
            .iter_mut()
            .find(|c| c.name.as_slice() == part.as_bytes())
        else {
            break;
        };
        child.num_entries = None;
        node = child;
    }
}

/// Removes temporary files written by [`write_temp`] and the directories made for them.
fn discard(workdir: &Path, staged: &[(PathBuf, PathBuf)]) {
    for (tmp, _) in staged {
        let _ = std::fs::remove_file(tmp);
        remove_empty_parents(workdir, tmp);
    }
}

/// Deletes the `index.lock` next to `index_path` that a killed process left, once the caller
/// holds what makes it the only writer there: a lock younger than three seconds gets that
/// long first (a `git read-tree` the killed process started may still be finishing).
pub fn clear_stale_index_lock(index_path: &Path) -> Result<()> {
    let stale_lock = index_path.with_file_name("index.lock");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    while std::fs::metadata(&stale_lock)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age < std::time::Duration::from_secs(3))
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    match std::fs::remove_file(&stale_lock) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::repo(
            format!("could not delete '{}'", stale_lock.display()),
            e,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, children: Vec<gix::index::extension::Tree>) -> gix::index::extension::Tree {
        gix::index::extension::Tree {
            name: name.as_bytes().into(),
            id: ObjectId::null(gix::hash::Kind::Sha1),
            num_entries: Some(1),
            children,
        }
    }

    #[test]
    fn invalidate_marks_only_the_directories_on_the_path() {
        let mut root = node(
            "",
            vec![
                node("a", vec![node("b", vec![]), node("c", vec![])]),
                node("d", vec![]),
            ],
        );
        invalidate(&mut root, "a/b/file.txt");
        assert_eq!(root.num_entries, None);
        assert_eq!(root.children[0].num_entries, None);
        assert_eq!(root.children[0].children[0].num_entries, None);
        assert_eq!(root.children[0].children[1].num_entries, Some(1));
        assert_eq!(root.children[1].num_entries, Some(1));
        // A top-level file only invalidates the root; a new directory stops where the tree ends.
        let mut root = node("", vec![node("a", vec![])]);
        invalidate(&mut root, "top.txt");
        assert_eq!(
            (root.num_entries, root.children[0].num_entries),
            (None, Some(1))
        );
        invalidate(&mut root, "a/new/x.txt");
        assert_eq!(root.children[0].num_entries, None);
    }
}
