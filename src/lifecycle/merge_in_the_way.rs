//! What of the base's worktree stands in a merge's way, by git's own rule for
//! `git read-tree -m -u <old> <new>` (the step that brings that worktree along): a path the merge
//! changes must be exactly as `<old>` has it, in the index and on disk, and a path it adds must
//! not be there at all; every other path may hold uncommitted changes, which the update keeps
//! exactly as they are.
//!
//! Invariant: this only reads. Refusing here is a courtesy (a clear list before anything moves);
//! `read-tree -m -u` itself still refuses anything it would overwrite, and the merge then rolls
//! back.

use crate::git::Oid;
use anyhow::Result;
use std::collections::BTreeSet;
use std::path::Path;

/// The tracked paths of `worktree` that differ from its HEAD, staged or not (both names of a
/// rename or copy), from `git status --porcelain -z`.
pub fn uncommitted(worktree: &Path) -> Result<BTreeSet<String>> {
    let records = super::merge_journal::names(
        worktree,
        &["status", "--porcelain", "-z", "--untracked-files=no"],
    )?;
    let mut out = BTreeSet::new();
    let mut records = records.into_iter();
    while let Some(r) = records.next() {
        let (Some(xy), Some(path)) = (r.get(..2), r.get(3..)) else {
            continue;
        };
        out.insert(path.to_string());
        // A rename or copy names its source in the record that follows.
        if xy.contains('R') || xy.contains('C') {
            if let Some(source) = records.next() {
                out.insert(source);
            }
        }
    }
    Ok(out)
}

/// The paths that stop `read-tree -m -u <from> <to>` in `worktree`, sorted: each uncommitted
/// change to a path the merge changes, and each file already where the merge adds one.
pub fn in_the_way(worktree: &Path, from: Oid, to: Oid) -> Result<Vec<String>> {
    let (f, t) = (from.to_string(), to.to_string());
    let changed = super::merge_journal::names(
        worktree,
        &["diff", "--name-only", "-z", "--no-renames", &f, &t, "--"],
    )?;
    if changed.is_empty() {
        return Ok(Vec::new());
    }
    let dirty = uncommitted(worktree)?;
    let added: BTreeSet<String> = super::merge_journal::names(
        worktree,
        &[
            "diff",
            "--name-only",
            "-z",
            "--no-renames",
            "--diff-filter=A",
            &f,
            &t,
            "--",
        ],
    )?
    .into_iter()
    .collect();
    let mut out: Vec<String> = changed
        .into_iter()
        .filter(|p| {
            dirty.contains(p)
                || (added.contains(p) && std::fs::symlink_metadata(worktree.join(p)).is_ok())
        })
        .collect();
    out.sort();
    Ok(out)
}
