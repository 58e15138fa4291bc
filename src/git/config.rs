//! Editing git config files in process (`<common dir>/config`, a worktree's `config.worktree`).
//!
//! Follows git's protocol: take `<file>.lock` exclusively, write the whole new
//! file into it, rename it over the file. A concurrent `git config` either
//! waits for us or makes us fail with a retry hint; neither loses the other's
//! change. Comments and layout of the file are kept (gix's parser is lossless).

use crate::error::{Context, Error, Result};
use crate::git::Repo;
use std::path::Path;

/// Parses git's `GIT_CONFIG_PARAMETERS` (the `-c` settings git hands to the processes it
/// starts) into `key=value` overrides, `key` alone for a key given without a value.
///
/// git writes each setting as `'key'='value'`, older gits as `'key=value'`; either is
/// single-quoted the shell's way (`'\''` for a quote), settings separated by spaces. A malformed
/// rest is ignored, as git stops at it with an error of its own.
pub fn parse_parameters(text: &str) -> Vec<String> {
    /// Reads one single-quoted word at the start of `s`; returns it and the rest.
    fn quoted(s: &str) -> Option<(String, &str)> {
        let mut rest = s.strip_prefix('\'')?;
        let mut word = String::new();
        loop {
            let end = rest.find('\'')?;
            word.push_str(&rest[..end]);
            rest = &rest[end + 1..];
            // `'\''`: a quote closes, an escaped quote, a quote reopens.
            match rest.strip_prefix("\\''") {
                Some(after) => {
                    word.push('\'');
                    rest = after;
                }
                None => return Some((word, rest)),
            }
        }
    }
    let mut out = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let Some((key, after)) = quoted(rest) else {
            break;
        };
        rest = after;
        if let Some(value_part) = rest.strip_prefix('=') {
            let Some((value, after)) = quoted(value_part) else {
                break;
            };
            out.push(format!("{key}={value}"));
            rest = after;
        } else {
            // The old form: `'key=value'`, or `'key'` for an implicit true.
            out.push(key);
        }
        rest = rest.trim_start();
    }
    out
}

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

/// Makes the section `[section "subsection"]` of the repository's config hold exactly
/// `entries` (in order), creating it if needed; returns whether the file changed.
pub fn set_local_subsection(
    repo: &Repo,
    section: &str,
    subsection: &str,
    entries: &[(&str, &str)],
) -> Result<bool> {
    let mut changed = false;
    edit_file(&repo.common_dir().join("config"), |config| {
        let same = config
            .section(section, Some(subsection.into()))
            .is_ok_and(|s| {
                let body = s.body();
                body.num_values() == entries.len()
                    && entries.iter().all(|(k, _)| {
                        let want: Vec<&str> = entries
                            .iter()
                            .filter(|(k2, _)| k2.eq_ignore_ascii_case(k))
                            .map(|(_, v)| *v)
                            .collect();
                        body.values(k) == want
                    })
            });
        if same {
            return Ok(());
        }
        while config
            .remove_section(section, Some(subsection.into()))
            .is_some()
        {}
        let err = |e| Error::repo("could not edit the config", e);
        let mut s = config
            .section_mut_or_create_new(section, Some(subsection.into()))
            .map_err(err)?;
        for (k, v) in entries {
            s.push(*k, Some(gix::bstr::BStr::new(*v))).map_err(err)?;
        }
        changed = true;
        Ok(())
    })?;
    Ok(changed)
}

/// Removes every `[section "subsection"]` of the repository's config; returns whether one was there.
pub fn remove_local_subsection(repo: &Repo, section: &str, subsection: &str) -> Result<bool> {
    let mut removed = false;
    edit_file(&repo.common_dir().join("config"), |config| {
        while config
            .remove_section(section, Some(subsection.into()))
            .is_some()
        {
            removed = true;
        }
        Ok(())
    })?;
    Ok(removed)
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
        removed = remove_values(config, section, key, value);
        Ok(())
    })?;
    Ok(removed)
}

/// Removes every `section.key` of `config` whose value is `value` (all of them when `None`), and
/// the section if that leaves it empty; returns whether a value was removed.
fn remove_values(
    config: &mut gix::config::File,
    section: &str,
    key: &str,
    value: Option<&str>,
) -> bool {
    let mut removed = false;
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
    removed
}

/// Returns every value of `section.key` in the repository's configuration, lowest precedence
/// first, each with whether it comes from a worktree's `config.worktree`.
pub fn values_with_worktree_flag(repo: &Repo, section: &str, key: &str) -> Vec<(String, bool)> {
    let snapshot = repo.inner.config_snapshot();
    let file = snapshot.plumbing();
    let Some(sections) = file.sections_by_name(section) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for s in sections.filter(|s| s.header().subsection_name().is_none()) {
        let worktree = s.meta().source == gix::config::Source::Worktree;
        for v in s.values(key) {
            out.push((v.to_string(), worktree));
        }
    }
    out
}

/// Where a config value comes from, as far as git-task's trust in it goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A config file every worktree reads (system, global, the repository's `config`, and
    /// the files they include).
    Shared,
    /// The `config.worktree` of the worktree the repository was opened in.
    Worktree,
    /// This invocation's own overrides: `git -c`, `GIT_CONFIG_PARAMETERS`,
    /// `GIT_CONFIG_COUNT`, git-task's own, or a variable such as `HTTP_PROXY`.
    Invocation,
}

/// One value of the configuration: `section`, `subsection`, `name` (as written), `value`
/// (`None` for a key written without `=`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub section: String,
    pub subsection: Option<String>,
    pub name: String,
    pub value: Option<String>,
    pub origin: Origin,
}

fn entries_of(file: &gix::config::File, sections: &[&str]) -> Vec<Entry> {
    let mut out = Vec::new();
    for s in file.sections() {
        let header = s.header();
        let section = header.name().to_string();
        if !sections.iter().any(|w| w.eq_ignore_ascii_case(&section)) {
            continue;
        }
        let origin = match s.meta().source {
            gix::config::Source::Worktree => Origin::Worktree,
            gix::config::Source::Env
            | gix::config::Source::Cli
            | gix::config::Source::Api
            | gix::config::Source::EnvOverride => Origin::Invocation,
            _ => Origin::Shared,
        };
        let subsection = header.subsection_name().map(|n| n.to_string());
        let mut seen: Vec<String> = Vec::new();
        for name in s.body().value_names() {
            if seen.iter().any(|n| n.eq_ignore_ascii_case(&name)) {
                continue;
            }
            seen.push(name.clone());
            let values = s.values(&name);
            if values.is_empty() {
                // A key without `=` (an implicit true).
                out.push(Entry {
                    section: section.clone(),
                    subsection: subsection.clone(),
                    name: name.clone(),
                    value: None,
                    origin,
                });
            }
            for v in values {
                out.push(Entry {
                    section: section.clone(),
                    subsection: subsection.clone(),
                    name: name.clone(),
                    value: Some(v.to_string()),
                    origin,
                });
            }
        }
    }
    out
}

/// Every value of the sections named `sections` (any case) in the repository's configuration
/// as git-task sees it (includes resolved), lowest precedence first, each with its [`Origin`].
pub fn entries(repo: &Repo, sections: &[&str]) -> Vec<Entry> {
    let snapshot = repo.inner.config_snapshot();
    entries_of(snapshot.plumbing(), sections)
}

/// Every value of the sections named `sections` in the config file at `path` alone (includes
/// not followed: an `include.path` there is a value like any other); nothing when the file
/// is missing or not a config file. Each is marked [`Origin::Worktree`].
pub fn entries_in_file(path: &Path, sections: &[&str]) -> Vec<Entry> {
    let Ok(bytes) = std::fs::read(path) else {
        return Vec::new();
    };
    let Ok(file) = gix::config::File::from_bytes_no_includes(
        &bytes,
        gix::config::file::Metadata::from(gix::config::Source::Worktree),
        Default::default(),
    ) else {
        return Vec::new();
    };
    entries_of(&file, sections)
}

/// Reads `key` (`section.name`) from the config file at `path` alone; `None` if the file or the key is missing.
pub fn get_in_file(path: &Path, key: &str) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    let file = gix::config::File::from_bytes_no_includes(
        &bytes,
        gix::config::file::Metadata::from(gix::config::Source::Local),
        Default::default(),
    )
    .ok()?;
    file.raw_value(key).ok().map(|v| v.to_string())
}

/// Removes `key` (`section.name`) from the config file at `path` when its value is `value`, the
/// section when that leaves it empty, and the file when that leaves it empty; returns whether
/// it removed the key.
pub fn remove_in_file(path: &Path, key: &str, value: &str) -> Result<bool> {
    if get_in_file(path, key).as_deref() != Some(value) {
        return Ok(false);
    }
    let (section, name) = key.split_once('.').unwrap_or((key, ""));
    edit_file(path, |config| {
        remove_values(config, section, name, Some(value));
        Ok(())
    })?;
    if std::fs::metadata(path).is_ok_and(|m| m.len() == 0) {
        std::fs::remove_file(path).context(|| format!("could not remove '{}'", path.display()))?;
    }
    Ok(true)
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

#[cfg(test)]
mod tests {
    use super::parse_parameters;

    #[test]
    fn parameters_as_git_writes_them() {
        assert_eq!(
            parse_parameters("'color.ui'='false' 'task.onViolation'='revert'"),
            ["color.ui=false", "task.onViolation=revert"]
        );
        assert_eq!(
            parse_parameters("'core.bare=false' 'a.b'"),
            ["core.bare=false", "a.b"]
        );
        assert_eq!(
            parse_parameters(" 'x.y'='it'\\''s = here' "),
            ["x.y=it's = here"]
        );
        assert_eq!(parse_parameters(""), Vec::<String>::new());
        assert_eq!(parse_parameters("'a.b'='c' garbage"), ["a.b=c"]);
    }
}
