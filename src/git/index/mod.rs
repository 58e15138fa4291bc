//! The index: `staged` (what is staged: the index against HEAD's tree, for
//! the pre-commit hook), `file` (reading index files and editing their
//! entries), `cachetree` (the cache-tree extension git's checkouts record, and
//! reading its root without decoding the index).

pub mod cachetree;
pub mod file;
pub mod staged;
