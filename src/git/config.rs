//! Writing git configuration files in process, under git's `<file>.lock` protocol.

use crate::error::{Error, Result};
use std::io::Write;
use std::path::Path;

/// Sets `key` (`section.name` or `section.sub.name`) to `value` in the config file at `path`,
/// creating the file if needed. Comments and other keys are kept.
pub fn set_in_file(path: &Path, key: &str, value: &str) -> Result<()> {
    edit_file(path, |file| {
        file.set_raw_value(key, value)
            .map(|_| ())
            .map_err(|e| Error::repo(format!("could not set '{key}'"), e))
    })
}

/// Removes every value of `key` from the config file at `path`, if present.
pub fn unset_in_file(path: &Path, key: &str) -> Result<()> {
    edit_file(path, |file| {
        if let Ok(mut values) = file.raw_values_mut(key) {
            values.delete_all();
        }
        Ok(())
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
                "another git process may be writing it; if not, delete '{}'",
                lock.display()
            ))
        })?;
    let result = (|| {
        let mut file = match gix::config::File::from_path_no_includes(
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
        edit(&mut file)?;
        let mut buf = Vec::new();
        file.write_to(&mut buf)
            .map_err(|e| Error::repo(format!("could not write '{}'", path.display()), e))?;
        lock_file
            .write_all(&buf)
            .map_err(|e| Error::repo(format!("could not write '{}'", lock.display()), e))?;
        std::fs::rename(&lock, path)
            .map_err(|e| Error::repo(format!("could not replace '{}'", path.display()), e))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&lock);
    }
    result
}
