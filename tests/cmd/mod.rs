//! Black-box tests, one file per command.

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
