//! Merges: the one three-way tree merge ([`merge_trees`]: the gate, sync, audit, undoing a
//! checkpoint; [`Merger`] runs the same merge with caches kept across many), merge commits,
//! and a merge git left unfinished in a worktree (`pending`).
//!
//! In-memory merges and the commits that record them: nothing here touches a
//! worktree, an index or a ref. Objects are written to the object database
//! (merged blobs, trees, commits); until a ref points at them they are
//! unreachable and harmless.

pub mod pending;

use crate::error::{Context, Error, Result};
use crate::git::{objects, ObjectId, Repo};
use gix::bstr::BStr;
use gix::object::tree::EntryKind;

/// The result of merging two trees.
#[derive(Clone, Debug)]
pub struct TreeMerge {
    /// The merged tree; only meaningful when `conflicts` is empty.
    pub tree: Option<ObjectId>,
    /// Every path with a conflict git would not resolve on its own, sorted.
    pub conflicts: Vec<String>,
}

/// Returns the tree to use as the common ancestor of commits `a` and `b`:
/// the tree of their merge base, a merged (virtual) base when there are
/// several, or the empty tree when the histories are unrelated.
pub fn ancestor_tree(repo: &Repo, a: ObjectId, b: ObjectId) -> Result<ObjectId> {
    let bases: Vec<ObjectId> = repo
        .inner
        .merge_bases_many(a, &[b])
        .context(|| format!("could not find a merge base of {a} and {b}"))?
        .into_iter()
        .map(|id| id.detach())
        .collect();
    match bases.as_slice() {
        [] => Ok(objects::empty_tree(repo)),
        [one] => objects::commit_tree(repo, *one),
        many => {
            let options = repo
                .inner
                .tree_merge_options()
                .context(|| "could not read the merge options".into())?;
            let virtual_base = repo
                .inner
                .virtual_merge_base(many.iter().copied(), options)
                .context(|| format!("could not merge the merge bases of {a} and {b}"))?;
            Ok(virtual_base.tree_id.detach())
        }
    }
}

/// Merges `theirs` into `ours` given their common `ancestor` (three trees), the way `git merge-tree --write-tree` does.
///
/// `labels` name ancestor, ours and theirs in conflict markers.
pub fn merge_trees(
    repo: &Repo,
    ancestor: ObjectId,
    ours: ObjectId,
    theirs: ObjectId,
    labels: [&str; 3],
) -> Result<TreeMerge> {
    if let Some(done) = trivial(ancestor, ours, theirs) {
        return Ok(done);
    }
    let options = repo
        .inner
        .tree_merge_options()
        .context(|| "could not read the merge options".into())?;
    let labels = gix::merge::blob::builtin_driver::text::Labels {
        ancestor: Some(<&BStr>::from(labels[0])),
        current: Some(<&BStr>::from(labels[1])),
        other: Some(<&BStr>::from(labels[2])),
    };
    let mut outcome = repo
        .inner
        .merge_trees(ancestor, ours, theirs, labels, options)
        .context(|| format!("could not merge tree {theirs} into {ours}"))?;
    finish(unresolved(&outcome.conflicts), || {
        Ok(outcome.tree.write()?.detach())
    })
}

/// A three-way tree merger that keeps its caches across merges. gix builds a merge's blob
/// and attribute caches from the index on every call (a scan of every index entry, twice);
/// the overlap forecast merges hundreds of pairs at once, so it builds them once. The merge
/// itself is the one [`merge_trees`] makes (same engine, options and conflict rule).
pub struct Merger<'r> {
    repo: &'r Repo,
    diff_cache: gix::diff::blob::Platform,
    blob_merge: gix::merge::blob::Platform,
    options: gix::merge::tree::Options,
}

impl<'r> Merger<'r> {
    /// Prepares a merger for `repo` (give it one that keeps written objects in memory).
    pub fn new(repo: &'r Repo) -> Result<Merger<'r>> {
        let inner = &repo.inner;
        Ok(Merger {
            repo,
            diff_cache: inner
                .diff_resource_cache_for_tree_diff()
                .context(|| "could not prepare the merge".into())?,
            blob_merge: inner
                .merge_resource_cache(Default::default())
                .context(|| "could not prepare the merge".into())?,
            options: inner
                .tree_merge_options()
                .context(|| "could not read the merge options".into())?,
        })
    }

    /// The repository it merges in.
    pub fn repo(&self) -> &'r Repo {
        self.repo
    }

    /// [`merge_trees`], with this merger's caches.
    pub fn merge_trees(
        &mut self,
        ancestor: ObjectId,
        ours: ObjectId,
        theirs: ObjectId,
        labels: [&str; 3],
    ) -> Result<TreeMerge> {
        if let Some(done) = trivial(ancestor, ours, theirs) {
            return Ok(done);
        }
        let repo = &self.repo.inner;
        let labels = gix::merge::blob::builtin_driver::text::Labels {
            ancestor: Some(<&BStr>::from(labels[0])),
            current: Some(<&BStr>::from(labels[1])),
            other: Some(<&BStr>::from(labels[2])),
        };
        let mut outcome = gix::merge::plumbing::tree(
            &ancestor,
            &ours,
            &theirs,
            labels,
            repo,
            |buf| repo.write_blob(buf).map(|id| id.detach()),
            &mut Default::default(),
            &mut self.diff_cache,
            &mut self.blob_merge,
            self.options.clone().into(),
        )
        .context(|| format!("could not merge tree {theirs} into {ours}"))?;
        finish(unresolved(&outcome.conflicts), || {
            Ok(outcome
                .tree
                .write(|tree| repo.write_object(tree).map(|id| id.detach()))?)
        })
    }
}

/// The result of a merge: its conflicts, or the tree `write` writes when there are none.
fn finish(
    conflicts: Vec<String>,
    write: impl FnOnce() -> std::result::Result<ObjectId, Box<dyn std::error::Error + Send + Sync>>,
) -> Result<TreeMerge> {
    if !conflicts.is_empty() {
        return Ok(TreeMerge {
            tree: None,
            conflicts,
        });
    }
    let tree =
        write().map_err(|e| Error::repo_msg(format!("could not write the merged tree: {e}")))?;
    Ok(TreeMerge {
        tree: Some(tree),
        conflicts,
    })
}

/// The merges that need no merging: one side unchanged, or both the same.
fn trivial(ancestor: ObjectId, ours: ObjectId, theirs: ObjectId) -> Option<TreeMerge> {
    let tree = if theirs == ancestor || theirs == ours {
        ours
    } else if ours == ancestor {
        theirs
    } else {
        return None;
    };
    Some(TreeMerge {
        tree: Some(tree),
        conflicts: Vec::new(),
    })
}

/// The paths of the conflicts git would not resolve on its own, sorted (auto-resolved ones
/// are listed too, STYLE B.14).
fn unresolved(conflicts: &[gix::merge::tree::Conflict]) -> Vec<String> {
    let how = gix::merge::tree::TreatAsUnresolved::git();
    let mut paths: Vec<String> = conflicts
        .iter()
        .filter(|c| c.is_unresolved(how))
        .flat_map(|c| {
            [
                c.ours.location().to_string(),
                c.theirs.location().to_string(),
            ]
        })
        .filter(|p| !p.is_empty())
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

/// Returns the entry at top-level `name` in `tree`, if it is a file or link.
pub fn root_entry(
    repo: &Repo,
    tree: ObjectId,
    name: &str,
) -> Result<Option<(EntryKind, ObjectId)>> {
    let t = repo
        .inner
        .find_tree(tree)
        .context(|| format!("could not read tree {tree}"))?;
    let found = t.find_entry(name).map(|e| (e.mode().kind(), e.object_id()));
    Ok(found.filter(|(kind, _)| !matches!(kind, EntryKind::Tree)))
}

/// Returns `tree` with its top-level `name` set to `entry` (or removed when `None`), writing a tree only when that changes it.
pub fn with_root_entry(
    repo: &Repo,
    tree: ObjectId,
    name: &str,
    entry: Option<(EntryKind, ObjectId)>,
) -> Result<ObjectId> {
    let current = root_entry(repo, tree, name)?;
    if current == entry {
        return Ok(tree);
    }
    let edit = match entry {
        Some((kind, id)) => objects::TreeEdit::Upsert(name, kind, id),
        None => objects::TreeEdit::Remove(name),
    };
    objects::edit_tree(repo, tree, &[edit])
}

/// What a commit is made of.
#[derive(Clone, Debug)]
pub struct CommitInfo {
    /// The commit id.
    pub id: ObjectId,
    /// Its root tree.
    pub tree: ObjectId,
    /// Its parents.
    pub parents: Vec<ObjectId>,
    /// Its full message.
    pub message: String,
    /// Its author, kept when the commit is replayed.
    pub author: gix::actor::Signature,
}

impl CommitInfo {
    /// Returns the first line of the message.
    pub fn subject(&self) -> &str {
        self.message.lines().next().unwrap_or("").trim()
    }
}

/// Reads a commit's tree, parents, message and author.
pub fn commit_info(repo: &Repo, id: ObjectId) -> Result<CommitInfo> {
    let commit = repo
        .inner
        .find_commit(id)
        .context(|| format!("could not read commit {id}"))?;
    let decoded = commit
        .decode()
        .context(|| format!("could not decode commit {id}"))?;
    let author = decoded
        .author()
        .context(|| format!("could not read the author of {id}"))?;
    Ok(CommitInfo {
        id,
        tree: decoded.tree(),
        parents: decoded.parents().collect(),
        message: String::from_utf8_lossy(decoded.message).into_owned(),
        author: author
            .to_owned()
            .context(|| format!("could not read the author of {id}"))?,
    })
}

/// Returns the commits on the first-parent line from `tip` back to (not including) what `hidden` reaches, oldest first.
pub fn first_parent_line(repo: &Repo, hidden: ObjectId, tip: ObjectId) -> Result<Vec<CommitInfo>> {
    let walk = repo
        .inner
        .rev_walk([tip])
        .with_hidden([hidden])
        .all()
        .context(|| format!("could not walk {hidden}..{tip}"))?;
    let mut reachable = std::collections::HashSet::new();
    for info in walk {
        let info = info.map_err(|e| Error::repo(format!("could not walk {hidden}..{tip}"), e))?;
        reachable.insert(info.id);
    }
    let mut line = Vec::new();
    let mut next = Some(tip);
    while let Some(id) = next.filter(|id| reachable.contains(id)) {
        let info = commit_info(repo, id)?;
        next = info.parents.first().copied();
        line.push(info);
    }
    line.reverse();
    Ok(line)
}

/// Writes a commit; `author` defaults to the configured author, the committer is always the configured committer.
pub fn write_commit(
    repo: &Repo,
    tree: ObjectId,
    parents: &[ObjectId],
    message: &str,
    author: Option<&gix::actor::Signature>,
) -> Result<ObjectId> {
    let committer = identity(repo.inner.committer())?;
    let author = match author {
        Some(a) => a.clone(),
        None => identity(repo.inner.author())?,
    };
    let commit = gix::objs::Commit {
        message: message.into(),
        tree,
        author,
        committer,
        encoding: None,
        parents: parents.iter().copied().collect(),
        extra_headers: Default::default(),
    };
    Ok(repo
        .inner
        .write_object(commit)
        .context(|| "could not write a commit".into())?
        .detach())
}

fn identity<E>(
    found: Option<std::result::Result<gix::actor::SignatureRef<'_>, E>>,
) -> Result<gix::actor::Signature>
where
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let missing = || {
        Error::input("no identity configured for the commit")
            .hint("set one with: git config user.name 'Your Name' && git config user.email you@example.com")
    };
    let sig = found
        .ok_or_else(missing)?
        .context(|| "could not read the configured identity".into())?;
    sig.to_owned()
        .context(|| "could not read the configured identity".into())
}
