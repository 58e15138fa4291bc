//! `git task guard <harness>`: a pre-write hook that refuses an agent's out-of-contract edit
//! before it is written (SPEC §6, issue 31).
//!
//! An agent harness (Claude Code's `PreToolUse`, Codex CLI's `PreToolUse` on `apply_patch`,
//! Gemini CLI's `BeforeTool`) runs the command with the tool call as JSON on stdin. The guard
//! takes the path(s) the edit would write, finds the task whose worktree holds each (or the
//! patch-mode task active in the main worktree), and judges that one path with the judge the
//! commit hook and the gate use ([`crate::contract::judge`], against the effective contract of
//! [`crate::changes::effective_at`]: policy, frozen contract, the branch's contract file, the
//! claims of other tasks). A path outside every task worktree while the session's `cwd` is in
//! one is refused; one outside with `cwd` outside too is not git-task's business.
//!
//! Only what the answer needs is read: the record, the contract, one tree lookup for "does
//! this path exist at HEAD" (and in patch mode the snapshot), the claims; no index, no status
//! walk. What the commit hook judges that one path cannot show (`too_many_files`) is left to
//! the commit hook.
//!
//! This module decides; the command (`commands/guard.rs`) prints. Every error here must make
//! the command exit 2 with nothing on stdout: the harnesses block only on exit 2 or a deny.

use crate::changes;
use crate::config::Settings;
use crate::contract::file::CONTRACT_FILE;
use crate::contract::judge::{Link, RepairContext};
use crate::contract::{self, BranchFile, Change, Effective, Reason, Violation};
use crate::error::{Error, Result};
use crate::git::diff::ChangeKind;
use crate::git::{objects, Repo};
use crate::record::{self, Record};
use crate::task::{layout, Mode, TaskId};
use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// The agent harnesses whose pre-write hook protocol git-task follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Harness {
    /// Claude Code: `PreToolUse` on `Edit|Write|MultiEdit|NotebookEdit`.
    Claude,
    /// Codex CLI: `PreToolUse` on `apply_patch`.
    Codex,
    /// Gemini CLI: `BeforeTool` on `write_file|replace`.
    Gemini,
}

impl Harness {
    /// The hook event the harness names in `hook_event_name`.
    fn event(self) -> &'static str {
        match self {
            Harness::Claude | Harness::Codex => "PreToolUse",
            Harness::Gemini => "BeforeTool",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Harness::Claude => "Claude Code",
            Harness::Codex => "Codex CLI",
            Harness::Gemini => "Gemini CLI",
        }
    }

    /// The tools whose writes the guard judges.
    fn tools(self) -> &'static str {
        match self {
            Harness::Claude => "Edit, Write, MultiEdit, NotebookEdit",
            Harness::Codex => "apply_patch",
            Harness::Gemini => "write_file, replace",
        }
    }

    /// The document on stdout that refuses the tool call, in the harness's documented form.
    pub fn deny_json(self, reason: &str) -> String {
        let reason = bounded(reason);
        let value = match self {
            // Claude Code and Codex: `hookSpecificOutput.permissionDecision` (the top-level
            // `decision`/`reason` are deprecated for PreToolUse).
            Harness::Claude | Harness::Codex => serde_json::json!({
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": reason,
                }
            }),
            Harness::Gemini => serde_json::json!({ "decision": "deny", "reason": reason }),
        };
        format!("{value}\n")
    }
}

/// Claude Code caps a hook's output strings at 10,000 characters: a longer reason is cut.
const MAX_REASON_CHARS: usize = 9_000;

fn bounded(reason: &str) -> String {
    if reason.chars().count() <= MAX_REASON_CHARS {
        return reason.to_owned();
    }
    let mut cut: String = reason.chars().take(MAX_REASON_CHARS).collect();
    cut.push_str("\n[…]");
    cut
}

/// `text` with control characters escaped (a path can hold a terminal escape sequence).
fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(
        text.chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_default().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

/// How a tool call would touch a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Create or change it.
    Write,
    /// Delete it (Codex `*** Delete File:`, and the source of a `*** Move to:`).
    Delete,
}

/// One path a tool call would write, as the tool spelt it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The path as given (absolute, or relative to the input's `cwd`).
    pub raw: String,
    /// Write or delete.
    pub op: Op,
}

/// The parts of a hook input the guard uses.
#[derive(Clone, Debug)]
pub struct Input {
    /// The session's working directory (`cwd`), when sent.
    pub cwd: Option<PathBuf>,
    /// The paths it would write.
    pub targets: Vec<Target>,
}

/// The guard's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// Let the harness's own permission flow decide (print nothing).
    Pass,
    /// Refuse the tool call, with a reason written for the agent and what to run next (the
    /// command adds them as `hint:` lines).
    Deny { reason: String, hints: Vec<String> },
}

fn bad_input(harness: Harness, what: impl std::fmt::Display) -> Error {
    Error::input(format!(
        "git task guard {}: {what}; the edit is blocked",
        match harness {
            Harness::Claude => "claude",
            Harness::Codex => "codex",
            Harness::Gemini => "gemini",
        }
    ))
    .hint(format!(
        "configure 'git task guard' as the {} {} hook of the tools {} (see 'git task guard --help')",
        harness.name(),
        harness.event(),
        harness.tools()
    ))
}

/// Reads a hook input: the tool and the paths it would write. Anything unexpected is an error
/// (the command exits 2, which blocks the edit).
pub fn parse(harness: Harness, text: &str) -> Result<Input> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        bad_input(
            harness,
            format!("the hook input on stdin is not JSON ({e})"),
        )
    })?;
    let obj = value
        .as_object()
        .ok_or_else(|| bad_input(harness, "the hook input is not a JSON object"))?;
    match obj.get("hook_event_name") {
        None => {}
        Some(serde_json::Value::String(e)) if e == harness.event() => {}
        Some(other) => {
            return Err(bad_input(
                harness,
                format!("this guard serves {}, not {other}", harness.event()),
            ))
        }
    }
    let cwd = match obj.get("cwd") {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(s)) if s.is_empty() => None,
        Some(serde_json::Value::String(s)) => Some(PathBuf::from(s)),
        Some(_) => return Err(bad_input(harness, "'cwd' is not a string")),
    };
    let tool = obj
        .get("tool_name")
        .and_then(|t| t.as_str())
        .ok_or_else(|| bad_input(harness, "the hook input has no 'tool_name' string"))?
        .to_owned();
    let tool_input = obj
        .get("tool_input")
        .and_then(|t| t.as_object())
        .ok_or_else(|| bad_input(harness, "the hook input has no 'tool_input' object"))?;
    let field = |name: &str| -> Result<Target> {
        match tool_input.get(name) {
            Some(serde_json::Value::String(s)) if !s.is_empty() => Ok(Target {
                raw: s.clone(),
                op: Op::Write,
            }),
            _ => Err(bad_input(
                harness,
                format!("the {tool} call has no 'tool_input.{name}' path"),
            )),
        }
    };
    let targets = match (harness, tool.as_str()) {
        (Harness::Claude, "Write" | "Edit" | "MultiEdit") => vec![field("file_path")?],
        (Harness::Claude, "NotebookEdit") => vec![field("notebook_path")?],
        (Harness::Gemini, "write_file" | "replace") => vec![field("file_path")?],
        (Harness::Codex, "apply_patch") => {
            let patch = match tool_input.get("command") {
                Some(serde_json::Value::String(s)) => s.clone(),
                // The exec form `["apply_patch", "<patch>"]`.
                Some(serde_json::Value::Array(parts)) => parts
                    .iter()
                    .filter_map(|p| p.as_str())
                    .find(|p| p.contains("*** Begin Patch"))
                    .map(str::to_owned)
                    .unwrap_or_default(),
                _ => String::new(),
            };
            patch_targets(&patch).map_err(|why| bad_input(harness, why))?
        }
        _ => {
            return Err(bad_input(
                harness,
                format!(
                    "'{}' is not a tool this guard judges (it judges {})",
                    printable(&tool),
                    harness.tools()
                ),
            ))
        }
    };
    Ok(Input { cwd, targets })
}

/// The paths an `apply_patch` patch touches (Codex's grammar: `*** Add File:`, `*** Update
/// File:` optionally followed by `*** Move to:`, `*** Delete File:`, between `*** Begin Patch`
/// and `*** End Patch`). A move is the deletion of its source and a write of its destination.
pub fn patch_targets(patch: &str) -> std::result::Result<Vec<Target>, String> {
    let mut lines = patch.lines().map(|l| l.trim_end_matches('\r'));
    if !lines.any(|l| l.trim() == "*** Begin Patch") {
        return Err("the apply_patch input holds no '*** Begin Patch' line".into());
    }
    let mut targets: Vec<Target> = Vec::new();
    let mut last_update: Option<usize> = None;
    let mut ended = false;
    for line in lines {
        if line.trim() == "*** End Patch" {
            ended = true;
            break;
        }
        let path = |rest: &str| -> std::result::Result<String, String> {
            let p = rest.trim();
            if p.is_empty() {
                return Err(format!("the patch line '{line}' names no file"));
            }
            Ok(p.to_owned())
        };
        if let Some(rest) = line.strip_prefix("*** Add File:") {
            targets.push(Target {
                raw: path(rest)?,
                op: Op::Write,
            });
            last_update = None;
        } else if let Some(rest) = line.strip_prefix("*** Update File:") {
            targets.push(Target {
                raw: path(rest)?,
                op: Op::Write,
            });
            last_update = Some(targets.len() - 1);
        } else if let Some(rest) = line.strip_prefix("*** Move to:") {
            let Some(i) = last_update.take() else {
                return Err("'*** Move to:' does not follow an '*** Update File:' line".into());
            };
            targets[i].op = Op::Delete;
            targets.push(Target {
                raw: path(rest)?,
                op: Op::Write,
            });
        } else if let Some(rest) = line.strip_prefix("*** Delete File:") {
            targets.push(Target {
                raw: path(rest)?,
                op: Op::Delete,
            });
            last_update = None;
        } else if line.starts_with("***") && line.trim() != "*** End of File" {
            return Err(format!(
                "the patch line '{}' is not apply_patch's grammar",
                printable(line)
            ));
        }
    }
    if !ended {
        return Err("the apply_patch input has no '*** End Patch' line".into());
    }
    if targets.is_empty() {
        return Err("the patch names no file".into());
    }
    Ok(targets)
}

/// Who owns a directory tree: the active task of a worktree, as the guard finds it.
enum Owner {
    /// A live task: its record and its effective contract (built when first needed).
    Task {
        record: Box<Record>,
        contract: Option<Box<Effective>>,
    },
    /// A worktree git-task made or marked for a task whose record cannot be used.
    Unusable {
        id: String,
        why: String,
        hints: Vec<String>,
    },
}

/// A worktree the guard looked at.
struct Place {
    /// The worktree's top directory, symlinks resolved.
    root: PathBuf,
    repo: Repo,
    /// `None`: no task is active there.
    owner: Option<Owner>,
}

impl Place {
    /// The task's scratch directory (`git task scratch`), symlinks resolved, for a live task.
    fn scratch(&self) -> Option<PathBuf> {
        let Some(Owner::Task { record, .. }) = &self.owner else {
            return None;
        };
        let common = crate::git::fs::canonical(self.repo.common_dir());
        Some(layout::scratch_dir(&common, &record.state.task_id()))
    }

    fn task_id(&self) -> Option<&str> {
        match &self.owner {
            Some(Owner::Task { record, .. }) => Some(&record.state.id),
            Some(Owner::Unusable { id, .. }) => Some(id),
            None => None,
        }
    }
}

/// The worktrees looked at in one call (the `cwd` and the paths usually share one).
#[derive(Default)]
struct Places {
    places: Vec<Place>,
}

impl Places {
    /// Finds the task worktree holding `path` (absolute): the index of its place and the
    /// directory that was found as its top, as `path` spells it (for a relative path).
    fn locate(&mut self, path: &Path) -> Result<Option<(usize, PathBuf)>> {
        // The deepest directory that exists: a new file's parent, or the one above that.
        let mut dir = path;
        while !dir.is_dir() {
            match dir.parent() {
                Some(p) => dir = p,
                None => return Ok(None),
            }
        }
        let mut from = Some(dir.to_path_buf());
        while let Some(start) = from.take() {
            let Some(found) = start
                .ancestors()
                .find(|a| a.join(".git").exists())
                .map(Path::to_path_buf)
            else {
                return Ok(None);
            };
            // One worktree reached by two spellings (a symlinked parent) is one place.
            let root = crate::git::fs::canonical(&found);
            let i = match self.places.iter().position(|p| p.root == root) {
                Some(i) => i,
                None => {
                    let place = open_place(&root)?;
                    self.places.push(place);
                    self.places.len() - 1
                }
            };
            if self.places[i].owner.is_some() {
                return Ok(Some((i, found)));
            }
            // A worktree with no task (a nested repository, a submodule, the main worktree):
            // the one around it may be a task's.
            from = found.parent().map(Path::to_path_buf);
        }
        Ok(None)
    }
}

/// Opens the worktree at `root` and finds its active task.
fn open_place(root: &Path) -> Result<Place> {
    let repo = crate::git::worktree::open_at(root)?;
    let settings = Settings::load(&repo)?;
    let owner = owner(&repo, &settings, root)?;
    Ok(Place {
        root: root.to_path_buf(),
        repo,
        owner,
    })
}

/// The task of a worktree: the one whose branch is checked out there, else the one marked
/// active there (a patch-mode task). A linked worktree on a task branch, or a marked one,
/// whose task has no usable record is [`Owner::Unusable`]: it is refused, never let through.
fn owner(repo: &Repo, settings: &Settings, root: &Path) -> Result<Option<Owner>> {
    let linked = crate::git::normalize(repo.git_dir()) != repo.common_dir();
    let from_branch = repo
        .head_branch()?
        .as_deref()
        .and_then(|b| crate::git::refs::branch_short(b))
        .and_then(|b| layout::id_from_branch(&settings.branch_prefix, b));
    // `strong`: git-task's own marks say this is the task's place, so a task that cannot be
    // found there refuses every edit rather than letting it through.
    let on_task_branch = from_branch.is_some();
    let (id, strong) = match from_branch {
        Some(id) => (id, linked),
        None => match crate::resolve::read_mark(repo) {
            Some(id) => (id, true),
            // A task's worktree whose HEAD was detached or moved to another branch is still
            // the task's: found by where it is (`<task.worktreeDir>/<id>`).
            None => match linked.then(|| by_place(settings, root)).flatten() {
                Some(id) => (id, false),
                None => return Ok(None),
            },
        },
    };
    let record = match record::load(repo, &id) {
        Ok(Some(record)) => record,
        Ok(None) if strong => {
            return Ok(Some(Owner::Unusable {
                why: format!(
                    "this is the worktree of task '{id}', which has no record ({} is missing)",
                    layout::record_ref(&id)
                ),
                id: id.to_string(),
                hints: Vec::new(),
            }))
        }
        Ok(None) => return Ok(None),
        Err(e) if e.code() == "record_tampered" => return Ok(Some(unusable(&id, &e))),
        Err(e) => return Err(e),
    };
    if !record.state.status.is_live() {
        // Merged or removed: like the commit hook, its contract no longer applies.
        return Ok(None);
    }
    if let Some(t) = record::frozen::verify(repo, &record)? {
        return Ok(Some(Owner::Unusable {
            id: id.to_string(),
            why: format!("record_tampered: {}", t.why),
            hints: Vec::new(),
        }));
    }
    // A linked or marked worktree must be the one the record names (a `.git` file planted in a
    // subdirectory can name any task's git dir): another is no task's place to write.
    let recorded = crate::git::fs::canonical(Path::new(&record.state.worktree));
    if recorded != root && !strong && !on_task_branch {
        return Ok(None);
    }
    if strong && recorded != root {
        return Ok(Some(Owner::Unusable {
            id: id.to_string(),
            why: format!(
                "'{}' is on the branch of task '{id}' (or marked for it), but the task's worktree is '{}'",
                root.display(),
                recorded.display()
            ),
            hints: Vec::new(),
        }));
    }
    Ok(Some(Owner::Task {
        record: Box::new(record),
        contract: None,
    }))
}

/// The task whose default worktree path is `root` (`<task.worktreeDir>/<id>`), if its name is an id.
fn by_place(settings: &Settings, root: &Path) -> Option<TaskId> {
    let dir = crate::git::fs::canonical(&settings.worktree_dir);
    if root.parent()? != dir {
        return None;
    }
    TaskId::parse(root.file_name()?.to_str()?).ok()
}

fn unusable(id: &TaskId, e: &Error) -> Owner {
    Owner::Unusable {
        id: id.to_string(),
        why: e.message().to_owned(),
        hints: e.hints().to_vec(),
    }
}

/// Makes `raw` absolute against `cwd`.
fn absolute(harness: Harness, raw: &str, cwd: Option<&Path>) -> Result<PathBuf> {
    let p = Path::new(raw);
    if p.is_absolute() {
        return Ok(p.to_path_buf());
    }
    match cwd {
        Some(cwd) if cwd.is_absolute() => Ok(cwd.join(p)),
        _ => Err(bad_input(
            harness,
            format!(
                "the path '{}' is relative and the input has no absolute 'cwd'",
                printable(raw)
            ),
        )),
    }
}

/// How many symlinks one resolution may pass through (Linux's own limit): more is a loop.
const MAX_LINK_HOPS: usize = 40;

/// Resolves `path` (absolute) as the file system will when the file is written: component by
/// component, through every symlink that exists on the way (the last component too: writing
/// to a symlink writes its target), `..` taken after the symlink before it is followed. The
/// part that does not exist yet is appended as it is.
fn resolve(path: &Path) -> Result<PathBuf> {
    let mut todo: VecDeque<OsString> = VecDeque::new();
    for c in path.components() {
        match c {
            Component::Normal(n) => todo.push_back(n.to_owned()),
            Component::ParentDir => todo.push_back("..".into()),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    let mut out = PathBuf::from("/");
    let mut exists = true;
    let mut hops = 0;
    while let Some(c) = todo.pop_front() {
        if c == "." {
            continue;
        }
        if c == ".." {
            out.pop();
            continue;
        }
        let next = out.join(&c);
        if exists {
            match std::fs::symlink_metadata(&next) {
                Ok(m) if m.file_type().is_symlink() => {
                    hops += 1;
                    let target = std::fs::read_link(&next).map_err(|e| {
                        Error::repo(
                            format!("could not read the symlink '{}'", next.display()),
                            e,
                        )
                    })?;
                    if hops > MAX_LINK_HOPS {
                        return Err(Error::input(format!(
                            "'{}' leads through more than {MAX_LINK_HOPS} symlinks (a loop)",
                            path.display()
                        )));
                    }
                    if target.is_absolute() {
                        out = PathBuf::from("/");
                    }
                    let parts: Vec<OsString> = target
                        .components()
                        .filter_map(|c| match c {
                            Component::Normal(n) => Some(n.to_owned()),
                            Component::ParentDir => Some("..".into()),
                            _ => None,
                        })
                        .collect();
                    for p in parts.into_iter().rev() {
                        todo.push_front(p);
                    }
                    continue;
                }
                Ok(_) => out = next,
                Err(_) => {
                    exists = false;
                    out = next;
                }
            }
        } else {
            out = next;
        }
    }
    Ok(out)
}

/// `path` relative to `root` with `/` (both absolute, `path` below `root`).
fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}

/// Whether the path as written climbs with a `..` component.
fn climbs(raw: &str) -> bool {
    raw.split(['/', '\\']).any(|c| c == "..")
}

/// Decides one hook input.
pub fn decide(harness: Harness, input: &Input) -> Result<Answer> {
    let mut places = Places::default();
    let cwd = match &input.cwd {
        Some(c) if c.is_absolute() => Some(c.clone()),
        Some(c) => {
            return Err(bad_input(
                harness,
                format!("'cwd' ({}) is not an absolute path", c.display()),
            ))
        }
        None => None,
    };
    let session = match &cwd {
        Some(c) => places.locate(&resolve(c)?)?.map(|(i, _)| i),
        None => None,
    };
    let mut refusals: Vec<String> = Vec::new();
    let mut hints: Vec<String> = Vec::new();
    // The tasks whose rules the refusal names.
    let mut named: Vec<usize> = Vec::new();
    for target in &input.targets {
        let abs = absolute(harness, &target.raw, cwd.as_deref())?;
        let lexical = crate::git::normalize(&abs);
        let real = resolve(&abs)?;
        let at_real = places.locate(&real)?.map(|(i, _)| i);
        let at_lexical = if lexical == real {
            at_real.map(|i| (i, places.places[i].root.clone()))
        } else {
            places.locate(&lexical)?
        };
        let shown = printable(&target.raw).into_owned();
        let unsafe_path = climbs(&target.raw);
        // The session's task keeps its temporary files in its scratch directory (outside every
        // worktree, removed with the task): its own, and nobody else's, to write.
        if let Some(scratch) = session.and_then(|s| places.places[s].scratch()) {
            if real.starts_with(&scratch) && real != scratch {
                continue;
            }
        }
        // A path that looks inside a task's worktree but leads out of it through a symlink:
        // judged as a symlink of that worktree pointing where the write would land.
        if let Some((l, found)) = at_lexical.clone().filter(|(l, _)| Some(*l) != at_real) {
            if let Some((r, h)) = unusable_refusal(&places, l, &shown) {
                refusals.push(r);
                add_hints(&mut hints, h);
                continue;
            }
            let change = Change {
                path: relative(&found, &lexical),
                kind: ChangeKind::Modified,
                link_target: Some(Link::Outside(real.display().to_string())),
                unsafe_path,
                content: None,
            };
            let landing = printable(&real.display().to_string()).into_owned();
            refusals.extend(judge_at(&mut places, l, change, &mut named)?.into_iter().map(
                |v| format!("'{shown}' leads through a symlink to '{landing}', outside the worktree: {}", line(&v)),
            ));
            continue;
        }
        let Some(p) = at_real else {
            // Not in any task's worktree: refused when the session works in one.
            if let Some(s) = session {
                refusals.push(outside(&places, s, &shown, &real));
                named.push(s);
            }
            continue;
        };
        if let Some(s) = session.filter(|s| *s != p) {
            let theirs = places.places[p]
                .task_id()
                .map(|t| format!(" (it is in the worktree of task '{t}')"))
                .unwrap_or_default();
            refusals.push(format!("{}{theirs}", outside(&places, s, &shown, &real)));
            named.push(s);
            continue;
        }
        if let Some((r, h)) = unusable_refusal(&places, p, &shown) {
            refusals.push(r);
            add_hints(&mut hints, h);
            continue;
        }
        let rel = relative(&places.places[p].root, &real);
        if rel == CONTRACT_FILE {
            // The task's own contract file: the commit hook judges its content (a looser one
            // is `contract_tampered`); editing it is how an agent narrows or repairs it.
            // Deleting it is `contract_tampered` at once (a worktree-mode task only).
            let worktree_mode = matches!(
                &places.places[p].owner,
                Some(Owner::Task { record, .. }) if record.state.mode == Mode::Worktree
            );
            if target.op == Op::Delete && worktree_mode {
                refusals.push(line(&Violation {
                    file: CONTRACT_FILE.into(),
                    reason: Reason::ContractTampered,
                    rule: format!("{CONTRACT_FILE} would be deleted"),
                }));
                named.push(p);
            }
            continue;
        }
        let kind = kind_at(&places.places[p], &rel, target.op)?;
        let via = if at_lexical
            .as_ref()
            .is_some_and(|(_, found)| relative(found, &lexical) != rel)
        {
            format!(" ('{shown}' leads there through a symlink)")
        } else {
            String::new()
        };
        let change = Change {
            path: rel,
            kind,
            link_target: None,
            unsafe_path,
            content: None,
        };
        refusals.extend(
            judge_at(&mut places, p, change, &mut named)?
                .into_iter()
                .map(|v| format!("{}{via}", line(&v))),
        );
    }
    if refusals.is_empty() {
        return Ok(Answer::Pass);
    }
    let mut text =
        String::from("git-task refused this edit: it is outside what the task may change.\n");
    for r in &refusals {
        text.push_str(&format!("- {r}\n"));
    }
    let mut seen = Vec::new();
    for i in named {
        if seen.contains(&i) {
            continue;
        }
        seen.push(i);
        text.push_str(&scope_of(&mut places, i)?);
        text.push('\n');
    }
    Ok(Answer::Deny {
        reason: text.trim_end().to_owned(),
        hints,
    })
}

/// Adds the hints `new` to `hints`, each once.
fn add_hints(hints: &mut Vec<String>, new: Vec<String>) {
    for h in new {
        if !hints.contains(&h) {
            hints.push(h);
        }
    }
}

/// The refusal of any edit in a worktree whose task's record is missing or tampered.
fn unusable_refusal(places: &Places, i: usize, shown: &str) -> Option<(String, Vec<String>)> {
    let Some(Owner::Unusable { id, why, hints }) = &places.places[i].owner else {
        return None;
    };
    let mut hints = hints.clone();
    hints.push(format!(
        "'git task list --all' shows the tasks; 'git task status {id}' says what is wrong"
    ));
    Some((
        format!(
            "'{shown}' is in the worktree of task '{id}', whose record git-task cannot use, so no edit there is allowed: {why}"
        ),
        hints,
    ))
}

fn line(v: &Violation) -> String {
    format!("'{}': {} ({})", v.file, v.reason, v.rule)
}

fn outside(places: &Places, session: usize, shown: &str, real: &Path) -> String {
    let place = &places.places[session];
    let id = place.task_id().unwrap_or("?");
    let landing = real.display().to_string();
    let mut text = format!("'{shown}'");
    if landing != shown {
        text.push_str(&format!(" ({})", printable(&landing)));
    }
    text.push_str(&format!(
        " is outside the worktree of task '{id}' ({}), where this session works: write only inside it",
        place.root.display()
    ));
    if let Some(scratch) = place.scratch() {
        text.push_str(&format!(
            ", or, for temporary files, in the task's scratch directory {}",
            printable(&scratch.display().to_string())
        ));
    }
    // The same file in the task's own worktree, when the path is in another worktree of the
    // repository (the main one, most often): what the agent most likely meant.
    let main = place
        .repo
        .main_worktree()
        .ok()
        .map(|m| crate::git::fs::canonical(&m));
    let other_roots = places
        .places
        .iter()
        .map(|p| p.root.clone())
        .chain(main)
        .filter(|r| *r != place.root && real.starts_with(r));
    if let Some(root) = other_roots.max_by_key(|r| r.components().count()) {
        let rel = relative(&root, real);
        if !rel.is_empty() {
            text.push_str(&format!(
                "; the task's copy of that file is {}",
                printable(&place.root.join(rel).display().to_string())
            ));
        }
    }
    text
}

/// Whether `rel` is new, changed or deleted, from what the task's HEAD holds (and, in patch
/// mode, the snapshot taken at start: files that were there then are not new).
fn kind_at(place: &Place, rel: &str, op: Op) -> Result<ChangeKind> {
    let Some(Owner::Task { record, .. }) = &place.owner else {
        return Ok(ChangeKind::Modified);
    };
    let repo = &place.repo;
    let safe = crate::git::pathsafe::is_safe_path(rel.as_bytes());
    let mut exists = false;
    if safe {
        if let Some(head) = repo.head_commit()? {
            let tree = objects::commit_tree(repo, head)?;
            exists = objects::entry_in(repo, tree, rel)?.is_some();
        }
        if !exists && record.state.mode == Mode::Patch {
            if let Some(snap) = crate::snapshot::snapshot_commit(repo, &record.state.task_id())? {
                let tree = objects::commit_tree(repo, snap)?;
                exists = objects::entry_in(repo, tree, rel)?.is_some();
            }
        }
    }
    Ok(match (op, exists) {
        (Op::Write, false) => ChangeKind::Added,
        (Op::Write, true) => ChangeKind::Modified,
        (Op::Delete, true) => ChangeKind::Deleted,
        // Deleting a file git does not track: no deletion git would see, but its path's rules hold.
        (Op::Delete, false) => ChangeKind::Modified,
    })
}

/// The effective contract of the task at `places[i]`, built once.
fn contract_of(places: &mut Places, i: usize) -> Result<&Effective> {
    let place = &mut places.places[i];
    let Some(Owner::Task { record, contract }) = &mut place.owner else {
        return Err(Error::repo_msg("internal: no task at this worktree"));
    };
    if contract.is_none() {
        let repo = &place.repo;
        let branch = if record.state.mode == Mode::Patch {
            BranchFile::NotApplicable
        } else {
            // The branch level as it is on disk now, which is what the next commit will hold.
            match std::fs::read(place.root.join(CONTRACT_FILE)) {
                Ok(bytes) => BranchFile::Present(String::from_utf8_lossy(&bytes).into_owned()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => BranchFile::Deleted,
                Err(e) => {
                    return Err(Error::repo(
                        format!(
                            "could not read {CONTRACT_FILE} of task '{}'",
                            record.state.id
                        ),
                        e,
                    ))
                }
            }
        };
        let tip = changes::base_tip(repo, record)?;
        *contract = Some(Box::new(changes::effective_at(repo, record, &branch, tip)?));
    }
    Ok(contract.as_deref().expect("built above"))
}

/// Judges one change with the task's effective contract: the violations this one edit makes.
fn judge_at(
    places: &mut Places,
    i: usize,
    change: Change,
    named: &mut Vec<usize>,
) -> Result<Vec<Violation>> {
    let root = places.places[i].root.display().to_string();
    let is_contract_file = change.path == CONTRACT_FILE;
    let contract = contract_of(places, i)?;
    let ctx = RepairContext {
        source: "HEAD".into(),
        staged: false,
        root: Some(root),
    };
    let verdict = contract::judge(contract, &[change], &ctx);
    let violations: Vec<Violation> = verdict
        .violations
        .into_iter()
        // One path cannot tell how many the task changes: the commit hook counts them.
        .filter(|v| v.reason != Reason::TooManyFiles)
        .filter(|v| !(is_contract_file && v.reason == Reason::ContractTampered))
        .collect();
    if !violations.is_empty() {
        named.push(i);
    }
    Ok(violations)
}

/// What the task at `places[i]` may change, for the agent to correct itself.
fn scope_of(places: &mut Places, i: usize) -> Result<String> {
    let id = places.places[i].task_id().unwrap_or("?").to_owned();
    let root = places.places[i].root.display().to_string();
    if !matches!(places.places[i].owner, Some(Owner::Task { .. })) {
        return Ok(format!(
            "Task '{id}' works in {root}; 'git task status {id}' shows it."
        ));
    }
    let contract = contract_of(places, i)?;
    let allowed = contract.allowed_summary();
    let forbidden = contract.forbidden_summary();
    let mut s = format!("Task '{id}' works in {root}. ");
    if allowed.is_empty() {
        s.push_str("It may change any path there");
    } else {
        s.push_str(&format!("It may only change: {}", allowed.join(", ")));
    }
    if !forbidden.is_empty() {
        s.push_str(&format!("; it must never change: {}", forbidden.join(", ")));
    }
    for (task, globs) in contract.claims() {
        s.push_str(&format!("; task '{task}' claims: {}", globs.join(", ")));
    }
    if !contract.allows_new_files() {
        s.push_str("; it may not add files");
    }
    if !contract.allows_deletions() {
        s.push_str("; it may not delete files");
    }
    if let Some(why) = &contract.tampered {
        s.push_str(&format!(
            "; its {CONTRACT_FILE} must be put back as frozen ({why})"
        ));
    }
    s.push_str(&format!(
        ". 'git task status {id}' shows the contract; .task-policy.toml files and other tasks' claims are never the task's to change."
    ));
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patches_name_every_path_and_moves_delete_their_source() {
        let t = patch_targets(
            "*** Begin Patch\n*** Add File: a\n+x\n*** Update File: b\n*** Move to: c\n@@\n-1\n+2\n*** Delete File: d\n*** Update File: e\n@@\n x\n*** End of File\n*** End Patch\n",
        )
        .unwrap();
        let got: Vec<(&str, Op)> = t.iter().map(|t| (t.raw.as_str(), t.op)).collect();
        assert_eq!(
            got,
            vec![
                ("a", Op::Write),
                ("b", Op::Delete),
                ("c", Op::Write),
                ("d", Op::Delete),
                ("e", Op::Write)
            ]
        );
        // A heredoc around it (the shell form) is fine.
        assert!(patch_targets(
            "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\nEOF\n"
        )
        .is_ok());
        for bad in [
            "",
            "*** Add File: a\n",
            "*** Begin Patch\n*** Add File: a\n",
            "*** Begin Patch\n*** End Patch\n",
            "*** Begin Patch\n*** Add File:   \n*** End Patch\n",
            "*** Begin Patch\n*** Move to: x\n*** End Patch\n",
            "*** Begin Patch\n*** Rename File: x\n*** End Patch\n",
        ] {
            assert!(patch_targets(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn resolution_follows_symlinks_and_dotdot_as_the_kernel_does() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(base.join("a/b")).unwrap();
        std::fs::create_dir_all(base.join("elsewhere/deep")).unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(base.join("elsewhere/deep"), base.join("a/link")).unwrap();
            // `link/..` is the parent of the link's target, not `a`.
            assert_eq!(
                resolve(&base.join("a/link/../x")).unwrap(),
                base.join("elsewhere/x")
            );
            assert_eq!(
                resolve(&base.join("a/link/new/file")).unwrap(),
                base.join("elsewhere/deep/new/file")
            );
            std::os::unix::fs::symlink("loop", base.join("a/loop")).unwrap();
            assert!(resolve(&base.join("a/loop/x")).is_err());
        }
        assert_eq!(
            resolve(&base.join("a/./b/../b/f")).unwrap(),
            base.join("a/b/f")
        );
        assert_eq!(relative(&base, &base.join("a/b/f")), "a/b/f");
        assert!(climbs("src/../x") && climbs("..") && !climbs("src/..x"));
    }

    #[test]
    fn deny_documents_have_each_harness_shape() {
        let c: serde_json::Value = serde_json::from_str(&Harness::Claude.deny_json("why")).unwrap();
        assert_eq!(c["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(c["hookSpecificOutput"]["hookEventName"], "PreToolUse");
        assert_eq!(c["hookSpecificOutput"]["permissionDecisionReason"], "why");
        let g: serde_json::Value = serde_json::from_str(&Harness::Gemini.deny_json("why")).unwrap();
        assert_eq!(g, serde_json::json!({"decision": "deny", "reason": "why"}));
        let long = "x".repeat(20_000);
        let c: serde_json::Value = serde_json::from_str(&Harness::Codex.deny_json(&long)).unwrap();
        assert!(
            c["hookSpecificOutput"]["permissionDecisionReason"]
                .as_str()
                .unwrap()
                .chars()
                .count()
                < 10_000
        );
    }
}
