//! `git task fetch`: bring a remote's tasks into `refs/remotes/<R>/…`.

use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::output::{Out, Report};
use crate::remote::{RemoteTask, Skipped};

/// Fetch a remote's tasks without touching local ones
#[derive(clap::Args, Debug)]
pub struct FetchArgs {
    /// The remote (default: origin)
    pub remote: Option<String>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct FetchReport {
    #[schemars(extend("const" = "fetch"))]
    kind: &'static str,
    remote: String,
    tasks: Vec<RemoteTask>,
    /// Remote records that were not taken (a record is untrusted input), and why.
    skipped: Vec<Skipped>,
    /// Tasks live here that another machine merged: this machine's work saved as attempts,
    /// then its worktree and branch removed (or why they were left).
    merged_elsewhere: Vec<crate::remote::ended::MergedElsewhere>,
}

impl Report for FetchReport {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        let n = self.tasks.len();
        out.line(format_args!(
            "Fetched {n} task{} from {}",
            if n == 1 { "" } else { "s" },
            self.remote
        ))?;
        for s in &self.skipped {
            out.warn(format_args!(
                "skipped the remote's task '{}': {}",
                s.task, s.why
            ));
        }
        for m in &self.merged_elsewhere {
            match &m.left {
                None => out.note(m.describe()),
                Some(_) => out.warn(m.describe()),
            }
        }
        for t in self.tasks.iter().filter(|t| t.here == "none") {
            out.note(format_args!(
                "'{}' is not here yet: git task adopt {} --remote {}",
                t.id, t.id, self.remote
            ));
        }
        Ok(())
    }
}

pub fn run(ctx: &Ctx, args: &FetchArgs) -> CmdResult {
    let remote = crate::remote::resolve(&ctx.repo, args.remote.as_deref())?;
    let (tasks, skipped, merged_elsewhere) =
        crate::remote::fetch_tasks(&ctx.repo, &ctx.settings.branch_prefix, &remote)?;
    emit(
        ctx,
        &FetchReport {
            kind: "fetch",
            remote,
            tasks,
            skipped,
            merged_elsewhere,
        },
        Done::Ok,
    )
}

/// The JSON documents `fetch --json` prints (`schema/`).
pub fn json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    vec![crate::output::schema_of::<FetchReport>(generator)]
}
