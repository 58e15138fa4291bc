//! Test helpers, in one place: the fixture repository ([`TestRepo`], `repo.rs`), what a process
//! printed ([`Run`], `run.rs`), assertions and plumbing over a repository (`helpers.rs`), and a
//! worktree's full picture for the patch-mode tests (`patch.rs`, used as `common::patch::...`).
#![allow(dead_code)]

pub(crate) mod helpers;
pub(crate) mod patch;
mod repo;
mod run;

pub use helpers::*;
pub use repo::{temp_dir, TestRepo};
pub use run::{bin, Run};
