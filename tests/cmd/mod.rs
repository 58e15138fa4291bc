//! Black-box tests, one file per command.
mod changes;
mod checkpoint;
mod commit;
mod diff;
mod dirty;
mod patch;
mod patch_attribution;
mod patch_support;
mod provision;
mod revert;

mod check;

mod support;

mod drop;
mod exec;
mod global;
mod list;
mod log;
mod path;
mod remove;
mod scratch;
mod start;
mod status;
mod sweep;

mod merge;
mod sync;
