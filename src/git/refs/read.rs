//! Reading many refs cheaply, for `list` and `status`.
//!
//! `list` reads three refs for each of a thousand tasks. Through gix each
//! lookup also checks whether `packed-refs` changed and asks for the loose
//! file's size and position: seven syscalls where git needs three. A
//! [`RefReader`] reads a loose ref's file with one `open`, one `read` and a
//! `close`, and `packed-refs` once. Anything it is not sure of (a symbolic
//! ref, a per-worktree ref, an odd file, a ref in neither place) is asked of
//! gix instead, so the answers are gix's.

use crate::error::Result;
use crate::git::{read_small, ObjectId, Repo};
use std::cell::OnceCell;

/// Reads refs of one repository, `packed-refs` loaded at most once.
pub struct RefReader<'r> {
    repo: &'r Repo,
    packed: OnceCell<Option<gix::refs::file::packed::SharedBufferSnapshot>>,
}

impl<'r> RefReader<'r> {
    /// Reads refs of `repo`.
    pub fn new(repo: &'r Repo) -> RefReader<'r> {
        RefReader {
            repo,
            packed: OnceCell::new(),
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
        match read_small(&self.repo.common_dir().join(name)) {
            Ok(bytes) => {
                let hex = bytes.strip_suffix(b"\n")?;
                ObjectId::from_hex(hex).ok()
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
