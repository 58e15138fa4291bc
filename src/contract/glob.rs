//! Contract glob rules (SPEC §5) compiled once into a `globset::GlobSet`.
//!
//! - paths are repository-relative with `/`; `*` and `?` never cross `/`;
//! - `**` crosses any number of directories;
//! - a pattern naming a directory (`src/db` or `src/db/`) covers everything below it;
//! - a pattern with no `/` matches a name at any depth (`*.lock`, `node_modules`);
//! - a leading `/` anchors a pattern at the root (`/Cargo.lock`);
//! - matching is case-insensitive when `core.ignoreCase` is true.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// A compiled list of rules that remembers each rule as written.
#[derive(Clone, Debug)]
pub struct Patterns {
    set: GlobSet,
    /// For each glob in `set`, the index of the rule it came from.
    owner: Vec<usize>,
    rules: Vec<String>,
}

impl Patterns {
    /// Compiles `rules`; fails with the first rule that is not a valid glob.
    pub fn new(rules: &[String], ignore_case: bool) -> Result<Patterns, String> {
        let mut builder = GlobSetBuilder::new();
        let mut owner = Vec::new();
        for (i, rule) in rules.iter().enumerate() {
            for glob in expand(rule) {
                let compiled = GlobBuilder::new(&glob)
                    .literal_separator(true)
                    .case_insensitive(ignore_case)
                    .backslash_escape(true)
                    .build()
                    .map_err(|e| format!("'{rule}': {}", e.kind()))?;
                builder.add(compiled);
                owner.push(i);
            }
        }
        let set = builder.build().map_err(|e| e.to_string())?;
        Ok(Patterns {
            set,
            owner,
            rules: rules.to_vec(),
        })
    }

    /// Returns whether there are no rules at all.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Returns the rules as written.
    pub fn rules(&self) -> &[String] {
        &self.rules
    }

    /// Returns the first rule (as written) that matches `path`, if any.
    pub fn first_match(&self, path: &str) -> Option<&str> {
        let hits = self.set.matches(path);
        hits.iter()
            .map(|&g| self.owner[g])
            .min()
            .map(|r| self.rules[r].as_str())
    }

    /// Returns whether any rule matches `path`.
    pub fn is_match(&self, path: &str) -> bool {
        self.set.is_match(path)
    }
}

/// Returns the globs one rule stands for.
fn expand(rule: &str) -> Vec<String> {
    let trimmed = rule.trim_end_matches('/');
    let (anchored, body) = match trimmed.strip_prefix('/') {
        Some(rest) => (true, rest),
        None => (false, trimmed),
    };
    if body.is_empty() || body == "**" {
        return vec!["**".into()];
    }
    let base = if anchored || body.contains('/') {
        body.to_owned()
    } else {
        format!("**/{body}")
    };
    if base.ends_with("/**") {
        vec![base]
    } else {
        vec![format!("{base}/**"), base]
    }
}

/// Checks that a single rule is a valid glob (used by the contract parser for line/column errors).
pub fn check_pattern(rule: &str) -> Result<(), String> {
    if rule.trim().is_empty() {
        return Err("a rule cannot be empty".into());
    }
    for glob in expand(rule) {
        GlobBuilder::new(&glob)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| e.kind().to_string())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(rule: &str, path: &str) -> bool {
        Patterns::new(&[rule.to_owned()], false)
            .unwrap()
            .is_match(path)
    }

    #[test]
    fn star_and_question_never_cross_slash() {
        assert!(matches("src/*.rs", "src/lib.rs"));
        assert!(!matches("src/*.rs", "src/api/lib.rs"));
        assert!(matches("src/?.rs", "src/a.rs"));
        // (`src/?` names the directory `src/a`, so it does cover `src/a/b`: the directory rule.)
        assert!(!matches("src/a?b", "src/a/b"), "? does not match '/'");
        assert!(
            !matches("src*", "src/lib.rs") || matches("src*", "src"),
            "a name pattern covers what is below the matching directory only"
        );
    }

    #[test]
    fn double_star_crosses_directories() {
        assert!(matches("src/**", "src/a/b/c.rs"));
        assert!(matches("src/**/*.rs", "src/a/b/c.rs"));
        assert!(matches("src/**/*.rs", "src/c.rs"));
        assert!(matches("**/secrets/**", "a/b/secrets/key"));
        assert!(matches("**/secrets/**", "secrets/key"));
        assert!(!matches("src/**", "srcx/a"));
    }

    #[test]
    fn directory_patterns_cover_everything_below() {
        assert!(matches("src/db", "src/db/a.rs"));
        assert!(matches("src/db/", "src/db/x/y.rs"));
        assert!(matches("src/db", "src/db"));
        assert!(!matches("src/db", "src/dbx/a.rs"));
        assert!(
            !matches("src/db", "lib/src/db/a.rs"),
            "a pattern with a slash is anchored"
        );
    }

    #[test]
    fn slashless_patterns_match_names_at_any_depth() {
        assert!(matches("*.lock", "Cargo.lock"));
        assert!(matches("*.lock", "a/b/yarn.lock"));
        assert!(matches("node_modules", "web/node_modules/x/index.js"));
        assert!(!matches("*.lock", "a.lock.txt"));
        assert!(matches("/Cargo.lock", "Cargo.lock"));
        assert!(
            !matches("/Cargo.lock", "sub/Cargo.lock"),
            "a leading slash anchors at the root"
        );
    }

    #[test]
    fn case_follows_ignore_case() {
        let sensitive = Patterns::new(&["src/DB/**".into()], false).unwrap();
        assert!(!sensitive.is_match("src/db/a"));
        let insensitive = Patterns::new(&["src/DB/**".into()], true).unwrap();
        assert!(insensitive.is_match("src/db/a"));
    }

    #[test]
    fn first_match_gives_the_rule_as_written() {
        let p = Patterns::new(&["docs/".into(), "*.md".into()], false).unwrap();
        assert_eq!(p.first_match("docs/a.md"), Some("docs/"));
        assert_eq!(p.first_match("x/a.md"), Some("*.md"));
        assert_eq!(p.first_match("x/a.rs"), None);
    }

    #[test]
    fn bad_globs_are_reported() {
        assert!(check_pattern("src/[z").is_err());
        assert!(check_pattern("src/{a").is_err());
        assert!(check_pattern("").is_err());
        assert!(check_pattern("src/**").is_ok());
    }
}
