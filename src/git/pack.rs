//! Many new objects written as one pack.
//!
//! A loose object costs the file system a new file, and often a new fan-out
//! directory: on a fresh clone, which has none, writing the ~60 trees and blobs of
//! a worktree snapshot creates ~120 inodes, and those creations, not the hashing,
//! were most of a patch-mode start. [`batch`] keeps the objects a step writes in
//! memory (reads see them) and writes them as one pack and its index when the step
//! ends, the way `git fetch` stores what it receives; a handful is written loose.
//!
//! Nothing may name a batched object before [`batch`] returns: it is on disk only
//! then. The pack's `.keep` file (written by gix, then marked as git-task's) stops a
//! concurrent `git repack -a -d` from dropping the still unreferenced objects; it is
//! removed by [`release`] once the command has written its refs (`commands::run` calls
//! it when the command returns). A kill in between leaves a marked `.keep`, which only stops that
//! one pack from being repacked.

use crate::error::{Error, Result};
use crate::git::Repo;
use std::path::PathBuf;
use std::sync::Mutex;

/// Below this many objects a batch is written loose: a pack costs three files.
const PACK_MIN: usize = 8;

/// What a `.keep` file git-task wrote holds, before its pid.
const KEEP_MARK: &str = "git-task";

/// `.keep` files of packs this process wrote, removed by [`release`].
static KEPT: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Runs `step` with a handle on `repo` whose new objects stay in memory, then writes them
/// (one pack, or loose when few) before returning `step`'s value. When `step` fails its
/// objects are dropped: nothing names them. Batches nest: an inner one writes nothing and
/// leaves its objects to the outer one, and a handle whose objects stay in memory for good
/// ([`Repo::with_objects_in_memory`]) keeps them there.
pub fn batch<T>(repo: &Repo, step: impl FnOnce(&Repo) -> Result<T>) -> Result<T> {
    batch_if(repo, step, |_| true)
}

/// [`batch`], writing the objects as a pack only when `kept` says a ref will name them (a
/// refused merge's landing is written loose, as before: it is garbage `git gc` prunes).
pub fn batch_if<T>(
    repo: &Repo,
    step: impl FnOnce(&Repo) -> Result<T>,
    kept: impl FnOnce(&T) -> bool,
) -> Result<T> {
    if repo.objects != super::Objects::Disk {
        return step(repo);
    }
    let mut batched = repo.batched();
    let out = step(&batched)?;
    let Some(objects) = batched.inner.objects.take_object_memory() else {
        return Ok(out);
    };
    write(repo, objects, kept(&out))?;
    Ok(out)
}

/// Writes `objects` to `repo`'s object database: as one pack when `pack` and there are enough.
fn write(repo: &Repo, objects: gix::odb::memory::Storage, pack: bool) -> Result<()> {
    if !pack || objects.len() < PACK_MIN {
        for (id, (kind, data)) in objects.iter() {
            use gix::prelude::Write;
            let written = repo
                .inner
                .objects
                .write_buf(*kind, data)
                .map_err(|e| Error::repo_msg(format!("could not write object {id}: {e}")))?;
            debug_assert_eq!(written, *id);
        }
        return Ok(());
    }
    let bytes = pack_bytes(&objects)
        .map_err(|e| Error::repo("could not make a pack of the new objects", e))?;
    let dir = pack_dir(repo);
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::repo(format!("could not create '{}'", dir.display()), e))?;
    let outcome = gix::odb::pack::Bundle::write_to_directory(
        &mut &bytes[..],
        Some(&dir),
        &mut gix::progress::Discard,
        &std::sync::atomic::AtomicBool::new(false),
        None::<gix::objs::find::Never>,
        gix::hash::Kind::Sha1,
        gix::odb::pack::bundle::write::Options {
            thread_limit: Some(1),
            ..Default::default()
        },
    )
    .map_err(|e| Error::repo_msg(format!("could not write a pack of the new objects: {e}")))?;
    // Read-only, as git leaves its packs (the temporary files were private to this process).
    for path in [&outcome.data_path, &outcome.index_path]
        .into_iter()
        .flatten()
    {
        read_only(path);
    }
    if let Some(keep) = outcome.keep_path {
        // Marked as ours, so that a `.keep` left by a kill can be told from a user's.
        let _ = std::fs::write(&keep, format!("{KEEP_MARK} {}\n", std::process::id()));
        KEPT.lock().unwrap_or_else(|e| e.into_inner()).push(keep);
    }
    Ok(())
}

#[cfg(unix)]
fn read_only(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o444));
}

#[cfg(not(unix))]
fn read_only(_path: &std::path::Path) {}

/// `objects/pack` of `repo`, without `..`: seen from a linked worktree the objects are
/// `.git/worktrees/<name>/../../objects`, and `remove` deletes `<name>` before the `.keep`
/// files are released.
fn pack_dir(repo: &Repo) -> PathBuf {
    crate::git::normalize(&repo.inner.objects.store_ref().path().join("pack"))
}

/// The pack of `objects`: version 2, every object whole (no deltas), then its SHA-1.
fn pack_bytes(objects: &gix::odb::memory::Storage) -> std::io::Result<Vec<u8>> {
    use gix::odb::pack::data::{self, entry::Header};
    use std::io::Write;
    let count = u32::try_from(objects.len()).map_err(std::io::Error::other)?;
    let mut out = Vec::with_capacity(objects.values().map(|(_, d)| d.len() / 2 + 8).sum());
    out.extend_from_slice(&data::header::encode(data::Version::V2, count));
    for (kind, bytes) in objects.values() {
        let header = match kind {
            gix::object::Kind::Blob => Header::Blob,
            gix::object::Kind::Tree => Header::Tree,
            gix::object::Kind::Commit => Header::Commit,
            gix::object::Kind::Tag => Header::Tag,
        };
        header.write_to(bytes.len() as u64, &mut out)?;
        let mut z =
            gix::zlib::stream::deflate::Write::new(&mut out, gix::zlib::Compression::BEST_SPEED);
        z.write_all(bytes)?;
        z.flush()?;
    }
    let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
    hasher.update(&out);
    let digest = hasher.try_finalize().map_err(std::io::Error::other)?;
    out.extend_from_slice(digest.as_slice());
    Ok(out)
}

/// Removes the `.keep` files of the packs this process wrote: call it once the refs that
/// name their objects are written (or the command has failed and nothing will).
pub fn release() {
    let kept = std::mem::take(&mut *KEPT.lock().unwrap_or_else(|e| e.into_inner()));
    for keep in kept {
        let _ = std::fs::remove_file(keep);
    }
}

/// The `.keep` files git-task marked whose process is gone (`is_gone(pid)`): a command killed
/// between writing a pack and naming its objects left them. Removing one lets `git gc` repack
/// that pack like any other (and prune what nothing names). A `.keep` of anyone else (`git
/// fetch` writes its own, a user may `touch` one) is never listed.
pub fn stale_keeps(repo: &Repo, is_gone: impl Fn(u32) -> bool) -> Vec<PathBuf> {
    let dir = pack_dir(repo);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "keep"))
        .filter(|p| {
            crate::git::read_small(p)
                .ok()
                .and_then(|text| {
                    let text = String::from_utf8(text).ok()?;
                    let pid = text.strip_prefix(KEEP_MARK)?.trim().parse::<u32>().ok()?;
                    Some(pid != std::process::id() && is_gone(pid))
                })
                .unwrap_or(false)
        })
        .collect()
}
