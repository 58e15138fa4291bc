//! Exclusive claims (SPEC §6 `claim`/`release`): while a live task claims paths, no other
//! task may change them — its hook and the merge gate refuse them with `claimed_by` (the
//! claims enter every other task's effective contract in `changes::effective_at`), and
//! `start` refuses a contract that needs them unless told to share.
//!
//! All claims live in one ref, [`CLAIMS_REF`]: a chain of commits whose tree holds
//! `claims.toml`. Claiming and releasing are a compare-and-swap on that one ref, so two
//! tasks claiming the same path at the same moment cannot both win: the second one's
//! transaction fails, it reads the new claims, and is refused.
//!
//! An agent can move or delete any ref with git plumbing (SPEC §11), so git-task keeps a copy
//! of what it last wrote in `<common dir>/git-task/claims`, outside refs, with the commit it
//! set the ref to. That copy is what counts: deleting, rewinding or rewriting the ref (a blob,
//! a commit of garbage) frees nothing, adds nothing and blocks no commit; it is reported
//! ([`problem`]) and `sweep` writes the ref again from the copy ([`restore_ref`]). Only a
//! repository whose copy an older version wrote without the commit counts the ref's claims
//! too. Writers take `<common dir>/git-task/claims.lock`, so the copy and the ref move together.
//! Likewise a claim does not stop counting because the claiming task's record says it ended
//! (a record ref can be forged too): claims end only when git-task releases them — `release`,
//! and `merge`, `drop` and `remove` of the claiming task — or when `sweep` finds a claim whose
//! task is no longer live (a release that was interrupted).
//!
//! Long on purpose: how claims are stored (the ref and the copy) and every rule about them are
//! one file, so that a change to either is one diff.

use crate::contract::file::{ContractFile, CONTRACT_FILE};
use crate::contract::glob::check_new_pattern;
use crate::contract::overlap::{self, Overlap, PathSet};
use crate::contract::spec::ContractSpec;
use crate::error::{Error, Result};
use crate::git::objects;
use crate::git::refs::{Expect, RefError, Update};
use crate::git::{ObjectId, Repo};
use crate::record::{self, Record};
use crate::task::{Status, TaskId};

/// The ref that holds every claim.
pub const CLAIMS_REF: &str = "refs/tasks/_claims";
const FILE: &str = "claims.toml";

/// The globs one task claims.
#[derive(
    Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Claim {
    // A bad id makes the whole `claims.toml` unreadable (see `read_ref`).
    /// The claiming task.
    #[schemars(with = "String")]
    pub task: TaskId,
    /// Its claimed globs (contract glob rules, SPEC §5).
    pub globs: Vec<String>,
    /// The `created` time of the task's life that claimed them.
    pub created: i64,
}

#[derive(Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct Table {
    #[serde(default, rename = "claim")]
    claims: Vec<Claim>,
}

/// git-task's own copy of the claims (`<common dir>/git-task/claims`): the claims, and the
/// commit it set [`CLAIMS_REF`] to with them.
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Mirror {
    /// The commit of [`CLAIMS_REF`] written with these claims (absent: an older version).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tip: Option<String>,
    #[serde(default, rename = "claim")]
    claims: Vec<Claim>,
}

/// The claims as stored, and the ref's tip when they were read.
struct Stored {
    /// Where [`CLAIMS_REF`] points (whatever it is).
    tip: Option<ObjectId>,
    /// The claims that count.
    claims: Vec<Claim>,
    /// The ref's tip, when it is a commit git-task can build on.
    parent: Option<ObjectId>,
    /// What is wrong with the ref, if anything (see [`problem`]).
    problem: Option<String>,
}

fn mirror(repo: &Repo) -> std::path::PathBuf {
    crate::git::state_dir(repo.common_dir()).join("claims")
}

fn lock_path(repo: &Repo) -> std::path::PathBuf {
    crate::git::state_dir(repo.common_dir()).join("claims.lock")
}

/// Reads the claims of the ref's commit `tip`: `Err` says why they cannot be read (a blob, a
/// tree, no `claims.toml`, or one that is not git-task's TOML).
fn read_ref(repo: &Repo, tip: ObjectId) -> std::result::Result<Vec<Claim>, String> {
    let Ok(tree) = objects::commit_tree(repo, tip) else {
        return Err(format!("it points at {tip}, which is not a commit"));
    };
    let bytes = match objects::read_blob_in_tree(repo, tree, FILE) {
        Ok(Some(bytes)) => bytes,
        _ => return Err(format!("its commit {tip} holds no readable {FILE}")),
    };
    toml::from_str::<Table>(&String::from_utf8_lossy(&bytes))
        .map(|t| t.claims)
        .map_err(|e| {
            format!(
                "its commit {tip} holds a {FILE} git-task did not write ({})",
                e.message()
            )
        })
}

/// Reads the claims that count: git-task's own copy (see the module comment).
fn read(repo: &Repo) -> Result<Stored> {
    let tip = repo.find_ref(CLAIMS_REF)?;
    let from_ref = tip.map(|t| read_ref(repo, t));
    let parent = match &from_ref {
        Some(Ok(_)) => tip,
        _ => None,
    };
    let copy = match std::fs::read(mirror(repo)) {
        Ok(bytes) => Some(toml::from_str::<Mirror>(&String::from_utf8_lossy(&bytes))),
        Err(_) => None,
    };
    let moved = || {
        format!(
            "{CLAIMS_REF} was changed outside git-task; git-task uses its own copy of the claims"
        )
    };
    let (claims, problem) = match (copy, from_ref) {
        // The copy says which commit it goes with: the ref counts for nothing else.
        (Some(Ok(copy @ Mirror { tip: Some(_), .. })), _) => {
            let same = copy.tip.as_deref() == tip.map(|t| t.to_string()).as_deref();
            (copy.claims, (!same).then(moved))
        }
        // An older version's copy: the ref's claims count too, when they can be read.
        (Some(Ok(copy)), from_ref) => {
            let mut claims = copy.claims;
            let problem = match from_ref {
                Some(Ok(theirs)) => {
                    for c in theirs {
                        merge_into(&mut claims, c);
                    }
                    None
                }
                Some(Err(why)) => Some(format!("{CLAIMS_REF} is not git-task's: {why}")),
                None => None,
            };
            (claims, problem)
        }
        // git-task's copy damaged (not by git): the ref's claims, when they can be read.
        (Some(Err(_)), from_ref) => (
            from_ref.and_then(|r| r.ok()).unwrap_or_default(),
            Some(format!(
                "'{}', git-task's copy of the claims, cannot be read",
                mirror(repo).display()
            )),
        ),
        (None, Some(Ok(claims))) => (claims, None),
        (None, Some(Err(why))) => (
            Vec::new(),
            Some(format!("{CLAIMS_REF} is not git-task's: {why}")),
        ),
        (None, None) => (Vec::new(), None),
    };
    Ok(Stored {
        tip,
        claims,
        parent,
        problem,
    })
}

/// What is wrong with [`CLAIMS_REF`], if anything: it was changed outside git-task, or holds
/// something git-task did not write. The claims that count are unaffected (git-task's copy);
/// `sweep` writes the ref again from it ([`restore_ref`]).
pub fn problem(repo: &Repo) -> Result<Option<String>> {
    if !any(repo)? {
        return Ok(None);
    }
    Ok(read(repo)?.problem)
}

/// Writes [`CLAIMS_REF`] again from git-task's copy of the claims (`sweep`, after
/// [`problem`] said it is wrong).
pub fn restore_ref(repo: &Repo) -> Result<()> {
    write(
        repo,
        "restore the claims ref from git-task's copy",
        |_| Ok(()),
        true,
    )
}

/// Adds `claim` to `claims`: the globs join those of the same task's same life.
fn merge_into(claims: &mut Vec<Claim>, claim: Claim) {
    match claims
        .iter_mut()
        .find(|c| c.task == claim.task && c.created == claim.created)
    {
        Some(c) => {
            for g in claim.globs {
                if !c.globs.contains(&g) {
                    c.globs.push(g);
                }
            }
        }
        None => claims.push(claim),
    }
}

/// Returns whether any claim may exist (the ref, or git-task's copy): the hook's fast path.
fn any(repo: &Repo) -> Result<bool> {
    Ok(repo.find_ref(CLAIMS_REF)?.is_some() || mirror(repo).exists())
}

/// Returns whether a stored claim's task is still live, in the life that claimed (`sweep`).
fn live_claimant(repo: &Repo, claim: &Claim) -> Result<bool> {
    match record::load(repo, &claim.task) {
        Ok(r) => Ok(r.is_some_and(|r| {
            matches!(r.state.status, Status::Active | Status::Provisioning)
                && r.state.created == claim.created
        })),
        // A tampered claimant's claims keep binding: nothing of its record frees them.
        Err(e) if e.code() == "record_tampered" => Ok(true),
        Err(e) => Err(e),
    }
}

/// Returns every claim that binds: until git-task releases it (see the module comment).
pub fn live(repo: &Repo) -> Result<Vec<Claim>> {
    Ok(read(repo)?.claims)
}

/// Returns the claims that bind, but those of task `me`.
pub fn of_others(repo: &Repo, me: &TaskId) -> Result<Vec<Claim>> {
    if !any(repo)? {
        return Ok(Vec::new());
    }
    Ok(live(repo)?.into_iter().filter(|c| c.task != *me).collect())
}

/// Returns the globs task `record` claims (empty when it claims nothing).
pub fn of_task(repo: &Repo, record: &Record) -> Result<Vec<String>> {
    if !any(repo)? {
        return Ok(Vec::new());
    }
    Ok(of(record, &read(repo)?.claims))
}

/// Why a claim or a contract was refused: another live task claims a path it needs.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Conflict {
    /// The task that holds the claim.
    #[schemars(with = "String")]
    pub claimed_by: TaskId,
    /// Its claimed globs.
    pub globs: Vec<String>,
    /// A path both would cover (`None`: they may overlap, it could not be told for sure).
    pub example: Option<String>,
}

/// Returns the first live claim of another task that `paths` would need, if any.
pub fn conflict_with(repo: &Repo, me: &TaskId, paths: &PathSet) -> Result<Option<Conflict>> {
    for claim in of_others(repo, me)? {
        if let Some(conflict) = conflicts(&claim, paths, repo.ignore_case())? {
            return Ok(Some(conflict));
        }
    }
    Ok(None)
}

fn conflicts(claim: &Claim, paths: &PathSet, ignore_case: bool) -> Result<Option<Conflict>> {
    let theirs = PathSet::globs(&claim.globs, ignore_case).map_err(Error::input)?;
    let example = match overlap::intersect(paths, &theirs) {
        Overlap::Disjoint => return Ok(None),
        Overlap::Overlap { witness } => Some(witness),
        Overlap::MayOverlap => None,
    };
    Ok(Some(Conflict {
        claimed_by: claim.task.clone(),
        globs: claim.globs.clone(),
        example,
    }))
}

/// Before a new task is written (`start`): refuses `--claim` globs another live task claims,
/// and a contract (its text) that allows a path another live task claims unless `--share`.
pub fn check_start(repo: &Repo, id: &TaskId, contract: &str, spec: &ContractSpec) -> Result<()> {
    if !spec.claim.is_empty() {
        check_globs(&spec.claim)?;
        within_contract(
            id,
            &ContractFile::parse(contract, CONTRACT_FILE)?,
            &spec.claim,
        )?;
        let wanted = PathSet::globs(&spec.claim, repo.ignore_case()).map_err(Error::input)?;
        if let Some(c) = conflict_with(repo, id, &wanted)? {
            return Err(Error::negative(format!(
                "cannot claim {}: task '{}' claims {}{}",
                spec.claim.join(", "),
                c.claimed_by,
                c.globs.join(", "),
                c.example
                    .as_deref()
                    .map(|p| format!(" (e.g. {p})"))
                    .unwrap_or_default()
            ))
            .hint(format!(
                "leave out the --claim that covers it, or wait until '{}' is merged or dropped",
                c.claimed_by
            )));
        }
    }
    if spec.share || !any(repo)? {
        return Ok(());
    }
    let file = ContractFile::parse(contract, CONTRACT_FILE)?;
    let paths = PathSet::new(&[(file.allowed, file.forbidden)], repo.ignore_case())
        .map_err(Error::input)?;
    if let Some(c) = conflict_with(repo, id, &paths)? {
        return Err(Error::negative(format!(
            "the contract allows paths task '{}' claims: {}{}",
            c.claimed_by,
            c.globs.join(", "),
            c.example.as_deref().map(|p| format!(" (e.g. {p})")).unwrap_or_default()
        ))
        .hint("narrow it with --allow GLOB / --forbid GLOB so it leaves the claimed paths out")
        .hint(format!(
            "or start with --share: the claimed paths stay off-limits to this task until '{}' is merged or dropped",
            c.claimed_by
        )));
    }
    Ok(())
}

/// Right after a new task's record is written (`start --claim`): takes its claims. Another
/// task that claimed a covered path since [`check_start`] looked wins: the error says so and
/// the caller rolls the start back.
pub fn take_at_start(repo: &Repo, record: &Record, spec: &ContractSpec) -> Result<()> {
    if spec.claim.is_empty() {
        return Ok(());
    }
    match claim(repo, record, &spec.claim)? {
        Ok(_) => Ok(()),
        Err(c) => Err(Error::negative(format!(
            "cannot claim {}: task '{}' claimed {} meanwhile; the start was rolled back",
            spec.claim.join(", "),
            c.claimed_by,
            c.globs.join(", ")
        ))
        .hint("leave out the --claim that covers it, or wait until it is merged or dropped")),
    }
}

/// Refuses (exit 2) claim globs that reach beyond what the task's `contract` allows: a task
/// claims only paths it may change, so no task can fence off the rest of the repository.
fn within_contract(id: &TaskId, contract: &ContractFile, globs: &[String]) -> Result<()> {
    match crate::contract::beyond_allowed(contract, globs, false) {
        Some(g) => Err(Error::input(format!(
            "cannot claim '{g}': it reaches beyond what task '{id}' may change ({})",
            contract.allowed.join(", ")
        ))
        .hint("claim globs within the task's allowed paths")),
        None => Ok(()),
    }
}

/// Checks claim globs as contract globs are checked (exit 2 for a bad one).
pub fn check_globs(globs: &[String]) -> Result<()> {
    if globs.is_empty() {
        return Err(Error::input("name at least one glob to claim")
            .hint("for example: git task claim <id> 'src/db/**'"));
    }
    for g in globs {
        check_new_pattern(g).map_err(|e| {
            Error::input(format!("bad glob '{g}': {e}")).hint(crate::contract::file::GLOB_HINT)
        })?;
    }
    Ok(())
}

/// Makes task `record` claim `globs`, atomically: refused (`Err(conflict)`) when another live
/// task already claims a path they cover. Returns every glob the task claims afterwards.
pub fn claim(
    repo: &Repo,
    record: &Record,
    globs: &[String],
) -> Result<std::result::Result<Vec<String>, Conflict>> {
    check_globs(globs)?;
    if !matches!(record.state.status, Status::Active | Status::Provisioning) {
        return Err(Error::input(format!(
            "task '{}' is {}: only a live task can claim paths",
            record.state.id, record.state.status
        ))
        .hint("claims are released when a task is merged, dropped or removed"));
    }
    within_contract(&record.state.id, &record.contract, globs)?;
    let mine = PathSet::globs(globs, repo.ignore_case()).map_err(Error::input)?;
    let me = record.state.id.clone();
    let result = change(repo, &format!("claim for task '{me}'"), |claims| {
        for other in claims.iter().filter(|c| c.task != me) {
            if let Some(conflict) = conflicts(other, &mine, repo.ignore_case())? {
                return Ok(Err(conflict));
            }
        }
        let mut all = of(record, claims);
        for g in globs {
            if !all.contains(g) {
                all.push(g.clone());
            }
        }
        claims.retain(|c| c.task != me);
        claims.push(Claim {
            task: me.clone(),
            globs: all.clone(),
            created: record.state.created,
        });
        Ok(Ok(all))
    })?;
    Ok(result)
}

/// Releases `globs` (all of them when empty) that task `record` claims; returns what it
/// still claims. Releasing what is not claimed is a no-op.
///
/// Claims have owners: only the claiming task's own worktree or the main worktree may release
/// them (another task's agent could otherwise free the paths it wants); elsewhere it is refused
/// (exit 2) and nothing changes.
pub fn release(repo: &Repo, record: &Record, globs: &[String]) -> Result<Vec<String>> {
    from_owner(repo, record)?;
    let me = record.state.id.clone();
    change(repo, &format!("release for task '{me}'"), |claims| {
        let mut left = of(record, claims);
        left.retain(|g| !globs.is_empty() && !globs.contains(g));
        claims.retain(|c| c.task != me);
        if !left.is_empty() {
            claims.push(Claim {
                task: me.clone(),
                globs: left.clone(),
                created: record.state.created,
            });
        }
        Ok(left)
    })
}

/// Refuses unless this process runs in the main worktree (or a bare repository's git dir) or in
/// the worktree of task `record`.
fn from_owner(repo: &Repo, record: &Record) -> Result<()> {
    use crate::git::fs::canonical;
    let Some(here) = repo.workdir().map(canonical) else {
        return Ok(());
    };
    let main = repo.main_worktree()?;
    if here == canonical(&main) {
        return Ok(());
    }
    let mut own: Vec<std::path::PathBuf> = Vec::new();
    if !record.state.worktree.is_empty() {
        own.push(canonical(std::path::Path::new(&record.state.worktree)));
    }
    if let Some(w) = crate::git::worktree::find_by_branch(repo, &record.state.branch)? {
        own.push(canonical(&w.path));
    }
    if own.contains(&here) {
        return Ok(());
    }
    let id = &record.state.id;
    Err(Error::input(format!(
        "only task '{id}' itself or the main worktree may release its claims, not '{}'",
        here.display()
    ))
    .hint(format!(
        "release them from the main worktree: git -C {} task release {id}",
        crate::contract::judge::shell_quote(&main.display().to_string())
    )))
}

/// Drops the claims of task `id` when it is no longer live: after `merge`, `drop`, `remove`
/// and a rolled-back start, and in `sweep`. A claim of a new life of the same id, made
/// meanwhile, is kept.
pub fn release_all(repo: &Repo, id: &TaskId) -> Result<()> {
    if !any(repo)? {
        return Ok(());
    }
    change(repo, &format!("release for task '{id}'"), |claims| {
        let mut kept = Vec::new();
        for c in claims.drain(..) {
            if c.task != *id || live_claimant(repo, &c)? {
                kept.push(c);
            }
        }
        *claims = kept;
        Ok(())
    })
}

/// Returns the tasks whose stored claims bind no one any more (`sweep` drops them).
pub fn stale(repo: &Repo) -> Result<Vec<TaskId>> {
    let mut out = Vec::new();
    for claim in read(repo)?.claims {
        if !live_claimant(repo, &claim)? {
            out.push(claim.task);
        }
    }
    Ok(out)
}

/// The globs task `record` claims, in any life (a new life of an id takes the old one's
/// leftover claims over rather than carrying two).
fn of(record: &Record, claims: &[Claim]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for g in claims
        .iter()
        .filter(|c| c.task == record.state.id)
        .flat_map(|c| c.globs.iter())
    {
        if !out.contains(g) {
            out.push(g.clone());
        }
    }
    out
}

/// Applies `step` to the stored claims and writes the result with a compare-and-swap,
/// reading again and retrying when another process changed them meanwhile. Nothing is
/// written when `step` changes nothing.
fn change<T>(repo: &Repo, what: &str, step: impl FnMut(&mut Vec<Claim>) -> Result<T>) -> Result<T> {
    write(repo, what, step, false)
}

/// [`change`]; with `always`, the ref and the copy are written even when `step` changes
/// nothing (to repair the ref).
fn write<T>(
    repo: &Repo,
    what: &str,
    mut step: impl FnMut(&mut Vec<Claim>) -> Result<T>,
    always: bool,
) -> Result<T> {
    // One writer at a time, so the copy and the ref it names move together.
    let _lock = crate::ledger::lock::Lock::acquire(&lock_path(repo))?;
    for _ in 0..20 {
        let stored = read(repo)?;
        let mut claims = stored.claims.clone();
        let value = step(&mut claims)?;
        if claims == stored.claims && !(always && stored.problem.is_some()) {
            return Ok(value);
        }
        let text = toml::to_string(&Table {
            claims: claims.clone(),
        })
        .map_err(|e| Error::repo_msg(e.to_string()))?;
        // A ref that is no commit of claims is written over, not built on.
        let parents: Vec<ObjectId> = stored.parent.into_iter().collect();
        let message = format!("git-task: {what}");
        let commit =
            objects::write_one_file_commit(repo, FILE, text.as_bytes(), &parents, &message)?;
        let update = Update {
            name: CLAIMS_REF.into(),
            new: Some(commit),
            expect: stored.tip.map_or(Expect::Absent, Expect::Is),
            message: format!("git-task: {what}"),
        };
        match crate::ledger::apply(repo, crate::ledger::Mover::GitTask, vec![update]) {
            Ok(()) => {
                // The copy outside refs: what counts even if the ref is moved or deleted. A
                // process killed before this line leaves the old copy, whose extra claims
                // still count (never fewer than were claimed); the next change rewrites it.
                let copy = toml::to_string(&Mirror {
                    tip: Some(commit.to_string()),
                    claims,
                })
                .map_err(|e| Error::repo_msg(e.to_string()))?;
                let path = mirror(repo);
                if let Some(dir) = path.parent() {
                    std::fs::create_dir_all(dir).map_err(|e| {
                        Error::repo(format!("could not create '{}'", dir.display()), e)
                    })?;
                }
                crate::git::fs::write_atomically(&path, copy.as_bytes())
                    .map_err(|e| Error::repo(format!("could not write '{}'", path.display()), e))?;
                return Ok(value);
            }
            Err(RefError::Conflict(_)) => continue,
            Err(RefError::Other(e)) => return Err(e),
        }
    }
    Err(
        Error::repo_msg(format!("could not {what}: the claims kept changing"))
            .hint("run the command again"),
    )
}
