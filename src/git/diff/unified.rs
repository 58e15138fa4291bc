//! Unified diffs in git's format, from two trees.
//!
//! The output is what `git diff` prints with default settings and no rename
//! detection: `diff --git a/P b/P`, mode lines, an `index` line, `---`/`+++`
//! with `/dev/null` for new and deleted files, hunks with 3 lines of context
//! (imara-diff's histogram diff with git's slider heuristics), `\ No newline
//! at end of file`, and `Binary files … differ` for binary content. Binary
//! changes carry full object ids on their `index` line (as `--full-index`
//! does), so `git apply` can apply them, forward or in reverse, from the
//! objects in the repository.

use crate::error::{Context, Result};
use crate::git::diff::similarity::{self, Pair};
use crate::git::diff::{tree_to_tree, ChangeKind, ChangedPath};
use crate::git::{ObjectId, Repo};
use gix::diff::blob::unified_diff::{ConsumeHunk, ContextSize, DiffLineKind, HunkHeader};
use gix::diff::blob::{diff_with_slider_heuristics, Algorithm, InternedInput, UnifiedDiff};
use gix::object::tree::EntryKind;
use std::fmt::Write as _;

/// Returns the unified diff from tree `old` to tree `new`, limited to `paths` when not empty
/// (a path names a file or everything below a directory), leaving out `skip` paths.
pub fn trees(
    repo: &Repo,
    old: ObjectId,
    new: ObjectId,
    paths: &[String],
    skip: &[&str],
) -> Result<Vec<u8>> {
    patch(repo, &pairs(repo, old, new, paths, skip, None)?)
}

/// Returns the changes from tree `old` to tree `new` that [`trees`] shows, with renames paired
/// as `git diff -M` pairs them when `renames` holds a minimum score (see [`similarity`]).
pub fn pairs(
    repo: &Repo,
    old: ObjectId,
    new: ObjectId,
    paths: &[String],
    skip: &[&str],
    renames: Option<u64>,
) -> Result<Vec<Pair>> {
    let changes: Vec<ChangedPath> = tree_to_tree(repo, old, new)?
        .into_iter()
        .filter(|c| selected(&c.path, paths) && !skip.contains(&c.path.as_str()))
        .collect();
    match renames {
        Some(score) => similarity::pair(repo, changes, score),
        None => Ok(similarity::unpaired(changes)),
    }
}

/// Returns the unified diff of `pairs`.
pub fn patch(repo: &Repo, pairs: &[Pair]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for p in pairs {
        let c = &p.change;
        if let Some((from, _)) = &p.renamed_from {
            renamed(repo, c, from, p.similarity().unwrap_or(0), &mut out)?;
            continue;
        }
        match (c.old, c.new) {
            // Like git: a change of type (file, link, submodule) is a deletion plus an addition.
            (Some(o), Some(n)) if kind_class(o.0) != kind_class(n.0) => {
                let gone = ChangedPath {
                    path: c.path.clone(),
                    kind: ChangeKind::Deleted,
                    old: Some(o),
                    new: None,
                    unsafe_path: c.unsafe_path,
                };
                let made = ChangedPath {
                    path: c.path.clone(),
                    kind: ChangeKind::Added,
                    old: None,
                    new: Some(n),
                    unsafe_path: c.unsafe_path,
                };
                file(repo, &gone, &mut out)?;
                file(repo, &made, &mut out)?;
            }
            _ => file(repo, c, &mut out)?,
        }
    }
    Ok(out)
}

fn kind_class(kind: EntryKind) -> u8 {
    match kind {
        EntryKind::Blob | EntryKind::BlobExecutable => 0,
        EntryKind::Link => 1,
        EntryKind::Commit => 2,
        EntryKind::Tree => 3,
    }
}

/// Returns whether `path` is `paths` (empty: everything) or below one of them.
pub fn selected(path: &str, paths: &[String]) -> bool {
    paths.is_empty()
        || paths.iter().any(|p| {
            let p = p.trim_end_matches('/');
            p.is_empty()
                || p == "."
                || path == p
                || path
                    .strip_prefix(p)
                    .is_some_and(|rest| rest.starts_with('/'))
        })
}

fn mode(kind: EntryKind) -> &'static str {
    match kind {
        EntryKind::Blob => "100644",
        EntryKind::BlobExecutable => "100755",
        EntryKind::Link => "120000",
        EntryKind::Commit => "160000",
        EntryKind::Tree => "040000",
    }
}

/// Writes the diff of one changed path.
pub fn file(repo: &Repo, c: &ChangedPath, out: &mut Vec<u8>) -> Result<()> {
    write_file(repo, c, None, out)
}

/// Writes the diff of a rename from `from` to `c.path`, as `git diff -M` does.
fn renamed(
    repo: &Repo,
    c: &ChangedPath,
    from: &str,
    similarity: u64,
    out: &mut Vec<u8>,
) -> Result<()> {
    write_file(repo, c, Some((from, similarity)), out)
}

fn write_file(
    repo: &Repo,
    c: &ChangedPath,
    renamed: Option<(&str, u64)>,
    out: &mut Vec<u8>,
) -> Result<()> {
    let old_path = renamed.map_or(c.path.as_str(), |(from, _)| from);
    let a = quote(&format!("a/{old_path}"));
    let b = quote(&format!("b/{}", c.path));
    let mut head = format!("diff --git {a} {b}\n");
    let old_data = content(repo, c.old)?;
    let new_data = content(repo, c.new)?;
    match (c.old, c.new) {
        (None, Some((k, _))) => {
            writeln!(head, "new file mode {}", mode(k)).expect("writing to a String")
        }
        (Some((k, _)), None) => {
            writeln!(head, "deleted file mode {}", mode(k)).expect("writing to a String")
        }
        (Some((ok, _)), Some((nk, _))) if ok != nk => {
            writeln!(head, "old mode {}\nnew mode {}", mode(ok), mode(nk))
                .expect("writing to a String")
        }
        _ => {}
    }
    if let Some((from, similarity)) = renamed {
        write!(
            head,
            "similarity index {similarity}%\nrename from {}\nrename to {}\n",
            quote(from),
            quote(&c.path)
        )
        .expect("writing to a String");
    }
    let old_id = c.old.map(|(_, id)| id);
    let new_id = c.new.map(|(_, id)| id);
    if old_id == new_id {
        // A mode change only.
        out.extend_from_slice(head.as_bytes());
        return Ok(());
    }
    let binary = is_binary(&old_data) || is_binary(&new_data);
    let abbrev = |id: Option<ObjectId>| -> String {
        let hex = id.map(|i| i.to_string()).unwrap_or_else(|| "0".repeat(40));
        if binary {
            hex
        } else {
            hex[..7].to_owned()
        }
    };
    write!(head, "index {}..{}", abbrev(old_id), abbrev(new_id)).expect("writing to a String");
    match (c.old, c.new) {
        (Some((ok, _)), Some((nk, _))) if ok == nk => {
            writeln!(head, " {}", mode(ok)).expect("writing to a String")
        }
        _ => head.push('\n'),
    }
    let from = if c.old.is_some() {
        a.clone()
    } else {
        "/dev/null".to_owned()
    };
    let to = if c.new.is_some() {
        b.clone()
    } else {
        "/dev/null".to_owned()
    };
    out.extend_from_slice(head.as_bytes());
    if binary {
        out.extend_from_slice(format!("Binary files {from} and {to} differ\n").as_bytes());
        return Ok(());
    }
    if old_data.is_empty() && new_data.is_empty() {
        return Ok(());
    }
    out.extend_from_slice(format!("--- {from}\n+++ {to}\n").as_bytes());
    hunks(&old_data, &new_data, out);
    Ok(())
}

/// Returns the content git diffs for an entry (a submodule as `Subproject commit <id>`).
pub(crate) fn content(repo: &Repo, entry: Option<(EntryKind, ObjectId)>) -> Result<Vec<u8>> {
    match entry {
        None => Ok(Vec::new()),
        Some((EntryKind::Commit, id)) => Ok(format!("Subproject commit {id}\n").into_bytes()),
        Some((_, id)) => Ok(repo
            .inner
            .find_blob(id)
            .context(|| format!("could not read blob {id}"))?
            .data
            .clone()),
    }
}

/// Returns whether git would call `data` binary: a NUL byte in its first 8000 bytes.
pub fn is_binary(data: &[u8]) -> bool {
    data[..data.len().min(8000)].contains(&0)
}

/// Appends the hunks of a line diff from `old` to `new`.
pub fn hunks(old: &[u8], new: &[u8], out: &mut Vec<u8>) {
    let input = InternedInput::new(old, new);
    let diff = diff_with_slider_heuristics(Algorithm::Histogram, &input);
    let old_lines: Vec<&[u8]> = old.split_inclusive(|b| *b == b'\n').collect();
    let sink = Hunks {
        out: std::mem::take(out),
        old_lines,
    };
    match UnifiedDiff::new(&diff, &input, sink, ContextSize::symmetrical(3)).consume() {
        Ok(bytes) => *out = bytes,
        Err(_) => unreachable!("the hunk sink never fails"),
    }
}

struct Hunks<'a> {
    out: Vec<u8>,
    old_lines: Vec<&'a [u8]>,
}

impl Hunks<'_> {
    /// Returns git's default function context for a hunk starting at (1-based) `start`: the
    /// closest earlier line that starts with a letter, `_` or `$`, without trailing
    /// whitespace, cut at 80 bytes.
    fn function_context(&self, start: u32) -> Option<String> {
        let before = (start as usize).saturating_sub(1).min(self.old_lines.len());
        self.old_lines[..before].iter().rev().find_map(|line| {
            let first = *line.first()?;
            if !(first.is_ascii_alphabetic() || first == b'_' || first == b'$') {
                return None;
            }
            let mut end = line.len();
            while end > 0 && line[end - 1].is_ascii_whitespace() {
                end -= 1;
            }
            Some(String::from_utf8_lossy(&line[..end.min(80)]).into_owned())
        })
    }
}

impl ConsumeHunk for Hunks<'_> {
    type Out = Vec<u8>;

    fn consume_hunk(
        &mut self,
        h: HunkHeader,
        lines: &[(DiffLineKind, &[u8])],
    ) -> std::io::Result<()> {
        // git prints an empty range as starting at the line before it, and omits a length of 1.
        let range = |start: u32, len: u32| match len {
            0 => format!("{},0", start.saturating_sub(1)),
            1 => format!("{start}"),
            n => format!("{start},{n}"),
        };
        let context = self
            .function_context(h.before_hunk_start)
            .map(|f| format!(" {f}"))
            .unwrap_or_default();
        self.out.extend_from_slice(
            format!(
                "@@ -{} +{} @@{context}\n",
                range(h.before_hunk_start, h.before_hunk_len),
                range(h.after_hunk_start, h.after_hunk_len)
            )
            .as_bytes(),
        );
        for (kind, line) in lines {
            self.out.push(kind.to_prefix() as u8);
            self.out.extend_from_slice(line);
            if !line.ends_with(b"\n") {
                self.out
                    .extend_from_slice(b"\n\\ No newline at end of file\n");
            }
        }
        Ok(())
    }

    fn finish(self) -> Vec<u8> {
        self.out
    }
}

/// Quotes a path the way git does when it holds special characters (`"a/t\tb"`).
pub fn quote(path: &str) -> String {
    let needs = path
        .bytes()
        .any(|b| b < 0x20 || b == b'"' || b == b'\\' || b >= 0x80 || b == 0x7f);
    if !needs {
        return path.to_owned();
    }
    let mut s = String::from("\"");
    for b in path.bytes() {
        match b {
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            b'\t' => s.push_str("\\t"),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            0x07 => s.push_str("\\a"),
            0x08 => s.push_str("\\b"),
            0x0b => s.push_str("\\v"),
            0x0c => s.push_str("\\f"),
            b if !(0x20..0x7f).contains(&b) => write!(s, "\\{b:03o}").expect("writing to a String"),
            b => s.push(b as char),
        }
    }
    s.push('"');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff(old: &str, new: &str) -> String {
        let mut out = Vec::new();
        hunks(old.as_bytes(), new.as_bytes(), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn hunk_headers_match_git() {
        assert_eq!(diff("", "a\nb\n"), "@@ -0,0 +1,2 @@\n+a\n+b\n");
        assert_eq!(diff("a\n", ""), "@@ -1 +0,0 @@\n-a\n");
        assert_eq!(
            diff("a\nb\nc\n", "a\nB\nc\n"),
            "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
        );
        assert_eq!(
            diff("a", "b"),
            "@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n"
        );
    }

    #[test]
    fn hunks_carry_git_function_context() {
        let old: String = (1..12)
            .map(|i| {
                if i == 2 {
                    "fn main() {\n".to_owned()
                } else {
                    format!("    {i}\n")
                }
            })
            .collect();
        let new = old.replace("    9\n", "    nine\n");
        assert!(
            diff(&old, &new).starts_with("@@ -6,6 +6,6 @@ fn main() {\n"),
            "{}",
            diff(&old, &new)
        );
    }

    #[test]
    fn paths_are_quoted_like_git() {
        assert_eq!(quote("a/b c"), "a/b c");
        assert_eq!(quote("a/t\tb"), "\"a/t\\tb\"");
        assert_eq!(quote("a/é"), "\"a/\\303\\251\"");
    }

    #[test]
    fn selection_covers_directories() {
        assert!(selected("src/a.rs", &["src".into()]));
        assert!(selected("src/a.rs", &["src/".into()]));
        assert!(!selected("srcx/a.rs", &["src".into()]));
        assert!(selected("x", &[]));
    }
}
