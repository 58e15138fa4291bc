//! Human-readable notes under `refs/notes/tasks` (SPEC §4), so `git log --notes=tasks` shows them.

use super::{ObjectId, Repo};
use crate::error::{Error, Result};

/// Adds `text` as the note of `object` in `notes_ref`, replacing an older note; retries when another writer moved the ref.
pub fn put(
    repo: &Repo,
    notes_ref: &str,
    object: ObjectId,
    text: &str,
    message: &str,
) -> Result<()> {
    let mut last = None;
    for _ in 0..5 {
        let platform = repo
            .inner
            .notes()
            .map_err(|e| Error::repo("could not open the notes", e))?
            .with_commit_message(message);
        let mut platform = platform;
        match platform.replace(notes_ref, object, text.as_bytes()) {
            Ok(_) => return Ok(()),
            Err(e) => last = Some(e),
        }
    }
    Err(Error::repo(
        format!("could not write the note of {object} to '{notes_ref}'"),
        last.expect("the loop ran at least once"),
    ))
}

/// Returns the note of `object` in `notes_ref`, if any.
pub fn get(repo: &Repo, notes_ref: &str, object: ObjectId) -> Result<Option<String>> {
    let mut platform = repo
        .inner
        .notes()
        .and_then(|p| p.with_refs([notes_ref]))
        .map_err(|e| Error::repo("could not open the notes", e))?;
    let notes = platform
        .get(object)
        .map_err(|e| Error::repo(format!("could not read the note of {object}"), e))?;
    Ok(notes
        .first()
        .map(|n| String::from_utf8_lossy(&n.blob.data).into_owned()))
}
