//! The `reference-transaction` handler: a task moves only its own branch, and every move of a
//! branch tasks started from is on file (SPEC §8, §11).
//!
//! githooks(5): git runs the hook for every ref transaction, with the state (`prepared`,
//! `committed`, `aborted`) as its argument and one line `<old> <new> <ref>` per ref on its
//! input; a non-zero exit in the `prepared` state aborts the transaction, so no ref moves.
//!
//! - `prepared`, in a task's worktree: every ref but the task's own branch is refused: other
//!   branches (the base, other tasks', new ones), `refs/tasks/*` (records, bases), tags,
//!   remote-tracking refs (but the one of the own branch), replace refs, another worktree's
//!   refs (`main-worktree/*`, `worktrees/*`). What git itself moves in passing stays free:
//!   `HEAD`, pseudo-refs (`ORIG_HEAD`, `AUTO_MERGE`), `refs/worktree/*`, `refs/bisect/*`,
//!   `refs/rewritten/*`, `refs/stash`, and notes; `refs/notes/tasks` only by one notes commit
//!   on its tip (what `notes.rewriteRef` does on `commit --amend` and `rebase`), never set to
//!   another commit. In a worktree where a patch-mode task is active (the user's own), only
//!   branches, tasks' refs and replace refs are refused: the user still fetches and tags there.
//!   A push into the repository (`git push <repository> …`, run by receive-pack) is judged in
//!   the worktree the pusher runs in.
//! - `committed`: each move of a branch the ledger watches is noted as `worktree <path>`.
//!
//! The shim decides without starting git-task for every transaction that concerns no task
//! (see `hooks/reference-transaction`); this is the rest.

use crate::config::Settings;
use crate::error::Result;
use crate::git::{ObjectId, Repo};
use crate::task::layout;
use std::path::{Path, PathBuf};

/// The file in a task worktree's private git dir that names the task's branch (full ref name);
/// `hooks install` and `start` write it, so the worktree stays the task's when its HEAD is
/// detached or moved to another branch.
pub const BRANCH_MARK: &str = "git-task-branch";

/// The variable the shim sets, under `git push`, to its parent process: receive-pack, whose
/// parent is the pusher.
pub const PUSHED_BY_ENV: &str = "GIT_TASK_PUSHED_BY";

/// One line of the hook's input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefUpdate {
    /// The value the ref must have before (`None`: any, or must not exist).
    pub old: Option<String>,
    /// The value it gets (`None`: deleted).
    pub new: Option<String>,
    /// The full ref name.
    pub name: String,
}

/// Reads the hook's input, one `<old> <new> <ref>` per line.
pub fn parse(input: &str) -> Vec<RefUpdate> {
    let id = |s: &str| (!s.is_empty() && s.bytes().any(|b| b != b'0')).then(|| s.to_owned());
    input
        .lines()
        .filter_map(|line| {
            let mut parts = line.split(' ');
            let old = parts.next()?;
            let new = parts.next()?;
            let name = parts.next()?;
            Some(RefUpdate {
                old: id(old),
                new: id(new),
                name: name.to_owned(),
            })
        })
        .collect()
}

/// The worktree a transaction comes from.
#[derive(Clone, Debug)]
pub struct Here {
    /// Its top directory, when known.
    pub worktree: Option<PathBuf>,
    /// The task whose worktree it is, with its own branch, if it is one.
    pub task: Option<Owner>,
}

/// The task a worktree belongs to.
#[derive(Clone, Debug)]
pub struct Owner {
    /// The task id, when known.
    pub id: Option<String>,
    /// The branch it may move (full ref name); `None` when HEAD is detached in patch mode.
    pub branch: Option<String>,
    /// A patch-mode task active in the user's own worktree.
    pub patch: bool,
}

/// A refused transaction: the refs the task may not move.
#[derive(Clone, Debug)]
pub struct Refused {
    /// The refs refused, in input order.
    pub refs: Vec<String>,
    /// Where the transaction came from.
    pub here: Here,
}

/// The variable the shim sets to its parent process: the git running the transaction.
pub const GIT_ENV: &str = "GIT_TASK_HOOK_GIT";

/// Whether the git running the transaction is `git pack-refs` (run by `git gc` and automatic
/// maintenance too): it writes the refs' values as they are into `packed-refs` and deletes the
/// loose files, which the hook sees as updates and deletions though no ref moves.
fn packing_refs() -> bool {
    let Some(pid) = std::env::var(GIT_ENV)
        .ok()
        .and_then(|p| p.parse::<u32>().ok())
    else {
        return false;
    };
    let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return false;
    };
    let mut args = cmdline
        .split(|b| *b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned());
    let program = args.next().unwrap_or_default();
    if program.ends_with("git-pack-refs") {
        return true;
    }
    if !(program == "git" || program.ends_with("/git")) {
        return false;
    }
    // The first argument that is not one of git's own options is the command.
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-c" | "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path"
            | "--config-env" | "--list-cmds" => {
                args.next();
            }
            a if a.starts_with('-') => {}
            command => return command == "pack-refs",
        }
    }
    false
}

/// Judges a transaction in the `prepared` state; `Ok(None)` lets it go on.
pub fn prepared(
    repo: &Repo,
    settings: &Settings,
    updates: &[RefUpdate],
) -> Result<Option<Refused>> {
    if packing_refs() {
        return Ok(None);
    }
    let here = here(repo, settings);
    let Some(owner) = &here.task else {
        return Ok(None);
    };
    let refs: Vec<String> = updates
        .iter()
        .filter(|u| !allowed(repo, owner, u))
        .map(|u| u.name.clone())
        .collect();
    Ok((!refs.is_empty()).then_some(Refused { refs, here }))
}

/// Notes, in the `committed` state, each move of a watched branch as the worktree's; returns
/// how many were noted.
pub fn committed(repo: &Repo, settings: &Settings, updates: &[RefUpdate]) -> usize {
    if packing_refs() {
        return 0;
    }
    let mut noted = 0;
    let mut who = None;
    for u in updates {
        if !u.name.starts_with("refs/heads/") || !crate::ledger::moves::watched(repo, &u.name) {
            continue;
        }
        let who = who.get_or_insert_with(|| {
            let here = here(repo, settings);
            match here.worktree {
                Some(path) => format!("worktree {}", path.display()),
                None => "push".to_owned(),
            }
        });
        // The old value git was given may be none ("any"): the ledger's last tip is the old one.
        let last = crate::ledger::moves::read(repo, &u.name)
            .last()
            .and_then(|m| m.new.clone());
        if u.old.is_none() && u.new == last {
            // Written as it was: nothing moved.
            continue;
        }
        let old = u.old.clone().or(last);
        crate::ledger::moves::note(repo, &u.name, old.as_deref(), u.new.as_deref(), who);
        noted += 1;
    }
    noted
}

/// Whether the task `owner` may make the update `u` from its worktree.
fn allowed(repo: &Repo, owner: &Owner, u: &RefUpdate) -> bool {
    let name = u.name.as_str();
    if owner.branch.as_deref() == Some(name) || git_moves_it_in_passing(name) {
        return true;
    }
    if name == layout::NOTES_REF {
        return notes_appended(repo, u);
    }
    if name.starts_with("refs/notes/") {
        return true;
    }
    if owner.patch {
        // The user's own worktree: only what is another's is refused.
        return !(name.starts_with("refs/heads/")
            || name.starts_with(layout::TASKS_NS)
            || name.starts_with("refs/replace/")
            || name.starts_with("main-worktree/")
            || name.starts_with("worktrees/"));
    }
    // The remote-tracking ref of its own branch (`git push -u origin task/x`).
    if let (Some(rest), Some(short)) = (
        name.strip_prefix("refs/remotes/"),
        owner
            .branch
            .as_deref()
            .and_then(|b| crate::git::refs::branch_short(b)),
    ) {
        if rest.split_once('/').is_some_and(|(_, b)| b == short) {
            return true;
        }
    }
    false
}

/// Refs git moves on its own while working on a branch: HEAD, pseudo-refs, per-worktree refs.
fn git_moves_it_in_passing(name: &str) -> bool {
    name == "HEAD"
        || name == "refs/stash"
        || name.starts_with("refs/worktree/")
        || name.starts_with("refs/bisect/")
        || name.starts_with("refs/rewritten/")
        || (!name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_'))
}

/// Whether `u` puts one notes commit on top of `refs/notes/tasks` (its only parent is the tip
/// now, or none when there is no tip yet): what `notes.rewriteRef` and `git notes` do.
fn notes_appended(repo: &Repo, u: &RefUpdate) -> bool {
    let Some(new) = u.new.as_deref().and_then(|n| n.parse::<ObjectId>().ok()) else {
        return false;
    };
    let Ok(tip) = repo.find_ref(layout::NOTES_REF) else {
        return false;
    };
    crate::git::objects::commit_parents(repo, new)
        .is_ok_and(|parents| parents == Vec::from_iter(tip))
}

/// Where the transaction comes from: this worktree; for a push into the repository
/// (receive-pack runs the hook in a git dir; the shim says so) that is not a task's, the
/// worktree of this repository the pusher runs in (`worktree: None` when it runs in none).
pub fn here(repo: &Repo, settings: &Settings) -> Here {
    let local = look(repo, settings, &crate::git::normalize(repo.git_dir()));
    let pushed = std::env::var(PUSHED_BY_ENV).is_ok_and(|p| !p.is_empty());
    if local.task.is_some() || !pushed {
        return local;
    }
    match pusher_git_dir(repo) {
        Some(pusher) => look(repo, settings, &pusher),
        None => Here {
            worktree: None,
            ..local
        },
    }
}

/// Looks at the worktree whose private git dir is `git_dir`.
fn look(repo: &Repo, settings: &Settings, git_dir: &Path) -> Here {
    let common = repo.common_dir();
    let main = crate::git::normalize(git_dir) == common;
    let worktree = if main {
        repo.main_worktree().ok().filter(|_| !repo.is_bare())
    } else {
        std::fs::read_to_string(git_dir.join("gitdir"))
            .ok()
            .and_then(|t| {
                Path::new(t.trim_end_matches('\n'))
                    .parent()
                    .map(Path::to_path_buf)
            })
    };
    let head = std::fs::read_to_string(git_dir.join("HEAD")).unwrap_or_default();
    let mut head = head
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("ref: "))
        .map(str::to_owned);
    if head.as_deref() == Some("refs/heads/.invalid")
        && crate::git::normalize(repo.git_dir()) == crate::git::normalize(git_dir)
    {
        // reftable: HEAD is in the table, and only the repository opened here reads it.
        head = repo.head_branch().ok().flatten();
    }
    let task_of = |branch: &str| {
        let short = crate::git::refs::branch_short(branch)?;
        let id = layout::id_from_branch(&settings.branch_prefix, short)?;
        repo.find_ref(&layout::record_ref(&id))
            .ok()
            .flatten()
            .map(|_| id.to_string())
    };
    let task = if let Some(branch) = std::fs::read_to_string(git_dir.join(BRANCH_MARK))
        .ok()
        .and_then(|t| t.lines().next().map(str::to_owned))
        .filter(|b| b.starts_with("refs/heads/"))
    {
        Some(Owner {
            id: task_of(&branch),
            branch: Some(branch),
            patch: false,
        })
    } else if let Some(id) = head
        .as_deref()
        .filter(|_| !settings.branch_prefix.is_empty())
        .and_then(task_of)
    {
        Some(Owner {
            id: Some(id),
            branch: head.clone(),
            patch: false,
        })
    } else {
        crate::resolve::read_mark_file(git_dir)
            // A patch-mode task guards the user's worktree only while it is active (a mark an
            // older git-task left after `drop` is not obeyed; a record that cannot be read is).
            .filter(|mark| {
                mark.branch.is_some()
                    || !matches!(
                        crate::record::load(repo, &mark.id),
                        Ok(Some(r)) if !super::guarded::guards(r.state.status)
                    )
            })
            .map(|mark| Owner {
                id: Some(mark.id.to_string()),
                patch: mark.branch.is_none(),
                branch: mark.branch.or(head.clone()),
            })
    };
    Here { worktree, task }
}

/// For a push into this repository (receive-pack runs the hook): the private git dir of the
/// worktree of this repository the pusher runs in, if it runs in one.
fn pusher_git_dir(repo: &Repo) -> Option<PathBuf> {
    let receive_pack: u32 = std::env::var(PUSHED_BY_ENV).ok()?.parse().ok()?;
    let pusher = parent_of(receive_pack)?;
    let cwd = std::fs::read_link(format!("/proc/{pusher}/cwd")).ok()?;
    let git_dir = git_dir_above(&cwd)?;
    let common = match std::fs::read_to_string(git_dir.join("commondir")) {
        Ok(c) => crate::git::normalize(&git_dir.join(c.trim_end_matches('\n'))),
        Err(_) => crate::git::normalize(&git_dir),
    };
    (common == repo.common_dir()).then_some(git_dir)
}

/// The parent process of `pid` (Linux `/proc`).
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid …`: comm may hold spaces and parentheses; the last `)` ends it.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// The git dir of the worktree containing `dir`: the first `.git` above it (a linked
/// worktree's `.git` file names its private dir).
fn git_dir_above(dir: &Path) -> Option<PathBuf> {
    let mut at = Some(dir);
    while let Some(d) = at {
        if d.join(".git").exists() {
            return crate::git::fs::git_dir_at(d);
        }
        at = d.parent();
    }
    None
}

/// Marks `git_dir` (a linked worktree's private dir) as the worktree of the task whose branch
/// is `branch`, unless it is so marked already.
pub fn mark(git_dir: &Path, branch: &str) -> Result<()> {
    use crate::error::Context;
    let path = git_dir.join(BRANCH_MARK);
    let text = format!("{branch}\n");
    if std::fs::read_to_string(&path).is_ok_and(|t| t == text) {
        return Ok(());
    }
    std::fs::write(&path, text).context(|| format!("could not write '{}'", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ZERO: &str = "0000000000000000000000000000000000000000";

    #[test]
    fn input_lines_read_with_zeros_as_none() {
        let u = parse(&format!(
            "{ZERO} 1111111111111111111111111111111111111111 refs/heads/main\n\
             2222222222222222222222222222222222222222 {ZERO} refs/tasks/x/record\nbad\n"
        ));
        assert_eq!(u.len(), 2);
        assert_eq!(u[0].old, None);
        assert_eq!(u[0].name, "refs/heads/main");
        assert_eq!(u[1].new, None);
        assert!(u[1].old.is_some());
    }

    #[test]
    fn git_moves_in_passing_only_its_own_refs() {
        for free in [
            "HEAD",
            "ORIG_HEAD",
            "AUTO_MERGE",
            "refs/stash",
            "refs/bisect/bad",
            "refs/worktree/x",
            "refs/rewritten/onto",
        ] {
            assert!(git_moves_it_in_passing(free), "{free}");
        }
        for not in [
            "refs/heads/main",
            "main-worktree/HEAD",
            "worktrees/x/HEAD",
            "refs/tasks/x/record",
            "head",
            "refs/stash2",
        ] {
            assert!(!git_moves_it_in_passing(not), "{not}");
        }
    }

    #[test]
    fn the_parent_of_this_process_is_read() {
        assert_eq!(
            parent_of(std::process::id()),
            Some(std::os::unix::process::parent_id())
        );
    }
}
