//! Skipping over index entries to where the extensions start, fast.
//!
//! An entry's length is only known from its own flags, so the walk from one
//! entry to the next is a chain of dependent loads: at 100,000 entries the
//! chain, not the reading, was most of the pre-commit hook's look at the index.
//! [`skip_entries`] runs a second chain from a guessed entry start halfway
//! through the window, in step with the first, so the processor follows both
//! at once. Where the first chain lands on a position the second one visited,
//! it takes the second one's end: from the same position both go the same way
//! (the step depends only on the position and the bytes), so the result is
//! exactly what the first chain alone would give. A wrong guess only means the
//! chains never meet, and the first one walks on alone.

/// The longest path length an entry's flags hold; a longer path ends at its NUL.
pub(super) const NAME_MAX: usize = 0x0fff;

/// Where the path starts in a version 2 or 3 entry with `flags`: an extended entry (version 3)
/// has two more bytes of flags before it.
pub(super) fn path_offset(flags: u16) -> usize {
    if flags & 0x4000 != 0 {
        64
    } else {
        62
    }
}

/// The length of a version 2 or 3 entry whose path of `name_len` bytes starts at `path_offset`:
/// entries are NUL-padded to a multiple of 8 bytes, with at least one NUL.
pub(super) fn entry_len(path_offset: usize, name_len: usize) -> usize {
    (path_offset + name_len + 8) & !7
}

/// Windows shorter than this are walked with one chain.
const TWO_CHAINS_MIN: usize = 16 << 10;

/// Returns where the version 2 or 3 entry at `at` ends, when it ends inside `w` and its path
/// length is in its flags.
#[inline(always)]
fn next_entry(w: &[u8], at: usize) -> Option<usize> {
    let &[hi, lo] = w.get(at + 60..at + 62)? else {
        return None;
    };
    let flags = u16::from_be_bytes([hi, lo]);
    let name_len = usize::from(flags & 0x0fff);
    if name_len == NAME_MAX {
        return None;
    }
    let end = at + entry_len(path_offset(flags), name_len);
    (end <= w.len()).then_some(end)
}

/// Skips the whole version 2 or 3 entries of `w` from `at`, at most `max` of them, and stops
/// before one that does not end inside `w` or whose path length is not in its flags. Returns
/// how many it skipped and where it stopped.
fn one_chain(w: &[u8], mut at: usize, max: u32) -> (u32, usize) {
    let mut skipped = 0;
    while skipped < max {
        match next_entry(w, at) {
            Some(end) => {
                at = end;
                skipped += 1;
            }
            None => break,
        }
    }
    (skipped, at)
}

/// Whether an entry seems to start at `at`: a file mode git writes, a path of the length its
/// flags say, without NULs, then only NUL padding. Only a guess (a path can hold such bytes).
fn looks_like_entry(w: &[u8], at: usize) -> bool {
    let Some(head) = w.get(at..at + 62) else {
        return false;
    };
    let mode = u32::from_be_bytes([head[24], head[25], head[26], head[27]]);
    if !matches!(mode, 0o100644 | 0o100755 | 0o120000 | 0o160000) {
        return false;
    }
    let flags = u16::from_be_bytes([head[60], head[61]]);
    let name_len = usize::from(flags & 0x0fff);
    if name_len == 0 || name_len == NAME_MAX {
        return false;
    }
    let name = path_offset(flags);
    w.get(at + name..at + entry_len(name, name_len))
        .is_some_and(|rest| {
            let (path, padding) = rest.split_at(name_len);
            !path.contains(&0) && padding.iter().all(|&b| b == 0)
        })
}

/// Skips the whole version 2 or 3 entries at the start of `w`, at most `max` of them, and stops
/// before one that does not end inside `w` or whose path length is not in its flags. Returns how
/// many it skipped and their bytes: always what one chain from the start would give (see the
/// module docs). `scratch` holds the second chain's positions; it is reused between calls.
pub(super) fn skip_entries(w: &[u8], max: u32, scratch: &mut Vec<usize>) -> (u32, usize) {
    if w.len() < TWO_CHAINS_MIN {
        return one_chain(w, 0, max);
    }
    // Entry lengths are multiples of 8: every entry starts at a multiple of 8 from the first.
    let guess = (w.len() / 2) & !7;
    let Some(second) = (guess..guess + 4096)
        .step_by(8)
        .find(|&at| looks_like_entry(w, at))
    else {
        return one_chain(w, 0, max);
    };
    // Both chains step together until the first one reaches the second one's start.
    scratch.clear();
    scratch.push(second);
    let (mut skipped, mut at) = (0u32, 0usize);
    let mut other = Some(second);
    while at < second && skipped < max {
        let Some(end) = next_entry(w, at) else {
            return (skipped, at);
        };
        at = end;
        skipped += 1;
        other = other.and_then(|o| next_entry(w, o));
        if let Some(o) = other {
            scratch.push(o);
        }
    }
    // The first chain walks on until it lands on a position of the second (then takes the
    // second's end, no further than `max` entries), or passes them all.
    let mut i = 0;
    while skipped < max {
        while scratch.get(i).is_some_and(|&o| o < at) {
            i += 1;
        }
        let Some(&o) = scratch.get(i) else {
            break;
        };
        if o == at {
            let ahead = u32::try_from(scratch.len() - 1 - i).unwrap_or(u32::MAX);
            let take = ahead.min(max - skipped);
            at = scratch[i + take as usize];
            skipped += take;
            break;
        }
        match next_entry(w, at) {
            Some(end) => {
                at = end;
                skipped += 1;
            }
            None => return (skipped, at),
        }
    }
    let (more, end) = one_chain(w, at, max - skipped);
    (skipped + more, end)
}

#[cfg(test)]
mod tests {
    use super::{one_chain, skip_entries};

    /// A small deterministic generator (xorshift), so that failures reproduce.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> usize {
            (self.next() % n) as usize
        }
    }

    /// One entry with path `name` (extended flags when `extended`), padded as git pads it.
    fn entry(name: &[u8], extended: bool, mode: u32) -> Vec<u8> {
        let mut e = vec![0u8; 62];
        e[24..28].copy_from_slice(&mode.to_be_bytes());
        let len = name.len().min(0x0fff) as u16;
        let flags = len | if extended { 0x4000 } else { 0 };
        e[60..62].copy_from_slice(&flags.to_be_bytes());
        if extended {
            e.extend_from_slice(&[0, 0]);
        }
        e.extend_from_slice(name);
        let size = (e.len() + 8) & !7;
        e.resize(size, 0);
        e
    }

    /// Windows of made-up entries with random header bytes, among them entries that hold a
    /// plausible fake entry 8 to 32 bytes in (the second chain's guess can land there; the
    /// fake ends where its entry ends, or inside its path), paths too long for their flags,
    /// extended entries, and cuts anywhere: both chains together always give what one chain
    /// gives.
    #[test]
    fn two_chains_give_what_one_chain_gives() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut scratch = Vec::new();
        let mut guessed_wrong = 0;
        for case in 0..600 {
            let mut w = Vec::new();
            let target = 20_000 + rng.below(80_000);
            while w.len() < target {
                let start = w.len();
                let long = case % 4 == 0 && rng.below(300) == 0;
                let len = if long {
                    0x0fff + rng.below(100)
                } else {
                    // Lengths of 2 modulo 8 end their entry with exactly 8 bytes of padding.
                    8 * (2 + rng.below(12)) + if rng.below(2) == 0 { 2 } else { rng.below(8) }
                };
                let name: Vec<u8> = (0..len).map(|_| b'a' + rng.below(26) as u8).collect();
                let mut e = entry(&name, !long && rng.below(6) == 0, 0o100644);
                for b in &mut e[..24] {
                    *b = rng.below(256) as u8;
                }
                let extended = e[60] & 0x40 != 0;
                let d = 8 * (1 + rng.below(4));
                if !long && !extended && len % 8 == 2 && len > d + 8 && rng.below(3) == 0 {
                    // A fake entry `d` bytes in: its mode in this one's stat data, its flags in
                    // this one's path, its path the rest of it, its padding this one's (so it
                    // ends where this one ends). Extended, its path starts 2 bytes later.
                    let flags = if rng.below(2) == 0 {
                        (len - d) as u16
                    } else {
                        0x4000 | (len - d - 2) as u16
                    };
                    e[d + 24..d + 28].copy_from_slice(&0o100644u32.to_be_bytes());
                    e[d + 60..d + 62].copy_from_slice(&flags.to_be_bytes());
                } else if !long && !extended && len > d + 24 && rng.below(3) == 0 {
                    // A crafted path with 8 NULs in it, where a fake entry `d` bytes in ends:
                    // the second chain goes on from the middle of this path, off the first.
                    let zero = 8 * ((d + 8 + rng.below((len - d - 16) as u64)) / 8) + 2;
                    e[62 + zero - 8..62 + zero].fill(0);
                    let fake_len = zero - 8 - d;
                    e[d + 24..d + 28].copy_from_slice(&0o100644u32.to_be_bytes());
                    e[d + 60..d + 62].copy_from_slice(&(fake_len as u16).to_be_bytes());
                }
                w.extend(e);
                debug_assert_eq!((w.len() - start) % 8, 0);
            }
            let cut = w.len() - rng.below(200);
            let w = &w[..cut];
            let guess = (w.len() / 2) & !7;
            if (guess..guess + 4096)
                .step_by(8)
                .find(|&at| super::looks_like_entry(w, at))
                .is_some_and(|at| !chain_visits(w, at))
            {
                guessed_wrong += 1;
            }
            for max in [u32::MAX, rng.below(2000) as u32, rng.below(200) as u32] {
                assert_eq!(
                    skip_entries(w, max, &mut scratch),
                    one_chain(w, 0, max),
                    "case {case}, max {max}"
                );
            }
        }
        assert!(
            guessed_wrong > 50,
            "the second chain started off the first {guessed_wrong} times"
        );
    }

    /// Whether one chain from the start of `w` passes `at`.
    fn chain_visits(w: &[u8], at: usize) -> bool {
        let mut pos = 0;
        while pos < at {
            match super::next_entry(w, pos) {
                Some(end) => pos = end,
                None => return false,
            }
        }
        pos == at
    }
}
