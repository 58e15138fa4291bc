//! Reading many refs cheaply, for `list` and `status`.
//!
//! `list` reads three refs for each of a thousand tasks. Through gix each
//! lookup also checks whether `packed-refs` changed and asks for the loose
//! file's size and position: seven syscalls where git needs three. A
//! [`RefReader`] reads a loose ref's file with one `open`, one `read` and a
//! `close`, and `packed-refs` once. Anything it is not sure of (a symbolic
//! ref, a per-worktree ref, an odd file, a ref in neither place) is asked of
//! gix instead, so the answers are gix's.
//!
//! With [`RefStats`] (what an earlier `list` read), a loose ref whose file has
//! the same stat data as then is not read at all: one `lstat`.

use crate::error::Result;
use crate::git::{read_small, ObjectId, Repo};
use std::cell::OnceCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Reads refs of one repository, `packed-refs` loaded at most once.
pub struct RefReader<'r> {
    repo: &'r Repo,
    packed: OnceCell<Option<gix::refs::file::packed::SharedBufferSnapshot>>,
    stats: Option<&'r RefStats>,
}

impl<'r> RefReader<'r> {
    /// Reads refs of `repo`.
    pub fn new(repo: &'r Repo) -> RefReader<'r> {
        RefReader {
            repo,
            packed: OnceCell::new(),
            stats: None,
        }
    }

    /// Reads refs of `repo`, loose ones known to `stats` by their stat data alone.
    pub fn with_stats(repo: &'r Repo, stats: &'r RefStats) -> RefReader<'r> {
        RefReader {
            stats: Some(stats),
            ..RefReader::new(repo)
        }
    }

    /// Returns the object `name` (a full ref name) points to, following only
    /// symbolic refs, like [`Repo::ref_target`]; `None` if it does not exist.
    pub fn target(&self, name: &str) -> Result<Option<ObjectId>> {
        match self.quick(name) {
            Some(id) => Ok(Some(id)),
            None => self.repo.ref_target(name),
        }
    }

    /// The answer from the loose file or `packed-refs`, when it is certain.
    fn quick(&self, name: &str) -> Option<ObjectId> {
        if !shared_ref(name) || self.repo.inner.namespace().is_some() {
            return None;
        }
        gix::validate::reference::name(name.into()).ok()?;
        let stat = match self.stats {
            Some(stats) => match stats.fingerprint(name) {
                Ok(stat) => match stats.known(name, &stat) {
                    Some(id) => return Some(id),
                    None => Some((stats, stat)),
                },
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(_) => return None,
            },
            None => None,
        };
        match read_small(&self.repo.common_dir().join(name)) {
            Ok(bytes) => {
                let hex = bytes.strip_suffix(b"\n")?;
                let id = ObjectId::from_hex(hex).ok()?;
                if let Some((stats, stat)) = stat {
                    stats.learn(name, stat, id);
                }
                Some(id)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let packed = self
                    .packed
                    .get_or_init(|| {
                        // Unreadable: gix is asked instead, and reports the error.
                        self.repo.inner.refs.cached_packed_buffer().ok().flatten()
                    })
                    .as_ref()?;
                Some(packed.try_find(name).ok()??.target())
            }
            Err(_) => None,
        }
    }
}

/// What `list` read of loose refs, by their files' stat data: `<common git dir>/git-task/refs`,
/// a line `<fingerprint> <object id> <ref name>` per ref.
///
/// A loose ref is only ever rewritten by renaming a new file over it, which gives
/// it a new change time. A ref is remembered only once its file is a few seconds
/// old, so a rewrite after that, even by a file that gets the same inode back,
/// has different stat data: while the stat data are the same, so is the ref. A
/// ref moved since is read again, so an old file costs only speed.
pub struct RefStats {
    path: PathBuf,
    /// A handle on the common git dir, that ref files are looked up from.
    #[cfg(unix)]
    common: Option<rustix::fd::OwnedFd>,
    known: HashMap<String, (u64, ObjectId)>,
    /// What this process saw: refs found unchanged and refs read.
    seen: Mutex<HashMap<String, (u64, ObjectId)>>,
    /// Whether anything was learnt (read and old enough to remember).
    learnt: std::sync::atomic::AtomicBool,
}

impl RefStats {
    /// Reads the file of the repository whose common git dir is `common_dir` (empty when
    /// missing or unreadable).
    pub fn load(common_dir: &Path) -> RefStats {
        let path = common_dir.join("git-task").join("refs");
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let known = text
            .lines()
            .filter_map(|line| {
                let mut parts = line.splitn(3, ' ');
                let stat = parts.next()?.parse().ok()?;
                let id = ObjectId::from_hex(parts.next()?.as_bytes()).ok()?;
                Some((parts.next()?.to_owned(), (stat, id)))
            })
            .collect();
        #[cfg(unix)]
        let common = {
            use rustix::fs::{Mode, OFlags};
            let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
            rustix::fs::open(common_dir, flags, Mode::empty()).ok()
        };
        RefStats {
            path,
            #[cfg(unix)]
            common,
            known,
            seen: Mutex::new(HashMap::new()),
            learnt: Default::default(),
        }
    }

    /// The stat data of the loose file of the ref `name`.
    #[cfg(unix)]
    fn fingerprint(&self, name: &str) -> std::io::Result<Fingerprint> {
        let flags = rustix::fs::AtFlags::SYMLINK_NOFOLLOW;
        let st = match &self.common {
            Some(common) => rustix::fs::statat(common, name, flags),
            None => return Err(std::io::ErrorKind::Unsupported.into()),
        }?;
        if rustix::fs::FileType::from_raw_mode(st.st_mode as _) != rustix::fs::FileType::RegularFile
        {
            return Err(std::io::ErrorKind::InvalidInput.into());
        }
        Ok(Fingerprint::of(&st))
    }

    /// The stat data of the loose file of the ref `name`.
    #[cfg(not(unix))]
    fn fingerprint(&self, _: &str) -> std::io::Result<Fingerprint> {
        Err(std::io::ErrorKind::Unsupported.into())
    }

    fn known(&self, name: &str, stat: &Fingerprint) -> Option<ObjectId> {
        let (known, id) = self.known.get(name)?;
        (*known == stat.hash).then(|| {
            self.remember(name, stat.hash, *id);
            *id
        })
    }

    fn learn(&self, name: &str, stat: Fingerprint, id: ObjectId) {
        if stat.old_enough() {
            self.remember(name, stat.hash, id);
            self.learnt
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    fn remember(&self, name: &str, stat: u64, id: ObjectId) {
        if let Ok(mut seen) = self.seen.lock() {
            seen.insert(name.to_owned(), (stat, id));
        }
    }

    /// Rewrites the file with the refs this process saw, when that is not what it holds.
    /// Best effort: a file that cannot be written only costs speed next time.
    pub fn store(&self) {
        let Ok(seen) = self.seen.lock() else {
            return;
        };
        if !self.learnt.load(std::sync::atomic::Ordering::Relaxed) && seen.len() == self.known.len()
        {
            return;
        }
        let mut lines: Vec<String> = seen
            .iter()
            .map(|(name, (stat, id))| format!("{stat} {id} {name}\n"))
            .collect();
        lines.sort();
        let text = lines.concat();
        if let Some(dir) = self.path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = crate::git::fs::write_atomically(&self.path, text.as_bytes());
    }
}

/// A loose ref file's stat data, hashed, and whether it is old enough to remember.
struct Fingerprint {
    hash: u64,
    ctime: std::time::SystemTime,
}

impl Fingerprint {
    /// How old a file must be before its stat data stand for its content.
    const SETTLED: std::time::Duration = std::time::Duration::from_secs(2);

    #[cfg(unix)]
    #[allow(clippy::unnecessary_cast)] // the fields' types differ between platforms
    fn of(st: &rustix::fs::Stat) -> Fingerprint {
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

    fn old_enough(&self) -> bool {
        std::time::SystemTime::now()
            .duration_since(self.ctime)
            .is_ok_and(|age| age >= Self::SETTLED)
    }
}

/// Whether `name` lives in the common dir (not one of git's per-worktree refs).
fn shared_ref(name: &str) -> bool {
    name.starts_with("refs/")
        && !["refs/worktree/", "refs/bisect/", "refs/rewritten/"]
            .iter()
            .any(|p| name.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::shared_ref;

    #[test]
    fn per_worktree_refs_are_left_to_gix() {
        assert!(shared_ref("refs/tasks/a/record"));
        assert!(shared_ref("refs/heads/main"));
        assert!(!shared_ref("refs/worktree/x"));
        assert!(!shared_ref("refs/bisect/bad"));
        assert!(!shared_ref("HEAD"));
    }
}
