//! `git task trust [--yes]`: review and accept the settings git-task pins (SPEC §2 principle 8,
//! §4): the `task.*` settings and the git settings that run commands, as they are in git
//! config now, against the trusted snapshot `<common dir>/git-task/trusted.toml`.
//! `git task trust --records [<id>..] --yes` adopts records an older git-task wrote.

use crate::commands::Ctx;
use crate::commands::{emit, CmdResult, Done};
use crate::config::trusted::{self, Difference};
use crate::output::{Out, Report};
use crate::task::TaskId;
use std::io::{BufRead, IsTerminal, Write};

/// Review and accept the task.* settings and the git settings that run commands, as git config has them now
#[derive(clap::Args, Debug)]
pub struct TrustArgs {
    /// Accept without asking: pin the settings as they are now
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Adopt the task records present (or those of the tasks named) as genuine, for a repository an older git-task used
    #[arg(long)]
    pub records: bool,
    /// With --records: the tasks whose records to adopt (default: every record the ledger does not know)
    #[arg(value_parser = TaskId::parse, requires = "records", value_name = "ID")]
    pub ids: Vec<TaskId>,
}

/// One record adopted (or that `--yes` would adopt).
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Record {
    /// The task id.
    task: String,
    /// The record's tip, now on file as the one git-task wrote.
    tip: String,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Trusted {
    #[schemars(extend("const" = "trust"))]
    kind: &'static str,
    /// The trusted snapshot's path.
    file: String,
    /// Whether a snapshot existed before this run.
    existed: bool,
    /// Every setting whose value in git config differs from the trusted one (before this run).
    differences: Vec<Difference>,
    /// Whether the settings as they are now were written as the trusted ones.
    accepted: bool,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct TrustedRecords {
    #[schemars(extend("const" = "trust_records"))]
    kind: &'static str,
    /// The records that do not verify: adopted with --yes, else what --yes would adopt.
    records: Vec<Record>,
    /// Whether they were adopted.
    accepted: bool,
}

impl Report for Trusted {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        if self.differences.is_empty() {
            if self.existed {
                out.line("The settings in git config are the trusted ones.")?;
            } else {
                out.line(format_args!(
                    "Pinned the settings as they are (nothing set) in {}",
                    self.file
                ))?;
            }
            return Ok(());
        }
        if !self.accepted {
            out.line(differences_text(&self.differences, self.existed))?;
            out.hint("accept them with: git task trust --yes");
            return Ok(());
        }
        out.line(format_args!(
            "Trusted {} setting{} (pinned in {}):",
            self.differences.len(),
            if self.differences.len() == 1 { "" } else { "s" },
            self.file
        ))?;
        for d in &self.differences {
            out.line(format_args!("  {d}"))?;
        }
        Ok(())
    }
}

impl Report for TrustedRecords {
    fn human(&self, out: &Out) -> std::io::Result<()> {
        if self.records.is_empty() {
            return out.line("Every task record verifies: nothing to adopt.");
        }
        out.line(if self.accepted {
            "Adopted as written by git-task:"
        } else {
            "These records are not the ones git-task last wrote (or it never knew them):"
        })?;
        for r in &self.records {
            out.line(format_args!("  {} {}", r.task, r.tip))?;
        }
        if !self.accepted {
            out.hint("adopt them only if you trust them: git task trust --records --yes");
        }
        Ok(())
    }
}

/// The differences as a person reads them: `key: trusted -> now`, one a line.
fn differences_text(differences: &[Difference], existed: bool) -> String {
    let mut text = String::from(if existed {
        "These settings in git config differ from the trusted ones (trusted -> git config now):"
    } else {
        "No settings are trusted yet; these are set in git config (unset -> git config now):"
    });
    for d in differences {
        text.push_str(&format!("\n  {d}"));
    }
    text.push_str(
        "\nUntil they are trusted, git-task uses the trusted task.* values and refuses to run git \
         while a git setting that runs commands differs.",
    );
    text
}

pub fn run(ctx: &Ctx, args: &TrustArgs) -> CmdResult {
    if args.records {
        return records(ctx, args);
    }
    let repo = &ctx.repo;
    let snapshot = trusted::read(repo)?;
    let differences = trusted::all_differences(repo, snapshot.as_ref());
    let mut report = Trusted {
        kind: "trust",
        file: trusted::path(repo).display().to_string(),
        existed: snapshot.is_some(),
        differences,
        accepted: false,
    };
    let nothing_new = report.differences.is_empty();
    if nothing_new && report.existed {
        return emit(ctx, &report, Done::Ok);
    }
    let accept = nothing_new || args.yes || ask(ctx, &report);
    if !accept {
        return emit(ctx, &report, Done::Negative);
    }
    crate::config::check_config(repo)?;
    trusted::write(repo, &trusted::capture(repo))?;
    report.accepted = true;
    emit(ctx, &report, Done::Ok)
}

/// On a terminal (and without --json): shows the differences and asks; anything but `y` is no.
fn ask(ctx: &Ctx, report: &Trusted) -> bool {
    if ctx.out.is_json() || !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
        return false;
    }
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "{}",
        differences_text(&report.differences, report.existed)
    );
    let _ = write!(err, "Trust these settings? [y/N] ");
    let _ = err.flush();
    let mut answer = String::new();
    if std::io::stdin().lock().read_line(&mut answer).is_err() {
        return false;
    }
    matches!(answer.trim(), "y" | "Y" | "yes" | "Yes")
}

/// `--records`: the records that do not verify, adopted with `--yes`.
fn records(ctx: &Ctx, args: &TrustArgs) -> CmdResult {
    let repo = &ctx.repo;
    if args.yes {
        let adopted = crate::ledger::records::trust(repo, &args.ids)?;
        let records = adopted
            .into_iter()
            .map(|(task, tip)| Record {
                task,
                tip: tip.to_string(),
            })
            .collect();
        return emit(
            ctx,
            &TrustedRecords {
                kind: "trust_records",
                records,
                accepted: true,
            },
            Done::Ok,
        );
    }
    let mut records = Vec::new();
    for (name, tip) in repo.refs_under(crate::task::layout::TASKS_NS)? {
        let Some(id) = name
            .strip_prefix(crate::task::layout::TASKS_NS)
            .and_then(|rest| rest.strip_suffix("/record"))
            .filter(|id| !id.contains('/'))
        else {
            continue;
        };
        if !args.ids.is_empty() && !args.ids.iter().any(|t| t.as_str() == id) {
            continue;
        }
        if crate::ledger::records::verify(repo, id, Some(tip)).is_err() {
            records.push(Record {
                task: id.to_owned(),
                tip: tip.to_string(),
            });
        }
    }
    let done = if records.is_empty() {
        Done::Ok
    } else {
        Done::Negative
    };
    emit(
        ctx,
        &TrustedRecords {
            kind: "trust_records",
            records,
            accepted: false,
        },
        done,
    )
}

/// The JSON Schemas of what `--json` prints, one per shape (published in `schema/`).
pub fn json_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<schemars::Schema> {
    use crate::output::schema_of;
    vec![
        schema_of::<Trusted>(generator),
        schema_of::<TrustedRecords>(generator),
    ]
}
