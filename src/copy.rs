//! Copying ignored files (`node_modules/`, `target/`…) into a new worktree.
//!
//! `start --copy-ignored` copies every ignored file of the worktree `start`
//! runs in; a committed `.worktreeinclude` (one glob per line, `#` comments)
//! copies only the ignored files it names, with or without the flag. Files
//! are cloned by reflink (`FICLONE`) where the file system allows, else copied.

use crate::contract::glob::Patterns;
use crate::error::{Context, Error, Result};
use crate::git::Repo;
use std::path::Path;

/// Name of the committed file listing ignored paths to copy into new worktrees.
pub const WORKTREE_INCLUDE: &str = ".worktreeinclude";

/// What was copied.
#[derive(
    Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Copied {
    /// Files copied (reflinked or not).
    pub files: u64,
    /// Of those, files cloned by reflink.
    pub reflinked: u64,
    /// Bytes copied the slow way.
    pub bytes: u64,
}

/// Parses `.worktreeinclude`: one glob per line, blank lines and `#` comments skipped.
pub fn parse_include(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

/// Copies the selected ignored files from the current worktree of `repo` into `dest`.
///
/// `include`: `None` copies every ignored file; `Some(globs)` only those the globs match.
/// `progress(done, total)` is called as files are copied.
pub fn copy_ignored(
    repo: &Repo,
    dest: &Path,
    include: Option<&[String]>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Copied> {
    let source = repo.require_workdir()?.to_path_buf();
    let include = match include {
        Some(globs) => Some(
            Patterns::new(globs, repo.ignore_case())
                .map_err(|e| Error::input(format!("{WORKTREE_INCLUDE}: bad glob {e}")))?,
        ),
        None => None,
    };
    let mut files = Vec::new();
    for entry in crate::git::status::ignored::entries(repo)? {
        let full = source.join(&entry);
        let selected = include.as_ref().is_none_or(|p| p.is_match(&entry));
        if full.is_dir() {
            for rel in crate::git::status::ignored::files_below(&source, &full) {
                if selected || include.as_ref().is_some_and(|p| p.is_match(&rel)) {
                    files.push(rel);
                }
            }
        } else if selected {
            files.push(entry);
        }
    }
    let total = files.len() as u64;
    let mut copied = Copied::default();
    for rel in &files {
        if crate::git::interrupt::is_triggered() {
            return Err(Error::repo_msg("interrupted while copying ignored files"));
        }
        let from = source.join(rel);
        let to = dest.join(rel);
        if to.exists() {
            continue;
        }
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)
                .context(|| format!("could not create '{}'", parent.display()))?;
        }
        let meta = std::fs::symlink_metadata(&from)
            .context(|| format!("could not read '{}'", from.display()))?;
        if meta.file_type().is_symlink() {
            #[cfg(unix)]
            {
                let target = std::fs::read_link(&from)
                    .context(|| format!("could not read '{}'", from.display()))?;
                std::os::unix::fs::symlink(target, &to)
                    .context(|| format!("could not create '{}'", to.display()))?;
            }
        } else {
            match reflink_copy::reflink_or_copy(&from, &to)
                .context(|| format!("could not copy '{rel}'"))?
            {
                None => copied.reflinked += 1,
                Some(bytes) => copied.bytes += bytes,
            }
        }
        copied.files += 1;
        progress(copied.files, total);
    }
    Ok(copied)
}

#[cfg(test)]
mod tests {
    #[test]
    fn include_file_skips_comments_and_blanks() {
        assert_eq!(
            super::parse_include("# deps\nnode_modules\n\n  target/  \n"),
            vec!["node_modules", "target/"]
        );
    }
}
