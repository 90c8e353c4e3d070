//! Writes an agent made outside its own session's worktree and that went through
//! (`[guard] escape = "warn"`): recorded by the context hook when it lets one through, named by
//! `list` and `info` while the change is still there, and by the post-commit of the worktree
//! that commits it (`escapes.toml` in the store).
//!
//! File format: `version = 1`, then one `[[write]]` per (writer, worktree, path): `writer` (the
//! agent's session), `root` (the worktree written into), `path` (relative to it, `/`-separated),
//! `before` (the blob id the file held before the first such write; absent: no file) and `at`.
//!
//! Invariants a reader must not break:
//! - A write is recorded before it happens (the hook answers before the tool runs), so whether
//!   it changed anything is read later from the file itself: a recorded write is a *change*
//!   only while the file differs both from what it held before and from its worktree's `HEAD`
//!   ([`changes`]). A tool that failed, a change reverted and a change committed are not shown.
//! - Every change to the file goes through [`crate::store::Store::update`] under its lock. The
//!   file is bounded ([`MAX_WRITES`], oldest dropped first): the audit log keeps every one.
//! - Readers only read: `list` and `info` never rewrite the file; the post-commit takes what it
//!   committed out of it ([`take_committed`]).

use crate::base::clock::{self, Time};
use crate::git::{hash_blob_file, Repo};
use crate::session::Label;
use crate::store::Store;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file, relative to the store root.
pub const FILE: &str = "escapes.toml";

/// Writes kept; older ones are dropped first (each is in the audit log).
pub const MAX_WRITES: usize = 256;

/// One file an agent wrote in a worktree not its session's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Write {
    /// The session whose agent wrote it.
    pub writer: String,
    /// The worktree written into (the main one or another session's).
    pub root: PathBuf,
    /// The file, relative to `root`, `/`-separated.
    pub path: String,
    /// The blob the file held before the first such write; `None`: there was no file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    pub at: Time,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct EscapeFile {
    version: u32,
    #[serde(default)]
    write: Vec<Write>,
}

/// Records that `writer`'s agent is about to write `target` inside the worktree at `root`.
/// A second write of the same file by the same session keeps the first one's `before`.
pub fn record(store: &Store, writer: &Label, root: &Path, target: &Path) -> Result<()> {
    let Some(path) = relative(root, target) else {
        return Ok(());
    };
    let before = hash_blob_file(target).map(|o| o.to_string());
    let now = clock::now();
    store.update::<EscapeFile, _>(FILE, |file| {
        let mut file = file.unwrap_or(EscapeFile {
            version: 1,
            write: Vec::new(),
        });
        let same = |w: &Write| w.writer == writer.as_str() && w.root == root && w.path == path;
        match file.write.iter_mut().find(|w| same(w)) {
            Some(w) => w.at = now,
            None => file.write.push(Write {
                writer: writer.to_string(),
                root: root.to_path_buf(),
                path: path.clone(),
                before,
                at: now,
            }),
        }
        file.write.sort_by_key(|w| w.at);
        let excess = file.write.len().saturating_sub(MAX_WRITES);
        file.write.drain(..excess);
        Ok(Some(file))
    })?;
    Ok(())
}

/// Every recorded write that is still a change in its worktree: the file differs from what it
/// held before the write and from the worktree's `HEAD`. A worktree that cannot be opened (gone)
/// shows nothing of its own.
pub fn changes(store: &Store) -> Result<Vec<Write>> {
    let file: Option<EscapeFile> = store.read(FILE)?;
    let Some(file) = file else {
        return Ok(Vec::new());
    };
    let mut heads: BTreeMap<PathBuf, Option<Repo>> = BTreeMap::new();
    Ok(file
        .write
        .into_iter()
        .filter(|w| {
            let repo = heads
                .entry(w.root.clone())
                .or_insert_with(|| Repo::open(&w.root).ok());
            repo.as_ref().is_some_and(|r| still_changed(r, w))
        })
        .collect())
}

/// Whether `w`'s file still holds a change that neither its worktree's `HEAD` nor the file
/// before the write holds.
fn still_changed(repo: &Repo, w: &Write) -> bool {
    let now = hash_blob_file(&w.root.join(&w.path)).map(|o| o.to_string());
    if now == w.before {
        return false;
    }
    let objects = repo.objects();
    let in_head = objects
        .head_id()
        .and_then(|h| objects.entry_in_commit(h, &w.path).ok().flatten())
        .map(|o| o.to_string());
    now != in_head
}

/// Takes out of the file the writes into the worktree at `root` of the `paths` a commit there
/// just recorded, and returns them: that commit holds what another session's agent wrote.
pub fn take_committed(store: &Store, root: &Path, paths: &[String]) -> Result<Vec<Write>> {
    if std::fs::symlink_metadata(store.path(FILE)).is_err() {
        return Ok(Vec::new());
    }
    let root = crate::session::normalize(root);
    let mut taken = Vec::new();
    store.update::<EscapeFile, _>(FILE, |file| {
        let Some(mut file) = file else {
            return Ok(None);
        };
        file.write.retain(|w| {
            let committed =
                crate::session::normalize(&w.root) == root && paths.iter().any(|p| p == &w.path);
            if committed {
                taken.push(w.clone());
            }
            !committed
        });
        Ok((!file.write.is_empty()).then_some(file))
    })?;
    Ok(taken)
}

/// `target` relative to `root`, `/`-separated; `None` when it is not below it.
fn relative(root: &Path, target: &Path) -> Option<String> {
    let rel = target.strip_prefix(root).ok()?;
    let parts: Vec<&str> = rel
        .components()
        .map(|c| c.as_os_str().to_str())
        .collect::<Option<_>>()?;
    (!parts.is_empty()).then(|| parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_recorded_relative_and_slash_separated() {
        let root = Path::new("/w/main");
        assert_eq!(
            relative(root, Path::new("/w/main/src/a.rs")).as_deref(),
            Some("src/a.rs")
        );
        assert_eq!(relative(root, Path::new("/w/main")), None);
        assert_eq!(relative(root, Path::new("/w/other/a.rs")), None);
    }

    #[test]
    fn the_file_keeps_the_newest_writes_and_the_first_before() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path().join("store"));
        let root = dir.path().join("wt");
        std::fs::create_dir_all(&root).unwrap();
        let target = root.join("a.txt");
        let me = Label::new("A").unwrap();
        record(&store, &me, &root, &target).unwrap();
        std::fs::write(&target, "x").unwrap();
        record(&store, &me, &root, &target).unwrap();
        let file: EscapeFile = store.read(FILE).unwrap().unwrap();
        assert_eq!(file.write.len(), 1);
        assert_eq!(file.write[0].before, None, "the first write found no file");
        for n in 0..MAX_WRITES + 3 {
            record(&store, &me, &root, &root.join(format!("f{n}"))).unwrap();
        }
        let file: EscapeFile = store.read(FILE).unwrap().unwrap();
        assert_eq!(file.write.len(), MAX_WRITES);
        assert!(!file
            .write
            .iter()
            .any(|w| w.path == "a.txt" || w.path == "f0"));
    }
}
