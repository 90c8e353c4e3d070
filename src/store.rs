//! The crash-safe state store shared by every worktree, the guard and the context hook.
//!
//! Layout under `<git common dir>/git-session/` (or `$XDG_STATE_HOME/git-session/` outside a
//! repository): `sessions/<label>.toml`, `claims/<label>.toml`, `agents/<id>.toml`,
//! `handoffs/<label>/<n>.md`, `audit.log` (JSON lines), plus derived files that may be deleted at
//! any time (`claims.index`).
//!
//! Invariants a reader must not break:
//! - Every write of a state file goes through [`Store::update`] (or [`Store::write_new`]): take
//!   `<file>.lock` with `O_EXCL`, write the new content into the lock, fsync, rename it over the
//!   file. Readers never lock; they see the old file or the new one, never a torn one. Only a
//!   [`Store::volatile`] store skips the fsyncs, for facts that matter only while the machine is
//!   up (a running process's pid): a killed process loses nothing either way, since the page
//!   cache outlives it, and after a machine crash such a fact is void anyway.
//! - A lock is broken only when its owner is provably dead (pid + start time + host), or when it has
//!   held no parsable owner for [`STALE_UNOWNED`]. A lock from another host is waited on, then
//!   reported; it is never broken.
//! - A file that does not parse is renamed to `<file>.corrupt-<time>` and reported with its path;
//!   it is never silently dropped or overwritten.
//! - `audit.log` is append-only: one `write` of one line per event.

use crate::clock;
use crate::process::{Liveness, ProcessId};
use anyhow::{Context, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// An unparsable lock (its owner crashed between truncating and writing it) is broken after this.
pub const STALE_UNOWNED: Duration = Duration::from_secs(10);

/// How long commands wait for a lock before giving up.
pub const DEFAULT_LOCK_WAIT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
    lock_wait: Duration,
    /// Whether writes are fsync'd (file, then directory) before they count as done.
    durable: bool,
}

/// Raised when a lock cannot be had in time; the hook and the guard treat it as "fail open".
#[derive(Debug)]
pub struct LockBusy {
    pub path: PathBuf,
    pub owner: String,
}

impl std::fmt::Display for LockBusy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} is locked by {}", self.path.display(), self.owner)
    }
}

impl std::error::Error for LockBusy {}

impl Store {
    pub fn at(root: impl Into<PathBuf>) -> Store {
        Store {
            root: root.into(),
            lock_wait: DEFAULT_LOCK_WAIT,
            durable: true,
        }
    }

    /// The store of the repository whose common directory is `common_dir`.
    pub fn for_common_dir(common_dir: &Path) -> Store {
        Store::at(common_dir.join("git-session"))
    }

    /// The store used outside any repository (the context hook only).
    pub fn outside_repository() -> Store {
        let base = std::env::var_os("XDG_STATE_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))
            .unwrap_or_else(std::env::temp_dir);
        Store::at(base.join("git-session"))
    }

    pub fn with_lock_wait(mut self, wait: Duration) -> Store {
        self.lock_wait = wait;
        self
    }

    /// The same store, writing without fsync: still atomic (lock, write, rename) and safe against
    /// any process being killed, but not durable across a machine crash. Only for facts that a
    /// machine crash makes void (see the module doc); each use says why.
    pub fn volatile(mut self) -> Store {
        self.durable = false;
        self
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `<root>/<rel>` without checking `rel`: for fixed names only. Everything that reads or
    /// writes goes through [`Store::checked`].
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// `<root>/<rel>` when `rel` is a plain relative path inside the store: components of
    /// `A-Z a-z 0-9 . _ - @ +`, none empty, none starting with `.` (so no `..`, no hidden file).
    /// This is the one gate between names that came from outside (labels from arguments, the
    /// environment, hook payloads, file names found in the store) and the filesystem: a name that
    /// would walk out of the store cannot reach a read, a write, a lock or a rename.
    pub fn checked(&self, rel: &str) -> Result<PathBuf> {
        let ok = !rel.is_empty()
            && rel.len() <= 512
            && rel.split('/').all(|c| {
                !c.is_empty()
                    && !c.starts_with('.')
                    && c.chars()
                        .all(|ch| ch.is_ascii_alphanumeric() || "._-@+".contains(ch))
            });
        if ok {
            Ok(self.root.join(rel))
        } else {
            Err(crate::error::UserError::usage(format!(
                "refusing the state path \"{}\": it is not a plain name inside the store",
                rel.escape_debug()
            ))
            .hinted("labels are 1 to 64 characters of A-Z a-z 0-9 . _ -, not starting with - or .")
            .into())
        }
    }

    /// Reads and parses one TOML file. Absent is `None`; anything that is not a small regular
    /// UTF-8 file holding valid TOML is set aside, reported, `None`.
    pub fn read<T: DeserializeOwned>(&self, rel: &str) -> Result<Option<T>> {
        Ok(self.read_with_meta(rel)?.map(|(v, _)| v))
    }

    /// [`Store::read`], with the metadata of the file that was read (from the open file).
    pub fn read_with_meta<T: DeserializeOwned>(
        &self,
        rel: &str,
    ) -> Result<Option<(T, fs::Metadata)>> {
        let path = self.checked(rel)?;
        let why = match read_state_file(&path)? {
            StateFile::Absent => return Ok(None),
            StateFile::Text(text, meta) => match toml::from_str(&text) {
                Ok(value) => return Ok(Some((value, meta))),
                Err(err) => err.to_string(),
            },
            StateFile::Bad(why) => why,
        };
        // Re-check under the lock: only a file that is still bad is moved away, so a good file
        // renamed in by a writer meanwhile is never set aside by mistake.
        let _lock = self.lock(rel)?;
        match read_state_file(&path)? {
            StateFile::Absent => Ok(None),
            StateFile::Text(text, meta) => match toml::from_str(&text) {
                Ok(value) => Ok(Some((value, meta))),
                Err(_) => {
                    self.set_aside(&path, &why);
                    Ok(None)
                }
            },
            StateFile::Bad(why) => {
                self.set_aside(&path, &why);
                Ok(None)
            }
        }
    }

    /// Names (without `.toml`) of the state files directly in `dir`, sorted. A missing directory
    /// is empty. Something at `dir` that is not a directory (a file, a FIFO, a symlink) holds no
    /// records: it is set aside with a warning, and the listing is empty. A directory that cannot
    /// be read is an error: "no sessions" would be a lie.
    pub fn list(&self, dir: &str) -> Result<Vec<String>> {
        let path = self.checked(dir)?;
        match fs::symlink_metadata(&path) {
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Ok(meta) if !meta.is_dir() => {
                self.set_aside(&path, "it is not a directory");
                return Ok(Vec::new());
            }
            _ => {}
        }
        let entries = fs::read_dir(&path).map_err(|e| {
            crate::error::UserError::refused(format!(
                "cannot read the session store at {}: {e}",
                path.display()
            ))
            .hinted("check the directory's permissions; nothing was changed")
        })?;
        let mut names: Vec<String> = entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                name.strip_suffix(".toml").map(str::to_string)
            })
            .collect();
        names.sort();
        Ok(names)
    }

    /// Read-modify-write under the file's lock. `f` gets the current value (None when absent or
    /// corrupt) and returns the new one; `None` deletes the file. Returns what was written.
    pub fn update<T, F>(&self, rel: &str, f: F) -> Result<Option<T>>
    where
        T: Serialize + DeserializeOwned,
        F: FnOnce(Option<T>) -> Result<Option<T>>,
    {
        let mut lock = self.lock(rel)?;
        let path = self.checked(rel)?;
        let current = match read_state_file(&path)? {
            StateFile::Absent => None,
            StateFile::Text(text, _) => match toml::from_str(&text) {
                Ok(v) => Some(v),
                Err(err) => {
                    self.set_aside(&path, &err.to_string());
                    None
                }
            },
            StateFile::Bad(why) => {
                self.set_aside(&path, &why);
                None
            }
        };
        let next = f(current)?;
        match &next {
            Some(value) => {
                let text = toml::to_string(value).context("serialising state")?;
                lock.commit(text.as_bytes())?;
            }
            None => {
                match fs::remove_file(&path) {
                    Ok(()) => {}
                    Err(e) if e.kind() == ErrorKind::NotFound => {}
                    Err(e) => {
                        return Err(e).with_context(|| format!("removing {}", path.display()))
                    }
                }
                drop(lock);
            }
        }
        Ok(next)
    }

    /// Writes `value` only if the file does not exist yet; returns false when it did.
    pub fn write_new<T: Serialize>(&self, rel: &str, value: &T) -> Result<bool> {
        let mut lock = self.lock(rel)?;
        if self.path(rel).exists() {
            return Ok(false);
        }
        let text = toml::to_string(value).context("serialising state")?;
        lock.commit(text.as_bytes())?;
        Ok(true)
    }

    /// Writes raw bytes to a file that must not exist yet (handoff notes are never overwritten).
    pub fn create_file(&self, rel: &str, bytes: &[u8]) -> Result<bool> {
        let mut lock = self.lock(rel)?;
        if self.path(rel).exists() {
            return Ok(false);
        }
        lock.commit(bytes)?;
        Ok(true)
    }

    /// Replaces a derived file (an index) atomically under its lock.
    pub fn replace_file(&self, rel: &str, bytes: &[u8]) -> Result<()> {
        let mut lock = self.lock(rel)?;
        lock.commit(bytes)
    }

    pub fn remove(&self, rel: &str) -> Result<()> {
        let _lock = self.lock(rel)?;
        let path = self.checked(rel)?;
        match fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e).with_context(|| format!("removing {}", path.display())),
        }
    }

    /// Appends one JSON line to `audit.log`; returns whether it was written. Never fails the
    /// caller: the audit log is evidence, and losing a line is better than failing a commit over
    /// it; callers for whom the line is the only record (a bypass) warn when it was not written.
    pub fn audit(&self, event: &str, fields: serde_json::Value) -> bool {
        let mut line = serde_json::Map::new();
        line.insert("at".into(), clock::rfc3339(clock::now()).into());
        line.insert("event".into(), event.into());
        line.insert("pid".into(), std::process::id().into());
        if let serde_json::Value::Object(map) = fields {
            line.extend(map);
        }
        let mut text = serde_json::Value::Object(line).to_string();
        text.push('\n');
        let _ = fs::create_dir_all(&self.root);
        // Never through a symlink, never blocked on a FIFO someone put there.
        use std::os::unix::fs::OpenOptionsExt;
        OpenOptions::new()
            .create(true)
            .append(true)
            .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
            .open(self.path("audit.log"))
            .and_then(|file| {
                if file.metadata()?.is_file() {
                    Ok(file)
                } else {
                    Err(std::io::Error::other("audit.log is not a regular file"))
                }
            })
            .and_then(|mut file| file.write_all(text.as_bytes()))
            .is_ok()
    }

    /// Takes `<rel>.lock`, waiting up to the store's lock wait.
    pub fn lock(&self, rel: &str) -> Result<LockFile> {
        let target = self.checked(rel)?;
        if let Some(dir) = target.parent() {
            fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let mut lock = LockFile::acquire(&target, self.lock_wait)?;
        lock.durable = self.durable;
        Ok(lock)
    }

    pub fn set_aside(&self, path: &Path, why: &str) {
        let stamp = clock::now().format("%Y%m%dT%H%M%SZ");
        let mut aside = path.as_os_str().to_owned();
        aside.push(format!(".corrupt-{stamp}"));
        let aside = PathBuf::from(aside);
        let why = why.lines().next().unwrap_or("").trim().to_string();
        match fs::rename(path, &aside) {
            Ok(()) => {
                crate::output::warn(format!(
                    "{} does not parse ({why}); set aside as {}",
                    path.display(),
                    aside.display()
                ));
                self.audit(
                    "corrupt-state",
                    serde_json::json!({"file": path.display().to_string(),
                                       "moved_to": aside.display().to_string(), "error": why}),
                );
            }
            Err(e) => crate::output::warn(format!(
                "{} does not parse ({why}) and cannot be set aside ({e}); skipped",
                path.display()
            )),
        }
    }
}

/// The largest state file read; anything larger is not ours (a record with 10,000 claims is
/// under 1 MiB).
pub const MAX_STATE_FILE: u64 = 8 << 20;

/// What one state file holds, as [`read_state_file`] found it.
#[derive(Debug)]
pub enum StateFile {
    Absent,
    Text(String, fs::Metadata),
    /// Not a small regular UTF-8 file: why, for the warning that sets it aside.
    Bad(String),
}

/// The bytes of one state file, as [`read_state_bytes`] found them.
#[derive(Debug)]
pub enum StateBytes {
    Absent,
    Bytes(Vec<u8>, fs::Metadata),
    /// Not a regular file of at most the given size: why.
    Bad(String),
}

/// A state file opened for reading, as [`open_state_file`] found it.
#[derive(Debug)]
pub enum StateOpen {
    Absent,
    /// A regular file of at most the given size, with its metadata (from the open file).
    File(File, fs::Metadata),
    /// Not a regular file of at most the given size: why.
    Bad(String),
}

/// The one way state files are opened. Never follows a symlink, never blocks (a FIFO), never
/// opens a directory, a device or a file larger than `max` bytes: each of those is `Bad`, to be
/// set aside by the caller. Only a failure to open a good file (permission, I/O) is an error.
pub fn open_state_file(path: &Path, max: u64) -> Result<StateOpen> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path);
    let file = match file {
        Ok(f) => f,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(StateOpen::Absent),
        Err(e) if e.raw_os_error() == Some(nix::libc::ELOOP) => {
            return Ok(StateOpen::Bad("it is a symbolic link".into()))
        }
        Err(e) if e.raw_os_error() == Some(nix::libc::ENXIO) => {
            return Ok(StateOpen::Bad("it is a socket or device".into()))
        }
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let meta = file
        .metadata()
        .with_context(|| format!("reading {}", path.display()))?;
    let kind = meta.file_type();
    if !kind.is_file() {
        let what = if kind.is_dir() {
            "a directory"
        } else {
            "not a regular file (a FIFO, socket or device)"
        };
        return Ok(StateOpen::Bad(format!("it is {what}")));
    }
    if meta.len() > max {
        return Ok(StateOpen::Bad(format!(
            "it is {} bytes, larger than any such file ({max})",
            meta.len()
        )));
    }
    Ok(StateOpen::File(file, meta))
}

/// The bytes of a state file opened by [`open_state_file`] (so with the same guarantees).
pub fn read_state_bytes(path: &Path, max: u64) -> Result<StateBytes> {
    let (mut file, meta) = match open_state_file(path, max)? {
        StateOpen::Absent => return Ok(StateBytes::Absent),
        StateOpen::Bad(why) => return Ok(StateBytes::Bad(why)),
        StateOpen::File(file, meta) => (file, meta),
    };
    // Sized from the open file (bounded by `max` above): one read, and no buffer grown by
    // doubling, whose fresh pages cost more than the copy on a large file.
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(meta.len() as usize + 1)
        .with_context(|| format!("reading {}", path.display()))?;
    Read::by_ref(&mut file)
        .take(max + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("reading {}", path.display()))?;
    if bytes.len() as u64 > max {
        return Ok(StateBytes::Bad(
            "it grew past the size of any such file".into(),
        ));
    }
    Ok(StateBytes::Bytes(bytes, meta))
}

/// [`read_state_bytes`] for a TOML or Markdown state file: at most [`MAX_STATE_FILE`] bytes of
/// UTF-8.
pub fn read_state_file(path: &Path) -> Result<StateFile> {
    Ok(match read_state_bytes(path, MAX_STATE_FILE)? {
        StateBytes::Absent => StateFile::Absent,
        StateBytes::Bad(why) => StateFile::Bad(why),
        StateBytes::Bytes(bytes, meta) => match String::from_utf8(bytes) {
            Ok(text) => StateFile::Text(text, meta),
            Err(_) => StateFile::Bad("it is not UTF-8 text".into()),
        },
    })
}

/// A held `<file>.lock`. Dropping it without [`LockFile::commit`] removes it and leaves the file.
#[derive(Debug)]
pub struct LockFile {
    lock: PathBuf,
    target: PathBuf,
    file: Option<File>,
    /// fsync the content before the rename and the directory after it.
    durable: bool,
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

/// A failed write of a state file, as a one-line error with a hint.
fn write_error(e: std::io::Error, path: &Path, what: &str) -> anyhow::Error {
    let hint = match e.raw_os_error() {
        Some(nix::libc::ENOSPC) | Some(nix::libc::EDQUOT) => {
            "the disk is full: free some space and run the command again"
        }
        Some(nix::libc::EROFS) => "the file system is read-only",
        Some(nix::libc::EACCES) | Some(nix::libc::EPERM) => {
            "check the permissions of the repository's .git/git-session directory"
        }
        Some(nix::libc::EISDIR) => "a directory stands where the file should be: move it away",
        _ => "the previous state is unchanged; run the command again once the cause is fixed",
    };
    crate::error::UserError::refused(format!("{what} {} failed: {e}", path.display()))
        .hinted(hint)
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
                crate::output::warn(format!(
                    "{} was not a lock file; moved to {}",
                    lock.display(),
                    aside.display()
                ));
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Counter {
        version: u32,
        n: u64,
    }

    #[test]
    fn concurrent_updates_lose_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path());
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..25 {
                        store
                            .update::<Counter, _>("c.toml", |c| {
                                let n = c.map_or(0, |c| c.n);
                                Ok(Some(Counter {
                                    version: 1,
                                    n: n + 1,
                                }))
                            })
                            .unwrap();
                    }
                });
            }
        });
        let c: Counter = store.read("c.toml").unwrap().unwrap();
        assert_eq!(c.n, 200);
    }

    #[test]
    fn lock_of_dead_owner_is_broken() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path());
        let mut dead = ProcessId::current();
        dead.start += 7;
        fs::write(
            dir.path().join("c.toml.lock"),
            format!("{} {} {}\n", dead.pid, dead.start, dead.host),
        )
        .unwrap();
        store
            .update::<Counter, _>("c.toml", |_| Ok(Some(Counter { version: 1, n: 1 })))
            .unwrap();
        assert!(!dir.path().join("c.toml.lock").exists());
    }

    #[test]
    fn lock_of_live_owner_is_respected() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path()).with_lock_wait(Duration::from_millis(100));
        let _held = store.lock("c.toml").unwrap();
        let err = store
            .update::<Counter, _>("c.toml", |_| Ok(Some(Counter { version: 1, n: 1 })))
            .unwrap_err();
        assert!(err.downcast_ref::<LockBusy>().is_some());
    }

    #[test]
    fn corrupt_file_is_set_aside() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path());
        fs::write(dir.path().join("c.toml"), "n = [unclosed").unwrap();
        assert_eq!(store.read::<Counter>("c.toml").unwrap(), None);
        let names: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert!(
            names.iter().any(|n| n.starts_with("c.toml.corrupt-")),
            "{names:?}"
        );
        assert!(!dir.path().join("c.toml").exists());
    }
}
