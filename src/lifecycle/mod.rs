//! What is done to a task in its life: start, reset, remove, drop, sweep, check, and the
//! summaries `list` and `status` show.

pub mod branch;
pub mod check;
pub mod drop;
pub mod remove;
pub mod reset;
pub mod start;
pub mod summary;
pub mod sweep;
