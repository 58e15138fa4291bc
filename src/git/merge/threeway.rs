//! Three-way merges of trees in memory (for undoing one checkpoint).

use crate::error::{Error, Result};
use crate::git::{ObjectId, Repo};

/// Merges `theirs` into `ours` with `base` as the ancestor; returns the merged tree, or the conflicting paths.
pub fn merge_trees(
    repo: &Repo,
    base: ObjectId,
    ours: ObjectId,
    theirs: ObjectId,
) -> Result<std::result::Result<ObjectId, Vec<String>>> {
    let options = repo
        .inner
        .tree_merge_options()
        .map_err(|e| Error::repo("could not read the merge options", e))?;
    let labels = gix::merge::blob::builtin_driver::text::Labels {
        ancestor: None,
        current: None,
        other: None,
    };
    let mut outcome = repo
        .inner
        .merge_trees(base, ours, theirs, labels, options)
        .map_err(|e| Error::repo(format!("could not merge tree {theirs} into {ours}"), e))?;
    if outcome.has_unresolved_conflicts(gix::merge::tree::TreatAsUnresolved::git()) {
        let mut paths: Vec<String> = outcome
            .conflicts
            .iter()
            .map(|c| c.ours.location().to_string())
            .collect();
        paths.sort();
        paths.dedup();
        return Ok(Err(paths));
    }
    let tree = outcome
        .tree
        .write()
        .map_err(|e| Error::repo("could not write the merged tree", e))?;
    Ok(Ok(tree.detach()))
}
