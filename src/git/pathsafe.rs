//! Path safety (SPEC §5): the one check of whether a repository path may be
//! judged as a change or written to disk.
//!
//! It refuses what git's `verify_path` refuses, on the raw bytes of the path:
//! an empty component (a leading, trailing or doubled `/`), `.` and `..`,
//! `.git` in any case, with trailing dots or spaces, or in its NTFS spellings
//! (`git~1`, `.git::$INDEX_ALLOCATION`, `.git\hooks`) and its HFS+ spellings
//! (with ignorable code points such as U+200C inside), and `.gitmodules` as a
//! symlink. The checks are `gix-validate`'s with the HFS+ and NTFS
//! protections on, as git does with `core.protectHFS` and `core.protectNTFS`;
//! Windows-only rules (device names like `aux.c`, `:` or control characters
//! in names) stay off as in git on other systems, so ordinary files of a Linux
//! repository are never refused.
//!
//! Every tree entry name is one component: a name holding a `/` (which only a
//! hand-made tree object can have) is refused too.
//!
//! A path deeper than [`MAX_TREE_DEPTH`] components is refused as git refuses it
//! (`core.maxTreeDepth`): no walk of a tree goes deeper ([`too_deep`]).

use crate::error::{Context, Result};
use crate::git::{ObjectId, Repo};
use gix::bstr::BStr;
use gix::objs::FindExt;
use gix::validate::path::component::{Mode, Options};
use std::collections::HashSet;

/// The protections: HFS+ and NTFS spellings of `.git` (git's defaults where they matter).
const OPTIONS: Options = Options {
    protect_windows: false,
    protect_hfs: true,
    protect_ntfs: true,
};

/// The deepest path git-task reads or writes, in components: git's own default limit
/// (`core.maxTreeDepth`, 2048 in git 2.45 and later), fixed here so that no setting can lift it.
/// Every walk of a tree stops there with [`too_deep`] instead of recursing without bound.
pub const MAX_TREE_DEPTH: usize = 2048;

/// The error of a tree deeper than [`MAX_TREE_DEPTH`] (exit 128: the repository holds what git
/// itself refuses to work with).
pub fn too_deep(what: &str) -> crate::error::Error {
    crate::error::Error::repo_msg(format!(
        "{what} is deeper than {MAX_TREE_DEPTH} directories, git's own limit (core.maxTreeDepth): git-task refuses to walk it"
    ))
    .with_code("tree_too_deep")
    .hint("such a tree is made by hand (git fast-import, git mktree); nothing was written")
}

/// Returns whether one path component (a tree entry name) may be written; `link` when it is a symlink.
pub fn is_safe_component(name: &[u8], link: bool) -> bool {
    let mode = link.then_some(Mode::Symlink);
    if gix::validate::path::component(BStr::new(name), mode, OPTIONS).is_err() {
        return false;
    }
    // NTFS treats `\` as a separator: `.git\hooks` and `..\x` reach what `.git` and `..` do
    // (git's `is_ntfs_dotgit` stops at either separator).
    if name.contains(&b'\\') {
        return name
            .split(|b| *b == b'\\')
            .all(|piece| gix::validate::path::component(BStr::new(piece), None, OPTIONS).is_ok());
    }
    true
}

/// Returns whether a whole repository-relative path (components joined by `/`) is safe.
pub fn is_safe_path(path: &[u8]) -> bool {
    is_safe_entry(path, false)
}

/// Returns whether a whole path is safe, its last component being a symlink when `link` is set.
pub fn is_safe_entry(path: &[u8], link: bool) -> bool {
    if path.iter().filter(|b| **b == b'/').count() >= MAX_TREE_DEPTH {
        return false;
    }
    let mut parts = path.split(|b| *b == b'/').peekable();
    while let Some(part) = parts.next() {
        let last = parts.peek().is_none();
        if !is_safe_component(part, link && last) {
            return false;
        }
    }
    true
}

/// Returns a path for messages from its raw bytes: control characters and bytes that are not UTF-8
/// become visible `\xNN` forms (as `output::escape` does for strings), so a name cannot carry
/// terminal escape sequences.
pub fn display(path: &[u8]) -> String {
    let mut out = String::with_capacity(path.len());
    for chunk in path.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\t' => out.push_str("\\t"),
                '\n' => out.push_str("\\n"),
                c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// The error for an unsafe path found where files are about to be written (exit 1, kind `unsafe_path`).
pub fn refusal(path: &str, what: &str) -> crate::error::Error {
    crate::error::Error::negative(format!(
        "unsafe_path: refusing to write '{}' from {what}: a path component that git refuses (., .., .git, an empty one)",
        display(path.as_bytes())
    ))
    .hint("the tree was made by hand (git mktree, git commit-tree); nothing was written")
}

/// Refuses to write (or delete) `path` under `workdir` when the path is unsafe, or when one of its
/// parent directories on disk is a symlink or a file (a write would land wherever it points, as
/// git's `has_symlink_leading_path` guards against). Missing parents are fine.
pub fn check_write(workdir: &std::path::Path, path: &str, what: &str) -> Result<()> {
    if !is_safe_path(path.as_bytes()) {
        return Err(refusal(path, what));
    }
    let mut dir = workdir.to_path_buf();
    let parts: Vec<&str> = path.split('/').collect();
    for part in &parts[..parts.len() - 1] {
        dir.push(part);
        match std::fs::symlink_metadata(&dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(crate::error::Error::negative(format!(
                    "refusing to write '{}' from {what}: '{}' is not a directory (a symlink would lead elsewhere)",
                    display(path.as_bytes()),
                    display(dir.strip_prefix(workdir).unwrap_or(&dir).to_string_lossy().as_bytes())
                )))
            }
            Err(_) => break,
        }
    }
    Ok(())
}

/// Walks the whole of `tree` and returns the first unsafe path in it (escaped for display).
///
/// Subtrees already in `seen` are skipped (they were checked before); every tree
/// visited is added, so checking the trees of many commits costs each distinct
/// tree once.
pub fn unsafe_path_in_tree(
    repo: &Repo,
    tree: ObjectId,
    seen: &mut HashSet<ObjectId>,
) -> Result<Option<String>> {
    let mut stack: Vec<(ObjectId, Vec<u8>)> = Vec::new();
    if seen.insert(tree) {
        stack.push((tree, Vec::new()));
    }
    let mut buf = Vec::new();
    while let Some((id, prefix)) = stack.pop() {
        let data = repo
            .inner
            .objects
            .find_tree_iter(&id, &mut buf)
            .context(|| format!("could not read tree {id}"))?;
        for entry in data {
            let entry = entry.context(|| format!("could not decode tree {id}"))?;
            let mut path = prefix.clone();
            if !path.is_empty() {
                path.push(b'/');
            }
            path.extend_from_slice(entry.filename);
            let link = entry.mode.is_link();
            if !is_safe_component(entry.filename, link) {
                return Ok(Some(display(&path)));
            }
            if entry.mode.is_tree() {
                let child = entry.oid.to_owned();
                if seen.insert(child) {
                    stack.push((child, path));
                }
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_deeper_than_git_goes_is_unsafe() {
        let at_limit = "d/".repeat(MAX_TREE_DEPTH - 1) + "f";
        assert!(is_safe_path(at_limit.as_bytes()));
        let beyond = "d/".repeat(MAX_TREE_DEPTH) + "f";
        assert!(!is_safe_path(beyond.as_bytes()));
    }

    #[test]
    fn what_git_verify_path_refuses() {
        for bad in [
            &b""[..],
            b"/a",
            b"a/",
            b"a//b",
            b".",
            b"..",
            b"a/../b",
            b"a/./b",
            b"../evil",
            b".git",
            b".GIT/hooks/pre-commit",
            b"a/.Git/config",
            b".git.",
            b".git ",
            b".git. . ",
            b"git~1",
            b"GIT~1/hooks",
            b".git::$INDEX_ALLOCATION/hooks",
            b".git:x",
            b".g\xe2\x80\x8cit",
            b"\xef\xbb\xbf.git/hooks",
            b".git\\hooks",
            b"a\\..\\b",
        ] {
            assert!(!is_safe_path(bad), "{:?}", BStr::new(bad));
        }
        assert!(!is_safe_entry(b"x/.gitmodules", true));
        assert!(!is_safe_component(b"a/b", false));
    }

    #[test]
    fn ordinary_names_are_safe() {
        for good in [
            &b"src/lib.rs"[..],
            b".gitignore",
            b".github/workflows/ci.yml",
            b".gitmodules",
            b"a/.git-blame-ignore-revs",
            b"...",
            b"..a",
            b"aux.c",
            b"con/nul.txt",
            b"a:b",
            b"what?",
            b"\x1b[31mred",
            b"trailing. ",
            b"git~2",
            b"\xff\xfe",
            b"back\\slash",
        ] {
            assert!(is_safe_path(good), "{:?}", BStr::new(good));
        }
    }
}
