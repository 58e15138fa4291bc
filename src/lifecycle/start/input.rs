//! What a start refuses before it writes anything: the base it starts from (one commit, and
//! a branch name that is not also a tag), a contract or place that differs from an existing
//! task's, and a worktree place inside the repository or not free.

use crate::contract::file::{ContractFile, CONTRACT_FILE};
use crate::contract::spec::{contract_text, ContractSpec};
use crate::error::{Error, Result};
use crate::git::{self, ObjectId, Repo};
use crate::record::Record;
use crate::task::{Mode, Status, TaskId};
use std::path::{Path, PathBuf};

/// The base a task starts from.
pub(super) struct Base {
    pub commit: ObjectId,
    pub branch: Option<String>,
}

pub(super) fn resolve_base(repo: &Repo, base: Option<&str>) -> Result<Base> {
    match base {
        Some(spec) => {
            // A short name that is several refs at once (a tag and a branch both called `rel`)
            // would start from one and merge into the other: refuse it, naming each.
            if !spec.starts_with("refs/") {
                let mut found = Vec::new();
                for full in [
                    format!("refs/{spec}"),
                    format!("refs/tags/{spec}"),
                    format!("refs/heads/{spec}"),
                    format!("refs/remotes/{spec}"),
                ] {
                    let valid = crate::git::refs::is_valid_name(&full);
                    if valid && repo.ref_target(&full)?.is_some() {
                        found.push(full);
                    }
                }
                if found.len() > 1 {
                    return Err(Error::input(format!(
                        "--base '{spec}' is ambiguous: it names {}",
                        found.join(" and ")
                    ))
                    .hint(format!(
                        "spell out the one you mean, e.g. --base {}",
                        found
                            .iter()
                            .find(|f| f.starts_with("refs/heads/"))
                            .unwrap_or(&found[0])
                    )));
                }
            }
            let commit = repo.rev_parse_commit(spec)?;
            let full = if spec.starts_with("refs/heads/") {
                spec.to_owned()
            } else {
                format!("refs/heads/{spec}")
            };
            let valid = crate::git::refs::is_valid_name(&full);
            let branch = match valid {
                true => repo.find_ref(&full)?.map(|_| full),
                false => None,
            };
            Ok(Base { commit, branch })
        }
        None => {
            let branch = repo.head_branch()?.ok_or_else(|| {
                Error::input("HEAD is detached, so there is no current branch to start from")
                    .hint("name the base with --base: a branch ('git branch' lists them), or HEAD to start from the detached commit")
            })?;
            let commit = repo.find_ref(&branch)?.ok_or_else(|| {
                Error::input(format!(
                    "branch '{}' has no commits yet",
                    crate::git::refs::short_name(&branch)
                ))
                .hint("make a first commit, then start the task")
            })?;
            Ok(Base {
                commit,
                branch: Some(branch),
            })
        }
    }
}

/// Returns whether any contract option was given to `start`.
pub(super) fn contract_given(spec: &ContractSpec) -> bool {
    spec.file.is_some()
        || !spec.allow.is_empty()
        || !spec.forbid.is_empty()
        || spec.no_new_files
        || spec.no_deletions
        || !spec.checks.is_empty()
}

/// Refuses a `start` of an existing task whose contract options differ from its frozen contract.
///
/// Without contract options a repeated `start` just reports the task; with the same ones it is
/// the same no-op; with others it would silently keep the old contract, so it is refused.
pub(super) fn check_same_contract(
    id: &TaskId,
    current: &Record,
    spec: &ContractSpec,
) -> Result<()> {
    if !contract_given(spec) {
        return Ok(());
    }
    let wanted = contract_text(id, spec)?;
    let same = wanted == current.contract_text
        || ContractFile::parse(&wanted, CONTRACT_FILE).ok().as_ref() == Some(&current.contract);
    if same {
        return Ok(());
    }
    let mut err = Error::input(format!("task '{id}' already exists with another contract"))
        .hint(format!("see its contract with 'git task status {id}'"));
    if current.state.status == crate::task::Status::Dropped {
        // A dropped task starts again either on its record (`--reset`, below: it becomes active)
        // or as a new generation once removed (its record stays readable in `log`).
        err = err.hint(format!(
            "or end it and start a new generation: git task remove {id} && git task start {id} {} (a looser contract only when it did no work)",
            contract_flags(spec)
        ));
    }
    let narrower = ContractFile::parse(&wanted, CONTRACT_FILE)
        .ok()
        .is_some_and(|new| crate::contract::replacing_loosens(&current.contract, &new).is_none());
    Err(match narrower {
        true => err.hint(format!(
            "to narrow it to these, start the task over (its work is saved as an attempt first): git task start {id} --reset {}",
            contract_flags(spec)
        )),
        false => err
            .hint(format!(
                "to replace it with these, start the task over (its work is saved as an attempt first): git task start {id} --reset {}",
                contract_flags(spec)
            ))
            .hint(
                "these are looser: once the task has commits of its own, that also needs --discard-commits (its commits are saved as an attempt too)",
            ),
    })
}

/// The contract options of `spec` as they would be typed again, shell-quoted.
fn contract_flags(spec: &ContractSpec) -> String {
    use crate::contract::judge::shell_quote;
    if let Some(file) = &spec.file {
        return format!("--contract {}", shell_quote(&file.display().to_string()));
    }
    let mut flags = Vec::new();
    for (flag, values) in [
        ("--allow", &spec.allow),
        ("--forbid", &spec.forbid),
        ("--check", &spec.checks),
    ] {
        flags.extend(values.iter().map(|v| format!("{flag} {}", shell_quote(v))));
    }
    if spec.no_new_files {
        flags.push("--no-new-files".into());
    }
    if spec.no_deletions {
        flags.push("--no-deletions".into());
    }
    flags.join(" ")
}

/// Refuses a `start` of an existing worktree-mode task with a `--path` other than its worktree.
pub(super) fn check_same_path(id: &TaskId, current: &Record, path: Option<&Path>) -> Result<()> {
    let Some(path) = path else {
        return Ok(());
    };
    let wanted = git::absolute(path);
    if current.state.mode != Mode::Worktree || wanted == Path::new(&current.state.worktree) {
        return Ok(());
    }
    Err(Error::input(format!(
        "task '{id}' already exists, with its worktree at '{}', not '{}'",
        current.state.worktree,
        wanted.display()
    ))
    .hint(format!(
        "leave out --path to use it, or remove the task first: git task remove {id}"
    )))
}

/// Refuses to report a merged task whose worktree is gone (its branch was kept): the path would not exist.
pub(super) fn check_merged_worktree_exists(id: &TaskId, current: &Record) -> Result<()> {
    let s = &current.state;
    if s.status != Status::Merged
        || s.mode != Mode::Worktree
        || Path::new(&s.worktree).join(".git").exists()
    {
        return Ok(());
    }
    Err(Error::input(format!(
        "task '{id}' was merged and its worktree '{}' is gone",
        s.worktree
    ))
    .hint(format!(
        "to start it again, remove it first (unmerged commits are saved): git task remove {id}"
    )))
}

/// Returns whether `record` is of a merged task whose branch and worktree are both gone.
pub(super) fn merged_and_gone(repo: &Repo, record: &Record) -> Result<bool> {
    let s = &record.state;
    Ok(s.status == Status::Merged
        && s.mode == Mode::Worktree
        && repo.find_ref(&s.branch)?.is_none()
        && !Path::new(&s.worktree).join(".git").exists())
}

/// Returns `path` with symbolic links resolved as far as it exists (the rest appended as is).
fn resolved(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(canon) = existing.canonicalize() {
            let mut out = canon;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (
            existing.file_name().map(|n| n.to_owned()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// Refuses a worktree place inside the main worktree, inside the git dir, or inside another worktree:
/// git-task never puts anything in the user's tree (SPEC §4), and git cannot nest worktrees sanely.
pub(super) fn check_worktree_place(repo: &Repo, path: &Path, from_flag: bool) -> Result<()> {
    let place = resolved(path);
    let mut forbidden: Vec<(PathBuf, &str)> = vec![
        (resolved(repo.common_dir()), "the repository's git dir"),
        (resolved(repo.git_dir()), "the repository's git dir"),
    ];
    if let Ok(main) = repo.main_worktree() {
        if repo.workdir().is_some() || main != repo.common_dir() {
            forbidden.push((resolved(&main), "the main worktree"));
        }
    }
    if let Some(dir) = linked_worktree_around(repo, &place) {
        forbidden.push((dir, "another worktree"));
    }
    for (dir, what) in &forbidden {
        if place.starts_with(dir) {
            let source = match from_flag {
                true => format!("--path '{}'", path.display()),
                false => format!(
                    "'{}' (from {})",
                    path.display(),
                    crate::config::WORKTREE_DIR
                ),
            };
            let mut err = Error::input(format!("{source} lies inside {what} '{}'", dir.display()));
            err = match from_flag {
                true => {
                    err.hint("choose a directory outside the repository, e.g. --path ../<name>")
                }
                false => err.hint(format!(
                    "set it to a directory outside the repository: git config {} {}",
                    crate::config::WORKTREE_DIR,
                    crate::contract::judge::shell_quote(&format!(
                        "../{}.tasks",
                        repo.main_worktree()
                            .ok()
                            .and_then(|m| m.file_name().map(|n| n.to_string_lossy().into_owned()))
                            .unwrap_or_else(|| "repo".into())
                    ))
                )),
            };
            return Err(err);
        }
    }
    Ok(())
}

/// The linked worktree of `repo` that `place` (resolved) lies in, if any. Found from `place`'s
/// own ancestors, not from every registered worktree (a thousand live tasks would cost a
/// thousand path resolutions): the top of a linked worktree holds a `.git` file naming an
/// administrative directory under `<common dir>/worktrees/`. A worktree of another
/// repository around `place` is not this check's business (a home directory under git).
fn linked_worktree_around(repo: &Repo, place: &Path) -> Option<PathBuf> {
    let admin = resolved(&repo.common_dir().join("worktrees"));
    place.ancestors().find_map(|dir| {
        let named = crate::git::fs::dot_git_target(dir)?;
        resolved(&named)
            .starts_with(&admin)
            .then(|| dir.to_path_buf())
    })
}

/// Returns whether `path` is free for a new worktree: absent, or an empty directory.
pub(super) fn path_is_free(path: &Path) -> bool {
    match std::fs::read_dir(path) {
        Ok(mut entries) => entries.next().is_none(),
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    }
}
