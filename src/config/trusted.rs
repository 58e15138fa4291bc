//! The trusted snapshot, `<common dir>/git-task/trusted.toml` (SPEC §2 principle 8, §4):
//! what the user accepted, kept where git commands cannot write.
//!
//! It holds two things, as they were when it was written (`git task hooks install` or the
//! first `start` of a repository that had none, and `git task trust --yes`):
//!
//! - **`settings`**: the raw values of every pinned `task.*` key ([`super::PINNED`]) from the
//!   config files (multi-valued keys as lists; an unset key is absent). Once the snapshot
//!   exists, [`super::Settings`] reads these, never the config files: a value an agent changed
//!   with `git config` is ignored with a warning.
//! - **`git`** and **`worktree_git`**: the git settings that make git (or gix) run a command
//!   or change where git-task writes ([`exec_key`]), from the shared config files and from each
//!   worktree's `config.worktree`. When they differ, the commands that run git or write into
//!   worktrees refuse (`config_changed`, [`super::ensure_unchanged`]).
//!
//! Values given for one invocation (`git -c`, `GIT_CONFIG_PARAMETERS`, `GIT_CONFIG_COUNT`) are
//! the caller's own choice and are neither pinned nor compared.

use crate::error::{Context, Error, Result};
use crate::git::config::{Entry, Origin};
use crate::git::Repo;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The snapshot's file name under `<common dir>/git-task/`.
pub const FILE: &str = "trusted.toml";
const VERSION: u32 = 1;

/// Values by key: every value of a key, lowest precedence first.
pub type Values = BTreeMap<String, Vec<String>>;

/// The snapshot as stored.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The format (1).
    pub version: u32,
    /// The pinned `task.*` settings.
    #[serde(default)]
    pub settings: Values,
    /// Exec-capable git settings of the shared config files.
    #[serde(default)]
    pub git: Values,
    /// Exec-capable git settings of each worktree's `config.worktree`, by its path relative to
    /// the common dir (`config.worktree`, `worktrees/<name>/config.worktree`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub worktree_git: BTreeMap<String, Values>,
}

/// Where the snapshot lives.
pub fn path(repo: &Repo) -> PathBuf {
    crate::git::state_dir(repo.common_dir()).join(FILE)
}

/// Reads the snapshot; `None` when there is none yet.
pub fn read(repo: &Repo) -> Result<Option<Snapshot>> {
    let file = path(repo);
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(Error::repo(
                format!("could not read the trusted settings '{}'", file.display()),
                e,
            ))
        }
    };
    let bad = |why: String| {
        Error::repo_msg(format!(
            "the trusted settings '{}' cannot be read: {why}",
            file.display()
        ))
        .hint(format!(
            "delete it, then review the settings and trust them again: rm '{}' && git task trust",
            file.display()
        ))
    };
    let snapshot: Snapshot = toml::from_str(&text).map_err(|e| bad(e.message().to_owned()))?;
    if snapshot.version != VERSION {
        return Err(bad(format!(
            "version {} (this git-task reads version {VERSION})",
            snapshot.version
        )));
    }
    Ok(Some(snapshot))
}

/// Writes `snapshot` (atomically: a reader sees the old file or the new one).
pub fn write(repo: &Repo, snapshot: &Snapshot) -> Result<PathBuf> {
    let file = path(repo);
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).context(|| format!("could not create '{}'", dir.display()))?;
    }
    let mut text = String::from(
        "# git-task's trusted settings: the pinned task.* settings and the git settings that\n\
         # run commands, as the user accepted them. Written by 'git task trust --yes',\n\
         # 'git task hooks install' and the first 'git task start'; see 'man git-task' (TRUST).\n",
    );
    let body = toml::to_string(snapshot)
        .map_err(|e| Error::repo_msg(format!("could not write the trusted settings: {e}")))?;
    text.push_str(&body);
    crate::git::fs::write_atomically(&file, text.as_bytes())
        .context(|| format!("could not write '{}'", file.display()))?;
    Ok(file)
}

/// The snapshot of the configuration as it is now (what `trust --yes` writes).
pub fn capture(repo: &Repo) -> Snapshot {
    let (git, worktree_git) = capture_git(repo);
    Snapshot {
        version: VERSION,
        settings: file_settings(repo),
        git,
        worktree_git,
    }
}

/// Writes the snapshot of the configuration as it is now when there is none yet; returns
/// whether it wrote one.
pub fn pin_if_absent(repo: &Repo) -> Result<bool> {
    if path(repo).exists() {
        return Ok(false);
    }
    write(repo, &capture(repo))?;
    Ok(true)
}

/// Every value of the pinned `task.*` keys in the config files (not `-c`), by key.
pub fn file_settings(repo: &Repo) -> Values {
    let entries = crate::git::config::entries(repo, &["task"]);
    let mut out = Values::new();
    for key in super::PINNED {
        let values: Vec<String> = values_of(&entries, key)
            .filter(|e| e.origin != Origin::Invocation)
            .map(text)
            .collect();
        if !values.is_empty() {
            out.insert((*key).to_owned(), values);
        }
    }
    out
}

/// The entries of `task.<name>` (no subsection) among `entries`.
pub(super) fn values_of<'a>(
    entries: &'a [Entry],
    key: &'a str,
) -> impl Iterator<Item = &'a Entry> + Clone + 'a {
    let name = key.split_once('.').map_or(key, |(_, n)| n);
    entries
        .iter()
        .filter(move |e| e.subsection.is_none() && e.name.eq_ignore_ascii_case(name))
}

/// A value as text; a key written without `=` is git's implicit `true`.
pub(super) fn text(e: &Entry) -> String {
    e.value.clone().unwrap_or_else(|| "true".to_owned())
}

/// The sections [`exec_key`] looks at.
const EXEC_SECTIONS: &[&str] = &[
    "core",
    "filter",
    "diff",
    "merge",
    "include",
    "includeIf",
    "credential",
    "gpg",
    "remote",
    "hook",
];

/// The canonical name of an exec-capable git setting, `None` for any other key.
///
/// What git-task's own work can make git (or gix) run, or redirect: `start`'s checkout and
/// `merge`'s update of a worktree run `filter.*` drivers and `core.fsmonitor`, `start` runs the
/// `post-checkout` hook from `core.hooksPath`, `sync`'s `git merge` runs `merge.*.driver` and
/// signs with `gpg.program`, `push`/`fetch`/`adopt` run `core.sshCommand`, `core.gitProxy`,
/// `credential.helper`, `core.askPass` and `remote.*.uploadpack`/`receivepack`, and
/// `core.alternateRefsCommand` on the way; `diff.*.command`/`textconv` and `diff.external` run
/// on a diff; `include.path`/`includeIf.*` bring in any of these from another file; and
/// `core.bare`/`core.worktree` change which directory git writes into. Left out: `core.pager`
/// and `pager.*` (git-task's git output is captured, never paged), `core.editor` and
/// `sequence.editor` (git-task's git runs with `GIT_EDITOR=true`).
pub fn exec_key(section: &str, subsection: Option<&str>, name: &str) -> Option<String> {
    const CORE: &[&str] = &[
        "fsmonitor",
        "hooksPath",
        "sshCommand",
        "gitProxy",
        "askPass",
        "alternateRefsCommand",
        "bare",
        "worktree",
    ];
    let section = section.to_ascii_lowercase();
    let name_lower = name.to_ascii_lowercase();
    match (section.as_str(), subsection, name_lower.as_str()) {
        ("core", None, _) => CORE
            .iter()
            .find(|k| k.eq_ignore_ascii_case(name))
            .map(|k| format!("core.{k}")),
        ("filter", Some(sub), _) => Some(format!("filter.{sub}.{name_lower}")),
        ("diff", Some(sub), "command" | "textconv") => Some(format!("diff.{sub}.{name_lower}")),
        ("diff", None, "external") => Some("diff.external".to_owned()),
        ("merge", Some(sub), "driver") => Some(format!("merge.{sub}.driver")),
        ("include", None, "path") => Some("include.path".to_owned()),
        ("includeif", Some(sub), _) => Some(format!("includeIf.{sub}.{name_lower}")),
        ("credential", None, "helper") => Some("credential.helper".to_owned()),
        ("credential", Some(sub), "helper") => Some(format!("credential.{sub}.helper")),
        ("gpg", None, "program") => Some("gpg.program".to_owned()),
        ("gpg", Some(sub), "program") => Some(format!("gpg.{sub}.program")),
        ("remote", Some(sub), "uploadpack" | "receivepack") => {
            Some(format!("remote.{sub}.{name_lower}"))
        }
        // Hooks defined in config (git >= 2.54) run on every commit: a new one is the agent's
        // command. git-task's own (`hook.git-task-*`, written by `hooks install`) are not, but
        // turning one off (`enabled = false`) is a change like any other.
        ("hook", Some(sub), "enabled") => Some(format!("hook.{sub}.enabled")),
        ("hook", Some(sub), "command" | "event")
            if !sub.to_ascii_lowercase().starts_with("git-task-") =>
        {
            Some(format!("hook.{sub}.{name_lower}"))
        }
        _ => None,
    }
}

/// Collects the exec-capable entries of `entries` by canonical key, leaving out the
/// `core.hooksPath` values in `own` (git-task's own hooks directories).
fn exec_values<'a>(entries: impl Iterator<Item = &'a Entry>, own: &[PathBuf]) -> Values {
    let mut out = Values::new();
    for e in entries {
        let Some(key) = exec_key(&e.section, e.subsection.as_deref(), &e.name) else {
            continue;
        };
        let value = text(e);
        if key == "core.hooksPath"
            && own
                .iter()
                .any(|o| crate::git::normalize(Path::new(&value)) == *o)
        {
            continue;
        }
        out.entry(key).or_default().push(value);
    }
    out
}

/// The exec-capable git settings now: of the shared config files, and of each worktree's
/// `config.worktree` that holds any (by its path relative to the common dir).
///
/// `install` points each worktree's `core.hooksPath` at git-task's own hooks directory of that
/// worktree (`crate::hooks::own_dir`: `<common>/git-task/hooks` for the main worktree,
/// `<common>/worktrees/<name>/hooks` for a linked one; a linked worktree may also hold a copy
/// of the main one's): those values are git-task's, not the user's, and are not compared.
pub fn capture_git(repo: &Repo) -> (Values, BTreeMap<String, Values>) {
    capture_git_in(repo, &Scope::Repository)
}

/// What a command may make git (or gix) run, and so which changed keys stop it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runs {
    /// git itself, hooks or checks: every exec-capable key ([`exec_key`]).
    Anything,
    /// Only what reading a worktree's files and diffing them runs: filter drivers, diff
    /// drivers, and the includes and `core.bare`/`core.worktree` that bring them in or move
    /// what is read. A hook manager's `core.hooksPath` does not stop `status`.
    Filters,
}

impl Runs {
    /// Whether a change to `key` (as [`exec_key`] names it) counts.
    pub fn counts(self, key: &str) -> bool {
        match self {
            Runs::Anything => true,
            Runs::Filters => {
                ["filter.", "diff.", "include.", "includeIf."]
                    .iter()
                    .any(|p| key.starts_with(p))
                    || key == "core.bare"
                    || key == "core.worktree"
            }
        }
    }
}

/// Which worktrees' `config.worktree` a comparison looks at (the shared config files always).
#[derive(Clone, Debug)]
pub enum Scope {
    /// Every worktree's: what `trust` shows, and what every command compares unless it acts in
    /// named worktrees only.
    Repository,
    /// The main worktree's and those of the worktrees whose private git directories these are
    /// (`<common dir>/worktrees/<name>`; others are ignored): a command that runs git only
    /// there, or opens only those worktrees, cannot be made to run what another worktree's
    /// config says. With a thousand task worktrees, it costs one `stat` each of these, not a
    /// thousand.
    Worktrees(Vec<PathBuf>),
}

/// [`capture_git`] of the worktrees `scope` names.
pub fn capture_git_in(repo: &Repo, scope: &Scope) -> (Values, BTreeMap<String, Values>) {
    let common = crate::git::normalize(repo.common_dir());
    let main_own = crate::git::state_dir(&common).join("hooks");
    let shared = crate::git::config::entries(repo, EXEC_SECTIONS);
    let git = exec_values(shared.iter().filter(|e| e.origin == Origin::Shared), &[]);
    // git (and gix) read a worktree's `config.worktree` only with `extensions.worktreeConfig`
    // on in the shared config (read now, so turning it on is seen with what it lets in).
    if repo.config_bool("extensions.worktreeConfig") != Some(true) {
        return (git, BTreeMap::new());
    }
    let mut files = vec![(
        "config.worktree".to_owned(),
        common.join("config.worktree"),
        vec![main_own.clone()],
    )];
    // The gate checkouts' admin directories (`crate::gate`): git-task's own git and gix bring
    // them to each landing, reading their `config.worktree` as a linked worktree's. Few, and
    // used by every merge with checks: in every scope.
    if let Ok(dir) = std::fs::read_dir(crate::git::state_dir(&common).join("gate")) {
        for e in dir.flatten() {
            let name = e.file_name();
            if name.to_str().is_some_and(|n| n.ends_with(".git")) && e.path().is_dir() {
                files.push((
                    format!("git-task/gate/{}/config.worktree", name.to_string_lossy()),
                    e.path().join("config.worktree"),
                    vec![main_own.clone()],
                ));
            }
        }
    }
    let worktrees = common.join("worktrees");
    let mut linked = |name: &std::ffi::OsStr| {
        let private = worktrees.join(name);
        files.push((
            format!("worktrees/{}/config.worktree", name.to_string_lossy()),
            private.join("config.worktree"),
            vec![private.join("hooks"), main_own.clone()],
        ));
    };
    match scope {
        Scope::Repository => {
            if let Ok(dir) = std::fs::read_dir(&worktrees) {
                for e in dir.flatten() {
                    linked(&e.file_name());
                }
            }
        }
        Scope::Worktrees(dirs) => {
            let mut names: Vec<&std::ffi::OsStr> = dirs
                .iter()
                .filter(|d| d.parent() == Some(worktrees.as_path()))
                .filter_map(|d| d.file_name())
                .collect();
            names.sort();
            names.dedup();
            for name in names {
                linked(name);
            }
        }
    }
    // A git directory outside the repository's own (a worktree's `.git` file pointed elsewhere):
    // git and gix read its `config.worktree` there, and its `config` when it names no common
    // directory. Nothing in it was trusted.
    if let Scope::Worktrees(dirs) = scope {
        for dir in dirs
            .iter()
            .filter(|d| **d != common && d.parent() != Some(worktrees.as_path()))
        {
            let mut configs = vec![dir.join("config.worktree"), dir.join("config")];
            // And the shared config of the common directory its `commondir` names, if not ours.
            if let Ok(named) = std::fs::read_to_string(dir.join("commondir")) {
                let other = crate::git::normalize(&dir.join(named.trim_end_matches(['\n', '\r'])));
                if other != common {
                    configs.push(other.join("config"));
                }
            }
            for file in configs {
                files.push((file.display().to_string(), file, vec![main_own.clone()]));
            }
        }
    }
    let memo = Memo::load(repo);
    let root = crate::git::fs::StatDir::open(&common);
    let mut quiet = Vec::new();
    let mut worktree_git = BTreeMap::new();
    for (rel, file, own) in files {
        // Missing (most worktrees without the hooks installed) or unreadable: nothing set there.
        // The file's own path below the common dir (a worktree's directory name need not be
        // UTF-8, which `rel` shows lossily).
        let below = file.strip_prefix(&common).unwrap_or(&file);
        let Ok(print) = crate::git::fs::Fingerprint::of_in(&root, below) else {
            continue;
        };
        if memo.quiet(&rel, print.hash) {
            quiet.push((rel, print.hash));
            continue;
        }
        let entries = crate::git::config::entries_in_file(&file, EXEC_SECTIONS);
        let values = exec_values(entries.iter(), &own);
        if !values.is_empty() {
            worktree_git.insert(rel, values);
        } else if print.old_enough() && Memo::can_name(&rel, below) {
            quiet.push((rel, print.hash));
        }
    }
    memo.store(quiet, matches!(scope, Scope::Repository));
    (git, worktree_git)
}

/// The worktree config files last seen holding no exec-capable setting but git-task's own, by
/// their stat data ([`crate::git::fs::Fingerprint`]): `<common dir>/git-task/trusted-memo`, a
/// line `<fingerprint> <file>` each. With a thousand worktrees, each command that compares the
/// config with the snapshot then `stat`s each file instead of reading and parsing it; a file
/// changed since has other stat data and is read again. The memo sits beside the snapshot it
/// serves, where git commands do not write: whoever can forge it can forge the snapshot.
struct Memo {
    path: PathBuf,
    text: String,
    quiet: std::collections::HashMap<String, u64>,
}

impl Memo {
    const FILE: &'static str = "trusted-memo";

    fn load(repo: &Repo) -> Memo {
        let path = crate::git::state_dir(repo.common_dir()).join(Self::FILE);
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let quiet = text
            .lines()
            .filter_map(|line| {
                let (hash, rel) = line.split_once(' ')?;
                Some((rel.to_owned(), hash.parse().ok()?))
            })
            .collect();
        Memo { path, text, quiet }
    }

    /// Whether the memo can name the file `below` (shown as `rel`) on a line of its own: not a
    /// directory name that is not UTF-8 or holds a line break (which could forge another line).
    fn can_name(rel: &str, below: &Path) -> bool {
        below.to_str() == Some(rel) && !rel.contains(['\n', '\r'])
    }

    /// Whether `rel`, with the stat data hashed as `hash`, held nothing to compare.
    fn quiet(&self, rel: &str, hash: u64) -> bool {
        self.quiet.get(rel) == Some(&hash)
    }

    /// Rewrites the memo with `quiet` when that is not what it holds: `quiet` is every file
    /// looked at that held nothing to compare, of every worktree when `whole`; else of some, and
    /// the lines of the others stay (as does the line of a file looked at that now holds
    /// something: its stat data changed, so that line never matches again). Best effort: a memo
    /// that cannot be written only costs reading the files next time.
    fn store(self, mut quiet: Vec<(String, u64)>, whole: bool) {
        if !whole {
            let mut all = self.quiet.clone();
            all.extend(quiet);
            quiet = all.into_iter().collect();
        }
        quiet.sort();
        let text: String = quiet
            .iter()
            .map(|(rel, hash)| format!("{hash} {rel}\n"))
            .collect();
        if text != self.text {
            let _ = crate::git::fs::write_atomically(&self.path, text.as_bytes());
        }
    }
}

/// What a [`Difference`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A pinned `task.*` setting: ignored until trusted.
    Setting,
    /// An exec-capable git setting: commands that run git refuse until it is trusted.
    Git,
}

/// One key whose value in the config differs from the trusted one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Difference {
    /// The key (`task.setup`, `core.fsmonitor`, `filter.lfs.smudge`).
    pub key: String,
    /// `setting` or `git`.
    pub kind: Kind,
    /// The worktree config file it is set in (relative to the common dir), when not shared.
    pub file: Option<String>,
    /// Its trusted values (`null`: unset when trusted).
    pub trusted: Option<Vec<String>>,
    /// Its values in the config now (`null`: unset now).
    pub current: Option<Vec<String>>,
}

impl Difference {
    /// `key` with the file it is set in, if not shared.
    pub fn name(&self) -> String {
        match &self.file {
            Some(f) => format!("{} (in {f})", self.key),
            None => self.key.clone(),
        }
    }
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} -> {}",
            self.name(),
            shown(self.trusted.as_deref()),
            shown(self.current.as_deref())
        )
    }
}

/// Values as a person reads them: `'x'`, `['a', 'b']`, `unset`.
pub fn shown(values: Option<&[String]>) -> String {
    match values {
        None | Some([]) => "unset".to_owned(),
        Some([one]) => format!("'{one}'"),
        Some(many) => format!(
            "[{}]",
            many.iter()
                .map(|v| format!("'{v}'"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The keys of `then` and `now` whose values differ (both maps taken whole).
fn differences(then: &Values, now: &Values, kind: Kind, file: Option<&str>) -> Vec<Difference> {
    let keys: std::collections::BTreeSet<&String> = then.keys().chain(now.keys()).collect();
    keys.into_iter()
        .filter(|k| then.get(*k) != now.get(*k))
        .map(|k| Difference {
            key: k.clone(),
            kind,
            file: file.map(str::to_owned),
            trusted: then.get(k).cloned(),
            current: now.get(k).cloned(),
        })
        .collect()
}

/// The pinned settings whose values in the config files differ from the snapshot's.
pub fn setting_differences(snapshot: &Snapshot, now: &Values) -> Vec<Difference> {
    differences(&snapshot.settings, now, Kind::Setting, None)
}

/// The exec-capable git settings that differ from the snapshot's: any shared key, and a key
/// a worktree's `config.worktree` holds now with other values than it held then (a worktree
/// removed since, or a value taken away from one, makes git run nothing).
pub fn git_differences(
    snapshot: &Snapshot,
    now: &(Values, BTreeMap<String, Values>),
) -> Vec<Difference> {
    let mut out = differences(&snapshot.git, &now.0, Kind::Git, None);
    let none = Values::new();
    for (file, values) in &now.1 {
        let then = snapshot.worktree_git.get(file).unwrap_or(&none);
        let then: Values = then
            .iter()
            .filter(|(k, _)| values.contains_key(*k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        out.extend(differences(&then, values, Kind::Git, Some(file)));
    }
    out
}

/// Every difference between the snapshot (none: an empty one) and the configuration now.
pub fn all_differences(repo: &Repo, snapshot: Option<&Snapshot>) -> Vec<Difference> {
    let empty = Snapshot::default();
    let snapshot = snapshot.unwrap_or(&empty);
    let mut out = setting_differences(snapshot, &file_settings(repo));
    out.extend(git_differences(snapshot, &capture_git(repo)));
    out
}
