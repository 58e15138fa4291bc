//! File-system helpers under both the adapter and the core: replacing a file whole
//! (git's lockfile idea: a reader sees the old content or the new, never half), and
//! where git looks for a user's files (`~/`, `$XDG_CONFIG_HOME/git/`), reading small
//! files cheaply, and comparing paths (normalised, canonical, the current directory).

use crate::error::{Error, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Expands a leading `~/` to the home directory, as git does for path-valued settings
/// (`core.hooksPath`, `task.worktreeDir`); other paths are returned as given. The home
/// directory is gix's (`$HOME`, else the system's idea of it).
pub fn expand_home(path: &str) -> PathBuf {
    match path.strip_prefix("~/") {
        Some(rest) => gix::path::env::home_dir().unwrap_or_default().join(rest),
        None => PathBuf::from(path),
    }
}

/// Returns git's per-user file `name` (`ignore`, `attributes`): `$XDG_CONFIG_HOME/git/<name>`,
/// else `~/.config/git/<name>`; an empty variable counts as unset, as in git.
pub fn xdg_git_file(name: &str) -> Option<PathBuf> {
    gix::path::env::xdg_config(name, &mut |var| {
        gix::path::env::var(var).filter(|v| !v.is_empty())
    })
}

/// Replaces the file at `path` with what `write` writes: into a temporary file beside
/// it (`.<name>.<random>.tmp`, `tempfile`), then renamed over `path`. The temporary file
/// is created `0666` less the umask, as `std::fs::write` and git create files, unless
/// `mode` names the exact mode it gets; it is removed when anything fails.
pub fn replace_file(
    path: &Path,
    mode: Option<u32>,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir)?;
    write(tmp.as_file_mut())?;
    #[cfg(unix)]
    if let Some(mode) = mode {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    #[cfg(not(unix))]
    let _ = mode;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Replaces the file at `path` with `bytes` ([`replace_file`]).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace_file(path, None, |file| file.write_all(bytes))
}

/// Returns whether file metadata has an executable bit (git's `100755` mode); always false off Unix.
pub fn is_executable(meta: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        false
    }
}

/// Reads a small file with one `open`, one `read` and a `close`.
///
/// `std::fs::read` first asks for the file's size and position, and reads once more
/// to see the end: `list` reads a few small files for each of a thousand tasks. A read
/// that does not fill the buffer is a regular file's end; a file that does fill it is
/// read on until a read returns nothing.
pub(crate) fn read_small(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut out = vec![0; 4096];
    let mut len = 0;
    loop {
        let n = match file.read(&mut out[len..]) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        len += n;
        if n == 0 || len < out.len() {
            break;
        }
        out.resize(out.len() * 2, 0);
    }
    out.truncate(len);
    Ok(out)
}

/// Removes `.` and `..` components without touching the file system.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Returns `path` with symlinks resolved, or only normalised ([`normalize`]) when it
/// cannot be resolved (it does not exist): for comparing two paths to one directory.
pub fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| normalize(path))
}

/// Returns `path` made absolute against the process's current directory, normalised.
pub fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        normalize(path)
    } else {
        normalize(&std::env::current_dir().unwrap_or_default().join(path))
    }
}

/// Returns whether the process's current directory is `path` or a directory below it.
pub fn cwd_inside(path: &Path) -> bool {
    let Ok(cwd) = std::env::current_dir() else {
        return false;
    };
    canonical(&cwd).starts_with(canonical(path))
}

/// Moves the process out of `path` into `to` when its current directory is inside `path`
/// (about to be deleted or replaced); returns `to` then, so the caller can tell the user to `cd` there.
pub fn leave_if_inside(path: &Path, to: &Path) -> Result<Option<PathBuf>> {
    if !cwd_inside(path) {
        return Ok(None);
    }
    std::env::set_current_dir(to)
        .map_err(|e| Error::repo(format!("could not change to '{}'", to.display()), e))?;
    Ok(Some(to.to_path_buf()))
}

/// A file's stat data, hashed, and whether it is old enough for them to stand for its content:
/// what the caches of loose refs (`list`) and of worktree config files (the trust check) keep.
///
/// A file rewritten by renaming a new one over it gets a new inode and change time; one
/// written in place, a new change time (and size or modification time) unless it is written
/// twice within the file system's clock tick. A file is remembered only once its change time
/// is [`Fingerprint::SETTLED`] old, so a later write, even one that gets the same inode back,
/// changes the stat data: while they are the same, so is the content.
pub struct Fingerprint {
    /// The stat data, hashed.
    pub hash: u64,
    ctime: std::time::SystemTime,
}

impl Fingerprint {
    /// How old a file must be before its stat data stand for its content.
    pub const SETTLED: std::time::Duration = std::time::Duration::from_secs(2);

    #[cfg(unix)]
    #[allow(clippy::unnecessary_cast)] // the fields' types differ between platforms
    pub fn of(st: &rustix::fs::Stat) -> Fingerprint {
        use std::hash::{BuildHasher, Hasher};
        let mut h = foldhash::quality::FixedState::with_seed(0x7265_6673).build_hasher();
        for n in [
            st.st_ino as u64,
            st.st_dev as u64,
            st.st_size as u64,
            st.st_mtime as u64,
            st.st_mtime_nsec as u64,
            st.st_ctime as u64,
            st.st_ctime_nsec as u64,
        ] {
            h.write_u64(n);
        }
        let ctime = std::time::UNIX_EPOCH
            + std::time::Duration::new(st.st_ctime.max(0) as u64, st.st_ctime_nsec as u32);
        Fingerprint {
            hash: h.finish(),
            ctime,
        }
    }

    /// The fingerprint of the file at `path` (links followed, as a read follows them).
    #[cfg(unix)]
    pub fn of_path(path: &Path) -> std::io::Result<Fingerprint> {
        Ok(Fingerprint::of(&rustix::fs::stat(path)?))
    }

    /// Not on this platform: nothing is remembered.
    #[cfg(not(unix))]
    pub fn of_path(_: &Path) -> std::io::Result<Fingerprint> {
        Err(std::io::ErrorKind::Unsupported.into())
    }

    /// The fingerprint of the file `rel` below `dir` (links followed): each path walk starts
    /// at `dir`, which is cheaper than a long absolute path a thousand times.
    pub fn of_in(dir: &StatDir, rel: &Path) -> std::io::Result<Fingerprint> {
        #[cfg(unix)]
        if let Some(fd) = &dir.fd {
            let st = rustix::fs::statat(fd, rel, rustix::fs::AtFlags::empty())?;
            return Ok(Fingerprint::of(&st));
        }
        Fingerprint::of_path(&dir.path.join(rel))
    }

    /// Whether the file is old enough to remember by its stat data.
    pub fn old_enough(&self) -> bool {
        std::time::SystemTime::now()
            .duration_since(self.ctime)
            .is_ok_and(|age| age >= Self::SETTLED)
    }
}

/// Creates the directory `dir` under the common git dir `common` (and its parents below it),
/// but only while `common` exists: a background process (a pool fill, a delete moved aside)
/// outliving a repository that was deleted must not make a ghost of it again.
pub fn create_state_dir(common: &Path, dir: &Path) -> std::io::Result<()> {
    if !common.is_dir() {
        return Err(std::io::ErrorKind::NotFound.into());
    }
    std::fs::create_dir_all(dir)
}

/// A directory that many [`Fingerprint`]s are taken below ([`Fingerprint::of_in`]).
pub struct StatDir {
    path: PathBuf,
    #[cfg(unix)]
    fd: Option<rustix::fd::OwnedFd>,
}

impl StatDir {
    /// Opens `path` for looking up files below it (on failure, full paths are used).
    pub fn open(path: &Path) -> StatDir {
        StatDir {
            path: path.to_path_buf(),
            #[cfg(unix)]
            fd: {
                use rustix::fs::{Mode, OFlags};
                let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
                rustix::fs::open(path, flags, Mode::empty()).ok()
            },
        }
    }
}

/// The hash a cache file's entries are found by in memory (`list`'s caches): fixed within a
/// process, so any thread finds what another put.
pub fn key_hash(key: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::default().hash_one(key)
}

/// The directory a `.git` file's `gitdir: ` line names, relative ones against the worktree at
/// `path`; as git reads it (`read_gitfile_gently`: that exact prefix, line ends trimmed).
pub fn gitdir_line(path: &Path, text: &[u8]) -> Option<PathBuf> {
    let text = std::str::from_utf8(text).ok()?;
    let dir = text
        .strip_prefix("gitdir: ")?
        .trim_end_matches(['\n', '\r']);
    if dir.is_empty() {
        return None;
    }
    let dir = PathBuf::from(dir);
    Some(if dir.is_relative() {
        normalize(&path.join(dir))
    } else {
        dir
    })
}

/// The git dir of the worktree at `dir`: its `.git` directory, or the directory its `.git`
/// file names (the one parser of `.git` files: [`gitdir_line`]).
pub fn git_dir_at(dir: &Path) -> Option<PathBuf> {
    let dot_git = dir.join(".git");
    if std::fs::metadata(&dot_git).ok()?.is_dir() {
        return Some(normalize(&dot_git));
    }
    dot_git_target(dir)
}

/// The directory the `.git` file of the worktree at `dir` names; `None` when it has no such
/// file (a `.git` directory, or nothing).
pub fn dot_git_target(dir: &Path) -> Option<PathBuf> {
    let text = std::fs::read(dir.join(".git")).ok()?;
    gitdir_line(dir, &text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A state directory is made below a common dir that exists, never a ghost of a deleted one.
    #[test]
    fn state_dirs_only_below_an_existing_common_dir() {
        let dir = tempfile::tempdir().unwrap();
        let common = dir.path().join("repo/.git");
        let asides = common.join("git-task/asides");
        assert!(create_state_dir(&common, &asides).is_err());
        assert!(!dir.path().join("repo").exists(), "nothing made");
        std::fs::create_dir_all(&common).unwrap();
        create_state_dir(&common, &asides).unwrap();
        assert!(asides.is_dir());
    }

    /// The file is replaced whole, keeps git's default mode, and no temporary file is left.
    #[test]
    fn replaces_whole_and_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state");
        write_atomically(&path, b"one").unwrap();
        write_atomically(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("state")]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            let reference = dir.path().join("made-by-std");
            std::fs::write(&reference, "").unwrap();
            assert_eq!(
                mode(&path),
                mode(&reference),
                "the mode std::fs::write gives"
            );
            std::fs::remove_file(&reference).unwrap();
            replace_file(&path, Some(0o755), |f| f.write_all(b"#!/bin/sh\n")).unwrap();
            assert_eq!(mode(&path), 0o755);
        }
        // A failed write leaves the old content and no temporary file.
        let failed = replace_file(&path, None, |_| Err(std::io::Error::other("full")));
        assert!(failed.is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"#!/bin/sh\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
