//! Rename detection as `git diff -M` does it: exact renames first (same blob), then pairs scored
//! by git's own similarity estimate (diffcore-delta's span hashes), the best pairs first.
//!
//! The score is git's, so `similarity index N%` and which pairs count as renames agree with
//! `git diff -M<n>` for ordinary changes (git's basename pre-pass is left out; past its default
//! rename limit only exact renames are paired, as git does).

use crate::error::{Context, Result};
use crate::git::diff::{ChangeKind, ChangedPath};
use crate::git::{ObjectId, Repo};
use gix::object::tree::EntryKind;
use std::collections::HashMap;

/// git's `MAX_SCORE`: a similarity of 100%.
pub const MAX_SCORE: u64 = 60000;

/// git's default minimum score (`-M` alone): 50%.
pub const DEFAULT_SCORE: u64 = MAX_SCORE / 2;

/// git's default rename limit: inexact detection only while sources × destinations stays
/// within its square.
const RENAME_LIMIT: usize = 1000;

/// Candidates kept per destination (git's `NUM_CANDIDATE_PER_DST`).
const CANDIDATES_PER_DST: usize = 4;

/// Parses a rename threshold as git does (`-M<n>`): `50%`; digits alone are a fraction (`5` is
/// 50%, `05` is 5%, `0.5` is 50%); returns the score out of [`MAX_SCORE`].
pub fn parse_score(text: &str) -> std::result::Result<u64, String> {
    let (mut num, mut scale, mut dot) = (0u64, 1u64, false);
    let mut rest = text;
    while let Some(ch) = rest.chars().next() {
        if !dot && ch == '.' {
            scale = 1;
            dot = true;
        } else if ch == '%' {
            scale = if dot { scale * 100 } else { 100 };
            rest = &rest[1..];
            break;
        } else if ch.is_ascii_digit() {
            if scale < 100_000 {
                scale *= 10;
                num = num * 10 + u64::from(ch as u8 - b'0');
            }
        } else {
            break;
        }
        rest = &rest[ch.len_utf8()..];
    }
    if !rest.is_empty() {
        return Err(format!(
            "'{text}' is not a similarity (write it as git does: 50%, 5 or 0.5)"
        ));
    }
    Ok(if num >= scale {
        MAX_SCORE
    } else {
        MAX_SCORE * num / scale
    })
}

/// One entry of a diff with renames paired.
#[derive(Clone, Debug)]
pub struct Pair {
    /// The change; for a rename its `path` is the new path, `old` the source's entry and `new`
    /// the destination's.
    pub change: ChangedPath,
    /// For a rename: the old path and git's score (out of [`MAX_SCORE`]).
    pub renamed_from: Option<(String, u64)>,
}

impl Pair {
    /// git's `similarity index` of a rename, in percent.
    pub fn similarity(&self) -> Option<u64> {
        self.renamed_from
            .as_ref()
            .map(|(_, score)| score * 100 / MAX_SCORE)
    }
}

/// Pairs the deletions and additions of `changes` (sorted by path) into renames scoring at least
/// `min_score`; returns every change once, a rename in place of its destination.
pub fn pair(repo: &Repo, changes: Vec<ChangedPath>, min_score: u64) -> Result<Vec<Pair>> {
    let is_file = |e: &Option<(EntryKind, ObjectId)>| {
        e.is_some_and(|(k, id)| k != EntryKind::Commit && k != EntryKind::Tree && !is_empty(id))
    };
    let srcs: Vec<usize> = (0..changes.len())
        .filter(|&i| changes[i].kind == ChangeKind::Deleted && is_file(&changes[i].old))
        .collect();
    let dsts: Vec<usize> = (0..changes.len())
        .filter(|&i| changes[i].kind == ChangeKind::Added && is_file(&changes[i].new))
        .collect();
    // dst index -> (src index, score)
    let mut paired: HashMap<usize, (usize, u64)> = HashMap::new();
    let mut used = vec![false; changes.len()];
    if srcs.is_empty() || dsts.is_empty() {
        return Ok(unpaired(changes));
    }
    // Exact renames: the same blob, same kind of entry; a source with the same base name first.
    let mut by_blob: HashMap<ObjectId, Vec<usize>> = HashMap::new();
    for &s in &srcs {
        let (_, sid) = changes[s].old.expect("a deletion has an old entry");
        by_blob.entry(sid).or_default().push(s);
    }
    for &d in &dsts {
        let (dk, did) = changes[d].new.expect("an addition has a new entry");
        let Some(same_blob) = by_blob.get(&did) else {
            continue;
        };
        let best = same_blob
            .iter()
            .copied()
            .filter(|&s| !used[s])
            .filter(|&s| {
                let (sk, sid) = changes[s].old.expect("a deletion has an old entry");
                sid == did && (sk == EntryKind::Link) == (dk == EntryKind::Link)
            })
            .max_by_key(|&s| {
                (
                    same_basename(&changes[s].path, &changes[d].path),
                    usize::MAX - s,
                )
            });
        if let Some(s) = best {
            used[s] = true;
            used[d] = true;
            paired.insert(d, (s, MAX_SCORE));
        }
    }
    // Inexact renames between regular files, scored as git scores them.
    let regular = |e: Option<(EntryKind, ObjectId)>| {
        matches!(e, Some((EntryKind::Blob | EntryKind::BlobExecutable, _)))
    };
    let left_srcs: Vec<usize> = srcs
        .iter()
        .copied()
        .filter(|&s| !used[s] && regular(changes[s].old))
        .collect();
    let left_dsts: Vec<usize> = dsts
        .iter()
        .copied()
        .filter(|&d| !used[d] && regular(changes[d].new))
        .collect();
    // git's `diff.renameLimit` (1000): past that many candidate pairs, exact renames only.
    let within_limit =
        left_srcs.len().saturating_mul(left_dsts.len()) <= RENAME_LIMIT * RENAME_LIMIT;
    if !left_srcs.is_empty() && !left_dsts.is_empty() && within_limit {
        let mut spans: HashMap<usize, (usize, Vec<(u32, u64)>)> = HashMap::new();
        let mut spans_of = |i: usize, id: ObjectId| -> Result<(usize, Vec<(u32, u64)>)> {
            if let Some(s) = spans.get(&i) {
                return Ok(s.clone());
            }
            let data = repo
                .inner
                .find_blob(id)
                .context(|| format!("could not read blob {id}"))?
                .data
                .clone();
            let s = (data.len(), span_hashes(&data));
            spans.insert(i, s.clone());
            Ok(s)
        };
        let mut scores: Vec<(u64, bool, usize, usize)> = Vec::new();
        for &d in &left_dsts {
            let (_, did) = changes[d].new.expect("an addition has a new entry");
            let dst = spans_of(d, did)?;
            let mut best: Vec<(u64, bool, usize, usize)> = Vec::new();
            for &s in &left_srcs {
                let (_, sid) = changes[s].old.expect("a deletion has an old entry");
                let (max, min) = {
                    let ssize = blob_size(repo, sid)?;
                    (ssize.max(dst.0 as u64), ssize.min(dst.0 as u64))
                };
                if max * (MAX_SCORE - min_score) < (max - min) * MAX_SCORE {
                    continue;
                }
                let src = spans_of(s, sid)?;
                let score = (copied(&src.1, &dst.1) * MAX_SCORE)
                    .checked_div(max)
                    .unwrap_or(0);
                if score < min_score {
                    continue;
                }
                best.push((
                    score,
                    same_basename(&changes[s].path, &changes[d].path),
                    d,
                    s,
                ));
            }
            best.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
            best.truncate(CANDIDATES_PER_DST);
            scores.extend(best);
        }
        scores.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
        for (score, _, d, s) in scores {
            if used[d] || used[s] {
                continue;
            }
            used[d] = true;
            used[s] = true;
            paired.insert(d, (s, score));
        }
    }
    let sources: Vec<bool> = {
        let mut v = vec![false; changes.len()];
        for (s, _) in paired.values() {
            v[*s] = true;
        }
        v
    };
    let mut out = Vec::with_capacity(changes.len());
    for (i, c) in changes.iter().enumerate() {
        if sources[i] {
            continue;
        }
        match paired.get(&i) {
            Some(&(s, score)) => {
                let src = &changes[s];
                out.push(Pair {
                    change: ChangedPath {
                        path: c.path.clone(),
                        kind: ChangeKind::Modified,
                        old: src.old,
                        new: c.new,
                        unsafe_path: c.unsafe_path || src.unsafe_path,
                    },
                    renamed_from: Some((src.path.clone(), score)),
                });
            }
            None => out.push(Pair {
                change: c.clone(),
                renamed_from: None,
            }),
        }
    }
    Ok(out)
}

/// Every change as it is, nothing paired.
pub fn unpaired(changes: Vec<ChangedPath>) -> Vec<Pair> {
    changes
        .into_iter()
        .map(|change| Pair {
            change,
            renamed_from: None,
        })
        .collect()
}

fn is_empty(id: ObjectId) -> bool {
    id == ObjectId::empty_blob(id.kind())
}

fn blob_size(repo: &Repo, id: ObjectId) -> Result<u64> {
    Ok(repo
        .inner
        .find_header(id)
        .context(|| format!("could not read blob {id}"))?
        .size())
}

fn same_basename(a: &str, b: &str) -> bool {
    a.rsplit('/').next() == b.rsplit('/').next()
}

/// git's `hash_chars` (diffcore-delta.c): the content cut into spans of up to 64 bytes or
/// through a newline, each hashed; returns (hash, bytes) sorted by hash, equal hashes summed.
fn span_hashes(data: &[u8]) -> Vec<(u32, u64)> {
    const HASHBASE: u32 = 107_927;
    // git's binary test (as `unified::is_binary`): a NUL byte in the first 8000 bytes.
    let text = !data[..data.len().min(8000)].contains(&0);
    let mut map: HashMap<u32, u64> = HashMap::new();
    let (mut accum1, mut accum2, mut n) = (0u32, 0u32, 0u64);
    let mut i = 0;
    while i < data.len() {
        let c = u32::from(data[i]);
        i += 1;
        if text && c == u32::from(b'\r') && data.get(i) == Some(&b'\n') {
            continue;
        }
        let old1 = accum1;
        accum1 = (accum1 << 7) ^ (accum2 >> 25);
        accum2 = (accum2 << 7) ^ (old1 >> 25);
        accum1 = accum1.wrapping_add(c);
        n += 1;
        if n < 64 && c != u32::from(b'\n') {
            continue;
        }
        let hash = accum1.wrapping_add(accum2.wrapping_mul(0x61)) % HASHBASE;
        *map.entry(hash).or_default() += n;
        n = 0;
        accum1 = 0;
        accum2 = 0;
    }
    if n > 0 {
        let hash = accum1.wrapping_add(accum2.wrapping_mul(0x61)) % HASHBASE;
        *map.entry(hash).or_default() += n;
    }
    let mut out: Vec<(u32, u64)> = map.into_iter().collect();
    out.sort_unstable();
    out
}

/// git's `src_copied`: the bytes of `dst` found in `src`, span by span.
fn copied(src: &[(u32, u64)], dst: &[(u32, u64)]) -> u64 {
    let (mut i, mut j, mut total) = (0, 0, 0);
    while i < src.len() && j < dst.len() {
        match src[i].0.cmp(&dst[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                total += src[i].1.min(dst[j].1);
                i += 1;
                j += 1;
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_parse_as_git_parses_them() {
        assert_eq!(parse_score("50%"), Ok(30000));
        assert_eq!(parse_score("5"), Ok(30000));
        assert_eq!(parse_score("05"), Ok(3000));
        assert_eq!(parse_score("0.5"), Ok(30000));
        assert_eq!(parse_score("100%"), Ok(MAX_SCORE));
        assert_eq!(parse_score("9"), Ok(54000));
        assert!(parse_score("x").is_err());
    }

    #[test]
    fn identical_spans_are_copied() {
        let a = span_hashes(b"one\ntwo\nthree\n");
        assert_eq!(copied(&a, &a), 14);
        let b = span_hashes(b"one\ntwo\nfour\n");
        assert_eq!(copied(&a, &b), 8);
    }
}
