//! [`BranchName`]: a full branch name, checked once where it is read or made.

use super::{is_valid_name, HEADS};
use std::fmt;

/// A full branch name git accepts (`refs/heads/<short>`, the short name not empty and not
/// starting with `-`), or `HEAD`: a patch-mode task started on a detached HEAD.
///
/// Read from a repository (a record, a remote record), a bad one fails the read with an error
/// naming where it came from: no `String` that is "probably a branch" reaches a command.
#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, schemars::JsonSchema,
)]
#[serde(transparent)]
pub struct BranchName(String);

/// What [`BranchName`] holds for a detached HEAD.
const DETACHED: &str = "HEAD";

impl BranchName {
    /// Parses a full branch name (`refs/heads/main`), or `HEAD`; the error says why not.
    pub fn parse(full: &str) -> Result<BranchName, String> {
        if full == DETACHED {
            return Ok(BranchName::detached());
        }
        let short = super::branch_short(full).ok_or_else(|| {
            format!(
                "{:?} is not a full branch name ({HEADS}<name>)",
                shorten(full)
            )
        })?;
        if short.is_empty() || short.starts_with('-') || !is_valid_name(full) {
            return Err(format!("{:?} is not a valid branch name", shorten(full)));
        }
        // Names git takes for something else when they are spelled short (`git checkout HEAD`,
        // `refs/heads/x` for `refs/heads/refs/heads/x`): never a task's branch or base.
        if short == DETACHED || short.starts_with("refs/") {
            return Err(format!("{:?} is an ambiguous branch name", shorten(full)));
        }
        Ok(BranchName(full.to_owned()))
    }

    /// The branch whose short name is `short` (`main` → `refs/heads/main`).
    pub fn from_short(short: &str) -> Result<BranchName, String> {
        if short == DETACHED {
            return Err("HEAD is not a branch name".into());
        }
        BranchName::parse(&format!("{HEADS}{short}"))
    }

    /// The marker of a detached HEAD (patch mode only).
    pub fn detached() -> BranchName {
        BranchName(DETACHED.to_owned())
    }

    /// Whether this is the detached-HEAD marker rather than a branch.
    pub fn is_detached(&self) -> bool {
        self.0 == DETACHED
    }

    /// The full name (`refs/heads/main`), or `HEAD`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The short name (`main`), or `HEAD`.
    pub fn short(&self) -> &str {
        super::short_name(&self.0)
    }
}

/// At most 80 characters of `text`, for an error message about a hostile value.
fn shorten(text: &str) -> String {
    match text.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

impl fmt::Display for BranchName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::ops::Deref for BranchName {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for BranchName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for BranchName {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for BranchName {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<String> for BranchName {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

impl PartialEq<BranchName> for String {
    fn eq(&self, other: &BranchName) -> bool {
        *self == other.0
    }
}

impl PartialEq<BranchName> for &str {
    fn eq(&self, other: &BranchName) -> bool {
        *self == other.0
    }
}

impl From<BranchName> for String {
    fn from(name: BranchName) -> String {
        name.0
    }
}

impl From<&BranchName> for String {
    fn from(name: &BranchName) -> String {
        name.0.clone()
    }
}

impl std::str::FromStr for BranchName {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        BranchName::parse(s)
    }
}

impl<'de> serde::Deserialize<'de> for BranchName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        BranchName::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_names_read_from_a_repository_are_checked() {
        for good in ["refs/heads/main", "refs/heads/task/t1", "HEAD"] {
            assert_eq!(BranchName::parse(good).unwrap().as_str(), good);
        }
        assert_eq!(
            BranchName::parse("refs/heads/task/t1").unwrap().short(),
            "task/t1"
        );
        for bad in [
            "",
            "main",
            "refs/heads/",
            "refs/heads/-x",
            "refs/heads/task/../x",
            "refs/heads/ma in",
            "refs/heads/a\0b",
            "refs/tags/v1",
            "refs/tasks/t1/record",
            "refs/heads/x.lock",
            "refs/heads/HEAD",
            "refs/heads/refs/heads/main",
        ] {
            assert!(BranchName::parse(bad).is_err(), "{bad:?}");
        }
        assert!(BranchName::from_short("HEAD").is_err());
        assert_eq!(
            BranchName::from_short("main").unwrap().as_str(),
            "refs/heads/main"
        );
        let huge = format!("{}{}", "x".repeat(1 << 20), "\0");
        let err = BranchName::parse(&huge).unwrap_err();
        assert!(err.len() < 200, "{}", err.len());
    }
}
