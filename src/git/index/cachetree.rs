//! The cache-tree (`TREE`) extension of an index made from a tree.
//!
//! git's checkouts (`git worktree add`, `git reset --hard`) record the tree
//! id of every directory in the index. With it, the pre-commit hook and git's
//! own `git commit` skip every directory the commit does not touch; without
//! it, both read or hash every tree of the repository (at 100,000 files the
//! hook of a task's first commit took three times as long). gix makes an
//! index from a tree without the extension, so git-task adds it.

use crate::error::{Context, Error, Result};
use crate::git::{ObjectId, Repo};
use gix::index::extension::Tree;
use gix::objs::tree::EntryKind;

/// The cache tree of an index holding exactly the entries of `tree`, as
/// `git read-tree` records it; `None` when a directory holds no entry (an
/// empty tree, which git would not record either).
pub fn of_tree(repo: &Repo, tree: ObjectId) -> Result<Option<Tree>> {
    node(repo, &[], tree)
}

fn node(repo: &Repo, name: &[u8], id: ObjectId) -> Result<Option<Tree>> {
    let object = repo
        .inner
        .find_tree(id)
        .context(|| format!("could not read tree {id}"))?;
    let mut subtrees = Vec::new();
    let mut entries = 0u32;
    for entry in object
        .decode()
        .context(|| format!("could not decode tree {id}"))?
        .entries
    {
        if entry.mode.kind() == EntryKind::Tree {
            subtrees.push((entry.filename.to_vec(), entry.oid.to_owned()));
        } else {
            entries += 1;
        }
    }
    drop(object);
    let mut children = Vec::with_capacity(subtrees.len());
    for (child, child_id) in subtrees {
        let Some(sub) = node(repo, &child, child_id)? else {
            return Ok(None);
        };
        entries += sub.num_entries.unwrap_or(0);
        children.push(sub);
    }
    if entries == 0 {
        return Ok(None);
    }
    // git keeps subtrees ordered by name length, then name (`subtree_name_cmp`).
    children.sort_by(|a, b| (a.name.len(), &a.name[..]).cmp(&(b.name.len(), &b.name[..])));
    Ok(Some(Tree {
        name: name.into(),
        id,
        num_entries: Some(entries),
        children,
    }))
}

/// Writes `index` to its file with `cache` as its cache tree, under the index lock.
///
/// Streamed through a buffer into the lock file and the checksum, so that a big
/// index is never held twice in memory.
pub fn write_index(repo: &Repo, index: &gix::index::File, cache: &Tree) -> Result<()> {
    use std::io::Write;
    let path = index.path();
    let err = |what: &str| format!("could not {what} the index '{}'", path.display());
    let lock = gix::lock::File::acquire_to_update_resource(
        path,
        gix::lock::acquire::Fail::Immediately,
        None,
        0,
    )
    .context(|| err("lock"))?;
    let mut hashed = gix::hash::io::Write::new(lock, repo.inner.object_hash());
    let options = gix::index::write::Options {
        extensions: gix::index::write::Extensions::None,
        skip_hash: false,
    };
    {
        let mut out = std::io::BufWriter::with_capacity(1 << 16, &mut hashed);
        gix::index::State::write_to(index, &mut out, options).context(|| err("write"))?;
        cache.write_to(&mut out).context(|| err("write"))?;
        out.flush().context(|| err("write"))?;
    }
    let gix::hash::io::Write {
        hash,
        inner: mut lock,
    } = hashed;
    let checksum = hash.try_finalize().context(|| err("hash"))?;
    lock.write_all(checksum.as_slice())
        .context(|| err("write"))?;
    lock.commit()
        .map_err(|e| Error::repo(err("replace"), e.error))?;
    Ok(())
}
