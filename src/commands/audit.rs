//! `git task audit [<branch>]`: every move of a branch git-task saw, attributed; and the
//! `base_moved_unattributed` warning of `list`, `status`, `check` and `merge` (SPEC §6, §11).
//!
//! The ledger of moves (`ledger::moves`) watches a branch once a task starts from it with the
//! hooks installed: git-task's merges note their landings, the `reference-transaction` hook
//! notes every move git makes (`worktree <path>`), and a move nobody saw (the hooks skipped, a
//! client that runs none) shows as the difference between the branch's tip and the last tip
//! on file: `unattributed`.

use crate::audit::{full_name, short, short_branch};
use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::ledger::moves::{self, Move};
use crate::output::{escape, Out, Report};

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

/// The JSON Schemas of what `--json` prints, one per shape (published in `schema/`).
pub fn json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    use crate::output::schema_of;
    vec![schema_of::<AuditReport>(generator)]
}
