//! The repository a hook runs for, when the client's environment cannot be trusted (SPEC §8:
//! the hooks fail closed).
//!
//! git runs hooks at the top of the worktree and exports `GIT_DIR` only as that worktree's
//! own git dir (the directory `.git` is, or names), and `GIT_INDEX_FILE` as the index it
//! commits. Other clients are less careful: gitg hands its hooks `GIT_DIR=(null)` and an
//! empty `GIT_INDEX_FILE` in a linked worktree (it computes `GIT_DIR` as the git dir's path
//! relative to the worktree, which has none there). A hook that trusted them would find no
//! branch and allow the commit. So before `git task hook` opens the repository:
//!
//! - `GIT_DIR` is dropped (with `GIT_WORK_TREE` and `GIT_COMMON_DIR`, which go with it) when
//!   it is unusable (`(null)`, empty, no `HEAD` there) or names another directory than the
//!   `.git` of the directory the hook runs in; the repository is then found from there.
//! - `GIT_INDEX_FILE` is dropped when it is unusable (`(null)`, empty, not a file) or lies in
//!   the git dir that was dropped; the worktree's own index is then judged.
//!
//! The shims decide the same way, without starting a process (see `hooks/pre-commit`).

use std::path::{Path, PathBuf};

/// What [`sanitize`] dropped.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dropped {
    /// The `GIT_DIR` that was not used.
    pub git_dir: Option<String>,
    /// The `GIT_INDEX_FILE` that was not used.
    pub index_file: Option<String>,
}

/// Decides which of git's variables to drop, given their values and the directory the hook
/// runs in (no change to the environment).
pub fn unusable(cwd: &Path, git_dir: Option<&str>, index_file: Option<&str>) -> Dropped {
    let abs = |p: &str| cwd.join(p);
    let here = own_git_dir(cwd);
    let git_dir_bad = git_dir.is_some_and(|d| {
        !usable(d)
            || !abs(d).join("HEAD").is_file()
            || here.as_deref().is_some_and(|h| !same_dir(h, &abs(d)))
    });
    let index_bad = index_file.is_some_and(|f| {
        !usable(f)
            || !abs(f).is_file()
            || (git_dir_bad
                && git_dir.is_some_and(|d| {
                    usable(d)
                        && inside(&abs(f), &abs(d))
                        && !here.as_deref().is_some_and(|h| inside(&abs(f), h))
                }))
    });
    Dropped {
        git_dir: git_dir.filter(|_| git_dir_bad).map(str::to_owned),
        index_file: index_file.filter(|_| index_bad).map(str::to_owned),
    }
}

/// The variable that tells the re-run ([`rerun_if_unusable`]) what its parent dropped.
pub const DROPPED_ENV: &str = "GIT_TASK_HOOK_DROPPED";

/// When [`unusable`] names variables to drop, runs this same command again without them (the
/// process's own environment is never changed) and returns its exit code; `None` when there is
/// nothing to drop, or this is already the re-run. Only the hook path calls it, and a broken
/// environment is the only case that costs the extra process.
pub fn rerun_if_unusable() -> Option<crate::Result<i32>> {
    if std::env::var_os(DROPPED_ENV).is_some() {
        return None;
    }
    let cwd = std::env::current_dir().ok()?;
    let var = |name: &str| std::env::var_os(name).map(|v| v.to_string_lossy().into_owned());
    let dropped = unusable(
        &cwd,
        var("GIT_DIR").as_deref(),
        var("GIT_INDEX_FILE").as_deref(),
    );
    if dropped == Dropped::default() {
        return None;
    }
    let run = || -> crate::Result<i32> {
        let exe = std::env::current_exe()
            .map_err(|e| crate::Error::repo("could not find git-task's own binary", e))?;
        let mut cmd = std::process::Command::new(exe);
        cmd.args(std::env::args_os().skip(1))
            .env(DROPPED_ENV, dropped.describe());
        if dropped.git_dir.is_some() {
            for name in ["GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR"] {
                cmd.env_remove(name);
            }
        }
        if dropped.index_file.is_some() {
            cmd.env_remove("GIT_INDEX_FILE");
        }
        let status = cmd
            .status()
            .map_err(|e| crate::Error::repo("could not run git-task's hook again", e))?;
        Ok(status.code().unwrap_or(128))
    };
    Some(run())
}

impl Dropped {
    /// `GIT_DIR='(null)' and GIT_INDEX_FILE=''`.
    pub fn describe(&self) -> String {
        let what: Vec<String> = [
            ("GIT_DIR", &self.git_dir),
            ("GIT_INDEX_FILE", &self.index_file),
        ]
        .into_iter()
        .filter_map(|(name, v)| v.as_ref().map(|v| format!("{name}='{}'", v.escape_debug())))
        .collect();
        what.join(" and ")
    }
}

/// The refusal when, without the variables its parent dropped ([`DROPPED_ENV`]), the re-run
/// finds no repository either: whether the commit is a task's cannot be told, so the hook
/// refuses (exit 128) rather than allow. `None` when nothing was dropped.
pub fn cannot_tell(err: &crate::Error) -> Option<crate::Error> {
    let what = std::env::var(DROPPED_ENV).ok()?;
    let cwd = std::env::current_dir().unwrap_or_default();
    Some(
        crate::Error::repo_msg(format!(
            "git-task's hook cannot tell whether this is a task's worktree: the client passed {what} (not usable), and no repository was found from '{}'",
            cwd.display()
        ))
        .with_code("hook_repository_unknown")
        .hint("run the hook from the top of the worktree, or commit with the git command line")
        .hint(err.to_string()),
    )
}

/// Whether a variable's value can name a path at all: gitg writes a missing one as `(null)`.
fn usable(value: &str) -> bool {
    !value.is_empty() && value != "(null)"
}

/// The git dir the `.git` in `dir` is (a directory) or names (a file: `gitdir: <path>`).
fn own_git_dir(dir: &Path) -> Option<PathBuf> {
    crate::git::fs::git_dir_at(dir)
}

/// Whether two paths name the same directory (both must exist).
fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Whether `path` lies inside the directory `dir`.
fn inside(path: &Path, dir: &Path) -> bool {
    let path = path
        .parent()
        .and_then(|p| p.canonicalize().ok())
        .map(|p| p.join(path.file_name().unwrap_or_default()));
    match (path, dir.canonicalize()) {
        (Some(p), Ok(d)) => p.starts_with(d),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unusable_values_are_dropped_and_usable_ones_kept() {
        let tmp = std::env::temp_dir().join(format!("git-task-env-{}", std::process::id()));
        let wt = tmp.join("wt");
        let gd = tmp.join("repo/.git/worktrees/wt");
        let other = tmp.join("other/.git");
        for d in [&wt, &gd, &other] {
            std::fs::create_dir_all(d).unwrap();
        }
        for d in [&gd, &other] {
            std::fs::write(d.join("HEAD"), "ref: refs/heads/main\n").unwrap();
            std::fs::write(d.join("index"), "DIRC").unwrap();
        }
        std::fs::write(wt.join(".git"), format!("gitdir: {}\n", gd.display())).unwrap();
        let s = |p: &Path| p.display().to_string();
        let index = s(&gd.join("index"));
        // What git passes: kept.
        assert_eq!(
            unusable(&wt, Some(&s(&gd)), Some(&index)),
            Dropped::default()
        );
        // gitg's: both dropped.
        let d = unusable(&wt, Some("(null)"), Some(""));
        assert_eq!(d.git_dir.as_deref(), Some("(null)"));
        assert_eq!(d.index_file.as_deref(), Some(""));
        for bad in ["", "/nonexistent/git-dir"] {
            assert!(unusable(&wt, Some(bad), None).git_dir.is_some(), "{bad}");
        }
        // Another repository's git dir, and its index with it.
        let d = unusable(&wt, Some(&s(&other)), Some(&s(&other.join("index"))));
        assert!(d.git_dir.is_some() && d.index_file.is_some(), "{d:?}");
        // An index that does not exist, or is a directory.
        for bad in ["(null)", "/nonexistent/index", &s(&gd)] {
            assert!(unusable(&wt, None, Some(bad)).index_file.is_some(), "{bad}");
        }
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
