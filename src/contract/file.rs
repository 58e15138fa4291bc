//! The schema of `.task-contract.toml` and `.task-policy.toml` (SPEC §5).
//!
//! Parsing is strict: unknown keys, wrong types, bad globs and unsupported
//! versions are input errors that name the file, line and column.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// The only contract file version this build understands.
pub const VERSION: u32 = 1;
/// Name of the contract file at the root of a task branch.
pub const CONTRACT_FILE: &str = ".task-contract.toml";
/// Name of the policy file committed on the base branch.
pub const POLICY_FILE: &str = ".task-policy.toml";
/// The hint of a bad glob: what a rule may hold.
pub const GLOB_HINT: &str = "globs are paths relative to the repository's root with '*', '?', '**', '[abc]' and '{a,b}', e.g. 'src/api/**'; see 'man git-task', section CONTRACT FILE";
/// The most a contract file may hold: a contract is a few lines of globs, and every hook run
/// and merge compiles them all. A bigger `--contract` file is refused; a bigger committed
/// `.task-contract.toml` is not a valid contract (`contract_tampered`).
pub const MAX_CONTRACT_BYTES: u64 = 1 << 20;
/// Default timeout for checks, in seconds.
pub const DEFAULT_TIMEOUT_S: u64 = 600;

/// One contract or policy file, as written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContractFile {
    /// Schema version; must be 1.
    pub version: u32,
    /// The task this contract belongs to (absent in a policy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// Paths the task may touch; empty means any path not forbidden.
    #[serde(default)]
    pub allowed: Vec<String>,
    /// Paths the task may never touch; wins over `allowed`.
    #[serde(default)]
    pub forbidden: Vec<String>,
    /// Whether the task may add files (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_new_files: Option<bool>,
    /// Whether the task may delete files (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_deletions: Option<bool>,
    /// Most files the task may change; absent means no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_changed_files: Option<u64>,
    /// Validators run by `merge` and `check --run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<Checks>,
}

/// The `[checks]` table.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Checks {
    /// Shell commands, run in order in the task worktree.
    #[serde(default)]
    pub commands: Vec<String>,
    /// Timeout for each command, in seconds (default 600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<u64>,
}

impl ContractFile {
    /// Parses `text`; `name` is the file name used in error messages.
    pub fn parse(text: &str, name: &str) -> Result<ContractFile> {
        let file: ContractFile = toml::from_str(text).map_err(|e| {
            let (line, col) = e.span().map(|s| line_col(text, s.start)).unwrap_or((1, 1));
            Error::input(format!("{name}:{line}:{col}: {}", e.message().trim_end())).hint(format!(
                "see 'man git-task', section CONTRACT FILE, for the keys {name} may hold"
            ))
        })?;
        if file.version != VERSION {
            let (line, col) = locate_key(text, "version");
            return Err(Error::input(format!(
                "{name}:{line}:{col}: unsupported version {}, expected {VERSION}",
                file.version
            ))
            .hint(format!("set 'version = {VERSION}' in {name}")));
        }
        for (key, patterns) in [("allowed", &file.allowed), ("forbidden", &file.forbidden)] {
            for pattern in patterns {
                if let Err(msg) = super::glob::check_pattern(pattern) {
                    let (line, col) = locate_value(text, key, pattern);
                    return Err(Error::input(format!(
                        "{name}:{line}:{col}: bad glob '{pattern}' in {key}: {msg}"
                    ))
                    .hint(GLOB_HINT));
                }
            }
        }
        if let Some(checks) = &file.checks {
            if checks.timeout_s == Some(0) {
                let (line, col) = locate_key(text, "timeout_s");
                return Err(Error::input(format!(
                    "{name}:{line}:{col}: timeout_s must be at least 1"
                ))
                .hint("give the checks' timeout in seconds, e.g. 'timeout_s = 600'"));
            }
        }
        Ok(file)
    }

    /// The stricter checks of a contract given now (`start --contract FILE`, or built from
    /// `start`'s flags), on top of [`ContractFile::parse`]: every glob can match a path
    /// ([`super::glob::check_new_pattern`]) and no check command is blank. Contracts already
    /// frozen are only parsed, so a task started before a check was added keeps working.
    pub fn check_new(&self, text: &str, name: &str) -> Result<()> {
        for (key, patterns) in [("allowed", &self.allowed), ("forbidden", &self.forbidden)] {
            for pattern in patterns {
                if let Err(msg) = super::glob::check_new_pattern(pattern) {
                    let (line, col) = locate_value(text, key, pattern);
                    return Err(Error::input(format!(
                        "{name}:{line}:{col}: bad glob '{pattern}' in {key}: {msg}"
                    ))
                    .hint(GLOB_HINT));
                }
            }
        }
        if self.check_commands().iter().any(|c| c.trim().is_empty()) {
            let (line, col) = locate_key(text, "commands");
            return Err(Error::input(format!(
                "{name}:{line}:{col}: a check command cannot be empty"
            ))
            .hint("give each check as a shell command, e.g. commands = [\"cargo test\"]"));
        }
        Ok(())
    }

    /// Renders the file as TOML, the way `start` commits it.
    pub fn to_toml(&self) -> String {
        let mut text =
            String::from("# The file contract of this task: which paths it may touch.\n");
        text.push_str(
            "# Written by 'git task start'; it may only be narrowed. See 'man git-task'.\n",
        );
        text.push_str(
            &toml::to_string(self)
                .expect("the contract schema only holds TOML-representable values"),
        );
        text
    }

    /// Returns the check commands (empty when there is no `[checks]` table).
    pub fn check_commands(&self) -> &[String] {
        self.checks
            .as_ref()
            .map(|c| c.commands.as_slice())
            .unwrap_or(&[])
    }

    /// Returns the timeout of each check command.
    pub fn check_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(
            self.checks
                .as_ref()
                .and_then(|c| c.timeout_s)
                .unwrap_or(DEFAULT_TIMEOUT_S),
        )
    }
}

/// Converts a byte offset into a 1-based line and column (in characters).
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rsplit('\n')
        .next()
        .map(|l| l.chars().count())
        .unwrap_or(0)
        + 1;
    (line, col)
}

/// Finds the line and column of `key =` at the start of a line.
fn locate_key(text: &str, key: &str) -> (usize, usize) {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if trimmed.starts_with(key) && trimmed[key.len()..].trim_start().starts_with('=') {
            return line_col(text, offset + (line.len() - trimmed.len()));
        }
        offset += line.len();
    }
    (1, 1)
}

/// Finds the line and column of a string value inside the array of `key`.
fn locate_value(text: &str, key: &str, value: &str) -> (usize, usize) {
    let (key_line, _) = locate_key(text, key);
    let mut offset = 0;
    for (n, line) in text.split_inclusive('\n').enumerate() {
        if n + 1 >= key_line {
            for quoted in [format!("\"{value}\""), format!("'{value}'")] {
                if let Some(pos) = line.find(&quoted) {
                    return line_col(text, offset + pos);
                }
            }
        }
        offset += line.len();
    }
    (key_line, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        ContractFile::parse(text, "c.toml")
            .unwrap_err()
            .message()
            .to_owned()
    }

    #[test]
    fn full_example_parses() {
        let text = r#"
version = 1
task = "auth-fix"
allowed = ["src/api/**", "tests/api/**"]
forbidden = ["src/db/**", "*.lock"]
allow_new_files = true
allow_deletions = false
max_changed_files = 40

[checks]
commands = ["cargo test -p api"]
timeout_s = 600
"#;
        let c = ContractFile::parse(text, "c.toml").unwrap();
        assert_eq!(c.allowed.len(), 2);
        assert_eq!(c.allow_deletions, Some(false));
        assert_eq!(c.check_commands(), ["cargo test -p api"]);
        let again = ContractFile::parse(&c.to_toml(), "c.toml").unwrap();
        assert_eq!(again, c);
    }

    #[test]
    fn errors_name_line_and_column() {
        assert!(
            err("version = 1\nallowd = []\n").starts_with("c.toml:2:1: unknown field `allowd`"),
            "{}",
            err("version = 1\nallowd = []\n")
        );
        assert!(
            err("version = 1\nallowed = \"src\"\n").starts_with("c.toml:2:11:"),
            "{}",
            err("version = 1\nallowed = \"src\"\n")
        );
        assert!(err("version = 2\n").starts_with("c.toml:1:1: unsupported version 2"));
        assert!(err("allowed = []\n").contains("missing field `version`"));
        assert!(
            err("version = 1\nforbidden = [\"ok/**\",\n  \"src/[z\"]\n")
                .starts_with("c.toml:3:3: bad glob 'src/[z'"),
            "{}",
            err("version = 1\nforbidden = [\"ok/**\",\n  \"src/[z\"]\n")
        );
        assert!(err("version = 1\nallow_new_files = 3\n").starts_with("c.toml:2:19:"));
        assert!(err("version = 1\n[checks]\ncommand = []\n")
            .starts_with("c.toml:3:1: unknown field `command`"));
        assert!(err("version = 1\nallowed = [\n").starts_with("c.toml:"));
    }

    #[test]
    fn line_col_counts_from_one() {
        assert_eq!(line_col("ab\ncd", 0), (1, 1));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
    }
}
