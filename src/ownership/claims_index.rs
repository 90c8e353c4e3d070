//! The format of the derived claims index (`claims.index`): its types, its writer
//! ([`serialize`]) and the parsing of its lines; [`super::reader`] reads it a block at a time.
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
//! - The index holds everything ownership is decided on (path, session, kind, since), so a
//!   lookup parses no claims file; the per-session counts let `list` show owned paths from the
//!   front alone.
//! - Numbers read from the file are parsed with overflow checks, and counts are checked against
//!   the file's size before anything is allocated from them ([`super::reader`]).

pub use super::reader::{ClaimsView, DamagedIndex};
use crate::base::clock::Time;
use crate::ownership::ClaimHow;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

/// An index larger than this is not one this tool wrote (a million claims fit in 64 MiB).
pub const MAX_INDEX_BYTES: u64 = 256 << 20;
/// Claim lines per block: a block is about one page.
pub const BLOCK: usize = 64;
pub(super) const HEADER: &str = "git-session claims index v3";

/// The identity of one file as it was read: inode, mtime and ctime (ns) and size, kept as the
/// text the index holds (`<ino>\t<mtime>\t<ctime>\t<size>`), since identities are only ever
/// compared and written back, and parsing them cost the guard more than anything else in the
/// front. All zero for a file that does not exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileId(pub(super) Box<str>);

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

pub(super) fn parse_session(line: &str) -> Option<IndexedSession> {
    // Thirteen fields: label, record identity (4), claims identity (4), kind, counts (2), path.
    let mut tabs = [0usize; 12];
    let mut n = 0;
    for i in memchr::memchr_iter(b'\t', line.as_bytes()) {
        *tabs.get_mut(n)? = i;
        n += 1;
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
pub(super) fn split_line(line: &[u8]) -> Option<(&[u8], usize, ClaimHow, &[u8])> {
    // `<key>\t<number>\t<c|e|x>\t<since>\n`, read from both ends: the key is everything before
    // the third tab from the end (an escaped key holds no tab).
    let line = line.strip_suffix(b"\n")?;
    let t3 = memchr::memrchr(b'\t', line)?;
    let (rest, since) = (&line[..t3], &line[t3 + 1..]);
    let (rest, how) = rest.split_at(rest.len().checked_sub(2)?);
    let how = match how {
        b"\tc" => ClaimHow::Commit,
        b"\te" => ClaimHow::Edit,
        b"\tx" => ClaimHow::Explicit,
        _ => return None,
    };
    let t1 = memchr::memrchr(b'\t', rest)?;
    let (key, number) = (&rest[..t1], &rest[t1 + 1..]);
    if memchr::memchr(b'\t', key).is_some() {
        return None;
    }
    Some((key, usize::try_from(digits(number)?).ok()?, how, since))
}

/// `<seconds>.<nanoseconds>` as a time.
pub(super) fn parse_since(text: &[u8]) -> Option<Time> {
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
pub(super) fn digits(text: &[u8]) -> Option<u64> {
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

/// The front's length, from the header at the start of `first` (the file's first bytes).
pub(super) fn front_len(first: &[u8]) -> Option<usize> {
    let nl = first.iter().position(|&b| b == b'\n')?;
    let header = std::str::from_utf8(&first[..nl]).ok()?;
    let mut f = header.strip_prefix(HEADER)?.strip_prefix(' ')?.split(' ');
    f.nth(2)?.parse().ok()
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
}
