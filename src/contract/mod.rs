//! The file contract: what a task may touch (SPEC §5).
//!
//! The effective contract has up to three levels, highest first: the policy
//! committed on the base branch (`.task-policy.toml`), the contract frozen into
//! the task record at start, and the branch's own `.task-contract.toml`. A path
//! must satisfy every level, so a lower level can only narrow. A branch file
//! that is looser than the frozen one, or deleted, is itself a violation
//! (`contract_tampered`): it cannot widen anything, but the agent should know.

pub mod file;
pub mod glob;
pub mod judge;
pub mod overlap;
pub mod spec;

pub use file::ContractFile;
pub use judge::{judge, Change, Reason, Verdict, Violation};

use glob::Patterns;

/// The `allowed` globs that match no file of `tree` (a task's base), in their order: a typo, or
/// paths the task is meant to create (what `start` warns about).
pub fn allowed_matching_nothing(
    repo: &crate::git::Repo,
    allowed: &[String],
    tree: crate::git::ObjectId,
) -> crate::Result<Vec<String>> {
    if allowed.is_empty() {
        return Ok(Vec::new());
    }
    let Ok(patterns) = Patterns::new(allowed, repo.ignore_case()) else {
        return Ok(Vec::new());
    };
    let mut unmatched = vec![true; allowed.len()];
    let mut left = allowed.len();
    let files = crate::git::objects::flatten_tree(repo, tree, &mut Default::default())?;
    for (path, _, _) in files.iter() {
        for rule in patterns.matching_rules(&String::from_utf8_lossy(path)) {
            if std::mem::replace(&mut unmatched[rule], false) {
                left -= 1;
            }
        }
        if left == 0 {
            break;
        }
    }
    Ok(allowed
        .iter()
        .zip(unmatched)
        .filter(|(_, none)| *none)
        .map(|(rule, _)| rule.clone())
        .collect())
}

/// Which level of the effective contract a rule comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// `.task-policy.toml` on the base branch.
    Policy,
    /// The contract frozen into the record at start.
    Frozen,
    /// `.task-contract.toml` on the task branch.
    Branch,
    /// Paths another live task claims (`git task claim`): its `forbidden` are the claimed
    /// globs and its `task` the claiming task; a change there is `claimed_by`.
    Claim,
}

/// One level, compiled once.
#[derive(Clone, Debug)]
pub struct Rules {
    /// Where these rules come from.
    pub level: Level,
    /// The file as written.
    pub file: ContractFile,
    /// Compiled `allowed` (empty: any path not forbidden).
    pub allowed: Patterns,
    /// Compiled `forbidden`.
    pub forbidden: Patterns,
}

impl Rules {
    /// Compiles one level; `name` is used in errors.
    pub fn new(
        level: Level,
        file: ContractFile,
        ignore_case: bool,
        name: &str,
    ) -> crate::Result<Rules> {
        let allowed = Patterns::new(&file.allowed, ignore_case)
            .map_err(|e| crate::Error::input(format!("{name}: bad glob {e}")))?;
        // Forbidden rules (and claims) match every spelling of a path, whatever `core.ignoreCase`
        // says: the setting can be changed by the agent, and wherever the tree is checked out on
        // a file system that folds case or Unicode forms (the one that set it, another clone),
        // `SRC/Db/x` is `src/db/x`.
        let forbidden = Patterns::folded(&file.forbidden)
            .map_err(|e| crate::Error::input(format!("{name}: bad glob {e}")))?;
        Ok(Rules {
            level,
            file,
            allowed,
            forbidden,
        })
    }
}

/// The branch's `.task-contract.toml`, as far as the judge is concerned.
#[derive(Clone, Debug)]
pub enum BranchFile {
    /// There is no branch level (patch mode: nothing is committed for the contract).
    NotApplicable,
    /// The file is gone from the branch (or the index being committed).
    Deleted,
    /// The file's text.
    Present(String),
}

/// Policy ∩ frozen contract ∩ branch file, plus what is wrong with the branch file.
#[derive(Clone, Debug)]
pub struct Effective {
    /// The task id.
    pub task: String,
    /// The levels that apply, highest first.
    pub levels: Vec<Rules>,
    /// Why the branch file counts as tampered, if it does.
    pub tampered: Option<String>,
}

impl Effective {
    /// Builds the effective contract from its parts.
    ///
    /// `policy` is the text of `.task-policy.toml` on the base branch, if any;
    /// a malformed policy is an input error naming the file.
    pub fn new(
        task: &str,
        policy: Option<&str>,
        frozen: &ContractFile,
        branch: &BranchFile,
        ignore_case: bool,
    ) -> crate::Result<Effective> {
        let policies: Vec<&str> = policy.into_iter().collect();
        Self::with_policies(task, &policies, frozen, branch, ignore_case)
    }

    /// Builds the effective contract with several policy levels (the target's current
    /// `.task-policy.toml` and the one frozen at start): each must be kept, so the narrower wins.
    pub fn with_policies(
        task: &str,
        policies: &[&str],
        frozen: &ContractFile,
        branch: &BranchFile,
        ignore_case: bool,
    ) -> crate::Result<Effective> {
        let mut levels = Vec::new();
        for (i, text) in policies.iter().enumerate() {
            if policies[..i].contains(text) {
                continue;
            }
            let file = ContractFile::parse(text, file::POLICY_FILE)?;
            levels.push(Rules::new(
                Level::Policy,
                file,
                ignore_case,
                file::POLICY_FILE,
            )?);
        }
        levels.push(Rules::new(
            Level::Frozen,
            frozen.clone(),
            ignore_case,
            "the frozen contract",
        )?);
        let mut tampered = None;
        match branch {
            BranchFile::NotApplicable => {}
            BranchFile::Deleted => tampered = Some(format!("{} was deleted", file::CONTRACT_FILE)),
            BranchFile::Present(text) if text.len() as u64 > file::MAX_CONTRACT_BYTES => {
                tampered = Some(format!(
                    "{} is not a valid contract: it is larger than {} KiB",
                    file::CONTRACT_FILE,
                    file::MAX_CONTRACT_BYTES >> 10
                ))
            }
            BranchFile::Present(text) => match ContractFile::parse(text, file::CONTRACT_FILE) {
                Ok(file) => {
                    if let Some(why) = loosening(frozen, &file, ignore_case) {
                        tampered = Some(why);
                    }
                    if let Ok(rules) =
                        Rules::new(Level::Branch, file, ignore_case, file::CONTRACT_FILE)
                    {
                        levels.push(rules);
                    }
                }
                Err(e) => {
                    tampered = Some(format!(
                        "{} is not a valid contract: {}",
                        file::CONTRACT_FILE,
                        e.message()
                    ))
                }
            },
        }
        Ok(Effective {
            task: task.to_owned(),
            levels,
            tampered,
        })
    }

    /// Adds the paths another live task claims: no change to them is allowed (`claimed_by`).
    ///
    /// A claimed glob that does not compile is left out: `claim` refuses such globs, so only a
    /// hand-edited claims ref can hold one, and it must not make every commit fail.
    pub fn add_claim(&mut self, task: &str, globs: &[String], ignore_case: bool) {
        let file = ContractFile {
            version: 1,
            task: Some(task.to_owned()),
            forbidden: globs
                .iter()
                .filter(|g| glob::check_pattern(g).is_ok())
                .cloned()
                .collect(),
            ..ContractFile::default()
        };
        if let Ok(rules) = Rules::new(Level::Claim, file, ignore_case, "a claim") {
            self.levels.push(rules);
        }
    }

    /// Returns the allowed globs of the narrowest level that restricts them (empty: anything not forbidden).
    ///
    /// A tampered branch file is left out: its `allowed` is not what the task may change, the
    /// frozen contract's is (the hint must not tell the agent `**`).
    pub fn allowed_summary(&self) -> Vec<String> {
        self.levels
            .iter()
            .rev()
            .filter(|l| !(l.level == Level::Branch && self.tampered.is_some()))
            .find(|l| !l.file.allowed.is_empty())
            .map(|l| l.file.allowed.clone())
            .unwrap_or_default()
    }

    /// Returns every forbidden glob of every level, without repeats.
    pub fn forbidden_summary(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for l in self.levels.iter().filter(|l| l.level != Level::Claim) {
            for f in &l.file.forbidden {
                if !out.contains(f) {
                    out.push(f.clone());
                }
            }
        }
        out
    }

    /// Returns the paths other live tasks claim: each claiming task with its globs.
    pub fn claims(&self) -> impl Iterator<Item = (&str, &[String])> {
        self.levels
            .iter()
            .filter(|l| l.level == Level::Claim)
            .map(|l| {
                (
                    l.file.task.as_deref().unwrap_or("?"),
                    l.file.forbidden.as_slice(),
                )
            })
    }

    /// Returns whether new files are allowed at every level.
    pub fn allows_new_files(&self) -> bool {
        self.levels
            .iter()
            .all(|l| l.file.allow_new_files.unwrap_or(true))
    }

    /// Returns whether deletions are allowed at every level.
    pub fn allows_deletions(&self) -> bool {
        self.levels
            .iter()
            .all(|l| l.file.allow_deletions.unwrap_or(true))
    }

    /// Returns the smallest `max_changed_files` of any level.
    pub fn max_changed_files(&self) -> Option<u64> {
        self.levels
            .iter()
            .filter_map(|l| l.file.max_changed_files)
            .min()
    }
}

/// Returns why `branch` is looser than `frozen`, or `None` if it only narrows (or equals) it.
///
/// Glob inclusion is undecidable in general, so a wider-looking `allowed` glob
/// is tested on a sample path built from it: `src/api/**` is fine under
/// `src/**` because `src/api/x` matches it; `**/*.rs` is not, because `x/x.rs`
/// does not. Globs with classes or alternatives must appear verbatim.
pub fn loosening(
    frozen: &ContractFile,
    branch: &ContractFile,
    ignore_case: bool,
) -> Option<String> {
    if branch.task.is_some() && frozen.task.is_some() && branch.task != frozen.task {
        return Some(format!(
            "task changed from '{}' to '{}'",
            frozen.task.as_deref().unwrap_or(""),
            branch.task.as_deref().unwrap_or("")
        ));
    }
    for f in &frozen.forbidden {
        if !branch.forbidden.contains(f) {
            return Some(format!("forbidden rule '{f}' was removed"));
        }
    }
    if !frozen.allowed.is_empty() && branch.allowed.is_empty() {
        return Some("allowed was emptied, which would allow every path".into());
    }
    if let Some(a) = beyond_allowed(frozen, &branch.allowed, ignore_case) {
        return Some(format!(
            "allowed rule '{a}' is wider than the frozen contract"
        ));
    }
    if frozen.allow_new_files == Some(false) && branch.allow_new_files != Some(false) {
        return Some("allow_new_files was turned on".into());
    }
    if frozen.allow_deletions == Some(false) && branch.allow_deletions != Some(false) {
        return Some("allow_deletions was turned on".into());
    }
    if let Some(max) = frozen.max_changed_files {
        match branch.max_changed_files {
            Some(b) if b <= max => {}
            Some(b) => return Some(format!("max_changed_files was raised from {max} to {b}")),
            None => return Some(format!("max_changed_files ({max}) was removed")),
        }
    }
    None
}

/// The first of `globs` that reaches beyond what `contract` allows (see [`loosening`] for how
/// a glob is judged), if any. A contract without `allowed` allows every path.
pub fn beyond_allowed<'g>(
    contract: &ContractFile,
    globs: &'g [String],
    ignore_case: bool,
) -> Option<&'g str> {
    if contract.allowed.is_empty() {
        return None;
    }
    let Ok(allowed) = Patterns::new(&contract.allowed, ignore_case) else {
        return globs.first().map(String::as_str);
    };
    globs
        .iter()
        .find(|g| {
            !contract.allowed.contains(g) && !sample_path(g).is_some_and(|p| allowed.is_match(&p))
        })
        .map(String::as_str)
}

/// Why `new`, given to replace the frozen contract `frozen` (`start --reset`, or a removed task
/// started again), would loosen it, if it would (SPEC §2.4: a task cannot loosen its own
/// contract): what [`loosening`] finds, judged without case folding (the stricter reading), and
/// any of its checks dropped.
pub fn replacing_loosens(frozen: &ContractFile, new: &ContractFile) -> Option<String> {
    if let Some(why) = loosening(frozen, new, false) {
        return Some(why);
    }
    let checks = |c: &ContractFile| {
        c.checks
            .as_ref()
            .map(|c| c.commands.clone())
            .unwrap_or_default()
    };
    let kept = checks(new);
    checks(frozen)
        .into_iter()
        .find(|c| !kept.contains(c))
        .map(|c| format!("check '{c}' was removed"))
}

/// Builds a concrete path that a glob matches (wildcards become `x`), or `None` for classes and alternatives.
fn sample_path(glob: &str) -> Option<String> {
    if glob.contains(['[', '{', '\\']) {
        return None;
    }
    let trimmed = glob.trim_start_matches('/').trim_end_matches('/');
    let mut sample = trimmed.replace("**", "x").replace(['*', '?'], "x");
    if sample.is_empty() {
        return None;
    }
    // A directory-style or `/**` glob covers what is below it: probe one level down.
    if glob.ends_with('/')
        || glob.ends_with("**")
        || !trimmed.contains('/') && !trimmed.contains('*')
    {
        sample.push_str("/x");
    }
    Some(sample)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(allowed: &[&str], forbidden: &[&str]) -> ContractFile {
        ContractFile {
            version: 1,
            task: Some("t".into()),
            allowed: allowed.iter().map(|s| s.to_string()).collect(),
            forbidden: forbidden.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn narrowing_is_not_tampering() {
        let frozen = c(&["src/**"], &["src/db/**"]);
        for branch in [
            c(&["src/**"], &["src/db/**"]),
            c(&["src/api/**"], &["src/db/**"]),
            c(&["src/*.rs"], &["src/db/**", "*.lock"]),
            c(&["src/api"], &["src/db/**"]),
            c(&["src/api/"], &["src/db/**"]),
        ] {
            assert_eq!(loosening(&frozen, &branch, false), None, "{branch:?}");
        }
        let mut stricter = c(&["src/**"], &["src/db/**"]);
        stricter.allow_new_files = Some(false);
        stricter.max_changed_files = Some(3);
        assert_eq!(loosening(&frozen, &stricter, false), None);
    }

    #[test]
    fn loosening_is_tampering() {
        let frozen = c(&["src/**"], &["src/db/**"]);
        let cases = [
            (
                c(&["src/**"], &[]),
                "forbidden rule 'src/db/**' was removed",
            ),
            (c(&[], &["src/db/**"]), "allowed was emptied"),
            (c(&["**"], &["src/db/**"]), "allowed rule '**' is wider"),
            (
                c(&["src/**", "docs/**"], &["src/db/**"]),
                "allowed rule 'docs/**' is wider",
            ),
            (
                c(&["**/*.rs"], &["src/db/**"]),
                "allowed rule '**/*.rs' is wider",
            ),
            (
                c(&["src/[a-z]*"], &["src/db/**"]),
                "allowed rule 'src/[a-z]*' is wider",
            ),
        ];
        for (branch, want) in cases {
            let got = loosening(&frozen, &branch, false).unwrap_or_default();
            assert!(got.starts_with(want), "{branch:?}: {got}");
        }
        let mut strict = c(&[], &[]);
        strict.allow_new_files = Some(false);
        strict.allow_deletions = Some(false);
        strict.max_changed_files = Some(5);
        let mut b = strict.clone();
        b.allow_new_files = None;
        assert!(loosening(&strict, &b, false)
            .unwrap()
            .contains("allow_new_files"));
        let mut b = strict.clone();
        b.allow_deletions = Some(true);
        assert!(loosening(&strict, &b, false)
            .unwrap()
            .contains("allow_deletions"));
        let mut b = strict.clone();
        b.max_changed_files = Some(6);
        assert!(loosening(&strict, &b, false).unwrap().contains("raised"));
        let mut b = strict.clone();
        b.max_changed_files = None;
        assert!(loosening(&strict, &b, false).unwrap().contains("removed"));
        let mut b = strict.clone();
        b.task = Some("other".into());
        assert!(loosening(&strict, &b, false)
            .unwrap()
            .contains("task changed"));
    }

    #[test]
    fn effective_marks_deleted_and_invalid_branch_files() {
        let frozen = c(&[], &["a/**"]);
        let e = Effective::new("t", None, &frozen, &BranchFile::Deleted, false).unwrap();
        assert!(e.tampered.unwrap().contains("deleted"));
        let e = Effective::new(
            "t",
            None,
            &frozen,
            &BranchFile::Present("nonsense = [".into()),
            false,
        )
        .unwrap();
        assert!(e.tampered.unwrap().contains("not a valid contract"));
        let e = Effective::new("t", None, &frozen, &BranchFile::NotApplicable, false).unwrap();
        assert!(e.tampered.is_none());
        assert_eq!(e.levels.len(), 1);
    }

    #[test]
    fn policy_and_levels_combine() {
        let frozen = c(&["src/**"], &["src/db/**"]);
        let mut branch = c(&["src/api/**"], &["src/db/**"]);
        branch.allow_deletions = Some(false);
        let e = Effective::new(
            "t",
            Some("version = 1\nforbidden = [\".github/**\"]\nmax_changed_files = 9\n"),
            &frozen,
            &BranchFile::Present(branch.to_owned_toml()),
            false,
        )
        .unwrap();
        assert_eq!(e.levels.len(), 3);
        assert_eq!(
            e.forbidden_summary(),
            vec![".github/**".to_string(), "src/db/**".to_string()]
        );
        assert_eq!(e.allowed_summary(), vec!["src/api/**".to_string()]);
        assert!(!e.allows_deletions());
        assert!(e.allows_new_files());
        assert_eq!(e.max_changed_files(), Some(9));
        assert!(Effective::new(
            "t",
            Some("version = 1\nforbid = []\n"),
            &frozen,
            &BranchFile::NotApplicable,
            false
        )
        .is_err());
    }

    impl ContractFile {
        fn to_owned_toml(&self) -> String {
            self.to_toml()
        }
    }
}
