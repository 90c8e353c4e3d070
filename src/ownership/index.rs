//! The format of the derived claims index (`claims.index`) and lookups in place in its bytes.
//!
//! File format (written only whole, by rename under the index lock, by [`serialize`]):
//! - a header line: `git-session claims index v3 <sessions> <claims> <claim bytes>`, then the
//!   identity (inode, mtime ns, ctime ns) of `sessions/` and of `claims/`, then the stamp (ns,
//!   or `-`);
//! - one line per session, sorted by label: `<label>\t` the identity (inode, mtime ns, ctime ns,
//!   size) of its record and of its claims file (all zero when it has none), `<active|creating>`,
//!   its number of commit claims and of other claims, and its escaped worktree path, all
//!   tab-separated;
//! - the claim lines, `<escaped path>\t<session number>\t<c|e|x>\t<since: s.ns>`, sorted by
//!   escaped path, then session;
//! - one little-endian u32 per claim line: its offset in the claim lines.
//!
//! Invariants a reader must not break:
//! - Escaping leaves no byte below 0x20 in a path, so `\t` sorts below every path byte and the
//!   order of lines is the order of their paths: a lookup is a binary search over the offsets
//!   with one comparison per probe, allocating nothing.
//! - A file whose header does not match its length and line table is never searched
//!   ([`ClaimsView::parse`] refuses it, and the reader rebuilds it). Counts from the file are
//!   checked against its size before anything is allocated from them.
//! - The index holds everything ownership is decided on (path, session, kind, since), so a
//!   lookup parses no claims file; the per-session counts let `list` show owned paths the same way.

use crate::clock::Time;
use crate::ownership::ClaimHow;
use anyhow::{Context, Result};
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

/// An index larger than this is not one this tool wrote (a million claims fit in 64 MiB).
pub const MAX_INDEX_BYTES: u64 = 256 << 20;
const HEADER: &str = "git-session claims index v3";

/// The identity of one file as it was read; all zero for a file that does not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FileId {
    pub ino: u64,
    pub mtime_ns: i128,
    pub ctime_ns: i128,
    pub size: u64,
}

impl FileId {
    pub fn of(meta: &std::fs::Metadata) -> FileId {
        FileId {
            ino: meta.ino(),
            mtime_ns: fs_ns_mtime(meta),
            ctime_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
            size: meta.size(),
        }
    }
}

pub fn fs_ns_mtime(meta: &std::fs::Metadata) -> i128 {
    i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec())
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
    pub since: Time,
}

/// All claims of all sessions, looked up in place in the index file's bytes.
pub struct ClaimsView {
    pub sessions: Vec<IndexedSession>,
    pub(super) data: Vec<u8>,
    claims_at: usize,
    claims_len: usize,
    table_at: usize,
    pub(super) count: usize,
    /// `sessions/` and `claims/` as they were before any file was read for this index.
    pub(super) dirs: [DirStamp; 2],
    /// The filesystem's clock when `dirs` were taken (before them), or `None` when unknown.
    pub(super) stamp: Option<i128>,
}

impl ClaimsView {
    /// Checks and indexes the bytes of an index file; `None` when they are not a whole index.
    pub fn parse(data: Vec<u8>) -> Option<ClaimsView> {
        let nl = data.iter().position(|&b| b == b'\n')?;
        let header = std::str::from_utf8(&data[..nl]).ok()?;
        let rest = header.strip_prefix(HEADER)?.strip_prefix(' ')?;
        let mut f = rest.split(' ');
        let n_sessions: usize = f.next()?.parse().ok()?;
        let count: usize = f.next()?.parse().ok()?;
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
        if f.next().is_some() {
            return None;
        }
        let mut at = nl + 1;
        // The counts come from the file: a session line takes at least 24 bytes (twelve tabs,
        // ten digits, a kind, a newline), so a count the bytes cannot hold is damage, not an
        // allocation size.
        if n_sessions > (data.len() - at) / 24 {
            return None;
        }
        let mut sessions = Vec::with_capacity(n_sessions);
        for _ in 0..n_sessions {
            let len = data.get(at..)?.iter().position(|&b| b == b'\n')?;
            let line = std::str::from_utf8(&data[at..at + len]).ok()?;
            at += len + 1;
            sessions.push(parse_session(line)?);
        }
        // The whole file must be exactly what the header announces: a truncated or padded
        // file is rebuilt, never searched.
        let claims_at = at;
        let table_at = claims_at.checked_add(claims_len)?;
        if data.len() != table_at.checked_add(count.checked_mul(4)?)? {
            return None;
        }
        let view = ClaimsView {
            sessions,
            data,
            claims_at,
            claims_len,
            table_at,
            count,
            dirs,
            stamp,
        };
        // Every line starts where the previous one ended with its newline.
        let mut expect = 0usize;
        for i in 0..count {
            if view.offset(i) != expect {
                return None;
            }
            expect = view.end(i);
            if expect <= view.offset(i) || view.data[claims_at + expect - 1] != b'\n' {
                return None;
            }
        }
        (expect == claims_len).then_some(view)
    }

    /// Whether the index can be used as it is, `sessions/` and `claims/` now being `dirs`:
    /// unchanged since it was built and older than its stamp (see [`ClaimsView::load`]).
    pub(super) fn trusted(&self, dirs: [DirStamp; 2]) -> bool {
        self.dirs == dirs
            && self
                .stamp
                .is_some_and(|s| dirs.iter().all(|dir| s > dir.ctime_ns && s > dir.mtime_ns))
    }

    fn offset(&self, i: usize) -> usize {
        let at = self.table_at + 4 * i;
        u32::from_le_bytes(self.data[at..at + 4].try_into().expect("4 bytes")) as usize
    }

    fn end(&self, i: usize) -> usize {
        if i + 1 < self.count {
            self.offset(i + 1).min(self.claims_len)
        } else {
            self.claims_len
        }
    }

    /// Claim line `i`, with its newline.
    pub(super) fn line(&self, i: usize) -> &[u8] {
        &self.data[self.claims_at + self.offset(i)..self.claims_at + self.end(i)]
    }

    /// Claim line `i`, split and checked against the session table.
    pub(super) fn entry(&self, i: usize) -> Result<(&[u8], usize, ClaimHow, Time)> {
        let (key, session, how, since) =
            split_line(self.line(i)).context("a malformed claims index")?;
        if session >= self.sessions.len() {
            anyhow::bail!("a malformed claims index (session {session})");
        }
        Ok((key, session, how, since))
    }
}

fn parse_session(line: &str) -> Option<IndexedSession> {
    let mut f = line.split('\t');
    let label = f.next()?.to_string();
    let mut id = || -> Option<FileId> {
        Some(FileId {
            ino: f.next()?.parse().ok()?,
            mtime_ns: f.next()?.parse().ok()?,
            ctime_ns: f.next()?.parse().ok()?,
            size: f.next()?.parse().ok()?,
        })
    };
    let (record, claims) = (id()?, id()?);
    let active = match f.next()? {
        "active" => true,
        "creating" => false,
        _ => return None,
    };
    let counts = ClaimCounts {
        commit: f.next()?.parse().ok()?,
        other: f.next()?.parse().ok()?,
    };
    let path = PathBuf::from(unescape(f.next()?));
    if f.next().is_some() {
        return None;
    }
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

/// A claim line's escaped path, session number, kind and since.
fn split_line(line: &[u8]) -> Option<(&[u8], usize, ClaimHow, Time)> {
    let line = line.strip_suffix(b"\n")?;
    let mut f = line.split(|&b| b == b'\t');
    let key = f.next()?;
    let number = std::str::from_utf8(f.next()?).ok()?.parse().ok()?;
    let how = match f.next()? {
        b"c" => ClaimHow::Commit,
        b"e" => ClaimHow::Edit,
        b"x" => ClaimHow::Explicit,
        _ => return None,
    };
    let (secs, nanos) = std::str::from_utf8(f.next()?).ok()?.split_once('.')?;
    let since = chrono::DateTime::from_timestamp(secs.parse().ok()?, nanos.parse().ok()?)?;
    if f.next().is_some() {
        return None;
    }
    Some((key, number, how, since))
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
    let mut table: Vec<u8> = Vec::with_capacity(claims.len() * 4);
    for (key, number, how, since) in claims {
        table.extend_from_slice(&(body.len() as u32).to_le_bytes());
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
    let mut out = String::with_capacity(body.len() + 160 * (sessions.len() + 1));
    let _ = write!(
        out,
        "{HEADER} {} {} {}",
        sessions.len(),
        claims.len(),
        body.len()
    );
    for d in dirs {
        let _ = write!(out, " {} {} {}", d.ino, d.mtime_ns, d.ctime_ns);
    }
    let _ = writeln!(out, " {}", stamp.map_or("-".to_string(), |s| s.to_string()));
    for s in sessions {
        let _ = write!(out, "{}", s.label);
        for id in [s.record, s.claims] {
            let _ = write!(
                out,
                "\t{}\t{}\t{}\t{}",
                id.ino, id.mtime_ns, id.ctime_ns, id.size
            );
        }
        let _ = writeln!(
            out,
            "\t{}\t{}\t{}\t{}",
            if s.active { "active" } else { "creating" },
            s.counts.commit,
            s.counts.other,
            escape(&s.path.to_string_lossy())
        );
    }
    out.push_str(&body);
    let mut out = out.into_bytes();
    out.extend_from_slice(&table);
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

/// A view of claims on `paths` by one session "A" (explicit, `since` one second apart), built
/// through the real writer and parser.
#[cfg(test)]
pub(super) mod testing {
    use super::*;

    pub(in crate::ownership) fn since(n: i64) -> Time {
        chrono::DateTime::from_timestamp(1_700_000_000 + n, 123_456_789).unwrap()
    }

    pub(in crate::ownership) fn view_of(
        paths: &[&str],
        dirs: [DirStamp; 2],
        stamp: Option<i128>,
    ) -> ClaimsView {
        let sessions = vec![IndexedSession {
            label: "A".into(),
            active: true,
            path: PathBuf::from("/w/a\tb"),
            counts: ClaimCounts {
                commit: 0,
                other: paths.len() as u32,
            },
            record: FileId {
                ino: 1,
                mtime_ns: 2,
                ctime_ns: 3,
                size: 4,
            },
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
        ClaimsView::parse(serialize(&sessions, &claims, dirs, stamp)).expect("parses")
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{since, view_of};
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
        assert_eq!(s.record.size, 4);
        assert!(view.session("B").is_none());
        let hits = view.covering("b").unwrap();
        assert_eq!(hits[0].since, since(1));
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

    /// A count the file cannot hold, a truncated or padded file: refused, never allocated from.
    #[test]
    fn damaged_bytes_are_refused() {
        let good = serialize(&[], &[], [DirStamp::default(); 2], None);
        assert!(ClaimsView::parse(good.clone()).is_some());
        let text = String::from_utf8(good.clone()).unwrap();
        for bad in [
            text.replacen(" 0 0 0 ", " 18446744073709551615 0 0 ", 1),
            text.replacen(" 0 0 0 ", " 0 1 0 ", 1),
            text.replacen("v3", "v2", 1),
            format!("{text}x"),
        ] {
            assert!(
                ClaimsView::parse(bad.clone().into_bytes()).is_none(),
                "{bad:?}"
            );
        }
    }
}
