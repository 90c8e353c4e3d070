//! A session worktree's own disk use: what removing the worktree would give back, beyond what
//! it shares with the main worktree. Shown by `list --wide`, `list --json` and `info`; measured
//! once per change of the worktree and kept in the store (`disk-use.toml`).
//!
//! What counts ([`measure`]): the blocks the file system allocated (`st_blocks`, so sparse
//! files count what they hold) of every regular file under the worktree's root that has one
//! link, found without following symbolic links. So:
//! - a `[create] link`ed directory (a symbolic link to the main worktree's) counts nothing, and
//!   nothing under it is visited;
//! - a file with more than one hard link shares its blocks with another name (the main
//!   worktree's file, a package manager's store) and counts nothing;
//! - a reflinked (copy-on-write) clone made by `[create] copy` counts in full: the file system
//!   shares its blocks, but only an `ioctl` (FIEMAP) could say which, and this crate has no
//!   `unsafe`. On Btrfs, XFS and APFS the figure is therefore an upper bound; `create` said how
//!   many files it cloned;
//! - directories, symbolic links themselves, the worktree's `.git` file and what lies on
//!   another file system (a mount point inside the worktree) count nothing.
//!
//! Invariants a reader must not break:
//! - Only `list` and `info` measure. The guard, the hooks and the context hook never reach this
//!   module: a walk of a worktree grows with its files.
//! - A measurement is reused while the worktree's [`key`] is unchanged and it is younger than
//!   [`FRESH_FOR`]. The key is cheap (no walk): the worktree's path, its HEAD file, its branch
//!   tip, its index's size and modification time, the list of its uncommitted and untracked
//!   files, and the modification times of its root and of the directories at most two levels
//!   below it (at most [`KEY_DIRS`], in name order). A change deeper in an ignored directory
//!   that none of these see (a file rewritten in `target/debug/deps/`) is measured at the
//!   latest when the measurement is [`FRESH_FOR`] old.
//! - The cache is a display aid: it is written best-effort under the store's lock, an unreadable
//!   one is measured again, and it never decides anything.

use super::{admin_dir_of, Label, State, Status};
use crate::base::clock::Time;
use crate::store::Store;
use serde::{Deserialize, Serialize};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The cache, relative to the store root.
pub const FILE: &str = "disk-use.toml";

/// How long a measurement is reused when nothing in its key changed.
pub const FRESH_FOR: chrono::Duration = chrono::Duration::hours(1);

/// How many directories' modification times the key reads at most.
pub const KEY_DIRS: usize = 256;

/// A worktree's own disk use, as measured at `measured`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskUse {
    /// Bytes allocated to the files counted (see the module doc).
    pub bytes: u64,
    /// How many files were counted.
    pub files: u64,
    pub measured: Time,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    label: String,
    key: String,
    #[serde(flatten)]
    used: DiskUse,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct CacheFile {
    version: u32,
    #[serde(default)]
    entry: Vec<Entry>,
}

/// Whether `status`'s worktree is the session's own to measure: not attached (an attached
/// session shares the worktree it stands in), and there.
fn measurable(status: &Status) -> bool {
    !status.record.attached
        && !matches!(status.state, State::Missing)
        && std::fs::symlink_metadata(&status.record.path).is_ok_and(|m| m.is_dir())
}

/// The key of `status`'s worktree as it is now (see the module doc); no walk.
pub fn key(status: &Status) -> String {
    let root = &status.record.path;
    let mut text = format!("{}\0", root.display());
    if let Some(admin) = admin_dir_of(root) {
        if let Ok(head) = std::fs::read_to_string(admin.join("HEAD")) {
            text.push_str(head.trim());
        }
        if let Ok(m) = std::fs::metadata(admin.join("index")) {
            text.push_str(&format!("\0{} {} {}", m.len(), m.mtime(), m.mtime_nsec()));
        }
    }
    text.push_str(&format!(
        "\0{}\0",
        status.tip.map(|t| t.to_string()).unwrap_or_default()
    ));
    for f in &status.dirty {
        text.push_str(f);
        text.push('\0');
    }
    for (path, m) in key_dirs(root) {
        text.push_str(&format!("{path}\0{} {}\0", m.0, m.1));
    }
    format!("{:016x}", crate::base::hash::fnv1a_64(text.as_bytes()))
}

/// The root and the directories at most two levels below it (not through symbolic links), in
/// name order, at most [`KEY_DIRS`]: each with its modification time.
fn key_dirs(root: &Path) -> Vec<(String, (i64, i64))> {
    let mut out = Vec::new();
    let mut level = vec![(String::new(), root.to_path_buf())];
    for depth in 0..=2 {
        let mut next = Vec::new();
        for (rel, dir) in level {
            if out.len() >= KEY_DIRS {
                return out;
            }
            let Ok(m) = std::fs::symlink_metadata(&dir) else {
                continue;
            };
            out.push((rel.clone(), (m.mtime(), m.mtime_nsec())));
            if depth == 2 {
                continue;
            }
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut subdirs: Vec<(String, std::path::PathBuf)> = entries
                .flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .filter(|e| !(depth == 0 && e.file_name() == ".git"))
                .map(|e| {
                    (
                        format!("{rel}/{}", e.file_name().to_string_lossy()),
                        e.path(),
                    )
                })
                .collect();
            subdirs.sort();
            next.extend(subdirs);
        }
        level = next;
    }
    out
}

/// Walks the worktree at `root` and counts its own disk use (see the module doc).
pub fn measure(root: &Path) -> std::io::Result<(u64, u64)> {
    let dev = std::fs::symlink_metadata(root)?.dev();
    let (mut bytes, mut files) = (0u64, 0u64);
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            // The root must be readable; a directory below it that went away or cannot be read
            // while we walk holds nothing we can count.
            Err(e) if dir == root => return Err(e),
            Err(_) => continue,
        };
        for entry in entries.flatten() {
            if dir == root && entry.file_name() == ".git" {
                continue;
            }
            // Not followed: a symbolic link's metadata is the link's.
            let Ok(m) = entry.metadata() else {
                continue;
            };
            if m.dev() != dev {
                continue;
            }
            if m.is_dir() {
                stack.push(entry.path());
            } else if m.is_file() && m.nlink() == 1 {
                bytes += m.blocks() * 512;
                files += 1;
            }
        }
    }
    Ok((bytes, files))
}

/// The disk use of each of `statuses` (`None`: attached, missing, or not readable): from the
/// cache where its key is unchanged and it is fresh, measured otherwise (in parallel), and the
/// cache written back once when anything was measured.
pub fn of_sessions(store: &Store, statuses: &[&Status], now: Time) -> Vec<Option<DiskUse>> {
    use rayon::prelude::*;
    let cache: CacheFile = store.read(FILE).ok().flatten().unwrap_or_default();
    let found: Vec<(Option<DiskUse>, Option<Entry>)> = statuses
        .par_iter()
        .map(|s| {
            if !measurable(s) {
                return (None, None);
            }
            let key = key(s);
            let label = s.record.label.as_str();
            if let Some(e) = cache.entry.iter().find(|e| {
                e.label == label
                    && e.key == key
                    && e.used.measured <= now
                    && now - e.used.measured < FRESH_FOR
            }) {
                return (Some(e.used.clone()), None);
            }
            match measure(&s.record.path) {
                Ok((bytes, files)) => {
                    let used = DiskUse {
                        bytes,
                        files,
                        measured: now,
                    };
                    let entry = Entry {
                        label: label.to_string(),
                        key,
                        used: used.clone(),
                    };
                    (Some(used), Some(entry))
                }
                Err(_) => (None, None),
            }
        })
        .collect();
    let fresh: Vec<Entry> = found.iter().filter_map(|(_, e)| e.clone()).collect();
    if !fresh.is_empty() {
        remember(store, fresh);
    }
    found.into_iter().map(|(u, _)| u).collect()
}

/// Writes `fresh` measurements into the cache, dropping entries of sessions that are gone.
/// Best effort: a cache that cannot be written is measured again next time.
fn remember(store: &Store, fresh: Vec<Entry>) {
    let _ = store.update::<CacheFile, _>(FILE, |file| {
        let mut file = file.unwrap_or_default();
        file.version = 1;
        file.entry.retain(|e| {
            !fresh.iter().any(|f| f.label == e.label)
                && Label::new(&e.label).is_ok_and(|l| {
                    std::fs::symlink_metadata(store.path(&super::SessionRecord::store_path(&l)))
                        .is_ok()
                })
        });
        file.entry.extend(fresh.iter().cloned());
        file.entry.sort_by(|a, b| a.label.cmp(&b.label));
        Ok(Some(file))
    });
}

/// `1.0 MiB`, `512 KiB`, `0 B`: a size for people (binary units, one decimal past KiB).
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hard_links_and_symbolic_links_count_nothing_and_files_count_their_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("wt");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(root.join("target/debug")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("big"), vec![1u8; 256 << 10]).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("linked")).unwrap();
        std::fs::hard_link(outside.join("big"), root.join("hard")).unwrap();
        std::fs::write(root.join(".git"), "gitdir: nowhere\n").unwrap();
        let (empty, none) = measure(&root).unwrap();
        assert_eq!((empty, none), (0, 0));
        std::fs::write(root.join("target/debug/app"), vec![2u8; 128 << 10]).unwrap();
        let (bytes, files) = measure(&root).unwrap();
        assert_eq!(files, 1);
        assert!((128 << 10..(128 << 10) + 65536).contains(&bytes), "{bytes}");
    }

    #[test]
    fn sizes_read_as_people_read_them() {
        assert_eq!(human(0), "0 B");
        assert_eq!(human(1023), "1023 B");
        assert_eq!(human(4096), "4 KiB");
        assert_eq!(human(1 << 20), "1.0 MiB");
        assert_eq!(human(3 << 29), "1.5 GiB");
    }
}
