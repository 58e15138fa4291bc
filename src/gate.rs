//! The merge gate's own checkouts (SPEC §7.5, issue 33): where `merge` runs a task's checks.
//!
//! A gate checkout is a worktree of the repository with a detached HEAD that git-task owns,
//! under `<common dir>/git-task/gate/<n>`, its administrative directory beside it
//! (`gate/<n>.git`, which names the common dir as a linked worktree's does, but is not listed
//! among git's worktrees: `git worktree list` does not show it). Its `.git` file exists only
//! while git-task brings it to a tree: the checks see a plain tree, no way into the
//! repository. The `gate` directory is the user's alone (mode 0700). One
//! merge uses one at a time: slot `n` is taken by an exclusive `flock` on `gate/<n>.lock`
//! (released by the kernel when its holder exits, even by `kill -9`), so two concurrent merges
//! never share one; the first free slot is taken, a new one made when all are busy.
//!
//! Before each run the checkout is brought to the landing commit:
//!
//! 1. when it looks untouched since the last run left it clean (its index the very one
//!    git-task wrote then, and the clean memo of `git::status::dirty`: every tracked file's stat
//!    data and the mtime of every directory holding one, so a file added anywhere a tracked
//!    file lives shows), only the paths that differ between its HEAD and the landing commit are
//!    written (`git::checkout::twoway`), unless a `.gitignore` differs (a file ignored until
//!    now may be untracked at the landing: step 2 decides under the new rules);
//! 2. otherwise (a check changed a tracked file or left an untracked one, a run was killed
//!    half-way, the two-way checkout declined) `git reset --hard <commit>` and `git clean
//!    -ffd` put every tracked file back and delete every untracked file that is not ignored;
//!    an index git-task did not write last is deleted first, so that every file is written
//!    again (`reset --hard` keeps any file whose stat data the index records);
//! 3. either way the index is then verified against the landing tree: after step 1, each
//!    changed path in the index just written (the rest is the previous run's verified index,
//!    which the clean memo saw untouched); otherwise with `git write-tree`. A mismatch is
//!    repaired by step 2 and verified again.
//!
//! After a run that passed, the checkout is *settled* in the background, by a detached
//! `git task gate-settle` that inherits the slot's lock (so no merge uses the checkout until it
//! is done, and a merge that finds it settling waits for it rather than making a cold one):
//! the look of step 1 (an `lstat` of every tracked file and directory) and, when the check left
//! anything behind, step 2, then the index verified; it then writes `gate/<n>.settled`: the
//! HEAD, the ignore files outside the tree (`info/exclude`, `core.excludesFile`), the index's
//! stat data and the stat data (mtime, ctime, inode) of every directory holding a tracked
//! file. The next run on it takes the settled look instead of looking again when the HEAD, the
//! ignore files, the index and every one of those directories are as the settle left them: a file
//! created, deleted or renamed anywhere since changes a directory's mtime and the full look
//! runs. The marker is deleted before the checkout is touched, so a run killed half-way leaves
//! none. The full look, the one cost of the gate that grows with the tree, is thus paid
//! between merges, once the check's processes ended, not on the merge's way.
//!
//! Ignored files (`target/`, `node_modules/`, caches) stay between runs, so checks start warm.
//! They are the gate's own: seeded once, when the checkout is made, from the *main* worktree
//! as the target's `.worktreeinclude` names them, never from a task's worktree (a task could
//! plant tools there).
//!
//! After a failed run the checkout stays as the check left it, for inspection, until the next
//! run on it; `gate/<n>.failed` names the task. `sweep` deletes such checkouts (and any that is
//! damaged) when no merge holds them, and `remove` of the task deletes the one it failed in.

use crate::error::{Error, Result};
use crate::git::checkout::twoway;
use crate::git::status::dirty::{self, Place, Quick};
use crate::git::{objects, worktree, ObjectId, Repo};
use std::path::{Path, PathBuf};

/// Slots beyond this many are never made: a merge waits for its turn on the branch lock, so
/// this many run at once only into as many different branches.
const MAX_SLOTS: usize = 64;

/// `<common dir>/git-task/gate`.
pub fn dir(repo: &Repo) -> PathBuf {
    repo.common_dir().join("git-task").join("gate")
}

/// A gate checkout this process holds (its lock is let go when dropped).
pub struct Slot {
    path: PathBuf,
    _lock: std::fs::File,
}

/// Makes `dir` the user's alone (mode 0700).
pub fn make_private(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| Error::repo(format!("could not make '{}' private", dir.display()), e))?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// Tries to lock slot `n` of `gate` without waiting: the open lock file when it was free.
fn try_slot(gate: &Path, n: usize) -> Result<Option<std::fs::File>> {
    let path = gate.join(format!("{n}.lock"));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| Error::repo(format!("could not open '{}'", path.display()), e))?;
    // Released by the kernel when the file is closed, or its process dies.
    #[cfg(unix)]
    let free =
        rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_ok();
    #[cfg(not(unix))]
    let free = true;
    Ok(free.then_some(file))
}

/// What a look at a slot's checkout, made ahead, found: whether it was as the last run left
/// it clean at `head`, and when its settle said so, the directories it saw as the settle left
/// them.
#[derive(Clone, Debug)]
pub struct Looked {
    head: ObjectId,
    untouched: bool,
    settled: Option<SettledDirs>,
}

/// The directories holding tracked files, each with its stat data as the settled marker has
/// it, which a settled look found unchanged.
type SettledDirs = std::collections::HashMap<String, dirty::DirStamp>;

/// A slot taken ahead of its run, with the look at its checkout running meanwhile in another
/// thread: whether it is as its settle left it (a `stat` of every directory holding a tracked
/// file), else the full look (an `lstat` of every file, the gate's one cost that grows with the
/// tree).
pub struct Ahead {
    slot: Slot,
    look: Option<(ObjectId, std::thread::JoinHandle<Looked>)>,
}

impl Ahead {
    /// The slot, and what the look found (waiting for it).
    pub fn finish(self) -> (Slot, Option<Looked>) {
        let looked = self.look.and_then(|(_, handle)| handle.join().ok());
        (self.slot, looked)
    }
}

/// Takes a slot ([`take`]) and starts looking at its checkout in another thread, so that the
/// look costs nothing while the caller computes the landing; [`Ahead::finish`] gives both.
pub fn take_ahead(repo: &Repo) -> Result<Ahead> {
    let slot = take(repo)?;
    let admin = slot.path.with_extension("git");
    let head = admin_of(&slot.path)
        .and_then(|a| std::fs::read_to_string(a.join("HEAD")).ok())
        .and_then(|t| t.trim().parse::<ObjectId>().ok())
        .filter(|_| slot.path.is_dir());
    let look = head.map(|head| {
        let handle = repo.for_thread();
        let path = slot.path.clone();
        // Settled after the last run and untouched since: nothing more to look at.
        let look = move || match settled_look(&handle, &path, &admin, head) {
            Some(dirs) => Looked {
                head,
                untouched: true,
                settled: Some(dirs),
            },
            None => Looked {
                head,
                untouched: untouched(&handle, &path, &admin, head),
                settled: None,
            },
        };
        (head, std::thread::spawn(look))
    });
    Ok(Ahead { slot, look })
}

/// Takes the first free gate checkout (module docs); it is brought to a tree by [`Slot::prepare`].
pub fn take(repo: &Repo) -> Result<Slot> {
    let gate = dir(repo);
    std::fs::create_dir_all(&gate)
        .map_err(|e| Error::repo(format!("could not create '{}'", gate.display()), e))?;
    make_private(&gate)?;
    let taken = |n: usize, mut lock: std::fs::File| {
        use std::io::{Seek, Write};
        let _ = lock.set_len(0);
        let _ = lock.rewind();
        let _ = writeln!(lock, "{}", std::process::id());
        Slot {
            path: gate.join(n.to_string()),
            _lock: lock,
        }
    };
    let deadline = std::time::Instant::now() + SETTLE_WAIT;
    loop {
        // A free checkout that exists is warm; a settling one is worth waiting for (its settle
        // is a look at it); only when there is neither is a new one made (a full checkout).
        let (mut settling, mut fresh) = (false, None);
        for n in 0..MAX_SLOTS {
            let warm = admin_of(&gate.join(n.to_string())).is_some();
            if !warm && fresh.is_some() {
                continue;
            }
            match try_slot(&gate, n)? {
                Some(lock) if warm => return Ok(taken(n, lock)),
                Some(_) => fresh = fresh.or(Some(n)),
                None => settling |= warm && is_settling(&gate, n),
            }
        }
        if !settling || std::time::Instant::now() >= deadline {
            match fresh {
                Some(n) => match try_slot(&gate, n)? {
                    Some(lock) => return Ok(taken(n, lock)),
                    // Taken meanwhile by another merge: look again.
                    None => continue,
                },
                None if !settling => break,
                None => {}
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    Err(Error::repo_msg(format!(
        "all {MAX_SLOTS} gate checkouts under '{}' are in use",
        gate.display()
    ))
    .hint("wait for the other merges to finish"))
}

/// How long a merge waits for a gate checkout being settled before it makes another one.
const SETTLE_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// What a slot's lock file says while its settle holds it.
const SETTLING: &str = "settling";

/// Whether slot `n` is held by its settle (not by a merge).
fn is_settling(gate: &Path, n: usize) -> bool {
    std::fs::read_to_string(gate.join(format!("{n}.lock"))).is_ok_and(|t| t.trim() == SETTLING)
}

/// `gate/<n>.settled`, beside the checkout at `path`.
fn settled_marker(path: &Path) -> PathBuf {
    path.with_extension("settled")
}

/// The stat data of `path` a settle keeps: mtime and ctime (seconds, nanoseconds), inode and
/// size. The ctime is the kernel's: a file rewritten and given its old mtime back still shows.
#[cfg(unix)]
fn stamp(path: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(path).ok()?;
    Some(format!(
        "{} {} {} {} {} {}",
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
        m.ino(),
        m.len()
    ))
}

#[cfg(not(unix))]
fn stamp(_: &Path) -> Option<String> {
    None
}

/// Whether the checkout at `path` (administrative directory `admin`) is as its settle left it
/// at `head`: the same HEAD, ignore files outside the tree, index and directories (module
/// docs). When it is, the directories with their stat data.
fn settled_look(repo: &Repo, path: &Path, admin: &Path, head: ObjectId) -> Option<SettledDirs> {
    let text = std::fs::read_to_string(settled_marker(path)).ok()?;
    let mut lines = text.lines();
    if lines.next() != Some(head.to_string().as_str())
        || lines.next() != Some(ignores_line(repo).as_str())
    {
        return None;
    }
    if lines.next() != stamp(&admin.join("HEAD")).as_deref()
        || lines.next() != stamp(&admin.join("index")).as_deref()
    {
        return None;
    }
    let mut dirs = SettledDirs::new();
    for line in lines {
        let (want, rel) = line.rsplit_once('\t')?;
        if stamp(&path.join(rel)).as_deref() != Some(want) {
            return None;
        }
        dirs.insert(rel.to_owned(), dir_stamp(want)?);
    }
    (!dirs.is_empty()).then_some(dirs)
}

/// A directory's stat data as the clean memo keeps it, from its [`stamp`]: mtime and inode,
/// truncated to 32 bits as git and gix do.
fn dir_stamp(stamp: &str) -> Option<dirty::DirStamp> {
    let mut parts = stamp.split(' ');
    let secs: i64 = parts.next()?.parse().ok()?;
    let nsecs: i64 = parts.next()?.parse().ok()?;
    let ino: u64 = parts.nth(2)?.parse().ok()?;
    Some((secs as u32, nsecs as u32, ino as u32))
}

/// The settled marker's line for the ignore files outside the tree (`info/exclude`,
/// `core.excludesFile`): editing one can make an ignored file a check left untracked.
fn ignores_line(repo: &Repo) -> String {
    format!("ignores {:016x}", repo.ignore_files().fingerprint())
}

/// Writes the settled marker of the checkout at `path`, clean at `head` now (module docs).
fn write_settled(repo: &Repo, path: &Path, admin: &Path, head: ObjectId) -> Result<()> {
    let dirs = crate::git::index::file::entry_dirs(&admin.join("index"))?;
    let missing = || Error::repo_msg(format!("could not stat '{}'", path.display()));
    let mut text = format!(
        "{head}\n{}\n{}\n{}\n",
        ignores_line(repo),
        stamp(&admin.join("HEAD")).ok_or_else(missing)?,
        stamp(&admin.join("index")).ok_or_else(missing)?
    );
    for dir in &dirs {
        let at = if dir.is_empty() {
            path.to_owned()
        } else {
            path.join(dir)
        };
        text.push_str(&format!("{}\t{dir}\n", stamp(&at).ok_or_else(missing)?));
    }
    let file = settled_marker(path);
    crate::git::fs::write_atomically(&file, text.as_bytes())
        .map_err(|e| Error::repo(format!("could not write '{}'", file.display()), e))
}

/// Settles the gate checkout at `path` after a run that passed (module docs): run by the
/// detached `gate-settle`, which holds the slot's lock, inherited from the merge.
pub fn settle(repo: &Repo, path: &Path) -> Result<()> {
    let Some(admin) = admin_of(path) else {
        return Ok(());
    };
    let head = std::fs::read_to_string(admin.join("HEAD"))
        .ok()
        .and_then(|t| t.trim().parse::<ObjectId>().ok())
        .ok_or_else(|| Error::repo_msg(format!("no HEAD in '{}'", admin.display())))?;
    let tree = objects::commit_tree(repo, head)?;
    let _ = std::fs::remove_file(settled_marker(path));
    if !untouched(repo, path, &admin, head) {
        show_dot_git(path, &admin)?;
        repair(path, &admin, head, head)?;
        let now = crate::git::cli::index_tree(path)?;
        hide_dot_git(path)?;
        if now != tree {
            return Err(Error::repo_msg(format!(
                "the gate checkout '{}' holds tree {now}, not {tree}",
                path.display()
            )));
        }
        dirty::remember_index_on_disk(path, &admin, head, repo.ignore_files());
        // Proven clean now by the look that wrote the memo, or not settled.
        if !untouched(repo, path, &admin, head) {
            return Ok(());
        }
    }
    write_settled(repo, path, &admin, head)
}

/// The administrative directory of the gate checkout at `path` (`<n>.git` beside it), when
/// it has one.
fn admin_of(path: &Path) -> Option<PathBuf> {
    let admin = path.with_extension("git");
    admin.join("HEAD").is_file().then_some(admin)
}

/// Writes the `.git` file that makes `path` a worktree of `admin`, for git-task's own git
/// commands; it is deleted again before any check runs ([`hide_dot_git`]).
fn show_dot_git(path: &Path, admin: &Path) -> Result<()> {
    let file = path.join(".git");
    let text = format!("gitdir: {}\n", crate::git::canonical(admin).display());
    std::fs::write(&file, text)
        .map_err(|e| Error::repo(format!("could not write '{}'", file.display()), e))
}

/// Deletes the checkout's `.git` file: the checks see a plain tree, as they would in a
/// fresh checkout, and no way into the repository's administrative files.
fn hide_dot_git(path: &Path) -> Result<()> {
    let file = path.join(".git");
    match std::fs::remove_file(&file) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::repo(
            format!("could not delete '{}'", file.display()),
            e,
        )),
    }
}

/// Puts the checkout at `path` (administrative directory `admin`, whose HEAD says `head`) back
/// to `commit`: every tracked file as `commit` has it, every untracked file that is not ignored
/// deleted. An index that is not the one git-task last wrote ([`dirty::index_as_remembered`]:
/// something else wrote it, or a run was killed before it noted it) is deleted first, so that
/// every file is written again: `git reset --hard` would otherwise keep any file whose stat data
/// that index records, whatever it holds.
fn repair(path: &Path, admin: &Path, head: ObjectId, commit: ObjectId) -> Result<()> {
    if !dirty::index_as_remembered(admin, head) {
        let index = admin.join("index");
        match std::fs::remove_file(&index) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(Error::repo(
                    format!("could not delete '{}'", index.display()),
                    e,
                ))
            }
        }
    }
    crate::git::cli::reset_hard_and_clean(path, commit)
}

/// Whether the checkout at `path` is exactly as the last run left it clean at `head`: its index
/// the one git-task wrote then, and every tracked file and directory as that index and the
/// clean memo say.
fn untouched(repo: &Repo, path: &Path, git_dir: &Path, head: ObjectId) -> bool {
    if !dirty::index_as_remembered(git_dir, head) {
        return false;
    }
    let anchors = crate::git::status::lstat::Anchors::default();
    let place = Place {
        path,
        git_dir: Some(git_dir),
        anchors: &anchors,
    };
    let mut cache = objects::FlatCache::default();
    matches!(
        dirty::quick_check(
            place,
            head,
            repo.ignore_files(),
            None,
            || objects::commit_tree(repo, head).ok(),
            |t| objects::flatten_tree(repo, t, &mut cache).ok(),
        ),
        Quick::Clean(_)
    )
}

impl Slot {
    /// Where the checkout is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn failed_marker(&self) -> PathBuf {
        self.path.with_extension("failed")
    }

    /// Brings the checkout to `commit` (whose tree is `tree`), clean but for its ignored files
    /// (module docs); a checkout made now gets the ignored files the target's
    /// `.worktreeinclude` at `seed_from` names, copied from the main worktree.
    pub fn prepare(
        &self,
        repo: &Repo,
        commit: ObjectId,
        tree: ObjectId,
        seed_from: ObjectId,
        looked: Option<Looked>,
    ) -> Result<()> {
        let _ = std::fs::remove_file(self.failed_marker());
        let path = &self.path;
        let admin = path.with_extension("git");
        // This run holds the slot's lock: an index lock in its checkout is what a run killed
        // while it moved the checkout left.
        if admin.is_dir() {
            crate::git::checkout::twoway::clear_stale_index_lock(&admin.join("index"))?;
        }
        let head = admin_of(path).and_then(|a| {
            std::fs::read_to_string(a.join("HEAD"))
                .ok()?
                .trim()
                .parse::<ObjectId>()
                .ok()
        });
        let looked = match (looked, head) {
            (Some(l), _) => Some(l),
            (None, Some(h)) => settled_look(repo, path, &admin, h).map(|dirs| Looked {
                head: h,
                untouched: true,
                settled: Some(dirs),
            }),
            (None, None) => None,
        };
        // Gone before anything changes: a run killed from here on leaves no settled marker.
        match std::fs::remove_file(settled_marker(path)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(Error::repo(
                    format!("could not delete '{}'", settled_marker(path).display()),
                    e,
                ))
            }
        }
        // Whether the index is known to hold `tree`: after the two-way move of an index that
        // held the last run's verified tree untouched (the clean memo), every changed path is
        // checked in the index just written; otherwise git says what tree it holds.
        let mut verified = false;
        // The index the two-way move wrote, kept for the clean memo (not read back), and the
        // directories it may have changed.
        let mut written = None;
        let mut touched = std::collections::HashSet::new();
        let mut settled = None;
        match head {
            Some(head) if path.is_dir() && objects::commit_tree(repo, head).is_ok() => {
                make_private(path)?;
                // Looked at before the `.git` file is written, as the last run left it.
                let untouched = match looked {
                    Some(l) if l.head == head => {
                        settled = l.settled;
                        l.untouched
                    }
                    _ => untouched(repo, path, &admin, head),
                };
                show_dot_git(path, &admin)?;
                let moved = untouched
                    && match self.two_way(repo, &admin, head, commit)? {
                        Some(moved) => {
                            verified = moved.in_index;
                            written = moved.index;
                            touched = moved.touched;
                            true
                        }
                        None => false,
                    };
                if !moved {
                    repair(path, &admin, head, commit)?;
                }
            }
            _ => {
                discard(repo, path)?;
                self.create(repo, commit, seed_from)?;
            }
        }
        if !verified {
            written = None;
        }
        if !verified && crate::git::cli::index_tree(path)? != tree {
            crate::git::cli::reset_hard_and_clean(path, commit)?;
            let now = crate::git::cli::index_tree(path)?;
            if now != tree {
                return Err(Error::repo_msg(format!(
                    "the gate checkout '{}' holds tree {now}, not the landing tree {tree}",
                    path.display()
                ))
                .hint("run 'git task sweep' to delete it"));
            }
        }
        hide_dot_git(path)?;
        // Remembered clean at `commit`, with the index as it is now: the next run needs only
        // `lstat`s to know nothing changed.
        // The directories the settled look saw unchanged a moment ago and the move did not
        // touch are as they were: only the others are looked at.
        match (&written, &settled) {
            (Some(index), Some(dirs)) => {
                let known = |dir: &str| {
                    if touched.contains(dir) {
                        None
                    } else {
                        dirs.get(dir).copied()
                    }
                };
                dirty::remember_index_knowing(
                    path,
                    &admin,
                    commit,
                    repo.ignore_files(),
                    index,
                    &known,
                )
            }
            (Some(index), None) => {
                dirty::remember_index_in(path, &admin, commit, repo.ignore_files(), index)
            }
            (None, _) => dirty::remember_index_on_disk(path, &admin, commit, repo.ignore_files()),
        }
        Ok(())
    }

    /// Moves the untouched checkout from `head` to `commit` by writing only the paths that
    /// differ: `Some(whether the index written holds every changed path as `commit` has it, and
    /// that index)`, or `None` when the two-way checkout declined (nothing written) or was not
    /// tried: a `.gitignore` changes, so a file ignored until now (a build output a check left)
    /// may be untracked at `commit`, and only a full clean finds it.
    fn two_way(
        &self,
        repo: &Repo,
        admin: &Path,
        head: ObjectId,
        commit: ObjectId,
    ) -> Result<Option<Moved>> {
        if head == commit {
            return Ok(Some(Moved {
                in_index: true,
                index: None,
                touched: Default::default(),
            }));
        }
        let changes = twoway::changes(repo, head, commit)?;
        if changes.changes_ignore_rules() {
            return Ok(None);
        }
        let (update, index) = twoway::update_keeping(repo, &self.path, &changes)?;
        if let twoway::Update::Declined(_) = update {
            return Ok(None);
        }
        let in_index = match &index {
            Some(index) => changes.in_index(index),
            None => changes.len() == 0,
        };
        let file = admin.join("HEAD");
        crate::git::fs::write_atomically(&file, format!("{commit}\n").as_bytes())
            .map_err(|e| Error::repo(format!("could not write '{}'", file.display()), e))?;
        // Every directory above a changed path: files were written, renamed or deleted in
        // them, directories made or removed under them.
        let mut touched = std::collections::HashSet::new();
        for changed in changes.paths() {
            let mut dir = changed;
            while let Some(cut) = dir.rfind('/') {
                dir = &dir[..cut];
                if !touched.insert(dir.to_owned()) {
                    break;
                }
            }
        }
        Ok(Some(Moved {
            in_index,
            index,
            touched,
        }))
    }

    /// Makes the checkout at `commit` (module docs), seeded with the main worktree's ignored
    /// files that the `.worktreeinclude` at `seed_from` names.
    fn create(&self, repo: &Repo, commit: ObjectId, seed_from: ObjectId) -> Result<()> {
        let path = &self.path;
        let admin = path.with_extension("git");
        let made = |what: &Path, e: std::io::Error| {
            Error::repo(format!("could not create '{}'", what.display()), e)
        };
        std::fs::create_dir_all(path).map_err(|e| made(path, e))?;
        make_private(path)?;
        std::fs::create_dir_all(&admin).map_err(|e| made(&admin, e))?;
        // `<common>/git-task/gate/<n>.git` names the common dir three levels up, as the
        // administrative directory of a linked worktree does, without being listed among them.
        for (file, text) in [
            (admin.join("commondir"), "../../..\n".to_owned()),
            (admin.join("HEAD"), format!("{commit}\n")),
        ] {
            std::fs::write(&file, text).map_err(|e| made(&file, e))?;
        }
        show_dot_git(path, &admin)?;
        crate::git::cli::reset_hard_and_clean(path, commit)?;
        let Some(include) = objects::read_blob_at(repo, seed_from, crate::copy::WORKTREE_INCLUDE)?
        else {
            return Ok(());
        };
        let globs = crate::copy::parse_include(&String::from_utf8_lossy(&include));
        let main = repo.main_worktree()?;
        if !globs.is_empty() && main.join(".git").exists() {
            let main = worktree::open_at(&main)?;
            crate::copy::copy_ignored(&main, path, Some(&globs), &mut |_, _| {})?;
        }
        Ok(())
    }

    /// Hands the checkout, after a run that passed, to a detached `git task gate-settle`
    /// (module docs), which inherits the slot's lock and holds it until it is done. When it
    /// cannot start, the lock is let go here and the next run looks at the checkout itself.
    pub fn settle_later(self, repo: &Repo) {
        #[cfg(unix)]
        {
            use std::io::{Seek, Write};
            let Ok(exe) = std::env::current_exe() else {
                return;
            };
            let mut lock = &self._lock;
            let _ = lock.set_len(0);
            let _ = lock.rewind();
            let _ = writeln!(lock, "{SETTLING}");
            // Inherited by the child (and only by it: this process closes it when `self` goes).
            if rustix::io::fcntl_setfd(&self._lock, rustix::io::FdFlags::empty()).is_err() {
                return;
            }
            let mut cmd = std::process::Command::new(exe);
            cmd.arg("gate-settle")
                .arg("--")
                .arg(&self.path)
                .current_dir(repo.common_dir());
            crate::git::spawn_detached(cmd);
        }
        #[cfg(not(unix))]
        let _ = repo;
    }

    /// Keeps the checkout for inspection after task `task`'s checks failed in it: it stays
    /// until the next run on it, `sweep`, or the task's `remove`.
    pub fn keep_failed(self, task: &str) -> PathBuf {
        let _ = std::fs::write(self.failed_marker(), format!("{task}\n"));
        self.path.clone()
    }
}

/// What [`Slot::two_way`] did.
struct Moved {
    /// Whether the index written holds every changed path as the new commit has it.
    in_index: bool,
    /// That index, when one was written.
    index: Option<twoway::Index>,
    /// The directories above the changed paths (`/`-separated, the top one left out).
    touched: std::collections::HashSet<String>,
}

/// Deletes the gate checkout at `path`: its administrative directory, then its files.
fn discard(repo: &Repo, path: &Path) -> Result<()> {
    let admin = path.with_extension("git");
    match std::fs::remove_dir_all(&admin) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(Error::repo(
                format!("could not delete '{}'", admin.display()),
                e,
            ))
        }
    }
    let _ = std::fs::remove_file(settled_marker(path));
    if std::fs::symlink_metadata(path).is_ok() {
        worktree::move_dir_aside(repo.common_dir(), path)?.delete_now()?;
    }
    Ok(())
}

/// A gate checkout `sweep` or `remove` deleted (or would delete).
#[derive(Clone, Debug)]
pub struct Cleaned {
    /// Where it was.
    pub path: PathBuf,
    /// The task whose checks failed in it, if that is why.
    pub task: Option<String>,
}

/// Deletes the gate checkouts no merge holds that a failed run left (`task`: only those of
/// that task) or that are damaged (no usable `.git`; with `task` set, never); with `dry_run`
/// only lists them.
pub fn clean(repo: &Repo, task: Option<&str>, dry_run: bool) -> Result<Vec<Cleaned>> {
    let gate = dir(repo);
    let Ok(entries) = std::fs::read_dir(&gate) else {
        return Ok(Vec::new());
    };
    let mut slots: Vec<usize> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let name = name.to_str()?;
            let stem = name.split('.').next()?;
            stem.parse().ok()
        })
        .collect();
    slots.sort_unstable();
    slots.dedup();
    let mut out = Vec::new();
    for n in slots {
        let path = gate.join(n.to_string());
        let failed = std::fs::read_to_string(path.with_extension("failed"))
            .ok()
            .map(|t| t.trim().to_owned());
        let damaged = failed.is_none()
            && std::fs::symlink_metadata(&path).is_ok()
            && admin_of(&path).is_none();
        let wanted = match task {
            Some(t) => failed.as_deref() == Some(t),
            None => failed.is_some() || damaged,
        };
        if !wanted {
            continue;
        }
        // Held by a merge now: it is that merge's.
        if try_slot(&gate, n)?.is_none() {
            continue;
        }
        if !dry_run && !clean_one(repo, &path)? {
            continue;
        }
        out.push(Cleaned { path, task: failed });
    }
    Ok(out)
}

/// Deletes the gate checkout at `path` (one [`clean`] found) unless a merge holds it now:
/// `false` then.
pub fn clean_one(repo: &Repo, path: &Path) -> Result<bool> {
    let gate = dir(repo);
    let Some(n) = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.parse::<usize>().ok())
    else {
        return Ok(false);
    };
    let Some(_lock) = try_slot(&gate, n)? else {
        return Ok(false);
    };
    discard(repo, path)?;
    let _ = std::fs::remove_file(path.with_extension("failed"));
    Ok(true)
}
