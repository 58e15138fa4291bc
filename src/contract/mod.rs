//! The file contract: what a task may touch (SPEC §5).

pub mod file;
pub mod glob;

pub use file::ContractFile;
