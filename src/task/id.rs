//! Task ids (SPEC §3): validation and generated two-word names.

use std::fmt;

/// A validated task id: 1–64 chars of `[A-Za-z0-9._-]`, starting with a letter
/// or digit, no `..`, not ending in `.lock` or `.`.
#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, schemars::JsonSchema,
)]
#[serde(transparent)]
pub struct TaskId(String);

impl TaskId {
    /// Parses and validates a task id; the error text is what clap prints after `invalid value`.
    pub fn parse(text: &str) -> Result<TaskId, String> {
        if text.is_empty() {
            return Err("a task id cannot be empty".into());
        }
        if text.len() > 64 {
            return Err(format!(
                "a task id is at most 64 characters, this one has {}",
                text.len()
            ));
        }
        if let Some(bad) = text
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
        {
            return Err(format!(
                "a task id may only contain letters, digits, '.', '_' and '-', not {}",
                describe(bad)
            ));
        }
        if !text.starts_with(|c: char| c.is_ascii_alphanumeric()) {
            return Err("a task id must start with a letter or a digit".into());
        }
        if text.contains("..") {
            return Err("a task id cannot contain '..'".into());
        }
        if text.ends_with(".lock") {
            return Err("a task id cannot end in '.lock'".into());
        }
        if text.ends_with('.') {
            return Err("a task id cannot end in '.'".into());
        }
        Ok(TaskId(text.to_owned()))
    }

    /// Returns the id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

fn describe(c: char) -> String {
    if c.is_control() || c.is_whitespace() {
        format!("U+{:04X}", c as u32)
    } else {
        format!("'{c}'")
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::str::FromStr for TaskId {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TaskId::parse(s)
    }
}

/// Read from a repository (a record, a claim, a queue, a remote record), a bad id fails the
/// read: the error says why, quoting at most 80 characters of it.
impl<'de> serde::Deserialize<'de> for TaskId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        TaskId::parse(&text).map_err(|why| {
            let shown: String = text.chars().take(80).collect();
            serde::de::Error::custom(format!("bad task id {shown:?}: {why}"))
        })
    }
}

// A task id reads as the text it is wherever a `&str` is wanted.
impl std::ops::Deref for TaskId {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for TaskId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for TaskId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for TaskId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<String> for TaskId {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

impl PartialEq<TaskId> for String {
    fn eq(&self, other: &TaskId) -> bool {
        *self == other.0
    }
}

impl PartialEq<TaskId> for &str {
    fn eq(&self, other: &TaskId) -> bool {
        *self == other.0
    }
}

impl From<TaskId> for String {
    fn from(id: TaskId) -> String {
        id.0
    }
}

impl From<&TaskId> for String {
    fn from(id: &TaskId) -> String {
        id.0.clone()
    }
}

const ADJECTIVES: &[&str] = &[
    "amber", "bold", "brave", "brisk", "calm", "clever", "crisp", "eager", "fair", "fancy",
    "gentle", "glad", "golden", "grand", "green", "happy", "hidden", "jolly", "keen", "kind",
    "lively", "lucky", "mellow", "merry", "misty", "noble", "polite", "proud", "quick", "quiet",
    "rapid", "ready", "rosy", "shiny", "silent", "silver", "smart", "snowy", "solid", "spry",
    "steady", "sunny", "swift", "tidy", "vivid", "warm", "wise", "witty",
];

const NOUNS: &[&str] = &[
    "badger", "beacon", "brook", "canyon", "cedar", "comet", "coral", "crane", "delta", "dune",
    "falcon", "fern", "field", "forest", "fox", "glacier", "grove", "harbor", "heron", "island",
    "lagoon", "lake", "lantern", "maple", "meadow", "mesa", "moon", "orchid", "otter", "owl",
    "pebble", "pine", "planet", "prairie", "raven", "reef", "ridge", "river", "robin", "sparrow",
    "spruce", "star", "stone", "summit", "thunder", "tiger", "valley", "willow",
];

/// Generates a two-word id (`brave-forest`) for which `taken` returns false.
///
/// Tries the pseudo-random sequence seeded by `seed` first, then appends a
/// number, so it always ends.
pub fn generate(seed: u64, mut taken: impl FnMut(&TaskId) -> bool) -> TaskId {
    let mut state = seed | 1;
    let mut next = move || {
        // xorshift64: good enough to spread names; not for security.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..64 {
        let r = next();
        let name = format!(
            "{}-{}",
            ADJECTIVES[(r % ADJECTIVES.len() as u64) as usize],
            NOUNS[((r >> 32) % NOUNS.len() as u64) as usize]
        );
        let id = TaskId(name);
        if !taken(&id) {
            return id;
        }
    }
    let base = format!("{}-{}", ADJECTIVES[0], NOUNS[0]);
    (2..)
        .map(|n| TaskId(format!("{base}-{n}")))
        .find(|id| !taken(id))
        .expect("an unbounded sequence of distinct ids always has a free one")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_ids() {
        for id in [
            "a",
            "auth-fix",
            "A.b_c-9",
            "9lives",
            &"x".repeat(64),
            "v1.2",
            "a.lockx",
        ] {
            assert!(TaskId::parse(id).is_ok(), "{id}");
        }
    }

    #[test]
    fn hostile_ids() {
        for id in [
            "",
            "-x",
            ".x",
            "_x",
            "a..b",
            "a.lock",
            "a.",
            "a/b",
            "../x",
            "a b",
            "a\nb",
            "a\u{0}b",
            "a~1",
            "a^",
            "a:b",
            "a?",
            "a*",
            "a[",
            "a\\b",
            "@",
            "a@{1}",
            "é",
            &"x".repeat(65),
        ] {
            assert!(TaskId::parse(id).is_err(), "{id:?} should be rejected");
        }
    }

    #[test]
    fn generated_names_are_valid_and_avoid_taken_ones() {
        let first = generate(42, |_| false);
        assert!(TaskId::parse(first.as_str()).is_ok());
        assert_eq!(first.as_str().split('-').count(), 2);
        let second = generate(42, |id| id == &first);
        assert_ne!(first, second);
        let fallback = generate(42, |id| !id.as_str().ends_with("-7"));
        assert!(fallback.as_str().ends_with("-7"));
    }
}
