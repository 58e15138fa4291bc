//! `git task pool fill [N] [--base REV] | status | drain`: the warm pool (`pool`).

use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::config::POOL_SIZE_MAX;
use crate::output::{Out, Report};
use crate::pool::{self, Entry};

/// Keep worktrees checked out ahead of time, so that start takes one instead of checking out
#[derive(clap::Args, Debug)]
pub struct PoolArgs {
    #[command(subcommand)]
    pub action: PoolAction,
}

/// What to do with the pool.
#[derive(clap::Subcommand, Debug)]
pub enum PoolAction {
    /// Fill the pool of a base branch up to N entries (at most 64; default: task.poolSize, else 1), in the background
    Fill {
        /// How many entries the pool of the base should hold
        n: Option<usize>,
        /// The base branch (default: the current branch)
        #[arg(long, value_name = "REV")]
        base: Option<String>,
        /// Fill in this process and wait until it is done
        #[arg(long)]
        wait: bool,
        /// Run as the detached background filler (set by git-task itself)
        #[arg(long, hide = true)]
        detached: bool,
    },
    /// List the pool's entries
    Status,
    /// Delete every pool entry
    Drain,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct PoolReport {
    #[schemars(extend("const" = "pool"))]
    kind: &'static str,
    /// `fill`, `status` or `drain`.
    action: &'static str,
    /// `fill` in the background: the filler started.
    #[serde(skip_serializing_if = "Option::is_none")]
    started: Option<bool>,
    /// `fill --wait`: another fill was running.
    #[serde(skip_serializing_if = "Option::is_none")]
    busy: Option<bool>,
    /// `status`: the pid of the running fill.
    #[serde(skip_serializing_if = "Option::is_none")]
    filling: Option<u32>,
    entries: Vec<Entry>,
}

impl Report for PoolReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        match self.action {
            "fill" if self.started == Some(true) => {
                out.line(format_args!("filling the pool in the background"))
            }
            "fill" if self.started == Some(false) => {
                out.warn("could not start the background fill; run 'git task pool fill --wait'");
                Ok(())
            }
            "fill" if self.busy == Some(true) => {
                out.note("another pool fill is running");
                Ok(())
            }
            "fill" => {
                for e in &self.entries {
                    out.line(format_args!(
                        "filled {} at {} ({})",
                        e.name,
                        short(&e.commit),
                        e.path.display()
                    ))?;
                }
                Ok(())
            }
            "drain" => {
                for e in &self.entries {
                    out.line(format_args!("deleted {} ({})", e.name, e.path.display()))?;
                }
                if self.entries.is_empty() {
                    out.note("The pool is empty");
                }
                Ok(())
            }
            _ => {
                if self.entries.is_empty() {
                    out.note("The pool is empty; fill it with 'git task pool fill [N]'");
                }
                for e in &self.entries {
                    out.line(format_args!(
                        "{}  {}  {}  {}",
                        e.name,
                        crate::git::refs::short_name(&e.base),
                        short(&e.commit),
                        e.path.display()
                    ))?;
                }
                if let Some(pid) = self.filling {
                    out.line(format_args!("filling (process {pid})"))?;
                }
                Ok(())
            }
        }
    }
}

fn short(id: &str) -> &str {
    &id[..id.len().min(12)]
}

fn report(action: &'static str, entries: Vec<Entry>) -> PoolReport {
    PoolReport {
        kind: "pool",
        action,
        started: None,
        busy: None,
        filling: None,
        entries,
    }
}

/// The JSON Schemas of what `--json` prints, one per shape (published in `schema/`).
pub fn json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    use crate::output::schema_of;
    vec![schema_of::<PoolReport>(generator)]
}

/// Runs `pool fill`, `pool status` or `pool drain`.
pub fn run(ctx: &Ctx, args: &PoolArgs) -> CmdResult {
    let dir = &ctx.settings.worktree_dir;
    match &args.action {
        PoolAction::Fill {
            n,
            base,
            wait,
            detached,
        } => {
            if let Some(n) = n.filter(|&n| n > POOL_SIZE_MAX) {
                return Err(crate::Error::input(format!(
                    "a pool holds at most {POOL_SIZE_MAX} worktrees, not {n}"
                ))
                .hint(format!(
                    "each entry is a whole checkout of the base: ask for {POOL_SIZE_MAX} or fewer"
                )));
            }
            let base = pool::resolve_base(&ctx.repo, base.as_deref())?;
            let size = n.unwrap_or(ctx.settings.pool_size.max(1));
            if *detached {
                pool::detach();
            }
            if !*wait {
                let mut r = report("fill", Vec::new());
                r.started = Some(pool::spawn_fill(&ctx.repo, &base, size));
                return emit(ctx, &r, Done::Ok);
            }
            let filled = pool::fill(&ctx.repo, dir, &base, size)?;
            let mut r = report("fill", filled.made);
            r.busy = Some(filled.busy);
            emit(ctx, &r, Done::Ok)
        }
        PoolAction::Status => {
            let mut r = report("status", pool::entries(&ctx.repo, dir)?);
            r.filling = pool::filler(&ctx.repo);
            emit(ctx, &r, Done::Ok)
        }
        PoolAction::Drain => {
            let r = report("drain", pool::drain(&ctx.repo, dir)?);
            emit(ctx, &r, Done::Ok)
        }
    }
}
