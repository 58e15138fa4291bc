//! Checking out a state into an existing worktree in process: its files and
//! its index. `twoway` moves a worktree from one commit to another with git's
//! two-way rules (declining whatever is not certain); `inplace` writes a saved
//! state (an attempt, a checkpoint) over the worktree.

pub mod inplace;
pub mod twoway;
