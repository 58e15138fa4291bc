//! Black-box tests, one file per command.

mod merge;
mod sync;
