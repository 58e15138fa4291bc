//! Black-box tests, one file per command.
mod audit;
mod changes;
mod checkpoint;
mod claims;
mod commit;
mod completions;
mod diff;
pub(crate) mod dirty;
mod patch;
mod patch_attribution;
mod paths;
mod progress;
mod provision;
mod reset;
mod revert;

mod check;

mod confine;
mod drop;
mod exec;
mod follow;
mod global;
mod lifecycle;
pub(crate) mod lifecycle2;
mod list;
mod log;
mod path;
mod pool;
mod recover;
mod remove;
mod schema;
mod scratch;
mod snapshots;
mod start;
mod status;
mod sweep;
pub(crate) mod torture;

mod gate;
mod gate_attacks;
mod gate_attacks2;
mod merge;
mod overlaps;
mod overlaps_globs;
pub(crate) mod queue;
mod remote;
mod sync;

mod guard;
mod harness;
pub(crate) mod hostile_records;
mod hostile_state;
mod input2;
mod mcp;
mod next_steps;
mod trust;
mod trust_attacks;
