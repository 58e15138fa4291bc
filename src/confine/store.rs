//! A confined session's private object store, and its settling into the shared one.
//!
//! Inside the fence the shared store `<common>/objects` is read-only: the rights git needs
//! to add objects there (create, write, unlink) would also let the session delete any
//! object or pack, and overwrite one after a `chmod`, which Landlock does not restrict. So
//! the session writes its objects to `<scratch>/objects` (`GIT_OBJECT_DIRECTORY`), reads
//! the shared ones through `GIT_ALTERNATE_OBJECT_DIRECTORIES`, and the private store is
//! listed in `<common>/objects/info/alternates` ([`attach`], before the fence starts) so
//! that every reader outside (git, gix) sees the new objects at once.
//!
//! [`settle`] then moves them into the shared store: every object is read back and
//! written again through gix ([`crate::git::import`]), so an object whose name is not its
//! hash is left out; then the alternates line and the private store go. It runs before
//! `merge` lands the task, in `remove` and in `sweep` ([`settle_all`]); the task's next
//! `exec --confine` moves the objects the same way and then uses the emptied store again,
//! still listed ([`attach`]). A store whose session still runs (its process is alive
//! and its worktree still there) is migrated but kept. A store that cannot be migrated
//! whole (a corrupt object, a full disk) is never deleted: it is moved to
//! `<common>/git-task/unsettled/` and stays listed there until a later settle succeeds.

use crate::error::{Error, Result};
use crate::git::Repo;
use crate::task::{layout, TaskId};
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The private object store of a task: `<scratch>/objects`.
pub fn private_dir(repo: &Repo, id: &TaskId) -> PathBuf {
    layout::scratch_dir(repo.common_dir(), id).join("objects")
}

/// Where stores that could not be migrated whole are kept.
fn unsettled_root(repo: &Repo) -> PathBuf {
    crate::git::state_dir(repo.common_dir()).join("unsettled")
}

/// The name of a session's marker in its private store: `git-task-session.<pid>`, holding
/// the process's start time and the worktree it runs for.
const SESSION_PREFIX: &str = "git-task-session.";

/// What [`settle`] did with one private store.
#[derive(Debug, Default)]
pub struct Settled {
    /// Objects written into the shared store.
    pub migrated: usize,
    /// Objects left out because their content does not hash to their name.
    pub forged: Vec<String>,
    /// Why the store was kept (`None`: it is gone, its objects in the shared store).
    pub kept: Option<String>,
}

/// Makes the task's private store ready for a new session: the objects a previous session
/// left there are moved to the shared store first (as [`settle`] does) and the store, emptied,
/// is used again, still listed (a store that cannot be moved whole goes to `unsettled/` and a
/// fresh one is made). Then marks this process's session in it and lists it in
/// `<common>/objects/info/alternates` (idempotent). `worktree` is the worktree the session runs
/// for. Returns the store's path and what was moved.
pub fn attach(repo: &Repo, id: &TaskId, worktree: &Path) -> Result<(PathBuf, Settled)> {
    let dir = private_dir(repo, id);
    let _lock = Lock::take(&lock_of(&dir))?;
    let mut settled = Settled::default();
    match std::fs::symlink_metadata(&dir) {
        Ok(m) if m.is_dir() => {
            let live = live_session(&dir);
            let mut done = HashSet::new();
            match crate::git::import::import(repo, &dir, &mut done) {
                Ok(i) if i.unreadable.is_empty() => {
                    settled.migrated = i.written;
                    settled.forged = i.forged;
                    // Moved: the store starts empty again (no other session writes it).
                    if live.is_none() && !done.is_empty() {
                        std::fs::remove_dir_all(&dir)
                            .map_err(|e| io_err("could not empty", &dir, e))?;
                    }
                }
                Ok(i) => settled = keep_aside(repo, &dir, settled, i.unreadable.join("; "))?,
                Err(e) => settled = keep_aside(repo, &dir, settled, e.to_string())?,
            }
        }
        // The scratch dir is writable inside the fence: what a session left there is not trusted.
        Ok(_) => std::fs::remove_file(&dir).map_err(|e| io_err("could not remove", &dir, e))?,
        Err(_) => {}
    }
    std::fs::create_dir_all(dir.join("info")).map_err(|e| io_err("could not create", &dir, e))?;
    let marker = dir.join(format!("{SESSION_PREFIX}{}", std::process::id()));
    let start = start_time(std::process::id()).unwrap_or_default();
    std::fs::write(&marker, format!("{start}\n{}\n", worktree.display()))
        .map_err(|e| io_err("could not write", &marker, e))?;
    let line = line_of(&dir)?;
    edit_alternates(repo, |lines| {
        if !lines.contains(&line) {
            lines.push(line.clone());
        }
    })?;
    Ok((dir, settled))
}

/// Moves the objects of the task's private store, if it has one, into the shared store,
/// then removes its alternates line and the store, unless a session of it still runs.
/// Never deletes a store before its objects are in the shared store.
pub fn settle(repo: &Repo, id: &TaskId) -> Result<Settled> {
    let dir = private_dir(repo, id);
    if std::fs::symlink_metadata(&dir).is_err() {
        return Ok(Settled::default());
    }
    let _lock = Lock::take(&lock_of(&dir))?;
    settle_locked(repo, &dir, live_session(&dir))
}

/// [`settle`] for every task's private store, and the stores kept in `unsettled/`; also
/// drops alternates lines of git-task's stores that no longer exist. Returns, per store
/// (its path), what was done.
pub fn settle_all(repo: &Repo) -> Result<Vec<(PathBuf, Settled)>> {
    let mut out = Vec::new();
    let scratch = crate::git::state_dir(repo.common_dir()).join("scratch");
    let mut dirs: Vec<PathBuf> = read_dir_paths(&scratch)
        .into_iter()
        .map(|d| d.join("objects"))
        .filter(|d| std::fs::symlink_metadata(d).is_ok())
        .collect();
    dirs.extend(
        read_dir_paths(&unsettled_root(repo))
            .into_iter()
            .filter(|d| !d.to_string_lossy().ends_with(".lock")),
    );
    for dir in dirs {
        let _lock = Lock::take(&lock_of(&dir))?;
        let live = live_session(&dir);
        let settled = settle_locked(repo, &dir, live)?;
        out.push((dir, settled));
    }
    // A line naming one of git-task's stores that is gone (deleted with its scratch dir by
    // hand, say) makes every git command complain: drop it.
    let ours = crate::git::state_dir(repo.common_dir());
    edit_alternates(repo, |lines| {
        lines.retain(|l| !Path::new(l).starts_with(&ours) || Path::new(l).exists())
    })?;
    Ok(out)
}

fn settle_locked(repo: &Repo, dir: &Path, live: Option<String>) -> Result<Settled> {
    let mut settled = Settled::default();
    let meta = std::fs::symlink_metadata(dir).map_err(|e| io_err("could not read", dir, e))?;
    if !meta.is_dir() {
        // Not a store git-task made (the session replaced it): nothing of it is trusted.
        remove_line(repo, dir)?;
        std::fs::remove_file(dir).map_err(|e| io_err("could not remove", dir, e))?;
        return Ok(settled);
    }
    let mut done = HashSet::new();
    let first = crate::git::import::import(repo, dir, &mut done);
    let first = match first {
        Ok(i) => i,
        Err(e) => return keep_aside(repo, dir, settled, e.to_string()),
    };
    settled.migrated += first.written;
    settled.forged.extend(first.forged);
    if !first.unreadable.is_empty() {
        let why = format!(
            "{} object(s) could not be read: {}",
            first.unreadable.len(),
            first.unreadable.join("; ")
        );
        return keep_aside(repo, dir, settled, why);
    }
    if let Some(session) = live {
        settled.kept = Some(session);
        return Ok(settled);
    }
    remove_line(repo, dir)?;
    // Objects a lingering process of the session wrote meanwhile.
    match crate::git::import::import(repo, dir, &mut done) {
        Ok(i) if i.unreadable.is_empty() => {
            settled.migrated += i.written;
            settled.forged.extend(i.forged);
        }
        Ok(i) => return keep_aside(repo, dir, settled, i.unreadable.join("; ")),
        Err(e) => return keep_aside(repo, dir, settled, e.to_string()),
    }
    std::fs::remove_dir_all(dir).map_err(|e| io_err("could not delete", dir, e))?;
    Ok(settled)
}

/// Keeps a store that could not be migrated whole: moved out of the scratch dir (which
/// `remove`, `merge` and `sweep` delete) to `unsettled/`, and listed there.
fn keep_aside(repo: &Repo, dir: &Path, mut settled: Settled, why: String) -> Result<Settled> {
    let root = unsettled_root(repo);
    if !dir.starts_with(&root) {
        std::fs::create_dir_all(&root).map_err(|e| io_err("could not create", &root, e))?;
        let name = dir
            .parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let to = root.join(format!("{name}-{stamp}"));
        // Listed under both names while it moves: no reader misses its objects.
        let new_line = line_of(&to)?;
        edit_alternates(repo, |lines| lines.push(new_line.clone()))?;
        std::fs::rename(dir, &to).map_err(|e| io_err("could not move", dir, e))?;
        remove_line(repo, dir)?;
        settled.kept = Some(format!("{why}; kept in '{}'", to.display()));
    } else {
        settled.kept = Some(why);
    }
    Ok(settled)
}

fn remove_line(repo: &Repo, dir: &Path) -> Result<()> {
    let line = line_of(dir)?;
    edit_alternates(repo, |lines| lines.retain(|l| *l != line))
}

/// The alternates line of a store: its absolute path.
fn line_of(dir: &Path) -> Result<String> {
    let line = dir
        .to_str()
        .filter(|s| !s.contains(['\n', '\r']))
        .ok_or_else(|| {
            Error::input(format!(
                "the path '{}' cannot be listed in objects/info/alternates",
                dir.display()
            ))
        })?;
    Ok(line.to_owned())
}

/// The session of a store that still runs, in words, if any: a marker whose process is
/// alive (same pid, same start time) and whose worktree still exists. Markers of ended
/// sessions are deleted.
fn live_session(dir: &Path) -> Option<String> {
    let mut live = None;
    for path in read_dir_paths(dir) {
        let Some(pid) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix(SESSION_PREFIX))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let mut lines = text.lines();
        let start = lines.next().unwrap_or_default();
        let worktree = lines.next().unwrap_or_default();
        let alive = !start.is_empty()
            && start_time(pid).as_deref() == Some(start)
            && Path::new(worktree).is_dir();
        if alive {
            live = Some(format!("a confined session (pid {pid}) still runs"));
        } else {
            let _ = std::fs::remove_file(&path);
        }
    }
    live
}

/// The start time of process `pid` (field 22 of `/proc/<pid>/stat`), which tells it from
/// a later process that reuses its number. `None` when it is gone (or off Linux).
fn start_time(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid ...`: comm may hold anything, so count after its last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19).map(str::to_owned)
}

fn read_dir_paths(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    out.sort();
    out
}

fn io_err(what: &str, path: &Path, e: std::io::Error) -> Error {
    Error::repo(format!("{what} '{}'", path.display()), e)
}

fn lock_of(dir: &Path) -> PathBuf {
    let mut name = dir.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// Rewrites `<common>/objects/info/alternates` under its lock, atomically; deletes it
/// when no line is left. Lines are kept as they are, blank ones and comments included.
fn edit_alternates(repo: &Repo, edit: impl FnOnce(&mut Vec<String>)) -> Result<()> {
    let file = repo
        .common_dir()
        .join("objects")
        .join("info")
        .join("alternates");
    let info = file.parent().unwrap_or(repo.common_dir()).to_path_buf();
    std::fs::create_dir_all(&info).map_err(|e| io_err("could not create", &info, e))?;
    let lock_path = lock_of(&file);
    let lock = Lock::take(&lock_path)?;
    let text = match std::fs::read_to_string(&file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(io_err("could not read", &file, e)),
    };
    let before: Vec<String> = text.lines().map(str::to_owned).collect();
    let mut lines = before.clone();
    edit(&mut lines);
    if lines == before {
        return Ok(());
    }
    if lines.iter().all(|l| l.trim().is_empty()) {
        return match std::fs::remove_file(&file) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(io_err("could not remove", &file, e))
            }
            _ => Ok(()),
        };
    }
    let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    lock.commit(&file, body.as_bytes())
}

/// A lock file made with `O_EXCL`, as git makes `<file>.lock`; removed on drop. One left by
/// a process that died (its pid gone) or older than a minute is taken over.
struct Lock {
    path: PathBuf,
    file: Option<std::fs::File>,
}

impl Lock {
    fn take(path: &Path) -> Result<Lock> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
            {
                Ok(mut file) => {
                    let _ = writeln!(file, "{}", std::process::id());
                    return Ok(Lock {
                        path: path.to_path_buf(),
                        file: Some(file),
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    if Self::stale(path) {
                        let _ = std::fs::remove_file(path);
                        continue;
                    }
                    if Instant::now() > deadline {
                        return Err(Error::repo_msg(format!(
                            "could not lock '{}': another git-task holds it",
                            path.display()
                        ))
                        .hint("if no git-task is running, delete that file"));
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => return Err(io_err("could not create", path, e)),
            }
        }
    }

    fn stale(path: &Path) -> bool {
        let old = std::fs::metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > Duration::from_secs(60));
        let gone = std::fs::read_to_string(path)
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok())
            .is_some_and(|pid| {
                cfg!(target_os = "linux") && !Path::new(&format!("/proc/{pid}")).exists()
            });
        old || gone
    }

    /// Writes `body` to the lock file and renames it over `target`.
    fn commit(mut self, target: &Path, body: &[u8]) -> Result<()> {
        let mut file = self.file.take().expect("a lock holds its file");
        file.set_len(0)
            .and_then(|()| {
                use std::io::Seek;
                file.seek(std::io::SeekFrom::Start(0))?;
                file.write_all(body)?;
                file.sync_all()
            })
            .map_err(|e| io_err("could not write", &self.path, e))?;
        std::fs::rename(&self.path, target).map_err(|e| io_err("could not write", target, e))?;
        self.path = PathBuf::new();
        Ok(())
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        if !self.path.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
