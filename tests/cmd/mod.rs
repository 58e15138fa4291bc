//! Black-box tests, one file per command.

mod check;
