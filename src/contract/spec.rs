//! The contract of a new task, as `start` is given it: a file (`--contract`, copied as is) or
//! options (`--allow`, `--forbid`, …), turned into validated `.task-contract.toml` text.

use super::file::ContractFile;
use crate::error::{Error, Result};
use crate::task::TaskId;
use std::path::PathBuf;

/// Where the contract of a new task comes from.
#[derive(Clone, Debug, Default)]
pub struct ContractSpec {
    /// `--contract FILE`: copied as is.
    pub file: Option<PathBuf>,
    /// `--allow` globs.
    pub allow: Vec<String>,
    /// `--forbid` globs.
    pub forbid: Vec<String>,
    /// `--no-new-files`.
    pub no_new_files: bool,
    /// `--no-deletions`.
    pub no_deletions: bool,
    /// `--check` commands.
    pub checks: Vec<String>,
    /// `--claim` globs: claimed for the new task as it starts.
    pub claim: Vec<String>,
    /// `--share`: start even when the contract allows paths another live task claims.
    pub share: bool,
}

/// Builds the contract text for a new task, validating it.
pub fn contract_text(id: &TaskId, spec: &ContractSpec) -> Result<String> {
    if let Some(file) = &spec.file {
        let text = std::fs::read_to_string(file).map_err(|e| {
            Error::input(format!(
                "could not read contract file '{}': {e}",
                file.display()
            ))
            .hint("give the path of a readable .task-contract.toml to --contract")
        })?;
        let parsed = ContractFile::parse(&text, &file.display().to_string())?;
        if let Some(task) = &parsed.task {
            if task != id.as_str() {
                return Err(Error::input(format!(
                    "contract file '{}' is for task '{task}', not '{id}'",
                    file.display()
                ))
                .hint(format!(
                    "set 'task = \"{id}\"' in it, or remove the 'task' key"
                )));
            }
        }
        return Ok(text);
    }
    for (flag, patterns) in [("--allow", &spec.allow), ("--forbid", &spec.forbid)] {
        for pattern in patterns {
            if let Err(msg) = crate::contract::glob::check_pattern(pattern) {
                return Err(Error::input(format!("bad glob '{pattern}' given to {flag}: {msg}"))
                    .hint("globs use '*', '?', '**', '[abc]' and '{a,b}'; see 'man git-task', section CONTRACT FILE"));
            }
        }
    }
    let contract = ContractFile {
        version: crate::contract::file::VERSION,
        task: Some(id.to_string()),
        allowed: spec.allow.clone(),
        forbidden: spec.forbid.clone(),
        allow_new_files: Some(!spec.no_new_files),
        allow_deletions: Some(!spec.no_deletions),
        max_changed_files: None,
        checks: (!spec.checks.is_empty()).then(|| crate::contract::file::Checks {
            commands: spec.checks.clone(),
            timeout_s: None,
        }),
    };
    let text = contract.to_toml();
    // Globs given on the command line are checked the same way as a file's.
    ContractFile::parse(&text, "--allow/--forbid")?;
    Ok(text)
}
