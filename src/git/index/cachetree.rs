//! The cache-tree (`TREE`) extension of an index made from a tree.
//!
//! git's checkouts (`git worktree add`, `git reset --hard`) record the tree
//! id of every directory in the index. With it, the pre-commit hook and git's
//! own `git commit` skip every directory the commit does not touch; without
//! it, both read or hash every tree of the repository (at 100,000 files the
//! hook of a task's first commit took three times as long). gix makes an
//! index from a tree without the extension, so git-task adds it.
//!
//! The root of the extension is also read back without decoding the index
//! ([`cached_root_tree`]): it is the tree `git commit` is about to record.

use super::skip::{entry_len, path_offset, skip_entries, NAME_MAX};
use crate::error::{Context, Error, Result};
use crate::git::{ObjectId, Repo};
use gix::index::extension::Tree;
use gix::objs::tree::EntryKind;
use std::path::Path;

/// The cache tree of an index holding exactly the entries of `tree`, as
/// `git read-tree` records it; `None` when a directory holds no entry (an
/// empty tree, which git would not record either).
pub fn of_tree(repo: &Repo, tree: ObjectId) -> Result<Option<Tree>> {
    node(repo, &[], tree, 0)
}

fn node(repo: &Repo, name: &[u8], id: ObjectId, depth: usize) -> Result<Option<Tree>> {
    if depth > crate::git::pathsafe::MAX_TREE_DEPTH {
        return Err(crate::git::pathsafe::too_deep(&format!("tree {id}")));
    }
    let object = repo
        .inner
        .find_tree(id)
        .context(|| format!("could not read tree {id}"))?;
    let mut subtrees = Vec::new();
    let mut entries = 0u32;
    for entry in object
        .decode()
        .context(|| format!("could not decode tree {id}"))?
        .entries
    {
        if entry.mode.kind() == EntryKind::Tree {
            subtrees.push((entry.filename.to_vec(), entry.oid.to_owned()));
        } else {
            entries += 1;
        }
    }
    drop(object);
    let mut children = Vec::with_capacity(subtrees.len());
    for (child, child_id) in subtrees {
        let Some(sub) = node(repo, &child, child_id, depth + 1)? else {
            return Ok(None);
        };
        entries += sub.num_entries.unwrap_or(0);
        children.push(sub);
    }
    if entries == 0 {
        return Ok(None);
    }
    // git keeps subtrees ordered by name length, then name (`subtree_name_cmp`).
    children.sort_by(|a, b| (a.name.len(), &a.name[..]).cmp(&(b.name.len(), &b.name[..])));
    Ok(Some(Tree {
        name: name.into(),
        id,
        num_entries: Some(entries),
        children,
    }))
}

/// Writes `index` to its file with `cache` as its cache tree, under the index lock.
///
/// Streamed through a buffer into the lock file and the checksum, so that a big
/// index is never held twice in memory.
pub fn write_index(repo: &Repo, index: &gix::index::File, cache: &Tree) -> Result<()> {
    use std::io::Write;
    let path = index.path();
    let err = |what: &str| format!("could not {what} the index '{}'", path.display());
    let lock = gix::lock::File::acquire_to_update_resource(
        path,
        gix::lock::acquire::Fail::Immediately,
        None,
        0,
    )
    .context(|| err("lock"))?;
    let mut hashed = gix::hash::io::Write::new(lock, repo.inner.object_hash());
    let options = gix::index::write::Options {
        extensions: gix::index::write::Extensions::None,
        skip_hash: false,
    };
    {
        let mut out = std::io::BufWriter::with_capacity(1 << 16, &mut hashed);
        gix::index::State::write_to(index, &mut out, options).context(|| err("write"))?;
        cache.write_to(&mut out).context(|| err("write"))?;
        out.flush().context(|| err("write"))?;
    }
    let gix::hash::io::Write {
        hash,
        inner: mut lock,
    } = hashed;
    let checksum = hash.try_finalize().context(|| err("hash"))?;
    lock.write_all(checksum.as_slice())
        .context(|| err("write"))?;
    lock.commit()
        .map_err(|e| Error::repo(err("replace"), e.error))?;
    Ok(())
}

/// Returns the tree a commit of the index at `path` would record, read from the root of its
/// cached-tree extension, or `None` when that is not known (no extension, an invalidated root, a
/// split index).
///
/// Git refreshes the cached tree before it runs `pre-commit` for `git commit` and `git commit -a`,
/// and commits exactly that tree, so the hook can diff HEAD's tree against it without decoding a
/// single index entry. As git does, the last cached tree of the file counts; an index whose
/// end-of-entries extension says the extensions start elsewhere than where its entries end is an
/// error (git reading it on several threads would see other extensions). The entries are only skipped over (their lengths are in their flags), in
/// one buffered pass; nothing is allocated per entry.
pub fn cached_root_tree(path: &Path, hash: gix::hash::Kind) -> Result<Option<ObjectId>> {
    let io = |e: std::io::Error| {
        Error::repo(format!("could not read the index '{}'", path.display()), e)
    };
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(e)),
    };
    let mut chunks = Chunks::new(file);
    root_in_index(&mut chunks, hash).map_err(|e| match e.kind() {
        std::io::ErrorKind::InvalidData => io(e).hint(
            "let git write the index again, then commit: git update-index --force-write-index",
        ),
        _ => io(e),
    })
}

/// Reads a file front to back through a window of at least the bytes asked for,
/// so that entries are skipped inside the buffer instead of read one by one.
struct Chunks {
    file: std::fs::File,
    buf: Vec<u8>,
    /// The window is `buf[lo..hi]`.
    lo: usize,
    hi: usize,
    /// Whether a read returned nothing: no use asking again.
    eof: bool,
    /// How many bytes of the file were consumed.
    consumed: usize,
}

impl Chunks {
    const SIZE: usize = 1 << 18;

    fn new(file: std::fs::File) -> Chunks {
        Chunks {
            file,
            buf: vec![0; Self::SIZE],
            lo: 0,
            hi: 0,
            eof: false,
            consumed: 0,
        }
    }

    /// The next `n` or more bytes, fewer only at the end of the file.
    fn window(&mut self, n: usize) -> std::io::Result<&[u8]> {
        use std::io::Read;
        if self.hi - self.lo < n && !self.eof {
            self.buf.copy_within(self.lo..self.hi, 0);
            self.hi -= self.lo;
            self.lo = 0;
            if self.buf.len() < n {
                self.buf.resize(n.max(Self::SIZE), 0);
            }
            while self.hi < n {
                match self.file.read(&mut self.buf[self.hi..]) {
                    Ok(0) => {
                        self.eof = true;
                        break;
                    }
                    Ok(k) => self.hi += k,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(&self.buf[self.lo..self.hi])
    }

    /// How many bytes the window holds now.
    fn available(&self) -> usize {
        self.hi - self.lo
    }

    /// Moves past `n` bytes of the window (no more than it holds).
    fn consume(&mut self, n: usize) {
        debug_assert!(n <= self.available());
        self.lo += n;
        self.consumed += n;
    }

    /// The last `n` bytes of the file (read apart from the window), or fewer if it is shorter.
    fn tail(&mut self, n: usize) -> std::io::Result<Vec<u8>> {
        use std::io::{Read, Seek, SeekFrom};
        let len = self.file.metadata()?.len();
        self.file
            .seek(SeekFrom::Start(len.saturating_sub(n as u64)))?;
        let mut out = Vec::with_capacity(n);
        (&mut self.file).take(n as u64).read_to_end(&mut out)?;
        Ok(out)
    }
}

/// Finds the cached root tree of the index read by `chunks` (see [`cached_root_tree`]):
/// `None` when the index has none, or is not one this can read.
fn root_in_index(chunks: &mut Chunks, hash: gix::hash::Kind) -> std::io::Result<Option<ObjectId>> {
    let be32 = |b: &[u8], at: usize| u32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"));
    let header = chunks.window(12)?;
    if header.len() < 12 || &header[..4] != b"DIRC" {
        return Ok(None);
    }
    let (version, entries) = (be32(header, 4), be32(header, 8));
    if !(2..=4).contains(&version) {
        return Ok(None);
    }
    chunks.consume(12);
    let mut left = entries;
    let mut scratch = Vec::new();
    while left > 0 {
        let w = chunks.window(64 + NAME_MAX + 8)?;
        if version != 4 {
            // Most entries are skipped here, a window at a time; the loop below takes the one
            // that straddles the window's end, or whose path is too long for its flags.
            let (skipped, used) = skip_entries(w, left, &mut scratch);
            chunks.consume(used);
            left -= skipped;
            if left == 0 {
                break;
            }
        }
        let w = chunks.window(64 + NAME_MAX + 8)?;
        if w.len() < 62 {
            return Ok(None);
        }
        let flags = u16::from_be_bytes([w[60], w[61]]);
        let name = path_offset(flags);
        let size = if version == 4 {
            // A varint (bytes of the previous path to drop), then the rest of the path up to NUL.
            let Some(varint) = w
                .get(name..)
                .and_then(|r| r.iter().position(|b| b & 0x80 == 0))
            else {
                return Ok(None);
            };
            let rest = name + varint + 1;
            match position_of_nul(chunks, rest)? {
                Some(nul) => nul + 1,
                None => return Ok(None),
            }
        } else {
            let name_len = match usize::from(flags & 0x0fff) {
                NAME_MAX => match position_of_nul(chunks, name)? {
                    Some(nul) => nul - name,
                    None => return Ok(None),
                },
                n => n,
            };
            entry_len(name, name_len)
        };
        if size > chunks.available() {
            return Ok(None);
        }
        chunks.consume(size);
        left -= 1;
    }
    let end_of_entries = chunks.consumed;
    let hash_len = hash.len_in_bytes();
    // git reads every extension, keeps the last cached tree it reads (`read_index_extension`)
    // and commits that tree as it is: so is it read here, to the end.
    let mut root = None;
    loop {
        let w = chunks.window(8 + hash_len)?;
        if w.len() < 8 + hash_len {
            break;
        }
        let (signature, len) = ([w[0], w[1], w[2], w[3]], be32(w, 4) as usize);
        chunks.consume(8);
        match &signature {
            b"TREE" => {
                let Some(body) = chunks.window(len)?.get(..len) else {
                    return Ok(None);
                };
                root = parse_tree_root(body, hash);
                chunks.consume(len);
            }
            // A split index: the entries live in another file; let gix put it together.
            b"link" => return Ok(None),
            _ => {
                // Skipped in windows of at most a chunk: an extension can be large.
                let mut left = len;
                while left > 0 {
                    let step = chunks.window(left.min(Chunks::SIZE))?.len().min(left);
                    if step == 0 {
                        return Ok(None);
                    }
                    chunks.consume(step);
                    left -= step;
                }
            }
        }
    }
    // git reading the index on several threads takes its extensions from where an
    // end-of-entries extension at the end of the file says they start (`read_eoie_extension`),
    // not from where the entries end. An index where the two differ reads two ways.
    let eoie_len = 8 + 4 + hash_len;
    let tail = chunks.tail(eoie_len + hash_len)?;
    if tail.len() == eoie_len + hash_len
        && &tail[..4] == b"EOIE"
        && be32(&tail, 4) as usize == 4 + hash_len
        && be32(&tail, 8) as usize != end_of_entries
    {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "its end-of-entries extension does not point where its entries end, so git can read \
             other extensions from it than this hook reads",
        ));
    }
    Ok(root)
}

fn position_of_nul(chunks: &mut Chunks, from: usize) -> std::io::Result<Option<usize>> {
    let mut want = from + 256;
    loop {
        let w = chunks.window(want)?;
        if let Some(i) = w.get(from..).and_then(|r| r.iter().position(|&b| b == 0)) {
            return Ok(Some(from + i));
        }
        if w.len() < want {
            return Ok(None);
        }
        want *= 2;
    }
}

/// Parses the first record of a `TREE` extension body: `<name>\0<entry count> <subtrees>\n<id>`.
fn parse_tree_root(body: &[u8], hash: gix::hash::Kind) -> Option<ObjectId> {
    let nul = body.iter().position(|&b| b == 0)?;
    if nul != 0 {
        return None;
    }
    let nl = nul + body[nul..].iter().position(|&b| b == b'\n')?;
    let counts = std::str::from_utf8(&body[nul + 1..nl]).ok()?;
    let (count, _) = counts.split_once(' ')?;
    if count.parse::<i64>().ok()? < 0 {
        return None;
    }
    let id = body.get(nl + 1..nl + 1 + hash.len_in_bytes())?;
    ObjectId::try_from(id).ok()
}

#[cfg(test)]
mod tests {
    use super::cached_root_tree;

    /// An index cut short (a disk full, a copy in progress) has no cached tree: the
    /// caller falls back to gix, which reports the damage.
    #[test]
    fn a_truncated_index_has_no_cached_tree() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index");
        let mut entry = vec![0u8; 62];
        entry[61] = 100; // a 100-byte path, of which only 5 bytes are there
        for cut in [4, 12, 40, 62, 67] {
            let mut bytes = b"DIRC\0\0\0\x02\0\0\0\x01".to_vec();
            bytes.extend_from_slice(&entry);
            bytes.extend_from_slice(b"short");
            bytes.truncate(cut);
            std::fs::write(&path, &bytes).unwrap();
            let found = cached_root_tree(&path, gix::hash::Kind::Sha1).unwrap();
            assert_eq!(found, None, "cut at {cut}");
        }
    }
}
