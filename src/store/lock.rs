//! The lockfile protocol: `<file>.lock` taken with `O_EXCL`, written, fsynced and renamed over
//! the file ([`LockFile`]).
//!
//! Invariants: a lock is broken only when its owner is provably dead (pid, start time and host)
//! or when it has held no parsable owner for [`super::STALE_UNOWNED`]; a lock from another host
//! is waited on, then reported, never broken. Whoever breaks a lock checks that it moved the very
//! file it judged, so two processes judging one stale lock never remove a fresh one.

use super::{LockBusy, STALE_UNOWNED};
use crate::base::process::{Liveness, ProcessId};
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
                    let _ = writeln!(file, "{} {} {}", me.pid, me.start, me.host);
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
        use std::io::Seek;
        let file = self.file.as_mut().context("lock already committed")?;
        let me = ProcessId::current();
        file.set_len(0)
            .and_then(|_| file.seek(std::io::SeekFrom::Start(0)))
            .and_then(|_| writeln!(file, "{} {} {}", me.pid, me.start, me.host))
            .and_then(|_| file.metadata())
            .with_context(|| format!("writing {}", self.lock.display()))
    }

    /// Writes `bytes` into the lock, fsyncs, and renames it over the target. On any failure
    /// the lock is removed and the target is left as it was.
    pub fn commit(&mut self, bytes: &[u8]) -> Result<()> {
        use std::io::Seek;
        let mut file = self.file.take().context("lock already committed")?;
        let written = file
            .set_len(0)
            .and_then(|_| file.seek(std::io::SeekFrom::Start(0)))
            .and_then(|_| file.write_all(bytes))
            .and_then(|_| {
                if self.durable {
                    file.sync_all()
                } else {
                    Ok(())
                }
            });
        drop(file);
        if let Err(e) = written {
            let _ = fs::remove_file(&self.lock);
            return Err(write_error(e, &self.target, "writing"));
        }
        if let Err(e) = fs::rename(&self.lock, &self.target) {
            let _ = fs::remove_file(&self.lock);
            return Err(write_error(e, &self.target, "replacing"));
        }
        if let Some(dir) = self.target.parent().filter(|_| self.durable) {
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }
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
fn break_if_stale(lock: &Path) -> Option<String> {
    // Never follow what sits at the lock path: a symlink (dangling or not), a directory or a
    // FIFO is judged as itself.
    let Ok(meta) = fs::symlink_metadata(lock) else {
        return None; // released meanwhile
    };
    let regular = meta.file_type().is_file();
    let mut text = String::new();
    if regular {
        if let Ok(f) = read_lock_owner(lock) {
            text = f;
        }
    }
    let owner = parse_owner(&text);
    let stale = match &owner {
        Some(owner) => owner.liveness() == Liveness::Dead,
        None => meta
            .modified()
            .ok()
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
    // Move it aside rather than unlinking, then check we moved the very file we judged: two
    // processes may judge the same stale lock, and the slower must not remove the faster's new one.
    let aside = lock.with_extension(format!("lock.stale-{}", std::process::id()));
    if fs::rename(lock, &aside).is_err() {
        return None;
    }
    match fs::symlink_metadata(&aside) {
        Ok(moved) if moved.ino() == meta.ino() && moved.dev() == meta.dev() => {
            if regular || moved.file_type().is_symlink() {
                let _ = fs::remove_file(&aside);
            } else {
                // A directory or FIFO someone put there is kept, moved out of the way.
                crate::base::announce::emit(crate::base::announce::Announcement::NotALockFile {
                    lock: lock.to_path_buf(),
                    moved_to: aside.clone(),
                });
            }
        }
        _ => {
            // We took a fresh lock by mistake: put it back unless someone already holds a new one.
            let _ = fs::hard_link(&aside, lock);
            let _ = fs::remove_file(&aside);
        }
    }
    None
}

/// The owner line of a regular lock file, read without following links or blocking.
fn read_lock_owner(lock: &Path) -> std::io::Result<String> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(lock)?;
    let mut text = String::new();
    f.take(512).read_to_string(&mut text)?;
    Ok(text)
}

fn parse_owner(text: &str) -> Option<ProcessId> {
    let mut parts = text.lines().next()?.split(' ');
    let pid = parts.next()?.parse().ok()?;
    let start = parts.next()?.parse().ok()?;
    let host = parts.next()?.to_string();
    if host.is_empty() {
        return None;
    }
    Some(ProcessId { pid, start, host })
}
