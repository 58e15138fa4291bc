//! `--stat`: lines added and removed per file, printed as `git diff --stat` prints them.

use crate::error::Result;
use crate::git::diff::similarity::Pair;
use crate::git::diff::unified::{content, is_binary, quote};
use crate::git::Repo;
use gix::diff::blob::{diff_with_slider_heuristics, Algorithm, InternedInput};

/// What one file's change amounts to.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct FileStat {
    /// The path (the new path of a rename).
    pub path: String,
    /// For a rename: the old path.
    pub old_path: Option<String>,
    /// Lines added (0 for a binary file).
    pub insertions: u64,
    /// Lines removed (0 for a binary file).
    pub deletions: u64,
    /// Whether git would call the content binary (then sizes stand in for lines).
    pub binary: bool,
    /// For a binary file: its size in bytes before and after.
    pub bytes: Option<(u64, u64)>,
}

impl FileStat {
    /// What git counts: lines, or bytes for a binary file.
    fn counts(&self) -> (u64, u64) {
        match self.bytes {
            Some((before, after)) if self.binary => (after, before),
            _ => (self.insertions, self.deletions),
        }
    }

    /// The name git prints: quoted like git, a rename as `dir/{old => new}`.
    fn print_name(&self) -> String {
        match &self.old_path {
            Some(old) => rename_name(old, &self.path),
            None => quote(&self.path),
        }
    }
}

/// Returns the stat of each of `pairs`.
pub fn files(repo: &Repo, pairs: &[Pair]) -> Result<Vec<FileStat>> {
    let mut out = Vec::with_capacity(pairs.len());
    for p in pairs {
        let c = &p.change;
        let old_id = c.old.map(|(_, id)| id);
        let new_id = c.new.map(|(_, id)| id);
        let old = content(repo, c.old)?;
        let new = content(repo, c.new)?;
        let binary = is_binary(&old) || is_binary(&new);
        let (mut insertions, mut deletions, mut bytes) = (0, 0, None);
        if binary {
            bytes = Some(if old_id == new_id {
                (0, 0)
            } else {
                (old.len() as u64, new.len() as u64)
            });
        } else if old_id != new_id {
            let input = InternedInput::new(old.as_slice(), new.as_slice());
            let diff = diff_with_slider_heuristics(Algorithm::Histogram, &input);
            insertions = u64::from(diff.count_additions());
            deletions = u64::from(diff.count_removals());
        }
        out.push(FileStat {
            path: c.path.clone(),
            old_path: p.renamed_from.as_ref().map(|(from, _)| from.clone()),
            insertions,
            deletions,
            binary,
            bytes,
        });
    }
    Ok(out)
}

/// The summary line git prints under a stat (` 2 files changed, 3 insertions(+), 1 deletion(-)`).
pub fn summary(files: &[FileStat]) -> String {
    let n = files.len();
    if n == 0 {
        return " 0 files changed\n".to_owned();
    }
    let (adds, dels) = files
        .iter()
        .filter(|f| !f.binary)
        .fold((0, 0), |(a, d), f| (a + f.insertions, d + f.deletions));
    let mut s = format!(" {n} file{} changed", if n == 1 { "" } else { "s" });
    if adds > 0 || dels == 0 {
        s.push_str(&format!(
            ", {adds} insertion{}(+)",
            if adds == 1 { "" } else { "s" }
        ));
    }
    if dels > 0 || adds == 0 {
        s.push_str(&format!(
            ", {dels} deletion{}(-)",
            if dels == 1 { "" } else { "s" }
        ));
    }
    s.push('\n');
    s
}

fn decimal_width(n: u64) -> i64 {
    n.to_string().len() as i64
}

/// Formats `files` as `git diff --stat` does for a terminal `width` columns wide (git's
/// `show_stats`): one line per file with a scaled `+`/`-` graph, then the summary. Nothing for
/// no files.
pub fn format(files: &[FileStat], width: usize) -> String {
    if files.is_empty() {
        return String::new();
    }
    let names: Vec<String> = files.iter().map(FileStat::print_name).collect();
    let (mut max_change, mut max_len, mut number_width, mut bin_width) = (0u64, 0i64, 0i64, 0i64);
    for (f, name) in files.iter().zip(&names) {
        max_len = max_len.max(name.chars().count() as i64);
        let (added, deleted) = f.counts();
        if f.binary {
            bin_width = bin_width.max(14 + decimal_width(added) + decimal_width(deleted));
            number_width = 3;
            continue;
        }
        max_change = max_change.max(added + deleted);
    }
    let mut width = width as i64;
    number_width = number_width.max(decimal_width(max_change));
    if width < 16 + 6 + number_width {
        width = 16 + 6 + number_width;
    }
    let mut graph_width = if max_change as i64 + 4 > bin_width {
        max_change as i64
    } else {
        bin_width - 4
    };
    let mut name_width = max_len;
    if name_width + number_width + 6 + graph_width > width {
        if graph_width > width * 3 / 8 - number_width - 6 {
            graph_width = (width * 3 / 8 - number_width - 6).max(6);
        }
        if name_width > width - number_width - 6 - graph_width {
            name_width = width - number_width - 6 - graph_width;
        } else {
            graph_width = width - number_width - 6 - name_width;
        }
    }
    let nw = number_width as usize;
    let mut out = String::new();
    for (f, name) in files.iter().zip(&names) {
        let (prefix, shown) = scale_name(name, name_width);
        let padding = (name_width - if prefix.is_empty() { 0 } else { 3 })
            .max(0)
            .saturating_sub(shown.chars().count() as i64)
            .max(0) as usize;
        let (added, deleted) = f.counts();
        if f.binary {
            out.push_str(&format!(" {prefix}{shown}{:padding$} | {:>nw$}", "", "Bin"));
            if added == 0 && deleted == 0 {
                out.push('\n');
            } else {
                out.push_str(&format!(" {deleted} -> {added} bytes\n"));
            }
            continue;
        }
        let (mut add, mut del) = (added as i64, deleted as i64);
        if graph_width <= max_change as i64 {
            let mut total = scale_linear(add + del, graph_width, max_change as i64);
            if total < 2 && add > 0 && del > 0 {
                total = 2;
            }
            if add < del {
                add = scale_linear(add, graph_width, max_change as i64);
                del = total - add;
            } else {
                del = scale_linear(del, graph_width, max_change as i64);
                add = total - del;
            }
        }
        let total = added + deleted;
        out.push_str(&format!(
            " {prefix}{shown}{:padding$} | {total:>nw$}{}{}{}\n",
            "",
            if total > 0 { " " } else { "" },
            "+".repeat(add.max(0) as usize),
            "-".repeat(del.max(0) as usize),
        ));
    }
    out.push_str(&summary(files));
    out
}

fn scale_linear(it: i64, width: i64, max_change: i64) -> i64 {
    if it == 0 {
        0
    } else {
        1 + it * (width - 1) / max_change
    }
}

/// git's name scaling: a name wider than `name_width` loses its front to `...`, cut at a `/`
/// when one is left.
fn scale_name(name: &str, name_width: i64) -> (&'static str, &str) {
    let chars = name.chars().count() as i64;
    if name_width >= chars {
        return ("", name);
    }
    let len = (name_width - 3).max(0);
    let skip = (chars - len) as usize;
    let start = name.char_indices().nth(skip).map_or(name.len(), |(i, _)| i);
    let rest = &name[start..];
    match rest.find('/') {
        Some(slash) => ("...", &rest[slash..]),
        None => ("...", rest),
    }
}

/// git's `pprint_rename`: the common directory prefix and suffix outside braces,
/// `src/{a.rs => b.rs}`; both names quoted in full when either needs quoting.
pub fn rename_name(a: &str, b: &str) -> String {
    if quote(a) != a || quote(b) != b {
        return format!("{} => {}", quote(a), quote(b));
    }
    let (ab, bb) = (a.as_bytes(), b.as_bytes());
    let mut pfx = 0;
    let mut i = 0;
    while i < ab.len() && i < bb.len() && ab[i] == bb[i] {
        if ab[i] == b'/' {
            pfx = i + 1;
        }
        i += 1;
    }
    let adjust = usize::from(pfx > 0);
    let mut sfx = 0;
    let (mut oa, mut ob) = (ab.len() as i64, bb.len() as i64);
    // Walk back from the ends (index len = the terminating NUL, equal in both).
    let at = |s: &[u8], i: i64| -> u8 { s.get(i as usize).copied().unwrap_or(0) };
    while (pfx as i64 - adjust as i64) <= oa
        && (pfx as i64 - adjust as i64) <= ob
        && oa >= 0
        && ob >= 0
        && at(ab, oa) == at(bb, ob)
    {
        if at(ab, oa) == b'/' {
            sfx = ab.len() - oa as usize;
        }
        oa -= 1;
        ob -= 1;
    }
    let a_mid = ab.len().saturating_sub(pfx + sfx);
    let b_mid = bb.len().saturating_sub(pfx + sfx);
    let mut s = String::new();
    if pfx + sfx > 0 {
        s.push_str(&a[..pfx]);
        s.push('{');
    }
    s.push_str(&a[pfx..pfx + a_mid]);
    s.push_str(" => ");
    s.push_str(&b[pfx..pfx + b_mid]);
    if pfx + sfx > 0 {
        s.push('}');
        s.push_str(&a[a.len() - sfx..]);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renames_print_like_git() {
        assert_eq!(rename_name("src/a.rs", "src/b.rs"), "src/{a.rs => b.rs}");
        assert_eq!(rename_name("a.rs", "b.rs"), "a.rs => b.rs");
        assert_eq!(rename_name("a/x/f", "b/x/f"), "{a => b}/x/f");
        assert_eq!(rename_name("d/f", "d/e/f"), "d/{ => e}/f");
        assert_eq!(rename_name("d/e/f", "d/f"), "d/{e => }/f");
    }

    #[test]
    fn the_summary_reads_like_git() {
        let f = |i, d| FileStat {
            path: "x".into(),
            old_path: None,
            insertions: i,
            deletions: d,
            binary: false,
            bytes: None,
        };
        assert_eq!(summary(&[f(1, 0)]), " 1 file changed, 1 insertion(+)\n");
        assert_eq!(
            summary(&[f(2, 1), f(0, 0)]),
            " 2 files changed, 2 insertions(+), 1 deletion(-)\n"
        );
        assert_eq!(
            summary(&[f(0, 0)]),
            " 1 file changed, 0 insertions(+), 0 deletions(-)\n"
        );
    }
}
