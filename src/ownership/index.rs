//! The format of the derived claims index (`claims.index`), and reading it a block at a time.
//!
//! File format (written only whole, by rename under the index lock, by [`serialize`]):
//! - a header line: `git-session claims index v3 <sessions> <claims> <front bytes: 12 digits>
//!   <claim bytes>`, then the identity (inode, mtime ns, ctime ns) of `sessions/` and of
//!   `claims/`, then the stamp (ns, or `-`);
//! - one line per session, sorted by label: `<label>\t` the identity (inode, mtime ns, ctime ns,
//!   size) of its record and of its claims file (all zero when it has none), `<active|creating>`,
//!   its number of commit claims and of other claims, and its escaped worktree path, all
//!   tab-separated;
//! - one fence line per block of [`BLOCK`] claim lines: the escaped path of the block's first
//!   line;
//! - the block table: one little-endian u32 per block, where it starts in the claim lines, and
//!   one more, their length. Everything up to here is the front (`<front bytes>` long);
//! - the claim lines, `<escaped path>\t<session number>\t<c|e|x>\t<since: s.ns>`, sorted by
//!   escaped path, then session.
//!
//! Invariants a reader must not break:
//! - Escaping leaves no byte below 0x20 in a path, so `\t` sorts below every path byte and the
//!   order of lines is the order of their paths (and of their escaped paths as bytes): a lookup
//!   bisects the fences in the front, then the one block they name.
//! - A reader reads the front and only the blocks its lookups land in (`pread`): the guard's
//!   cost follows its staged paths, not the number of claims in the repository (fresh memory is
//!   what costs here: every page of a whole read is a page fault).
//! - A front that does not match the file's length, or whose counts, fences or table are
//!   inconsistent, is refused ([`ClaimsView::parse`] → `None`) and the index rebuilt. A block is
//!   checked when it is loaded (its line count, order, and first path against its fence); a bad
//!   one is a [`DamagedIndex`] error, on which [`super::refresh::with_view`] rebuilds the index
//!   and answers again. Counts from the file are checked against its size before anything is
//!   allocated from them.
//! - The index holds everything ownership is decided on (path, session, kind, since), so a
//!   lookup parses no claims file; the per-session counts let `list` show owned paths from the
//!   front alone.

use crate::clock::Time;
use crate::ownership::ClaimHow;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::PathBuf;
use std::sync::OnceLock;

/// An index larger than this is not one this tool wrote (a million claims fit in 64 MiB).
pub const MAX_INDEX_BYTES: u64 = 256 << 20;
/// Claim lines per block: a block is about one page.
pub const BLOCK: usize = 64;
const HEADER: &str = "git-session claims index v3";
/// The header line is read with the first bytes of the file; it is never longer than this.
const FIRST_READ: usize = 4096;

/// The identity of one file as it was read: inode, mtime and ctime (ns) and size, kept as the
/// text the index holds (`<ino>\t<mtime>\t<ctime>\t<size>`), since identities are only ever
/// compared and written back, and parsing them cost the guard more than anything else in the
/// front. All zero for a file that does not exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileId(Box<str>);

impl Default for FileId {
    fn default() -> FileId {
        FileId("0\t0\t0\t0".into())
    }
}

impl FileId {
    pub fn of(meta: &std::fs::Metadata) -> FileId {
        FileId(
            format!(
                "{}\t{}\t{}\t{}",
                meta.ino(),
                fs_ns_mtime(meta),
                fs_ns_ctime(meta),
                meta.size()
            )
            .into(),
        )
    }

    pub fn is_absent(&self) -> bool {
        *self == FileId::default()
    }
}

pub fn fs_ns_mtime(meta: &std::fs::Metadata) -> i128 {
    i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec())
}

pub fn fs_ns_ctime(meta: &std::fs::Metadata) -> i128 {
    i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec())
}

/// The identity of a store directory (`sessions/`, `claims/`): any entry added, removed or
/// renamed over in it changes its ctime (which no process can set back). All zero when it does
/// not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DirStamp {
    pub ino: u64,
    pub mtime_ns: i128,
    pub ctime_ns: i128,
}

/// How many claims of each kind a session holds: commit claims end with a merge, others do not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClaimCounts {
    pub commit: u32,
    pub other: u32,
}

impl ClaimCounts {
    pub fn add(&mut self, how: ClaimHow) {
        match how {
            ClaimHow::Commit => self.commit += 1,
            ClaimHow::Explicit | ClaimHow::Edit => self.other += 1,
        }
    }

    /// The claims in force for a session that is `live`, its branch `merged` into base or not.
    pub fn in_force(self, live: bool, merged: bool) -> usize {
        match (live, merged) {
            (false, _) => 0,
            (true, true) => self.other as usize,
            (true, false) => self.commit as usize + self.other as usize,
        }
    }
}

/// One session as the index knows it.
#[derive(Debug, Clone)]
pub struct IndexedSession {
    pub label: String,
    pub active: bool,
    pub path: PathBuf,
    pub counts: ClaimCounts,
    /// Its record's identity when it was read.
    pub record: FileId,
    /// Its claims file's identity when it was read; zero when it had none.
    pub claims: FileId,
}

/// One claim line to be written: escaped path, session number, kind, since.
pub type LineOut = (String, u32, ClaimHow, Time);

/// One claim the index lists on a path or a directory above it.
#[derive(Debug, Clone, Copy)]
pub struct Hit {
    /// The claimed path is the asked path's first `len` bytes.
    pub len: usize,
    /// Position in [`ClaimsView::sessions`].
    pub session: usize,
    pub how: ClaimHow,
    /// Its line, for [`ClaimsView::since`]: most lookups never need the time, so it is parsed
    /// only when asked for.
    pub line: usize,
}

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
        let nl = front.iter().position(|&b| b == b'\n')?;
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
            let end = at + front.get(at..)?.iter().position(|&b| b == b'\n')?;
            sessions.push(parse_session(std::str::from_utf8(&front[at..end]).ok()?)?);
            at = end + 1;
        }
        if n_blocks > front.len().saturating_sub(at) / 5 {
            return None;
        }
        let mut fences = Vec::with_capacity(n_blocks);
        for _ in 0..n_blocks {
            let end = at + front.get(at..)?.iter().position(|&b| b == b'\n')?;
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
            // One pass over the line: its key ends at the first tab, the line at the newline.
            let mut key_end = None;
            let mut end = None;
            for (k, &c) in bytes[at..].iter().enumerate() {
                if c == b'\t' && key_end.is_none() {
                    key_end = Some(at + k);
                } else if c == b'\n' {
                    end = Some(at + k);
                    break;
                }
            }
            let end = end.ok_or("a line without its end")?;
            let key = &bytes[at..key_end.filter(|&k| k < end).unwrap_or(end)];
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

/// The front's length, from the header at the start of `first` (the file's first bytes).
fn front_len(first: &[u8]) -> Option<usize> {
    let nl = first.iter().position(|&b| b == b'\n')?;
    let header = std::str::from_utf8(&first[..nl]).ok()?;
    let mut f = header.strip_prefix(HEADER)?.strip_prefix(' ')?.split(' ');
    f.nth(2)?.parse().ok()
}

/// `len` bytes of `file` from `at`, into fresh memory sized exactly.
fn read_at(file: &std::fs::File, at: u64, len: usize) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    buf.try_reserve_exact(len).ok()?;
    buf.resize(len, 0);
    file.read_exact_at(&mut buf, at).ok()?;
    Some(buf)
}

fn parse_session(line: &str) -> Option<IndexedSession> {
    // Thirteen fields: label, record identity (4), claims identity (4), kind, counts (2), path.
    let mut tabs = [0usize; 12];
    let mut n = 0;
    for (i, b) in line.bytes().enumerate() {
        if b == b'\t' {
            *tabs.get_mut(n)? = i;
            n += 1;
        }
    }
    if n != 12 {
        return None;
    }
    let field = |k: usize| {
        let start = if k == 0 { 0 } else { tabs[k - 1] + 1 };
        let end = if k == 12 { line.len() } else { tabs[k] };
        &line[start..end]
    };
    let label = field(0).to_string();
    let record = FileId(line[tabs[0] + 1..tabs[4]].into());
    let claims = FileId(line[tabs[4] + 1..tabs[8]].into());
    let active = match field(9) {
        "active" => true,
        "creating" => false,
        _ => return None,
    };
    let counts = ClaimCounts {
        commit: u32::try_from(digits(field(10).as_bytes())?).ok()?,
        other: u32::try_from(digits(field(11).as_bytes())?).ok()?,
    };
    let path = PathBuf::from(unescape(field(12)));
    Some(IndexedSession {
        label,
        active,
        path,
        counts,
        record,
        claims,
    })
}

/// Orders claim line `line` against the escaped path `key`. Exact because `\t` ends every
/// line's path and sorts below every byte an escaped path can hold.
pub(super) fn cmp_key(line: &[u8], key: &[u8]) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let n = key.len().min(line.len());
    match line[..n].cmp(&key[..n]) {
        Ordering::Equal => match line.get(key.len()) {
            Some(b'\t') => Ordering::Equal,
            Some(_) => Ordering::Greater,
            None => Ordering::Less,
        },
        other => other,
    }
}

/// A claim line's escaped path, session number, kind and (unparsed) since.
fn split_line(line: &[u8]) -> Option<(&[u8], usize, ClaimHow, &[u8])> {
    // `<key>\t<number>\t<c|e|x>\t<since>\n`, read from both ends: the key is everything before
    // the third tab from the end (an escaped key holds no tab).
    let line = line.strip_suffix(b"\n")?;
    let t3 = line.iter().rposition(|&b| b == b'\t')?;
    let (rest, since) = (&line[..t3], &line[t3 + 1..]);
    let (rest, how) = rest.split_at(rest.len().checked_sub(2)?);
    let how = match how {
        b"\tc" => ClaimHow::Commit,
        b"\te" => ClaimHow::Edit,
        b"\tx" => ClaimHow::Explicit,
        _ => return None,
    };
    let t1 = rest.iter().rposition(|&b| b == b'\t')?;
    let (key, number) = (&rest[..t1], &rest[t1 + 1..]);
    if key.contains(&b'\t') || since.contains(&b'\t') {
        return None;
    }
    Some((key, usize::try_from(digits(number)?).ok()?, how, since))
}

/// `<seconds>.<nanoseconds>` as a time.
fn parse_since(text: &[u8]) -> Option<Time> {
    let dot = text.iter().position(|&b| b == b'.')?;
    let (secs, nanos) = (&text[..dot], &text[dot + 1..]);
    let secs = match secs.strip_prefix(b"-") {
        Some(rest) => -i64::try_from(digits(rest)?).ok()?,
        None => i64::try_from(digits(secs)?).ok()?,
    };
    chrono::DateTime::from_timestamp(secs, u32::try_from(digits(nanos)?).ok()?)
}

/// A non-empty run of ASCII digits as a number, `None` on anything else or on overflow (a
/// hand-rolled loop: the guard reads thousands of these, and `str::parse` checks UTF-8 first).
fn digits(text: &[u8]) -> Option<u64> {
    if text.is_empty() || text.len() > 20 {
        return None;
    }
    text.iter().try_fold(0u64, |n, &b| {
        b.is_ascii_digit()
            .then(|| n.checked_mul(10)?.checked_add(u64::from(b - b'0')))
            .flatten()
    })
}

/// The bytes of an index holding `sessions` (sorted by label) and `claims` (sorted by escaped
/// path, then session).
pub fn serialize(
    sessions: &[IndexedSession],
    claims: &[LineOut],
    dirs: [DirStamp; 2],
    stamp: Option<i128>,
) -> Vec<u8> {
    use std::fmt::Write as _;
    let mut body = String::with_capacity(claims.len() * 48);
    let mut fences = String::new();
    let mut table: Vec<u8> = Vec::with_capacity((claims.len() / BLOCK + 2) * 4);
    for (i, (key, number, how, since)) in claims.iter().enumerate() {
        if i % BLOCK == 0 {
            table.extend_from_slice(&(body.len() as u32).to_le_bytes());
            fences.push_str(key);
            fences.push('\n');
        }
        let how = match how {
            ClaimHow::Commit => 'c',
            ClaimHow::Edit => 'e',
            ClaimHow::Explicit => 'x',
        };
        let _ = writeln!(
            body,
            "{key}\t{number}\t{how}\t{}.{}",
            since.timestamp(),
            since.timestamp_subsec_nanos()
        );
    }
    table.extend_from_slice(&(body.len() as u32).to_le_bytes());
    let mut rest = String::with_capacity(160 * sessions.len() + fences.len());
    for s in sessions {
        let _ = write!(rest, "{}", s.label);
        for id in [&s.record, &s.claims] {
            let _ = write!(rest, "\t{}", id.0);
        }
        let _ = writeln!(
            rest,
            "\t{}\t{}\t{}\t{}",
            if s.active { "active" } else { "creating" },
            s.counts.commit,
            s.counts.other,
            escape(&s.path.to_string_lossy())
        );
    }
    rest.push_str(&fences);
    // The header names the front's length, itself included: a fixed-width field.
    let mut header = format!(
        "{HEADER} {} {} {:012} {}",
        sessions.len(),
        claims.len(),
        0,
        body.len()
    );
    for d in dirs {
        let _ = write!(header, " {} {} {}", d.ino, d.mtime_ns, d.ctime_ns);
    }
    let _ = writeln!(
        header,
        " {}",
        stamp.map_or("-".to_string(), |s| s.to_string())
    );
    let front = header.len() + rest.len() + table.len();
    let header = header.replacen(&format!(" {:012} ", 0), &format!(" {front:012} "), 1);
    let mut out = Vec::with_capacity(front + body.len());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(rest.as_bytes());
    out.extend_from_slice(&table);
    out.extend_from_slice(body.as_bytes());
    out
}

/// Backslashes and every byte below 0x20 are escaped: lines stay lines, and `\t` sorts below
/// every byte of an escaped path (the lookup relies on it).
pub fn escape(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.bytes().any(|b| b < 0x20 || b == b'\\') {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

pub fn unescape(s: &str) -> String {
    if !s.contains('\\') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('x') => {
                let hex: String = chars.by_ref().take(2).collect();
                match u8::from_str_radix(&hex, 16) {
                    Ok(b) if b < 0x20 => out.push(char::from(b)),
                    _ => {
                        out.push_str("\\x");
                        out.push_str(&hex);
                    }
                }
            }
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// Views built through the real writer and parser, for the unit tests of this module and of
/// [`super::lookup`].
#[cfg(test)]
pub(in crate::ownership) mod testing {
    use super::*;

    pub(in crate::ownership) fn since(n: i64) -> Time {
        chrono::DateTime::from_timestamp(1_700_000_000 + n, 123_456_789).unwrap()
    }

    /// The bytes of an index of claims on `paths` by one session "A" (explicit, `since` one
    /// second apart).
    pub(in crate::ownership) fn bytes_of(
        paths: &[&str],
        dirs: [DirStamp; 2],
        stamp: Option<i128>,
    ) -> Vec<u8> {
        let sessions = vec![IndexedSession {
            label: "A".into(),
            active: true,
            path: PathBuf::from("/w/a\tb"),
            counts: ClaimCounts {
                commit: 0,
                other: paths.len() as u32,
            },
            record: FileId("1\t2\t3\t4".into()),
            claims: FileId::default(),
        }];
        let mut claims: Vec<LineOut> = paths
            .iter()
            .enumerate()
            .map(|(i, p)| {
                (
                    escape(p).into_owned(),
                    0,
                    ClaimHow::Explicit,
                    since(i as i64),
                )
            })
            .collect();
        claims.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        serialize(&sessions, &claims, dirs, stamp)
    }

    pub(in crate::ownership) fn view_of(
        paths: &[&str],
        dirs: [DirStamp; 2],
        stamp: Option<i128>,
    ) -> ClaimsView {
        ClaimsView::parse(bytes_of(paths, dirs, stamp)).expect("parses")
    }

    /// The same index read from a file, a block at a time.
    pub(in crate::ownership) fn file_view_of(paths: &[&str]) -> (tempfile::TempDir, ClaimsView) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("claims.index");
        std::fs::write(&path, bytes_of(paths, [DirStamp::default(); 2], None)).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let len = file.metadata().unwrap().len();
        (dir, ClaimsView::open(file, len).expect("opens"))
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{bytes_of, since, view_of};
    use super::*;

    #[test]
    fn escape_round_trips() {
        for s in [
            "plain",
            "a\tb",
            "new\nline",
            "back\\slash\\n",
            "\r",
            "\u{1}x\u{1f}",
        ] {
            assert_eq!(unescape(&escape(s)), s);
            assert!(!escape(s).bytes().any(|b| b < 0x20));
        }
    }

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
