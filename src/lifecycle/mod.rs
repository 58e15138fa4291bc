//! What is done to a task in its life: start, reset, remove, drop, sweep, check, and the
//! summaries `list` and `status` show.

pub mod branch;
pub mod check;
pub mod drop;
pub mod remove;
pub mod reset;
pub mod start;
pub mod summary;
pub mod sweep;

/// Refuses (exit 1, `record_tampered`) a record whose frozen parts (contract, policy, task
/// branch, base branch, mode) are not those git-task recorded at start: a verb that moves or
/// deletes the task's branch never acts on one rewritten to name `main`, even once the user
/// adopted it (`trust --records`); `nothing` says what was not done (`nothing was reset`).
pub(crate) fn frozen_untouched(
    repo: &crate::git::Repo,
    record: &crate::record::Record,
    nothing: &str,
) -> crate::Result<()> {
    match crate::record::frozen::verify(repo, record)? {
        None => Ok(()),
        Some(t) => Err(
            crate::Error::negative(format!("record_tampered: {}; {nothing}", t.why))
                .with_code("record_tampered")
                .hint(format!(
                    "see what changed: git log -p {}",
                    crate::task::layout::record_ref(&record.state.id)
                )),
        ),
    }
}
