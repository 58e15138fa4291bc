//! `git task status`: one task in detail.

use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::contract::ContractFile;
use crate::git::diff::ChangeKind;
use crate::lifecycle::summary::{self, Dirty, RefMap, Summary};
use crate::output::{Out, Report};
use crate::record::Entry;
use crate::task::{layout, Mode, Status, TaskId};

/// Show one task: contract, changed files, checkpoints and recent events
#[derive(clap::Args, Debug)]
pub struct StatusArgs {
    /// Task id (default: the active task of this worktree)
    #[arg(value_parser = TaskId::parse)]
    pub id: Option<TaskId>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct FileRow {
    path: String,
    change: ChangeKind,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct StatusReport {
    #[schemars(extend("const" = "status"))]
    kind: &'static str,
    task: String,
    mode: Mode,
    status: Status,
    branch: String,
    base: Option<String>,
    base_commit: String,
    worktree: String,
    #[serde(flatten)]
    summary: Summary,
    contract: ContractFile,
    /// The globs this task claims (`git task claim`).
    claims: Vec<String>,
    /// Paths other live tasks claim: off-limits to this one.
    claimed_by_others: Vec<crate::claims::Claim>,
    files: Vec<FileRow>,
    checkpoints: Vec<String>,
    attempts: Vec<String>,
    events: Vec<Entry>,
    /// Its base moved outside git-task since it started (`git task audit`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<crate::audit::BaseMoved>,
}

impl Report for StatusReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        use owo_colors::OwoColorize;
        let p = &out.palette;
        out.line(format_args!(
            "task {} ({}, {})",
            self.task.style(p.id),
            self.mode,
            self.status
        ))?;
        out.line(format_args!("branch    {}", self.branch))?;
        out.line(format_args!(
            "base      {} {}",
            self.base.as_deref().unwrap_or("-"),
            &self.base_commit[..12.min(self.base_commit.len())]
        ))?;
        out.line(format_args!(
            "worktree  {}",
            crate::output::escape(&self.worktree)
        ))?;
        out.line(format_args!(
            "ahead {} behind {}, {} changed file(s){}",
            self.summary.ahead,
            self.summary.behind,
            self.summary.changed_files,
            match self.summary.dirty {
                Some(true) => ", uncommitted changes",
                _ => "",
            }
        ))?;
        let c = &self.contract;
        out.line("contract")?;
        out.line(format_args!(
            "  allowed    {}",
            if c.allowed.is_empty() {
                "(any path not forbidden)".to_owned()
            } else {
                crate::output::escape(&c.allowed.join(" ")).into_owned()
            }
        ))?;
        if !c.forbidden.is_empty() {
            out.line(format_args!(
                "  forbidden  {}",
                crate::output::escape(&c.forbidden.join(" "))
            ))?;
        }
        if c.allow_new_files == Some(false) {
            out.line("  no new files")?;
        }
        if c.allow_deletions == Some(false) {
            out.line("  no deletions")?;
        }
        if let Some(max) = c.max_changed_files {
            out.line(format_args!("  at most {max} changed files"))?;
        }
        for cmd in c.check_commands() {
            out.line(format_args!("  check      {cmd}"))?;
        }
        if !self.claims.is_empty() {
            out.line(format_args!(
                "claims      {}",
                crate::output::escape(&self.claims.join(" "))
            ))?;
        }
        for other in &self.claimed_by_others {
            out.line(format_args!(
                "claimed by {}: {} (off-limits)",
                other.task,
                crate::output::escape(&other.globs.join(" "))
            ))?;
        }
        if !self.files.is_empty() {
            out.line("changes")?;
            for f in &self.files {
                let mark = match f.change {
                    ChangeKind::Added => "A",
                    ChangeKind::Modified => "M",
                    ChangeKind::Deleted => "D",
                };
                out.line(format_args!("  {mark} {}", crate::output::escape(&f.path)))?;
            }
        }
        if !self.checkpoints.is_empty() {
            out.line(format_args!("checkpoints {}", self.checkpoints.len()))?;
        }
        if !self.attempts.is_empty() {
            out.line("attempts")?;
            for a in &self.attempts {
                out.line(format_args!("  {a}"))?;
            }
        }
        if let Some(crate::record::event::Event::Blocked(b)) = self.events.last().map(|e| &e.event)
        {
            out.line(format_args!(
                "blocked     {}: nothing eligible, {} changed path{} left out",
                b.during,
                b.skipped.len(),
                if b.skipped.len() == 1 { "" } else { "s" }
            ))?;
        }
        out.line("recent events")?;
        for e in self
            .events
            .iter()
            .rev()
            .take(5)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
        {
            out.line(format_args!("  {} {}", &e.commit[..12], e.event.name()))?;
        }
        Ok(())
    }
}

pub fn run(ctx: &Ctx, args: &StatusArgs) -> CmdResult {
    let record = crate::resolve::resolve(&ctx.repo, &ctx.settings, args.id.as_ref())?;
    let id = record.state.task_id();
    let summary = summary::summarize(
        &ctx.repo,
        &RefMap::new(&ctx.repo),
        &record.state,
        Dirty::Quick,
        &mut Default::default(),
    )?;
    let mut files = Vec::new();
    let snapshot = match record.state.mode {
        Mode::Patch if summary.worktree_exists && record.state.status.is_live() => {
            ctx.repo.find_ref(&layout::snapshot_ref(&id))?
        }
        _ => None,
    };
    if let Some(snap) = snapshot {
        // Patch mode: the files that differ from the snapshot's (SPEC §9).
        let worktree = std::path::Path::new(&record.state.worktree);
        for c in crate::snapshot::changes_since(&ctx.repo, snap, worktree)?.1 {
            files.push(FileRow {
                path: c.path,
                change: c.kind,
            });
        }
    } else if let (Some(head), Some(base)) = (
        summary.head.as_deref(),
        record.state.base_commit_id(&ctx.repo)?,
    ) {
        let head = head
            .parse()
            .map_err(|e| crate::Error::repo("bad object id", e))?;
        for c in summary::task_changes(&ctx.repo, base, head)? {
            files.push(FileRow {
                path: c.path,
                change: c.kind,
            });
        }
    }
    let prefix = layout::task_prefix(&id);
    let names = |kind: &str| -> crate::Result<Vec<String>> {
        Ok(ctx
            .repo
            .refs_under(&format!("{prefix}{kind}/"))?
            .into_iter()
            .map(|(n, _)| n)
            .collect())
    };
    let events = crate::record::events(&ctx.repo, &record)?;
    let s = &record.state;
    let report = StatusReport {
        kind: "status",
        task: s.id.to_string(),
        mode: s.mode,
        status: s.status,
        branch: s.branch_short().to_owned(),
        base: s.base_branch_short().map(str::to_owned),
        base_commit: s.base_commit.clone(),
        worktree: s.worktree.clone(),
        summary,
        contract: record.contract.clone(),
        claims: crate::claims::of_task(&ctx.repo, &record)?,
        claimed_by_others: crate::claims::of_others(&ctx.repo, &s.id)?,
        files,
        checkpoints: names("checkpoints")?,
        attempts: names("attempts")?,
        events,
        warnings: crate::audit::base_moved(&ctx.repo, [s]),
    };
    let done = emit(ctx, &report, Done::Ok);
    super::warn_base_moved(&ctx.out, &report.warnings);
    let checked = match s.mode {
        Mode::Worktree => s.status.is_live(),
        Mode::Patch => crate::hooks::patch::guards(s.status),
    };
    if checked {
        crate::output::enforcement::warn_unchecked(
            &ctx.out,
            &crate::output::enforcement::unchecked_task(
                &ctx.repo,
                s.id.as_str(),
                s.mode,
                s.worktree.as_str(),
            ),
        );
    }
    done
}

/// The JSON Schemas of what `--json` prints, one per shape (published in `schema/`).
pub fn json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    use crate::output::schema_of;
    vec![schema_of::<StatusReport>(generator)]
}
