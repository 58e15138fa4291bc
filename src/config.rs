//! The `task.*` git-config keys, their defaults, read once into [`Settings`].
//!
//! The keys in [`PINNED`] are pinned by the user (SPEC §2 principle 8): once the trusted
//! snapshot ([`trusted`]) exists, their values come from it, never from the config files an
//! agent can write with `git config`; a value changed there is ignored with a warning naming
//! the key and `git task trust`. Only this invocation's own `git -c` values add to them.

pub mod trusted;

use crate::git::config::Origin;
use crate::git::Repo;
use crate::task::layout;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// `task.branchPrefix`: prefix of task branches (default `task/`).
pub const BRANCH_PREFIX: &str = "task.branchPrefix";
/// `task.worktreeDir`: directory holding task worktrees (default `../<repo>.tasks`).
pub const WORKTREE_DIR: &str = "task.worktreeDir";
/// `task.setup`: command run in each new worktree.
pub const SETUP: &str = "task.setup";
/// `task.setupTimeout`: seconds the setup command may run (default [`DEFAULT_SETUP_TIMEOUT`]).
pub const SETUP_TIMEOUT: &str = "task.setupTimeout";
/// Default of `task.setupTimeout`: ten minutes.
pub const DEFAULT_SETUP_TIMEOUT: u64 = 600;
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

/// Every `task.*` key git-task reads: each is pinned by the trusted snapshot. A new key is
/// pinned by adding it here (a unit test checks that every `task.*` key this file names is).
pub const PINNED: &[&str] = &[
    BRANCH_PREFIX,
    WORKTREE_DIR,
    SETUP,
    SETUP_TIMEOUT,
    KEEP_ON_MERGE,
    ON_VIOLATION,
    AUTO_COMMIT_EXCLUDE,
    SPARSE_ALWAYS,
    POOL_SIZE,
    HARNESS_ALLOW,
    HARNESS_FORBID,
    CONFINE_WRITABLE,
    CONFINE_BUILD_DIRS,
];
/// `task.confineWritable`: paths `exec --confine` also leaves writable (multi-valued, `~` expanded).
pub const CONFINE_WRITABLE: &str = "task.confineWritable";
/// `task.confineBuildDirs`: build directories `exec --confine=strict` leaves writable (multi-valued).
pub const CONFINE_BUILD_DIRS: &str = "task.confineBuildDirs";

/// Default of `task.confineBuildDirs`.
pub const DEFAULT_CONFINE_BUILD_DIRS: &[&str] = &["target/", "node_modules/"];

/// Default of `task.autoCommitExclude`.
pub const DEFAULT_AUTO_COMMIT_EXCLUDE: &[&str] = &[
    "node_modules/",
    "target/",
    "dist/",
    "build/",
    ".next/",
    "test-results/",
    "coverage/",
];

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
    /// Seconds the setup command may run before it is killed.
    pub setup_timeout: u64,
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
    /// `task.poolSize`: warm worktrees kept per base branch (0: no pool unless filled by hand).
    pub pool_size: usize,
    /// `task.harnessAllow`: globs a harness-made task may touch.
    pub harness_allow: Vec<String>,
    /// `task.harnessForbid`: globs a harness-made task may never touch.
    pub harness_forbid: Vec<String>,
    /// The raw values of every pinned key, as resolved (see [`Pinned`]).
    pub pinned: Pinned,
}

impl Settings {
    /// Reads the settings from the repository's configuration.
    ///
    /// The pinned keys come from the trusted snapshot when there is one ([`Pinned::read`]);
    /// [`Settings::warnings`] then names every key whose config value was ignored.
    pub fn load(repo: &Repo) -> crate::Result<Settings> {
        let values = Pinned::read(repo)?;
        check_values(&values)?;
        let main = repo.main_worktree()?;
        let mut branch_prefix = values
            .string(BRANCH_PREFIX)
            .unwrap_or_else(|| layout::DEFAULT_BRANCH_PREFIX.into());
        if !branch_prefix.is_empty() && !branch_prefix.ends_with('/') {
            branch_prefix.push('/');
        }
        let worktree_dir = match values.string(WORKTREE_DIR) {
            Some(dir) => {
                let dir = crate::git::fs::expand_home(&dir);
                crate::git::normalize(&main.join(dir))
            }
            None => layout::default_worktree_dir(&main),
        };
        let on_violation = match values.string(ON_VIOLATION).as_deref() {
            Some("revert") => OnViolation::Revert,
            _ => OnViolation::Block,
        };
        let mut auto_commit_exclude = values.strings(AUTO_COMMIT_EXCLUDE);
        if auto_commit_exclude.is_empty() {
            auto_commit_exclude = DEFAULT_AUTO_COMMIT_EXCLUDE
                .iter()
                .map(|s| s.to_string())
                .collect();
        }
        Ok(Settings {
            branch_prefix,
            worktree_dir,
            setup: values.string(SETUP).filter(|s| !s.trim().is_empty()),
            setup_timeout: values
                .string(SETUP_TIMEOUT)
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(DEFAULT_SETUP_TIMEOUT),
            keep_on_merge: values.bool(KEEP_ON_MERGE).unwrap_or(false),
            on_violation,
            auto_commit_exclude,
            sparse_always: values.strings(SPARSE_ALWAYS),
            confine_writable: values
                .strings(CONFINE_WRITABLE)
                .iter()
                .map(|p| crate::git::normalize(&main.join(crate::git::fs::expand_home(p))))
                .collect(),
            confine_build_dirs: match values.strings(CONFINE_BUILD_DIRS) {
                dirs if dirs.is_empty() => DEFAULT_CONFINE_BUILD_DIRS
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
                dirs => dirs,
            },
            // Checked by `check_values` above: a number, at most POOL_SIZE_MAX.
            pool_size: values
                .string(POOL_SIZE)
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0),
            harness_allow: values.strings(HARNESS_ALLOW),
            harness_forbid: values.strings(HARNESS_FORBID),
            pinned: values,
        })
    }

    /// One line per pinned key whose config value was ignored for the trusted one; the
    /// command prints them as warnings.
    pub fn warnings(&self) -> &[String] {
        &self.pinned.warnings
    }
}

/// The raw values of the pinned `task.*` keys this command uses: the trusted snapshot's when
/// there is one (else the config files'), followed by this invocation's `git -c` values.
#[derive(Clone, Debug, Default)]
pub struct Pinned {
    values: BTreeMap<String, Vec<String>>,
    warnings: Vec<String>,
}

impl Pinned {
    /// Resolves every key of [`PINNED`]: one small file read (the snapshot) beside the config
    /// git-task already read.
    pub fn read(repo: &Repo) -> crate::Result<Pinned> {
        Ok(Pinned::resolve(repo, trusted::read(repo)?.as_ref()))
    }

    /// Resolves every key of [`PINNED`] against `snapshot` (none: the config files' values).
    fn resolve(repo: &Repo, snapshot: Option<&trusted::Snapshot>) -> Pinned {
        let entries = crate::git::config::entries(repo, &["task"]);
        let mut out = Pinned::default();
        for key in PINNED {
            let (files, own): (Vec<_>, Vec<_>) =
                trusted::values_of(&entries, key).partition(|e| e.origin != Origin::Invocation);
            let files: Vec<String> = files.into_iter().map(trusted::text).collect();
            let mut values = match snapshot {
                None => files,
                Some(snapshot) => {
                    let pinned = snapshot.settings.get(*key).cloned().unwrap_or_default();
                    if pinned != files {
                        out.warnings.push(format!(
                            "{key} is {} in git config but {} when trusted: the trusted value is used; review and accept the change with 'git task trust'",
                            trusted::shown(Some(&files)),
                            trusted::shown(Some(&pinned)),
                        ));
                    }
                    pinned
                }
            };
            values.extend(own.into_iter().map(trusted::text));
            if !values.is_empty() {
                out.values.insert((*key).to_owned(), values);
            }
        }
        out
    }

    /// The value of `key` (the last one, as git reads a single-valued key).
    pub fn string(&self, key: &str) -> Option<String> {
        self.values.get(key).and_then(|v| v.last()).cloned()
    }

    /// Every value of the multi-valued `key`, in order.
    pub fn strings(&self, key: &str) -> Vec<String> {
        self.values.get(key).cloned().unwrap_or_default()
    }

    /// The value of `key` as git reads a boolean; `None` when unset or not a boolean.
    pub fn bool(&self, key: &str) -> Option<bool> {
        let value = self.string(key)?;
        match value.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" => Some(true),
            "false" | "no" | "off" | "" => Some(false),
            other => other.parse::<i64>().ok().map(|n| n != 0),
        }
    }
}

/// Refuses a value of a pinned key in the config files (and `-c`) that git-task cannot use,
/// as [`Settings::load`] would (exit 2): `git task trust` checks the values it is asked to pin.
pub fn check_config(repo: &Repo) -> crate::Result<()> {
    check_values(&Pinned::resolve(repo, None))
}

/// Refuses (exit 1, `config_changed`) when a git setting that makes git run a command (or
/// changes where it writes) differs from the trusted snapshot ([`trusted::exec_key`]): the
/// commands that run git or write into worktrees call it before doing anything. Without a
/// snapshot there is nothing to compare (the first `start` writes one). `scope`: whose
/// `config.worktree` counts besides the shared config files ([`trusted::Scope`]); `runs`: which
/// keys ([`trusted::Runs`]).
pub fn ensure_unchanged(
    repo: &Repo,
    scope: &trusted::Scope,
    runs: trusted::Runs,
) -> crate::Result<()> {
    let Some(snapshot) = trusted::read(repo)? else {
        return Ok(());
    };
    let differences: Vec<_> =
        trusted::git_differences(&snapshot, &trusted::capture_git_in(repo, scope))
            .into_iter()
            .filter(|d| runs.counts(&d.key))
            .collect();
    if differences.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = differences.iter().map(|d| d.to_string()).collect();
    Err(crate::Error::negative(format!(
        "git config that makes git run commands changed since it was trusted ({}); nothing was run",
        list.join("; ")
    ))
    .with_code("config_changed")
    .hint("an agent may have set it: review the change with 'git task trust'")
    .hint("accept it, if it is yours, with 'git task trust --yes'"))
}

/// Refuses a `task.*` value git-task cannot use (exit 2), as git refuses a bad value of its
/// own keys, rather than quietly taking the default: a bad number, boolean or choice, or a glob
/// that is not one. The error names the key and says how to see where it is set.
fn check_values(values: &Pinned) -> crate::Result<()> {
    let bad = |key: &str, value: &str, want: &str| {
        crate::Error::input(format!("bad value '{value}' for '{key}': {want}"))
            .hint(format!(
                "see where it is set: git config --show-origin --get-all {key}"
            ))
            .hint(format!(
                "remove it: git config --unset-all {key} (with --global where it is set there)"
            ))
    };
    if let Some(value) = values.string(BRANCH_PREFIX) {
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
    if let Some(value) = values.string(SETUP_TIMEOUT) {
        if !matches!(value.trim().parse::<u64>(), Ok(n) if n > 0) {
            return Err(bad(
                SETUP_TIMEOUT,
                &value,
                "expected a number of seconds, 1 or more",
            ));
        }
    }
    if let Some(value) = values.string(POOL_SIZE) {
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
    if let Some(value) = values.string(KEEP_ON_MERGE) {
        if values.bool(KEEP_ON_MERGE).is_none() {
            return Err(bad(KEEP_ON_MERGE, &value, "expected true or false"));
        }
    }
    if let Some(value) = values.string(ON_VIOLATION) {
        if !matches!(value.as_str(), "block" | "revert") {
            return Err(bad(ON_VIOLATION, &value, "expected 'block' or 'revert'"));
        }
    }
    for key in [HARNESS_ALLOW, HARNESS_FORBID] {
        for glob in values.strings(key) {
            if let Err(msg) = crate::contract::glob::check_new_pattern(&glob) {
                return Err(bad(key, &glob, &format!("not a contract glob: {msg}")));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::PINNED;

    /// Every `task.*` key this file names is pinned: a new setting cannot be read live from
    /// the config an agent writes because someone forgot the list.
    #[test]
    fn every_task_key_is_pinned() {
        let source = include_str!("config.rs");
        let code = source.split("#[cfg(test)]").next().unwrap();
        for line in code.lines() {
            let line = line.trim();
            if !line.starts_with("pub const") || !line.contains(": &str = \"task.") {
                continue;
            }
            let key = line.split('"').nth(1).unwrap();
            assert!(PINNED.contains(&key), "{key} is not in PINNED");
        }
    }

    #[test]
    fn booleans_read_as_git_reads_them() {
        let mut p = super::Pinned::default();
        for (raw, want) in [
            ("true", Some(true)),
            ("Yes", Some(true)),
            ("1", Some(true)),
            ("off", Some(false)),
            ("", Some(false)),
            ("0", Some(false)),
            ("maybe", None),
        ] {
            p.values.insert("task.keepOnMerge".into(), vec![raw.into()]);
            assert_eq!(p.bool("task.keepOnMerge"), want, "{raw}");
        }
    }
}
