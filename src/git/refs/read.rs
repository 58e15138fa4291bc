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
use crate::git::fs::Fingerprint;
use crate::git::{read_small, ObjectId, Repo};
use std::cell::OnceCell;
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
                // No loose file: a packed ref (half the tasks' refs after a `git pack-refs`).
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return self.packed(name),
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
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => self.packed(name),
            Err(_) => None,
        }
    }

    /// The answer of `packed-refs` (read once), for a ref with no loose file.
    fn packed(&self, name: &str) -> Option<ObjectId> {
        let packed = self
            .packed
            .get_or_init(|| {
                // Unreadable: gix is asked instead, and reports the error.
                self.repo.inner.refs.cached_packed_buffer().ok().flatten()
            })
            .as_ref()?;
        Some(packed.try_find(name).ok()??.target())
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
    text: String,
    /// Each ref the file names, by the hash of its name (of two names with the same hash, one
    /// is not found: that only costs a read).
    known: foldhash::HashMap<u64, Known>,
    /// Refs read and old enough to remember.
    learnt: Mutex<Vec<(String, u64, ObjectId)>>,
}

/// A ref as the file remembers it.
struct Known {
    /// Its name, in the file's text.
    name: std::ops::Range<usize>,
    stat: u64,
    id: ObjectId,
    /// Whether this process found it unchanged.
    seen: std::sync::atomic::AtomicBool,
}

impl RefStats {
    /// Reads the file of the repository whose common git dir is `common_dir` (empty when
    /// missing or unreadable).
    pub fn load(common_dir: &Path) -> RefStats {
        RefStats::load_file(common_dir, "refs")
    }

    /// [`RefStats::load`] of another file under `<common git dir>/git-task/`, for a command that
    /// reads other refs than `list` (each file is rewritten with the refs its reader saw).
    pub fn load_file(common_dir: &Path, name: &str) -> RefStats {
        let path = crate::git::state_dir(common_dir).join(name);
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        // A line is some 90 bytes.
        let mut known =
            foldhash::HashMap::with_capacity_and_hasher(text.len() / 64, Default::default());
        let mut at = 0;
        for line in text.split_inclusive('\n') {
            let start = at;
            at += line.len();
            let mut parts = line.trim_end_matches('\n').splitn(3, ' ');
            let (Some(hash), Some(hex), Some(name)) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            let (Ok(stat), Ok(oid)) = (hash.parse(), ObjectId::from_hex(hex.as_bytes())) else {
                continue;
            };
            let from = start + hash.len() + hex.len() + 2;
            known.insert(
                crate::git::fs::key_hash(name.as_bytes()),
                Known {
                    name: from..from + name.len(),
                    stat,
                    id: oid,
                    seen: Default::default(),
                },
            );
        }
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
            text,
            known,
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
        let known = self.known.get(&crate::git::fs::key_hash(name.as_bytes()))?;
        let found = self.text.get(known.name.clone()) == Some(name) && known.stat == stat.hash;
        found.then(|| {
            known.seen.store(true, std::sync::atomic::Ordering::Relaxed);
            known.id
        })
    }

    fn learn(&self, name: &str, stat: Fingerprint, id: ObjectId) {
        if stat.old_enough() {
            if let Ok(mut learnt) = self.learnt.lock() {
                learnt.push((name.to_owned(), stat.hash, id));
            }
        }
    }

    /// Rewrites the file with the refs this process saw, when that is not what it holds.
    /// Best effort: a file that cannot be written only costs speed next time.
    pub fn store(&self) {
        let Ok(learnt) = self.learnt.lock() else {
            return;
        };
        let seen = |k: &&Known| k.seen.load(std::sync::atomic::Ordering::Relaxed);
        if learnt.is_empty() && self.known.values().all(|k| seen(&k)) {
            return;
        }
        let mut lines: Vec<(&str, String)> = learnt
            .iter()
            .map(|(name, stat, id)| (name.as_str(), format!("{stat} {id} {name}\n")))
            .collect();
        lines.extend(self.known.values().filter(seen).filter_map(|k| {
            let name = self.text.get(k.name.clone())?;
            Some((name, format!("{} {} {name}\n", k.stat, k.id)))
        }));
        // A ref read again is in both: the first (the one read) counts.
        lines.sort_by(|a, b| a.0.cmp(b.0));
        lines.dedup_by(|later, first| later.0 == first.0);
        let text: String = lines.into_iter().map(|(_, line)| line).collect();
        if let Some(dir) = self.path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = crate::git::fs::write_atomically(&self.path, text.as_bytes());
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
