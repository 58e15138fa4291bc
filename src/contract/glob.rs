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
    /// Each glob as written after expansion, for [`Patterns::first_below`].
    globs: Vec<String>,
    ignore_case: bool,
    /// Paths are also matched in Unicode NFC, and rules compiled in NFC too ([`Patterns::folded`]).
    nfc: bool,
}

impl Patterns {
    /// Compiles `rules`; fails with the first rule that is not a valid glob.
    pub fn new(rules: &[String], ignore_case: bool) -> Result<Patterns, String> {
        Self::build(rules, ignore_case, false)
    }

    /// Compiles rules that must match every spelling a file system may take for the same file:
    /// without regard to case, and in any Unicode normalization form (on a file system that
    /// folds them, `SRC/Db/x` and `src/db/x`, `café` in NFC and in NFD, are one file). Used for
    /// the rules that refuse (`forbidden`, claims): one more spelling can only refuse more.
    pub fn folded(rules: &[String]) -> Result<Patterns, String> {
        Self::build(rules, true, true)
    }

    fn build(rules: &[String], ignore_case: bool, nfc: bool) -> Result<Patterns, String> {
        use unicode_normalization::UnicodeNormalization;
        let mut builder = GlobSetBuilder::new();
        let mut owner = Vec::new();
        let mut globs = Vec::new();
        for (i, rule) in rules.iter().enumerate() {
            let mut spellings = vec![rule.clone()];
            let composed: String = rule.nfc().collect();
            if nfc && composed != *rule {
                spellings.push(composed);
            }
            for glob in spellings.iter().flat_map(|r| expand(r)) {
                let compiled =
                    compile(&glob, ignore_case).map_err(|e| format!("'{rule}': {}", e.kind()))?;
                builder.add(compiled);
                owner.push(i);
                globs.push(glob);
            }
        }
        let set = builder.build().map_err(|e| e.to_string())?;
        Ok(Patterns {
            set,
            owner,
            rules: rules.to_vec(),
            globs,
            ignore_case,
            nfc,
        })
    }

    /// `path` in NFC when these patterns match that form too and it differs.
    fn composed(&self, path: &str) -> Option<String> {
        use unicode_normalization::UnicodeNormalization;
        if !self.nfc || path.is_ascii() {
            return None;
        }
        let composed: String = path.nfc().collect();
        (composed != path).then_some(composed)
    }

    /// Returns whether there are no rules at all.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Returns the rules as written.
    pub fn rules(&self) -> &[String] {
        &self.rules
    }

    /// Returns whether matching ignores case (`core.ignoreCase`).
    pub fn ignore_case(&self) -> bool {
        self.ignore_case
    }

    /// Returns the first rule (as written) that matches `path`, if any.
    pub fn first_match(&self, path: &str) -> Option<&str> {
        let mut hits = self.set.matches(path);
        if let Some(composed) = self.composed(path) {
            hits.extend(self.set.matches(&composed));
        }
        hits.iter()
            .map(|&g| self.owner[g])
            .min()
            .map(|r| self.rules[r].as_str())
    }

    /// Returns the index of every rule (in [`Patterns::rules`]) that matches `path`.
    pub fn matching_rules(&self, path: &str) -> Vec<usize> {
        let mut hits = self.set.matches(path);
        if let Some(composed) = self.composed(path) {
            hits.extend(self.set.matches(&composed));
        }
        let mut rules: Vec<usize> = hits.iter().map(|&g| self.owner[g]).collect();
        rules.sort_unstable();
        rules.dedup();
        rules
    }

    /// Returns whether any rule matches `path`.
    pub fn is_match(&self, path: &str) -> bool {
        self.set.is_match(path) || self.composed(path).is_some_and(|c| self.set.is_match(&c))
    }

    /// Returns the first rule (as written) that could match some path strictly below the
    /// directory `dir` (`""`: the root), erring on the side of "could" (a component that cannot
    /// be compiled on its own is assumed to match). Used for a symlink to a directory (SPEC §5 `symlink_escape`).
    pub fn first_below(&self, dir: &str) -> Option<&str> {
        match self.composed(dir) {
            Some(composed) => self
                .first_below_as_spelled(dir)
                .or_else(|| self.first_below_as_spelled(&composed)),
            None => self.first_below_as_spelled(dir),
        }
    }

    fn first_below_as_spelled(&self, dir: &str) -> Option<&str> {
        let parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
        let hit = self.globs.iter().position(|glob| {
            let mut globs = glob.split('/');
            for part in &parts {
                match globs.next() {
                    None => return false,
                    Some("**") => return true,
                    Some(g) if g.contains(['*', '?', '[', '{', '\\']) => {
                        let one = GlobBuilder::new(g)
                            .literal_separator(true)
                            .case_insensitive(self.ignore_case)
                            .backslash_escape(true)
                            .build();
                        if one.is_ok_and(|one| !one.compile_matcher().is_match(part)) {
                            return false;
                        }
                    }
                    Some(g) if self.ignore_case && g.eq_ignore_ascii_case(part) => {}
                    Some(g) if g == *part => {}
                    Some(_) => return false,
                }
            }
            // The directory is a prefix of the glob: it names something below.
            globs.next().is_some()
        })?;
        Some(self.rules[self.owner[hit]].as_str())
    }

    /// Returns whether the rules match every path below the directory `dir`, probed with
    /// unlikely names at several depths (a rule like `src/*` covers `src/x` but not `src/x/y`).
    pub fn covers_below(&self, dir: &str) -> bool {
        let mut path = dir.trim_end_matches('/').to_owned();
        (1..=5).all(|_| {
            if !path.is_empty() {
                path.push('/');
            }
            path.push_str("\u{1}probe");
            self.set.is_match(&path)
        })
    }
}

/// Compiles one glob of [`expand`] the one way every contract glob is compiled (the overlap
/// forecast, `contract/overlap.rs`, takes the regex globset matches with from it).
pub fn compile(glob: &str, ignore_case: bool) -> Result<globset::Glob, globset::Error> {
    GlobBuilder::new(glob)
        .literal_separator(true)
        .case_insensitive(ignore_case)
        .backslash_escape(true)
        .build()
}

/// Returns the globs one rule stands for.
pub fn expand(rule: &str) -> Vec<String> {
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

/// Checks a rule a user gives now (`start`'s flags and `--contract` file, `claim`): a valid
/// glob ([`check_pattern`]) that can match a path. Repository paths never hold an empty, `.`
/// or `..` component (SPEC §5, path safety), so a rule with one (`../src/**`, `./src`,
/// `src//db`) would silently match nothing. Contracts already frozen are not checked again.
pub fn check_new_pattern(rule: &str) -> Result<(), String> {
    check_pattern(rule)?;
    let body = rule.trim_end_matches('/');
    let body = body.strip_prefix('/').unwrap_or(body);
    if !body.is_empty()
        && body
            .split('/')
            .any(|c| c.is_empty() || c == "." || c == "..")
    {
        return Err(
            "a rule is a path inside the repository, relative to its root: it cannot hold an empty, '.' or '..' component"
                .into(),
        );
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
        assert!(!matches("src/?.rs", "src/a/b.rs"), "? does not match '/'");
        assert!(!matches("src?lib.rs", "src/lib.rs"), "? does not match '/'");
        assert!(
            !matches("/src*", "srcx/lib/a.rs") || matches("/src*", "srcx"),
            "a name pattern covers what is below a matching directory"
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
    fn what_lies_below_a_directory() {
        let p = Patterns::new(
            &["secret/**".into(), "src/db".into(), "*.lock".into()],
            false,
        )
        .unwrap();
        assert_eq!(p.first_below("secret"), Some("secret/**"));
        assert_eq!(p.first_below("src"), Some("src/db"));
        assert_eq!(p.first_below("src/db/x"), Some("src/db"));
        assert_eq!(p.first_below(""), Some("secret/**"));
        assert_eq!(p.first_below("docs"), Some("*.lock"));
        let p = Patterns::new(&["secret/**".into(), "/a/*.rs".into()], false).unwrap();
        assert_eq!(p.first_below("docs"), None);
        assert_eq!(p.first_below("a"), Some("/a/*.rs"));
        assert_eq!(p.first_below("a/b"), None);
        let allowed = Patterns::new(&["src/**".into(), "docs/*.md".into()], false).unwrap();
        assert!(allowed.covers_below("src"));
        assert!(allowed.covers_below("src/a"));
        assert!(!allowed.covers_below("docs"));
        assert!(!allowed.covers_below(""));
        assert!(!allowed.covers_below("secret"));
    }

    #[test]
    fn bad_globs_are_reported() {
        assert!(check_pattern("src/[z").is_err());
        assert!(check_pattern("src/{a").is_err());
        assert!(check_pattern("").is_err());
        assert!(check_pattern("src/**").is_ok());
        for bad in ["../x/**", "./src", "src/../db", "src//db", "/./a"] {
            assert!(check_new_pattern(bad).is_err(), "{bad}");
        }
        for good in [
            "/",
            "src/",
            "/Cargo.lock",
            "**",
            "src/**",
            "*.lock",
            "a.b/..c",
        ] {
            assert!(check_new_pattern(good).is_ok(), "{good}");
        }
    }
}
