//! Names the index does not know, and files whose raw content differs from their blob: what
//! the walk leaves to the repository (ignore rules, attributes, libgit2's conversions).

use super::dir_walk::{bytes_path, join};
use crate::git::Checkout;
use anyhow::{Context, Result};
use std::collections::HashSet;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Raw content differs from the blob; with a possible CRLF or ident conversion, libgit2 (which
/// applies those built-in conversions and runs no filter program) decides.
pub(super) fn filtered_differs(repo: &Checkout, path: &[u8], autocrlf: bool) -> Result<bool> {
    let rel = bytes_path(path);
    let attr_set = |name: &str| repo.has_attr(rel, name);
    if !(autocrlf || ["text", "eol", "crlf", "ident"].into_iter().any(attr_set)) {
        return Ok(true);
    }
    repo.worktree_file_differs(rel)
}

/// Adds an untracked, not ignored name (or, for a directory, the files in it) to `dirty`.
pub(super) fn untracked(
    repo: &Checkout,
    workdir: &Path,
    mut path: Vec<u8>,
    is_dir: bool,
    dirty: &mut HashSet<Vec<u8>>,
) -> Result<()> {
    if !is_dir {
        if !ignored(repo, &path)? {
            dirty.insert(path);
        }
        return Ok(());
    }
    path.push(b'/');
    if ignored(repo, &path)? {
        return Ok(());
    }
    let abs = workdir.join(bytes_path(&path));
    if is_nested_repository(&abs) {
        dirty.insert(path);
        return Ok(());
    }
    path.pop();
    let Ok(read) = std::fs::read_dir(&abs) else {
        return Ok(());
    };
    for entry in read.flatten() {
        let name = entry.file_name();
        if name.as_bytes() == b".git" {
            continue;
        }
        let Ok(ft) = entry.file_type() else { continue };
        if ft.is_dir() || ft.is_file() || ft.is_symlink() {
            untracked(
                repo,
                workdir,
                join(&path, name.as_bytes()),
                ft.is_dir(),
                dirty,
            )?;
        }
    }
    Ok(())
}

fn ignored(repo: &Checkout, path: &[u8]) -> Result<bool> {
    repo.is_ignored(bytes_path(path)).with_context(|| {
        format!(
            "checking whether {} is ignored",
            String::from_utf8_lossy(path)
        )
    })
}

/// A directory git lists as one untracked entry instead of entering it: it holds a `.git`
/// directory with a `HEAD`, or a `.git` file pointing elsewhere.
fn is_nested_repository(dir: &Path) -> bool {
    let dotgit = dir.join(".git");
    match std::fs::symlink_metadata(&dotgit) {
        Ok(m) if m.is_dir() => dotgit.join("HEAD").exists(),
        Ok(m) if m.is_file() => std::fs::read(&dotgit).is_ok_and(|t| t.starts_with(b"gitdir:")),
        _ => false,
    }
}
