//! Agent-harness worktree hooks: Claude Code's `WorktreeCreate` and `WorktreeRemove`.
//!
//! Claude Code runs the configured command with a JSON object on stdin and, for
//! `WorktreeCreate`, takes the worktree's absolute path from stdout (any non-zero exit
//! fails the creation). Edge glue, like `mcp`: the input becomes `start` or `remove`, run in
//! process through [`crate::mcp::call`].
//!
//! - create: `start <name>` (a name that is no task id as it is, too long or not ASCII, is made
//!   one with a short stable hash of the name as a suffix, so two names never make one task;
//!   `source_ref`, when sent, is the base). The contract: `task.harnessAllow`/`task.harnessForbid` when set, else the
//!   `.task-contract.toml` at the root of the checkout the hook runs in, else none (any path
//!   not forbidden by the policy). Starting an existing task returns its worktree.
//!   A task whose worktree lies outside the tasks directory (`task.worktreeDir`, default
//!   `../<repo>.tasks`) is refused (exit 2): Claude Code would work there.
//! - remove: the task whose worktree is `worktree_path` is removed with `--force`: its
//!   uncommitted work is saved as an attempt first.
//!
//! Codex, Cursor and opencode have no hook that replaces their worktree creation (Cursor's
//! worktree setup runs after it made the worktree itself), so only Claude Code is served.

use crate::cli::{Harness, HarnessArgs, HookEvent};
use crate::commands::{CmdResult, Command, Done};
use crate::error::Error;
use crate::mcp::call::{self, Outcome};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The fields of Claude Code's hook input that matter here (others are ignored).
#[derive(Deserialize, Debug, Default)]
struct HookInput {
    hook_event_name: Option<String>,
    /// Where Claude Code runs (the project).
    cwd: Option<PathBuf>,
    /// WorktreeCreate: the worktree's name (`name`; the hooks reference calls it `worktree_name`).
    #[serde(alias = "worktree_name")]
    name: Option<String>,
    /// WorktreeCreate: the revision to start from, when Claude Code says.
    source_ref: Option<String>,
    /// WorktreeRemove: the worktree to remove.
    worktree_path: Option<PathBuf>,
}

/// What the hook answers: stdout (the worktree path), stderr, exit code.
#[derive(Debug, Default)]
pub struct HookAnswer {
    /// The line for stdout, if any.
    pub stdout: Option<String>,
    /// Text for stderr.
    pub stderr: String,
    /// The exit code.
    pub code: u8,
}

/// Runs `git task harness`: reads the hook's input from stdin, answers on stdout (the worktree
/// path) and stderr.
pub fn run(args: &HarnessArgs) -> CmdResult {
    use std::io::Write;
    let Harness::Claude(event) = args.harness;
    let mut input = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin().lock(), &mut input)
        .map_err(|e| crate::Error::input(format!("could not read the hook input on stdin: {e}")))?;
    let answer = claude(event == HookEvent::Create, &input)?;
    let _ = std::io::stderr().write_all(answer.stderr.as_bytes());
    if let Some(path) = &answer.stdout {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{path}")
            .and_then(|()| stdout.flush())
            .map_err(|e| crate::Error::repo("could not write the worktree path", e))?;
    }
    Ok(match answer.code {
        0 => Done::Ok,
        1 => Done::Negative,
        code => Done::Exit(code),
    })
}

/// Handles one Claude Code worktree hook: `create` for WorktreeCreate, else WorktreeRemove.
pub fn claude(create: bool, input: &str) -> Result<HookAnswer, Error> {
    let input: HookInput = serde_json::from_str(input).map_err(|e| {
        Error::input(format!("the hook input on stdin is not Claude Code's hook JSON: {e}"))
            .hint("configure this command as a WorktreeCreate or WorktreeRemove hook in .claude/settings.json")
    })?;
    let expected = if create {
        "WorktreeCreate"
    } else {
        "WorktreeRemove"
    };
    if let Some(event) = &input.hook_event_name {
        if event != expected {
            return Err(Error::input(format!(
                "this hook handles {expected}, but Claude Code sent {event}"
            ))
            .hint("use 'git task harness claude create' for WorktreeCreate and 'git task harness claude remove' for WorktreeRemove"));
        }
    }
    let here = std::env::current_dir()
        .map_err(|e| Error::repo("could not read the current directory", e))?;
    let dir = match &input.cwd {
        Some(cwd) if cwd.is_dir() => crate::git::normalize(&here.join(cwd)),
        _ => here,
    };
    if create {
        create_task(&dir, &input)
    } else {
        remove_task(&dir, &input)
    }
}

fn create_task(dir: &Path, input: &HookInput) -> Result<HookAnswer, Error> {
    let mut argv = vec!["git-task".to_owned(), "--json".into(), "start".into()];
    if let Some(base) = input.source_ref.as_deref().filter(|b| !b.is_empty()) {
        argv.push(format!("--base={base}"));
    }
    argv.extend(contract_args(dir)?);
    if let Some(name) = input.name.as_deref().filter(|n| !n.is_empty()) {
        let repo = crate::git::Repo::discover(dir)?;
        argv.push(task_id(name, &name_hash(&repo, name)));
    }
    let outcome = call::run_in(dir, &command(&argv)?);
    let worktree = json_field(&outcome.stdout, "worktree");
    if let (0, Some(path)) = (outcome.code, &worktree) {
        // Claude Code works where this answer says: never outside the tasks directory (an
        // existing task started elsewhere with --path, or a record that says so).
        let repo = crate::git::Repo::discover(dir)?;
        let tasks = crate::config::Settings::load(&repo)?.worktree_dir;
        if !crate::mcp::in_tasks_dir(&tasks, Path::new(path)) {
            return Err(Error::input(format!(
                "the worktree of this task, '{path}', lies outside the tasks directory '{}'",
                tasks.display()
            ))
            .hint("give the worktree another name, or remove that task: git task remove <id>"));
        }
    }
    match (outcome.code, worktree) {
        (0, Some(path)) => Ok(HookAnswer {
            stdout: Some(path),
            stderr: outcome.stderr,
            code: 0,
        }),
        _ => Ok(failed(outcome)),
    }
}

fn remove_task(dir: &Path, input: &HookInput) -> Result<HookAnswer, Error> {
    let Some(path) = &input.worktree_path else {
        return Err(
            Error::input("the WorktreeRemove hook input has no 'worktree_path'")
                .hint("configure this command as the WorktreeRemove hook in .claude/settings.json"),
        );
    };
    let path = crate::git::normalize(&dir.join(path));
    let listed = call::run_in(dir, &command(&["git-task", "--json", "list", "--all"])?);
    if listed.code != 0 {
        return Ok(failed(listed));
    }
    let Some(id) = task_at(&listed.stdout, &path) else {
        return Err(Error::input(format!(
            "no task has its worktree at '{}'",
            path.display()
        ))
        .hint(format!(
            "it was not made by 'git task harness claude create'; remove it with: git worktree remove {}",
            crate::contract::judge::shell_quote(&path.display().to_string())
        )));
    };
    let removed = call::run_in(
        dir,
        &command(&["git-task", "--json", "remove", "--force", &id])?,
    );
    if removed.code != 0 {
        return Ok(failed(removed));
    }
    let mut stderr = removed.stderr;
    stderr.push_str(&format!("Removed task '{id}'\n"));
    Ok(HookAnswer {
        stdout: None,
        stderr,
        code: 0,
    })
}

/// The contract options of a harness-made task (see the module docs).
fn contract_args(dir: &Path) -> Result<Vec<String>, Error> {
    let repo = crate::git::Repo::discover(dir)?;
    // The pinned values (SPEC §2.8): `start` below warns about a value changed in git config.
    let settings = crate::config::Settings::load(&repo)?;
    let (allow, forbid) = (settings.harness_allow, settings.harness_forbid);
    if !allow.is_empty() || !forbid.is_empty() {
        let mut args: Vec<String> = allow.iter().map(|g| format!("--allow={g}")).collect();
        args.extend(forbid.iter().map(|g| format!("--forbid={g}")));
        return Ok(args);
    }
    let file = repo
        .workdir()
        .map(|root| root.join(crate::contract::file::CONTRACT_FILE));
    Ok(match file {
        Some(file) if file.is_file() => vec![format!("--contract={}", file.display())],
        _ => Vec::new(),
    })
}

/// The short stable hash a changed name is told apart by: the first 8 hex digits of the name's
/// git blob id (`printf %s NAME | git hash-object --stdin`).
fn name_hash(repo: &crate::git::Repo, name: &str) -> String {
    crate::git::objects::hash_blob(repo, name.as_bytes()).to_string()[..8].to_owned()
}

/// A worktree name made a valid task id: a name that is one is taken as it is; any other
/// (other characters become '-', longer than 64 characters, `..`, a trailing `.lock`) gets
/// `-<hash>` (see [`name_hash`]) so that two different names never make one task, and a name
/// with nothing usable left becomes `wt-<hash>`.
fn task_id(name: &str, hash: &str) -> String {
    if crate::task::TaskId::parse(name).is_ok_and(|t| t.as_str() == name) {
        return name.to_owned();
    }
    let mut id: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    while id.contains("..") {
        id = id.replace("..", ".");
    }
    let mut id = id
        .trim_start_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_owned();
    // Room for the suffix within 64 characters.
    id.truncate(64 - 1 - hash.len());
    loop {
        let before = id.len();
        if let Some(stem) = id.strip_suffix(".lock") {
            id = stem.to_owned();
        }
        id = id.trim_end_matches(['.', '-']).to_owned();
        if id.len() == before {
            break;
        }
    }
    if id.is_empty() {
        return format!("wt-{hash}");
    }
    format!("{id}-{hash}")
}

/// The id of the task whose worktree is `path`, from `list --json --all`; a live task first.
fn task_at(list_json: &str, path: &Path) -> Option<String> {
    let list: serde_json::Value = serde_json::from_str(list_json).ok()?;
    let same = |p: &str| {
        let p = Path::new(p);
        p == path
            || std::fs::canonicalize(p)
                .ok()
                .zip(std::fs::canonicalize(path).ok())
                .is_some_and(|(a, b)| a == b)
    };
    let rows = list.get("tasks")?.as_array()?;
    let matching: Vec<&serde_json::Value> = rows
        .iter()
        .filter(|r| r.get("path").and_then(|p| p.as_str()).is_some_and(same))
        .collect();
    let live = |r: &&serde_json::Value| {
        !matches!(
            r.get("status").and_then(|s| s.as_str()),
            Some("removed" | "merged")
        )
    };
    matching
        .iter()
        .find(|r| live(r))
        .or(matching.first())
        .and_then(|r| r.get("id"))
        .and_then(|i| i.as_str())
        .map(str::to_owned)
}

fn json_field(json: &str, field: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(json).ok()?;
    value.get(field)?.as_str().map(str::to_owned)
}

fn command<S: AsRef<str>>(argv: &[S]) -> Result<Command, Error> {
    crate::cli::parse_command(argv.iter().map(|s| s.as_ref()))
        .map_err(|e| Error::input(e.render().to_string().trim().to_owned()))
}

/// A command that did not answer yes: its error text, or its report, on stderr.
fn failed(outcome: Outcome) -> HookAnswer {
    let mut stderr = outcome.stderr;
    if outcome.error.is_none() && !outcome.stdout.trim().is_empty() {
        stderr.push_str(&outcome.stdout);
    }
    HookAnswer {
        stdout: None,
        stderr,
        code: if outcome.code == 0 { 1 } else { outcome.code },
    }
}
