//! `git task audit [<branch>]`: every move of a branch git-task saw, attributed; and the
//! `base_moved_unattributed` warning of `list`, `status`, `check` and `merge` (SPEC §6, §11).
//!
//! The ledger of moves (`ledger::moves`) watches a branch once a task starts from it with the
//! hooks installed: git-task's merges note their landings, the `reference-transaction` hook
//! notes every move git makes (`worktree <path>`), and a move nobody saw (the hooks skipped, a
//! client that runs none) shows as the difference between the branch's tip and the last tip
//! on file: `unattributed`.

use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::git::Repo;
use crate::ledger::moves::{self, Move};
use crate::output::{escape, Out, Report};
use crate::task::TaskState;
use std::collections::BTreeMap;

/// List every move of a branch that git-task saw, and who made it
#[derive(clap::Args, Debug)]
pub struct AuditArgs {
    /// The branch (default: the current branch)
    pub branch: Option<String>,
}

/// One move, attributed.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Row {
    #[serde(flatten)]
    moved: Move,
    /// Who moved it, in one word: `merge`, `worktree`, `git-task` or `unattributed`.
    #[schemars(extend("enum" = ["merge", "worktree", "git-task", "push", "unattributed"]))]
    by: &'static str,
    /// `merge`: the tasks merged.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tasks: Vec<String>,
    /// `worktree`: the worktree it was moved in.
    #[serde(skip_serializing_if = "Option::is_none")]
    worktree: Option<String>,
    /// `worktree`: whether that is the main worktree (the user's).
    #[serde(skip_serializing_if = "Option::is_none")]
    main_worktree: Option<bool>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct AuditReport {
    #[schemars(extend("const" = "audit"))]
    kind: &'static str,
    /// The branch, full ref name.
    branch: String,
    /// Whether git-task watches it (a task started from it with the hooks installed).
    watched: bool,
    /// Its tip now (`null`: it does not exist).
    tip: Option<String>,
    /// Every move on file, oldest first; the last one's `new` is the tip.
    moves: Vec<Row>,
    /// How many of them are unattributed.
    unattributed: usize,
}

fn short(id: Option<&str>) -> &str {
    match id {
        Some(id) => &id[..7.min(id.len())],
        None => "(none)",
    }
}

fn short_branch(name: &str) -> &str {
    name.strip_prefix("refs/heads/").unwrap_or(name)
}

impl Report for AuditReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        use owo_colors::OwoColorize;
        let p = &out.palette;
        let name = escape(short_branch(&self.branch));
        if !self.watched {
            out.note(format_args!(
                "git-task does not watch '{name}': no task started from it with the hooks installed ('git task hooks install')"
            ));
            return Ok(());
        }
        for r in &self.moves {
            let who = match r.by {
                "merge" => format!("merge of {}", r.tasks.join(", ")),
                "worktree" if r.main_worktree == Some(true) => format!(
                    "main worktree ({})",
                    escape(r.worktree.as_deref().unwrap_or_default())
                ),
                "worktree" => format!(
                    "worktree {}",
                    escape(r.worktree.as_deref().unwrap_or_default())
                ),
                "git-task" => "git-task (watched from here)".to_owned(),
                "unattributed" => format!(
                    "{} (outside git-task: not through a merge, nor seen by the hooks)",
                    "unattributed".style(p.error)
                ),
                _ => escape(&r.moved.who).into_owned(),
            };
            out.line(format_args!(
                "{}  {}..{}  {who}",
                crate::output::format_time(r.moved.time),
                short(r.moved.old.as_deref()),
                short(r.moved.new.as_deref()).style(p.id),
            ))?;
        }
        if self.unattributed > 0 {
            out.hint(format_args!(
                "see what an unattributed move brought: git log <old>..<new>; a task's work reaches '{name}' through 'git task merge'"
            ));
        }
        Ok(())
    }
}

/// Attributes one move for the report.
fn row(main: Option<&std::path::Path>, m: Move) -> Row {
    let mut r = Row {
        by: "unattributed",
        tasks: Vec::new(),
        worktree: None,
        main_worktree: None,
        moved: m,
    };
    let who = r.moved.who.clone();
    if let Some(ids) = who.strip_prefix("merge ") {
        r.by = "merge";
        r.tasks = ids.split(' ').map(str::to_owned).collect();
    } else if let Some(path) = who.strip_prefix("worktree ") {
        r.by = "worktree";
        r.main_worktree =
            Some(main.is_some_and(|m| crate::git::normalize(std::path::Path::new(path)) == m));
        r.worktree = Some(path.to_owned());
    } else if who == "git-task" {
        r.by = "git-task";
    } else if who == "push" {
        r.by = "push";
    }
    r
}

/// The full ref name of a branch given as `main` or `refs/heads/main`.
fn full_name(branch: &str) -> String {
    if branch.starts_with("refs/") {
        branch.to_owned()
    } else {
        format!("refs/heads/{branch}")
    }
}

pub fn run(ctx: &Ctx, args: &AuditArgs) -> CmdResult {
    let branch = match &args.branch {
        Some(b) => full_name(b),
        None => ctx.repo.head_branch()?.ok_or_else(|| {
            crate::Error::input("HEAD is detached: name the branch to audit")
                .hint("git task audit main")
        })?,
    };
    let tip = ctx.repo.find_ref(&branch)?;
    let on_file = moves::check(&ctx.repo, &branch, tip);
    let main = ctx
        .repo
        .main_worktree()
        .ok()
        .map(|m| crate::git::normalize(&m));
    let rows: Vec<Row> = on_file
        .clone()
        .unwrap_or_default()
        .into_iter()
        .map(|m| row(main.as_deref(), m))
        .collect();
    let report = AuditReport {
        kind: "audit",
        watched: on_file.is_some(),
        tip: tip.map(|t| t.to_string()),
        unattributed: rows.iter().filter(|r| r.by == "unattributed").count(),
        moves: rows,
        branch,
    };
    emit(ctx, &report, Done::Ok)
}

/// A base branch that moved outside git-task since a task started from it.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub(crate) struct BaseMoved {
    #[schemars(extend("const" = "base_moved_unattributed"))]
    kind: &'static str,
    /// The branch (short name: `main`).
    pub branch: String,
    /// The commits it was moved to outside git-task, oldest first (`null`: deleted).
    pub commits: Vec<Option<String>>,
}

/// Starts watching the base branch of a task that just started, when the hooks that see its
/// moves are installed (without them every move of the user's would look unattributed).
pub(crate) fn watch_base(repo: &Repo, state: &TaskState) {
    let Some(base) = state.base_branch.as_deref() else {
        return;
    };
    if !crate::hooks::sees_ref_moves(repo) {
        return;
    }
    if let Ok(Some(tip)) = repo.find_ref(base) {
        moves::watch(repo, base, tip);
    }
}

/// The unattributed moves of the bases of `tasks` since each started, one entry per branch;
/// nothing for a branch the ledger does not watch.
pub(crate) fn base_moved<'a>(
    repo: &Repo,
    tasks: impl IntoIterator<Item = &'a TaskState>,
) -> Vec<BaseMoved> {
    // Each branch once, from the oldest task on it.
    let mut since: BTreeMap<&str, i64> = BTreeMap::new();
    for t in tasks {
        if let Some(base) = t.base_branch.as_deref() {
            let at = since.entry(base).or_insert(t.created);
            *at = (*at).min(t.created);
        }
    }
    since
        .into_iter()
        .filter_map(|(branch, since)| moved_on(repo, branch, since))
        .collect()
}

/// The unattributed moves of `branch` since `since`, after a fresh look at its tip.
fn moved_on(repo: &Repo, branch: &str, since: i64) -> Option<BaseMoved> {
    if !moves::watched(repo, branch) {
        return None;
    }
    let tip = repo.find_ref(branch).ok().flatten();
    let found = moves::unattributed_since(repo, branch, tip, since);
    (!found.is_empty()).then(|| BaseMoved {
        kind: "base_moved_unattributed",
        branch: short_branch(branch).to_owned(),
        commits: found.into_iter().map(|m| m.new).collect(),
    })
}

/// Before a merge of `ids` (into `into`, else each task's base): the unattributed moves of
/// each target since its task started, looked at before the landing moves it (after, the move
/// would hide behind the merge's). A landing that would change nothing on a target that moved
/// outside git-task is refused (`base_moved_unattributed`): the task's work is already there,
/// and not through the gate. Returns the moves to warn about otherwise.
pub(crate) fn before_merge(
    repo: &Repo,
    ids: &[crate::task::TaskId],
    into: Option<&str>,
) -> crate::Result<Vec<BaseMoved>> {
    let mut warnings: Vec<BaseMoved> = Vec::new();
    for id in ids {
        let Ok(Some(record)) = crate::record::load(repo, id) else {
            continue;
        };
        let state = &record.state;
        let Some(target) = into.map(full_name).or_else(|| state.base_branch.clone()) else {
            continue;
        };
        let Some(moved) = moved_on(repo, &target, state.created) else {
            continue;
        };
        // A task merged already lands nothing by right (the merge says so); a live one whose
        // landing would change nothing has its work on the target by another way.
        if state.mode == crate::task::Mode::Worktree
            && state.status.is_live()
            && lands_nothing(repo, state, &target)?
        {
            let to: Vec<&str> = moved
                .commits
                .iter()
                .map(|c| c.as_deref().map_or("(deleted)", |c| short(Some(c))))
                .collect();
            return Err(crate::Error::negative(format!(
                "base_moved_unattributed: '{}' moved to {} outside git-task (not through a merge, nor seen by the hooks), and merging task '{id}' would change nothing there: its work is already on '{}' without having passed the gate; nothing was merged",
                escape(&moved.branch),
                to.join(", "),
                escape(&moved.branch)
            ))
            .with_code("base_moved_unattributed")
            .hint(format!(
                "see every move: git task audit {}",
                crate::contract::judge::shell_quote(&moved.branch)
            ))
            .hint(format!(
                "put '{}' back where git-task last saw it (git task audit shows it), then merge again",
                escape(&moved.branch)
            )));
        }
        if !warnings.iter().any(|w| w.branch == moved.branch) {
            warnings.push(moved);
        }
    }
    Ok(warnings)
}

/// Whether landing the task's branch on `target` would leave `target`'s tree as it is.
fn lands_nothing(repo: &Repo, state: &TaskState, target: &str) -> crate::Result<bool> {
    let (Some(tip), Some(onto)) = (repo.find_ref(&state.branch)?, repo.find_ref(target)?) else {
        return Ok(false);
    };
    if crate::git::objects::merge_base(repo, tip, onto)? == Some(tip) {
        return Ok(true);
    }
    let theirs = crate::git::objects::commit_tree(repo, tip)?;
    let ours = crate::git::objects::commit_tree(repo, onto)?;
    if theirs == ours {
        return Ok(true);
    }
    let ancestor = match state.base_commit_id(repo)? {
        Some(base) => crate::git::objects::commit_tree(repo, base)?,
        None => return Ok(false),
    };
    let scratch = repo.with_objects_in_memory();
    let merged = crate::git::merge::merge_trees(
        &scratch,
        ancestor,
        ours,
        theirs,
        ["base", "target", "task"],
    )?;
    Ok(merged.tree == Some(ours))
}

/// The warning line of one [`BaseMoved`].
pub(crate) fn warning_text(m: &BaseMoved) -> String {
    let to: Vec<&str> = m
        .commits
        .iter()
        .map(|c| c.as_deref().map_or("(deleted)", |c| short(Some(c))))
        .collect();
    format!(
        "base_moved_unattributed: '{}' moved to {} outside git-task (not through a merge, nor seen by the hooks)",
        escape(&m.branch),
        to.join(", ")
    )
}

/// Prints the warnings of [`base_moved`] on stderr.
pub(crate) fn warn(out: &Out, moved: &[BaseMoved]) {
    for m in moved {
        out.warn(warning_text(m));
    }
    hint(out, moved);
}

/// Prints where to see the moves of [`base_moved`] on stderr.
pub(crate) fn hint(out: &Out, moved: &[BaseMoved]) {
    for m in moved {
        out.hint(format_args!(
            "see every move: git task audit {}",
            crate::contract::judge::shell_quote(&m.branch)
        ));
    }
}

/// The JSON Schemas of what `--json` prints, one per shape (published in `schema/`).
pub fn json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    use crate::output::schema_of;
    vec![schema_of::<AuditReport>(generator)]
}
