//! Test helpers, in one place: the fixture repository ([`TestRepo`], `repo.rs`), what a process
//! printed ([`Run`], `run.rs`), and assertions and plumbing over a repository (`helpers.rs`).
#![allow(dead_code)]

pub(crate) mod helpers;
mod repo;
mod run;

pub use helpers::*;
pub use repo::{temp_dir, TestRepo};
pub use run::{bin, Run};
