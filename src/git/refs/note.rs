//! Notes under a notes ref, prepared as a commit so that the ref move can join
//! a larger transaction (a merge lands its commits, notes and records at once).

use crate::error::{Error, Result};
use crate::git::refs::{Expect, Update};
use crate::git::{objects, ObjectId, Repo};

/// Writes a new notes commit on top of `notes_ref` that attaches `notes` (object, text) and returns the ref change that publishes it.
///
/// Nothing is visible until the returned [`Update`] is applied; it expects the
/// notes ref to be where it was read, so a concurrent note writer makes the
/// whole transaction fail rather than lose a note.
pub fn prepare(
    repo: &Repo,
    notes_ref: &str,
    notes: &[(ObjectId, String)],
    message: &str,
) -> Result<Option<Update>> {
    if notes.is_empty() {
        return Ok(None);
    }
    let parent = repo.find_ref(notes_ref)?;
    let root = match parent {
        Some(commit) => objects::commit_tree(repo, commit)?,
        None => objects::empty_tree(repo),
    };
    let mut state = gix::note::plumbing::State::new(root, &repo.inner).map_err(|e| {
        Error::repo_msg(format!("could not read the notes under '{notes_ref}': {e}"))
    })?;
    for (object, text) in notes {
        let blob = objects::write_blob(repo, text.as_bytes())?;
        state
            .edit(*object, Some(blob), &repo.inner)
            .map_err(|e| Error::repo_msg(format!("could not add a note for {object}: {e}")))?;
    }
    let tree = state
        .write(&repo.inner)
        .map_err(|e| Error::repo_msg(format!("could not write the notes tree: {e}")))?;
    let parents: Vec<ObjectId> = parent.into_iter().collect();
    let commit = objects::write_own_commit(repo, tree, &parents, message)?;
    let expect = match parent {
        Some(p) => Expect::Is(p),
        None => Expect::Absent,
    };
    Ok(Some(Update {
        name: notes_ref.to_owned(),
        new: Some(commit),
        expect,
        message: message.to_owned(),
    }))
}

/// Merges the notes commit `theirs` into `ours` as `git notes merge -s cat_sort_uniq` does, and
/// returns the commit that holds both (`ours` or `theirs` itself when one contains the other).
///
/// Notes only one side has are kept; an object both sides annotated differently gets the
/// sorted, de-duplicated lines of both notes. Nothing is deleted, no ref moves.
pub fn merge(
    repo: &Repo,
    ours: Option<ObjectId>,
    theirs: ObjectId,
    message: &str,
) -> Result<ObjectId> {
    let Some(ours) = ours else { return Ok(theirs) };
    if ours == theirs {
        return Ok(ours);
    }
    match objects::merge_base(repo, ours, theirs)? {
        Some(base) if base == theirs => return Ok(ours),
        Some(base) if base == ours => return Ok(theirs),
        _ => {}
    }
    let root = objects::commit_tree(repo, ours)?;
    let mut state = gix::note::plumbing::State::new(root, &repo.inner)
        .map_err(|e| Error::repo_msg(format!("could not read the notes of {ours}: {e}")))?;
    let their_tree = objects::commit_tree(repo, theirs)?;
    let mut cache = objects::FlatCache::default();
    for (path, _, blob) in objects::flatten_tree(repo, their_tree, &mut cache)?.iter() {
        let hex: String = path.to_string().chars().filter(|c| *c != '/').collect();
        let Ok(object) = hex.parse::<ObjectId>() else {
            continue;
        };
        let mine = state
            .get(&object, &repo.inner)
            .map_err(|e| Error::repo_msg(format!("could not read the note of {object}: {e}")))?;
        let new = match mine {
            None => *blob,
            Some(m) if m == *blob => continue,
            Some(m) => {
                let a = String::from_utf8_lossy(&objects::read_blob(repo, m)?).into_owned();
                let b = String::from_utf8_lossy(&objects::read_blob(repo, *blob)?).into_owned();
                objects::write_blob(repo, cat_sort_uniq(&a, &b).as_bytes())?
            }
        };
        state
            .edit(object, Some(new), &repo.inner)
            .map_err(|e| Error::repo_msg(format!("could not merge the note of {object}: {e}")))?;
    }
    let tree = state
        .write(&repo.inner)
        .map_err(|e| Error::repo_msg(format!("could not write the notes tree: {e}")))?;
    objects::write_own_commit(repo, tree, &[ours, theirs], message)
}

/// The lines of both notes, sorted, each once (git's `cat_sort_uniq` strategy).
fn cat_sort_uniq(a: &str, b: &str) -> String {
    let mut lines: Vec<&str> = a
        .lines()
        .chain(b.lines())
        .filter(|l| !l.is_empty())
        .collect();
    lines.sort_unstable();
    lines.dedup();
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn cat_sort_uniq_keeps_each_line_once() {
        assert_eq!(super::cat_sort_uniq("b\na\n", "a\nc\n"), "a\nb\nc\n");
    }
}
