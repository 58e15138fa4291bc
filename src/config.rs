//! The `task.*` git-config keys, their defaults, read once into [`Settings`].

use crate::git::Repo;
use crate::task::layout;
use std::path::PathBuf;

/// `task.branchPrefix`: prefix of task branches (default `task/`).
pub const BRANCH_PREFIX: &str = "task.branchPrefix";
/// `task.worktreeDir`: directory holding task worktrees (default `../<repo>.tasks`).
pub const WORKTREE_DIR: &str = "task.worktreeDir";
/// `task.setup`: command run in each new worktree.
pub const SETUP: &str = "task.setup";
/// `task.keepOnMerge`: keep worktree and branch after merge.
pub const KEEP_ON_MERGE: &str = "task.keepOnMerge";
/// `task.onViolation`: `block` (default) or `revert`.
pub const ON_VIOLATION: &str = "task.onViolation";
/// `task.autoCommitExclude`: globs `commit` never stages (multi-valued).
pub const AUTO_COMMIT_EXCLUDE: &str = "task.autoCommitExclude";
/// `task.sparseAlways`: paths always checked out with `--sparse` (multi-valued).
pub const SPARSE_ALWAYS: &str = "task.sparseAlways";

/// `task.poolSize`: how many pool entries `start` keeps ready (default 0: none).
pub const POOL_SIZE: &str = "task.poolSize";
/// The most entries the pool of one base holds (`task.poolSize`, `pool fill N`): each is a
/// whole checkout, and a typo of a digit must not fill the disk.
pub const POOL_SIZE_MAX: usize = 64;
/// `task.harnessAllow`: globs a harness-made task may touch (multi-valued).
pub const HARNESS_ALLOW: &str = "task.harnessAllow";
/// `task.harnessForbid`: globs a harness-made task may never touch (multi-valued).
pub const HARNESS_FORBID: &str = "task.harnessForbid";
/// `task.confineWritable`: paths `exec --confine` also leaves writable (multi-valued, `~` expanded).
pub const CONFINE_WRITABLE: &str = "task.confineWritable";
/// `task.confineBuildDirs`: build directories `exec --confine=strict` leaves writable (multi-valued).
pub const CONFINE_BUILD_DIRS: &str = "task.confineBuildDirs";

/// Default of `task.confineBuildDirs`.
pub const DEFAULT_CONFINE_BUILD_DIRS: &[&str] = &["target/", "node_modules/"];

/// Default of `task.autoCommitExclude`.
pub const DEFAULT_AUTO_COMMIT_EXCLUDE: &[&str] =
    &["node_modules/", "target/", "dist/", "build/", ".next/"];

/// What the pre-commit hook does on a violation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnViolation {
    /// Refuse the commit.
    Block,
    /// Refuse, save the offending changes as an attempt, restore those paths.
    Revert,
}

/// Per-user settings, resolved once per command.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Prefix of task branch names.
    pub branch_prefix: String,
    /// Directory holding task worktrees, absolute.
    pub worktree_dir: PathBuf,
    /// Command run in each new worktree.
    pub setup: Option<String>,
    /// Keep worktree and branch after merge.
    pub keep_on_merge: bool,
    /// What pre-commit does on a violation.
    pub on_violation: OnViolation,
    /// Globs `commit` never stages.
    pub auto_commit_exclude: Vec<String>,
    /// Paths always checked out with `--sparse`.
    pub sparse_always: Vec<String>,
    /// Paths `exec --confine` also leaves writable (absolute, `~` expanded).
    pub confine_writable: Vec<PathBuf>,
    /// Build directories (worktree-relative) `exec --confine=strict` leaves writable.
    pub confine_build_dirs: Vec<String>,
}

impl Settings {
    /// Reads the settings from the repository's configuration.
    pub fn load(repo: &Repo) -> crate::Result<Settings> {
        check_values(repo)?;
        let main = repo.main_worktree()?;
        let mut branch_prefix = repo
            .config_string(BRANCH_PREFIX)
            .unwrap_or_else(|| layout::DEFAULT_BRANCH_PREFIX.into());
        if !branch_prefix.is_empty() && !branch_prefix.ends_with('/') {
            branch_prefix.push('/');
        }
        let worktree_dir = match repo.config_string(WORKTREE_DIR) {
            Some(dir) => {
                let dir = crate::git::fs::expand_home(&dir);
                crate::git::normalize(&main.join(dir))
            }
            None => layout::default_worktree_dir(&main),
        };
        let on_violation = match repo.config_string(ON_VIOLATION).as_deref() {
            Some("revert") => OnViolation::Revert,
            _ => OnViolation::Block,
        };
        let mut auto_commit_exclude = repo.config_strings(AUTO_COMMIT_EXCLUDE);
        if auto_commit_exclude.is_empty() {
            auto_commit_exclude = DEFAULT_AUTO_COMMIT_EXCLUDE
                .iter()
                .map(|s| s.to_string())
                .collect();
        }
        Ok(Settings {
            branch_prefix,
            worktree_dir,
            setup: repo.config_string(SETUP).filter(|s| !s.trim().is_empty()),
            keep_on_merge: repo.config_bool(KEEP_ON_MERGE).unwrap_or(false),
            on_violation,
            auto_commit_exclude,
            sparse_always: repo.config_strings(SPARSE_ALWAYS),
            confine_writable: repo
                .config_strings(CONFINE_WRITABLE)
                .iter()
                .map(|p| crate::git::normalize(&main.join(crate::git::fs::expand_home(p))))
                .collect(),
            confine_build_dirs: match repo.config_strings(CONFINE_BUILD_DIRS) {
                dirs if dirs.is_empty() => DEFAULT_CONFINE_BUILD_DIRS
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
                dirs => dirs,
            },
        })
    }
}

/// Refuses a `task.*` value git-task cannot use (exit 2), as git refuses a bad value of its
/// own keys, rather than quietly taking the default: a bad number, boolean or choice, or a glob
/// that is not one. The error names the key and says how to see where it is set.
fn check_values(repo: &Repo) -> crate::Result<()> {
    let bad = |key: &str, value: &str, want: &str| {
        crate::Error::input(format!("bad value '{value}' for '{key}': {want}"))
            .hint(format!(
                "see where it is set: git config --show-origin --get-all {key}"
            ))
            .hint(format!(
                "remove it: git config --unset-all {key} (with --global where it is set there)"
            ))
    };
    if let Some(value) = repo.config_string(BRANCH_PREFIX) {
        let mut prefix = value.clone();
        if !prefix.is_empty() && !prefix.ends_with('/') {
            prefix.push('/');
        }
        if prefix.starts_with('-')
            || !crate::git::refs::is_valid_name(&format!("refs/heads/{prefix}x"))
        {
            return Err(bad(
                BRANCH_PREFIX,
                &value,
                "task branches would not be valid branch names (see 'git check-ref-format')",
            ));
        }
    }
    if let Some(value) = repo.config_string(POOL_SIZE) {
        match value.trim().parse::<usize>() {
            Err(_) => {
                return Err(bad(
                    POOL_SIZE,
                    &value,
                    "expected a number of worktrees, 0 or more",
                ))
            }
            Ok(n) if n > POOL_SIZE_MAX => {
                return Err(bad(
                    POOL_SIZE,
                    &value,
                    &format!("a pool holds at most {POOL_SIZE_MAX} worktrees"),
                ))
            }
            Ok(_) => {}
        }
    }
    if let Some(value) = repo.config_string(KEEP_ON_MERGE) {
        if repo.config_bool(KEEP_ON_MERGE).is_none() {
            return Err(bad(KEEP_ON_MERGE, &value, "expected true or false"));
        }
    }
    if let Some(value) = repo.config_string(ON_VIOLATION) {
        if !matches!(value.as_str(), "block" | "revert") {
            return Err(bad(ON_VIOLATION, &value, "expected 'block' or 'revert'"));
        }
    }
    for key in [HARNESS_ALLOW, HARNESS_FORBID] {
        for glob in repo.config_strings(key) {
            if let Err(msg) = crate::contract::glob::check_new_pattern(&glob) {
                return Err(bad(key, &glob, &format!("not a contract glob: {msg}")));
            }
        }
    }
    Ok(())
}
