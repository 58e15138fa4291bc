//! Black-box tests, one file per command.
mod provision;
mod dirty;
