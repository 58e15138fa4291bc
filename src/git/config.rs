//! Editing git config files in process (`<common dir>/config`, a worktree's `config.worktree`).
//!
//! Follows git's protocol: take `<file>.lock` exclusively, write the whole new
//! file into it, rename it over the file. A concurrent `git config` either
//! waits for us or makes us fail with a retry hint; neither loses the other's
//! change. Comments and layout of the file are kept (gix's parser is lossless).

use crate::error::{Context, Error, Result};
use crate::git::Repo;
use std::path::Path;

/// Adds `value` to the multi-valued key `section.key` of the repository's config unless it is already there; returns whether it was added.
pub fn add_local_value(repo: &Repo, section: &str, key: &str, value: &str) -> Result<bool> {
    let mut added = false;
    edit_file(&repo.common_dir().join("config"), |config| {
        let present = config
            .raw_values_by(section, None, key)
            .map(|v| v.iter().any(|x| x == value))
            .unwrap_or(false);
        if !present {
            let err = |e| Error::repo("could not edit the config", e);
            config
                .section_mut_or_create_new(section, None)
                .map_err(err)?
                .push(key, Some(value.into()))
                .map_err(err)?;
            added = true;
        }
        Ok(())
    })?;
    Ok(added)
}

/// Removes every `section.key` of the repository's config whose value is `value` (all of them when
/// `value` is `None`), and the section if that leaves it empty; returns whether anything was removed.
pub fn remove_local_value(
    repo: &Repo,
    section: &str,
    key: &str,
    value: Option<&str>,
) -> Result<bool> {
    let mut removed = false;
    edit_file(&repo.common_dir().join("config"), |config| {
        if let Ok(mut values) = config.raw_values_mut_by(section, None, key) {
            let all = values.get().unwrap_or_default();
            for pos in (0..all.len()).rev() {
                if value.is_none_or(|v| all[pos] == v) {
                    values.delete(pos);
                    removed = true;
                }
            }
        }
        if config
            .section(section, None)
            .is_ok_and(|s| s.body().num_values() == 0)
        {
            config.remove_section(section, None);
        }
        Ok(())
    })?;
    Ok(removed)
}

/// Sets `key` (`section.name`) to `value` in the config file at `path`, creating the file if needed.
pub fn set_in_file(path: &Path, key: &str, value: &str) -> Result<()> {
    edit_file(path, |file| {
        file.set_raw_value(key, value)
            .map(|_| ())
            .map_err(|e| Error::repo(format!("could not set '{key}'"), e))
    })
}

fn edit_file(path: &Path, edit: impl FnOnce(&mut gix::config::File) -> Result<()>) -> Result<()> {
    let lock = path.with_file_name(format!(
        "{}.lock",
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("config")
    ));
    let mut lock_file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&lock)
        .map_err(|e| {
            Error::repo(format!("could not lock '{}'", path.display()), e).hint(format!(
                "another git command is changing it; try again (or delete '{}' if none is)",
                lock.display()
            ))
        })?;
    let result = (|| -> Result<()> {
        let mut config = match gix::config::File::from_path_no_includes(
            path.to_owned(),
            gix::config::Source::Local,
        ) {
            Ok(f) => f,
            Err(_) if !path.exists() => gix::config::File::new(gix::config::file::Metadata::from(
                gix::config::Source::Local,
            )),
            Err(e) => {
                return Err(Error::repo(
                    format!("could not read '{}'", path.display()),
                    e,
                ))
            }
        };
        edit(&mut config)?;
        let mut bytes = Vec::new();
        config
            .write_to(&mut bytes)
            .context(|| "could not write the config".into())?;
        use std::io::Write;
        lock_file
            .write_all(&bytes)
            .context(|| format!("could not write '{}'", lock.display()))?;
        lock_file
            .sync_all()
            .context(|| format!("could not write '{}'", lock.display()))?;
        std::fs::rename(&lock, path).context(|| format!("could not replace '{}'", path.display()))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&lock);
    }
    result
}
