//! The index: what is staged (index vs HEAD's tree, for the pre-commit hook),
//! reading and writing index files, and the cache-tree extension git's
//! checkouts record.

pub mod cachetree;
pub mod staged;
