//! Collisions seen before merging: for each session, whether merging it into its base now would
//! conflict (and in which paths), and which other sessions changed the same paths (committed
//! since their merge base, or uncommitted in their worktree).
//!
//! Invariants a reader must not break:
//! - Nothing is added to the repository: `git merge-tree --write-tree` runs with a temporary
//!   object directory (`GIT_OBJECT_DIRECTORY`), the repository's own objects reachable through
//!   `GIT_ALTERNATE_OBJECT_DIRECTORIES`, and the directory is deleted after.
//! - What is computed from the pair of tips (the conflicting paths, the paths the session
//!   committed) is cached in the store (`cache/collisions.toml`) by that pair, so a repeated
//!   `list` runs no git for it; the cache keeps only the pairs of its last reader, and a cache
//!   that cannot be read or written is only slower.

use crate::git::{Oid, Repo, Run};
use crate::session::Status;
use crate::store::Store;
use anyhow::{anyhow, Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

/// One session's collisions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Collisions {
    /// The paths merging it into its base now would conflict in (empty: it merges cleanly);
    /// `None` where there is nothing to merge or it could not be told.
    pub conflicts: Option<Vec<String>>,
    /// Other sessions that changed paths it changed too: each label and those paths.
    pub overlaps: Vec<(String, Vec<String>)>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Entry {
    conflicts: Vec<String>,
    changed: Vec<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Cache {
    #[serde(default)]
    pairs: BTreeMap<String, Entry>,
}

const CACHE: &str = "cache/collisions.toml";
const GIT_LIMIT: Duration = Duration::from_secs(60);

fn nul_list(text: &str) -> Vec<String> {
    text.split('\0')
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}

/// The paths `git merge-tree --write-tree <base> <tip>` conflicts in, written to a temporary
/// object directory that is deleted after.
fn conflicts(dir: &Path, objects: &Path, base: Oid, tip: Oid) -> Result<Vec<String>> {
    let scratch = tempfile::Builder::new()
        .prefix("git-session-merge-tree")
        .tempdir()
        .context("a temporary object directory")?;
    let (b, t) = (base.to_string(), tip.to_string());
    let out = Run::new(dir, super::integrate::merge_tree_args(None, &b, &t, true))
        .env("GIT_OBJECT_DIRECTORY", scratch.path())
        .env("GIT_ALTERNATE_OBJECT_DIRECTORIES", objects)
        .deadline(GIT_LIMIT)
        .also_ok(1)
        .run()
        .map_err(|e| anyhow!("git merge-tree: {e}"))?;
    if out.code == 0 {
        return Ok(Vec::new());
    }
    // The tree's id, then the conflicted paths up to an empty field.
    let mut paths: Vec<String> = out
        .stdout
        .split('\0')
        .skip(1)
        .take_while(|p| !p.is_empty())
        .map(str::to_string)
        .collect();
    paths.dedup();
    Ok(paths)
}

/// The paths the session committed since its merge base with the base.
fn committed(dir: &Path, base: Oid, tip: Oid) -> Result<Vec<String>> {
    let range = format!("{base}...{tip}");
    let out = Run::new(
        dir,
        ["diff", "--name-only", "-z", "--no-renames", &range, "--"],
    )
    .deadline(GIT_LIMIT)
    .run()
    .map_err(|e| anyhow!("git diff {range}: {e}"))?;
    Ok(nul_list(&out.stdout))
}

/// The collisions of each of `statuses`, in their order (see the module doc).
pub fn collisions(repo: &Repo, store: &Store, statuses: &[Status]) -> Vec<Collisions> {
    let cache: Cache = store.read(CACHE).ok().flatten().unwrap_or_default();
    let dir = repo.porcelain_dir();
    let objects = repo.common_dir.join("objects");
    let mut fresh = Cache::default();
    let mut computed = false;
    let entries: Vec<Option<Entry>> = statuses
        .iter()
        .map(|s| {
            let (Some(tip), Some(base)) = (s.tip, s.base_tip) else {
                return None;
            };
            if s.merged.is_merged() {
                return None;
            }
            let key = format!("{base}-{tip}");
            let entry = match cache.pairs.get(&key) {
                Some(e) => e.clone(),
                None => {
                    computed = true;
                    Entry {
                        conflicts: conflicts(dir, &objects, base, tip).ok()?,
                        changed: committed(dir, base, tip).ok()?,
                    }
                }
            };
            fresh.pairs.insert(key, entry.clone());
            Some(entry)
        })
        .collect();
    if computed || fresh.pairs.len() != cache.pairs.len() {
        let _ = store.update::<Cache, _>(CACHE, |_| Ok(Some(fresh)));
    }
    let changed: Vec<BTreeSet<&str>> = statuses
        .iter()
        .zip(&entries)
        .map(|(s, e)| {
            let mut set: BTreeSet<&str> = s.dirty.iter().map(String::as_str).collect();
            if let Some(e) = e {
                set.extend(e.changed.iter().map(String::as_str));
            }
            set
        })
        .collect();
    statuses
        .iter()
        .enumerate()
        .map(|(i, _)| Collisions {
            conflicts: entries[i].as_ref().map(|e| e.conflicts.clone()),
            overlaps: statuses
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .filter_map(|(j, other)| {
                    let paths: Vec<String> = changed[i]
                        .intersection(&changed[j])
                        .map(|p| p.to_string())
                        .collect();
                    (!paths.is_empty()).then(|| (other.record.label.to_string(), paths))
                })
                .collect(),
        })
        .collect()
}
