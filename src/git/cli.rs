//! The one place in production code that runs the `git` program.
//!
//! gix 0.90 can check out a fresh worktree but cannot safely update a worktree
//! whose branch moved (STYLE.md B.14: a hand-made version silently overwrote a
//! local edit in the spike). `git::checkout::twoway` does that update in process for the
//! cases where git's answer is certain; everything else is left to git, which
//! git-task asks for exactly two steps, both scoped to one worktree with
//! `git -C <worktree>`:
//!
//! * [`two_tree_update`]: `git read-tree -m -u <old> <new>` moves a worktree's
//!   index and files from one commit to another with git's own safety rules:
//!   a path that differs between `old` and `new` must be unmodified (index and
//!   file) in the worktree, and no untracked or ignored file may be in the way;
//!   everything else (unrelated edits, staged changes) stays as it is. With
//!   `dry_run` (`-n`) the same checks run and nothing is written, which is how
//!   `merge` refuses *before* any ref moves when its own quick check of the
//!   changed paths (`git::checkout::twoway::is_certainly_safe`) is not certain, and it is
//!   the update itself whenever `git::checkout::twoway::update` declines (a local change,
//!   a file becoming a directory, attributes, a split index or untracked cache).
//!   read-tree trusts the index's stat data, so a refusal that only says "not
//!   uptodate" is retried once after `git update-index -q --refresh`.
//! * [`merge_leaving_conflicts`]: `git merge` in a task worktree, used by `sync`
//!   only when the in-process merge found conflicts, so the user gets git's
//!   usual conflict state (markers, `MERGE_HEAD`) to resolve.
//! * [`fetch`] and [`push_atomic`]: the transport of `git task push`, `fetch`,
//!   `adopt` and `merge --remote` (SPEC §6). gix 0.90 cannot push at all, and
//!   its fetch would need the `blocking-network-client` feature plus an HTTP
//!   stack to reach the remotes users have (https, ssh with their agent and
//!   config); git already speaks every transport and honours the user's
//!   credentials, `insteadOf` and proxies. Both run at the root of the
//!   current worktree (where a remote given as a relative path is resolved, as
//!   for the user's own `git`), change no worktree, and never prompt.
//!
//! Each child gets the environment of the calling process minus every variable
//! that git sets for hooks (`GIT_DIR`, `GIT_INDEX_FILE`, `GIT_WORK_TREE`, …),
//! which would otherwise point it at another worktree when git-task runs inside
//! a hook. Nothing else in the crate spawns git.

use crate::error::{Error, Result};
use crate::git::ObjectId;
use std::path::Path;
use std::process::{Command, Stdio};

/// Variables that would make a child `git` prompt or word its reflog as the calling command.
const GIT_CALLER_ENV: &[&str] = &["GIT_REFLOG_ACTION", "GIT_EDITOR"];

/// What one `git` run printed and how it ended.
#[derive(Clone, Debug)]
pub struct GitRun {
    /// Whether it exited 0.
    pub success: bool,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
}

fn git(worktree: &Path) -> Command {
    let mut cmd = Command::new("git");
    // The graft file is switched off below; git would advise on it in every message.
    // git-task's own git runs no hook and no fsmonitor: a task worktree's admin dir (hooks,
    // `config.worktree`) is the agent's to write, and what git-task runs there must not run
    // the agent's code for the user (SPEC §11).
    cmd.args(["-c", "advice.graftFileDeprecated=false"])
        .args(["-c", "core.hooksPath=/dev/null"])
        .args(["-c", "core.fsmonitor=false"])
        .arg("-C")
        .arg(worktree);
    for var in crate::git::LOCAL_ENV.iter().chain(GIT_CALLER_ENV) {
        cmd.env_remove(var);
    }
    // Never wait for an editor or a terminal prompt (SPEC §2.5).
    // Objects are what they are: no replace refs, no grafts (SPEC §7.4), as in process.
    // git's messages are parsed (`listed_paths`, the lease's `(stale info)`): in English.
    cmd.env("LC_ALL", "C")
        .env("LANGUAGE", "C")
        .env("GIT_NO_REPLACE_OBJECTS", "1")
        .env("GIT_GRAFT_FILE", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_EDITOR", "true")
        .stdin(Stdio::null());
    // Without a configured identity, git's commits sign like git-task's own
    // (a variable the user set wins: git-task's process environment is left as it is).
    if crate::git::fallback_identity_used() {
        let (name, email) = crate::git::FALLBACK_IDENTITY;
        for (var, value) in [("GIT_COMMITTER_NAME", name), ("GIT_COMMITTER_EMAIL", email)] {
            if std::env::var_os(var).is_none() {
                cmd.env(var, value);
            }
        }
    }
    cmd
}

/// The version (major, minor) of the `git` on `PATH`, read once per process with
/// `git --version` and kept; `None` when there is no git or its answer cannot be read.
/// Only `hooks install` and `hooks status` ask (never the hooks themselves).
pub fn version() -> Option<(u32, u32)> {
    static VERSION: std::sync::OnceLock<Option<(u32, u32)>> = std::sync::OnceLock::new();
    *VERSION.get_or_init(|| {
        let out = Command::new("git")
            .arg("--version")
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            .output()
            .ok()?;
        parse_version(&String::from_utf8_lossy(&out.stdout))
    })
}

/// Reads `git version 2.55.0` (or `2.39.5 (Apple Git-154)`, `2.54.0.rc1`) as (2, 55).
pub fn parse_version(text: &str) -> Option<(u32, u32)> {
    let v = text.trim().strip_prefix("git version ")?;
    let mut parts = v.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

fn run(mut cmd: Command, what: &str) -> Result<GitRun> {
    let out = cmd.output().map_err(|e| {
        let err = Error::repo(format!("could not run git to {what}"), e);
        err.hint("git-task needs the 'git' program on PATH for this step")
    })?;
    Ok(GitRun {
        success: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// Moves the index and files of `worktree` from commit `old` to commit `new`
/// (`git read-tree -m -u old new`); with `dry_run` only checks that it would succeed.
///
/// Returns the run: on refusal (`success == false`) nothing was written, and
/// `stderr` names the paths that would have been overwritten.
pub fn two_tree_update(
    worktree: &Path,
    old: ObjectId,
    new: ObjectId,
    dry_run: bool,
) -> Result<GitRun> {
    let mut cmd = git(worktree);
    cmd.args(["read-tree", "-m", "-u"]);
    if dry_run {
        cmd.arg("-n");
    }
    cmd.arg(old.to_string()).arg(new.to_string());
    run(cmd, &format!("update '{}'", worktree.display()))
}

/// Moves the index and files of `worktree` from `old` to `new` for real; when git
/// only refuses because the index's stat data is stale (a touched but unchanged
/// file), refreshes the index and tries once more, as `git merge` would.
pub fn update_worktree(worktree: &Path, old: ObjectId, new: ObjectId) -> Result<GitRun> {
    let run = two_tree_update(worktree, old, new, false)?;
    if run.success || !run.stderr.contains("not uptodate") {
        return Ok(run);
    }
    refresh_index(worktree)?;
    two_tree_update(worktree, old, new, false)
}

/// Refreshes the stat data of the index of `worktree` (`git update-index -q --refresh`), so that
/// [`two_tree_update`] does not mistake a touched but unchanged file for a local change.
pub fn refresh_index(worktree: &Path) -> Result<()> {
    let mut cmd = git(worktree);
    cmd.args(["update-index", "-q", "--refresh"]);
    // Exit 1 only means "some files are modified", which the next read-tree reports precisely.
    run(
        cmd,
        &format!("refresh the index of '{}'", worktree.display()),
    )?;
    Ok(())
}

/// Puts the worktree `worktree` (a merge gate checkout: git-task's own) exactly at `commit`:
/// `git reset -q --hard <commit>` (HEAD, index and tracked files), then `git clean -ffdq`
/// (every untracked file and directory that is not ignored, nested repositories too).
/// Ignored files stay.
pub fn reset_hard_and_clean(worktree: &Path, commit: ObjectId) -> Result<()> {
    let what = format!("reset '{}'", worktree.display());
    let mut cmd = git(worktree);
    cmd.args(["reset", "-q", "--no-recurse-submodules", "--hard"])
        .arg(commit.to_string());
    let reset = run(cmd, &what)?;
    if !reset.success {
        return Err(Error::repo_msg(format!(
            "could not reset '{}': {}",
            worktree.display(),
            reset.stderr.trim()
        )));
    }
    let mut cmd = git(worktree);
    cmd.args(["clean", "-ffdq"]);
    let clean = run(cmd, &what)?;
    if !clean.success {
        return Err(Error::repo_msg(format!(
            "could not delete the untracked files of '{}': {}",
            worktree.display(),
            clean.stderr.trim()
        )));
    }
    Ok(())
}

/// The tree the index of `worktree` holds (`git write-tree`, which also brings the index's
/// cached tree up to date).
pub fn index_tree(worktree: &Path) -> Result<ObjectId> {
    let mut cmd = git(worktree);
    cmd.arg("write-tree");
    let out = run(cmd, &format!("read the index of '{}'", worktree.display()))?;
    if !out.success {
        return Err(Error::repo_msg(format!(
            "could not read the index of '{}': {}",
            worktree.display(),
            out.stderr.trim()
        )));
    }
    out.stdout
        .trim()
        .parse()
        .map_err(|e| Error::repo(format!("git write-tree printed '{}'", out.stdout.trim()), e))
}

/// Runs `git merge --no-ff --no-edit -m message commit` in `worktree`, leaving git's conflict state when it fails.
pub fn merge_leaving_conflicts(
    worktree: &Path,
    commit: ObjectId,
    name: &str,
    message: &str,
) -> Result<GitRun> {
    let mut cmd = git(worktree);
    cmd.args([
        "merge",
        "--no-ff",
        "--no-edit",
        "--no-verify",
        "-m",
        message,
    ])
    .arg(commit.to_string());
    let run = run(cmd, &format!("merge in '{}'", worktree.display()))?;
    if !run.success {
        name_conflict_markers(worktree, commit, name)?;
    }
    Ok(run)
}

/// git labels the other side of a merge of a commit id with that id (`>>>>>>> 3ed7…`): in
/// each conflicted regular file, the marker names `name` (the branch it came from) instead.
fn name_conflict_markers(worktree: &Path, commit: ObjectId, name: &str) -> Result<()> {
    let mut cmd = git(worktree);
    cmd.args(["diff", "--name-only", "-z", "--diff-filter=U"]);
    let listed = run(
        cmd,
        &format!("list the conflicts in '{}'", worktree.display()),
    )?;
    let marker = format!(">>>>>>> {commit}");
    let named = format!(">>>>>>> {name}");
    for path in listed.stdout.split('\0').filter(|p| !p.is_empty()) {
        let file = worktree.join(path);
        let is_file = std::fs::symlink_metadata(&file).is_ok_and(|m| m.file_type().is_file());
        if !is_file {
            continue;
        }
        let Ok(text) = std::fs::read(&file) else {
            continue;
        };
        let mut out = Vec::with_capacity(text.len());
        let mut changed = false;
        for line in text.split_inclusive(|b| *b == b'\n') {
            let body = line.strip_suffix(b"\n").unwrap_or(line);
            let body = body.strip_suffix(b"\r").unwrap_or(body);
            if body == marker.as_bytes() {
                out.extend_from_slice(named.as_bytes());
                out.extend_from_slice(&line[body.len()..]);
                changed = true;
            } else {
                out.extend_from_slice(line);
            }
        }
        if changed {
            std::fs::write(&file, out)
                .map_err(|e| Error::repo(format!("could not write '{}'", file.display()), e))?;
        }
    }
    Ok(())
}

/// Runs `git fetch` of `refspecs` from `remote` into the repository at `git_dir` (a worktree
/// root or a bare repository's git dir): no tags, no `FETCH_HEAD`, no automatic maintenance, quiet.
pub fn fetch(git_dir: &Path, remote: &str, refspecs: &[String]) -> Result<GitRun> {
    let mut cmd = git(git_dir);
    cmd.args([
        "-c",
        "gc.auto=0",
        "-c",
        "maintenance.auto=false",
        "fetch",
        "--quiet",
        "--no-tags",
        "--no-write-fetch-head",
        "--",
        remote,
    ])
    .args(refspecs);
    run(cmd, &format!("fetch from '{remote}'"))
}

/// One ref an atomic push sets on the remote, with the lease it must match there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PushRef {
    /// The full ref name on the remote.
    pub name: String,
    /// What it is set to (`None`: deleted).
    pub new: Option<ObjectId>,
    /// What it must hold on the remote before (`None`: it must not exist).
    pub expect: Option<ObjectId>,
}

/// Pushes every ref of `refs` to `remote` in one atomic push (`git push --atomic --porcelain`),
/// each with `--force-with-lease=<name>:<expect>`: all land, or none does when any lease fails.
///
/// A lease that failed shows `(stale info)` in the returned `stdout`.
pub fn push_atomic(git_dir: &Path, remote: &str, refs: &[PushRef]) -> Result<GitRun> {
    let mut cmd = git(git_dir);
    cmd.args([
        "-c",
        "gc.auto=0",
        "-c",
        "maintenance.auto=false",
        "push",
        "--atomic",
        "--porcelain",
        "--no-recurse-submodules",
    ]);
    for r in refs {
        let expect = r.expect.map(|e| e.to_string()).unwrap_or_default();
        cmd.arg(format!("--force-with-lease={}:{expect}", r.name));
    }
    cmd.arg("--").arg(remote);
    for r in refs {
        let src = r.new.map(|n| n.to_string()).unwrap_or_default();
        cmd.arg(format!("{src}:{}", r.name));
    }
    run(cmd, &format!("push to '{remote}'"))
}

/// Extracts the paths git lists (one per indented line) from a refusal such as
/// "Your local changes to the following files would be overwritten".
pub fn listed_paths(stderr: &str) -> Vec<String> {
    let mut out: Vec<String> = stderr
        .lines()
        .filter(|l| l.starts_with('\t') || l.starts_with("    "))
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect();
    for line in stderr.lines() {
        // "error: Entry 'a.txt' not uptodate. Cannot merge." and "error: Untracked working tree file 'x' would be overwritten by merge."
        if let Some(start) = line.find('\'') {
            if let Some(len) = line[start + 1..].find('\'') {
                let path = &line[start + 1..start + 1 + len];
                if line.contains("not uptodate")
                    || line.contains("would be overwritten")
                    || line.contains("would be lost")
                {
                    out.push(path.to_owned());
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn paths_from_git_refusals() {
        let text = "error: Entry 'src/a.rs' not uptodate. Cannot merge.\n";
        assert_eq!(super::listed_paths(text), vec!["src/a.rs"]);
        let text = "error: Untracked working tree file 'new.txt' would be overwritten by merge.\n";
        assert_eq!(super::listed_paths(text), vec!["new.txt"]);
        let text = "error: Your local changes to the following files would be overwritten by merge:\n\tb.txt\n\tc/d.txt\nPlease commit\n";
        assert_eq!(super::listed_paths(text), vec!["b.txt", "c/d.txt"]);
    }

    #[test]
    fn git_versions() {
        assert_eq!(super::parse_version("git version 2.55.0\n"), Some((2, 55)));
        assert_eq!(
            super::parse_version("git version 2.39.5 (Apple Git-154)"),
            Some((2, 39))
        );
        assert_eq!(
            super::parse_version("git version 2.54.0.rc1"),
            Some((2, 54))
        );
        assert_eq!(super::parse_version("hub version 2"), None);
    }
}
