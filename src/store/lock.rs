//! The lockfile protocol: `<file>.lock` taken with `O_EXCL` and its owner line written; the new
//! content written to `<file>.lock.new`, fsynced and renamed over the file; the lock removed
//! ([`LockFile`]). The owner line is never truncated or overwritten with content, so a holder
//! killed at any step leaves a lock naming a dead owner.
//!
//! Invariants: a lock is broken only when its owner is provably dead (pid, start time and host)
//! or when it has held no parsable owner for [`super::STALE_UNOWNED`]; a lock from another host
//! is waited on, then reported, never broken. The owner and the identity of the file judged come
//! from one open descriptor, held until the judgement is acted on (a freed inode is soon reused by
//! the next lock at that path), breakers take turns, and a lock is removed only after a second name
//! for it proved it the very file judged, so a fresh lock is never removed, not even for a moment.

use super::{LockBusy, STALE_UNOWNED};
use crate::base::process::{Clock, Liveness, ProcessId};
use anyhow::{Context, Result};
use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A held `<file>.lock`. Dropping it without [`LockFile::commit`] removes it and leaves the file.
#[derive(Debug)]
pub struct LockFile {
    lock: PathBuf,
    target: PathBuf,
    file: Option<File>,
    /// fsync the content before the rename and the directory after it.
    pub(super) durable: bool,
}

impl LockFile {
    pub fn acquire(target: &Path, wait: Duration) -> Result<LockFile> {
        let mut lock = target.as_os_str().to_owned();
        lock.push(".lock");
        let lock = PathBuf::from(lock);
        let started = Instant::now();
        let mut pause = Duration::from_millis(1);
        loop {
            match OpenOptions::new().write(true).create_new(true).open(&lock) {
                Ok(mut file) => {
                    let me = ProcessId::current();
                    // The owner line lets a later process prove us dead if we crash holding it.
                    // One write, so a reader sees the whole line or none of it.
                    let _ = file.write_all(owner_line(&me).as_bytes());
                    return Ok(LockFile {
                        lock,
                        target: target.to_path_buf(),
                        file: Some(file),
                        durable: true,
                    });
                }
                Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                    // Whatever sits at the lock path, the wait honours its deadline and backs
                    // off: a stale lock just broken is retried at once, nothing else spins.
                    let owner = match break_if_stale(&lock) {
                        None => {
                            pause = Duration::from_millis(1);
                            if started.elapsed() < wait {
                                continue;
                            }
                            "a lock that keeps coming back".to_string()
                        }
                        Some(owner) => owner,
                    };
                    if started.elapsed() >= wait {
                        return Err(LockBusy { path: lock, owner }.into());
                    }
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(50));
                }
                Err(e) => {
                    return Err(write_error(e, &lock, "creating the lock"));
                }
            }
        }
    }

    /// Rewrites the owner line and returns the lock file's metadata afterwards: its mtime is a
    /// reading of the filesystem's own clock, no earlier than any change made before this call
    /// (for racy-timestamp checks of derived files).
    pub fn stamp(&mut self) -> Result<fs::Metadata> {
        use std::os::unix::fs::FileExt;
        let file = self.file.as_mut().context("lock already committed")?;
        // The same line in the same place ([`ProcessId::current`] is read once): never truncated,
        // so a holder killed here leaves its owner line whole.
        let me = ProcessId::current();
        file.write_all_at(owner_line(&me).as_bytes(), 0)
            .and_then(|_| file.metadata())
            .with_context(|| format!("writing {}", self.lock.display()))
    }

    /// Writes `bytes` into a file of their own beside the lock (`<file>.lock.new`), fsyncs, renames
    /// it over the target, then removes the lock. On any failure the lock is removed and the
    /// target is left as it was.
    ///
    /// The lock keeps its owner line until the very end, so a writer killed at any step leaves a
    /// lock that names a dead owner, which the next taker breaks at once (before, the content was
    /// written into the lock itself: killed before the rename, it held the new content and no
    /// owner, and every waiter, the guard among them, waited out its whole deadline).
    pub fn commit(&mut self, bytes: &[u8]) -> Result<()> {
        let lock_file = self.file.take().context("lock already committed")?;
        let staged = staged_path(&self.lock);
        let name = self
            .target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let finish = |result: Result<()>| {
            drop(lock_file);
            let _ = fs::remove_file(&self.lock);
            result
        };
        if let Err(e) = write_staged(&staged, bytes, self.durable) {
            let _ = fs::remove_file(&staged);
            return finish(Err(write_error(e, &self.target, "writing")));
        }
        crate::base::failpoint::reach("store-commit", &name);
        if let Err(e) = fs::rename(&staged, &self.target) {
            let _ = fs::remove_file(&staged);
            return finish(Err(write_error(e, &self.target, "replacing")));
        }
        if let Some(dir) = self.target.parent().filter(|_| self.durable) {
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        crate::base::failpoint::reach("store-renamed", &name);
        finish(Ok(()))
    }
}

/// Where a lock's holder writes the new content before it replaces the target.
fn staged_path(lock: &Path) -> PathBuf {
    let mut staged = lock.as_os_str().to_owned();
    staged.push(".new");
    PathBuf::from(staged)
}

/// Writes the staged file anew: one a killed holder left is removed first (only the lock's
/// holder touches this name), and what sits there is never followed (`create_new`).
fn write_staged(staged: &Path, bytes: &[u8], durable: bool) -> std::io::Result<()> {
    match fs::remove_file(staged) {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(staged)?;
    file.write_all(bytes)?;
    if durable {
        file.sync_all()?;
    }
    Ok(())
}

/// A failed write of a state file: what was done, to which file, and the system's error (its
/// errno picks the hint the command line gives).
#[derive(Debug)]
pub struct WriteFailed {
    pub what: &'static str,
    pub path: std::path::PathBuf,
    pub error: std::io::Error,
}

impl std::fmt::Display for WriteFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} failed: {}",
            self.what,
            self.path.display(),
            self.error
        )
    }
}

impl std::error::Error for WriteFailed {}

fn write_error(e: std::io::Error, path: &Path, what: &'static str) -> anyhow::Error {
    WriteFailed {
        what,
        path: path.to_path_buf(),
        error: e,
    }
    .into()
}

impl Drop for LockFile {
    fn drop(&mut self) {
        if self.file.is_some() {
            let _ = fs::remove_file(&self.lock);
        }
    }
}

/// Looks at a lock someone else holds. Breaks it when it is provably stale and returns `None`
/// (try again now); otherwise returns a description of the owner.
///
/// Why the care: between reading a lock's owner and acting on it, the owner may release that
/// lock and exit, and a live process may take a new one at the same path. So the owner and the
/// identity (device, inode) are read from one open descriptor, and the breaking removes the path
/// only while it is provably that very file: breakers take turns ([`BreakTurn`]), and the path is
/// first hard-linked aside and compared, never renamed away and put back (putting back leaves a
/// moment in which a third process takes the empty path, and two then hold the lock).
fn break_if_stale(lock: &Path) -> Option<String> {
    // Never follow what sits at the lock path: a symlink (dangling or not), a directory or a
    // FIFO is judged as itself.
    let Ok(meta) = fs::symlink_metadata(lock) else {
        return None; // released meanwhile
    };
    let regular = meta.file_type().is_file();
    // The judged file stays open until the judgement is acted on: while a descriptor holds it,
    // its inode cannot be freed and handed to a new lock at the same path, whose identity would
    // then pass for the judged one (a live holder's lock was removed that way under load).
    let (_held, identity, text, modified) = if regular {
        match read_lock_owner(lock) {
            Ok((file, identity, text, modified)) => (Some(file), identity, text, modified),
            Err(_) => return None, // released meanwhile, or replaced by something else
        }
    } else {
        (
            None,
            (meta.dev(), meta.ino()),
            String::new(),
            meta.modified().ok(),
        )
    };
    let owner = parse_owner(&text);
    let stale = match &owner {
        Some(owner) => owner.liveness() == Liveness::Dead,
        None => modified
            .and_then(|m| m.elapsed().ok())
            .is_some_and(|age| age > STALE_UNOWNED),
    };
    if !stale {
        return Some(match owner {
            Some(o) => format!("pid {} on {}", o.pid, o.host),
            None if regular => "an unknown process".to_string(),
            None => "something that is not a lock file (move it away)".to_string(),
        });
    }
    let Some(_turn) = BreakTurn::take(lock) else {
        return Some("a process breaking a stale lock".to_string());
    };
    let aside = lock.with_extension(format!("lock.stale-{}", std::process::id()));
    if meta.file_type().is_dir() {
        // A directory cannot be linked; and no lock is a directory, so moving it can only take a
        // lock that replaced it in the meantime, which is put back while no breaker can act.
        set_dir_aside(lock, &meta);
        return None;
    }
    // A second name for whatever is at the path now: if it is the file judged, the path is that
    // file until we remove it (its owner is dead, breakers wait for our turn, and no one can
    // create a lock where one exists); if it is not, the path is left untouched.
    if fs::hard_link(lock, &aside).is_err() {
        return None;
    }
    let same = fs::symlink_metadata(&aside).is_ok_and(|m| (m.dev(), m.ino()) == identity);
    if same {
        let _ = fs::remove_file(lock);
    }
    if same && !regular && !meta.file_type().is_symlink() {
        // A FIFO or a device someone put there is kept, moved out of the way.
        crate::base::announce::emit(crate::base::announce::Announcement::NotALockFile {
            lock: lock.to_path_buf(),
            moved_to: aside,
        });
    } else {
        let _ = fs::remove_file(&aside);
    }
    None
}

/// The turn to break a stale lock: `<lock>.break`, created exclusively. Breaking takes
/// microseconds, so a turn older than [`STALE_UNOWNED`] was left by a breaker that died and is
/// taken over. A breaker only ever makes a regular file there: a directory at the turn's path
/// is moved aside at once (removing it would fail, and it would block every breaker for good).
/// Dropping it ends the turn.
struct BreakTurn(PathBuf);

impl BreakTurn {
    fn take(lock: &Path) -> Option<BreakTurn> {
        let mut path = lock.as_os_str().to_owned();
        path.push(".break");
        let path = PathBuf::from(path);
        for _ in 0..3 {
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(_) => return Some(BreakTurn(path)),
                Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                    let Ok(meta) = fs::symlink_metadata(&path) else {
                        continue; // ended meanwhile
                    };
                    if meta.is_dir() {
                        set_dir_aside(&path, &meta);
                        continue;
                    }
                    let abandoned = meta
                        .modified()
                        .ok()
                        .and_then(|m| m.elapsed().ok())
                        .is_some_and(|age| age > STALE_UNOWNED);
                    if !abandoned {
                        return None;
                    }
                    let _ = fs::remove_file(&path);
                }
                Err(_) => return None,
            }
        }
        None
    }
}

/// Moves the directory `meta` describes away from `path` (where only a file belongs) and says
/// where to. If what was moved is not that directory (it went, and something took its place
/// meanwhile), it is put back.
fn set_dir_aside(path: &Path, meta: &fs::Metadata) {
    let mut aside = path.as_os_str().to_owned();
    aside.push(format!(".stale-{}", std::process::id()));
    let aside = PathBuf::from(aside);
    if fs::rename(path, &aside).is_err() {
        return;
    }
    match fs::symlink_metadata(&aside) {
        Ok(moved) if (moved.dev(), moved.ino()) == (meta.dev(), meta.ino()) => {
            crate::base::announce::emit(crate::base::announce::Announcement::NotALockFile {
                lock: path.to_path_buf(),
                moved_to: aside,
            });
        }
        _ => {
            let _ = fs::hard_link(&aside, path);
            let _ = fs::remove_file(&aside);
        }
    }
}

impl Drop for BreakTurn {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

/// A regular lock file, open, with its identity (device, inode), owner line and modification
/// time, all from that one descriptor (so they are one file's), read without following links or
/// blocking.
type Judged = (File, (u64, u64), String, Option<std::time::SystemTime>);

fn read_lock_owner(lock: &Path) -> std::io::Result<Judged> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(lock)?;
    let meta = f.metadata()?;
    if !meta.is_file() {
        return Err(ErrorKind::InvalidInput.into());
    }
    let mut text = String::new();
    (&f).take(512).read_to_string(&mut text)?;
    Ok((f, (meta.dev(), meta.ino()), text, meta.modified().ok()))
}

/// The owner line: `<pid> <start> <host>`, the start time written `@<seconds>` where it is a
/// wall-clock bound ([`Clock::Wall`]) rather than `/proc`'s clock ticks, so a lock is only ever
/// judged by a start time read the same way.
fn owner_line(me: &ProcessId) -> String {
    let start = match me.clock {
        Clock::Ticks => me.start.to_string(),
        Clock::Wall => format!("@{}", me.start),
    };
    format!("{} {start} {}\n", me.pid, me.host)
}

fn parse_owner(text: &str) -> Option<ProcessId> {
    let mut parts = text.lines().next()?.split(' ');
    let pid = parts.next()?.parse().ok()?;
    let start = parts.next()?;
    let (start, clock) = match start.strip_prefix('@') {
        Some(wall) => (wall.parse().ok()?, Clock::Wall),
        None => (start.parse().ok()?, Clock::Ticks),
    };
    let host = parts.next()?.to_string();
    if host.is_empty() {
        return None;
    }
    Some(ProcessId {
        pid,
        start,
        host,
        clock,
    })
}
