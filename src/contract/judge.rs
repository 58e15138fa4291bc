//! The verdict: every changed path judged against the effective contract.
//!
//! One implementation serves the pre-commit hook (staged changes), `check`
//! and the merge gate (the whole task), so they can never disagree.
//!
//! Why one file of 700 lines: the judge is ~430 lines of one concept (the rule
//! order, the reasons and the repair command each verdict prints); the rest is
//! its table of unit tests, which belongs next to the rules it pins down.

use super::file::{CONTRACT_FILE, POLICY_FILE};
use super::Effective;
use crate::git::diff::ChangeKind;

/// One changed path as the judge sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// Repository-relative path with `/`.
    pub path: String,
    /// Added, modified or deleted (a rename is a deletion plus an addition).
    pub kind: ChangeKind,
    /// For a symlink that is added or changed: where it points.
    pub link_target: Option<Link>,
    /// A component of the raw path is one git refuses (SPEC §5 path safety).
    pub unsafe_path: bool,
    /// The content it had (a deletion) or has (an addition): a deletion and an addition of the
    /// same content are a rename, which a repair puts back as a whole.
    pub content: Option<crate::git::ObjectId>,
}

/// Where a symlink points, resolved lexically from its own directory (SPEC §5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Link {
    /// A repository-relative path (`""`: the root); `dir` says whether it is a directory in the
    /// tree being judged (`None`: unknown, or absent, so it may become one).
    Inside { path: String, dir: Option<bool> },
    /// An absolute target, or one that climbs above the root: the raw target text.
    Outside(String),
}

impl Change {
    /// A change of an ordinary file (no symlink), its path taken as safe.
    #[cfg(test)]
    pub fn file(path: impl Into<String>, kind: ChangeKind) -> Change {
        Change {
            path: path.into(),
            kind,
            link_target: None,
            unsafe_path: false,
            content: None,
        }
    }
}

/// Why a path breaks the contract.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// The path matches a `forbidden` rule.
    Forbidden,
    /// `allowed` is set and the path matches none of it.
    NotAllowed,
    /// The path is new and `allow_new_files = false`.
    NewFileDisallowed,
    /// The path was deleted and `allow_deletions = false`.
    DeletionDisallowed,
    /// More files changed than `max_changed_files`.
    TooManyFiles,
    /// The branch's contract file is looser than the frozen one, or was deleted.
    ContractTampered,
    /// A path component git refuses: `.`, `..`, `.git` in any spelling, an empty one.
    UnsafePath,
    /// A `.task-policy.toml` (any depth) or a `.task-contract.toml` other than the root one.
    Protected,
    /// A symlink that points outside the repository or at a path the task may not change.
    SymlinkEscape,
    /// Another live task claims the path (`git task claim`).
    ClaimedBy,
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Reason::Forbidden => "forbidden",
            Reason::NotAllowed => "not_allowed",
            Reason::NewFileDisallowed => "new_file_disallowed",
            Reason::DeletionDisallowed => "deletion_disallowed",
            Reason::TooManyFiles => "too_many_files",
            Reason::ContractTampered => "contract_tampered",
            Reason::UnsafePath => "unsafe_path",
            Reason::Protected => "protected",
            Reason::SymlinkEscape => "symlink_escape",
            Reason::ClaimedBy => "claimed_by",
        })
    }
}

/// One line of the report.
#[derive(
    Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Violation {
    /// The offending path (`*` for `too_many_files`).
    pub file: String,
    /// Why.
    pub reason: Reason,
    /// The rule as written.
    pub rule: String,
}

/// How to tell the agent to put things back.
#[derive(Clone, Debug)]
pub struct RepairContext {
    /// The revision that holds the content to restore (`HEAD` for a commit, the base for a whole task).
    pub source: String,
    /// Whether the changes being judged are staged (pre-commit, `check --staged`).
    pub staged: bool,
    /// The worktree the repair commands act on, named with `git -C` so they work from any
    /// directory (`None`: commands as run from the top of the worktree).
    pub root: Option<String>,
}

/// The judgement of a set of changes (SPEC §5 report).
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Verdict {
    /// `contract_violation` when there are violations, else `contract_ok` (`check --run` says
    /// `checks_failed` when the contract holds and a check failed).
    #[schemars(extend("enum" = ["contract_ok", "contract_violation", "checks_failed"]))]
    pub kind: &'static str,
    /// The task id.
    pub task: String,
    /// One entry per violation; empty when the changes keep the contract.
    pub violations: Vec<Violation>,
    /// Instructions for an agent: what it may touch and how to restore the offending files.
    pub repair: String,
    /// How many paths were judged (the contract file not counted).
    pub checked: usize,
    /// What to run next with git-task (`hint: …` lines): put the offending paths back
    /// (`revert`, which saves the work first), then commit. Empty when the contract holds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hints: Vec<String>,
    /// The same steps as `git task mcp` tool calls (`revert` with `paths`, then `commit`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub next: Vec<crate::error::Call>,
}

impl Verdict {
    /// Returns whether the changes keep the contract.
    pub fn is_clean(&self) -> bool {
        self.violations.is_empty()
    }
}

/// Judges `changes` against `contract`.
pub fn judge(contract: &Effective, changes: &[Change], repair: &RepairContext) -> Verdict {
    let mut violations = Vec::new();
    let judged: Vec<&Change> = changes.iter().filter(|c| c.path != CONTRACT_FILE).collect();
    for change in &judged {
        if let Some(v) = judge_path(contract, change) {
            violations.push(v);
        }
    }
    if let Some(max) = contract.max_changed_files() {
        if judged.len() as u64 > max {
            violations.push(Violation {
                file: "*".into(),
                reason: Reason::TooManyFiles,
                rule: format!("max_changed_files = {max} ({} changed)", judged.len()),
            });
        }
    }
    if let Some(why) = &contract.tampered {
        violations.push(Violation {
            file: CONTRACT_FILE.into(),
            reason: Reason::ContractTampered,
            rule: why.clone(),
        });
    }
    let repair = if violations.is_empty() {
        String::new()
    } else {
        repair_text(contract, &violations, changes, repair)
    };
    let (hints, next) = next_steps(&contract.task, &violations, changes);
    Verdict {
        kind: if violations.is_empty() {
            "contract_ok"
        } else {
            "contract_violation"
        },
        task: contract.task.clone(),
        violations,
        repair,
        checked: judged.len(),
        hints,
        next,
    }
}

/// The deleted path and the added one a rename made of it (the same content), in `changes`.
fn renames(changes: &[Change]) -> Vec<(&str, &str)> {
    let mut taken = std::collections::HashSet::new();
    let mut out = Vec::new();
    for gone in changes.iter().filter(|c| c.kind == ChangeKind::Deleted) {
        let Some(content) = gone.content else {
            continue;
        };
        if let Some(new) = changes.iter().find(|c| {
            c.kind == ChangeKind::Added && c.content == Some(content) && !taken.contains(&c.path)
        }) {
            taken.insert(new.path.clone());
            out.push((gone.path.as_str(), new.path.as_str()));
        }
    }
    out
}

/// The paths a repair puts back: each offending path, and the other name of a rename one of
/// them is part of.
fn offending_paths(violations: &[Violation], changes: &[Change]) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    let renames = renames(changes);
    for v in violations {
        if matches!(
            v.reason,
            Reason::TooManyFiles | Reason::ContractTampered | Reason::UnsafePath
        ) {
            continue;
        }
        let mut push = |p: &str| {
            if !paths.iter().any(|q| q == p) {
                paths.push(p.to_owned());
            }
        };
        push(&v.file);
        for (old, new) in &renames {
            if *old == v.file {
                push(new);
            } else if *new == v.file {
                push(old);
            }
        }
    }
    paths
}

/// The git-task steps out of a violation: `revert` the offending paths (saving the work
/// first), then `commit`; in words and as MCP tool calls.
fn next_steps(
    task: &str,
    violations: &[Violation],
    changes: &[Change],
) -> (Vec<String>, Vec<crate::error::Call>) {
    let paths = offending_paths(violations, changes);
    if paths.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let options: Vec<String> = paths
        .iter()
        .map(|p| format!("--path {}", shell_quote(p)))
        .collect();
    let hints = vec![
        format!(
            "or put them back with git-task, which saves the work as an attempt first: git task revert {task} {}",
            options.join(" ")
        ),
        format!("then commit that: git task commit {task}"),
    ];
    let next = vec![
        crate::error::Call::on("revert", task).arg("paths", paths),
        crate::error::Call::on("commit", task),
    ];
    (hints, next)
}

fn judge_path(contract: &Effective, change: &Change) -> Option<Violation> {
    let path = change.path.as_str();
    let violation = |reason, rule: String| {
        Some(Violation {
            file: path.to_owned(),
            reason,
            rule,
        })
    };
    // SPEC §5: never judged allowed, whatever the rules say.
    if change.unsafe_path || !crate::git::pathsafe::is_safe_path(path.as_bytes()) {
        return violation(
            Reason::UnsafePath,
            "a path component git refuses (., .., .git, empty)".into(),
        );
    }
    if let Some(rule) = protected(contract, path) {
        return violation(Reason::Protected, rule);
    }
    for level in &contract.levels {
        if let Some(rule) = level.forbidden.first_match(path) {
            return match claimer(level) {
                Some(task) => violation(
                    Reason::ClaimedBy,
                    format!("claimed by task '{task}' ({rule})"),
                ),
                None => violation(Reason::Forbidden, rule.to_owned()),
            };
        }
    }
    if let Some(link) = &change.link_target {
        if let Some(rule) = link_escape(contract, link) {
            return violation(Reason::SymlinkEscape, rule);
        }
    }
    for level in &contract.levels {
        if !level.allowed.is_empty() && !level.allowed.is_match(path) {
            return violation(
                Reason::NotAllowed,
                format!("allowed = [{}]", quoted_list(level.allowed.rules())),
            );
        }
    }
    for level in &contract.levels {
        match change.kind {
            ChangeKind::Added if level.file.allow_new_files == Some(false) => {
                return violation(Reason::NewFileDisallowed, "allow_new_files = false".into());
            }
            ChangeKind::Deleted if level.file.allow_deletions == Some(false) => {
                return violation(Reason::DeletionDisallowed, "allow_deletions = false".into());
            }
            _ => {}
        }
    }
    None
}

/// Returns the task that claims a level's paths, when the level is another task's claim.
fn claimer(level: &super::Rules) -> Option<&str> {
    match level.level {
        super::Level::Claim => Some(level.file.task.as_deref().unwrap_or("?")),
        _ => None,
    }
}

/// Returns the rule when `path` is a protected file (SPEC §5): a `.task-policy.toml` at any depth,
/// a `.task-contract.toml` anywhere but the root, and, unless the task's frozen contract names
/// that exact path in `allowed` (a wildcard does not count), a `.gitattributes` at any depth or
/// the root `.worktreeinclude`: they change how other paths are checked out or copied. Names
/// compare without case, as a case-insensitive file system would see them.
fn protected(contract: &Effective, path: &str) -> Option<String> {
    if let Some(rule) = always_protected(path) {
        return Some(rule);
    }
    let name = path.rsplit('/').next().unwrap_or(path);
    let steers =
        name.eq_ignore_ascii_case(GITATTRIBUTES) || path.eq_ignore_ascii_case(WORKTREEINCLUDE);
    if steers && !named_exactly(contract, path) {
        return Some(format!(
            "{name} changes how other paths are checked out or copied: only a contract that names '{path}' exactly in allowed may change it"
        ));
    }
    None
}

/// The name of git's attributes files.
const GITATTRIBUTES: &str = ".gitattributes";

/// The file naming the ignored files copied into new worktrees and the gate's checkout
/// (`crate::copy::WORKTREE_INCLUDE`).
const WORKTREEINCLUDE: &str = ".worktreeinclude";

/// Whether the task's frozen contract lists `path` itself in `allowed` (not a glob that
/// happens to match it).
fn named_exactly(contract: &Effective, path: &str) -> bool {
    contract
        .levels
        .iter()
        .filter(|l| l.level == super::Level::Frozen)
        .flat_map(|l| l.file.allowed.iter())
        .any(|rule| rule.strip_prefix('/').unwrap_or(rule) == path)
}

/// [`protected`] for the files no task ever changes, whatever its contract says.
fn always_protected(path: &str) -> Option<String> {
    let name = path.rsplit('/').next().unwrap_or(path);
    if name.eq_ignore_ascii_case(POLICY_FILE) {
        return Some(format!(
            "{POLICY_FILE} is changed on the base branch by a person"
        ));
    }
    if name.eq_ignore_ascii_case(CONTRACT_FILE) && path != CONTRACT_FILE {
        return Some(format!("only the task's own root {CONTRACT_FILE}"));
    }
    None
}

/// Returns why a symlink's target is out of the task's reach (SPEC §5 `symlink_escape`).
///
/// A target that is (or may become) a directory escapes when anything below it would be
/// refused: a forbidden rule that could match below it, or an `allowed` list that does not
/// cover everything below it.
fn link_escape(contract: &Effective, link: &Link) -> Option<String> {
    let (target, dir) = match link {
        Link::Outside(raw) => {
            return Some(if raw.starts_with('/') {
                format!("absolute target '{raw}'")
            } else {
                format!("target '{raw}' leaves the repository")
            })
        }
        Link::Inside { path, dir } => (path.as_str(), *dir),
    };
    let shown = if target.is_empty() {
        "the repository root".to_owned()
    } else {
        format!("'{target}'")
    };
    if !target.is_empty() && !crate::git::pathsafe::is_safe_path(target.as_bytes()) {
        return Some(format!("target {shown} is a path git refuses"));
    }
    let maybe_dir = dir != Some(false);
    let maybe_file = dir != Some(true) && !target.is_empty();
    for level in &contract.levels {
        let hit = maybe_file
            .then(|| level.forbidden.first_match(target))
            .flatten()
            .or_else(|| {
                maybe_dir
                    .then(|| level.forbidden.first_below(target))
                    .flatten()
            });
        if let Some(rule) = hit {
            return Some(match claimer(level) {
                Some(task) => format!("claimed by task '{task}' ({rule}) (symlink to {shown})"),
                None => format!("{rule} (symlink to {shown})"),
            });
        }
        if let Some(rule) = protected(contract, target) {
            return Some(format!("{rule} (symlink to {shown})"));
        }
    }
    for level in &contract.levels {
        if level.allowed.is_empty() {
            continue;
        }
        let ok = (!maybe_file || level.allowed.is_match(target))
            && (!maybe_dir || level.allowed.covers_below(target));
        if !ok {
            return Some(format!(
                "allowed = [{}] (symlink to {shown})",
                quoted_list(level.allowed.rules())
            ));
        }
    }
    None
}

fn quoted_list(items: &[String]) -> String {
    items
        .iter()
        .map(|s| format!("\"{s}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Quotes a path for a POSIX shell. A string with control characters (a name can carry a
/// terminal escape sequence) is written in `$'...'` form with `\xNN` escapes, so the command
/// still works when pasted and prints nothing a terminal would act on.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%".contains(c))
    {
        s.to_owned()
    } else if s.chars().any(char::is_control) {
        let mut out = String::from("$'");
        for c in s.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\'' => out.push_str("\\'"),
                c if c.is_control() => {
                    let mut buf = [0u8; 4];
                    for b in c.encode_utf8(&mut buf).bytes() {
                        out.push_str(&format!("\\x{b:02x}"));
                    }
                }
                c => out.push(c),
            }
        }
        out.push('\'');
        out
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn repair_text(
    contract: &Effective,
    violations: &[Violation],
    changes: &[Change],
    ctx: &RepairContext,
) -> String {
    let mut lines = Vec::new();
    let allowed = contract.allowed_summary();
    let forbidden = contract.forbidden_summary();
    let mut scope = if allowed.is_empty() {
        "This task may change any path".to_owned()
    } else {
        format!("This task may only change: {}", allowed.join(", "))
    };
    if !forbidden.is_empty() {
        scope.push_str(&format!("; it must never change: {}", forbidden.join(", ")));
    }
    for (task, globs) in contract.claims() {
        scope.push_str(&format!("; task '{task}' claims: {}", globs.join(", ")));
    }
    if !contract.allows_new_files() {
        scope.push_str("; it may not add files");
    }
    if !contract.allows_deletions() {
        scope.push_str("; it may not delete files");
    }
    scope.push('.');
    lines.push(scope);
    let kind_of = |file: &str| changes.iter().find(|c| c.path == file).map(|c| c.kind);
    // SPEC §6: every command printed works from wherever the user stands.
    let git = match &ctx.root {
        Some(root) => format!("git -C {}", shell_quote(root)),
        None => "git".to_owned(),
    };
    let mut restore = Vec::new();
    let mut added = Vec::new();
    // A rename is put back as a whole: the old name restored, the new one gone.
    let mut renamed = Vec::new();
    let pairs = renames(changes);
    for v in violations {
        match v.reason {
            Reason::TooManyFiles | Reason::ContractTampered | Reason::UnsafePath => {}
            _ => {
                if let Some(pair) = pairs
                    .iter()
                    .find(|(old, new)| *old == v.file || *new == v.file)
                {
                    if !renamed.contains(pair) {
                        renamed.push(*pair);
                    }
                    continue;
                }
                match kind_of(&v.file) {
                    Some(ChangeKind::Added) => added.push(shell_quote(&v.file)),
                    _ => restore.push(shell_quote(&v.file)),
                }
            }
        }
    }
    if !restore.is_empty() || !added.is_empty() || !renamed.is_empty() {
        lines.push("Put the offending files back with:".into());
    }
    for (old, new) in &renamed {
        lines.push(format!(
            "  {git} add -- {new} && {git} restore --source={} --staged --worktree -- {old} {new}   # undoes the rename of {old} to {new}",
            ctx.source,
            new = shell_quote(new),
            old = shell_quote(old),
        ));
    }
    if !restore.is_empty() {
        lines.push(format!(
            "  {git} restore --source={} --staged --worktree -- {}",
            ctx.source,
            restore.join(" ")
        ));
    }
    if !added.is_empty() {
        lines.push(format!(
            "  {git} rm -r -q --cached --ignore-unmatch -- {}   # then move or delete these new files",
            added.join(" ")
        ));
    }
    if violations
        .iter()
        .any(|v| v.reason == Reason::ContractTampered)
    {
        let file = match &ctx.root {
            Some(root) => shell_quote(&format!("{}/{CONTRACT_FILE}", root.trim_end_matches('/'))),
            None => CONTRACT_FILE.to_owned(),
        };
        lines.push(format!(
            "Restore the contract with: {git} show refs/tasks/{}/record:contract.toml > {file} && {git} add {CONTRACT_FILE}",
            contract.task
        ));
    }
    if violations.iter().any(|v| v.reason == Reason::UnsafePath) {
        lines.push(format!(
            "Paths git refuses (., .., .git) come from hand-made trees: drop the commits that add them, or start over with 'git task reset {}' (it saves the work first).",
            contract.task
        ));
    }
    if let Some(v) = violations.iter().find(|v| v.reason == Reason::TooManyFiles) {
        lines.push(format!(
            "Change fewer files ({}): restore the ones the task does not need.",
            v.rule
        ));
    }
    lines.push(if ctx.staged {
        "Then commit again.".into()
    } else {
        "Then commit, and check again with 'git task check'.".into()
    });
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::{BranchFile, ContractFile};

    fn eff(text: &str) -> Effective {
        let frozen = ContractFile::parse(text, "c").unwrap();
        Effective::new("t", None, &frozen, &BranchFile::NotApplicable, false).unwrap()
    }

    fn ch(path: &str, kind: ChangeKind) -> Change {
        Change::file(path, kind)
    }

    fn reasons(e: &Effective, changes: &[Change]) -> Vec<(String, Reason)> {
        let ctx = RepairContext {
            source: "HEAD".into(),
            staged: true,
            root: None,
        };
        judge(e, changes, &ctx)
            .violations
            .into_iter()
            .map(|v| (v.file, v.reason))
            .collect()
    }

    #[test]
    fn each_reason() {
        let e = eff("version = 1\nallowed = [\"src/**\"]\nforbidden = [\"src/db/**\"]\nallow_new_files = false\nallow_deletions = false\nmax_changed_files = 3\n");
        assert_eq!(reasons(&e, &[ch("src/a.rs", ChangeKind::Modified)]), vec![]);
        assert_eq!(
            reasons(&e, &[ch("src/db/x.rs", ChangeKind::Modified)]),
            vec![("src/db/x.rs".into(), Reason::Forbidden)]
        );
        assert_eq!(
            reasons(&e, &[ch("docs/x.md", ChangeKind::Modified)]),
            vec![("docs/x.md".into(), Reason::NotAllowed)]
        );
        assert_eq!(
            reasons(&e, &[ch("src/new.rs", ChangeKind::Added)]),
            vec![("src/new.rs".into(), Reason::NewFileDisallowed)]
        );
        assert_eq!(
            reasons(&e, &[ch("src/old.rs", ChangeKind::Deleted)]),
            vec![("src/old.rs".into(), Reason::DeletionDisallowed)]
        );
        let many: Vec<Change> = (0..4)
            .map(|i| ch(&format!("src/{i}.rs"), ChangeKind::Modified))
            .collect();
        assert_eq!(reasons(&e, &many), vec![("*".into(), Reason::TooManyFiles)]);
    }

    #[test]
    fn rename_is_deletion_plus_addition() {
        let e = eff("version = 1\nforbidden = [\"secret/**\"]\n");
        let got = reasons(
            &e,
            &[
                ch("src/a.rs", ChangeKind::Deleted),
                ch("secret/a.rs", ChangeKind::Added),
            ],
        );
        assert_eq!(got, vec![("secret/a.rs".into(), Reason::Forbidden)]);
    }

    #[test]
    fn symlink_into_forbidden_path_is_forbidden() {
        let e = eff("version = 1\nforbidden = [\"src/db/**\"]\n");
        let link = Change {
            link_target: Some(Link::Inside {
                path: "src/db/secret.rs".into(),
                dir: Some(false),
            }),
            ..ch("src/link", ChangeKind::Added)
        };
        let ctx = RepairContext {
            source: "HEAD".into(),
            staged: true,
            root: None,
        };
        let v = judge(&e, &[link], &ctx);
        assert_eq!(v.violations.len(), 1);
        assert_eq!(v.violations[0].reason, Reason::SymlinkEscape);
        assert!(v.violations[0]
            .rule
            .contains("symlink to 'src/db/secret.rs'"));
    }

    fn link(path: &str, target: Link) -> Change {
        Change {
            link_target: Some(target),
            ..ch(path, ChangeKind::Added)
        }
    }

    fn inside(path: &str, dir: Option<bool>) -> Link {
        Link::Inside {
            path: path.into(),
            dir,
        }
    }

    #[test]
    fn symlinks_that_escape() {
        let e = eff("version = 1\nallowed = [\"src/**\"]\nforbidden = [\"src/secret/**\"]\n");
        let escape = |c: Change| reasons(&e, &[c]) == vec![(c_path(), Reason::SymlinkEscape)];
        fn c_path() -> String {
            "src/l".into()
        }
        assert!(escape(link("src/l", Link::Outside("/etc/passwd".into()))));
        assert!(escape(link("src/l", Link::Outside("../../x".into()))));
        assert!(escape(link("src/l", inside("docs/a.md", Some(false)))));
        assert!(escape(link("src/l", inside("src/secret", Some(true)))));
        assert!(escape(link("src/l", inside("src/secret", None))));
        assert!(escape(link("src/l", inside("", Some(true)))));
        assert!(escape(link("src/l", inside(".git/hooks", None))));
        // A directory above a forbidden one reaches it too.
        assert!(escape(link("src/l", inside("src", Some(true)))));
        assert_eq!(
            reasons(&e, &[link("src/l", inside("src/api/x.rs", Some(false)))]),
            vec![]
        );
        assert_eq!(
            reasons(&e, &[link("src/l", inside("src/api", Some(true)))]),
            vec![]
        );
    }

    #[test]
    fn unsafe_and_protected_paths() {
        let e = eff("version = 1\n");
        for bad in ["../evil", ".git/hooks/pre-commit", "a/.GIT/x", "a//b"] {
            assert_eq!(
                reasons(&e, &[ch(bad, ChangeKind::Added)]),
                vec![(bad.into(), Reason::UnsafePath)]
            );
        }
        let flagged = Change {
            unsafe_path: true,
            ..ch("a/b", ChangeKind::Added)
        };
        assert_eq!(
            reasons(&e, &[flagged]),
            vec![("a/b".into(), Reason::UnsafePath)]
        );
        for p in [
            ".task-policy.toml",
            "a/.task-policy.toml",
            "sub/.task-contract.toml",
            "X/.Task-Policy.TOML",
        ] {
            for kind in [ChangeKind::Added, ChangeKind::Modified, ChangeKind::Deleted] {
                assert_eq!(
                    reasons(&e, &[ch(p, kind)]),
                    vec![(p.into(), Reason::Protected)]
                );
            }
        }
    }

    #[test]
    fn files_that_steer_git_are_protected_unless_named_exactly() {
        let wild = eff("version = 1\nallowed = [\"src/**\"]\n");
        let any = eff("version = 1\n");
        for (e, p) in [
            (&wild, "src/.gitattributes"),
            (&wild, "src/deep/.GitAttributes"),
            (&any, ".gitattributes"),
            (&any, ".worktreeinclude"),
        ] {
            assert_eq!(
                reasons(e, &[ch(p, ChangeKind::Added)]),
                vec![(p.into(), Reason::Protected)],
                "{p}"
            );
        }
        // A nested .worktreeinclude steers nothing.
        assert_eq!(
            reasons(&any, &[ch("a/.worktreeinclude", ChangeKind::Added)]),
            vec![]
        );
        let named = eff(
            "version = 1\nallowed = [\"src/**\", \"src/.gitattributes\", \"/.worktreeinclude\"]\n",
        );
        for p in ["src/.gitattributes", ".worktreeinclude"] {
            assert_eq!(
                reasons(&named, &[ch(p, ChangeKind::Modified)]),
                vec![],
                "{p}"
            );
        }
        assert_eq!(
            reasons(&named, &[ch("src/x/.gitattributes", ChangeKind::Added)]),
            vec![("src/x/.gitattributes".into(), Reason::Protected)]
        );
    }

    #[test]
    fn repair_commands_name_the_worktree_and_escape_control_characters() {
        let e = eff("version = 1\nforbidden = [\"x*\"]\n");
        let ctx = RepairContext {
            source: "HEAD".into(),
            staged: true,
            root: Some("/tmp/my repo".into()),
        };
        let v = judge(&e, &[ch("x\x1b[31m", ChangeKind::Modified)], &ctx);
        assert!(
            v.repair.contains(
                "git -C '/tmp/my repo' restore --source=HEAD --staged --worktree -- $'x\\x1b[31m'"
            ),
            "{}",
            v.repair
        );
        assert!(!v.repair.contains('\x1b'));
    }

    #[test]
    fn contract_file_never_counts_but_tampering_does() {
        let frozen = ContractFile::parse(
            "version = 1\nforbidden = [\"a/**\"]\nmax_changed_files = 1\n",
            "c",
        )
        .unwrap();
        let ok = Effective::new(
            "t",
            None,
            &frozen,
            &BranchFile::Present(frozen.to_toml()),
            false,
        )
        .unwrap();
        let changes = [
            ch(CONTRACT_FILE, ChangeKind::Modified),
            ch("b.rs", ChangeKind::Modified),
        ];
        assert_eq!(reasons(&ok, &changes), vec![]);
        let loose = Effective::new(
            "t",
            None,
            &frozen,
            &BranchFile::Present("version = 1\n".into()),
            false,
        )
        .unwrap();
        assert_eq!(
            reasons(&loose, &changes),
            vec![(CONTRACT_FILE.into(), Reason::ContractTampered)]
        );
    }

    #[test]
    fn report_names_rule_and_repair_command() {
        let e = eff("version = 1\nallowed = [\"src/api/**\"]\nforbidden = [\"src/db/**\"]\n");
        let ctx = RepairContext {
            source: "HEAD".into(),
            staged: true,
            root: None,
        };
        let v = judge(
            &e,
            &[
                ch("src/db/x y.rs", ChangeKind::Modified),
                ch("new.txt", ChangeKind::Added),
            ],
            &ctx,
        );
        assert_eq!(v.kind, "contract_violation");
        assert_eq!(v.violations[0].file, "src/db/x y.rs");
        assert_eq!(v.violations[0].reason, Reason::Forbidden);
        assert_eq!(v.violations[0].rule, "src/db/**");
        assert!(
            v.repair.contains("may only change: src/api/**"),
            "{}",
            v.repair
        );
        assert!(
            v.repair
                .contains("git restore --source=HEAD --staged --worktree -- 'src/db/x y.rs'"),
            "{}",
            v.repair
        );
        assert!(
            v.repair
                .contains("git rm -r -q --cached --ignore-unmatch -- new.txt"),
            "{}",
            v.repair
        );
        let json = serde_json::to_value(&v).unwrap();
        assert_eq!(json["violations"][0]["file"], "src/db/x y.rs");
        assert_eq!(json["violations"][0]["reason"], "forbidden");
        assert_eq!(json["violations"][0]["rule"], "src/db/**");
    }

    #[test]
    fn policy_wins() {
        let frozen = ContractFile::parse("version = 1\n", "c").unwrap();
        let e = Effective::new(
            "t",
            Some("version = 1\nforbidden = [\"**/secrets/**\"]\n"),
            &frozen,
            &BranchFile::NotApplicable,
            false,
        )
        .unwrap();
        assert_eq!(
            reasons(&e, &[ch("a/secrets/k", ChangeKind::Added)]),
            vec![("a/secrets/k".into(), Reason::Forbidden)]
        );
    }
}
