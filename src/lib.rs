//! git-task: isolated, contract-fenced tasks for parallel coding agents, as a git extension.
//!
//! The binary is a thin shell around [`run`]. Layers (see `STYLE.md`):
//! `app`/`cli` (edge) → `commands` (glue, one file per command) → core modules
//! (`task`, `record`, `contract`, `snapshot`, `checks`, `hooks`, `config`) →
//! `git` (the gix adapter). Core modules never print.

pub mod app;
pub mod attempt;
pub mod autocommit;
pub mod changes;
pub mod checkpoint;
pub mod checks;
pub mod cli;
pub mod commands;
pub mod config;
pub mod contract;
pub mod error;
pub mod git;
pub mod hooks;
pub mod merge;
pub mod output;
pub mod patch;
pub mod record;
pub mod snapshot;
pub mod sync;
pub mod task;
pub mod undo;
pub mod work;

pub use app::run;
pub use error::{Error, Result};
