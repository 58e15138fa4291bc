//! git-task: isolated, contract-fenced tasks for parallel coding agents, as a git extension.
//!
//! The binary is a thin shell around [`run`]. Layers (see `STYLE.md`), each module importing
//! only from its own layer or those below: the front ends `app`, `cli`, `mcp`, `harness` →
//! `commands` (glue, one file per command) → the verbs (`lifecycle`, `recover`, `merge`,
//! `remote`, `pool`, `sync`, `undo`, `patch`, `overlaps`) → services (`record`, `contract`,
//! `changes`, `snapshot`, `work`, `attempt`, `hooks`, …) → the vocabulary (`task`) → `git`
//! (the gix adapter) and `error`. Core modules never print; `git/` uses nothing of the crate
//! but the error type; no file and no module of `src/` reaches itself through its imports
//! (`tests/guards.rs`, `tests/layers.rs`).
//!
//! Where each concept lives, once:
//!
//! | concept | home |
//! |---|---|
//! | a task: id, layout (ref names, paths), state; its base commit, environment and worktree (`TaskState::is_worktree`) | `task/mod.rs`, `task/id.rs`, `task/layout.rs` |
//! | a branch name read or made ([`git::refs::BranchName`]); `refs/heads/` spelled once | `git/refs/branch.rs`, `git/refs/mod.rs` |
//! | the one three-way tree merge (`merge_trees`, and `Merger` with its caches) | `git/merge/mod.rs` |
//! | an explicit id, or the active task of the current worktree | `resolve.rs` |
//! | the event log: one typed [`record::event::Event`] | `record/event.rs` |
//! | the record ref, and its compare-and-swap retry ([`record::update`]) | `record/mod.rs` |
//! | the frozen contract's digest (tamper check) | `record/frozen.rs` |
//! | the contract: file, globs, the judge, a new task's contract | `contract/` |
//! | whether two contracts (or claims) can touch a common path | `contract/overlap.rs` |
//! | what a change is, as the judge sees it | `changes/` |
//! | a task's work as trees: origin, checkpoints, the worktree now; `changes`' files panel | `work.rs` |
//! | attempts: saving work before anything is discarded; the saved commit's shape (also a pool entry's) | `attempt.rs` |
//! | the one reset (`reset`, `start --reset`) and its result | `lifecycle/reset.rs` (patch mode: `undo/reset.rs`) |
//! | start, remove, drop, sweep, check; a task branch's first commit | `lifecycle/start/`, `lifecycle/remove.rs`, `lifecycle/drop.rs`, `lifecycle/sweep.rs`, `lifecycle/check.rs`, `lifecycle/branch.rs` |
//! | a task's summary (`list`, `status`) | `lifecycle/summary.rs` |
//! | crash recovery: the journal's repairs, abandoned starts, whether a process is gone | `recover/mod.rs`, `recover/abandoned.rs`, `recover/liveness.rs` |
//! | copying ignored files into a new worktree (`.worktreeinclude`) | `copy.rs` |
//! | the frozen checks: one runner, one result | `checks.rs` |
//! | exclusive claims: one ref, compare-and-swap, and git-task's own copy | `claims.rs` |
//! | the local landing queue: one ref per branch, its runner | `merge/queue/` |
//! | what git-task itself wrote: record tips, base-branch moves; the one ref mover | `ledger/` |
//! | the merge gate: select → land and judge → check → land | `merge/` |
//! | bringing the base in | `sync.rs` |
//! | tasks across machines: fetch, push, adopt, merge on a remote; records and notes reconciled | `remote/` |
//! | the overlap forecast: pairs of live tasks, trial merges; `list`'s COLLIDES cache | `overlaps/` |
//! | patch mode; its snapshot | `patch/`, `snapshot.rs` |
//! | checkpoints, revert and undo | `checkpoint.rs`, `undo/` |
//! | hooks: shims, layouts, install, the hooks themselves | `hooks/` |
//! | path safety (which paths git-task may write) | `git/pathsafe.rs` |
//! | checkout: moving or rewriting a worktree, the one file writer | `git/checkout/` |
//! | the crash journal's entries | `git/journal.rs` |
//! | submodules checked out in a worktree (their repositories go to the attic, never deleted) | `git/worktree/submodules.rs` |
//! | the only place that runs `git` | `git/cli.rs` |
//! | `list`'s caches: states by record commit; worktrees' clean memos; loose refs by stat data | `record/cache.rs`, `git/status/dirty.rs` and `git/status/memos.rs`, `git/refs/read.rs` |
//! | the warm pool: claim and take (`pool/mod.rs`), fill and refill, repair; adoption of an entry; saving work found in an entry before it is deleted (`pool/mod.rs`) | `pool/`, `git/worktree/pool.rs` |
//! | colour, tables, the JSON and human reports (`schema_version`: [`output::Versioned`]) | `output/` |
//! | the published JSON Schemas (`schema/`): which command prints what, and the files | `commands/mod.rs` (`JSON_SCHEMAS`), `commands/schema.rs` |
//! | following records as they grow (`log --follow`) | `record/follow.rs`, `git/refs/stamp.rs` |
//! | shell completions | `commands/completions.rs` |
//! | exit codes: one map for the CLI and MCP (from [`error::Error`]) | `commands/mod.rs` (`exit_code`) |
//! | an error as JSON with `--json` (`schema/error.json`), also an MCP tool error; its `error:`/`hint:` lines | `output/mod.rs` ([`output::Failure`], `Out::error`, `error_lines`), `app.rs` |
//! | the `task.*` settings (`task.poolSize` and the harness keys too), each value checked once per command (bad one: exit 2) | `config.rs` (`Settings`) |
//! | the MCP server: tools → commands run in process | `mcp/` |
//! | the kernel write fence of `exec --confine` (Landlock); a session's private object store and its settling | `confine/` |
//! | agent-harness worktree hooks (Claude Code) | `harness.rs` |
//! | agent-harness pre-write hooks (`guard claude\|codex\|gemini`): one path judged before it is written | `guard.rs`, `commands/guard.rs` |

pub mod app;
pub(crate) mod attempt;
pub(crate) mod audit;
pub(crate) mod autocommit;
pub(crate) mod changes;
pub(crate) mod checkpoint;
pub(crate) mod checks;
pub(crate) mod claims;
pub mod cli;
pub(crate) mod commands;
pub(crate) mod config;
pub(crate) mod confine;
pub(crate) mod contract;
pub(crate) mod copy;
pub(crate) mod error;
pub(crate) mod gate;
pub(crate) mod git;
pub(crate) mod guard;
pub(crate) mod harness;
pub(crate) mod hooks;
pub(crate) mod ledger;
pub(crate) mod lifecycle;
pub(crate) mod mcp;
pub(crate) mod merge;
pub(crate) mod output;
pub(crate) mod overlaps;
pub(crate) mod patch;
pub(crate) mod pool;
pub(crate) mod record;
pub(crate) mod recover;
pub(crate) mod remote;
pub(crate) mod resolve;
pub(crate) mod snapshot;
pub(crate) mod sync;
pub(crate) mod task;
pub(crate) mod undo;
pub(crate) mod work;

pub use app::run;
pub use error::{Error, Result};

/// What the integration tests (`tests/`) reach inside the crate, named item by item: every
/// other module is `pub(crate)`, so rustc reports any item nothing uses.
#[doc(hidden)]
pub mod testing {
    pub mod git {
        pub use crate::git::{ObjectId, Repo};
        pub mod diff {
            pub use crate::git::diff::ChangeKind;
        }
        pub mod index {
            pub use crate::git::index::{cachetree, file, staged};
        }
        pub mod objects {
            pub use crate::git::objects::{commit_parents, commit_tree};
        }
        pub mod refs {
            pub mod read {
                pub use crate::git::refs::read::RefReader;
            }
        }
        pub mod status {
            pub mod dirty {
                pub use crate::git::status::dirty::{quick_check, DotGit, Place, Quick};
            }
        }
        pub mod worktree {
            pub use crate::git::worktree::list;
        }
    }
    pub mod changes {
        pub use crate::changes::read_staged;
    }
    pub mod commands {
        pub use crate::commands::JSON_SCHEMAS;
        pub mod schema {
            pub use crate::commands::schema::documents;
        }
    }
    pub mod config {
        pub use crate::config::Settings;
    }
    pub mod contract {
        pub mod overlap {
            pub use crate::contract::overlap::{intersect, Overlap, PathSet};
        }
    }
    pub mod patch {
        pub use crate::patch::{accept, Accepted};
    }
    pub mod record {
        pub use crate::record::{load_existing, read_at};
    }
    pub mod recover {
        pub mod abandoned {
            pub use crate::recover::abandoned::roll_back_abandoned;
        }
        pub mod liveness {
            pub use crate::recover::liveness::provisioning_is_abandoned;
        }
    }
    pub mod task {
        pub use crate::task::{Status, TaskId};
    }
}

#[cfg(test)]
mod fixture;
