//! The crash-safe state store shared by every worktree, the guard and the context hook.
//!
//! Layout under `<git common dir>/git-session/` (or `$XDG_STATE_HOME/git-session/` outside a
//! repository): `sessions/<label>.toml`, `claims/<label>.toml`, `in-flight/<label>.toml` (a
//! session's commits in flight: `session::in_flight`), `agents/<id>.toml` (and its mark
//! `agents/<id>.doing`: `context::agent`),
//! `handoffs/<label>/<n>.md`, `merges/<label>.toml` (a merge under way: `lifecycle::merge_journal`),
//! `removals/<label>.toml` (a removal under way: `session::removal`), `leases.toml` (ports and
//! names leased to sessions: `ownership::leases`),
//! `audit.log` (JSON lines), plus derived files that may be deleted at
//! any time (`claims.index`).
//!
//! Invariants a reader must not break:
//! - Every write of a state file goes through [`Store::update`] (or [`Store::write_new`]): take
//!   `<file>.lock` with `O_EXCL` (its first line names its owner), write the new content into
//!   `<file>.lock.new`, fsync, rename that over the file, remove the lock. The lock names its
//!   owner from its first byte to its removal, so a writer killed at any step leaves a lock the
//!   next taker can judge (and break at once: its owner is dead). Readers never lock; they see the old file or the new one, never a torn one. Only a
//!   [`Store::volatile`] store skips the fsyncs, for facts that matter only while the machine is
//!   up (a running process's pid): a killed process loses nothing either way, since the page
//!   cache outlives it, and after a machine crash such a fact is void anyway.
//! - A lock is broken only when its owner is provably dead (pid + start time + host), or when it
//!   has held no parsable owner for [`STALE_UNOWNED`]. A lock from another host is waited on, then
//!   reported; it is never broken.
//! - A file that does not parse is renamed to `<file>.corrupt-<time>` and reported with its path;
//!   it is never silently dropped or overwritten.
//! - `audit.log` is append-only: one `write` of one line per event.
//! - A mark ([`Store::set_mark`], in [`mark`]) is a fact small enough to be a symbolic link's target text,
//!   replaced by one rename and read by one `readlink`, never followed: no lock, no fsync, no
//!   data block to flush (ext4 flushes a regular file renamed over another at the rename, about
//!   0.3 ms). Only for a fact whose last writer may win and that a machine crash makes void
//!   (what an agent is doing); a mark that does not parse is its reader's "unknown".

/// The store refused a path or could not be read; the command line words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreError {
    /// A state path that is not a plain name inside the store (`..`, a leading `.`, a separator).
    NotAPlainName { rel: String },
    /// A store directory that cannot be listed.
    Unreadable { path: PathBuf, error: String },
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::NotAPlainName { rel } => {
                write!(f, "not a plain store name: {rel:?}")
            }
            StoreError::Unreadable { path, error } => {
                write!(f, "cannot read {}: {error}", path.display())
            }
        }
    }
}

impl std::error::Error for StoreError {}

mod lock;
mod mark;

pub use crate::base::files::{
    open_state_file, read_state_bytes, read_state_file, read_text, StateBytes, StateFile,
    StateOpen, MAX_STATE_FILE,
};
pub use lock::{LockFile, WriteFailed};

use crate::base::clock;
use anyhow::{Context, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fs::{self, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// An unparsable lock (its owner crashed between truncating and writing it) is broken after this.
pub const STALE_UNOWNED: Duration = Duration::from_secs(10);

/// How long commands wait for a lock before giving up.
pub const DEFAULT_LOCK_WAIT: Duration = Duration::from_secs(10);

/// One store: its directory, how long its writers wait for a lock, whether they fsync.
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
    /// The store in the directory `root` (made on its first write).
    pub fn at(root: impl Into<PathBuf>) -> Store {
        Store {
            root: root.into(),
            lock_wait: DEFAULT_LOCK_WAIT,
            durable: true,
        }
    }

    /// The store of `repo`, under its git common directory (shared by all its worktrees).
    pub fn of(repo: &crate::git::Repo) -> Store {
        Store::for_common_dir(&repo.common_dir)
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

    /// The same store, waiting at most `wait` for a lock before giving up.
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

    /// The store's directory.
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
            Err(StoreError::NotAPlainName {
                rel: rel.to_string(),
            }
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
        let entries = fs::read_dir(&path).map_err(|e| StoreError::Unreadable {
            path: path.clone(),
            error: e.to_string(),
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

    /// Removes the state file `rel` under its lock; an absent file is no error.
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

    /// Moves a damaged file at `path` to `<path>.corrupt-<time>` and warns, saying `why`.
    pub fn set_aside(&self, path: &Path, why: &str) {
        let stamp = clock::now().format("%Y%m%dT%H%M%SZ");
        let mut aside = path.as_os_str().to_owned();
        aside.push(format!(".corrupt-{stamp}"));
        let aside = PathBuf::from(aside);
        let why = why.lines().next().unwrap_or("").trim().to_string();
        match fs::rename(path, &aside) {
            Ok(()) => {
                crate::base::announce::emit(crate::base::announce::Announcement::SetAside {
                    path: path.to_path_buf(),
                    why: why.clone(),
                    aside: aside.clone(),
                });
                self.audit(
                    "corrupt-state",
                    serde_json::json!({"file": path.display().to_string(),
                                       "moved_to": aside.display().to_string(), "error": why}),
                );
            }
            Err(e) => {
                crate::base::announce::emit(crate::base::announce::Announcement::CannotSetAside {
                    path: path.to_path_buf(),
                    why,
                    error: e.to_string(),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::process::ProcessId;
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

    /// A store whose `c.toml` is locked by a dead process; the lock and its breaking turn's path.
    fn a_dead_owners_lock() -> (tempfile::TempDir, Store, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path()).with_lock_wait(Duration::from_millis(100));
        let mut dead = ProcessId::current();
        dead.start += 7;
        let lock = dir.path().join("c.toml.lock");
        let turn = dir.path().join("c.toml.lock.break");
        fs::write(
            &lock,
            format!("{} {} {}\n", dead.pid, dead.start, dead.host),
        )
        .unwrap();
        (dir, store, lock, turn)
    }

    #[test]
    fn a_stale_lock_is_broken_only_in_turn_and_a_dead_breakers_turn_is_taken_over() {
        let (_dir, store, lock, turn) = a_dead_owners_lock();
        // Another breaker is at work: the stale lock stays until its turn ends.
        fs::write(&turn, "").unwrap();
        let update = |store: &Store| {
            store.update::<Counter, _>("c.toml", |_| Ok(Some(Counter { version: 1, n: 1 })))
        };
        let err = update(&store).unwrap_err();
        assert!(err.downcast_ref::<LockBusy>().is_some(), "{err:#}");
        assert!(lock.exists());
        // That breaker died long ago: its turn is taken over, the lock broken, the turn ended.
        let old = std::time::SystemTime::now() - STALE_UNOWNED - Duration::from_secs(5);
        fs::File::options()
            .write(true)
            .open(&turn)
            .unwrap()
            .set_modified(old)
            .unwrap();
        update(&store).unwrap();
        assert!(!lock.exists() && !turn.exists());
    }

    #[test]
    fn a_directory_where_the_breakers_turn_goes_is_moved_aside_not_a_wall() {
        let (_dir, store, lock, turn) = a_dead_owners_lock();
        fs::create_dir_all(turn.join("inside")).unwrap();
        let (done, said) = crate::base::announce::capture(|| {
            store.update::<Counter, _>("c.toml", |_| Ok(Some(Counter { version: 1, n: 1 })))
        });
        done.unwrap();
        assert!(!lock.exists() && !turn.exists());
        match &said[..] {
            [crate::base::announce::Announcement::NotALockFile { lock: at, moved_to }] => {
                assert_eq!(at, &turn);
                assert!(moved_to.join("inside").is_dir(), "{moved_to:?}");
            }
            other => panic!("{other:?}"),
        }
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
        let (read, said) =
            crate::base::announce::capture(|| store.read::<Counter>("c.toml").unwrap());
        assert_eq!(read, None);
        match &said[..] {
            [crate::base::announce::Announcement::SetAside { path, aside, .. }] => {
                assert_eq!(path, &dir.path().join("c.toml"));
                assert!(
                    aside.to_string_lossy().contains("c.toml.corrupt-"),
                    "{aside:?}"
                );
            }
            other => panic!("announced {other:?}"),
        }
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
