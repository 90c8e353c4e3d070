//! Reading the claims index (format: [`super::claims_index`]): the front whole, the claim lines a
//! block at a time.
//!
//! Invariants a reader must not break:
//! - A reader reads the front and only the blocks its lookups land in (`pread`): the guard's
//!   cost follows its staged paths, not the number of claims in the repository (fresh memory is
//!   what costs here: every page of a whole read is a page fault).
//! - A front that does not match the file's length, or whose counts, fences or table are
//!   inconsistent, is refused ([`ClaimsView::parse`] and [`ClaimsView::open`] give `None`) and
//!   the index is rebuilt. Counts from the file are checked against its size before anything is
//!   allocated from them.
//! - A block is checked when it is loaded (its line count, its order, its first path against
//!   its fence); a bad one is a [`DamagedIndex`] error, on which [`super::refresh::with_view`]
//!   rebuilds the index and answers again. Blocks are loaded at most once (`OnceLock`), so a view
//!   can be shared between threads (`list`).

use super::claims_index::{
    front_len, parse_session, parse_since, split_line, DirStamp, IndexedSession, BLOCK, HEADER,
};
use crate::base::clock::Time;
use crate::ownership::ClaimHow;
use std::os::unix::fs::FileExt;
use std::sync::OnceLock;

/// The header line is read with the first bytes of the file; it is never longer than this.
const FIRST_READ: usize = 4096;

/// A block of the index that failed its checks when it was loaded: the index is rebuilt from
/// the store (see [`super::refresh::with_view`]), never trusted and never a reason to fail open.
#[derive(Debug)]
pub struct DamagedIndex(pub String);

impl std::fmt::Display for DamagedIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a damaged claims index ({})", self.0)
    }
}

impl std::error::Error for DamagedIndex {}

/// Where the claim lines are read from.
enum Source {
    /// The index file, read a block at a time.
    File(std::fs::File),
    /// The whole index in memory (just built, or read whole).
    Bytes(Vec<u8>),
}

/// One loaded block: its bytes (unless they are in [`Source::Bytes`]) and where each of its
/// lines starts, plus the end of the last.
struct Loaded {
    bytes: Option<Box<[u8]>>,
    starts: Vec<u32>,
}

/// All claims of all sessions: the front in memory, the claim lines a block at a time.
pub struct ClaimsView {
    pub sessions: Vec<IndexedSession>,
    source: Source,
    front: Vec<u8>,
    /// Each block's fence (its first escaped path), as a range of `front`.
    fences: Vec<(u32, u32)>,
    /// Where each block starts in the claim lines, and their end.
    table: Vec<u32>,
    blocks: Vec<OnceLock<Result<Loaded, String>>>,
    pub(super) count: usize,
    /// `sessions/` and `claims/` as they were before any file was read for this index.
    pub(super) dirs: [DirStamp; 2],
    /// The filesystem's clock when `dirs` were taken (before them), or `None` when unknown.
    pub(super) stamp: Option<i128>,
}

impl ClaimsView {
    /// A whole index held in memory; `None` when the bytes are not a whole, consistent index.
    pub fn parse(data: Vec<u8>) -> Option<ClaimsView> {
        let len = data.len() as u64;
        let front_len = front_len(data.get(..data.len().min(FIRST_READ))?)?;
        let front = data.get(..front_len)?.to_vec();
        ClaimsView::from_front(front, len, Source::Bytes(data))
    }

    /// An index file, reading only its front now (`None` when it is not a consistent index of
    /// `len` bytes); its blocks are read as lookups need them.
    pub fn open(file: std::fs::File, len: u64) -> Option<ClaimsView> {
        let first = read_at(&file, 0, (len as usize).min(FIRST_READ))?;
        let front_len = front_len(&first)?;
        let front = if front_len <= first.len() {
            first[..front_len].to_vec()
        } else {
            read_at(&file, 0, front_len)?
        };
        ClaimsView::from_front(front, len, Source::File(file))
    }

    /// Checks the front against the file's length `len` and indexes it.
    fn from_front(front: Vec<u8>, len: u64, source: Source) -> Option<ClaimsView> {
        let nl = memchr::memchr(b'\n', &front)?;
        let header = std::str::from_utf8(&front[..nl]).ok()?;
        let rest = header.strip_prefix(HEADER)?.strip_prefix(' ')?;
        let mut f = rest.split(' ');
        let n_sessions: usize = f.next()?.parse().ok()?;
        let count: usize = f.next()?.parse().ok()?;
        let declared_front: usize = f.next()?.parse().ok()?;
        let claims_len: usize = f.next()?.parse().ok()?;
        let mut dir = || -> Option<DirStamp> {
            Some(DirStamp {
                ino: f.next()?.parse().ok()?,
                mtime_ns: f.next()?.parse().ok()?,
                ctime_ns: f.next()?.parse().ok()?,
            })
        };
        let dirs = [dir()?, dir()?];
        let stamp = match f.next()? {
            "-" => None,
            s => Some(s.parse().ok()?),
        };
        if f.next().is_some()
            || declared_front != front.len()
            || (front.len() as u64).checked_add(claims_len as u64)? != len
        {
            return None;
        }
        // The counts come from the file: a session line takes at least 24 bytes (twelve tabs,
        // ten digits, a kind, a newline) and a claim line at least 10, so a count the bytes
        // cannot hold is damage, not an allocation size.
        if n_sessions > front.len() / 24 || count > claims_len / 10 {
            return None;
        }
        let n_blocks = count.div_ceil(BLOCK);
        let mut at = nl + 1;
        let mut sessions = Vec::with_capacity(n_sessions);
        for _ in 0..n_sessions {
            let end = at + memchr::memchr(b'\n', front.get(at..)?)?;
            sessions.push(parse_session(std::str::from_utf8(&front[at..end]).ok()?)?);
            at = end + 1;
        }
        if n_blocks > front.len().saturating_sub(at) / 5 {
            return None;
        }
        let mut fences = Vec::with_capacity(n_blocks);
        for _ in 0..n_blocks {
            let end = at + memchr::memchr(b'\n', front.get(at..)?)?;
            let fence = &front[at..end];
            let ordered = fences
                .last()
                .is_none_or(|&(s, e): &(u32, u32)| &front[s as usize..e as usize] <= fence);
            if fence.is_empty() || fence.contains(&b'\t') || !ordered {
                return None;
            }
            fences.push((at as u32, end as u32));
            at = end + 1;
        }
        // The table: exactly what is left of the front, strictly increasing from 0 to the
        // length of the claim lines (every block holds at least one line).
        if front.len() - at != (n_blocks + 1) * 4 {
            return None;
        }
        let table: Vec<u32> = front[at..]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect();
        if table[0] != 0
            || table[n_blocks] as usize != claims_len
            || table.windows(2).any(|w| w[0] >= w[1])
        {
            return None;
        }
        let mut blocks = Vec::with_capacity(n_blocks);
        blocks.resize_with(n_blocks, OnceLock::new);
        Some(ClaimsView {
            sessions,
            source,
            front,
            fences,
            table,
            blocks,
            count,
            dirs,
            stamp,
        })
    }

    /// The whole index, when it is held in memory (a view just built): what is written back.
    pub(super) fn bytes(&self) -> Option<&[u8]> {
        match &self.source {
            Source::Bytes(data) => Some(data),
            Source::File(_) => None,
        }
    }

    /// Whether the index can be used as it is, `sessions/` and `claims/` now being `dirs`:
    /// unchanged since it was built and older than its stamp (see [`ClaimsView::load`]).
    pub(super) fn trusted(&self, dirs: [DirStamp; 2]) -> bool {
        self.dirs == dirs
            && self
                .stamp
                .is_some_and(|s| dirs.iter().all(|dir| s > dir.ctime_ns && s > dir.mtime_ns))
    }

    pub(super) fn n_blocks(&self) -> usize {
        self.blocks.len()
    }

    /// Whether block `b` was read (for tests of what a lookup costs).
    #[cfg(test)]
    pub(super) fn blocks_loaded(&self, b: usize) -> bool {
        self.blocks[b].get().is_some()
    }

    /// The fence of block `b`: the escaped path of its first line.
    pub(super) fn fence(&self, b: usize) -> &[u8] {
        let (s, e) = self.fences[b];
        &self.front[s as usize..e as usize]
    }

    /// Block `b`'s bytes and line starts, loaded and checked on first use.
    #[inline]
    pub(super) fn block(&self, b: usize) -> Result<(&[u8], &[u32]), DamagedIndex> {
        // Lookups come here several times a path: the loaded case first, without a closure.
        let loaded = match self.blocks[b].get() {
            Some(loaded) => loaded,
            None => self.blocks[b].get_or_init(|| self.load_block(b)),
        };
        let loaded = match loaded {
            Ok(loaded) => loaded,
            Err(why) => return Err(DamagedIndex(format!("block {b}: {why}"))),
        };
        let bytes = match (&loaded.bytes, &self.source) {
            (Some(bytes), _) => bytes,
            (None, Source::Bytes(data)) => {
                &data[self.front.len() + self.table[b] as usize
                    ..self.front.len() + self.table[b + 1] as usize]
            }
            (None, Source::File(_)) => unreachable!("a file's blocks are read into memory"),
        };
        Ok((bytes, &loaded.starts))
    }

    fn load_block(&self, b: usize) -> Result<Loaded, String> {
        let (start, end) = (self.table[b] as usize, self.table[b + 1] as usize);
        let (owned, bytes): (Option<Box<[u8]>>, &[u8]) = match &self.source {
            Source::Bytes(data) => (
                None,
                &data[self.front.len() + start..self.front.len() + end],
            ),
            Source::File(file) => {
                let read = read_at(file, (self.front.len() + start) as u64, end - start)
                    .ok_or("it cannot be read")?;
                (Some(read.into_boxed_slice()), &[])
            }
        };
        let bytes = owned.as_deref().unwrap_or(bytes);
        let expect = BLOCK.min(self.count - b * BLOCK);
        let mut starts = Vec::with_capacity(expect + 1);
        let mut at = 0;
        let mut previous: Option<&[u8]> = None;
        while at < bytes.len() {
            // The line ends at its newline, its key at the line's first tab. `memchr` scans a
            // word at a time: the guard loads a block for every run of staged paths, and a
            // byte-by-byte scan was a tenth of a commit's check.
            let end = at + memchr::memchr(b'\n', &bytes[at..]).ok_or("a line without its end")?;
            let line = &bytes[at..end];
            let key = &line[..memchr::memchr(b'\t', line).unwrap_or(line.len())];
            if previous.is_some_and(|p| p > key) {
                return Err("lines out of order".into());
            }
            if previous.is_none() && key != self.fence(b) {
                return Err("its first path is not its fence".into());
            }
            previous = Some(key);
            starts.push(at as u32);
            at = end + 1;
        }
        if starts.len() != expect {
            return Err(format!("{} lines, not {expect}", starts.len()));
        }
        starts.push(bytes.len() as u32);
        Ok(Loaded {
            bytes: owned,
            starts,
        })
    }

    /// Claim line `i`, with its newline.
    #[inline]
    pub(super) fn line(&self, i: usize) -> Result<&[u8], DamagedIndex> {
        let (bytes, starts) = self.block(i / BLOCK)?;
        let j = i % BLOCK;
        Ok(&bytes[starts[j] as usize..starts[j + 1] as usize])
    }

    /// Claim line `i`'s escaped path, session and kind, checked against the session table.
    pub(super) fn entry(&self, i: usize) -> Result<(&[u8], usize, ClaimHow), DamagedIndex> {
        let (key, session, how, _) = split_line(self.line(i)?)
            .ok_or_else(|| DamagedIndex(format!("line {i} does not split")))?;
        if session >= self.sessions.len() {
            return Err(DamagedIndex(format!("line {i} names session {session}")));
        }
        Ok((key, session, how))
    }

    /// When the claim on line `i` was made.
    pub fn since(&self, i: usize) -> Result<Time, DamagedIndex> {
        let (_, _, _, since) = split_line(self.line(i)?)
            .ok_or_else(|| DamagedIndex(format!("line {i} does not split")))?;
        parse_since(since).ok_or_else(|| DamagedIndex(format!("line {i} has no time")))
    }
}

/// `len` bytes of `file` from `at`, into fresh memory sized exactly.
fn read_at(file: &std::fs::File, at: u64, len: usize) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    buf.try_reserve_exact(len).ok()?;
    buf.resize(len, 0);
    file.read_exact_at(&mut buf, at).ok()?;
    Some(buf)
}

#[cfg(test)]
mod tests {
    use super::super::claims_index::testing::{bytes_of, since, view_of};
    use super::super::claims_index::{DirStamp, FileId};
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn sessions_and_since_round_trip() {
        let view = view_of(&["a", "b"], [DirStamp::default(); 2], Some(-5));
        let s = view.session("A").expect("indexed");
        assert_eq!(s.path, PathBuf::from("/w/a\tb"));
        assert_eq!(s.counts.other, 2);
        assert_eq!(s.record, FileId("1\t2\t3\t4".into()));
        assert!(s.claims.is_absent());
        assert!(view.session("B").is_none());
        let hits = view.covering("b").unwrap();
        assert_eq!(view.since(hits[0].line).unwrap(), since(1));
        assert_eq!(view.stamp, Some(-5));
    }

    #[test]
    fn racy_index_is_not_trusted() {
        let dir = DirStamp {
            ino: 7,
            mtime_ns: 1_000,
            ctime_ns: 1_000,
        };
        let dirs = [dir, DirStamp::default()];
        assert!(view_of(&[], dirs, Some(1_001)).trusted(dirs));
        // Same clock tick as the stamp: a change right after the build could look identical.
        assert!(!view_of(&[], dirs, Some(1_000)).trusted(dirs));
        assert!(!view_of(&[], dirs, None).trusted(dirs));
        let changed = DirStamp {
            ctime_ns: 1_002,
            ..dir
        };
        assert!(!view_of(&[], dirs, Some(1_001)).trusted([changed, DirStamp::default()]));
        // Either directory counts: claims/ changing is a change.
        assert!(!view_of(&[], dirs, Some(1_001)).trusted([dir, changed]));
        let late_claims = [dir, changed];
        assert!(!view_of(&[], late_claims, Some(1_001)).trusted(late_claims));
    }

    /// A count the file cannot hold, a truncated or padded file, a bad table: refused, never
    /// allocated from.
    #[test]
    fn a_damaged_front_is_refused() {
        let paths: Vec<String> = (0..200).map(|i| format!("p{i:03}")).collect();
        let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
        let good = bytes_of(&paths, [DirStamp::default(); 2], None);
        assert!(ClaimsView::parse(good.clone()).is_some());
        let nl = good.iter().position(|&b| b == b'\n').unwrap();
        let header = std::str::from_utf8(&good[..nl]).unwrap();
        let with_header = |h: &str| [h.as_bytes(), &good[nl..]].concat();
        let mut bad: Vec<Vec<u8>> = Vec::new();
        for (word, value) in [(4, "18446744073709551615"), (5, "4294967295"), (6, "1")] {
            let mut words: Vec<&str> = header.split(' ').collect();
            words[word] = value;
            bad.push(with_header(&words.join(" ")));
        }
        bad.push(with_header(&header.replacen(" v3 ", " v2 ", 1)));
        let mut padded = good.clone();
        padded.push(b'x');
        bad.push(padded);
        bad.push(good[..good.len() - 1].to_vec());
        // The table: its first entry no longer 0.
        let table_at = good.windows(5).position(|w| w == b"p192\n").unwrap() + 5;
        let mut shifted = good.clone();
        shifted[table_at] = 1;
        bad.push(shifted);
        for b in bad {
            assert!(ClaimsView::parse(b).is_none());
        }
    }

    /// A block whose bytes were damaged is found out when it is loaded, as a [`DamagedIndex`].
    #[test]
    fn a_damaged_block_is_an_error_when_read() {
        let paths: Vec<String> = (0..200).map(|i| format!("p{i:03}")).collect();
        let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
        let good = bytes_of(&paths, [DirStamp::default(); 2], None);
        let find = |needle: &str| {
            good.windows(needle.len())
                .rposition(|w| w == needle.as_bytes())
                .unwrap()
        };
        for (from, to) in [
            ("p150\t", "p050\t"),
            ("p192\t0", "p192\t9"),
            ("p130\t0\tx", "p130\t0\tq"),
        ] {
            let pos = find(from);
            let mut bad = good.clone();
            bad[pos..pos + to.len()].copy_from_slice(to.as_bytes());
            let view = ClaimsView::parse(bad).expect("the front is intact");
            let path = &to[..4];
            assert!(
                view.covering(&from[..4]).is_err() || view.covering(path).is_err(),
                "{from:?} -> {to:?}"
            );
        }
    }
}
