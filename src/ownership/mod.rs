//! Path ownership: who owns a repo-relative path, and recording claims.
//!
//! Invariants a reader must not break:
//! - The session records (`sessions/<label>.toml`, field `claims`) are the source of truth. The
//!   derived `claims.index` only narrows the search: every candidate it yields is confirmed
//!   against the owner's record before it counts, so an index that still lists a released claim
//!   is harmless.
//! - The index can never *miss* a claim. It records the identity of `sessions/` (inode, mtime,
//!   ctime) taken after a filesystem-clock stamp and before any record was read, and the
//!   identity of each record file (inode, mtime, ctime, size, taken with `fstat` on the very
//!   descriptor it read). A load trusts it on one `stat` of `sessions/` when that identity is
//!   unchanged and older than the stamp (every store write of a record creates a lock file in
//!   `sessions/` and renames it over the record, which moves the directory's ctime past the
//!   stamp; see [`ClaimsView::load`]). Otherwise every record is stat'ed and a changed, new or
//!   vanished record is re-read before anything is decided. Either way no TOML is parsed per
//!   session, so the guard's work grows with staged and owned paths, not with session count.
//! - Lookups are binary searches over the index file's bytes (see [`ClaimsView`]), which rely
//!   on its order; the file is only ever written whole, by our writer, by rename, and a file
//!   whose header does not match its length and line table is rebuilt, never searched.
//! - Claims are made under the `claims.index` lock (check owners, write the record, rewrite the
//!   index), so two sessions claiming one path at once cannot both win: first claim wins.
//! - A claim is in force while its session is live (`session::is_live`); a claim made by commit
//!   also ends when the session's branch is merged into its base. Paths matching `[guard] shared`
//!   are owned by nobody. A claim of a directory covers everything below it.
//! - Liveness (index and reflog mtimes) and merge state are computed only for sessions that hold
//!   a candidate claim on a path being asked about.

use crate::clock::{self, Time};
use crate::config::Config;
use crate::error::UserError;
use crate::git::Repo;
use crate::session::{self, Claim, ClaimHow, RecordState, SessionRecord};
use crate::store::{LockFile, Store};
use anyhow::{anyhow, Context, Result};
use std::collections::HashMap;
use std::io::ErrorKind;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The derived claims index, relative to the store root.
pub const INDEX: &str = "claims.index";
/// An index larger than this is not one this tool wrote (a million claims fit in 64 MiB).
const MAX_INDEX_BYTES: u64 = 256 << 20;
const HEADER: &str = "git-session claims index v2";

/// Another live session's claim on a path.
#[derive(Debug, Clone, PartialEq)]
pub struct Owner {
    pub label: String,
    pub branch: String,
    /// The claimed path (the asked path itself, or a directory above it).
    pub path: String,
    pub how: ClaimHow,
    pub since: Time,
    pub last_activity: Time,
}

/// The live session other than `me` that owns `path` (repo-relative, `/`-separated), if any.
/// Paths matching `[guard] shared` are owned by nobody.
pub fn owner_of(
    repo: &Repo,
    config: &Config,
    path: &str,
    me: Option<&str>,
) -> Result<Option<Owner>> {
    let store = repo.store();
    let view = ClaimsView::load(&store, None)?;
    let mut resolver = Resolver::new(repo, config, &store, &view);
    Ok(resolver.resolve(path, me)?.owner)
}

/// Records `paths` as claimed by session `label` with `how` (and refreshes its last_seen). Paths
/// another live session owns are not claimed; they are returned with their owner (first claim
/// wins).
pub fn claim(
    repo: &Repo,
    config: &Config,
    label: &str,
    paths: &[String],
    how: ClaimHow,
) -> Result<Vec<Owner>> {
    let store = repo.store();
    let mut lock = store.lock(INDEX)?;
    let view = ClaimsView::load(&store, None)?;
    let mut refused = Vec::new();
    let mut free = Vec::new();
    {
        let mut resolver = Resolver::new(repo, config, &store, &view);
        for path in paths {
            let path = normalize_rel(path);
            if path.is_empty() {
                continue;
            }
            // First claim wins for every path the new claim covers: the path itself and what
            // is above it (resolve), and, for a directory, everything below it.
            if let Some(owner) = resolver.resolve(&path, Some(label))?.owner {
                refused.push(owner);
                continue;
            }
            let below = resolver.owners_below(&path, Some(label))?;
            if below.is_empty() {
                free.push(path);
            } else {
                refused.extend(below);
            }
        }
    }
    let now = clock::now();
    let updated = store.update::<SessionRecord, _>(&SessionRecord::store_path(label), |r| {
        let Some(mut r) = r else {
            return Ok(None);
        };
        for path in &free {
            match r.claims.iter_mut().find(|c| &c.path == path) {
                Some(existing) => {
                    // Keep the first `since`; a more durable kind replaces a weaker one.
                    if durability(how) > durability(existing.how) {
                        existing.how = how;
                    }
                }
                None => r.claims.push(Claim {
                    path: path.clone(),
                    how,
                    since: now,
                }),
            }
        }
        if r.last_seen < now {
            r.last_seen = now;
        }
        Ok(Some(r))
    })?;
    if updated.is_none() {
        return Err(session::no_such_session(label).into());
    }
    index_written(write_index(&store, &mut lock));
    Ok(refused)
}

/// Removes claims of session `label`: the given paths, or all of them with `paths == None`.
/// Returns the paths actually released.
pub fn release(repo: &Repo, label: &str, paths: Option<&[String]>) -> Result<Vec<String>> {
    let store = repo.store();
    let mut lock = store.lock(INDEX)?;
    let now = clock::now();
    let mut released = Vec::new();
    let updated = store.update::<SessionRecord, _>(&SessionRecord::store_path(label), |r| {
        let Some(mut r) = r else {
            return Ok(None);
        };
        let wanted: Option<Vec<String>> =
            paths.map(|p| p.iter().map(|p| normalize_rel(p)).collect());
        r.claims.retain(|c| {
            let drop = wanted.as_ref().is_none_or(|w| w.contains(&c.path));
            if drop {
                released.push(c.path.clone());
            }
            !drop
        });
        if r.last_seen < now {
            r.last_seen = now;
        }
        Ok(Some(r))
    })?;
    if updated.is_none() {
        return Err(session::no_such_session(label).into());
    }
    index_written(write_index(&store, &mut lock));
    Ok(released)
}

/// Explicit claims outlive a merge; edits outlive it too; commit claims end with it.
fn durability(how: ClaimHow) -> u8 {
    match how {
        ClaimHow::Commit => 0,
        ClaimHow::Edit => 1,
        ClaimHow::Explicit => 2,
    }
}

/// Collapses `.`/empty components and leading `./`; never produces a leading `/`.
pub fn normalize_rel(path: &str) -> String {
    path.split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect::<Vec<_>>()
        .join("/")
}

/// The record, the source of truth, is already written: a derived index that cannot be written
/// is a warning (it is rebuilt from the records next time), never a failed command.
fn index_written(result: Result<()>) {
    if let Err(e) = result {
        crate::output::warn(format!(
            "the claims index was not updated ({e:#}); it is rebuilt from the records when read"
        ));
    }
}

/// Rewrites the index from the current records, under the held index lock.
fn write_index(store: &Store, lock: &mut LockFile) -> Result<()> {
    let stamp = fs_ns_mtime(&lock.stamp()?);
    let dir = DirStamp::of(&store.path("sessions"))?;
    let old = ClaimsView::read(store);
    let view = ClaimsView::refresh(store, old, dir, Some(stamp))?;
    lock.commit(&view.data)
}

/// The identity of one record file as it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileId {
    ino: u64,
    mtime_ns: i128,
    ctime_ns: i128,
    size: u64,
}

impl FileId {
    fn of(meta: &std::fs::Metadata) -> FileId {
        FileId {
            ino: meta.ino(),
            mtime_ns: fs_ns_mtime(meta),
            ctime_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
            size: meta.size(),
        }
    }
}

fn fs_ns_mtime(meta: &std::fs::Metadata) -> i128 {
    i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec())
}

/// The identity of the `sessions/` directory: any entry added, removed or renamed over in it
/// changes its ctime (which no process can set back). All zero when it does not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct DirStamp {
    ino: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

impl DirStamp {
    fn of(dir: &Path) -> Result<DirStamp> {
        match std::fs::metadata(dir) {
            Ok(meta) => {
                let id = FileId::of(&meta);
                Ok(DirStamp {
                    ino: id.ino,
                    mtime_ns: id.mtime_ns,
                    ctime_ns: id.ctime_ns,
                })
            }
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(DirStamp::default()),
            Err(e) => Err(e).with_context(|| format!("reading {}", dir.display())),
        }
    }
}

/// One session as the index knows it.
#[derive(Debug, Clone)]
pub struct IndexedSession {
    pub label: String,
    pub active: bool,
    pub path: PathBuf,
    id: FileId,
}

/// One claim the index lists on a path or a directory above it.
#[derive(Debug, Clone, Copy)]
pub struct Hit {
    /// The claimed path is the asked path's first `len` bytes.
    pub len: usize,
    /// Position in [`ClaimsView::sessions`].
    pub session: usize,
    pub how: ClaimHow,
}

/// All claims of all sessions, looked up in place in the index file's bytes.
///
/// File format (written only whole, by rename under the index lock):
/// - a header line: `git-session claims index v2 <sessions> <claims> <claim bytes> <dir ino>
///   <dir mtime ns> <dir ctime ns> <stamp ns>`;
/// - one line per session, sorted by label: `<label>\t<ino>\t<mtime ns>\t<ctime ns>\t<size>\t
///   <active|creating>\t<escaped worktree path>`;
/// - the claim lines, `<escaped path>\t<session number>\t<c|e|x>`, sorted by escaped path;
/// - one little-endian u32 per claim line: its offset in the claim lines.
///
/// Escaping leaves no byte below 0x20 in a path, so `\t` sorts below every path byte and the
/// order of lines is the order of their paths: a lookup is a binary search over the offsets
/// with one comparison per probe, allocating nothing. `since` is not indexed: every candidate is
/// confirmed against its record, which has it.
pub struct ClaimsView {
    pub sessions: Vec<IndexedSession>,
    data: Vec<u8>,
    claims_at: usize,
    claims_len: usize,
    table_at: usize,
    count: usize,
    dir: DirStamp,
    /// The filesystem's clock when `dir` was taken (before it), or `None` when unknown.
    stamp: Option<i128>,
}

impl ClaimsView {
    /// Loads the index and makes sure it is up to date with the records.
    ///
    /// Fast path: the index is trusted without looking at any record when `sessions/` still has
    /// the identity the index recorded *and* that identity is older than the stamp, a reading of
    /// the filesystem's clock taken (by writing the lock file) before the directory was looked
    /// at and before any record was read for the index. Why this cannot miss a claim: a claim
    /// exists only in a record; the store writes a record by creating `<label>.toml.lock` in
    /// `sessions/` and renaming it over the record, and removes records by unlinking; each of
    /// these sets the directory's ctime to the filesystem clock at that moment. A change made
    /// after the index looked at the directory therefore gets a ctime no earlier than the stamp,
    /// which is later than the recorded ctime, so the identity differs. A change made before was
    /// seen by the reads that built the index. When the recorded ctime is not older than the
    /// stamp (a change in the same clock tick as the build: git's "racily clean" case) the
    /// index is not trusted and every record is stat'ed as before. Writes that bypass the store
    /// (editing a record in place) are outside this protocol.
    ///
    /// Otherwise every record is stat'ed and compared with the identity the index holds for it
    /// (inode, mtime, ctime, size); changed, new or vanished records are re-read. When
    /// `write_back` allows, the refreshed index is written (best effort: a busy lock skips it).
    pub fn load(store: &Store, write_back: Option<Duration>) -> Result<ClaimsView> {
        let sessions_dir = store.path("sessions");
        let dir = DirStamp::of(&sessions_dir)?;
        let old = ClaimsView::read(store);
        if old.as_ref().is_some_and(|v| v.trusted(dir)) {
            return Ok(old.expect("checked"));
        }
        let lock = write_back.and_then(|wait| store.clone().with_lock_wait(wait).lock(INDEX).ok());
        let Some(mut lock) = lock else {
            return ClaimsView::refresh(store, old, dir, None);
        };
        // Under the lock, in the order the fast path relies on: stamp, directory, records.
        // The write-back is best effort: without a stamp, answer without writing.
        let Ok(stamp) = lock.stamp().map(|m| fs_ns_mtime(&m)) else {
            return ClaimsView::refresh(store, old, dir, None);
        };
        let dir = DirStamp::of(&sessions_dir)?;
        let view = ClaimsView::refresh(store, old, dir, Some(stamp))?;
        let _ = lock.commit(&view.data);
        Ok(view)
    }

    /// The index as stored, or `None` when it is missing or does not parse (it is derived, so
    /// it is then rebuilt from the records).
    fn read(store: &Store) -> Option<ClaimsView> {
        let path = store.path(INDEX);
        match crate::store::read_state_bytes(&path, MAX_INDEX_BYTES).ok()? {
            crate::store::StateBytes::Bytes(data, _) => ClaimsView::parse(data),
            crate::store::StateBytes::Absent => None,
            crate::store::StateBytes::Bad(why) => {
                // Derived: move it away so the rebuilt index can be written in its place.
                store.set_aside(&path, &why);
                None
            }
        }
    }

    /// Brings `old` up to date with the records: one `readdir`, one `stat` per record, and a
    /// read of each record whose identity changed. `dir` must have been taken before this runs.
    fn refresh(
        store: &Store,
        old: Option<ClaimsView>,
        dir: DirStamp,
        stamp: Option<i128>,
    ) -> Result<ClaimsView> {
        let sessions_dir = store.path("sessions");
        let mut on_disk: Vec<(String, FileId)> = Vec::new();
        match std::fs::read_dir(&sessions_dir) {
            Ok(entries) => {
                for entry in entries {
                    let entry =
                        entry.with_context(|| format!("reading {}", sessions_dir.display()))?;
                    let name = entry.file_name();
                    let Some(label) = name.to_str().and_then(|n| n.strip_suffix(".toml")) else {
                        continue;
                    };
                    if session::validate_label(label, "x/").is_err() {
                        continue;
                    }
                    // Not followed: a symlink's own identity; the read sets it aside.
                    let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
                        continue;
                    };
                    on_disk.push((label.to_string(), FileId::of(&meta)));
                }
            }
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("reading {}", sessions_dir.display())),
        }
        on_disk.sort_by(|a, b| a.0.cmp(&b.0));
        let old_sessions: HashMap<&str, (usize, FileId)> = old
            .iter()
            .flat_map(|v| v.sessions.iter().enumerate())
            .map(|(i, s)| (s.label.as_str(), (i, s.id)))
            .collect();
        let mut sessions: Vec<IndexedSession> = Vec::with_capacity(on_disk.len());
        let mut claims: Vec<(String, u32, ClaimHow)> = Vec::new();
        // Old session number -> new one, for the sessions whose record did not change.
        let mut renumber: Vec<Option<u32>> =
            vec![None; old.as_ref().map_or(0, |v| v.sessions.len())];
        for (label, id) in &on_disk {
            let number = sessions.len() as u32;
            match old_sessions.get(label.as_str()) {
                Some((i, known)) if known == id => {
                    let s = &old.as_ref().expect("known").sessions[*i];
                    sessions.push(s.clone());
                    renumber[*i] = Some(number);
                }
                _ => {
                    if let Some((record, id)) = read_record(store, label)? {
                        sessions.push(IndexedSession {
                            label: record.label.clone(),
                            active: record.state == RecordState::Active,
                            path: record.path.clone(),
                            id,
                        });
                        claims.extend(
                            record
                                .claims
                                .iter()
                                .map(|c| (escape(&c.path).into_owned(), number, c.how)),
                        );
                    }
                }
            }
        }
        if let Some(old) = &old {
            for i in 0..old.count {
                let line = old.line(i);
                let (key, number, how) = split_line(line).context("a malformed claims index")?;
                if let Some(new) = renumber.get(number).copied().flatten() {
                    let key = std::str::from_utf8(key).context("a malformed claims index")?;
                    claims.push((key.to_string(), new, how));
                }
            }
        }
        claims.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()).then(a.1.cmp(&b.1)));
        let data = serialize(&sessions, &claims, dir, stamp);
        ClaimsView::parse(data).context("building the claims index")
    }

    fn parse(data: Vec<u8>) -> Option<ClaimsView> {
        let nl = data.iter().position(|&b| b == b'\n')?;
        let header = std::str::from_utf8(&data[..nl]).ok()?;
        let rest = header.strip_prefix(HEADER)?.strip_prefix(' ')?;
        let mut f = rest.split(' ');
        let n_sessions: usize = f.next()?.parse().ok()?;
        let count: usize = f.next()?.parse().ok()?;
        let claims_len: usize = f.next()?.parse().ok()?;
        let dir = DirStamp {
            ino: f.next()?.parse().ok()?,
            mtime_ns: f.next()?.parse().ok()?,
            ctime_ns: f.next()?.parse().ok()?,
        };
        let stamp = match f.next()? {
            "-" => None,
            s => Some(s.parse().ok()?),
        };
        if f.next().is_some() {
            return None;
        }
        let mut at = nl + 1;
        // The counts come from the file: a session line takes at least 8 bytes (six tabs, a
        // kind, a newline), so a count the bytes cannot hold is damage, not an allocation size.
        if n_sessions > (data.len() - at) / 8 {
            return None;
        }
        let mut sessions = Vec::with_capacity(n_sessions);
        for _ in 0..n_sessions {
            let len = data.get(at..)?.iter().position(|&b| b == b'\n')?;
            let line = std::str::from_utf8(&data[at..at + len]).ok()?;
            at += len + 1;
            let mut f = line.split('\t');
            let label = f.next()?.to_string();
            let id = FileId {
                ino: f.next()?.parse().ok()?,
                mtime_ns: f.next()?.parse().ok()?,
                ctime_ns: f.next()?.parse().ok()?,
                size: f.next()?.parse().ok()?,
            };
            let active = f.next()? == "active";
            let path = PathBuf::from(unescape(f.next()?));
            sessions.push(IndexedSession {
                label,
                active,
                path,
                id,
            });
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
            dir,
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

    /// Whether the index can be used as it is, `sessions/` now being `dir` (see [`Self::load`]).
    fn trusted(&self, dir: DirStamp) -> bool {
        self.dir == dir
            && self
                .stamp
                .is_some_and(|s| s > dir.ctime_ns && s > dir.mtime_ns)
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
    fn line(&self, i: usize) -> &[u8] {
        &self.data[self.claims_at + self.offset(i)..self.claims_at + self.end(i)]
    }

    /// Claims on exactly `path` (any session).
    fn exact(&self, path: &str, out: &mut Vec<Hit>) -> Result<()> {
        self.exact_from(path, 0, out).map(|_| ())
    }

    /// [`Self::exact`], starting from `from`, a guess at where `path`'s lines begin (the answer
    /// for the previous query of a sorted run: the guard asks for its staged paths in order).
    /// Returns where they begin, for the next query.
    fn exact_from(&self, path: &str, from: usize, out: &mut Vec<Hit>) -> Result<usize> {
        let key = escape(path);
        let key = key.as_bytes();
        let start = self.lower_bound(key, from);
        let mut at = start;
        while at < self.count && cmp_key(self.line(at), key) == std::cmp::Ordering::Equal {
            let (_, session, how) =
                split_line(self.line(at)).context("a malformed claims index")?;
            if session >= self.sessions.len() {
                anyhow::bail!("a malformed claims index (session {session})");
            }
            out.push(Hit {
                len: path.len(),
                session,
                how,
            });
            at += 1;
        }
        Ok(start)
    }

    /// The first line not ordered before `key`. A `from` whose previous line is ordered before
    /// `key` is a lower bound: the search gallops forward from it (a few probes when the answer
    /// is near) before bisecting. Any other `from` is ignored.
    fn lower_bound(&self, key: &[u8], from: usize) -> usize {
        let before = |i: usize| cmp_key(self.line(i), key) == std::cmp::Ordering::Less;
        let (mut lo, mut hi) = (0, self.count);
        if from > 0 && from <= self.count && before(from - 1) {
            lo = from;
            let mut step = 1;
            loop {
                let probe = lo + step - 1;
                if probe >= self.count {
                    break;
                }
                if !before(probe) {
                    hi = probe;
                    break;
                }
                lo = probe + 1;
                step *= 2;
            }
        }
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if before(mid) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// The sessions holding a claim strictly below the directory `dir` (on `dir/...`). Escaping
    /// is per character, so those lines are one contiguous run starting at `dir/`.
    pub fn sessions_below(&self, dir: &str) -> Result<Vec<usize>> {
        let mut out = Vec::new();
        if self.count == 0 || dir.is_empty() {
            return Ok(out);
        }
        let mut prefix = escape(dir).into_owned();
        prefix.push('/');
        let prefix = prefix.as_bytes();
        let mut at = self.lower_bound(prefix, 0);
        while at < self.count && self.line(at).starts_with(prefix) {
            let (_, session, _) = split_line(self.line(at)).context("a malformed claims index")?;
            if session >= self.sessions.len() {
                anyhow::bail!("a malformed claims index (session {session})");
            }
            if !out.contains(&session) {
                out.push(session);
            }
            at += 1;
        }
        Ok(out)
    }

    /// Claims on `path` or on any directory above it.
    pub fn covering(&self, path: &str) -> Result<Vec<Hit>> {
        let mut out = Vec::new();
        if self.count == 0 {
            return Ok(out);
        }
        self.exact(path, &mut out)?;
        let mut end = path.len();
        while let Some(slash) = path[..end].rfind('/') {
            self.exact(&path[..slash], &mut out)?;
            end = slash;
        }
        Ok(out)
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

/// Orders claim line `line` against the escaped path `key`. Exact because `\t` ends every
/// line's path and sorts below every byte an escaped path can hold.
fn cmp_key(line: &[u8], key: &[u8]) -> std::cmp::Ordering {
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

/// A claim line's escaped path, session number and kind.
fn split_line(line: &[u8]) -> Option<(&[u8], usize, ClaimHow)> {
    let line = line.strip_suffix(b"\n")?;
    let tab = line.iter().position(|&b| b == b'\t')?;
    let (key, rest) = (&line[..tab], &line[tab + 1..]);
    let tab = rest.iter().position(|&b| b == b'\t')?;
    let number = std::str::from_utf8(&rest[..tab]).ok()?.parse().ok()?;
    let how = match &rest[tab + 1..] {
        b"c" => ClaimHow::Commit,
        b"e" => ClaimHow::Edit,
        b"x" => ClaimHow::Explicit,
        _ => return None,
    };
    Some((key, number, how))
}

fn serialize(
    sessions: &[IndexedSession],
    claims: &[(String, u32, ClaimHow)],
    dir: DirStamp,
    stamp: Option<i128>,
) -> Vec<u8> {
    use std::fmt::Write as _;
    let mut body = String::with_capacity(claims.len() * 32);
    let mut table: Vec<u8> = Vec::with_capacity(claims.len() * 4);
    for (key, number, how) in claims {
        table.extend_from_slice(&(body.len() as u32).to_le_bytes());
        let how = match how {
            ClaimHow::Commit => 'c',
            ClaimHow::Edit => 'e',
            ClaimHow::Explicit => 'x',
        };
        let _ = writeln!(body, "{key}\t{number}\t{how}");
    }
    let mut out = String::with_capacity(body.len() + 128 * (sessions.len() + 1));
    let _ = writeln!(
        out,
        "{HEADER} {} {} {} {} {} {} {}",
        sessions.len(),
        claims.len(),
        body.len(),
        dir.ino,
        dir.mtime_ns,
        dir.ctime_ns,
        stamp.map_or("-".to_string(), |s| s.to_string())
    );
    for s in sessions {
        let _ = writeln!(
            out,
            "{}\t{}\t{}\t{}\t{}\t{}\t{}",
            s.label,
            s.id.ino,
            s.id.mtime_ns,
            s.id.ctime_ns,
            s.id.size,
            if s.active { "active" } else { "creating" },
            escape(&s.path.to_string_lossy())
        );
    }
    out.push_str(&body);
    let mut out = out.into_bytes();
    out.extend_from_slice(&table);
    out
}

/// `claimed explicitly`, `claimed by commit`, `claimed by its agent's edit`.
pub fn how_phrase(how: ClaimHow) -> &'static str {
    match how {
        ClaimHow::Explicit => "claimed explicitly",
        ClaimHow::Commit => "claimed by commit",
        ClaimHow::Edit => "claimed by its agent's edit",
    }
}

/// Backslashes and every byte below 0x20 are escaped: lines stay lines, and `\t` sorts below
/// every byte of an escaped path (the lookup relies on it).
fn escape(s: &str) -> std::borrow::Cow<'_, str> {
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

fn unescape(s: &str) -> String {
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

/// Reads one record together with the identity of the file it came from. A record that does
/// not parse goes through the store, which sets it aside and reports it.
fn read_record(store: &Store, label: &str) -> Result<Option<(SessionRecord, FileId)>> {
    // The store's one reader: no symlink followed, no FIFO waited on, bounded; a bad file is
    // set aside there and reads as absent here.
    match store.read_with_meta::<SessionRecord>(&SessionRecord::store_path(label))? {
        Some((r, meta)) if r.label == label => Ok(Some((r, FileId::of(&meta)))),
        _ => Ok(None),
    }
}

/// What asking about one path found.
#[derive(Debug, Default)]
pub struct Resolution {
    /// The live owner, if any.
    pub owner: Option<Owner>,
    /// Claims that would own the path had their session not stopped being live.
    pub lapsed: Vec<Owner>,
    /// Whether the asking session itself holds a claim covering the path (per the index).
    pub held: bool,
}

/// What the resolver learned about one session (each computed at most once).
struct SessionFacts {
    record: SessionRecord,
    last_activity: Time,
    live: bool,
    merged: Option<bool>,
}

/// Answers ownership questions against one loaded view, caching per-session facts.
pub struct Resolver<'a> {
    repo: &'a Repo,
    config: &'a Config,
    store: &'a Store,
    view: &'a ClaimsView,
    /// Built on first use: most guard runs never ask.
    shared: std::cell::OnceCell<globset::GlobSet>,
    now: Time,
    facts: HashMap<String, Option<SessionFacts>>,
    /// Claims found on each directory asked about: staged paths share their directories.
    dir_hits: HashMap<String, Vec<Hit>>,
    /// Where the last path asked about begins in the claims index: paths come sorted.
    next_line: usize,
    /// Branch tips being merged in (MERGE_HEAD): their sessions' claims do not block the merge.
    merging: Vec<git2::Oid>,
}

impl<'a> Resolver<'a> {
    pub fn new(
        repo: &'a Repo,
        config: &'a Config,
        store: &'a Store,
        view: &'a ClaimsView,
    ) -> Resolver<'a> {
        Resolver {
            repo,
            config,
            store,
            view,
            shared: std::cell::OnceCell::new(),
            now: clock::now(),
            facts: HashMap::new(),
            dir_hits: HashMap::new(),
            next_line: 0,
            merging: Vec::new(),
        }
    }

    pub fn merging(mut self, tips: Vec<git2::Oid>) -> Self {
        self.merging = tips;
        self
    }

    pub fn is_shared(&self, path: &str) -> bool {
        !self.config.guard_shared.is_empty()
            && self
                .shared
                .get_or_init(|| self.config.shared_matcher())
                .is_match(path)
    }

    /// The owner of `path` other than `me`, and claims on it that lapsed with their session.
    pub fn resolve(&mut self, path: &str, me: Option<&str>) -> Result<Resolution> {
        let mut res = Resolution::default();
        if self.view.is_empty() || self.is_shared(path) {
            return Ok(res);
        }
        let mut candidates: Vec<(Owner, bool)> = Vec::new();
        let view = self.view;
        // When claims of two sessions cover one path (a directory claim over a file claim, made
        // before first-claim-wins covered both directions, or edited in by hand), the earliest
        // claim wins: mine, when it came first, is not overridden by a later one.
        let mut my_since: Option<Time> = None;
        for c in self.covering(path)? {
            let label = view.sessions[c.session].label.as_str();
            if Some(label) == me {
                res.held = true;
                let claimed = &path[..c.len];
                if let Some(facts) = self.facts_for(label)? {
                    if let Some(k) = facts.record.claims.iter().find(|k| k.path == claimed) {
                        my_since = Some(my_since.map_or(k.since, |s: Time| s.min(k.since)));
                    }
                }
                continue;
            }
            let claimed = &path[..c.len];
            let Some(facts) = self.facts_for(label)? else {
                continue;
            };
            // Confirm against the record: the index may still list a released claim.
            let Some(claim) = facts
                .record
                .claims
                .iter()
                .find(|k| k.path == claimed)
                .cloned()
            else {
                continue;
            };
            let owner = Owner {
                label: facts.record.label.clone(),
                branch: facts.record.branch.clone(),
                path: claim.path.clone(),
                how: claim.how,
                since: claim.since,
                last_activity: facts.last_activity,
            };
            let live = facts.live;
            if live && claim.how == ClaimHow::Commit && self.merged(label)? {
                continue;
            }
            if self.being_merged(label) {
                continue;
            }
            candidates.push((owner, live));
        }
        candidates.sort_by(|a, b| a.0.since.cmp(&b.0.since).then(a.0.label.cmp(&b.0.label)));
        if let Some(mine) = my_since {
            candidates.retain(|(owner, _)| owner.since < mine);
        }
        for (owner, live) in candidates {
            if live {
                if res.owner.is_none() {
                    res.owner = Some(owner);
                }
            } else {
                res.lapsed.push(owner);
            }
        }
        Ok(res)
    }

    /// Live owners other than `me` of paths strictly below `dir`: a claim of `dir` would cover
    /// them, and first claim wins in that direction too.
    pub fn owners_below(&mut self, dir: &str, me: Option<&str>) -> Result<Vec<Owner>> {
        let mut out = Vec::new();
        if self.view.is_empty() || self.is_shared(dir) {
            return Ok(out);
        }
        let view = self.view;
        let prefix = format!("{dir}/");
        for session in view.sessions_below(dir)? {
            let label = view.sessions[session].label.clone();
            if Some(label.as_str()) == me || self.being_merged(&label) {
                continue;
            }
            let Some(facts) = self.facts_for(&label)? else {
                continue;
            };
            if !facts.live {
                continue;
            }
            let claims: Vec<Claim> = facts
                .record
                .claims
                .iter()
                .filter(|k| k.path.starts_with(&prefix))
                .cloned()
                .collect();
            let (branch, last_activity) = (facts.record.branch.clone(), facts.last_activity);
            for k in claims {
                if self.is_shared(&k.path) || (k.how == ClaimHow::Commit && self.merged(&label)?) {
                    continue;
                }
                out.push(Owner {
                    label: label.clone(),
                    branch: branch.clone(),
                    path: k.path,
                    how: k.how,
                    since: k.since,
                    last_activity,
                });
            }
        }
        Ok(out)
    }

    /// [`ClaimsView::covering`], remembering what each directory above the path holds.
    fn covering(&mut self, path: &str) -> Result<Vec<Hit>> {
        let mut out = Vec::new();
        if self.view.is_empty() {
            return Ok(out);
        }
        self.next_line = self.view.exact_from(path, self.next_line, &mut out)?;
        let mut end = path.len();
        while let Some(slash) = path[..end].rfind('/') {
            let dir = &path[..slash];
            match self.dir_hits.get(dir) {
                Some(hits) => out.extend_from_slice(hits),
                None => {
                    let mut hits = Vec::new();
                    self.view.exact(dir, &mut hits)?;
                    out.extend_from_slice(&hits);
                    self.dir_hits.insert(dir.to_string(), hits);
                }
            }
            end = slash;
        }
        Ok(out)
    }

    fn facts_for(&mut self, label: &str) -> Result<Option<&SessionFacts>> {
        if !self.facts.contains_key(label) {
            let facts = match read_record(self.store, label)? {
                Some((record, _)) => {
                    let last_activity = session::last_activity(&record);
                    let live = session::is_live(&record, self.config, self.now);
                    Some(SessionFacts {
                        record,
                        last_activity,
                        live,
                        merged: None,
                    })
                }
                None => None,
            };
            self.facts.insert(label.to_string(), facts);
        }
        Ok(self.facts.get(label).and_then(Option::as_ref))
    }

    /// Whether the session's branch is merged into its base (never for attached sessions,
    /// which own no branch of their own).
    fn merged(&mut self, label: &str) -> Result<bool> {
        let repo = self.repo;
        let Some(Some(facts)) = self.facts.get_mut(label) else {
            return Ok(false);
        };
        if let Some(m) = facts.merged {
            return Ok(m);
        }
        let merged = branch_merged(repo, &facts.record)?;
        facts.merged = Some(merged);
        Ok(merged)
    }

    fn being_merged(&self, label: &str) -> bool {
        if self.merging.is_empty() {
            return false;
        }
        let Some(Some(facts)) = self.facts.get(label) else {
            return false;
        };
        if facts.record.attached || facts.record.branch.is_empty() {
            return false;
        }
        match self.repo.branch_tip(&facts.record.branch) {
            Ok(Some(tip)) => self
                .merging
                .iter()
                .any(|m| *m == tip || self.repo.git.graph_descendant_of(*m, tip).unwrap_or(false)),
            _ => false,
        }
    }
}

/// Records whose worktree is `dir` (for working out who is acting without parsing every record).
pub fn records_in_worktree(
    store: &Store,
    view: &ClaimsView,
    dir: &Path,
) -> Result<Vec<SessionRecord>> {
    let mut out = Vec::new();
    for s in &view.sessions {
        // Records hold canonical paths; canonicalise only a near miss (same final component).
        let near = s.path == dir || s.path.file_name() == dir.file_name();
        if s.active && near && (s.path == dir || session::normalize(&s.path) == dir) {
            if let Some((r, _)) = read_record(store, &s.label)? {
                out.push(r);
            }
        }
    }
    Ok(out)
}

/// Whether the session's branch is merged into its base (never for attached sessions, which
/// own no branch of their own).
pub fn branch_merged(repo: &Repo, r: &SessionRecord) -> Result<bool> {
    if r.attached || r.branch.is_empty() {
        return Ok(false);
    }
    let tip = repo.branch_tip(&r.branch)?;
    let base = repo
        .resolve_commit(&r.base)?
        .or_else(|| git2::Oid::from_str(&r.base_commit).ok());
    Ok(match (tip, base) {
        (Some(t), Some(b)) => repo.merge_state(t, b)?.is_merged(),
        _ => false,
    })
}

/// Every claim of `records` with whether it is in force (session live; a commit claim also
/// needs an unmerged branch), sorted by path, for `claims`.
pub fn claims_with_state(
    repo: &Repo,
    config: &Config,
    records: &[SessionRecord],
) -> Result<Vec<(String, Claim, bool)>> {
    let now = clock::now();
    let mut out = Vec::new();
    for r in records {
        let live = session::is_live(r, config, now);
        let mut merged: Option<bool> = None;
        for c in &r.claims {
            let mut in_force = live;
            if live && c.how == ClaimHow::Commit {
                let m = match merged {
                    Some(m) => m,
                    None => *merged.insert(branch_merged(repo, r)?),
                };
                in_force = !m;
            }
            out.push((r.label.clone(), c.clone(), in_force));
        }
    }
    out.sort_by(|a, b| a.1.path.cmp(&b.1.path).then(a.0.cmp(&b.0)));
    Ok(out)
}

/// A path from the command line (relative to the current directory, like a git pathspec) as a
/// repo-relative, `/`-separated path. Refuses paths outside the worktree.
pub fn repo_relative(repo: &Repo, arg: &std::ffi::OsStr) -> Result<String> {
    let root = repo.current_worktree.as_ref().ok_or_else(|| {
        anyhow!(UserError::refused("this command needs a worktree")
            .hinted("run it inside a worktree of the repository"))
    })?;
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let cwd = std::fs::canonicalize(&cwd).unwrap_or(cwd);
    let arg_path = Path::new(arg);
    let joined = if arg_path.is_absolute() {
        arg_path.to_path_buf()
    } else {
        cwd.join(arg_path)
    };
    // Lexical, so paths that do not exist (yet, or any more) can be claimed and released.
    let mut parts: Vec<std::ffi::OsString> = Vec::new();
    for comp in joined.components() {
        match comp {
            std::path::Component::ParentDir => {
                parts.pop();
            }
            std::path::Component::CurDir | std::path::Component::RootDir => {}
            std::path::Component::Normal(n) => parts.push(n.to_os_string()),
            std::path::Component::Prefix(_) => {}
        }
    }
    let mut abs = PathBuf::from("/");
    for p in &parts {
        abs.push(p);
    }
    let rel = abs.strip_prefix(root).map_err(|_| {
        anyhow!(UserError::refused(format!(
            "{} is outside the worktree {}",
            Path::new(arg).display(),
            root.display()
        ))
        .hinted("name paths inside the repository, relative to the current directory"))
    })?;
    let text = rel
        .to_str()
        .ok_or_else(|| {
            anyhow!(UserError::refused(format!(
                "{} is not valid UTF-8",
                rel.display()
            )))
        })?
        .to_string();
    if text.is_empty() || text == ".git" || text.starts_with(".git/") {
        return Err(UserError::refused(format!(
            "\"{}\" names no file of the repository",
            Path::new(arg).display()
        ))
        .hinted("name a file or directory inside the worktree")
        .into());
    }
    Ok(text)
}

/// How a path is shown in messages: bare when harmless, quoted and escaped otherwise.
pub fn show_path(path: &str) -> String {
    if path
        .chars()
        .any(|c| c.is_control() || c == '"' || c == '\\' || c == ' ' || c == '\'')
        || path.starts_with('-')
    {
        format!("\"{}\"", path.escape_debug())
    } else {
        path.to_string()
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

    fn view_of(paths: &[&str], dir: DirStamp, stamp: Option<i128>) -> ClaimsView {
        let sessions = vec![IndexedSession {
            label: "A".into(),
            active: true,
            path: PathBuf::from("/w/a"),
            id: FileId {
                ino: 1,
                mtime_ns: 2,
                ctime_ns: 3,
                size: 4,
            },
        }];
        let mut claims: Vec<(String, u32, ClaimHow)> = paths
            .iter()
            .map(|p| (escape(p).into_owned(), 0, ClaimHow::Explicit))
            .collect();
        claims.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        ClaimsView::parse(serialize(&sessions, &claims, dir, stamp)).expect("parses")
    }

    #[test]
    fn racy_index_is_not_trusted() {
        let dir = DirStamp {
            ino: 7,
            mtime_ns: 1_000,
            ctime_ns: 1_000,
        };
        assert!(view_of(&[], dir, Some(1_001)).trusted(dir));
        // Same clock tick as the stamp: a change right after the build could look identical.
        assert!(!view_of(&[], dir, Some(1_000)).trusted(dir));
        assert!(!view_of(&[], dir, None).trusted(dir));
        let changed = DirStamp {
            ctime_ns: 1_002,
            ..dir
        };
        assert!(!view_of(&[], dir, Some(1_001)).trusted(changed));
    }

    #[test]
    fn every_claim_is_found_in_place() {
        let paths = [
            "a", "a b", "a-b", "a.b", "a/b", "a/b/c", "a\u{1}", "a\\x", "a\tb", "a\nb", "ab", "b",
            "\u{7f}", "é", "z/z",
        ];
        let view = view_of(&paths, DirStamp::default(), None);
        for p in paths {
            let hits = view.covering(p).unwrap();
            assert!(hits.iter().any(|h| h.len == p.len()), "{p:?} not found");
        }
        // Covering: each directory above, nothing beside.
        let lens: Vec<usize> = view
            .covering("a/b/c/d")
            .unwrap()
            .iter()
            .map(|h| h.len)
            .collect();
        assert_eq!(lens, vec![5, 3, 1]);
        for absent in ["", "a\u{2}", "a\\", "a-", "aa", "c", "z"] {
            assert!(view.covering(absent).unwrap().is_empty(), "{absent:?}");
        }
    }

    /// Any starting guess, right, wrong or out of range, gives the bisection's answer.
    #[test]
    fn lower_bound_from_any_guess_is_exact() {
        let paths = [
            "a", "a b", "a-b", "a.b", "a/b", "a/b/c", "a\u{1}", "a\\x", "a\tb", "ab", "b", "c/d",
        ];
        let view = view_of(&paths, DirStamp::default(), None);
        let mut keys: Vec<String> = paths.iter().map(|p| escape(p).into_owned()).collect();
        keys.extend(["", "a0", "aa", "b0", "c", "zz"].map(String::from));
        for key in &keys {
            let exact = view.lower_bound(key.as_bytes(), 0);
            for from in 0..=view.count + 2 {
                assert_eq!(
                    view.lower_bound(key.as_bytes(), from),
                    exact,
                    "{key:?} from {from}"
                );
            }
        }
        // A sorted run of queries, each starting where the last one began.
        let mut sorted: Vec<&str> = paths.to_vec();
        sorted.sort();
        let mut next = 0;
        for p in sorted {
            let mut hits = Vec::new();
            next = view.exact_from(p, next, &mut hits).unwrap();
            assert_eq!(hits.len(), 1, "{p:?}");
        }
    }

    #[test]
    fn normalize_rel_paths() {
        assert_eq!(normalize_rel("./src//lib.rs"), "src/lib.rs");
        assert_eq!(normalize_rel("src/"), "src");
    }
}
