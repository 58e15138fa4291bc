//! Objects of a foreign object store, re-written into the repository's own.
//!
//! `exec --confine` gives a confined session a private object store (the shared one stays
//! read-only inside the fence). Afterwards every object the session wrote there is read
//! back and written again into `<common>/objects` through gix ([`import`]): its id is
//! computed from its content, so an object whose file name is not its hash (a forgery
//! planted by the session) is left out, never trusted by name. Loose objects and packs
//! alike; the new objects go in as packs ([`super::pack::batch`]).

use crate::error::{Error, Result};
use crate::git::Repo;
use gix::hash::ObjectId;
use std::collections::HashSet;
use std::path::Path;

/// The most object data one pack of an import holds in memory before it is written.
const CHUNK_BYTES: usize = 64 << 20;

/// What an [`import`] did.
#[derive(Debug, Default)]
pub struct Imported {
    /// Objects written into the repository's store.
    pub written: usize,
    /// Objects whose content does not hash to their name: left out.
    pub forged: Vec<String>,
    /// Objects that could not be read (corrupt): left out, with why.
    pub unreadable: Vec<String>,
}

/// Re-writes every object of the store at `dir` (loose objects and packs) that `done` does
/// not hold yet into `repo`'s own store, adding the ids it handled to `done`. The store's
/// own `info/alternates` is deleted first: only its own objects are imported.
pub fn import(repo: &Repo, dir: &Path, done: &mut HashSet<ObjectId>) -> Result<Imported> {
    let _ = std::fs::remove_file(dir.join("info").join("alternates"));
    let mut out = Imported::default();
    if !dir.is_dir() {
        return Ok(out);
    }
    let options = gix::odb::store::init::Options {
        // A pack the session wrote may claim any size: bound what one object may allocate.
        alloc_limit_bytes: Some(4 << 30),
        ..Default::default()
    };
    let from = gix::odb::at_opts(dir, repo.inner.object_hash(), None, options).map_err(|e| {
        Error::repo(
            format!("could not open the object store '{}'", dir.display()),
            e,
        )
    })?;
    let ids = from.iter().map_err(|e| {
        Error::repo_msg(format!(
            "could not list the objects of '{}': {e}",
            dir.display()
        ))
    })?;
    let mut pending: Vec<ObjectId> = Vec::new();
    for id in ids {
        match id {
            Ok(id) if done.insert(id) => pending.push(id),
            Ok(_) => {}
            Err(e) => out.unreadable.push(e.to_string()),
        }
    }
    let mut rest = &pending[..];
    while !rest.is_empty() {
        let taken = super::pack::batch(repo, |r| write_chunk(r, &from, rest, &mut out))?;
        rest = &rest[taken..];
    }
    Ok(out)
}

/// Writes objects of `ids` from `from` to `repo` until [`CHUNK_BYTES`] are held; returns how
/// many ids it went through (at least one).
fn write_chunk(
    repo: &Repo,
    from: &gix::odb::Handle,
    ids: &[ObjectId],
    out: &mut Imported,
) -> Result<usize> {
    use gix::prelude::{Find, Write};
    let mut buf = Vec::new();
    let mut bytes = 0;
    let mut taken = 0;
    for id in ids {
        taken += 1;
        let data = match from.try_find(id, &mut buf) {
            Ok(Some(data)) => data,
            Ok(None) => continue,
            Err(e) => {
                out.unreadable.push(format!("{id}: {e}"));
                continue;
            }
        };
        let (kind, content) = (data.kind, data.data);
        let actual = gix::objs::compute_hash(repo.inner.object_hash(), kind, content)
            .map_err(|e| Error::repo_msg(format!("could not hash object {id}: {e}")))?;
        if actual != *id {
            out.forged.push(id.to_string());
            continue;
        }
        let written = repo
            .inner
            .objects
            .write_buf(kind, content)
            .map_err(|e| Error::repo_msg(format!("could not write object {id}: {e}")))?;
        debug_assert_eq!(written, *id);
        out.written += 1;
        bytes += content.len();
        if bytes >= CHUNK_BYTES {
            break;
        }
    }
    Ok(taken)
}
