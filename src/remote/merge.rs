//! `git task merge <id>.. --remote R`: the gate, run on the remote's target as fetched, and a
//! landing pushed only onto exactly the tip it was judged on.
//!
//! Each try: fetch R; reconcile the tasks' records and the notes with R's (append-only); compute,
//! judge and check the landing on the fetched tip (`merge::remote::plan_onto`, the local gate's
//! own code); then one atomic push moves the target, each task's record (`checks`, `merged`), the
//! notes and the task branches, every ref with a lease on the value fetched
//! (`--force-with-lease=<ref>:<expected>`). A lease that fails means R moved: start again from
//! the fetch; after [`TRIES`] tries, nothing landed and the answer is `remote_moved` (exit 1).
//! Only after the push do the same refs move here, and the task worktrees go.

use super::{fetch, lease_failed, merge_notes, reconcile, record_pushed};
use crate::config::Settings;
use crate::error::{Error, Result};
use crate::git::cli::{self, PushRef};
use crate::git::Repo;
use crate::merge::remote::{finish, plan_onto, remote_moved, Plan};
use crate::merge::{Options, Outcome};
use crate::task::{layout, TaskId};

/// How many times the merge starts again from the fetch when the remote moved meanwhile.
pub const TRIES: u32 = 8;

/// Merges `ids` into their base branch (or `opts.into`) on `remote`.
pub fn merge(
    repo: &Repo,
    settings: &Settings,
    ids: &[TaskId],
    opts: &Options,
    remote: &str,
) -> Result<Outcome> {
    let mut target = String::new();
    // What was done here for tasks another machine had merged (reported with the answer).
    let mut settled = Vec::new();
    for tries in 1..=TRIES {
        fetch(repo, remote)?;
        for id in ids {
            crate::record::load_existing(repo, id)?;
            // Merged by another machine meanwhile: this machine's work is saved and its
            // worktree and branch go, before the record takes the ending in.
            if let Some(done) = super::ended::settle(repo, remote, id)? {
                settled.push(done.describe());
            }
            reconcile(repo, remote, id)?;
        }
        merge_notes(repo, remote)?;
        let tip_of = |name: &str| repo.find_ref(&layout::remote_branch_ref(remote, name));
        let lock = format!("refs/remotes/{remote}");
        let planned = match plan_onto(repo, settings, ids, opts, &lock, &tip_of)? {
            Plan::Answer(Outcome::Landed(mut landed)) => {
                landed.warnings.extend(settled);
                return Ok(Outcome::Landed(landed));
            }
            Plan::Answer(outcome) => return Ok(outcome),
            Plan::Ready(planned) => planned,
        };
        target = planned.target().to_owned();
        let mut push = Vec::new();
        if planned.new_tip() != planned.old_tip() {
            push.push(PushRef {
                name: target.clone(),
                new: Some(planned.new_tip()),
                expect: Some(planned.old_tip()),
            });
        }
        let tips = planned.tasks();
        for (name, new) in planned.ref_changes() {
            let copy = layout::remote_copy(remote, &name)
                .expect("a merge changes branches, task refs and notes only");
            let theirs = repo.find_ref(&copy)?;
            if new.is_none() {
                // A task branch is deleted on the remote only where all it holds landed.
                let Some(theirs) = theirs else { continue };
                let mut landed = false;
                for (_, tip) in &tips {
                    landed |= matches!(
                        super::relation(repo, Some(*tip), Some(theirs))?,
                        super::Relation::Same(_) | super::Relation::Ahead { .. }
                    );
                }
                if !landed {
                    continue;
                }
            }
            // Records and notes only ever grow: a lease alone would let a push rewind them.
            if let (Some(new), Some(theirs)) = (new, theirs) {
                if !matches!(
                    super::relation(repo, Some(new), Some(theirs))?,
                    super::Relation::Same(_) | super::Relation::Ahead { .. }
                ) {
                    return Err(Error::repo_msg(format!(
                        "{name} here does not contain '{remote}''s; nothing was merged"
                    ))
                    .hint(format!(
                        "fetch and push it first: git task push --remote {remote}"
                    )));
                }
            }
            push.push(PushRef {
                name,
                new,
                expect: theirs,
            });
        }
        let run = cli::push_atomic(super::git_dir(repo), remote, &push)?;
        if run.success {
            record_pushed(repo, remote, &push)?;
            let mut landed = finish(repo, planned)?;
            landed.warnings.extend(settled);
            return Ok(Outcome::Landed(landed));
        }
        if !lease_failed(&run) {
            return Err(Error::repo_msg(format!(
                "'{remote}' refused the push: {}",
                run.stderr.trim()
            ))
            .hint("nothing was merged on the remote")
            .hint(format!(
                "check that you may push there: git push --dry-run {remote}"
            )));
        }
        drop(planned);
        // Someone else landed first: back off a little so that the racers spread out.
        std::thread::sleep(std::time::Duration::from_millis(
            20 * u64::from(tries) + u64::from(std::process::id() % 50),
        ));
    }
    Ok(Outcome::Refused(remote_moved(&target, remote, TRIES)))
}
