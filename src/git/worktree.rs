//! Linked worktrees: create, list and remove them in process.
//!
//! Listing reads git's administrative files directly (`<common>/worktrees/*/
//! gitdir` and `HEAD`), which is what `git worktree list` does and keeps
//! `list` cheap with a thousand tasks.

use crate::error::{Context, Error, Result};
use crate::git::{normalize, ObjectId, Repo};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// One linked worktree as git records it.
#[derive(Clone, Debug)]
pub struct Linked {
    /// The name of its administrative directory under `<common>/worktrees/`.
    pub name: String,
    /// The worktree's private git dir (`<common>/worktrees/<name>`).
    pub git_dir: PathBuf,
    /// Where the worktree lives.
    pub path: PathBuf,
    /// The branch checked out there (`refs/heads/...`), `None` when detached.
    pub branch: Option<String>,
}

impl Linked {
    /// Returns whether the worktree's directory still exists.
    pub fn exists(&self) -> bool {
        self.path.join(".git").exists()
    }
}

/// Lists the linked worktrees of the repository.
pub fn list(repo: &Repo) -> Result<Vec<Linked>> {
    let dir = repo.common_dir().join("worktrees");
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(Error::repo(
                format!("could not read '{}'", dir.display()),
                e,
            ))
        }
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let git_dir = entry.path();
        let Ok(gitdir) = std::fs::read_to_string(git_dir.join("gitdir")) else {
            continue;
        };
        let dot_git = PathBuf::from(gitdir.trim_end_matches(['\n', '\r']));
        let dot_git = if dot_git.is_relative() {
            normalize(&git_dir.join(dot_git))
        } else {
            dot_git
        };
        let path = dot_git
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or(dot_git.clone());
        let head = std::fs::read_to_string(git_dir.join("HEAD")).unwrap_or_default();
        let branch = head.strip_prefix("ref: ").map(|r| r.trim().to_owned());
        out.push(Linked {
            name: entry.file_name().to_string_lossy().into_owned(),
            git_dir,
            path,
            branch,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Returns the linked worktree that has `branch` checked out, if any.
pub fn find_by_branch(repo: &Repo, branch: &str) -> Result<Option<Linked>> {
    Ok(list(repo)?
        .into_iter()
        .find(|w| w.branch.as_deref() == Some(branch)))
}

/// Adds a linked worktree at `path` with `branch` (a full ref name) checked out.
///
/// With `sparse` patterns only the paths they select are checked out, using git's own
/// sparse-checkout files so git and GUIs agree on what is there:
/// `<worktree git dir>/info/sparse-checkout` (non-cone patterns), `core.sparseCheckout`
/// in the worktree's `config.worktree`, and `extensions.worktreeConfig` in the shared config.
///
/// The worktree is registered first, then checked out; if checkout fails or `interrupt`
/// is raised, the caller removes it (start rolls back everything it made). The fresh
/// index is remembered as clean ([`crate::git::status::dirty::remember_index`]) while it is in memory.
pub fn add(
    repo: &Repo,
    path: &Path,
    branch: &str,
    sparse: Option<&str>,
    interrupt: &AtomicBool,
) -> Result<()> {
    let name: gix::refs::FullName = branch
        .try_into()
        .map_err(|e| Error::repo(format!("invalid branch name '{branch}'"), e))?;
    let tip = repo
        .find_ref(branch)?
        .ok_or_else(|| Error::repo_msg(format!("branch '{branch}' does not exist")))?;
    let tree = crate::git::objects::commit_tree(repo, tip)?;
    let created = retry_while_another_is_added(|| {
        repo.inner.prepare_add_worktree(
            path,
            gix::worktree::add::Head::Attached(name.clone()),
            interrupt,
        )
    })
    .context(|| format!("could not create worktree '{}'", path.display()))?
    .persist()
    .context(|| format!("could not create worktree '{}'", path.display()))?;
    let mut index = created
        .index_from_tree(&tree)
        .context(|| "could not build the index".into())?;
    if let Some(patterns) = sparse {
        let git_dir = created.git_dir().to_path_buf();
        let sparse_file = git_dir.join("info").join("sparse-checkout");
        std::fs::create_dir_all(git_dir.join("info"))
            .context(|| format!("could not create '{}'", git_dir.display()))?;
        std::fs::write(&sparse_file, patterns)
            .context(|| format!("could not write '{}'", sparse_file.display()))?;
        let common_config = repo.common_dir().join("config");
        if repo
            .config_string("core.repositoryFormatVersion")
            .is_none_or(|v| v.trim() == "0")
        {
            crate::git::config::set_in_file(&common_config, "core.repositoryFormatVersion", "1")?;
        }
        crate::git::config::set_in_file(&common_config, "extensions.worktreeConfig", "true")?;
        crate::git::config::set_in_file(
            &git_dir.join("config.worktree"),
            "core.sparseCheckout",
            "true",
        )?;
        let case = if repo.ignore_case() {
            gix::glob::pattern::Case::Fold
        } else {
            gix::glob::pattern::Case::Sensitive
        };
        gix::worktree::sparse::apply_patterns(
            &mut index,
            patterns.as_bytes(),
            &sparse_file,
            false,
            case,
        )
        .context(|| "could not apply the sparse-checkout patterns".into())?;
    }
    let mut options = created
        .checkout_options(gix::worktree::stack::state::attributes::Source::IdMapping)
        .context(|| "could not prepare the checkout".into())?;
    options.destination_is_initially_empty = true;
    let objects = created
        .objects
        .clone()
        .into_arc()
        .context(|| "could not open the object database".into())?;
    gix::worktree::state::checkout(
        &mut index,
        path,
        objects,
        &gix::progress::Discard,
        &gix::progress::Discard,
        interrupt,
        options,
    )
    .context(|| format!("could not check out '{}'", path.display()))?;
    if interrupt.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(Error::repo_msg("interrupted while checking out"));
    }
    // With the tree ids of its directories, as git's own checkout writes it: the first
    // commit (and its hook) then reads only the trees it changes.
    match crate::git::index::cachetree::of_tree(repo, tree)
        .ok()
        .flatten()
    {
        Some(cache) => crate::git::index::cachetree::write_index(repo, &index, &cache)?,
        None => index
            .write(Default::default())
            .context(|| "could not write the worktree index".into())?,
    }
    crate::git::status::dirty::remember_index(path, tip, repo.ignore_files(), &index);
    Ok(())
}

/// Runs `add` again while it fails because another process is registering a worktree right now.
///
/// gix reads every registered worktree's `gitdir` file before adding one, and a
/// concurrent `git worktree add` (or `git task start`) writes that file in two
/// steps, so it can briefly be empty. gix removes whatever a failed add made,
/// so trying again is safe.
fn retry_while_another_is_added<T>(mut add: impl FnMut() -> gix::Result<T>) -> gix::Result<T> {
    let mut attempt = 0;
    loop {
        match add() {
            Err(err)
                if attempt < 20
                    && format!("{err:?}").contains("Refusing to read an empty path") =>
            {
                attempt += 1;
                std::thread::sleep(std::time::Duration::from_millis(10 * attempt));
            }
            other => return other,
        }
    }
}

/// Removes a linked worktree without looking at its content: its directory is
/// first renamed aside (atomic), then its administrative entry is deleted, and
/// the renamed directory is deleted in the background (SPEC §10: `remove` must
/// not wait for a 100,000-file delete). `sweep` deletes any leftover.
///
/// Callers save any work first (SPEC §2.2).
pub fn remove(repo: &Repo, linked: &Linked) -> Result<()> {
    move_aside(repo, linked).map(drop)
}

/// A worktree directory moved aside by [`move_aside`]: deleted in the
/// background when dropped, so a caller can finish its own work first without
/// a 100,000-file delete competing for the disk and the cores.
#[must_use = "dropping it starts the delete"]
#[derive(Debug)]
pub struct Aside(Option<PathBuf>);

impl Drop for Aside {
    fn drop(&mut self) {
        // Best effort: what is left is an interrupted removal for `sweep`.
        let _ = self.start_delete();
    }
}

impl Aside {
    /// Starts deleting the moved-aside files in the background (deleting them now when no
    /// background process can start); an error says what could not be deleted.
    pub fn start_delete(&mut self) -> Result<()> {
        match self.0.take() {
            Some(aside) if !delete_in_background(&aside) => delete_moved_aside(&aside),
            _ => Ok(()),
        }
    }

    /// Returns where the worktree's files were moved to, until their delete starts.
    pub fn path(&self) -> Option<&Path> {
        self.0.as_deref()
    }

    /// Deletes the moved-aside files now, before returning: for a rollback, which
    /// must leave nothing behind when it reports that everything was removed.
    pub fn delete_now(mut self) -> Result<()> {
        match self.0.take() {
            Some(aside) => delete_dir_shared(&aside),
            None => Ok(()),
        }
    }
}

/// The first half of [`remove`]: the worktree is gone from its path and from
/// git's list of worktrees; its files are deleted when the returned [`Aside`] is dropped.
pub fn move_aside(repo: &Repo, linked: &Linked) -> Result<Aside> {
    let aside = aside_path(&linked.path);
    let moved = match std::fs::rename(&linked.path, &aside) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => {
            return Err(Error::repo(
                format!("could not move '{}' aside", linked.path.display()),
                e,
            ))
        }
    };
    let aside = Aside(moved.then_some(aside));
    remove_admin(linked)?;
    let _ = repo;
    Ok(aside)
}

/// Deletes only the administrative entry of a worktree (`git worktree prune` for one entry).
pub fn remove_admin(linked: &Linked) -> Result<()> {
    match std::fs::remove_dir_all(&linked.git_dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::repo(
            format!("could not delete '{}'", linked.git_dir.display()),
            e,
        )),
    }
}

/// Returns a sibling path to move a worktree directory to before deleting it.
fn aside_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    path.with_file_name(format!(".{name}.removing-{}-{nanos}", std::process::id()))
}

/// Whether a directory name is one that [`remove`] moved aside and that no
/// deletion of this process is still working on: what an interrupted removal
/// leaves behind. (The deletions this process started run in the background;
/// they are not leftovers.)
pub fn is_leftover_removal(name: &str) -> bool {
    let Some(rest) = name
        .strip_prefix('.')
        .and_then(|n| n.rsplit_once(".removing-"))
        .map(|(_, rest)| rest)
    else {
        return false;
    };
    match rest.split_once('-') {
        Some((pid, _)) => pid.parse::<u32>().ok() != Some(std::process::id()),
        None => false,
    }
}

/// Returns whether a delete is working on the moved-aside directory at `path`: the
/// background delete holds an exclusive `flock` on it until it exits
/// ([`delete_in_background`]).
pub fn deletion_in_progress(path: &Path) -> bool {
    #[cfg(unix)]
    {
        let Ok(dir) = std::fs::File::open(path) else {
            return false;
        };
        // Dropping `dir` releases the lock again when it was free.
        rustix::fs::flock(&dir, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_err()
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// Whether the directory at `path` is a removal that was interrupted: named like one
/// ([`is_leftover_removal`]) and no delete holds its lock.
pub fn is_leftover_removal_at(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    is_leftover_removal(&name) && !deletion_in_progress(path)
}

/// Deletes a worktree directory that [`move_aside`] moved: only such a directory (its name
/// says so), and also where the task left directories without write permission (a Go
/// module cache does), which `rm -rf` cannot empty.
pub fn delete_moved_aside(path: &Path) -> Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !(name.starts_with('.') && name.contains(".removing-")) {
        return Err(Error::input(format!(
            "'{}' is not a worktree moved aside by git-task",
            path.display()
        )));
    }
    if delete_dir_shared(path).is_ok() {
        return Ok(());
    }
    make_writable(path);
    delete_dir_shared(path)
}

/// Gives the owner write and search permission on every directory below `path`.
fn make_writable(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return;
        };
        if !meta.is_dir() {
            return;
        }
        let mode = meta.permissions().mode();
        if mode & 0o700 != 0o700 {
            let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode | 0o700));
        }
        if let Ok(entries) = std::fs::read_dir(path) {
            for e in entries.flatten() {
                make_writable(&e.path());
            }
        }
    }
}

/// Deletes a directory that may also be being deleted by someone else at the
/// same time (a background delete of an earlier `remove`): what vanishes under
/// us is not an error.
pub fn delete_dir_shared(path: &Path) -> Result<()> {
    let mut tries = 0;
    loop {
        match std::fs::remove_dir_all(path) {
            Ok(()) => return Ok(()),
            Err(_) if !path.exists() => return Ok(()),
            // A file the other deleter took between our listing and our unlink.
            Err(e) if tries < 3 && e.kind() == std::io::ErrorKind::NotFound => tries += 1,
            Err(e) => {
                return Err(Error::repo(
                    format!("could not delete '{}'", path.display()),
                    e,
                ))
            }
        }
    }
}

/// Starts deleting `path` (a directory moved aside) in a detached background process:
/// git-task's own `delete-aside`, in a process group of its own from the moment it is
/// spawned, which then leaves the terminal's session and lowers its priority, so
/// neither closing the terminal nor the user's next command stops or competes with
/// it. Returns false if that could not start.
///
/// The child inherits an exclusive `flock` on the directory, taken here before it
/// is spawned, and holds it until it exits: `sweep` tells a delete in progress
/// from one that died by that lock ([`deletion_in_progress`]),
/// with no window between this process ending and the child starting.
fn delete_in_background(path: &Path) -> bool {
    use std::process::{Command, Stdio};
    if !cfg!(unix) {
        return false;
    }
    let Ok(exe) = std::env::current_exe() else {
        return false;
    };
    #[cfg(unix)]
    let _lock = {
        let Ok(dir) = std::fs::File::open(path) else {
            return false;
        };
        if rustix::fs::flock(&dir, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_err() {
            // Another delete holds it already.
            return true;
        }
        // Inherited by the child (and only by it: closed here once it is spawned).
        if rustix::io::fcntl_setfd(&dir, rustix::io::FdFlags::empty()).is_err() {
            return false;
        }
        dir
    };
    let mut cmd = Command::new(exe);
    cmd.args(["delete-aside", "--"])
        .arg(path)
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for var in crate::git::LOCAL_ENV {
        cmd.env_remove(var);
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    cmd.spawn().is_ok()
}

/// Returns the repository opened again from the main worktree (or the common dir) when `repo`
/// was opened through `linked`'s administrative directory: deleting that worktree takes the
/// paths `repo` reads objects and refs through with it.
pub fn reopen_outside(repo: &Repo, linked: &Linked) -> Result<Option<Repo>> {
    if crate::git::canonical(repo.git_dir()) != crate::git::canonical(&linked.git_dir) {
        return Ok(None);
    }
    open_at(&repo.main_worktree()?).map(Some)
}

/// Opens the repository as seen from a linked worktree, ignoring the environment of a hook.
pub fn open_at(path: &Path) -> Result<Repo> {
    let inner = gix::open_opts(path, crate::git::open_options().full)
        .context(|| format!("could not open the worktree '{}'", path.display()))?;
    Repo::from_gix(inner)
}

/// Returns the commit checked out in a worktree directory, read from its `HEAD`.
pub fn head_of(path: &Path) -> Result<Option<ObjectId>> {
    open_at(path)?.head_commit()
}

/// Turns contract globs into git's non-cone sparse-checkout patterns (anchored where they contain a `/`).
pub fn sparse_patterns(globs: &[String]) -> String {
    let mut out = String::new();
    for glob in globs {
        let g = glob.trim_end_matches('/');
        if g.is_empty() {
            continue;
        }
        if g.starts_with('/') || !g.contains('/') {
            out.push_str(g);
        } else {
            out.push('/');
            out.push_str(g);
        }
        out.push('\n');
    }
    out
}

/// Writes the files of `tree` into the empty directory `dir`: a plain checkout with no git
/// administration (the merge gate runs checks there, on exactly the tree that would land).
pub fn checkout_tree(repo: &Repo, tree: ObjectId, dir: &Path) -> Result<()> {
    let mut index = repo
        .inner
        .index_from_tree(&tree)
        .context(|| format!("could not build an index of tree {tree}"))?;
    let mut options = repo
        .inner
        .checkout_options(gix::worktree::stack::state::attributes::Source::IdMapping)
        .context(|| "could not prepare the checkout".into())?;
    options.destination_is_initially_empty = true;
    let objects = repo
        .inner
        .objects
        .clone()
        .into_arc()
        .context(|| "could not open the object database".into())?;
    let outcome = gix::worktree::state::checkout(
        &mut index,
        dir,
        objects,
        &gix::progress::Discard,
        &gix::progress::Discard,
        &gix::interrupt::IS_INTERRUPTED,
        options,
    )
    .context(|| format!("could not check out tree {tree} into '{}'", dir.display()))?;
    if let Some((path, e)) = outcome.errors.first().map(|e| (&e.path, &e.error)) {
        return Err(Error::repo_msg(format!(
            "could not check out '{path}' into '{}': {e}",
            dir.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory this process moved aside is being deleted in the background;
    /// one moved aside by another process and still there is a leftover.
    #[test]
    fn only_removals_of_other_processes_are_leftovers() {
        let own = aside_path(Path::new("/tmp/x.tasks/alpha"));
        let own = own.file_name().unwrap().to_str().unwrap();
        assert!(own.starts_with(".alpha.removing-"), "{own}");
        assert!(!is_leftover_removal(own));
        let other = format!(
            ".alpha.removing-{}-12345",
            std::process::id().wrapping_add(1)
        );
        assert!(is_leftover_removal(&other));
        assert!(!is_leftover_removal("alpha"));
        assert!(!is_leftover_removal(".alpha.removing-"));
        assert!(!is_leftover_removal("alpha.removing-1-2"));
    }
}
