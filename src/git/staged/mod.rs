//! What a commit is about to change: the index git hands a hook, compared with HEAD. Also the
//! staged part of `list`'s status walk ([`crate::git::status`]), which takes the same routes.
//!
//! Why not libgit2's `diff_tree_to_index`: libgit2 hashes the whole index file to verify
//! its checksum, materialises every entry, and walks every tree of HEAD, so its cost grows with
//! the repository. The guard runs on every commit and must cost about a process start, its work
//! growing with what is staged, not with the repository. So the index is read through
//! [`crate::git::index::Cursor`] (read-only; versions 2, 3 and 4), and the answer comes from the
//! first of three routes that applies:
//!
//! 1. **Two trees.** Before it runs the pre-commit hook, `git commit` (plain, `-a`, `-i`) brings
//!    the index's cache tree (its `TREE` extension) up to date and writes the trees it names:
//!    the root entry then names the very tree that will be committed. When the root entry is
//!    valid, counts every entry the header announces, and its tree is in the object database,
//!    the answer is HEAD's tree compared with that tree, reading only the subtrees whose ids
//!    differ ([`trees`]). No entry of the index is read.
//! 2. **One forward pass** over the entries ([`tree_walk`]; a partial commit, `git commit <path>`,
//!    hands the hook a temporary index whose cache tree is only partly valid; so does an
//!    intent-to-add entry), compared with HEAD's trees as it goes, hopping over every directory
//!    whose cache-tree entry still matches HEAD.
//! 3. **libgit2's diff**, slower but exact, for anything else: a split index, an unknown version
//!    or required extension, a pass that could not confirm where the extensions are (each an
//!    [`crate::git::index::Unsupported`] from the reader).
//!
//! Invariants: paths are raw bytes from the index, converted lossily only for display and claim
//! matching; nothing here runs a program or writes. An unborn HEAD is an empty tree.

mod tree_walk;
mod trees;

use crate::git::index::{self, Cursor};
use crate::git::{Commit, Objects, Oid, RawTree};
use anyhow::{Context, Result};
use std::path::Path;
use trees::{all_files, diff_trees};

/// Paths that differ between HEAD and the index at `index_path` (additions, modifications,
/// deletions, type changes; a rename shows as its old and its new path), sorted, unique.
pub fn staged_paths(repo: Objects<'_>, index_path: &Path) -> Result<Vec<String>> {
    Ok(read_staged(repo, index_path)?.0)
}

/// [`staged_paths`] against the commit `head` (HEAD as the caller read it; `None`: unborn).
pub fn staged_paths_against(
    repo: Objects<'_>,
    head: Option<Oid>,
    index_path: &Path,
) -> Result<Vec<String>> {
    Ok(finish(
        compare_with(repo, repo.tree_of_commit(head)?, index_path)?.0,
    ))
}

/// [`staged_paths`] as raw bytes, in no particular order (for the status walk).
pub(crate) fn staged_raw(repo: Objects<'_>, index_path: &Path) -> Result<Vec<Vec<u8>>> {
    Ok(compare(repo, index_path)?.0)
}

/// How the routes answered, for tests that pin the fast ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    /// The cache tree named the index's whole tree, present in the object database: HEAD's tree
    /// and it were compared, and no entry was read.
    Trees,
    /// The entries were walked; this many were hopped over without being decoded.
    Walk { hopped: usize },
    /// libgit2's diff answered.
    Libgit2,
}

/// [`staged_paths`], and the route that answered.
fn read_staged(repo: Objects<'_>, index_path: &Path) -> Result<(Vec<String>, Route)> {
    let (raw, route) = compare(repo, index_path)?;
    Ok((finish(raw), route))
}

fn compare(repo: Objects<'_>, index_path: &Path) -> Result<(Vec<Vec<u8>>, Route)> {
    compare_with(repo, repo.head_tree()?, index_path)
}

fn compare_with(
    repo: Objects<'_>,
    head_tree: Option<RawTree>,
    index_path: &Path,
) -> Result<(Vec<Vec<u8>>, Route)> {
    let cursor = match std::fs::File::open(index_path) {
        Ok(f) => Some(Cursor::open(f)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("reading {}", index_path.display())),
    };
    let Some(cursor) = cursor else {
        // No index at all: everything in HEAD would be deleted.
        let mut out = Vec::new();
        if let Some(t) = &head_tree {
            all_files(repo, t, b"", &mut out)?;
        }
        return Ok((out, Route::Walk { hopped: 0 }));
    };
    let fast = cursor.and_then(|mut cursor| {
        if let Some(tree) = cursor.whole_tree(repo) {
            let mut out = Vec::new();
            // A tree of the index missing from the object database (a writer that only
            // computed the ids) leaves the answer to the walk, which needs no index trees.
            if diff_trees(repo, b"", head_tree.as_ref(), Some(&tree), &mut out).is_ok() {
                return Ok((out, Route::Trees));
            }
        }
        let cache = cursor.cache_tree();
        let mut walker = tree_walk::Walker {
            repo,
            cursor,
            out: Vec::new(),
        };
        walker.dir(b"", 0, head_tree.as_ref(), cache.as_ref())?;
        walker.cursor.finish()?;
        let hopped = walker.cursor.hopped;
        Ok((walker.out, Route::Walk { hopped }))
    });
    match fast {
        Ok(answer) => Ok(answer),
        Err(e) if index::is_unsupported(&e) => Ok((
            libgit2_fallback(repo, index_path, head_tree.as_ref())?,
            Route::Libgit2,
        )),
        Err(e) => Err(e).with_context(|| format!("reading the index {}", index_path.display())),
    }
}

/// Paths a commit changed relative to its first parent (all its files for a root commit).
pub fn commit_paths(repo: Objects<'_>, commit: &Commit) -> Result<Vec<String>> {
    let tree = RawTree::read(repo, commit.tree_id()).context("reading the commit's tree")?;
    let mut out = Vec::new();
    match commit.first_parent_tree_id() {
        Some(parent) => {
            let parent_tree = RawTree::read(repo, parent).context("reading the parent's tree")?;
            diff_trees(repo, b"", Some(&parent_tree), Some(&tree), &mut out)?;
        }
        None => all_files(repo, &tree, b"", &mut out)?,
    }
    Ok(finish(out))
}

fn finish(raw: Vec<Vec<u8>>) -> Vec<String> {
    // Valid UTF-8 (nearly every path) keeps its buffer; only the rest is copied, lossily.
    let mut out: Vec<String> = raw
        .into_iter()
        .map(|p| {
            String::from_utf8(p)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

fn libgit2_fallback(
    repo: Objects<'_>,
    index_path: &Path,
    head: Option<&RawTree>,
) -> Result<Vec<Vec<u8>>> {
    index::fit_for_libgit2(index_path)?;
    repo.diff_tree_to_index_file(head, index_path)
}

#[cfg(test)]
mod tests;
