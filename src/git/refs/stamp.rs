//! A cheap fingerprint of the refs under a namespace: tells a watcher whether
//! anything there may have changed without reading a single ref.
//!
//! A loose ref is written by renaming a lock file over it, which gives the file a
//! new inode and its directory a new mtime; creating or deleting a ref's directory
//! changes its parent's mtime; packing changes `packed-refs`. The stamp is those
//! `stat`s: the namespace directory, each of its children (and, for `record`-like
//! leaves, `child/<leaf>`), and `packed-refs`. Idle, a watcher pays only these
//! syscalls.

use crate::git::Repo;
use std::hash::{BuildHasher, Hash, Hasher};
use std::path::Path;

/// Hashes what `stat` says of `path` (absent counts too).
fn stat_into(path: &Path, h: &mut impl Hasher) {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => {
            meta.len().hash(h);
            meta.modified().ok().hash(h);
            #[cfg(unix)]
            {
                use std::os::unix::fs::MetadataExt;
                meta.ino().hash(h);
                meta.ctime().hash(h);
                meta.ctime_nsec().hash(h);
            }
        }
        Err(e) => e.kind().hash(h),
    }
}

/// The stamp of the refs `<prefix><child>/<leaf>` (`prefix` ends in `/`): for every child
/// when `only` is `None`, else for that one child. Equal stamps: nothing changed there.
pub fn stamp(repo: &Repo, prefix: &str, only: Option<&str>, leaf: &str) -> u64 {
    let mut h = foldhash::quality::FixedState::with_seed(0).build_hasher();
    let root = repo.common_dir().join(prefix);
    stat_into(&repo.common_dir().join("packed-refs"), &mut h);
    let children: Vec<String> = match only {
        Some(child) => vec![child.to_owned()],
        None => {
            stat_into(&root, &mut h);
            let mut names: Vec<String> = std::fs::read_dir(&root)
                .map(|entries| {
                    entries
                        .flatten()
                        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            names.sort();
            names
        }
    };
    for child in children {
        child.hash(&mut h);
        let dir = root.join(&child);
        stat_into(&dir, &mut h);
        stat_into(&dir.join(leaf), &mut h);
    }
    h.finish()
}
