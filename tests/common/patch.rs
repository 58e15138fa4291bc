//! Helpers for the patch-mode, checkpoint and undo tests: a seeded RNG and a full picture of a worktree.

use super::TestRepo;
use std::collections::BTreeMap;
use std::path::Path;

/// A small deterministic RNG (xorshift64*), so each seed builds the same scenario.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    pub fn text(&mut self, lines: usize) -> String {
        (0..lines)
            .map(|i| format!("line {i} {:x}\n", self.next() % 0xffff))
            .collect()
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        (!items.is_empty()).then(|| &items[self.below(items.len())])
    }
}

/// One entry on disk: bytes (or link target) and permission bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    File(Vec<u8>, u32),
    Link(String),
}

/// Everything the round trip must restore.
#[derive(Debug, PartialEq, Eq)]
pub struct Picture {
    pub head: String,
    pub branch: String,
    pub ls_files: String,
    pub diff: String,
    pub diff_cached: String,
    pub status: String,
    pub files: BTreeMap<String, Entry>,
}

/// Reads every file under `dir` (not `.git`), with its mode.
pub fn files(dir: &Path) -> BTreeMap<String, Entry> {
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Entry>) {
    use std::os::unix::fs::PermissionsExt;
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if rel == ".git" {
            continue;
        }
        let meta = std::fs::symlink_metadata(&path).unwrap();
        if meta.file_type().is_symlink() {
            out.insert(
                rel,
                Entry::Link(
                    std::fs::read_link(&path)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned(),
                ),
            );
        } else if meta.is_dir() {
            walk(root, &path, out);
        } else {
            out.insert(
                rel,
                Entry::File(
                    std::fs::read(&path).unwrap(),
                    meta.permissions().mode() & 0o777,
                ),
            );
        }
    }
}

/// Takes the picture of a worktree through git itself.
pub fn picture(repo: &TestRepo, dir: &Path) -> Picture {
    Picture {
        head: repo.git(dir, &["rev-parse", "HEAD"]),
        branch: repo
            .git_run(dir, &["symbolic-ref", "-q", "HEAD"])
            .stdout
            .trim()
            .to_owned(),
        ls_files: repo.git(dir, &["ls-files", "-s"]),
        diff: repo.git(dir, &["diff", "--binary"]),
        diff_cached: repo.git(dir, &["diff", "--cached", "--binary"]),
        status: repo.porcelain(dir),
        files: files(dir),
    }
}

/// Writes bytes to `rel` under `dir`, creating directories.
pub fn write_bytes(dir: &Path, rel: &str, bytes: &[u8]) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(&path);
    std::fs::write(path, bytes).unwrap();
}

/// Sets or clears the executable bits of `rel`.
pub fn chmod_x(dir: &Path, rel: &str, executable: bool) {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(rel);
    let mode = if executable { 0o755 } else { 0o644 };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Lists the tracked, existing regular files of the worktree (candidates for edits).
pub fn tracked(repo: &TestRepo, dir: &Path) -> Vec<String> {
    repo.git(dir, &["ls-files"])
        .lines()
        .filter(|p| dir.join(p).is_file())
        .map(str::to_owned)
        .collect()
}
