//! Linked worktrees: create, list and remove them in process.
//!
//! Listing reads git's administrative files directly (`<common>/worktrees/*/
//! gitdir` and `HEAD`), which is what `git worktree list` does and keeps
//! `list` cheap with a thousand tasks. Removing one (moved aside, deleted in the
//! background) is `remove`.

use crate::error::{Context, Error, Result};
use crate::git::{normalize, ObjectId, Repo};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// Below this many files a checkout is written by one thread.
const SMALL_CHECKOUT: u64 = 2000;

pub mod pool;
mod register;
mod remove;
pub mod submodules;
pub use remove::{
    delete_dir_shared, delete_moved_aside, leftover_removals, move_aside, move_dir_aside, remove,
    remove_admin, Aside,
};

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

    /// Whether the worktree's directory names this entry back: its `.git` file's `gitdir:` is
    /// this entry's administrative directory. git keeps both links (the entry's `gitdir` file
    /// naming the directory, the directory's `.git` naming the entry); an entry whose directory
    /// does not name it back is one git would not act on there (left behind, or forged to point
    /// at another worktree or repository), and `false` when the directory is gone.
    pub fn links_back(&self) -> bool {
        admin_dir_named_by(&self.path).is_some_and(|named| same_path(&named, &self.git_dir))
    }

    /// Returns the reason given to `git worktree lock` (empty when none was) while the
    /// worktree is locked: git then neither prunes, moves nor removes it (its directory may
    /// be on a drive that is not mounted), and neither does git-task. The lock `git worktree
    /// add` holds while it makes a worktree (reason `initializing`) is not a person's: a
    /// killed add leaves it behind, and what git-task made that way it may remove.
    pub fn lock_reason(&self) -> Option<String> {
        std::fs::read_to_string(self.git_dir.join("locked"))
            .ok()
            .map(|r| r.trim_end_matches(['\n', '\r']).to_owned())
            .filter(|r| r != "initializing")
    }

    /// Refuses, as `git worktree remove` does, when the worktree is locked.
    pub fn check_unlocked(&self) -> Result<()> {
        let Some(reason) = self.lock_reason() else {
            return Ok(());
        };
        let why = match reason.is_empty() {
            true => String::new(),
            false => format!(" ({reason})"),
        };
        Err(Error::repo_msg(format!(
            "the worktree '{}' is locked{why}",
            self.path.display()
        ))
        .hint(format!(
            "nothing was deleted; when it may go, unlock it: git worktree unlock '{}'",
            self.path.display()
        )))
    }
}

/// The entries of `<common dir>/worktrees/`; `None` when there is no such directory.
fn entries(repo: &Repo) -> Result<Option<std::fs::ReadDir>> {
    let dir = repo.common_dir().join("worktrees");
    match std::fs::read_dir(&dir) {
        Ok(e) => Ok(Some(e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::repo(
            format!("could not read '{}'", dir.display()),
            e,
        )),
    }
}

/// Lists the linked worktrees of the repository.
pub fn list(repo: &Repo) -> Result<Vec<Linked>> {
    let Some(entries) = entries(repo)? else {
        return Ok(Vec::new());
    };
    let mut out: Vec<Linked> = entries
        .flatten()
        .filter_map(|entry| {
            linked_at(
                entry.path(),
                entry.file_name().to_string_lossy().into_owned(),
            )
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Where the linked worktree whose administrative directory is `git_dir` lives, from its
/// `gitdir` file; `None` when that cannot be read.
fn path_of(git_dir: &Path) -> Option<PathBuf> {
    let gitdir = std::fs::read_to_string(git_dir.join("gitdir")).ok()?;
    let dot_git = PathBuf::from(gitdir.trim_end_matches(['\n', '\r']));
    let dot_git = if dot_git.is_relative() {
        normalize(&git_dir.join(dot_git))
    } else {
        dot_git
    };
    Some(
        dot_git
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or(dot_git.clone()),
    )
}

/// The linked worktree whose administrative directory is `git_dir` (named `name`); `None`
/// when its `gitdir` file cannot be read.
fn linked_at(git_dir: PathBuf, name: String) -> Option<Linked> {
    let path = path_of(&git_dir)?;
    let head = std::fs::read_to_string(git_dir.join("HEAD")).unwrap_or_default();
    let branch = head.strip_prefix("ref: ").map(|r| r.trim().to_owned());
    Some(Linked {
        name,
        git_dir,
        path,
        branch,
    })
}

/// Returns the linked worktree that has `branch` checked out, if any.
///
/// The likely places first ([`likely_on_branch`]: the administrative directory named like the
/// branch's last component, as a task's worktree `<dir>/<id>` on `task/<id>` is), then every
/// worktree's `HEAD` (only the matching ones' `gitdir`). Of several on the branch (checked out
/// twice with `--force`, or an entry left behind or forged), the first by name whose worktree
/// names it back ([`Linked::links_back`]), else the first by name.
///
/// Why the shortcut gives the scan's answer: git keeps a branch checked out in one worktree at
/// a time (`git worktree add` and `git checkout` refuse a second unless forced), so an entry
/// on the branch whose worktree links back to it is the only one git has there; where a second
/// one was forced or forged, both answers are a worktree git itself has on the branch.
pub fn find_by_branch(repo: &Repo, branch: &str) -> Result<Option<Linked>> {
    if let Some(found) = likely_on_branch(repo, branch) {
        return Ok(Some(found));
    }
    let dir = repo.common_dir().join("worktrees");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(list(repo)?
            .into_iter()
            .find(|w| w.branch.as_deref() == Some(branch)));
    };
    let mut found = on_branch(entries, branch);
    found.sort_by(|a, b| a.name.cmp(&b.name));
    let linked_back = found.iter().position(Linked::links_back);
    Ok(match linked_back {
        Some(at) => Some(found.swap_remove(at)),
        None => found.into_iter().next(),
    })
}

/// The linked worktrees that have `branch` checked out and whose directory names their entry
/// back ([`Linked::links_back`]): where git would update the branch's files. Proving there is
/// none reads every worktree's `HEAD`; when the likely place has it ([`likely_on_branch`]),
/// git's rule of one worktree per branch (unless forced) says it is the only one, and nothing
/// else is read. A worktree that has it checked out by force next to the likely one is then not
/// listed: git itself, merging there, updates only the worktree it runs in too, and the other
/// loses nothing (its branch moves; its files stay as they were).
///
/// An entry whose directory does not name it back (forged under `<common>/worktrees/`, or
/// pointing at a directory that is another worktree's or another repository's) is never
/// listed: its `gitdir` says nothing git would act on.
pub fn checked_out_in(repo: &Repo, branch: &str) -> Result<Vec<Linked>> {
    if let Some(found) = likely_on_branch(repo, branch) {
        return Ok(vec![found]);
    }
    let Some(entries) = entries(repo)? else {
        return Ok(Vec::new());
    };
    let mut found: Vec<Linked> = on_branch(entries, branch)
        .into_iter()
        .filter(Linked::links_back)
        .collect();
    found.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(found)
}

/// The entries among `entries` (of `<common>/worktrees/`) whose `HEAD` is on `branch`: each
/// one's `HEAD` read, only the matching ones' `gitdir`.
fn on_branch(entries: std::fs::ReadDir, branch: &str) -> Vec<Linked> {
    entries
        .flatten()
        .filter(|e| {
            std::fs::read_to_string(e.path().join("HEAD"))
                .is_ok_and(|h| h.strip_prefix("ref: ").is_some_and(|r| r.trim() == branch))
        })
        .filter_map(|e| linked_at(e.path(), e.file_name().to_string_lossy().into_owned()))
        .filter(|w| w.branch.as_deref() == Some(branch))
        .collect()
}

/// The names git would most likely have given the administrative directory of a worktree on
/// `branch`: the branch's last component (`task/<id>` → `<id>`, the basename of the task's
/// worktree `<dir>/<id>`), then that name numbered, as git and gix number it when the name is
/// taken (`<id>1`, `<id>2`).
fn likely_names(branch: &str) -> Vec<String> {
    let last = branch.rsplit('/').next().unwrap_or_default();
    if !is_entry_name(last) {
        return Vec::new();
    }
    vec![last.to_owned(), format!("{last}1"), format!("{last}2")]
}

/// Whether `name` can only be one entry directly under `<common>/worktrees/`.
fn is_entry_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\', '\0'])
}

/// The linked worktree on `branch` at one of its [`likely_names`], read without listing the
/// others: accepted only when its `HEAD` is on `branch` and its directory's `.git` file names
/// this entry back ([`Linked::links_back`]), so a name alone (which anyone who can write under
/// `<common>/worktrees/` chooses) never decides. `None` says nothing about the other entries.
pub fn likely_on_branch(repo: &Repo, branch: &str) -> Option<Linked> {
    let dir = repo.common_dir().join("worktrees");
    likely_names(branch).into_iter().find_map(|name| {
        linked_at(dir.join(&name), name)
            .filter(|w| w.branch.as_deref() == Some(branch) && w.links_back())
    })
}

/// The linked worktree whose directory is `path`, read without listing the others: the entry
/// `path/.git` names, when that entry is directly under this repository's
/// `<common>/worktrees/` and its `gitdir` names `path` back (exactly, as
/// a task's recorded worktree is compared). These two links are the ones git itself
/// keeps between a worktree and its entry (`git worktree repair` restores them), so the answer
/// is the entry git uses for `path`. `None` (no such directory, a main worktree, links that
/// disagree) says nothing about other entries: callers that must know look at all of them.
pub fn at_path(repo: &Repo, path: &Path) -> Option<Linked> {
    // A relative (or empty) path would be read against the process's directory.
    if !path.is_absolute() {
        return None;
    }
    let admin = admin_dir_named_by(path)?;
    let dir = repo.common_dir().join("worktrees");
    let name = admin.file_name()?.to_str()?.to_owned();
    if !is_entry_name(&name) || !same_path(admin.parent()?, &dir) {
        return None;
    }
    linked_at(dir.join(&name), name).filter(|w| w.path == path)
}

/// The administrative directory the `.git` file of the worktree directory `worktree` names
/// (`gitdir: <dir>`, relative to the worktree when relative), normalised; `None` when there is
/// no such file (a `.git` directory is a repository's own, never a linked worktree's).
fn admin_dir_named_by(worktree: &Path) -> Option<PathBuf> {
    use std::io::Read;
    let dot_git = worktree.join(".git");
    let mut file = std::fs::File::open(&dot_git).ok()?;
    let mut text = String::new();
    // A `.git` file holds one line; anything longer is not git's.
    file.by_ref().take(4096).read_to_string(&mut text).ok()?;
    let target = text.lines().next()?.strip_prefix("gitdir: ")?.trim_end();
    if target.is_empty() {
        return None;
    }
    let target = Path::new(target);
    Some(match target.is_relative() {
        true => normalize(&worktree.join(target)),
        false => normalize(target),
    })
}

/// Whether `a` and `b` name the same directory: equal as written, else once resolved.
fn same_path(a: &Path, b: &Path) -> bool {
    a == b || crate::git::canonical(a) == crate::git::canonical(b)
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
///
/// `progress(done, total)` hears how many files are checked out, every
/// [`PROGRESS_INTERVAL`] while the checkout runs (and once at the end, if it heard
/// anything before): a checkout quicker than that reports nothing.
///
/// `created`: the caller has just created `branch` (a `start`): no worktree can have it checked
/// out, and, as `git worktree add -b` does, no worktree's `HEAD` is read to prove it.
pub fn add(
    repo: &Repo,
    path: &Path,
    branch: &str,
    created: bool,
    sparse: Option<&str>,
    interrupt: &AtomicBool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<()> {
    let name: gix::refs::FullName = branch
        .try_into()
        .map_err(|e| Error::repo(format!("invalid branch name '{branch}'"), e))?;
    let tip = repo
        .find_ref(branch)?
        .ok_or_else(|| Error::repo_msg(format!("branch '{branch}' does not exist")))?;
    // gix refuses a branch checked out elsewhere by opening every worktree as a repository
    // (its config and all): with a thousand task worktrees that was most of `start`. The same
    // check reads each worktree's HEAD file here (not for a branch just created), and the
    // worktree is made detached at the tip and attached to the branch by writing its HEAD.
    let branch = match created {
        true => name.as_bstr().to_string(),
        false => refuse_checked_out(repo, &name)?,
    };
    add_at(repo, path, Some(branch), tip, sparse, interrupt, progress)
}

/// Adds a linked worktree at `path` with a detached HEAD at `commit` (a pool entry: `pool.rs`).
pub fn add_detached(
    repo: &Repo,
    path: &Path,
    commit: ObjectId,
    interrupt: &AtomicBool,
) -> Result<()> {
    add_at(repo, path, None, commit, None, interrupt, &mut |_, _| {})
}

/// Adds the worktree at `tip`, attached to `branch` (a full name, already checked) if given.
fn add_at(
    repo: &Repo,
    path: &Path,
    branch: Option<String>,
    tip: ObjectId,
    sparse: Option<&str>,
    interrupt: &AtomicBool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<()> {
    let tree = crate::git::objects::commit_tree(repo, tip)?;
    if interrupt.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(Error::repo_msg("interrupted while adding the worktree"));
    }
    // Registered without resolving every other worktree's path (`register.rs`), else by gix.
    let created = match register::register(repo, path, tip) {
        Some(created) => created?,
        None => retry_while_another_is_added(repo.common_dir(), || {
            repo.inner.prepare_add_worktree(
                path,
                gix::worktree::add::Head::Detached(tip),
                interrupt,
            )
        })
        .context(|| format!("could not create worktree '{}'", path.display()))?
        .persist()
        .context(|| format!("could not create worktree '{}'", path.display()))?,
    };
    if let Some(branch) = branch {
        let head_file = created.git_dir().join("HEAD");
        crate::git::fs::write_atomically(&head_file, format!("ref: {branch}\n").as_bytes())
            .context(|| format!("could not write '{}'", head_file.display()))?;
    }
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
    let total = index
        .entries()
        .iter()
        .filter(|e| !e.flags.contains(gix::index::entry::Flags::SKIP_WORKTREE))
        .count() as u64;
    // A small tree is written by one thread, as git does by default (`checkout.workers`): two
    // threads creating a few hundred files mostly wait on each other's directory locks, which
    // costs more CPU the fuller the file system's inode groups are.
    if total < SMALL_CHECKOUT {
        options.thread_limit = Some(1);
    }
    let files = Counter::default();
    // The checkout runs on its own thread; this one reports its progress meanwhile.
    std::thread::scope(|scope| {
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let files = &files;
        let index = &mut index;
        let worker = scope.spawn(move || {
            let outcome = gix::worktree::state::checkout(
                index,
                path,
                objects,
                files,
                &gix::progress::Discard,
                interrupt,
                options,
            );
            drop(done_tx);
            outcome
        });
        let mut reported = false;
        while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
            done_rx.recv_timeout(PROGRESS_INTERVAL)
        {
            progress(files.get().min(total), total);
            reported = true;
        }
        let outcome = worker
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        if reported {
            progress(files.get().min(total), total);
        }
        outcome
    })
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

/// Returns `name` (a local branch) when no worktree has it checked out, as `git worktree add`
/// and gix refuse one that is: read from each worktree's `HEAD` file.
fn refuse_checked_out(repo: &Repo, name: &gix::refs::FullName) -> Result<String> {
    let branch = name.as_bstr().to_string();
    if !branch.starts_with("refs/heads/") {
        return Err(Error::repo_msg(format!(
            "could not create a worktree on '{branch}': not a local branch"
        )));
    }
    let on = |head: &Path| {
        std::fs::read_to_string(head).is_ok_and(|h| {
            h.strip_prefix("ref: ")
                .is_some_and(|r| r.trim_end_matches(['\n', '\r']) == branch)
        })
    };
    let mut at = Vec::new();
    if on(&repo.common_dir().join("HEAD")) {
        at.push("the main worktree".to_owned());
    }
    if let Ok(entries) = std::fs::read_dir(repo.common_dir().join("worktrees")) {
        for entry in entries.flatten() {
            if on(&entry.path().join("HEAD")) {
                at.push(format!(
                    "worktree '{}'",
                    entry.file_name().to_string_lossy()
                ));
            }
        }
    }
    match at.is_empty() {
        true => Ok(branch),
        false => Err(Error::repo_msg(format!(
            "branch '{}' is already checked out in {}",
            branch.trim_start_matches("refs/heads/"),
            at.join(", ")
        ))
        .hint("a branch is checked out in one worktree at a time: switch that worktree to another branch first")),
    }
}

/// How often a running checkout reports its progress.
pub const PROGRESS_INTERVAL: std::time::Duration = std::time::Duration::from_millis(100);

/// Counts the files a checkout wrote (gix's progress counter, read by another thread).
#[derive(Default)]
struct Counter(gix::progress::StepShared);

impl Counter {
    fn get(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::Relaxed) as u64
    }
}

impl gix::progress::Count for Counter {
    fn set(&self, step: gix::progress::Step) {
        self.0.store(step, std::sync::atomic::Ordering::Relaxed);
    }

    fn step(&self) -> gix::progress::Step {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn inc_by(&self, step: gix::progress::Step) {
        self.0.fetch_add(step, std::sync::atomic::Ordering::Relaxed);
    }

    fn counter(&self) -> gix::progress::StepShared {
        self.0.clone()
    }
}

/// Runs `add` again while it fails because another process is registering a worktree right now.
/// (Only where gix registers the worktree: `register.rs` reads no other entry.)
///
/// gix reads every registered worktree's `gitdir` file before adding one, and a
/// concurrent `git worktree add` (or `git task start`) writes that file in two
/// steps, so it can briefly be empty. gix removes whatever a failed add made,
/// so trying again is safe.
///
/// An entry a killed add left for good ([`half_added`]) is deleted, and the add tried again.
fn retry_while_another_is_added<T>(
    common_dir: &Path,
    mut add: impl FnMut() -> gix::Result<T>,
) -> gix::Result<T> {
    let mut attempt = 0;
    let mut pruned = 0;
    loop {
        match add() {
            Err(err)
                if pruned < 5
                    && format!("{err:?}").contains("Refusing to read an empty path")
                    && !half_added(common_dir, HALF_ADDED_AGE).is_empty() =>
            {
                pruned += 1;
                for dir in half_added(common_dir, HALF_ADDED_AGE) {
                    let _ = remove_half_added(&dir);
                }
            }
            // Another worktree is being added (its `gitdir` file is still empty) or adopted from
            // the pool (its admin directory is being renamed): look again in a moment.
            Err(err)
                if attempt < 20 && {
                    let text = format!("{err:?}");
                    text.contains("Refusing to read an empty path")
                        || text.contains("Failed to read or iterate worktree directories")
                } =>
            {
                attempt += 1;
                std::thread::sleep(std::time::Duration::from_millis(10 * attempt));
            }
            other => return other,
        }
    }
}

/// How long an administrative entry may have no (or an empty) `gitdir` file before it counts
/// as left by a killed add: an add writes it within microseconds of making the directory.
pub const HALF_ADDED_AGE: std::time::Duration = std::time::Duration::from_secs(2);

/// Administrative entries (`<common>/worktrees/<name>`) that a process killed while adding a
/// worktree left: no `gitdir` file, or an empty one, for longer than `min_age` (no process
/// that could be adding one runs: 0; else [`HALF_ADDED_AGE`]), and not locked (`git worktree
/// add` locks its entry while it makes it). git itself prunes them (`git worktree prune`:
/// "invalid gitdir file"), but gix refuses to add any worktree while one is there, so every
/// later `start` failed.
pub fn half_added(common_dir: &Path, min_age: std::time::Duration) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(common_dir.join("worktrees")) else {
        return Vec::new();
    };
    let now = std::time::SystemTime::now();
    let old = |path: &Path| {
        std::fs::symlink_metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .is_some_and(|age| age >= min_age)
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let dir = entry.path();
        if !dir.is_dir() || dir.join("locked").exists() {
            continue;
        }
        let gitdir = dir.join("gitdir");
        let half = match std::fs::read(&gitdir) {
            Ok(bytes) => bytes.iter().all(u8::is_ascii_whitespace) && old(&gitdir),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => old(&dir),
            Err(_) => false,
        };
        if half {
            out.push(dir);
        }
    }
    out
}

/// Deletes an administrative entry [`half_added`] found.
pub fn remove_half_added(dir: &Path) -> Result<()> {
    match std::fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::repo(
            format!("could not delete '{}'", dir.display()),
            e,
        )),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn likely_entry_names_follow_the_branchs_last_component() {
        assert_eq!(
            likely_names("refs/heads/task/t1"),
            ["t1", "t11", "t12"].map(String::from)
        );
        assert_eq!(likely_names("refs/heads/main")[0], "main");
        assert!(likely_names("refs/heads/task/").is_empty());
        assert!(likely_names("refs/heads/..").is_empty());
    }

    #[test]
    fn a_dot_git_file_names_its_entry_relative_to_the_worktree() {
        assert!(admin_dir_named_by(Path::new("/nonexistent/git-task/wt")).is_none());
        let dir = std::env::temp_dir().join(format!("git-task-links-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(".git"), "gitdir: ../repo/.git/worktrees/x\n").unwrap();
        assert_eq!(
            admin_dir_named_by(&dir),
            Some(normalize(&dir.join("../repo/.git/worktrees/x")))
        );
        std::fs::write(dir.join(".git"), "not a link\n").unwrap();
        assert!(admin_dir_named_by(&dir).is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
