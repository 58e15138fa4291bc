//! The warning `start`, `status`, `list` and every other command give when commits are not
//! checked at commit time: which worktrees, why, and the command that restores the check.

use super::Out;
use crate::hooks::Enforcement;

/// Warns on stderr, once per reason, about the worktrees (`(what the warning calls it, its
/// enforcement)`) whose commits do not run the contract check, naming them all, with the
/// command that restores it. Enforced ones are left out.
pub fn warn_unchecked(out: &Out, worktrees: &[(String, Enforcement)]) {
    let mut reasons: Vec<(&Enforcement, Vec<&str>)> = Vec::new();
    for (name, state) in worktrees {
        if *state == Enforcement::Enforced {
            continue;
        }
        match reasons.iter_mut().find(|(s, _)| *s == state) {
            Some((_, names)) => names.push(name),
            None => reasons.push((state, vec![name])),
        }
    }
    for (state, names) in reasons {
        // Task worktrees together: "the worktrees of tasks 'a' and 'b'".
        let (tasks, others): (Vec<&str>, Vec<&str>) =
            names.iter().partition(|n| n.starts_with(TASK_PREFIX));
        let mut names = others;
        let ids: Vec<&str> = tasks.iter().map(|n| &n[TASK_PREFIX.len()..]).collect();
        let merged = match ids.as_slice() {
            [] => None,
            [_] => Some(tasks[0].to_owned()),
            _ => Some(format!("the worktrees of tasks {}", join_some(&ids))),
        };
        if let Some(merged) = &merged {
            names.insert(0, merged);
        }
        let whose = join(&names);
        match state {
            Enforcement::Enforced => {}
            Enforcement::NotInstalled => {
                out.warn(format_args!(
                    "commits in {whose} do not run git-task's pre-commit hook: contracts are checked only at merge"
                ));
                out.hint("install the hooks: git task hooks install");
            }
            Enforcement::Overwritten { path } => {
                out.warn(format_args!(
                    "another hook replaced git-task's at '{path}': commits in {whose} are not checked against contracts until merge"
                ));
                out.hint("run it behind git-task's check: git task hooks install");
            }
            Enforcement::ClientsUnchecked {
                clients,
                dirs,
                tracked,
            } => {
                let dirs: Vec<String> = dirs
                    .iter()
                    .map(|d| format!("'{}'", super::escape(d)))
                    .collect();
                let dirs: Vec<&str> = dirs.iter().map(String::as_str).collect();
                out.warn(format_args!(
                    "commits made with {} in {whose} are not checked against contracts until merge: they read hooks from {} only (no hooks defined in config), where git-task's pre-commit copy is not; the git CLI still runs the check (hooks defined in config)",
                    join(clients),
                    join(&dirs)
                ));
                match (dirs.contains(&"'/dev/null'"), tracked) {
                    (true, _) => out.hint("let them run hooks again: git config --unset core.hooksPath && git task hooks install"),
                    // git-task never writes into files the repository tracks.
                    (false, true) => out.hint("the repository tracks that directory and git-task writes nothing there: commit with the git CLI, or point core.hooksPath at an untracked directory and run git task hooks install"),
                    (false, false) => out.hint("put git-task's pre-commit copy back: git task hooks install"),
                }
            }
            Enforcement::Disabled => {
                out.warn(format_args!(
                    "core.hooksPath is /dev/null, so git runs no hooks: commits in {whose} are not checked against contracts until merge"
                ));
                out.hint("turn hooks back on and install them: git config --unset core.hooksPath && git task hooks install");
            }
        }
    }
}

/// How the warnings name a worktree task's worktree (then the quoted id).
const TASK_PREFIX: &str = "the worktree of task ";

/// What the warnings call the main worktree.
pub const MAIN: &str = "the main worktree";

/// The entries [`warn_unchecked`] takes for the live tasks `(id, mode, worktree path)` whose
/// commits should be checked (worktree tasks, and patch-mode tasks that guard the worktree
/// they started in), and for the main worktree when the hooks were installed and no longer run
/// there: the same true statement from `start`, `status` and `list`.
pub fn unchecked_tasks<'a>(
    repo: &crate::git::Repo,
    tasks: impl IntoIterator<Item = (&'a str, crate::task::Mode, &'a str)>,
) -> Vec<(String, Enforcement)> {
    unchecked(repo, tasks, false)
}

/// [`unchecked_tasks`] for the one task `start` and `status <task>` speak of: "this task's
/// worktree".
pub fn unchecked_task(
    repo: &crate::git::Repo,
    id: &str,
    mode: crate::task::Mode,
    path: &str,
) -> Vec<(String, Enforcement)> {
    unchecked(repo, [(id, mode, path)], true)
}

fn unchecked<'a>(
    repo: &crate::git::Repo,
    tasks: impl IntoIterator<Item = (&'a str, crate::task::Mode, &'a str)>,
    own: bool,
) -> Vec<(String, Enforcement)> {
    let mut out = Vec::new();
    let mut main_named = false;
    // With a thousand tasks, the same answer for each linked worktree is read once, and the
    // main worktree's (a patch-mode task's), which may differ, once.
    let uniform = crate::hooks::uniform_enforcement(repo);
    let configured = crate::hooks::configured(repo);
    let linked_enforced = uniform == Some(Enforcement::Enforced);
    let mut main_state = match linked_enforced {
        true => Some(crate::hooks::enforcement_known(repo, None, configured)),
        false => None,
    };
    // With every worktree enforced, nothing to name: no task is looked at.
    let all_enforced = linked_enforced && main_state == Some(Enforcement::Enforced);
    let tasks = tasks
        .into_iter()
        .take_while(|_| !all_enforced)
        // A worktree task's worktree is a linked one.
        .filter(|(_, mode, _)| !linked_enforced || *mode == crate::task::Mode::Patch);
    for (id, mode, path) in tasks {
        // Where the task works: a linked worktree (its git dir, when it must be read) or the
        // main worktree. A worktree task's is a linked one: with one answer for every linked
        // worktree, its `.git` file is not read (`list` of a thousand tasks).
        let place = match (mode, &uniform) {
            (crate::task::Mode::Worktree, Some(_)) => Place::Linked(None),
            _ => match crate::hooks::worktrees::git_dir_of(std::path::Path::new(path)) {
                Some(git_dir) => Place::Linked(Some(git_dir)),
                None => Place::Main,
            },
        };
        let state = match (&uniform, &place) {
            (_, Place::Main) => main_state
                .get_or_insert_with(|| crate::hooks::enforcement_known(repo, None, configured))
                .clone(),
            (Some(state), Place::Linked(_)) => state.clone(),
            (None, Place::Linked(git_dir)) => {
                crate::hooks::enforcement_known(repo, git_dir.as_deref(), configured)
            }
        };
        main_named |= place == Place::Main;
        let name = match (mode, &place) {
            _ if own => "this task's worktree".to_owned(),
            (crate::task::Mode::Patch, Place::Main) => format!("{MAIN} (patch-mode task '{id}')"),
            (crate::task::Mode::Patch, Place::Linked(_)) => {
                format!("the worktree of patch-mode task '{id}'")
            }
            _ => format!("{TASK_PREFIX}'{id}'"),
        };
        out.push((name, state));
    }
    if !main_named {
        if let Some(state) = crate::hooks::main_bypassed(repo) {
            out.push((MAIN.to_owned(), state));
        }
    }
    out
}

/// Where a task works, as the warning tells them apart.
#[derive(PartialEq)]
enum Place {
    /// A linked worktree, with its git dir when it was read.
    Linked(Option<std::path::PathBuf>),
    /// The main worktree.
    Main,
}

/// The most task ids a warning names; the rest are counted.
const NAMED: usize = 5;

/// [`join`] of the first [`NAMED`] ids, and how many more there are: a warning stays one
/// line with a thousand tasks.
fn join_some(ids: &[&str]) -> String {
    match ids.len() > NAMED {
        true => format!("{} and {} more", ids[..NAMED].join(", "), ids.len() - NAMED),
        false => join(ids),
    }
}

/// `a`, `a and b`, `a, b and c`.
fn join(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::join_some;

    #[test]
    fn names_five_ids_and_counts_the_rest() {
        assert_eq!(join_some(&["'a'", "'b'"]), "'a' and 'b'");
        let ids: Vec<String> = (0..7).map(|i| format!("'t{i}'")).collect();
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        assert_eq!(join_some(&ids), "'t0', 't1', 't2', 't3', 't4' and 2 more");
        assert_eq!(join_some(&ids[..5]), "'t0', 't1', 't2', 't3' and 't4'");
    }
}
