//! The queue's runner (`queue run`): lands the queue of a branch, batch by batch, every landing
//! through [`crate::merge::merge_batch`]; bisects a batch whose checks fail (module docs of
//! `queue`).
//!
//! Long on purpose: settling, bisecting, resuming from the journal and ejecting all move one
//! `Runner`'s state, and read best side by side.

use super::store::{self, Failing, Journal};
use super::{details, event_update, Done, Queue, EJECTED, LANDED};
use crate::config::Settings;
use crate::error::{Error, Result};
use crate::git::{ObjectId, Repo};
use crate::merge::{Landed, Options, Outcome, Probe, Refusal, Verified};
use crate::record;
use crate::task::{BranchName, Mode, Status, TaskId};
use serde_json::Value;

/// What `queue run` was asked to do.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The branch whose queue to land (`None`: every branch that has one).
    pub into: Option<String>,
    /// At most this many tasks per landing (and per check run).
    pub batch: usize,
    /// At most this many check runs at once.
    pub jobs: usize,
    /// Keep watching for tasks added to the queue instead of stopping when it is empty.
    pub follow: bool,
    /// Stream the checks' output to stderr as they run (a terminal is watching).
    pub stream_checks: bool,
}

/// What the runner is doing, told as it happens (the command shows it).
#[derive(Clone, Debug)]
pub enum Step<'a> {
    /// A landing of these tasks is being computed, judged and checked.
    Trying {
        into: &'a BranchName,
        tasks: &'a [TaskId],
    },
    /// These tasks fail their checks together: prefixes of them are checked at once.
    Checking {
        into: &'a BranchName,
        tasks: &'a [TaskId],
        prefixes: &'a [usize],
    },
    /// These tasks landed.
    Landed {
        into: &'a BranchName,
        tasks: &'a [LandedTask],
    },
    /// This task was ejected.
    Ejected {
        into: &'a BranchName,
        task: &'a EjectedTask,
    },
}

/// A task the runner landed.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct LandedTask {
    /// The task id.
    pub task: String,
    /// The commit that carries it on the branch (`null` if it changed nothing).
    pub commit: Option<String>,
}

/// A task the runner ejected from the queue.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct EjectedTask {
    /// The task id.
    pub task: String,
    /// Why, as a kind: `checks_failed`, `merge_conflict`, `contract_violation`,
    /// `uncommitted_work`, `worktree_not_on_branch`, `record_tampered`, `unsafe_path`,
    /// `merged_elsewhere`, `dropped`, `removed`, `no_branch`, `patch_mode`, `missing`.
    pub kind: String,
    /// Why, in words.
    pub reason: String,
    /// `checks_failed`: the checks of the landing that failed with it, as `merge --json` shows them.
    pub checks: Option<Value>,
    /// `checks_failed`: the gate checkout they ran in, kept for inspection until its next run.
    pub checkout: Option<String>,
}

impl EjectedTask {
    /// An ejection for `kind` and `reason`, without checks.
    fn new(task: impl Into<String>, kind: &str, reason: impl Into<String>) -> EjectedTask {
        EjectedTask {
            task: task.into(),
            kind: kind.to_owned(),
            reason: reason.into(),
            checks: None,
            checkout: None,
        }
    }
}

/// What `queue run` did to one branch's queue.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct RunReport {
    /// The target branch (full ref name).
    #[schemars(with = "String")]
    pub into: BranchName,
    /// The tasks landed, in order.
    pub landed: Vec<LandedTask>,
    /// The tasks ejected, in order.
    pub ejected: Vec<EjectedTask>,
    /// How many times checks ran (each on one landing tree).
    pub check_runs: usize,
    /// The tasks still queued.
    #[schemars(with = "Vec<String>")]
    pub remaining: Vec<TaskId>,
    /// Another runner holds this queue (its pid): this one did nothing to it.
    pub busy: Option<String>,
}

/// `queue run`: lands the queue of `opts.into` (else of every branch that has one).
pub fn run(
    repo: &Repo,
    settings: &Settings,
    opts: &RunOptions,
    on_step: &mut dyn FnMut(Step<'_>),
) -> Result<Vec<RunReport>> {
    if opts.batch == 0 {
        return Err(Error::input("--batch must be at least 1"));
    }
    if opts.jobs == 0 {
        return Err(Error::input("--jobs must be at least 1"));
    }
    let targets = match &opts.into {
        Some(b) => vec![super::branch(repo, settings, b)?],
        None => store::targets(repo)?,
    };
    let mut reports = Vec::new();
    for target in targets {
        let mut runner = Runner {
            repo,
            settings,
            opts,
            report: RunReport {
                into: target.clone(),
                landed: Vec::new(),
                ejected: Vec::new(),
                check_runs: 0,
                remaining: Vec::new(),
                busy: None,
            },
            target,
            on_step: &mut *on_step,
            failing: None,
        };
        runner.run()?;
        reports.push(runner.report);
    }
    Ok(reports)
}

/// What [`Runner::probe_prefixes`] learnt.
enum Narrowed {
    /// The branch moved, a task was ejected or landed meanwhile: what was known is stale.
    Stale,
    /// `rest[..landed]` landed; `rest[landed..failing]` fails its checks on `tip` (with
    /// `failed`, when a probe saw it fail).
    To {
        landed: usize,
        failing: usize,
        failed: Option<(Value, Option<String>)>,
        tip: String,
    },
}

/// What one landing attempt came to.
enum Attempt {
    Landed(Landed),
    /// The batch's checks failed: nothing landed.
    Failed {
        checks: Value,
        checkout: Option<String>,
    },
    /// A task of the batch cannot land (its own fault, not the checks'): nothing landed.
    Eject(EjectedTask),
}

struct Runner<'a> {
    repo: &'a Repo,
    settings: &'a Settings,
    opts: &'a RunOptions,
    target: BranchName,
    report: RunReport,
    on_step: &'a mut dyn FnMut(Step<'_>),
    /// What is known of a failing batch now (journaled with every step).
    failing: Option<Failing>,
}

impl Runner<'_> {
    fn run(&mut self) -> Result<()> {
        let mut first = true;
        loop {
            let lock = match store::try_run_lock(self.repo, &self.target)? {
                Ok(lock) => lock,
                Err(pid) => {
                    if first {
                        self.report.busy = Some(pid);
                    }
                    break;
                }
            };
            first = false;
            self.run_locked()?;
            drop(lock);
            // A task queued after the last look, whose `queue add --run` found this runner
            // busy, is not left waiting: the queue is looked at again.
            if !self.needs_run()? {
                break;
            }
        }
        self.report.remaining = self.queued_ids()?;
        Ok(())
    }

    /// Lands the queue while holding the runner's lock, until no task in it is ready.
    fn run_locked(&mut self) -> Result<()> {
        // What a killed runner knew of a failed batch.
        let mut known = store::read_journal(self.repo, &self.target).and_then(|j| j.failing);
        loop {
            let ready = self.reconcile()?;
            if ready.is_empty() {
                if self.opts.follow {
                    std::thread::sleep(std::time::Duration::from_millis(500));
                    continue;
                }
                return store::write_journal(self.repo, &self.target, None);
            }
            let batch: Vec<TaskId> = ready.into_iter().take(self.opts.batch).collect();
            let resume = known.take().filter(|f| {
                batch.starts_with(&f.tasks)
                    && self.tip().ok().flatten().map(|t| t.to_string()) == Some(f.tip.clone())
            });
            self.settle(batch, resume)?;
        }
    }

    /// Whether the queue holds a task a runner would act on (all but tasks still being started).
    fn needs_run(&self) -> Result<bool> {
        for id in self.queued_ids()? {
            let starting = matches!(
                record::load(self.repo, &id),
                Ok(Some(r)) if r.state.status == Status::Provisioning
            );
            if !starting {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn queued_ids(&self) -> Result<Vec<TaskId>> {
        Ok(store::read(self.repo, &self.target)?
            .queue
            .queued
            .into_iter()
            .map(|i| i.task)
            .collect())
    }

    fn tip(&self) -> Result<Option<ObjectId>> {
        self.repo.find_ref(&self.target)
    }

    /// Journals the landing being tried now, with what is known of a failing batch.
    fn journal(&self, trying: &[TaskId]) -> Result<()> {
        store::write_journal(
            self.repo,
            &self.target,
            Some(&Journal {
                pid: std::process::id(),
                trying: trying.to_vec(),
                failing: self.failing.clone(),
            }),
        )
    }

    /// Journals what is known of a failing batch (`None`: nothing).
    fn know(&mut self, failing: Option<Failing>) -> Result<()> {
        self.failing = failing;
        self.journal(&[])
    }

    /// Settles the queue's waiting tasks that need no landing (merged by a runner killed before
    /// it recorded them, removed, ...) and returns the ready ones, in order.
    fn reconcile(&mut self) -> Result<Vec<TaskId>> {
        let queue = store::read(self.repo, &self.target)?.queue;
        let mut ready = Vec::new();
        for item in queue.queued {
            let id = item.task;
            let rec = match record::load(self.repo, &id) {
                Ok(Some(rec)) => rec,
                Ok(None) => {
                    self.eject_quietly(&id, "missing", "the task has no record")?;
                    continue;
                }
                Err(e) if e.code() == "record_tampered" => {
                    let why = e.to_string();
                    self.eject_quietly(&id, "record_tampered", &why)?;
                    continue;
                }
                Err(e) => return Err(e),
            };
            let eject = |kind: &str, reason: String| EjectedTask::new(id.as_str(), kind, reason);
            match rec.state.status {
                Status::Merged => {
                    // Landed by a runner (or a merge) that did not get to record it: the merge
                    // repeated finishes its clean-up and says where it landed.
                    let opts = Options {
                        into: Some(self.target.to_string()),
                        ..Options::default()
                    };
                    let outcome = crate::merge::merge(
                        self.repo,
                        self.settings,
                        std::slice::from_ref(&id),
                        &opts,
                    )?;
                    match outcome {
                        Outcome::Landed(landed)
                            if landed.tasks.iter().all(|t| t.into == self.target) =>
                        {
                            self.record_landed(&landed_tasks(&landed), 0)?;
                        }
                        _ => self.eject(eject(
                            "merged_elsewhere",
                            format!("task '{id}' was merged, not onto this branch"),
                        ))?,
                    }
                }
                Status::Dropped => self.eject(eject(
                    "dropped",
                    format!("task '{id}' was dropped; merge it by hand to land it anyway"),
                ))?,
                Status::Removed => self.eject(eject(
                    "removed",
                    format!("task '{id}' was removed; there is nothing left to land"),
                ))?,
                Status::Tampered => {
                    self.eject_quietly(&id, "record_tampered", "its record is tampered")?
                }
                // Not ready yet: it waits.
                Status::Provisioning => {}
                Status::Active => {
                    if rec.state.mode == Mode::Patch {
                        self.eject(eject(
                            "patch_mode",
                            format!("task '{id}' works in patch mode; accept it with 'git task merge {id}'"),
                        ))?;
                    } else if self.repo.find_ref(&rec.state.branch)?.is_none() {
                        self.eject(eject(
                            "no_branch",
                            format!("task '{id}' has no branch '{}'", rec.state.branch_short()),
                        ))?;
                    } else {
                        ready.push(id);
                    }
                }
            }
        }
        Ok(ready)
    }

    /// Lands `batch` (ready tasks, in order), bisecting when its checks fail; `known`: what a
    /// killed runner journaled of a failing prefix of it.
    fn settle(&mut self, mut rest: Vec<TaskId>, mut known: Option<Failing>) -> Result<()> {
        'outer: while !rest.is_empty() {
            let resumed = known.take();
            if resumed.is_none() {
                // What was known (if anything) is stale: the next attempt journals without it.
                self.failing = None;
            }
            // `rest[..hi]` fails its checks on the tip `expect` (with `checks`).
            let (mut hi, mut checks, mut checkout, mut expect) = match resumed {
                Some(f) => (f.tasks.len(), f.checks, f.checkout, f.tip),
                None => match self.attempt(&rest, None)? {
                    Attempt::Landed(landed) => {
                        self.landed(&landed)?;
                        return Ok(());
                    }
                    Attempt::Eject(e) => {
                        rest.retain(|t| *t != e.task);
                        self.eject(e)?;
                        continue 'outer;
                    }
                    Attempt::Failed { checks, checkout } => {
                        let tip = self.tip_text()?;
                        (rest.len(), checks, checkout, tip)
                    }
                },
            };
            // Find the first failing prefix by halving; each half that passes lands at once.
            loop {
                self.know(Some(Failing {
                    tasks: rest[..hi].to_vec(),
                    tip: expect.clone(),
                    checks: checks.clone(),
                    checkout: checkout.clone(),
                }))?;
                // The branch moved under the runner (not by it): what it knew is stale.
                if self.tip_text()? != expect {
                    self.know(None)?;
                    continue 'outer;
                }
                if hi == 1 {
                    let task = rest.remove(0);
                    let reason = failed_reason(&checks, &task);
                    self.eject(EjectedTask {
                        task: task.to_string(),
                        kind: "checks_failed".into(),
                        reason,
                        checks: Some(checks),
                        checkout,
                    })?;
                    self.know(None)?;
                    continue 'outer;
                }
                if self.opts.jobs > 1 && hi > 2 {
                    // Several prefixes checked at once, the longest that passes landed.
                    match self.probe_prefixes(&rest, hi, &expect)? {
                        Narrowed::Stale => continue 'outer,
                        Narrowed::To {
                            landed,
                            failing,
                            failed,
                            tip,
                        } => {
                            rest.drain(..landed);
                            hi = failing;
                            if let Some((c, co)) = failed {
                                checks = c;
                                checkout = co;
                            }
                            expect = tip;
                            continue;
                        }
                    }
                }
                let mid = hi / 2;
                let half: Vec<TaskId> = rest[..mid].to_vec();
                match self.attempt(&half, None)? {
                    Attempt::Landed(landed) => {
                        let moved_by_us = landed.old_tip.as_deref() == Some(expect.as_str());
                        self.landed(&landed)?;
                        rest.drain(..mid);
                        hi -= mid;
                        if !moved_by_us {
                            continue 'outer;
                        }
                        expect = landed.new_tip.clone().unwrap_or_else(|| expect.clone());
                    }
                    Attempt::Failed {
                        checks: c,
                        checkout: co,
                    } => {
                        hi = mid;
                        checks = c;
                        checkout = co;
                        expect = self.tip_text()?;
                    }
                    Attempt::Eject(e) => {
                        rest.retain(|t| *t != e.task);
                        self.eject(e)?;
                        continue 'outer;
                    }
                }
            }
        }
        self.know(None)
    }

    /// With `--jobs J` > 1, when `rest[..hi]` fails on the tip `expect`: checks up to J of its
    /// prefixes at once (nothing landed, [`crate::merge::probe`]), then lands the longest
    /// prefix that passed, shorter than the shortest that failed, without running its checks
    /// again. Says what is known then: `rest[..landed]` landed and `rest[landed..failing]`
    /// fails on the new tip.
    fn probe_prefixes(&mut self, rest: &[TaskId], hi: usize, expect: &str) -> Result<Narrowed> {
        let j = self.opts.jobs.min(hi - 1);
        let mut cuts: Vec<usize> = (1..=j).map(|i| i * hi / (j + 1)).collect();
        cuts.retain(|k| *k > 0 && *k < hi);
        cuts.dedup();
        (self.on_step)(Step::Checking {
            into: &self.target,
            tasks: &rest[..hi],
            prefixes: &cuts,
        });
        self.journal(&rest[..hi])?;
        let opts = self.merge_options(false);
        let settings = self.settings;
        let probes: Vec<Result<Probe>> = std::thread::scope(|scope| {
            let handles: Vec<_> = cuts
                .iter()
                .map(|&k| {
                    let repo = self.repo.for_thread();
                    let tasks = rest[..k].to_vec();
                    let opts = &opts;
                    scope.spawn(move || crate::merge::probe(&repo, settings, &tasks, opts))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(Error::repo_msg("a check run panicked")))
                })
                .collect()
        });
        let mut passed: Option<(usize, Verified)> = None;
        let mut failed: Option<(usize, Value, Option<String>)> = None;
        for (&k, probe) in cuts.iter().zip(probes) {
            match probe? {
                Probe::Passed(v) => {
                    if !v.checks.commands.is_empty() {
                        self.report.check_runs += 1;
                    }
                    if failed.is_none() {
                        passed = Some((k, v));
                    }
                }
                Probe::Failed { checks, checkout } => {
                    self.report.check_runs += 1;
                    if failed.is_none() {
                        let checks = serde_json::to_value(&checks).unwrap_or_default();
                        failed = Some((k, checks, checkout));
                    }
                }
                Probe::Refused(refusal) => {
                    if let Attempt::Eject(e) = refused(refusal)? {
                        self.eject(e)?;
                    }
                    return Ok(Narrowed::Stale);
                }
                Probe::Stale => return Ok(Narrowed::Stale),
            }
        }
        // The probes looked at the tip they found: what they say holds on `expect` only.
        if self.tip_text()? != expect {
            return Ok(Narrowed::Stale);
        }
        let failing = failed.as_ref().map_or(hi, |(k, _, _)| *k);
        let failed = failed.map(|(_, c, co)| (c, co));
        let Some((landed, verified)) = passed else {
            return Ok(Narrowed::To {
                landed: 0,
                failing,
                failed,
                tip: expect.to_owned(),
            });
        };
        match self.attempt(&rest[..landed], Some(&verified))? {
            Attempt::Landed(l) => {
                let ours = l.old_tip.as_deref() == Some(expect);
                self.landed(&l)?;
                match (ours, l.new_tip) {
                    (true, Some(tip)) => Ok(Narrowed::To {
                        landed,
                        failing: failing - landed,
                        failed,
                        tip,
                    }),
                    _ => Ok(Narrowed::Stale),
                }
            }
            Attempt::Eject(e) => {
                self.eject(e)?;
                Ok(Narrowed::Stale)
            }
            // Passed a moment ago on the same tree: a flaky check. Start again.
            Attempt::Failed { .. } => Ok(Narrowed::Stale),
        }
    }

    fn tip_text(&self) -> Result<String> {
        Ok(self.tip()?.map(|t| t.to_string()).unwrap_or_default())
    }

    /// One landing of `tasks` through the merge gate: all land, or none does. `verified`: a
    /// probe ran and passed the checks on the tree it should land (they are not run again).
    fn attempt(&mut self, tasks: &[TaskId], verified: Option<&Verified>) -> Result<Attempt> {
        (self.on_step)(Step::Trying {
            into: &self.target,
            tasks,
        });
        self.journal(tasks)?;
        let opts = self.merge_options(self.opts.stream_checks);
        let outcome = crate::merge::merge_batch(self.repo, self.settings, tasks, &opts, verified)?;
        let eject = |task: String, kind: &str, reason: String| {
            Ok(Attempt::Eject(EjectedTask::new(task, kind, reason)))
        };
        match outcome {
            Outcome::Landed(landed) => {
                let checked = landed
                    .tasks
                    .iter()
                    .any(|t| t.checks.as_ref().is_some_and(|c| !c.commands.is_empty()));
                let reused = match (verified, landed.new_tip.as_deref()) {
                    (Some(v), Some(tip)) => {
                        tip.parse::<ObjectId>()
                            .ok()
                            .and_then(|t| crate::git::objects::commit_tree(self.repo, t).ok())
                            == Some(v.tree)
                    }
                    _ => false,
                };
                if checked && !reused {
                    self.report.check_runs += 1;
                }
                Ok(Attempt::Landed(landed))
            }
            Outcome::Accepted { task, .. } => eject(
                task.clone(),
                "patch_mode",
                format!("task '{task}' works in patch mode"),
            ),
            Outcome::Refused(Refusal::ChecksFailed {
                checks, checkout, ..
            }) => {
                self.report.check_runs += 1;
                Ok(Attempt::Failed {
                    checks: serde_json::to_value(&checks).unwrap_or_default(),
                    checkout,
                })
            }
            Outcome::Refused(refusal) => refused(refusal),
        }
    }

    fn merge_options(&self, stream_checks: bool) -> Options {
        Options {
            into: Some(self.target.to_string()),
            stream_checks,
            ..Options::default()
        }
    }

    /// A landing went through: records `landed` on each task and takes them out of the queue.
    fn landed(&mut self, landed: &Landed) -> Result<()> {
        let tasks = landed_tasks(landed);
        let batch = tasks.len();
        self.record_landed(&tasks, batch)
    }

    fn record_landed(&mut self, tasks: &[LandedTask], batch: usize) -> Result<()> {
        let target = self.target.clone();
        let repo = self.repo;
        let now = crate::task::now();
        let names: Vec<&str> = tasks.iter().map(|t| t.task.as_str()).collect();
        let what = format!("landed {} on {}", names.join(" "), target.short());
        store::update(repo, &target, &what, |q: &mut Queue| {
            let mut updates = Vec::new();
            for t in tasks {
                let Some(item) = q.take(&t.task) else {
                    // Recorded already (or taken out by hand meanwhile).
                    continue;
                };
                let id = item.task;
                Queue::remember(
                    &mut q.landed,
                    Done {
                        task: id.clone(),
                        time: now,
                        commit: t.commit.clone(),
                        kind: None,
                        reason: None,
                    },
                );
                let mut d = vec![
                    ("into", Value::from(target.as_str())),
                    ("commit", t.commit.clone().map_or(Value::Null, Value::from)),
                ];
                if batch > 0 {
                    d.push(("batch", Value::from(batch)));
                }
                updates.push(event_update(repo, &id, LANDED, details(&d))?);
            }
            Ok((updates, ()))
        })?;
        self.report.landed.extend(tasks.iter().cloned());
        (self.on_step)(Step::Landed {
            into: &self.target,
            tasks,
        });
        Ok(())
    }

    /// Takes `e.task` out of the queue with a `queue_ejected` event on its record.
    fn eject(&mut self, e: EjectedTask) -> Result<()> {
        self.eject_with(e, true)
    }

    /// Takes a task whose record cannot take an event out of the queue.
    fn eject_quietly(&mut self, task: &TaskId, kind: &str, reason: &str) -> Result<()> {
        self.eject_with(EjectedTask::new(task.as_str(), kind, reason), false)
    }

    fn eject_with(&mut self, e: EjectedTask, event: bool) -> Result<()> {
        let target = self.target.clone();
        let repo = self.repo;
        let now = crate::task::now();
        let what = format!("eject {} from the queue for {}", e.task, target.short());
        store::update(repo, &target, &what, |q: &mut Queue| {
            let Some(item) = q.take(&e.task) else {
                return Ok((Vec::new(), ()));
            };
            let id = item.task;
            Queue::remember(
                &mut q.ejected,
                Done {
                    task: id.clone(),
                    time: now,
                    commit: None,
                    kind: Some(e.kind.clone()),
                    reason: Some(e.reason.clone()),
                },
            );
            let mut updates = Vec::new();
            if event {
                let mut d = vec![
                    ("into", Value::from(target.as_str())),
                    ("kind", Value::from(e.kind.clone())),
                    ("reason", Value::from(e.reason.clone())),
                ];
                if let Some(c) = &e.checks {
                    d.push(("checks", c.clone()));
                }
                updates.push(event_update(repo, &id, EJECTED, details(&d))?);
            }
            Ok((updates, ()))
        })?;
        (self.on_step)(Step::Ejected {
            into: &self.target,
            task: &e,
        });
        self.report.ejected.push(e);
        Ok(())
    }
}

/// The tasks of a landing, as the runner reports them.
fn landed_tasks(landed: &Landed) -> Vec<LandedTask> {
    landed
        .tasks
        .iter()
        .map(|t| LandedTask {
            task: t.task.clone(),
            commit: t.commit.clone(),
        })
        .collect()
}

/// What a refusal of the gate other than failed checks means for the queue: the task it names
/// is ejected; a worktree of the target in the way stops the run.
fn refused(refusal: Refusal) -> Result<Attempt> {
    let eject = |task: String, kind: &str, reason: String| {
        Ok(Attempt::Eject(EjectedTask::new(task, kind, reason)))
    };
    match refusal {
        Refusal::ChecksFailed {
            checks, checkout, ..
        } => Ok(Attempt::Failed {
            checks: serde_json::to_value(&checks).unwrap_or_default(),
            checkout,
        }),
        Refusal::Violation(v) => {
            let what: Vec<String> = v
                .violations
                .iter()
                .map(|x| format!("{} ({})", x.file, x.rule))
                .collect();
            let reason = format!("the landing breaks the contract: {}", what.join(", "));
            eject(v.task, "contract_violation", reason)
        }
        Refusal::UncommittedWork { task, worktree, .. } => {
            let reason = format!("task '{task}' has uncommitted work in '{worktree}'");
            eject(task, "uncommitted_work", reason)
        }
        Refusal::NotOnBranch {
            task,
            branch,
            head,
            ..
        } => {
            let reason = format!(
                "the worktree of task '{task}' is not on its branch '{branch}' but on {head}"
            );
            eject(task, "worktree_not_on_branch", reason)
        }
        Refusal::RecordTampered { task, why, .. } => eject(task, "record_tampered", why),
        Refusal::UnsafeHistory { task, commit, path } => {
            let reason = format!("commit {commit} holds the path '{path}', which git would never write");
            eject(task, "unsafe_path", reason)
        }
        Refusal::Conflict { task, paths, .. } => {
            let reason = format!(
                "task '{task}' conflicts with the branch: {}; bring the branch in with 'git task sync {task}'",
                paths.join(", ")
            );
            eject(task, "merge_conflict", reason)
        }
        Refusal::TargetDirty {
            into,
            worktree,
            paths,
            ..
        } => Err(Error::negative(format!(
            "landing would overwrite local changes in '{worktree}', where '{}' is checked out{}; nothing was landed",
            crate::git::refs::short_name(&into),
            if paths.is_empty() {
                String::new()
            } else {
                format!(": {}", paths.join(", "))
            }
        ))
        .hint("commit or stash them there, then run 'git task queue run' again")),
        Refusal::RemoteMoved { into, .. } => Err(Error::repo_msg(format!(
            "'{}' kept moving; nothing was landed",
            crate::git::refs::short_name(&into)
        ))
        .hint("run 'git task queue run' again")),
    }
}

/// The reason of a task ejected because the checks of a landing with it failed.
fn failed_reason(checks: &Value, task: &str) -> String {
    let last = checks
        .get("commands")
        .and_then(Value::as_array)
        .and_then(|c| c.last());
    let command = last
        .and_then(|c| c.get("command"))
        .and_then(Value::as_str)
        .unwrap_or("?");
    let how = match last {
        Some(c) if c.get("timed_out").and_then(Value::as_bool) == Some(true) => {
            "timed out".to_owned()
        }
        Some(c) => match c.get("code").and_then(Value::as_i64) {
            Some(code) => format!("failed (exit {code})"),
            None => "failed (by a signal)".to_owned(),
        },
        None => "failed".to_owned(),
    };
    format!("check '{command}' {how} on the branch with task '{task}' landed on it")
}
