//! `git task list`: one line per task.

use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::lifecycle::summary::{self, Summary};
use crate::output::{table, Out, Report};
use crate::overlaps::cache::{collisions, Cache, Collisions, Listed};
use crate::task::{Mode, Status, TaskId};
use std::borrow::Cow;

/// List tasks with their status, base and changes
#[derive(clap::Args, Debug)]
pub struct ListArgs {
    /// Include merged and removed tasks
    #[arg(short, long)]
    pub all: bool,
    /// List the tasks of remote R as last fetched (git task fetch R)
    #[arg(long, value_name = "R")]
    pub remote: Option<String>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct RemoteRow {
    id: String,
    mode: Mode,
    status: Status,
    branch: String,
    base: Option<String>,
    /// How the record here relates to the remote's: none, same, ahead, behind, diverged.
    #[schemars(extend("enum" = ["none", "same", "ahead", "behind", "diverged"]))]
    here: &'static str,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct RemoteListReport {
    #[schemars(extend("const" = "list"))]
    kind: &'static str,
    remote: String,
    tasks: Vec<RemoteRow>,
    /// How many of the tasks fetched are left out (merged, removed: `--all` lists them).
    hidden: usize,
    /// Remote records that were not taken, and why: what `fetch` reported.
    skipped: Vec<crate::remote::Skipped>,
}

impl Report for RemoteListReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        // As `fetch` says it.
        for s in &self.skipped {
            out.warn(format_args!(
                "skipped the remote's task '{}': {}",
                s.task, s.why
            ));
        }
        if self.hidden > 0 {
            out.note(format_args!(
                "{} more task{} on {} {} not live (merged or removed): git task list --remote {} --all",
                self.hidden,
                if self.hidden == 1 { "" } else { "s" },
                self.remote,
                if self.hidden == 1 { "is" } else { "are" },
                self.remote
            ));
        }
        if self.tasks.is_empty() {
            out.note(format_args!(
                "No tasks on {} (as last fetched: git task fetch {})",
                self.remote, self.remote
            ));
            return Ok(());
        }
        let mut rows = vec![["ID", "MODE", "STATUS", "BRANCH", "BASE", "HERE"]
            .map(String::from)
            .to_vec()];
        for t in &self.tasks {
            rows.push(vec![
                crate::output::escape(&t.id).into_owned(),
                t.mode.to_string(),
                t.status.to_string(),
                crate::output::escape(&t.branch).into_owned(),
                t.base.clone().unwrap_or_else(|| "-".into()),
                t.here.to_owned(),
            ]);
        }
        out.raw(&table::align(&rows))
    }
}

/// `list --remote R`: the remote's tasks from the refs last fetched (no network, no git process).
fn run_remote(ctx: &Ctx, args: &ListArgs, remote: &str) -> CmdResult {
    let remote = crate::remote::resolve(&ctx.repo, Some(remote))?;
    // What `fetch` reads, with the same branch prefix and the same records skipped.
    let (fetched, skipped) =
        crate::remote::list_checked(&ctx.repo, &ctx.settings.branch_prefix, &remote)?;
    let hidden = fetched
        .iter()
        .filter(|t| !args.all && !t.state.status.is_live())
        .count();
    let tasks = fetched
        .into_iter()
        .filter(|t| args.all || t.state.status.is_live())
        .map(|t| RemoteRow {
            mode: t.state.mode,
            status: t.state.status,
            branch: t.state.branch_short().to_owned(),
            base: t.state.base_branch_short().map(str::to_owned),
            id: t.id,
            here: t.here,
        })
        .collect();
    emit(
        ctx,
        &RemoteListReport {
            kind: "list",
            remote,
            tasks,
            hidden,
            skipped,
        },
        Done::Ok,
    )
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Row {
    id: String,
    mode: Mode,
    status: Status,
    branch: String,
    base: Option<String>,
    base_commit: String,
    #[serde(skip)]
    base_ref: Option<String>,
    #[serde(flatten)]
    summary: Summary,
    path: String,
    /// What collides with it: conflicting paths with its base's tip, and how many live tasks
    /// its trial merge conflicts with (`null` when not forecast: not an active worktree task).
    collisions: Option<Collisions>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct ListReport {
    #[schemars(extend("const" = "list"))]
    kind: &'static str,
    tasks: Vec<Row>,
    /// `--all`: the warm pool's entries (`git task pool status`), hidden otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pool: Option<Vec<crate::pool::Entry>>,
    /// Bases of live tasks that moved outside git-task since the tasks started (`git task audit`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<crate::audit::BaseMoved>,
}

impl Report for ListReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        self.tasks(out)?;
        for e in self.pool.iter().flatten() {
            out.line(format_args!(
                "pool entry {} (base {}, {})",
                e.name,
                crate::git::refs::short_name(&e.base),
                crate::output::escape(&e.path.display().to_string())
            ))?;
        }
        Ok(())
    }
}

impl ListReport {
    fn tasks(&self, out: &Out) -> std::io::Result<()> {
        if self.tasks.is_empty() {
            out.note("No tasks; start one with 'git task start <id>'");
            return Ok(());
        }
        let mut rows: Vec<Vec<Cow<str>>> = vec![[
            "ID",
            "MODE",
            "STATUS",
            "BRANCH",
            "BASE",
            "AHEAD/BEHIND",
            "CHANGED",
            "DIRTY",
            "COLLIDES",
            "PATH",
        ]
        .map(Cow::from)
        .to_vec()];
        for t in &self.tasks {
            rows.push(vec![
                crate::output::escape(&t.id),
                t.mode.as_str().into(),
                t.status.as_str().into(),
                crate::output::escape(&t.branch),
                match &t.base {
                    Some(base) => base.into(),
                    None => t.base_commit[..12.min(t.base_commit.len())].into(),
                },
                format!("+{}/-{}", t.summary.ahead, t.summary.behind).into(),
                t.summary.changed_files.to_string().into(),
                match t.summary.dirty {
                    Some(true) => "yes",
                    Some(false) => "no",
                    None => "-",
                }
                .into(),
                collides(t.collisions),
                crate::output::escape(&t.path),
            ]);
        }
        // One write for the whole table: a thousand tasks are a thousand lines.
        out.raw(&table::align(&rows))
    }
}

/// The COLLIDES column: `base` (conflicts with its base's tip), `N task(s)`, both, or `-`.
fn collides(c: Option<Collisions>) -> Cow<'static, str> {
    let Some(c) = c else {
        return "-".into();
    };
    let tasks = match c.with_tasks {
        0 => None,
        1 => Some("1 task".to_owned()),
        n => Some(format!("{n} tasks")),
    };
    match (c.with_base > 0, tasks) {
        (true, Some(t)) => format!("base, {t}").into(),
        (true, None) => "base".into(),
        (false, Some(t)) => t.into(),
        (false, None) => "-".into(),
    }
}

/// Fills in each active worktree task's collisions (from `cache`; see `overlaps::cache`).
fn forecast(repo: &crate::git::Repo, cache: Cache, rows: &mut [Row]) -> crate::Result<()> {
    let mut listed = Vec::new();
    let mut at = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        if r.status != Status::Active || r.mode != Mode::Worktree {
            continue;
        }
        let (Some(tip), Some(base_tip), Some(base)) = (
            r.summary.head.as_deref().and_then(|h| h.parse().ok()),
            r.summary.base_tip.as_deref().and_then(|h| h.parse().ok()),
            r.base_ref.clone(),
        ) else {
            continue;
        };
        let Ok(id) = TaskId::parse(&r.id) else {
            continue;
        };
        listed.push(Listed {
            id,
            tip,
            base,
            base_tip,
        });
        at.push(i);
    }
    for (i, c) in at.into_iter().zip(collisions(repo, cache, &listed)?) {
        rows[i].collisions = Some(c);
    }
    Ok(())
}

pub fn run(ctx: &Ctx, args: &ListArgs) -> CmdResult {
    if let Some(remote) = &args.remote {
        return run_remote(ctx, args, remote);
    }
    // The COLLIDES cache is read on another core while the worktrees are looked at.
    let common = ctx.repo.common_dir();
    let (listed, cache) = summary::list(&ctx.repo, args.all, || Cache::load(common));
    let cache = cache.unwrap_or_else(|| Cache::load(common));
    let listed = listed?;
    let moved = crate::audit::base_moved(
        &ctx.repo,
        listed.iter().map(|(s, _)| s).filter(|s| s.status.is_live()),
    );
    let mut tasks: Vec<Row> = listed
        .into_iter()
        .map(|(s, summary)| Row {
            id: s.id.to_string(),
            mode: s.mode,
            status: s.status,
            branch: s.branch_short().to_owned(),
            base: s.base_branch_short().map(str::to_owned),
            base_commit: s.base_commit.clone(),
            base_ref: s.base_branch.as_ref().map(String::from),
            summary,
            path: s.worktree,
            collisions: None,
        })
        .collect();
    forecast(&ctx.repo, cache, &mut tasks)?;
    // The worktrees whose commits should run the check: live worktree tasks', and the one a
    // patch-mode task guards.
    let unchecked = crate::output::enforcement::unchecked_tasks(
        &ctx.repo,
        tasks
            .iter()
            .filter(|t| match t.mode {
                Mode::Worktree => t.status.is_live(),
                Mode::Patch => crate::hooks::patch::guards(t.status),
            })
            .map(|t| (t.id.as_str(), t.mode, t.path.as_str())),
    );
    let done = emit(
        ctx,
        &ListReport {
            kind: "list",
            tasks,
            pool: match args.all {
                true => Some(crate::pool::entries(&ctx.repo, &ctx.settings.worktree_dir)?),
                false => None,
            },
            warnings: moved.clone(),
        },
        Done::Ok,
    );
    super::warn_base_moved(&ctx.out, &moved);
    crate::output::enforcement::warn_unchecked(&ctx.out, &unchecked);
    done
}

/// The JSON Schemas of what `--json` prints, one per shape (published in `schema/`).
pub fn json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    use crate::output::schema_of;
    vec![
        schema_of::<ListReport>(generator),
        schema_of::<RemoteListReport>(generator),
    ]
}
