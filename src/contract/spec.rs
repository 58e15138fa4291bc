//! The contract of a new task, as `start` is given it: a file (`--contract`, copied as is) or
//! options (`--allow`, `--forbid`, …), turned into validated `.task-contract.toml` text.

use super::file::{ContractFile, MAX_CONTRACT_BYTES};
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
        let text = read_contract_file(file)?;
        let name = file.display().to_string();
        let parsed = ContractFile::parse(&text, &name)?;
        parsed.check_new(&text, &name)?;
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
            if let Err(msg) = crate::contract::glob::check_new_pattern(pattern) {
                return Err(
                    Error::input(format!("bad glob '{pattern}' given to {flag}: {msg}"))
                        .hint(crate::contract::file::GLOB_HINT),
                );
            }
        }
    }
    if spec.checks.iter().any(|c| c.trim().is_empty()) {
        return Err(Error::input("--check was given an empty command")
            .hint("give a shell command to run before merging, e.g. --check 'cargo test'"));
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

/// Reads a `--contract` file: at most [`MAX_CONTRACT_BYTES`], UTF-8 text (exit 2 otherwise).
fn read_contract_file(file: &std::path::Path) -> Result<String> {
    use std::io::Read;
    let unreadable = |e: std::io::Error| {
        Error::input(format!(
            "could not read contract file '{}': {e}",
            file.display()
        ))
        .hint("give the path of a readable .task-contract.toml to --contract")
    };
    let handle = std::fs::File::open(file).map_err(unreadable)?;
    let mut bytes = Vec::new();
    handle
        .take(MAX_CONTRACT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() as u64 > MAX_CONTRACT_BYTES {
        return Err(Error::input(format!(
            "contract file '{}' is larger than {} KiB: that is not a contract",
            file.display(),
            MAX_CONTRACT_BYTES >> 10
        ))
        .hint("a contract lists a few globs; see 'man git-task', section CONTRACT FILE"));
    }
    String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        let col = String::from_utf8_lossy(good.rsplit(|&b| b == b'\n').next().unwrap_or(good))
            .chars()
            .count()
            + 1;
        Error::input(format!("{}:{line}:{col}: not UTF-8 text", file.display()))
            .hint("a contract is a TOML file, which is UTF-8: save it as UTF-8")
    })
}
