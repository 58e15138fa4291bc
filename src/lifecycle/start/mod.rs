//! Making a task (worktree mode): claim the id, write the contract commit,
//! create the worktree, run hooks and setup, and record `provisioned`.
//!
//! Order matters for crash safety (SPEC §2.7): the record, base ref and task
//! branch are created in one ref transaction, with the record in state
//! `provisioning` and the pid of this process. Only then is the worktree made.
//! If this process dies before `provisioned`, `sweep` (or the next mutating
//! command, through the marker under `<common>/git-task/starting/`) sees a
//! `provisioning` record whose process is gone and rolls everything back.
//! Ctrl-C is caught and rolls back at once.
//!
//! An existing task is reported unchanged, or reset with `--reset` (see
//! `reset.rs`); a removed task is started again on the same record, and rolling
//! that back restores the record as it was.

pub mod failed;
mod input;
use super::branch::first_commit;
use crate::config::Settings;
use crate::contract::file::{ContractFile, CONTRACT_FILE};
pub use crate::contract::spec::{contract_text, ContractSpec};
use crate::error::{Error, Result};
use crate::git::objects;
use crate::git::refs::{RefError, Update};
use crate::git::{self, worktree, Repo};
use crate::record::{self, event, Event, Record};
use crate::task::{layout, now, Mode, Status, TaskId, TaskState};
use input::{
    check_merged_worktree_exists, check_same_contract, check_same_path, check_worktree_place,
    contract_given, merged_and_gone, path_is_free, resolve_base,
};
use std::path::{Path, PathBuf};

/// What `start` was asked to do.
#[derive(Clone, Debug, Default)]
pub struct StartOptions {
    /// The id, or `None` for a generated one.
    pub id: Option<TaskId>,
    /// `--base REV`.
    pub base: Option<String>,
    /// `--path DIR`.
    pub path: Option<PathBuf>,
    /// The contract.
    pub contract: ContractSpec,
    /// `--setup CMD` (else `task.setup`).
    pub setup: Option<String>,
    /// `--setup-timeout SECS` (else `task.setupTimeout`).
    pub setup_timeout: Option<u64>,
    /// `--copy-ignored`: copy every ignored file into the new worktree.
    pub copy_ignored: bool,
    /// `--sparse`: check out only the contract's allowed paths plus `task.sparseAlways`.
    pub sparse: bool,
    /// `--reset`: an existing task is put back to its base (or `--base`), its work saved first.
    pub reset: bool,
    /// `--reset --discard-commits`: its own commits go too (saved first), so the contract may be
    /// replaced by a looser one.
    pub discard_commits: bool,
    /// Where the work happens: a new linked worktree, or this worktree guarded by a snapshot.
    pub mode: Mode,
}

/// What `start` did.
#[derive(Debug)]
pub enum Started {
    /// A new task was made.
    Created(Record),
    /// The task already existed; nothing changed.
    Existing(Record),
    /// The task already existed and was reset (`--reset`).
    Reset(Box<super::reset::ResetDone>),
}

/// `start --mode patch`: snapshot the current worktree and work in it (SPEC §9); `--reset`
/// puts a live patch-mode task back in place, since its worktree is the user's.
fn start_patch(repo: &Repo, settings: &Settings, opts: &StartOptions) -> Result<Started> {
    if opts.path.is_some() || opts.setup.is_some() || opts.sparse || opts.copy_ignored {
        return Err(Error::input(
            "--path, --setup, --sparse and --copy-ignored apply to worktree mode; a patch-mode task works in this worktree",
        )
        .hint(format!(
            "leave them out, or start the task in its own worktree: git task start{}",
            opts.id.as_ref().map(|i| format!(" {i}")).unwrap_or_default()
        )));
    }
    let patch_opts = crate::patch::StartOptions {
        id: opts.id.clone(),
        base: opts.base.clone(),
        contract: opts.contract.clone(),
    };
    match crate::patch::start(repo, settings, &patch_opts)? {
        crate::patch::Started::Existing(record) if opts.reset && record.state.status.is_live() => {
            let reset = super::reset::ResetOptions {
                from_start: true,
                ..Default::default()
            };
            let done = super::reset::reset(repo, settings, &record, &reset)?;
            Ok(Started::Reset(Box::new(done)))
        }
        crate::patch::Started::Existing(record) => Ok(Started::Existing(record)),
        crate::patch::Started::Created(record) => Ok(Started::Created(record)),
    }
}

/// Whether the latest life of `record` did work under its contract: a commit, a checkpoint, or
/// work saved as an attempt (by a reset, revert or the remove itself), as its events since its
/// latest `started` show.
fn left_work(repo: &Repo, record: &Record) -> Result<bool> {
    use crate::record::Event;
    for entry in record::events(repo, record)?.into_iter().rev() {
        if matches!(entry.event, Event::Started(_)) {
            break;
        }
        if matches!(entry.event, Event::Committed(_) | Event::Checkpoint(_)) {
            return Ok(true);
        }
        let fields = entry.event.fields();
        let saved = fields
            .get("attempts")
            .and_then(|a| a.as_array())
            .is_some_and(|a| !a.is_empty())
            || fields.get("attempt").is_some_and(|a| !a.is_null());
        if saved {
            return Ok(true);
        }
    }
    Ok(false)
}

/// A setup command failed; everything was rolled back.
#[derive(Debug)]
pub struct SetupFailed {
    /// The task id that was being made.
    pub id: TaskId,
    /// What the setup did.
    pub outcome: crate::checks::Outcome,
    /// The seconds it was given (`outcome.timed_out`: it ran that long and was killed).
    pub timeout: u64,
}

/// Why `start` stopped.
pub enum StartError {
    /// The setup command failed (exit 1 with its output).
    Setup(SetupFailed),
    /// Anything else.
    Other(Error),
}

impl From<Error> for StartError {
    fn from(e: Error) -> Self {
        StartError::Other(e)
    }
}

/// What a start reports progress of: files, `done` of `total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Files written by the checkout of the new worktree (long checkouts only).
    Checkout,
    /// Files copied by `--copy-ignored`.
    CopyIgnored,
}

/// Starts a task (worktree mode); `progress(phase, done, total)` reports the files written by
/// a long checkout and those copied by `--copy-ignored`.
pub fn start(
    repo: &Repo,
    settings: &Settings,
    opts: &StartOptions,
    progress: &mut dyn FnMut(Phase, u64, u64),
) -> std::result::Result<Started, StartError> {
    if opts.mode == Mode::Patch {
        return Ok(start_patch(repo, settings, opts)?);
    }
    // Ctrl-C rolls a half-made start back instead of leaving it (see `interrupted`).
    let _guard = crate::git::interrupt::install();
    crate::recover::abandoned::repair_abandoned_starts(repo, settings);
    // A removed task is started again on the same record: its history stays in the log.
    let mut previous: Option<Record> = None;
    if let Some(id) = &opts.id {
        if let Some(existing) = record::load(repo, id)? {
            // A start whose process died is rolled back; one that finished since it was read is re-read.
            let rolled_back =
                crate::recover::abandoned::roll_back_abandoned(repo, settings, &existing)?
                    .is_some();
            match record::load(repo, id)? {
                Some(current) if current.state.status == Status::Removed => {
                    previous = Some(current)
                }
                // A merged task whose worktree and branch are gone starts a new life on its
                // record, as a removed one does; its earlier life stays in `git task log`.
                Some(current) if merged_and_gone(repo, &current)? => previous = Some(current),
                Some(_) if rolled_back => {}
                Some(current) if opts.reset => {
                    let onto = opts
                        .base
                        .as_deref()
                        .map(|rev| repo.rev_parse_commit(rev))
                        .transpose()?;
                    let contract = match contract_given(&opts.contract) {
                        true => Some(contract_text(id, &opts.contract)?),
                        false => None,
                    };
                    let reset = super::reset::ResetOptions {
                        onto,
                        contract,
                        from_start: true,
                        setup: opts.setup.clone(),
                        setup_timeout: opts.setup_timeout,
                        discard_commits: opts.discard_commits,
                    };
                    return Ok(Started::Reset(Box::new(super::reset::reset(
                        repo, settings, &current, &reset,
                    )?)));
                }
                // Another process is making it: its path is not a worktree to work in yet (a
                // failed setup rolls it back, with whatever was written there).
                Some(current) if current.state.status == Status::Provisioning => {
                    return Err(Error::input(format!(
                        "task '{id}' is still being started by another process"
                    ))
                    .hint(format!(
                        "wait for that 'git task start {id}' to finish, then run this again"
                    ))
                    .into());
                }
                Some(current) => {
                    check_same_contract(id, &current, &opts.contract)?;
                    check_same_path(id, &current, opts.path.as_deref())?;
                    check_merged_worktree_exists(id, &current)?;
                    return Ok(Started::Existing(current));
                }
                None => {}
            }
        }
    }
    let base = resolve_base(repo, opts.base.as_deref())?;
    // SPEC §5: a base whose tree holds a path git refuses is never checked out.
    let base_tree = objects::commit_tree(repo, base.commit)?;
    // Trees a pool fill already walked are not walked again (`pool::known_safe_trees`).
    let mut seen = crate::pool::known_safe_trees(repo);
    if let Some(bad) = crate::git::pathsafe::unsafe_path_in_tree(repo, base_tree, &mut seen)? {
        return Err(crate::git::pathsafe::refusal(&bad, &format!("base {}", base.commit)).into());
    }
    let id = match &opts.id {
        Some(id) => id.clone(),
        None => {
            let seed =
                (now() as u64).wrapping_mul(6364136223846793005) ^ u64::from(std::process::id());
            crate::task::id::generate(seed, |id| {
                repo.find_ref(&layout::record_ref(id))
                    .ok()
                    .flatten()
                    .is_some()
                    || repo
                        .find_ref(&layout::branch_ref(&settings.branch_prefix, id))
                        .ok()
                        .flatten()
                        .is_some()
                    || !path_is_free(&layout::worktree_path(&settings.worktree_dir, id))
            })
        }
    };
    // A removed task started again is the same task, and so is one whose record was deleted
    // by hand (a start of it is on file): without contract options it comes back with its
    // contract, and it cannot come back with a looser one (SPEC §2.4). One git-task merged
    // starts a new life with any contract; a `merged` event git-task did not write is no merge.
    let earlier: Option<(String, ContractFile)> = match previous.as_ref() {
        Some(prev)
            if prev.state.status == Status::Removed
                || !record::frozen::merged_by_git_task(repo, prev)? =>
        {
            Some((prev.contract_text.clone(), prev.contract.clone()))
        }
        Some(_) => None,
        None => record::frozen::earlier_contract(repo, &id),
    };
    let text = match &earlier {
        Some((text, _)) if !contract_given(&opts.contract) => text.clone(),
        _ => contract_text(&id, &opts.contract)?,
    };
    // The earlier contract binds only work done under it: a removed task that left none (no
    // commit, checkpoint or saved attempt in its record) starts a new generation with any
    // contract; its record stays readable (`restart_of`).
    let bound = match previous.as_ref() {
        Some(prev) if earlier.is_some() && prev.state.status == Status::Removed => {
            left_work(repo, prev)?
        }
        _ => earlier.is_some(),
    };
    if let (Some((_, earlier)), true) = (&earlier, bound) {
        let new = ContractFile::parse(&text, CONTRACT_FILE)?;
        if let Some(why) = crate::contract::replacing_loosens(earlier, &new) {
            return Err(Error::negative(format!(
                "task '{id}' was started before with a narrower contract; starting it again cannot loosen it: {why}"
            ))
            .hint(format!("its frozen contract binds the work its earlier life did (commits or work saved as attempts: git task log {id}); only a task that did no work may come back with a looser contract"))
            .hint(format!("start it again with its contract: git task start {id}"))
            .hint("a wider contract needs a new task: 'git task start' with another id")
            .into());
        }
    }
    crate::claims::check_start(repo, &id, &text, &opts.contract)?;
    let sparse = match opts.sparse {
        false => None,
        true => {
            let contract = ContractFile::parse(&text, CONTRACT_FILE)?;
            if contract.allowed.is_empty() {
                return Err(Error::input("--sparse needs a contract with allowed paths")
                    .hint("name them with --allow GLOB, or leave out --sparse")
                    .into());
            }
            let mut globs = contract.allowed.clone();
            globs.extend(settings.sparse_always.iter().cloned());
            globs.push(format!("/{CONTRACT_FILE}"));
            Some(worktree::sparse_patterns(&globs))
        }
    };
    let path = match &opts.path {
        Some(p) => git::absolute(p),
        None => layout::worktree_path(&settings.worktree_dir, &id),
    };
    check_worktree_place(repo, &path, opts.path.is_some())?;
    let branch = layout::branch_ref(&settings.branch_prefix, &id);
    let taken_branch = repo.find_ref(&branch)?.is_some();
    let taken_path = !path_is_free(&path);
    if taken_branch || taken_path {
        // Another process may have made this very task since we looked: report it, as a repeated start would.
        if let Some(existing) = record::load(repo, &id)? {
            if existing.state.status != Status::Removed {
                return Ok(Started::Existing(existing));
            }
        }
    }
    if taken_branch {
        return Err(Error::input(format!(
            "branch '{}' already exists but task '{id}' does not",
            layout::branch_name(&settings.branch_prefix, &id)
        ))
        .hint(format!(
            "pick another id, or delete the branch: git branch -D {}",
            layout::branch_name(&settings.branch_prefix, &id)
        ))
        .hint("'git task sweep' cleans up what an interrupted start left behind")
        .into());
    }
    if taken_path {
        return Err(Error::input(format!(
            "'{}' already exists and is not empty",
            path.display()
        ))
        .hint("choose another place with --path DIR, or move that directory away")
        .into());
    }
    let setup = opts.setup.clone().or_else(|| settings.setup.clone());

    let first = first_commit(repo, &id, base.commit, &text)?;

    let state = TaskState {
        id: id.clone(),
        mode: Mode::Worktree,
        status: Status::Provisioning,
        branch: crate::task::BranchName::parse(&branch)
            .map_err(|why| Error::input(format!("the task's branch: {why}")))?,
        base_branch: base
            .branch
            .as_deref()
            .map(crate::task::BranchName::parse)
            .transpose()
            .map_err(|why| Error::input(format!("the base branch: {why}")))?,
        base_commit: base.commit.to_string(),
        worktree: path.display().to_string(),
        created: now(),
        pid: std::process::id(),
        setup: setup.clone(),
        contract_commit: Some(first.to_string()),
    };
    let details = event::Started {
        mode: Mode::Worktree,
        base: base.commit.to_string(),
        base_branch: state.base_branch.clone(),
        branch: Some(state.branch.clone()),
        snapshot: None,
        worktree: state.worktree.clone(),
        nonce: String::new(),
        restart_of: None,
    };
    let message = format!("git-task: start {id}");
    let mut extra = vec![Update::create(branch.clone(), first, message.clone())];
    // A removed task keeps its base ref for history; starting it again moves it.
    match repo
        .find_ref(&layout::base_ref(&id))?
        .filter(|_| previous.is_some())
    {
        Some(old) if old == base.commit => {}
        Some(old) => extra.push(Update::update(
            layout::base_ref(&id),
            old,
            base.commit,
            message.clone(),
        )),
        None => extra.push(Update::create(
            layout::base_ref(&id),
            base.commit,
            message.clone(),
        )),
    }
    // Until `provisioned`, a marker lets the next mutating command notice if this process dies.
    let _marker = crate::recover::abandoned::StartMarker::create(repo, &id);
    let claimed = match &previous {
        Some(previous) => record::restart(repo, previous, &state, &text, details, extra),
        None => record::create(repo, &state, &text, details, extra),
    };
    match claimed {
        Ok(_) => {}
        Err(RefError::Conflict(msg)) => {
            // Another process claimed the id first: report its task, as a repeated start would.
            if let Some(existing) = record::load(repo, &id)? {
                if existing.state.status != Status::Removed {
                    return Ok(Started::Existing(existing));
                }
            }
            return Err(Error::repo_msg(msg).hint(format!("another process is starting or removing '{id}'; run 'git task start {id}' again")).into());
        }
        Err(RefError::Other(e)) => return Err(e.into()),
    }
    let created = record::load_existing(repo, &id)?;
    if let Err(lost) = crate::claims::take_at_start(repo, &created, &opts.contract) {
        crate::recover::abandoned::roll_back(repo, settings, &created)?;
        return Err(lost.into());
    }
    let include = match opts.copy_ignored {
        true => Some(None),
        false => objects::read_blob_at(repo, base.commit, crate::copy::WORKTREE_INCLUDE)?
            .map(|b| Some(crate::copy::parse_include(&String::from_utf8_lossy(&b)))),
    };
    let how = Provision {
        setup: setup.as_deref(),
        setup_timeout: opts.setup_timeout.unwrap_or(settings.setup_timeout),
        include: include.as_ref().map(|i| i.as_deref()),
        sparse: sparse.as_deref(),
        pool: base.branch.as_deref().map(|base| crate::pool::Want {
            worktree_dir: &settings.worktree_dir,
            base,
            path: &path,
            branch: &branch,
            commit: first,
        }),
        // Made just above, with the record (`Update::create`: it did not exist).
        created: true,
    };
    match provision(repo, &created, &path, &branch, &how, progress) {
        Ok((record, took)) => {
            if let Some(base) = &base.branch {
                crate::pool::after_start(repo, settings, base, took);
            }
            Ok(Started::Created(record))
        }
        Err(err) => {
            // Undo everything this start made; the error that stopped it is what the user sees.
            let current = record::load(repo, &id).ok().flatten().unwrap_or(created);
            if let Err(cleanup) = crate::recover::abandoned::roll_back(repo, settings, &current) {
                let msg = match &err {
                    StartError::Other(e) => e.to_string(),
                    StartError::Setup(s) => format!("setup '{}' failed", s.outcome.command),
                };
                if let StartError::Setup(s) = &err {
                    failed::note(repo, s);
                }
                return Err(
                    Error::repo_msg(format!("{msg}; cleaning up also failed: {cleanup}"))
                        .hint("run 'git task sweep' to finish the clean-up")
                        .into(),
                );
            }
            // The task is gone; its `setup_failed` event is kept outside refs for `log --follow --all`.
            if let StartError::Setup(s) = &err {
                failed::note(repo, s);
            }
            Err(err)
        }
    }
}

/// Gives an existing task (its record and branch fetched from another machine) a worktree
/// here at `path`, with a start's own steps: checkout, ignored files per the base's
/// `.worktreeinclude`, the post-checkout hooks, the recorded setup; then `provisioned` names
/// the new worktree. A failure removes the worktree it made; the refs stay.
pub fn provision_existing(
    repo: &Repo,
    record: &Record,
    path: &Path,
    progress: &mut dyn FnMut(Phase, u64, u64),
) -> std::result::Result<Record, StartError> {
    let _guard = crate::git::interrupt::install();
    let include = match record.state.base_commit.parse() {
        Ok(base) => objects::read_blob_at(repo, base, crate::copy::WORKTREE_INCLUDE)?
            .map(|b| Some(crate::copy::parse_include(&String::from_utf8_lossy(&b)))),
        Err(_) => None,
    };
    let how = Provision {
        setup: record.state.setup.as_deref(),
        setup_timeout: crate::config::Settings::load(repo)
            .map(|s| s.setup_timeout)
            .unwrap_or(crate::config::DEFAULT_SETUP_TIMEOUT),
        include: include.as_ref().map(|i| i.as_deref()),
        sparse: None,
        pool: None,
        created: false,
    };
    let mut here = record.clone();
    here.state.worktree = path.display().to_string();
    let branch = record.state.branch.clone();
    provision(repo, &here, path, &branch, &how, progress)
        .map(|(record, _)| record)
        .inspect_err(|_| {
            if let Ok(Some(w)) = worktree::find_by_branch(repo, &branch) {
                let _ = worktree::remove(repo, &w);
            }
        })
}

fn interrupted() -> Result<()> {
    if crate::git::interrupt::is_triggered() {
        return Err(Error::repo_msg(
            "interrupted; everything this start made was removed",
        ));
    }
    Ok(())
}

/// How to make a worktree beyond the checkout itself.
struct Provision<'a> {
    /// Command run in the new worktree.
    setup: Option<&'a str>,
    /// Seconds it may run.
    setup_timeout: u64,
    /// Ignored files to copy: `Some(None)` all, `Some(Some(globs))` those matching.
    include: Option<Option<&'a [String]>>,
    /// Sparse-checkout patterns, if only part of the tree is checked out.
    sparse: Option<&'a str>,
    /// A warm pool entry to take, if one is ready for the base (`pool`).
    pool: Option<crate::pool::Want<'a>>,
    /// Whether this command created the task's branch (a `start`, not a task fetched here).
    created: bool,
}

/// Makes the worktree of a claimed task; also says whether it was a pool entry.
fn provision(
    repo: &Repo,
    record: &Record,
    path: &Path,
    branch: &str,
    how: &Provision<'_>,
    progress: &mut dyn FnMut(Phase, u64, u64),
) -> std::result::Result<(Record, bool), StartError> {
    let setup = how.setup;
    interrupted()?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| Error::repo(format!("could not create '{}'", parent.display()), e))?;
    }
    let took = match (&how.pool, how.sparse) {
        (Some(want), None) => crate::pool::take(repo, want)? == crate::pool::Taken::Adopted,
        _ => false,
    };
    if !took {
        worktree::add(
            repo,
            path,
            branch,
            how.created,
            how.sparse,
            crate::git::interrupt::flag(),
            &mut |done, total| progress(Phase::Checkout, done, total),
        )?;
    }
    interrupted()?;
    let copied = match how.include {
        Some(globs) if repo.workdir().is_some() => Some(crate::copy::copy_ignored(
            repo,
            path,
            globs,
            &mut |done, total| progress(Phase::CopyIgnored, done, total),
        )?),
        _ => None,
    };
    interrupted()?;
    let head = repo
        .find_ref(branch)?
        .map(|id| id.to_string())
        .unwrap_or_default();
    crate::hooks::run_post_checkout(repo, path, &head)?;
    interrupted()?;
    if let Some(cmd) = setup {
        let env = record.state.task_env();
        let timeout = std::time::Duration::from_secs(how.setup_timeout);
        let outcome = crate::checks::run_captured(cmd, path, &env, timeout)?;
        interrupted()?;
        if !outcome.ok() {
            return Err(StartError::Setup(SetupFailed {
                id: record.state.task_id(),
                outcome,
                timeout: how.setup_timeout,
            }));
        }
    }
    let mut state = record.state.clone();
    state.status = Status::Active;
    let provisioned = Event::Provisioned(event::Provisioned::Worktree {
        worktree: state.worktree.clone(),
        setup: setup.map(str::to_owned),
        copied_ignored: copied,
    });
    record::append(repo, record, provisioned, &state, Vec::new())
        .map(|r| (r, took))
        .map_err(|e| StartError::Other(e.into()))
}

/// The decisions of `start`: an existing task is returned as it is; bad input writes nothing.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::Fixture;

    fn opts(id: &str, allow: &[&str]) -> StartOptions {
        StartOptions {
            id: Some(TaskId::parse(id).unwrap()),
            contract: ContractSpec {
                allow: allow.iter().map(|s| s.to_string()).collect(),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn run(f: &Fixture, o: &StartOptions) -> std::result::Result<Started, StartError> {
        start(&f.repo(), &f.settings(), o, &mut |_, _, _| {})
    }

    #[test]
    fn starting_an_existing_task_changes_nothing() {
        let f = Fixture::new();
        let first = f.start("twice", &["src/**"]);
        let before = f.refs();
        match run(&f, &opts("twice", &["src/**"])) {
            Ok(Started::Existing(r)) => assert_eq!(r.tip, first.tip),
            Ok(other) => panic!("{other:?}"),
            Err(_) => panic!("start of an existing task failed"),
        }
        assert_eq!(f.refs(), before);
    }

    #[test]
    fn a_base_that_names_no_commit_is_bad_input_and_writes_nothing() {
        let f = Fixture::new();
        let before = f.refs();
        let mut o = opts("nobase", &["src/**"]);
        o.base = Some("no-such-branch".into());
        match run(&f, &o) {
            Err(StartError::Other(e)) => assert_eq!(e.exit_code(), 2, "{e}"),
            Err(StartError::Setup(_)) => panic!("the setup ran"),
            Ok(s) => panic!("started: {s:?}"),
        }
        assert_eq!(f.refs(), before);
        let dir = f.root.parent().unwrap().join("repo.tasks/nobase");
        assert!(!dir.exists());
    }

    #[test]
    fn a_failed_setup_rolls_the_start_back() {
        let f = Fixture::new();
        let mut o = opts("setupfail", &["src/**"]);
        o.setup = Some("exit 3".into());
        assert!(matches!(run(&f, &o), Err(StartError::Setup(_))));
        assert!(f.git(&["branch", "--list", "task/setupfail"]).is_empty());
        let dir = f.root.parent().unwrap().join("repo.tasks/setupfail");
        assert!(!dir.exists());
    }
}
