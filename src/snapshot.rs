//! Commits of a worktree's state: HEAD, index and untracked (non-ignored) files.
//!
//! Used for attempts (work saved before anything discards it), checkpoints and
//! the patch-mode snapshot. Reading the state never touches the worktree or
//! its index.

use crate::error::Result;
pub use crate::git::status::state::{
    hash_file, hash_file_bytes, read, read_to_keep, WorktreeState,
};
use crate::git::Repo;

/// Returns one more than the highest `<n>` under `<prefix><kind><n>`, starting at 1.
pub fn next_number(repo: &Repo, prefix: &str, kind: &str) -> Result<u32> {
    let full = format!("{prefix}{kind}");
    let max = repo
        .refs_under(&full)?
        .iter()
        .filter_map(|(name, _)| name.strip_prefix(&full)?.parse::<u32>().ok())
        .max()
        .unwrap_or(0);
    Ok(max + 1)
}
