//! The texts a merge writes: commit messages with the `Task-Id` trailer, and the note.

use super::select::short;
use super::Strategy;
use crate::checks::Run;
use crate::git::merge::CommitInfo;
use crate::git::Repo;
use crate::record::Record;
use crate::task::TaskId;

/// Adds the `Task-Id: <id>` trailer to `message`, joining a trailer block it already ends with.
pub(super) fn with_trailer(message: &str, id: &TaskId) -> String {
    let body = message.trim_end();
    let last_para = body.rsplit("\n\n").next().unwrap_or("");
    let is_trailer_block = body.contains("\n\n")
        && last_para
            .lines()
            .all(|l| l.contains(": ") && !l.starts_with(' '));
    if is_trailer_block {
        format!("{body}\nTask-Id: {id}\n")
    } else {
        format!("{body}\n\nTask-Id: {id}\n")
    }
}

/// Builds the squash commit's message: `-m`, or the task's single commit message, or a summary of its commits; plus the `Task-Id` trailer.
pub fn squash_message(id: &TaskId, own: &[CommitInfo], custom: Option<&str>) -> String {
    let text = match (custom, own) {
        (Some(m), _) => m.trim().to_owned(),
        (None, []) => format!("task {id}"),
        (None, [one]) => one.message.trim().to_owned(),
        (None, many) => {
            let list: Vec<String> = many.iter().map(|c| format!("* {}", c.subject())).collect();
            format!("task {id}: {}\n\n{}", many[0].subject(), list.join("\n"))
        }
    };
    with_trailer(&text, id)
}

/// Builds the merge commit's message: `-m`, or "Merge task '<id>' into <branch>" with the task's commit subjects; plus the trailer.
pub(super) fn merge_message(
    id: &TaskId,
    target: &str,
    own: &[CommitInfo],
    custom: Option<&str>,
) -> String {
    let text = match custom {
        Some(m) => m.trim().to_owned(),
        None => {
            let mut text = format!("Merge task '{id}' into {}", short(target));
            if !own.is_empty() {
                let list: Vec<String> = own.iter().map(|c| format!("* {}", c.subject())).collect();
                text.push_str(&format!("\n\n{}", list.join("\n")));
            }
            text
        }
    };
    with_trailer(&text, id)
}

/// The note put on the commit that carries a merged task (`git log --notes=tasks`).
pub(super) fn note_text(
    repo: &Repo,
    rec: &Record,
    strategy: Strategy,
    target: &str,
    checks: Option<&Run>,
) -> String {
    let digest = crate::git::objects::hash_blob(repo, rec.contract_text.as_bytes()).to_string();
    let mut text = format!(
        "git-task: merged\nTask: {}\nEvent: merged\nMode: {strategy}\nInto: {}\nContract: {digest}\n",
        rec.state.id,
        short(target)
    );
    match checks {
        Some(c) if c.skipped => text.push_str("Checks: skipped (--no-checks)\n"),
        Some(c) if c.commands.is_empty() => text.push_str("Checks: none\n"),
        Some(c) => {
            text.push_str(&format!("Checks: {} passed\n", c.commands.len()));
            for o in &c.commands {
                text.push_str(&format!("  ok  {}  ({} ms)\n", o.command, o.millis));
            }
        }
        None => text.push_str("Checks: none\n"),
    }
    text
}
