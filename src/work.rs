//! A task's work as trees: where it started (origin), its checkpoints, and
//! what is in its worktree now. Shared by checkpoint, changes, diff, revert,
//! reset and commit; and the files panel of `changes` ([`files`]).
//!
//! - worktree mode: the origin is the base commit's tree; the task branch's
//!   `.task-contract.toml` is part of the worktree but never of the work.
//! - patch mode: changes are measured from the snapshot's files (SPEC §9), and
//!   undo goes back to the snapshot itself (HEAD, index and files).

use crate::contract::file::CONTRACT_FILE;
use crate::error::{Error, Result};
use crate::git::diff::renames::Status;
use crate::git::diff::unified;
use crate::git::{diff, objects, worktree, ObjectId, Repo};
use crate::record::Record;
use crate::snapshot::{self, read_snapshot, Snapshot, WorktreeState};
use crate::task::{layout, Mode, TaskId};
use std::collections::BTreeMap;
use std::path::Path;

/// A task's worktree, opened, with its state read.
pub struct Work {
    /// The repository as seen from the task's worktree.
    pub wt: Repo,
    /// HEAD, index and files now.
    pub state: WorktreeState,
    /// The task's mode.
    pub mode: Mode,
    /// The commit changes are measured from (base, or the snapshot commit, whose tree is the files at the start).
    pub origin: ObjectId,
    /// Its tree.
    pub origin_tree: ObjectId,
    /// Patch mode: the snapshot.
    pub snapshot: Option<Snapshot>,
}

impl Work {
    /// Returns the paths never shown as work (`.task-contract.toml` in worktree mode).
    pub fn skip(&self) -> &'static [&'static str] {
        skipped(self.mode)
    }

    /// Returns the tree checkpoint 0 stands for: the state before the first checkpoint.
    pub fn start_tree(&self) -> ObjectId {
        match &self.snapshot {
            Some(s) => s.worktree_tree,
            None => self.origin_tree,
        }
    }
}

/// Returns the paths never shown as work in `mode` (`.task-contract.toml` in worktree mode).
pub fn skipped(mode: Mode) -> &'static [&'static str] {
    match mode {
        Mode::Worktree => &[CONTRACT_FILE],
        Mode::Patch => &[],
    }
}

/// Opens the worktree of a live task and reads its state.
pub fn open(repo: &Repo, record: &Record) -> Result<Work> {
    let id = record.state.task_id();
    if !record.state.status.is_live() {
        return Err(Error::input(format!(
            "task '{id}' is {}; its work can no longer be changed",
            record.state.status
        ))
        .hint(format!("see what happened with 'git task log {id}'")));
    }
    let path = Path::new(&record.state.worktree);
    if !path.exists() {
        let err = Error::input(format!(
            "the worktree of task '{id}' is missing: '{}'",
            path.display()
        ));
        let has_branch =
            record.state.mode == Mode::Worktree && repo.find_ref(&record.state.branch)?.is_some();
        if !has_branch {
            return Err(err.hint("run 'git task sweep' to repair the task"));
        }
        let quote = crate::contract::judge::shell_quote;
        let git = format!("git -C {}", quote(&repo.common_dir().display().to_string()));
        return Err(err
            .hint(format!(
                "to keep working, check its branch out there again: {git} worktree prune && {git} worktree add {} {}",
                quote(&path.display().to_string()),
                quote(record.state.branch_short())
            ))
            .hint(format!(
                "or end the task: git task sweep (saves its commits as an attempt and marks '{id}' removed)"
            )));
    }
    let wt = worktree::open_at(path)?;
    let state = snapshot::read_to_keep(&wt)?;
    let snapshot = match record.state.mode {
        Mode::Patch => Some(read_snapshot(repo, &id)?.ok_or_else(|| {
            Error::input(format!("patch-mode task '{id}' has no snapshot"))
                .hint(format!("see 'git task log {id}'"))
        })?),
        Mode::Worktree => None,
    };
    let origin = crate::changes::task_base(repo, record)?;
    let origin_tree = objects::commit_tree(repo, origin)?;
    Ok(Work {
        wt,
        state,
        mode: record.state.mode,
        origin,
        origin_tree,
        snapshot,
    })
}

/// What a merged task landed: the tree on the target before and after it.
#[derive(Clone, Debug)]
pub struct Landed {
    /// The tree before the task landed.
    pub before: ObjectId,
    /// The tree it left.
    pub after: ObjectId,
    /// Where it landed: the target branch (full ref name), or `None` for a patch-mode task
    /// accepted in place.
    pub into: Option<String>,
}

/// The refusal of `diff`/`changes` for a task that is neither live nor merged (removed): its
/// worktree and branch are gone; the hint names where its saved work is.
pub fn nothing_to_show(repo: &Repo, record: &Record) -> Error {
    let id = record.state.task_id();
    let attempts = repo
        .refs_under(&format!("{}attempts/", layout::task_prefix(&id)))
        .unwrap_or_default();
    let err = Error::input(format!(
        "task '{id}' is {}: its worktree and branch are gone, there is nothing to show",
        record.state.status
    ))
    .hint(format!("see what happened with 'git task log {id}'"));
    let latest = attempts.iter().max_by_key(|(name, _)| {
        name.rsplit('/')
            .next()
            .and_then(|n| n.parse::<u32>().ok())
            .unwrap_or(0)
    });
    match latest {
        Some((name, _)) => err.hint(format!(
            "its saved work is in {} attempt ref(s), the latest: git show --stat {name}",
            attempts.len()
        )),
        None => err,
    }
}

/// Returns what a merged task landed (read from its `merged` event), or `None` when the task
/// is not merged. Read only: nothing is opened for writing.
pub fn landed(repo: &Repo, record: &Record) -> Result<Option<Landed>> {
    use crate::record::event::{Event, Merged, Provisioned};
    if record.state.status != crate::task::Status::Merged {
        return Ok(None);
    }
    let id = record.state.task_id();
    let oid = |s: &str| {
        ObjectId::from_hex(s.as_bytes()).map_err(|_| {
            Error::repo_msg(format!(
                "the merged event of '{id}' names a bad object '{s}'"
            ))
        })
    };
    let entries = crate::record::events(repo, record)?;
    let Some(merged) = entries.iter().rev().find_map(|e| match &e.event {
        Event::Merged(m) => Some(m.clone()),
        _ => None,
    }) else {
        return Err(Error::repo_msg(format!(
            "task '{id}' is merged but its record has no 'merged' event"
        )));
    };
    match merged {
        Merged::Branch {
            commit,
            commits,
            into,
            ..
        } => {
            let Some(last) = commit else {
                let tree = objects::empty_tree(repo);
                return Ok(Some(Landed {
                    before: tree,
                    after: tree,
                    into: Some(into.into()),
                }));
            };
            let last = oid(&last)?;
            let first = commits.first().map(|c| oid(c)).transpose()?.unwrap_or(last);
            let parent = objects::commit_parents(repo, first)?.first().copied();
            let before = match parent {
                Some(p) => objects::commit_tree(repo, p)?,
                None => objects::empty_tree(repo),
            };
            Ok(Some(Landed {
                before,
                after: objects::commit_tree(repo, last)?,
                into: Some(into.into()),
            }))
        }
        Merged::Patch { accepted, .. } => {
            let snapshot = entries.iter().rev().find_map(|e| match &e.event {
                Event::Provisioned(Provisioned::Patch { snapshot, .. }) => Some(snapshot.clone()),
                _ => None,
            });
            let after = oid(&accepted)?;
            let before = match snapshot {
                Some(s) => snapshot::parse_snapshot(repo, oid(&s)?)?.worktree_tree,
                None => after,
            };
            Ok(Some(Landed {
                before,
                after,
                into: None,
            }))
        }
    }
}

/// One checkpoint of a task.
#[derive(Clone, Copy, Debug)]
pub struct Checkpoint {
    /// Its number, from 1.
    pub n: u32,
    /// Its commit.
    pub commit: ObjectId,
    /// The tree of files it saved.
    pub tree: ObjectId,
}

/// Returns the checkpoints of `id`, in order.
pub fn checkpoints(repo: &Repo, id: &TaskId) -> Result<Vec<Checkpoint>> {
    let prefix = format!("{}checkpoints/", layout::task_prefix(id));
    let mut out = Vec::new();
    for (name, commit) in repo.refs_under(&prefix)? {
        let Some(n) = name
            .strip_prefix(&prefix)
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        out.push(Checkpoint {
            n,
            commit,
            tree: objects::commit_tree(repo, commit)?,
        });
    }
    out.sort_by_key(|c| c.n);
    Ok(out)
}

/// Returns checkpoint `n`, or an input error naming the ones there are.
pub fn checkpoint(repo: &Repo, id: &TaskId, n: u32) -> Result<(Checkpoint, Vec<Checkpoint>)> {
    let all = checkpoints(repo, id)?;
    match all.iter().find(|c| c.n == n) {
        Some(c) => Ok((*c, all)),
        None => {
            let have: Vec<String> = all.iter().map(|c| c.n.to_string()).collect();
            Err(
                Error::input(format!("task '{id}' has no checkpoint {n}")).hint(
                    if have.is_empty() {
                        format!("save one with 'git task checkpoint {id}'")
                    } else {
                        format!("its checkpoints are: {}", have.join(", "))
                    },
                ),
            )
        }
    }
}

/// Turns a path given on the command line into a repository path of the task's worktree: relative
/// to `cwd` when `cwd` is inside that worktree (as git does), else relative to its top; an
/// absolute path must lie inside the worktree. `None` when the path leaves the worktree (`..`
/// past its top, or an absolute path elsewhere).
pub fn repo_path(worktree: &Path, cwd: Option<&Path>, given: &str) -> Option<String> {
    let joined = if Path::new(given).is_absolute() {
        let inside = |p: &Path| {
            p.strip_prefix(worktree)
                .ok()
                .map(|r| r.to_string_lossy().replace('\\', "/"))
        };
        let lexical: std::path::PathBuf = Path::new(given).components().collect();
        match inside(&lexical) {
            Some(rel) => rel,
            None => inside(&std::fs::canonicalize(given).ok()?)?,
        }
    } else {
        let prefix = cwd
            .and_then(|c| c.strip_prefix(worktree).ok())
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .unwrap_or_default();
        if prefix.is_empty() {
            given.to_owned()
        } else {
            format!("{prefix}/{given}")
        }
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in joined.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

/// Turns command-line paths into repository paths of the task's worktree (see [`repo_path`]),
/// given the directory the command runs in; a path outside the worktree is bad input.
pub fn repo_paths(record: &Record, cwd: Option<&Path>, given: &[String]) -> Result<Vec<String>> {
    let worktree = Path::new(&record.state.worktree);
    let worktree = std::fs::canonicalize(worktree).unwrap_or_else(|_| worktree.to_path_buf());
    given
        .iter()
        .map(|g| {
            repo_path(&worktree, cwd, g).ok_or_else(|| {
                Error::input(format!(
                    "'{}' is outside the worktree of task '{}' ({})",
                    g.escape_debug(),
                    record.state.id,
                    worktree.display()
                ))
                .hint("name a file inside it, relative to the current directory or to the top of the worktree")
            })
        })
        .collect()
}

/// One row of the files panel.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct FileRow {
    /// The path now (the old path for a deletion).
    pub path: String,
    /// created, modified, deleted or renamed.
    pub status: Status,
    /// For a rename: where it came from.
    pub old_path: Option<String>,
    /// The checkpoint that last touched it; `null` when it changed after the last checkpoint or in none.
    pub checkpoint: Option<u32>,
    /// With `--stat`: the lines it added and removed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stat: Option<diff::stat::FileStat>,
}

/// Returns every file the task changed since its origin, uncommitted and untracked work included,
/// with the checkpoint that last touched it; renames paired as `git diff -M<renames>` pairs them
/// ([`similarity`]); with `stat`, each file's lines added and removed. For a merged task: the
/// files it landed (read only, no checkpoints).
pub fn files(repo: &Repo, record: &Record, renames: u64, stat: bool) -> Result<Vec<FileRow>> {
    let (pairs, last) = match landed(repo, record)? {
        Some(l) => (
            unified::pairs(
                repo,
                l.before,
                l.after,
                &[],
                skipped(record.state.mode),
                Some(renames),
            )?,
            BTreeMap::new(),
        ),
        None if record.state.status == crate::task::Status::Removed => {
            return Err(nothing_to_show(repo, record));
        }
        None => {
            let id = record.state.task_id();
            let w = open(repo, record)?;
            let pairs = unified::pairs(
                repo,
                w.origin_tree,
                w.state.worktree_tree,
                &[],
                w.skip(),
                Some(renames),
            )?;
            (pairs, attribution(repo, &w, &checkpoints(repo, &id)?)?)
        }
    };
    let stats = match stat {
        true => Some(diff::stat::files(repo, &pairs)?),
        false => None,
    };
    Ok(pairs
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            let c = p.change;
            let (status, old_path) = match (p.renamed_from, c.kind) {
                (Some((from, _)), _) => (Status::Renamed, Some(from)),
                (None, diff::ChangeKind::Added) => (Status::Created, None),
                (None, diff::ChangeKind::Deleted) => (Status::Deleted, None),
                (None, diff::ChangeKind::Modified) => (Status::Modified, None),
            };
            FileRow {
                checkpoint: last.get(&c.path).copied().flatten(),
                path: c.path,
                status,
                old_path,
                stat: stats.as_ref().map(|s| s[i].clone()),
            }
        })
        .collect())
}

/// Maps each path to the checkpoint that last changed it (`None`: changed after the last checkpoint).
fn attribution(
    repo: &Repo,
    w: &Work,
    checkpoints: &[Checkpoint],
) -> Result<BTreeMap<String, Option<u32>>> {
    let mut last = BTreeMap::new();
    let mut before = w.start_tree();
    for cp in checkpoints {
        for c in diff::tree_to_tree(repo, before, cp.tree)? {
            last.insert(c.path, Some(cp.n));
        }
        before = cp.tree;
    }
    for c in diff::tree_to_tree(repo, before, w.state.worktree_tree)? {
        last.insert(c.path, None);
    }
    Ok(last)
}

#[cfg(test)]
mod tests {
    use super::repo_path;
    use std::path::Path;

    #[test]
    fn paths_follow_the_current_directory_inside_the_worktree() {
        let wt = Path::new("/w/t");
        let some = |s: &str| Some(s.to_owned());
        assert_eq!(
            repo_path(wt, Some(Path::new("/w/t/src")), "a.rs"),
            some("src/a.rs")
        );
        assert_eq!(
            repo_path(wt, Some(Path::new("/w/t/src")), "../README"),
            some("README")
        );
        assert_eq!(
            repo_path(wt, Some(Path::new("/elsewhere")), "src/a.rs"),
            some("src/a.rs")
        );
        assert_eq!(repo_path(wt, None, "./src/"), some("src"));
        assert_eq!(repo_path(wt, Some(Path::new("/w/t")), "."), some(""));
        assert_eq!(repo_path(wt, None, "/w/t/src/a.rs"), some("src/a.rs"));
    }

    #[test]
    fn paths_outside_the_worktree_are_refused() {
        let wt = Path::new("/w/t");
        assert_eq!(repo_path(wt, Some(Path::new("/w/t")), "../x"), None);
        assert_eq!(repo_path(wt, Some(Path::new("/w/t/src")), "../../x"), None);
        assert_eq!(repo_path(wt, None, "src/../../x"), None);
        assert_eq!(repo_path(wt, None, "/w/other/x"), None);
        assert_eq!(repo_path(wt, None, "/w/t/../x"), None);
    }
}
