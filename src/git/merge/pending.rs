//! A merge git left unfinished in a worktree (`git merge` stopped on conflicts): its
//! `MERGE_HEAD`, its prepared message, the index entries still unmerged, and whether a file
//! still holds conflict markers. Read only; `checkout::inplace::end_operations` ends it.

use crate::error::{Context, Result};
use crate::git::{ObjectId, Repo};
use std::path::Path;

/// The commits an unfinished merge in the worktree whose git dir is `git_dir` merges in
/// (`MERGE_HEAD`, one per line); `None` when no merge is in progress. A line that is no
/// object id is left out (the caller checks each is a commit before it becomes a parent).
pub fn merge_heads(git_dir: &Path) -> Option<Vec<ObjectId>> {
    let text = std::fs::read_to_string(git_dir.join("MERGE_HEAD")).ok()?;
    Some(
        text.lines()
            .filter_map(|l| l.trim().parse::<ObjectId>().ok())
            .collect(),
    )
}

/// The message git prepared for the merge (`MERGE_MSG`), without its comment lines; `None`
/// when there is none or it is empty.
pub fn merge_message(git_dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(git_dir.join("MERGE_MSG")).ok()?;
    let kept: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    let message = kept.join("\n").trim().to_owned();
    (!message.is_empty()).then_some(message)
}

/// The paths the index of the worktree `repo` was opened in holds unmerged (stages 1–3), sorted.
pub fn unmerged_paths(repo: &Repo) -> Result<Vec<String>> {
    let index = repo
        .inner
        .index_or_empty()
        .context(|| "could not read the index".into())?;
    let mut paths: Vec<String> = index
        .entries()
        .iter()
        .filter(|e| e.stage_raw() != 0)
        .map(|e| e.path(&index).to_string())
        .collect();
    paths.dedup();
    Ok(paths)
}

/// Whether `content` still holds git's conflict markers: a line starting `<<<<<<< ` and,
/// after it, one starting `>>>>>>> `.
pub fn has_markers(content: &[u8]) -> bool {
    let mut open = false;
    for line in content.split(|b| *b == b'\n') {
        if line.starts_with(b"<<<<<<< ") || line == b"<<<<<<<" {
            open = true;
        } else if open && (line.starts_with(b">>>>>>> ") || line == b">>>>>>>") {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::has_markers;

    #[test]
    fn markers_are_told_from_text_that_mentions_them() {
        assert!(has_markers(
            b"a\n<<<<<<< ours\nx\n=======\ny\n>>>>>>> theirs\nb\n"
        ));
        assert!(!has_markers(b"a\n>>>>>>> theirs\n<<<<<<< ours\n"));
        assert!(!has_markers(b"see <<<<<<< and >>>>>>> in docs\n"));
    }
}
