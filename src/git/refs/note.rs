//! Notes under a notes ref, prepared as a commit so that the ref move can join
//! a larger transaction (a merge lands its commits, notes and records at once).

use crate::error::{Context, Error, Result};
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

/// Returns the note attached to `object` under `notes_ref`, if any.
pub fn read(repo: &Repo, notes_ref: &str, object: ObjectId) -> Result<Option<String>> {
    let mut notes = repo
        .inner
        .notes()
        .context(|| "could not read notes".into())?
        .with_refs([notes_ref])
        .context(|| format!("could not read notes under '{notes_ref}'"))?;
    let found = notes
        .get(object)
        .context(|| format!("could not read the note of {object}"))?;
    Ok(found
        .first()
        .map(|n| String::from_utf8_lossy(&n.blob.data).into_owned()))
}
