//! The index: `staged` (what is staged: the index against HEAD's tree, for
//! the pre-commit hook), `file` (reading index files and editing their
//! entries), `cachetree` (the cache-tree extension git's checkouts record, and
//! reading its root without decoding the index), `skip` (walking over entries
//! to the extensions, fast).

pub mod cachetree;
pub mod file;
mod skip;
pub mod staged;
