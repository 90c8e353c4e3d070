//! Keeping the claims index up to date with the store: reading it, trusting it, rebuilding it.
//!
//! Invariants a reader must not break:
//! - The index can never *miss* a claim, nor keep one that was released. It records the
//!   identity of `sessions/` and `claims/` (inode, mtime, ctime) taken after a filesystem-clock
//!   stamp and before any file was read, and the identity of each record and claims file
//!   (inode, mtime, ctime, size, taken with `fstat` on the very descriptor it read). A load trusts
//!   it on one `stat` of each directory when both identities are unchanged and older than the
//!   stamp (see [`ClaimsView::load`]). Otherwise every record and claims file is stat'ed, and a
//!   changed, new or vanished one is re-read before anything is decided.
//! - A record is stat'ed (or read) before its claims file: migration writes the claims file
//!   before it strips the record, so whoever sees the stripped record also sees the file.
//! - A claims file is parsed only when it changed; a record only when it changed (its own fields)
//!   or when it still embeds the claims (no claims file). So the guard, `list` and `info` parse
//!   no claims they do not show, whatever the number of sessions and claims.

use super::claims_file;
use super::claims_index::{
    escape, fs_ns_ctime, fs_ns_mtime, ClaimCounts, ClaimsView, DamagedIndex, DirStamp, FileId,
    IndexedSession, LineOut, MAX_INDEX_BYTES,
};
use super::INDEX;
use crate::session::{Claim, Label, RecordState, SessionRecord};
use crate::store::{LockFile, Store};
use anyhow::{Context, Result};
use std::collections::HashMap;
use std::io::ErrorKind;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::Duration;

impl DirStamp {
    fn of(dir: &Path) -> Result<DirStamp> {
        match std::fs::metadata(dir) {
            Ok(meta) => Ok(DirStamp {
                ino: meta.ino(),
                mtime_ns: fs_ns_mtime(&meta),
                ctime_ns: fs_ns_ctime(&meta),
            }),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(DirStamp::default()),
            Err(e) => Err(e).with_context(|| format!("reading {}", dir.display())),
        }
    }
}

/// `sessions/` and `claims/`, in the order of the index header.
fn dir_stamps(store: &Store) -> Result<[DirStamp; 2]> {
    Ok([
        DirStamp::of(&store.path("sessions"))?,
        DirStamp::of(&store.path("claims"))?,
    ])
}

impl ClaimsView {
    /// Loads the index and makes sure it is up to date with the store.
    ///
    /// Fast path: the index is trusted without looking at any record or claims file when
    /// `sessions/` and `claims/` still have the identities the index recorded *and* those are
    /// older than the stamp, a reading of the filesystem's clock taken (by writing the lock file)
    /// before the directories were looked at and before any file was read for the index. Why
    /// this cannot miss a change: claims exist only in claims files and records; the store
    /// writes one by creating `<name>.lock` beside it and renaming it over the file, and removes
    /// one by unlinking; each of these sets its directory's ctime to the filesystem clock at that
    /// moment. A change made after the index looked at the directories therefore gets a ctime no
    /// earlier than the stamp, which is later than the recorded ctime, so an identity differs. A
    /// change made before was seen by the reads that built the index. When a recorded ctime is
    /// not older than the stamp (a change in the same clock tick as the build: git's "racily
    /// clean" case) the index is not trusted and every file is stat'ed. Writes that bypass the
    /// store (editing a file in place) are outside this protocol.
    ///
    /// Otherwise every record and claims file is stat'ed and compared with the identity the
    /// index holds for it; changed, new or vanished ones are re-read. When `write_back` allows,
    /// the refreshed index is written (best effort: a busy lock skips it).
    pub fn load(store: &Store, write_back: Option<Duration>) -> Result<ClaimsView> {
        let write_back = write_back.filter(|_| store_exists(store));
        let dirs = dir_stamps(store)?;
        let old = ClaimsView::read(store);
        if old.as_ref().is_some_and(|v| v.trusted(dirs)) {
            return Ok(old.expect("checked"));
        }
        let lock = write_back.and_then(|wait| store.clone().with_lock_wait(wait).lock(INDEX).ok());
        let Some(mut lock) = lock else {
            return ClaimsView::refresh(store, old, dirs, None);
        };
        // Under the lock, in the order the fast path relies on: stamp, directories, files.
        // The write-back is best effort: without a stamp, answer without writing.
        let Ok(stamp) = lock.stamp().map(|m| fs_ns_mtime(&m)) else {
            return ClaimsView::refresh(store, old, dirs, None);
        };
        let dirs = dir_stamps(store)?;
        let view = ClaimsView::refresh(store, old, dirs, Some(stamp))?;
        let _ = lock.commit(view.bytes().expect("built in memory"));
        Ok(view)
    }

    /// The index rebuilt from the store alone, after [`DamagedIndex`]: nothing of the stored one
    /// is reused. Written back when `write_back` allows (best effort).
    pub fn rebuild(store: &Store, write_back: Option<Duration>) -> Result<ClaimsView> {
        let write_back = write_back.filter(|_| store_exists(store));
        let lock = write_back.and_then(|wait| store.clone().with_lock_wait(wait).lock(INDEX).ok());
        let Some(mut lock) = lock else {
            return ClaimsView::refresh(store, None, dir_stamps(store)?, None);
        };
        let stamp = lock.stamp().ok().map(|m| fs_ns_mtime(&m));
        let view = ClaimsView::refresh(store, None, dir_stamps(store)?, stamp)?;
        if stamp.is_some() {
            let _ = lock.commit(view.bytes().expect("built in memory"));
        }
        Ok(view)
    }

    /// The index as stored, or `None` when it is missing or does not parse (it is derived, so
    /// it is then rebuilt from the store).
    fn read(store: &Store) -> Option<ClaimsView> {
        let path = store.path(INDEX);
        match crate::store::open_state_file(&path, MAX_INDEX_BYTES).ok()? {
            crate::store::StateOpen::File(file, meta) => ClaimsView::open(file, meta.len()),
            crate::store::StateOpen::Absent => None,
            crate::store::StateOpen::Bad(why) => {
                // Derived: move it away so the rebuilt index can be written in its place.
                store.set_aside(&path, &why);
                None
            }
        }
    }

    /// Brings `old` up to date with the store: one `readdir`, two `stat`s per session, and a
    /// read of each file whose identity changed. `dirs` must have been taken before this runs.
    fn refresh(
        store: &Store,
        old: Option<ClaimsView>,
        dirs: [DirStamp; 2],
        stamp: Option<i128>,
    ) -> Result<ClaimsView> {
        let on_disk = records_on_disk(store)?;
        let old_sessions: HashMap<&str, usize> = old
            .iter()
            .flat_map(|v| v.sessions.iter().enumerate())
            .map(|(i, s)| (s.label.as_str(), i))
            .collect();
        let mut sessions: Vec<IndexedSession> = Vec::with_capacity(on_disk.len());
        let mut lines: Vec<LineOut> = Vec::new();
        // Old session number -> new one, for the sessions whose claims did not change.
        let mut renumber: Vec<Option<u32>> =
            vec![None; old.as_ref().map_or(0, |v| v.sessions.len())];
        for (label, record_id) in &on_disk {
            let number = sessions.len() as u32;
            let known = old_sessions
                .get(label.as_str())
                .map(|&i| (i, &old.as_ref().expect("known").sessions[i]));
            // The record first (see the module doc), then its claims file.
            let mut fresh: Option<(SessionRecord, FileId)> = None;
            let mut entry = match known {
                Some((_, s)) if s.record == *record_id => s.clone(),
                _ => {
                    let Some((record, id)) = read_record(store, label)? else {
                        continue;
                    };
                    let entry = indexed(&record, id.clone());
                    fresh = Some((record, id));
                    entry
                }
            };
            let claims_id = stat_id(&store.path(&claims_file::store_path(label)));
            let unchanged = known.is_some_and(|(_, s)| s.claims == claims_id)
                && (!claims_id.is_absent() || fresh.is_none());
            if let (true, Some((i, s))) = (unchanged, known) {
                renumber[i] = Some(number);
                entry.claims = s.claims.clone();
                entry.counts = s.counts;
                sessions.push(entry);
                continue;
            }
            let (list, id) = match claims_file::read_file(store, label)? {
                Some((list, meta)) => (list, FileId::of(&meta)),
                None => {
                    // No claims file (or one set aside): the claims the record still embeds.
                    if fresh.is_none() {
                        let Some(read) = read_record(store, label)? else {
                            continue;
                        };
                        entry = indexed(&read.0, read.1.clone());
                        fresh = Some(read);
                    }
                    let record = &fresh.as_ref().expect("read").0;
                    (record.legacy_claims.clone(), FileId::default())
                }
            };
            entry.claims = id;
            entry.counts = add_lines(&mut lines, &list, number);
            sessions.push(entry);
        }
        if let Some(old) = &old {
            // The lines of the sessions that did not change. A damaged block in the old index
            // means none of it can be reused: start again from the store alone.
            let Ok(all) = old.all() else {
                return ClaimsView::refresh(store, None, dirs, stamp);
            };
            for (key, number, how, since) in all {
                if let Some(new) = renumber.get(number).copied().flatten() {
                    lines.push((key, new, how, since));
                }
            }
        }
        lines.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()).then(a.1.cmp(&b.1)));
        let data = super::claims_index::serialize(&sessions, &lines, dirs, stamp);
        ClaimsView::parse(data).context("building the claims index")
    }
}

/// Labels with a record in `sessions/`, sorted, each with the record's identity (not followed:
/// a symlink's own identity; the read sets it aside).
fn records_on_disk(store: &Store) -> Result<Vec<(Label, FileId)>> {
    let sessions_dir = store.path("sessions");
    let mut on_disk = Vec::new();
    match std::fs::read_dir(&sessions_dir) {
        Ok(entries) => {
            for entry in entries {
                let entry = entry.with_context(|| format!("reading {}", sessions_dir.display()))?;
                let name = entry.file_name();
                let Some(Ok(label)) = name
                    .to_str()
                    .and_then(|n| n.strip_suffix(".toml"))
                    .map(Label::from_file_name)
                else {
                    continue;
                };
                let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
                    continue;
                };
                on_disk.push((label, FileId::of(&meta)));
            }
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("reading {}", sessions_dir.display())),
    }
    on_disk.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(on_disk)
}

/// The identity of the file at `path` (not followed), zero when there is none.
fn stat_id(path: &Path) -> FileId {
    std::fs::symlink_metadata(path)
        .map(|m| FileId::of(&m))
        .unwrap_or_default()
}

/// A session line for `record`, read with identity `id`; its claims are filled in after.
fn indexed(record: &SessionRecord, id: FileId) -> IndexedSession {
    IndexedSession {
        label: record.label.to_string(),
        active: record.state == RecordState::Active,
        path: record.path.clone(),
        counts: ClaimCounts::default(),
        record: id,
        claims: FileId::default(),
    }
}

/// Adds the claim lines of session `number`; returns its counts.
fn add_lines(lines: &mut Vec<LineOut>, claims: &[Claim], number: u32) -> ClaimCounts {
    let mut counts = ClaimCounts::default();
    for c in claims {
        counts.add(c.how);
        lines.push((escape(&c.path).into_owned(), number, c.how, c.since));
    }
    counts
}

/// Rewrites the index from the store, under the held index lock.
pub(super) fn write_index(store: &Store, lock: &mut LockFile) -> Result<()> {
    let stamp = fs_ns_mtime(&lock.stamp()?);
    let dirs = dir_stamps(store)?;
    let old = ClaimsView::read(store);
    let view = ClaimsView::refresh(store, old, dirs, Some(stamp))?;
    lock.commit(view.bytes().expect("built in memory"))
}

/// Runs `f` on the index ([`ClaimsView::load`]); when `f` finds a block of it damaged, rebuilds
/// the index from the store and runs `f` again on that. `f` must not have acted on what it read
/// before the error (it is run twice).
pub fn with_view<T>(
    store: &Store,
    write_back: Option<Duration>,
    mut f: impl FnMut(&ClaimsView) -> Result<T>,
) -> Result<T> {
    let view = ClaimsView::load(store, write_back)?;
    match f(&view) {
        Err(e) if e.downcast_ref::<DamagedIndex>().is_some() => {
            drop(view);
            f(&ClaimsView::rebuild(store, write_back)?)
        }
        other => other,
    }
}

/// Reads one record together with the identity of the file it came from. A record that does
/// not parse goes through the store, which sets it aside and reports it.
pub(super) fn read_record(store: &Store, label: &Label) -> Result<Option<(SessionRecord, FileId)>> {
    // The store's one reader: no symlink followed, no FIFO waited on, bounded; a bad file is
    // set aside there and reads as absent here.
    match store.read_with_meta::<SessionRecord>(&SessionRecord::store_path(label))? {
        Some((r, meta)) if r.label == *label => Ok(Some((r, FileId::of(&meta)))),
        _ => Ok(None),
    }
}

/// Whether the store's directory exists. A repository git-session never worked in has none,
/// and reading its (empty) claims must not make one: a guard that git runs for every
/// repository (a `core.hooksPath` in the user's configuration) leaves the others untouched.
fn store_exists(store: &Store) -> bool {
    store.root().is_dir()
}
