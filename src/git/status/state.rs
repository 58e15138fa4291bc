//! The state of a worktree as trees: HEAD, the index, and the files on disk
//! (untracked, non-ignored files included), read without changing the worktree
//! or its index. Snapshots (attempts, checkpoints, patch-mode starts) commit it.

use crate::error::{Context, Error, Result};
use crate::git::bstr::{BStr, BString, ByteSlice};
use crate::git::{index::staged, objects, pack, EntryKind, ObjectId, Repo};
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
    /// Paths that differ between HEAD and the worktree (staged, unstaged or untracked),
    /// for display (a name that is not UTF-8 is shown lossily; the trees hold its bytes).
    pub changed: Vec<String>,
    /// Untracked directories that are repositories of their own (they hold a `.git`):
    /// their files are not in `worktree_tree`, and deleting them would lose their history.
    pub nested: Vec<BString>,
}

impl WorktreeState {
    /// Returns whether anything differs from HEAD, untracked files included.
    pub fn is_dirty(&self) -> bool {
        self.worktree_tree != self.head_tree
            || self.index_tree != self.head_tree
            || !self.nested.is_empty()
    }
}

/// Reads the state of the worktree `repo` was opened in.
///
/// Works like git's temporary-index snapshot (`git add -A` into a copy of the
/// index, then `git write-tree`), without writing an index: the staged side
/// is HEAD's tree plus what [`staged::changes`] finds (it skips every
/// directory whose cached tree in the index equals HEAD's, so it reads only
/// the trees of directories with staged changes), and the worktree side is
/// the index plus what gix's index-worktree status finds (modified, deleted
/// and untracked, non-ignored files). HEAD's tree is never loaded as a whole.
///
/// The trees and the blobs of changed files are written loose, like `git stash create`
/// writes them: for a look ([`read_to_keep`] is for a state a ref will name).
pub fn read(repo: &Repo) -> Result<WorktreeState> {
    let workdir = repo.require_workdir()?.to_path_buf();
    let head = repo.head_commit()?;
    let head_tree = match head {
        Some(c) => objects::commit_tree(repo, c)?,
        None => objects::empty_tree(repo),
    };
    let index_path = repo.index_path();
    let index = if index_path.exists() {
        crate::git::index::file::open_index(repo, &index_path)?
    } else {
        gix::index::File::from_state(
            gix::index::State::new(repo.inner.object_hash()),
            index_path.clone(),
        )
    };
    // path -> new entry (None = removed), first for the index, then for the worktree.
    // Paths are bytes: a file name that is not UTF-8 is saved under its own name.
    let mut staged: BTreeMap<BString, Option<(EntryKind, ObjectId)>> = BTreeMap::new();
    let mut on_disk: BTreeMap<BString, Option<(EntryKind, ObjectId)>> = BTreeMap::new();
    let mut nested = Vec::new();
    for change in staged::changes(repo, &index, head.map(|_| head_tree))? {
        staged.insert(change.path.into(), change.new);
    }
    for (path, seen) in worktree_changes(repo, &index)? {
        let entry = match seen {
            Seen::Removed => None,
            Seen::Changed => hash_file_bytes(repo, &workdir, path.as_ref())?,
            Seen::Repository => {
                nested.push(path);
                continue;
            }
        };
        on_disk.insert(path, entry);
    }
    let index_tree = objects::edit_tree_bytes(repo, head_tree, &staged)?;
    let worktree_tree = objects::edit_tree_bytes(repo, index_tree, &on_disk)?;
    let mut changed: Vec<String> = staged
        .keys()
        .chain(on_disk.keys())
        .chain(nested.iter())
        .map(|p| p.to_str_lossy().into_owned())
        .collect();
    changed.sort();
    changed.dedup();
    Ok(WorktreeState {
        head,
        head_tree,
        index_tree,
        worktree_tree,
        changed,
        nested,
    })
}

/// [`read`] for a state that is kept (an attempt, a checkpoint, a snapshot): its new objects
/// are written as one pack ([`pack::batch`]). A mere look writes loose objects instead, so
/// that looking again and again (`list`, `status`, `check`) does not pile up packs.
pub fn read_to_keep(repo: &Repo) -> Result<WorktreeState> {
    pack::batch(repo, read)
}

/// What the index-worktree status saw at one path.
enum Seen {
    /// A tracked file is gone from the disk.
    Removed,
    /// A tracked file differs from its entry, or an untracked (non-ignored) file: hash what is on disk.
    Changed,
    /// An untracked directory that is a repository of its own.
    Repository,
}

/// Lists the tracked files that differ from `index` on disk and the untracked, non-ignored files.
///
/// This is gix's index-worktree status (parallel stat checks and a directory
/// walk honouring `.gitignore`, `info/exclude` and `core.excludesFile`),
/// called directly rather than through `Repository::status`: that one would
/// open the index again (verifying its checksum) just to look for a
/// `.gitmodules` entry, and would compare HEAD's tree with the index, which
/// [`staged::changes`] does much more cheaply. Submodules are not looked
/// into, as before (their changes were ignored).
fn worktree_changes(repo: &Repo, index: &gix::index::File) -> Result<Vec<(BString, Seen)>> {
    use gix::status::plumbing::index_as_worktree::{Change, EntryStatus};
    use gix::status::plumbing::index_as_worktree_with_renames::{Entry, VisitEntry};

    struct Collect(Vec<(BString, Seen)>);
    impl<'index> VisitEntry<'index> for Collect {
        type ContentChange = ();
        type SubmoduleStatus = ();
        fn visit_entry(&mut self, entry: Entry<'index, (), ()>) {
            match entry {
                Entry::Modification {
                    rela_path, status, ..
                } => match status {
                    EntryStatus::Change(Change::Removed) => {
                        self.0.push((rela_path.to_owned(), Seen::Removed));
                    }
                    EntryStatus::Change(Change::SubmoduleModification(())) => {}
                    EntryStatus::NeedsUpdate(_) => {}
                    EntryStatus::Conflict { .. }
                    | EntryStatus::Change(_)
                    | EntryStatus::IntentToAdd => {
                        self.0.push((rela_path.to_owned(), Seen::Changed));
                    }
                },
                Entry::DirectoryContents { entry, .. } => {
                    if matches!(entry.status, gix::dir::entry::Status::Untracked) {
                        let seen = match entry.disk_kind {
                            Some(gix::dir::entry::Kind::Repository) => Seen::Repository,
                            _ => Seen::Changed,
                        };
                        self.0.push((entry.rela_path, seen));
                    }
                }
                Entry::Rewrite { .. } => {}
            }
        }
    }

    /// Submodules are never looked into.
    #[derive(Clone)]
    struct NoSubmodules;
    impl gix::status::plumbing::index_as_worktree::traits::SubmoduleStatus for NoSubmodules {
        type Output = ();
        fn status(
            &mut self,
            _entry: &gix::index::Entry,
            _rela_path: &BStr,
        ) -> gix::Result<Option<()>> {
            Ok(None)
        }
    }

    let err = |e| Error::repo("could not read the worktree status", e);
    let dirwalk = repo
        .inner
        .dirwalk_options()
        .map_err(err)?
        .emit_untracked(gix::dir::walk::EmissionMode::Matching);
    let mut collect = Collect(Vec::new());
    let interrupt = std::sync::atomic::AtomicBool::new(false);
    let here = relative_to_cwd(repo);
    here.as_ref()
        .unwrap_or(&repo.inner)
        .index_worktree_status(
            index,
            None::<&BStr>,
            &mut collect,
            gix::status::plumbing::index_as_worktree::traits::FastEq,
            NoSubmodules,
            &mut gix::progress::Discard,
            &interrupt,
            gix::status::index_worktree::Options {
                sorting: None,
                dirwalk_options: Some(dirwalk),
                rewrites: None,
                thread_limit: None,
            },
        )
        .map_err(err)?;
    Ok(collect.0)
}

/// The repository with its worktree named `.` when it is the current directory.
///
/// The status `lstat`s every tracked file and reads every directory by path.
/// Like git, which changes to the top of the worktree first, paths relative to
/// it are walked through far fewer directories by the kernel than absolute ones
/// (a tenth of the time of a patch-mode start in a repository of 10,000 files).
fn relative_to_cwd(repo: &Repo) -> Option<gix::Repository> {
    let workdir = repo.workdir()?;
    if !workdir.is_absolute() || std::env::current_dir().ok()? != workdir {
        return None;
    }
    let mut here = repo.inner.clone();
    here.set_workdir(std::path::PathBuf::from(".")).ok()?;
    Some(here)
}

/// Writes the file at `path` (relative to `workdir`) as a blob; `None` if it is gone.
pub fn hash_file(
    repo: &Repo,
    workdir: &std::path::Path,
    path: &str,
) -> Result<Option<(EntryKind, ObjectId)>> {
    hash_file_bytes(repo, workdir, path.into())
}

/// Like [`hash_file`], for a path given as git's bytes (a name need not be UTF-8).
pub fn hash_file_bytes(
    repo: &Repo,
    workdir: &std::path::Path,
    path: &BStr,
) -> Result<Option<(EntryKind, ObjectId)>> {
    let rel = gix::path::from_bstr(path)
        .map_err(|e| Error::repo(format!("could not read '{path}'"), e))?;
    let full = workdir.join(rel);
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
    let kind = if crate::git::is_executable(&meta) {
        EntryKind::BlobExecutable
    } else {
        EntryKind::Blob
    };
    if meta.len() > objects::STREAM_BLOB_ABOVE {
        // A big file is never held whole in memory: it streams into the object database.
        let mut file = std::fs::File::open(&full).context(|| format!("could not read '{path}'"))?;
        return Ok(Some((
            kind,
            objects::write_blob_from(repo, meta.len(), &mut file)?,
        )));
    }
    let bytes = std::fs::read(&full).context(|| format!("could not read '{path}'"))?;
    Ok(Some((kind, objects::write_blob(repo, &bytes)?)))
}
