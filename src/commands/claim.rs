//! `git task claim`: make paths exclusive to one task.

use crate::claims::Conflict;
use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::output::{Out, Report};
use crate::task::TaskId;

/// Claim paths for one task: while it is live, no other task may change them
#[derive(clap::Args, Debug)]
pub struct ClaimArgs {
    /// Task id
    #[arg(value_parser = TaskId::parse)]
    pub id: TaskId,
    /// Globs to claim (contract glob rules: 'src/db/**', '*.lock')
    #[arg(value_name = "GLOB", required = true)]
    pub globs: Vec<String>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Claimed {
    #[schemars(extend("const" = "claim"))]
    kind: &'static str,
    task: String,
    /// Every glob the task claims now.
    claims: Vec<String>,
}

impl Report for Claimed {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        out.note(format_args!(
            "Task '{}' claims: {}",
            self.task,
            self.claims.join(", ")
        ));
        Ok(())
    }
}

/// The refusal: another live task claims a path these globs cover.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub(super) struct Refused {
    #[schemars(extend("const" = "claimed_by"))]
    pub kind: &'static str,
    pub task: String,
    #[serde(flatten)]
    pub conflict: Conflict,
    /// What to do next (`hint: …` lines).
    pub hints: Vec<String>,
    /// The next steps as `git task mcp` tool calls (none: a claim has no tool).
    pub next: Vec<crate::error::Call>,
}

impl Report for Refused {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        let c = &self.conflict;
        out.line(format_args!(
            "task '{}' claims {}{}",
            c.claimed_by,
            c.globs.join(", "),
            match &c.example {
                Some(path) => format!(" (e.g. {path})"),
                None => String::new(),
            }
        ))?;
        for hint in &self.hints {
            out.hint(hint);
        }
        Ok(())
    }
}

pub fn run(ctx: &Ctx, args: &ClaimArgs) -> CmdResult {
    let record = crate::resolve::existing(&ctx.repo, &args.id)?;
    match crate::claims::claim(&ctx.repo, &record, &args.globs)? {
        Ok(claims) => emit(
            ctx,
            &Claimed {
                kind: "claim",
                task: record.state.id.into(),
                claims,
            },
            Done::Ok,
        ),
        Err(conflict) => emit(
            ctx,
            &Refused {
                kind: "claimed_by",
                task: record.state.id.into(),
                hints: vec![format!(
                    "wait until '{}' is merged or dropped, or ask for it: git task release {} GLOB..",
                    conflict.claimed_by, conflict.claimed_by
                )],
                next: Vec::new(),
                conflict,
            },
            Done::Negative,
        ),
    }
}

/// The JSON Schemas of what `--json` prints, one per shape (published in `schema/`).
pub fn json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    use crate::output::schema_of;
    vec![
        schema_of::<Claimed>(generator),
        schema_of::<Refused>(generator),
    ]
}
