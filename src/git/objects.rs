//! Writing blobs, trees and commits, and reading blobs at a path in a commit.

use crate::error::{Context, Result};
use crate::git::{ObjectId, Repo};
use gix::object::tree::EntryKind;

/// Writes `bytes` as a blob.
pub fn write_blob(repo: &Repo, bytes: &[u8]) -> Result<ObjectId> {
    Ok(repo
        .inner
        .write_blob(bytes)
        .context(|| "could not write a blob".into())?
        .detach())
}

/// Files larger than this are written as blobs from a stream ([`write_blob_from`]).
pub const STREAM_BLOB_ABOVE: u64 = 8 << 20;

/// Writes the `size` bytes `from` gives as a blob without ever holding them whole in memory:
/// the object database hashes and compresses them as they come, straight to disk (also inside
/// a batch, whose objects otherwise stay in memory until it ends). Fails, writing nothing,
/// when `from` ends before `size` bytes (a file that shrank while it was read); of a file that
/// grew, the first `size` bytes are taken.
pub fn write_blob_from(repo: &Repo, size: u64, from: &mut dyn std::io::Read) -> Result<ObjectId> {
    use gix::objs::Write;
    /// `from`, ending with an error when it gives fewer than `left` bytes.
    struct Exact<'a> {
        from: &'a mut dyn std::io::Read,
        left: u64,
    }
    impl std::io::Read for Exact<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.left == 0 || buf.is_empty() {
                return Ok(0);
            }
            let max = buf
                .len()
                .min(usize::try_from(self.left).unwrap_or(usize::MAX));
            let n = self.from.read(&mut buf[..max])?;
            if n == 0 {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "the file shrank while it was read",
                ));
            }
            self.left -= n as u64;
            Ok(n)
        }
    }
    let mut exact = Exact { from, left: size };
    if repo.objects == crate::git::Objects::Memory {
        // Objects that stay in memory for good: there is no disk to stream to.
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut exact, &mut bytes)
            .map_err(|e| crate::error::Error::repo("could not read a file", e))?;
        return write_blob(repo, &bytes);
    }
    let disk = repo.for_thread();
    disk.inner
        .objects
        .write_stream(gix::objs::Kind::Blob, size, &mut exact)
        .map_err(|e| crate::error::Error::repo_msg(format!("could not write a blob: {e}")))
}

/// Returns the root tree of `commit`.
pub fn commit_tree(repo: &Repo, commit: ObjectId) -> Result<ObjectId> {
    let c = repo
        .inner
        .find_commit(commit)
        .context(|| format!("could not read commit {commit}"))?;
    Ok(c.tree_id()
        .context(|| format!("could not read the tree of {commit}"))?
        .detach())
}

/// Returns the parents of `commit`.
pub fn commit_parents(repo: &Repo, commit: ObjectId) -> Result<Vec<ObjectId>> {
    let c = repo
        .inner
        .find_commit(commit)
        .context(|| format!("could not read commit {commit}"))?;
    Ok(c.parent_ids().map(|id| id.detach()).collect())
}

/// Returns the full message of `commit`.
pub fn commit_message(repo: &Repo, commit: ObjectId) -> Result<String> {
    let c = repo
        .inner
        .find_commit(commit)
        .context(|| format!("could not read commit {commit}"))?;
    let msg = c
        .message_raw()
        .context(|| format!("could not read the message of {commit}"))?;
    Ok(String::from_utf8_lossy(msg).into_owned())
}

/// One change to make to a tree.
pub enum TreeEdit<'a> {
    /// Put a blob (or link, or gitlink) at a path.
    Upsert(&'a str, EntryKind, ObjectId),
    /// Remove whatever is at a path.
    Remove(&'a str),
}

/// Writes a copy of `tree` with `edits` applied and returns its id.
pub fn edit_tree(repo: &Repo, tree: ObjectId, edits: &[TreeEdit<'_>]) -> Result<ObjectId> {
    let mut editor = repo
        .inner
        .edit_tree(tree)
        .context(|| format!("could not edit tree {tree}"))?;
    for edit in edits {
        match edit {
            TreeEdit::Upsert(path, kind, id) => {
                editor
                    .upsert(*path, *kind, *id)
                    .context(|| format!("could not add '{path}' to a tree"))?;
            }
            TreeEdit::Remove(path) => {
                editor
                    .remove(*path)
                    .context(|| format!("could not remove '{path}' from a tree"))?;
            }
        }
    }
    match editor.write() {
        Ok(id) => Ok(id.detach()),
        Err(e) => {
            // gix refuses to write a tree with a name git refuses: say which path, as `unsafe_path`.
            let mut seen = std::collections::HashSet::new();
            if let Ok(Some(bad)) = crate::git::pathsafe::unsafe_path_in_tree(repo, tree, &mut seen)
            {
                return Err(crate::git::pathsafe::refusal(&bad, &format!("tree {tree}")));
            }
            Err(crate::error::Error::repo("could not write a tree", e))
        }
    }
}

/// Writes a copy of `tree` with each path (git's bytes, which need not be UTF-8) set to
/// its entry, or removed where the entry is `None`.
pub fn edit_tree_bytes(
    repo: &Repo,
    tree: ObjectId,
    edits: &std::collections::BTreeMap<gix::bstr::BString, Option<(EntryKind, ObjectId)>>,
) -> Result<ObjectId> {
    if edits.is_empty() {
        return Ok(tree);
    }
    let mut editor = repo
        .inner
        .edit_tree(tree)
        .context(|| format!("could not edit tree {tree}"))?;
    for (path, entry) in edits {
        match entry {
            Some((kind, id)) => {
                editor
                    .upsert(path, *kind, *id)
                    .context(|| format!("could not add '{path}' to a tree"))?;
            }
            None => {
                editor
                    .remove(path)
                    .context(|| format!("could not remove '{path}' from a tree"))?;
            }
        }
    }
    Ok(editor
        .write()
        .context(|| "could not write a tree".into())?
        .detach())
}

/// Returns the commits reachable from `tips` but from none of `hidden`, newest first, at most `limit`.
pub fn commits_not_reachable(
    repo: &Repo,
    tips: &[ObjectId],
    hidden: &[ObjectId],
    limit: usize,
) -> Result<Vec<ObjectId>> {
    if tips.is_empty() {
        return Ok(Vec::new());
    }
    let walk = repo
        .inner
        .rev_walk(tips.iter().copied())
        .with_hidden(hidden.iter().copied())
        .all()
        .context(|| "could not walk the history".into())?;
    let mut out = Vec::new();
    for info in walk.take(limit) {
        let info = info.context(|| "could not walk the history".into())?;
        out.push(info.id);
    }
    Ok(out)
}

/// Returns the empty tree's id.
pub fn empty_tree(repo: &Repo) -> ObjectId {
    repo.inner.empty_tree().id
}

/// Writes a commit of `tree` with `parents`, signed by the configured identity (or git-task's fallback).
pub fn write_commit(
    repo: &Repo,
    tree: ObjectId,
    parents: &[ObjectId],
    message: &str,
) -> Result<ObjectId> {
    let committer = repo
        .inner
        .committer()
        .expect("Repo::from_gix sets a fallback identity")
        .context(|| "could not read the committer identity".into())?;
    let commit = repo
        .inner
        .new_commit_as(committer, committer, message, tree, parents.iter().copied())
        .context(|| "could not write a commit".into())?;
    Ok(commit.id)
}

/// Writes a commit of git-task's own bookkeeping (record events, attempts,
/// snapshots, checkpoints, notes), dated in UTC: these are read by git-task,
/// not shown in a user's history, and the local time zone costs a fifth of a
/// short command ([`Repo::own_signature`]).
pub fn write_own_commit(
    repo: &Repo,
    tree: ObjectId,
    parents: &[ObjectId],
    message: &str,
) -> Result<ObjectId> {
    let signature = repo.own_signature()?;
    let mut time = gix::date::parse::TimeBuf::default();
    let signature = signature.to_ref(&mut time);
    let commit = repo
        .inner
        .new_commit_as(signature, signature, message, tree, parents.iter().copied())
        .context(|| "could not write a commit".into())?;
    Ok(commit.id)
}

/// Writes a commit of git-task's own bookkeeping whose tree holds the one file `name` with
/// `bytes`: the state kept in a ref of its own (`claims.toml`, a queue's `queue.toml`).
pub fn write_one_file_commit(
    repo: &Repo,
    name: &str,
    bytes: &[u8],
    parents: &[ObjectId],
    message: &str,
) -> Result<ObjectId> {
    let blob = write_blob(repo, bytes)?;
    let tree = edit_tree(
        repo,
        empty_tree(repo),
        &[TreeEdit::Upsert(name, EntryKind::Blob, blob)],
    )?;
    write_own_commit(repo, tree, parents, message)
}

/// Reads the blob at `path` in the tree of `commit`; `None` when there is no such file.
pub fn read_blob_at(repo: &Repo, commit: ObjectId, path: &str) -> Result<Option<Vec<u8>>> {
    let tree = commit_tree(repo, commit)?;
    read_blob_in_tree(repo, tree, path)
}

/// Reads the blob at `path` in `tree`; `None` when there is no such file.
pub fn read_blob_in_tree(repo: &Repo, tree: ObjectId, path: &str) -> Result<Option<Vec<u8>>> {
    let tree = repo
        .inner
        .find_tree(tree)
        .context(|| format!("could not read tree {tree}"))?;
    let Some(entry) = tree
        .lookup_entry_by_path(path)
        .context(|| format!("could not look up '{path}'"))?
    else {
        return Ok(None);
    };
    if !entry.mode().is_blob() {
        return Ok(None);
    }
    let blob = repo
        .inner
        .find_blob(entry.object_id())
        .context(|| format!("could not read '{path}'"))?;
    Ok(Some(blob.data.clone()))
}

/// Reads the blob `id`.
pub fn read_blob(repo: &Repo, id: ObjectId) -> Result<Vec<u8>> {
    Ok(repo
        .inner
        .find_blob(id)
        .context(|| format!("could not read blob {id}"))?
        .data
        .clone())
}

/// Returns the id `bytes` would have as a blob, without writing it.
pub fn hash_blob(repo: &Repo, bytes: &[u8]) -> ObjectId {
    gix::objs::compute_hash(repo.inner.object_hash(), gix::objs::Kind::Blob, bytes)
        .expect("hashing a buffer in memory cannot fail")
}

/// Returns the entry at `path` in `tree` when it is not a tree (a blob, an executable,
/// a link or a submodule); `None` when there is none or it is a directory.
pub fn entry_in(repo: &Repo, tree: ObjectId, path: &str) -> Result<Option<(EntryKind, ObjectId)>> {
    Ok(Tree::read(repo, tree)?
        .entry(path)?
        .filter(|(kind, _)| *kind != EntryKind::Tree))
}

/// A tree read once for several lookups by path.
pub struct Tree<'r> {
    id: ObjectId,
    tree: gix::Tree<'r>,
}

impl<'r> Tree<'r> {
    /// Reads tree `id`.
    pub fn read(repo: &'r Repo, id: ObjectId) -> Result<Tree<'r>> {
        let tree = repo
            .inner
            .find_tree(id)
            .context(|| format!("could not read tree {id}"))?;
        Ok(Tree { id, tree })
    }

    /// Returns the entry at `path` (`a/b/c`), trees included; `None` when there is none.
    pub fn entry(&self, path: &str) -> Result<Option<(EntryKind, ObjectId)>> {
        let found = self
            .tree
            .lookup_entry_by_path(path)
            .context(|| format!("could not look up '{path}' in tree {}", self.id))?;
        Ok(found.map(|e| (e.mode().kind(), e.object_id())))
    }

    /// Returns the entry named `name` directly in this tree.
    pub fn top_entry(&self, name: &str) -> Option<(EntryKind, ObjectId)> {
        self.tree
            .find_entry(name)
            .map(|e| (e.mode().kind(), e.object_id()))
    }
}

/// Returns the best common ancestor of two commits, if any.
pub fn merge_base(repo: &Repo, a: ObjectId, b: ObjectId) -> Result<Option<ObjectId>> {
    let base = repo
        .inner
        .merge_base(a, b)
        .context(|| format!("could not find a merge base of {a} and {b}"))?;
    Ok(base.map(|id| id.detach()))
}

/// Counts commits reachable from `tip` but not from `hidden` (like `git rev-list --count hidden..tip`).
pub fn count_between(repo: &Repo, hidden: ObjectId, tip: ObjectId) -> Result<usize> {
    if hidden == tip {
        return Ok(0);
    }
    let walk = repo
        .inner
        .rev_walk([tip])
        .with_hidden([hidden])
        .all()
        .context(|| format!("could not walk {hidden}..{tip}"))?;
    let mut n = 0;
    for info in walk {
        info.map_err(|e| crate::error::Error::repo(format!("could not walk {hidden}..{tip}"), e))?;
        n += 1;
    }
    Ok(n)
}

/// A cache of flattened subtrees, shared by many calls to [`flatten_tree`].
pub type FlatCache = std::collections::HashMap<
    ObjectId,
    std::rc::Rc<Vec<(gix::bstr::BString, EntryKind, ObjectId)>>,
>;

/// Returns every non-tree entry of `tree`, recursively, as `(path, kind, id)` in full-path order.
///
/// Subtrees are flattened once per `cache`, so tasks sharing most of their tree cost little.
pub fn flatten_tree(
    repo: &Repo,
    tree: ObjectId,
    cache: &mut FlatCache,
) -> Result<std::rc::Rc<Vec<(gix::bstr::BString, EntryKind, ObjectId)>>> {
    flatten_at(repo, tree, cache, 0)
}

/// [`flatten_tree`] of a tree `depth` directories down: never deeper than git goes.
fn flatten_at(
    repo: &Repo,
    tree: ObjectId,
    cache: &mut FlatCache,
    depth: usize,
) -> Result<std::rc::Rc<Vec<(gix::bstr::BString, EntryKind, ObjectId)>>> {
    use gix::bstr::ByteVec;
    if depth > crate::git::pathsafe::MAX_TREE_DEPTH {
        return Err(crate::git::pathsafe::too_deep(&format!("tree {tree}")));
    }
    if let Some(hit) = cache.get(&tree) {
        return Ok(hit.clone());
    }
    let object = repo
        .inner
        .find_tree(tree)
        .context(|| format!("could not read tree {tree}"))?;
    let decoded = object
        .decode()
        .context(|| format!("could not decode tree {tree}"))?;
    // Tree order sorts a directory as if its name ended in '/', which is full-path order.
    let entries: Vec<(gix::bstr::BString, EntryKind, ObjectId)> = decoded
        .entries
        .iter()
        .map(|e| (e.filename.to_owned(), e.mode.kind(), e.oid.to_owned()))
        .collect();
    let mut out = Vec::new();
    for (name, kind, id) in entries {
        if kind == EntryKind::Tree {
            for (path, k, i) in flatten_at(repo, id, cache, depth + 1)?.iter() {
                let mut full = name.clone();
                full.push_byte(b'/');
                full.push_str(path);
                out.push((full, *k, *i));
            }
        } else {
            out.push((name, kind, id));
        }
    }
    let out = std::rc::Rc::new(out);
    cache.insert(tree, out.clone());
    Ok(out)
}

/// Returns every commit reachable from `tip` but not from `hidden`, with its parents.
pub fn commits_between(
    repo: &Repo,
    hidden: ObjectId,
    tip: ObjectId,
) -> Result<Vec<(ObjectId, Vec<ObjectId>)>> {
    if hidden == tip {
        return Ok(Vec::new());
    }
    let walk = repo
        .inner
        .rev_walk([tip])
        .with_hidden([hidden])
        .all()
        .context(|| format!("could not walk {hidden}..{tip}"))?;
    let mut out = Vec::new();
    for info in walk {
        let info = info
            .map_err(|e| crate::error::Error::repo(format!("could not walk {hidden}..{tip}"), e))?;
        out.push((info.id, info.parent_ids.iter().copied().collect()));
    }
    Ok(out)
}
