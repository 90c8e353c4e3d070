//! Objects: commits, HEAD, blob ids, and the trees [`super::RawTree`] reads, through libgit2.
//!
//! [`Objects`] is a borrowed view of one opened repository's object database and HEAD: the
//! guard's tree comparison ([`crate::git::staged`]) and the staged part of the status walk read
//! through it, whichever handle ([`super::Repo`] or [`super::Checkout`]) opened the repository.
//! [`Commit`] is a thin wrapper over libgit2's own (one pointer, no copy).
//!
//! Invariants: nothing here writes an object or runs a program; "not found" where a caller
//! expects it is `None`, never an error code to match on.

use super::RawTree;
use anyhow::{Context, Result};
use git2::{ErrorCode, ObjectType, Oid, Repository};
use std::path::Path;

/// Read access to one repository's objects and HEAD. Copy: it is a reference.
#[derive(Clone, Copy)]
pub struct Objects<'r> {
    pub(super) git: &'r Repository,
}

/// A commit object.
pub struct Commit<'r>(git2::Commit<'r>);

impl<'r> Objects<'r> {
    #[inline]
    pub(super) fn new(git: &'r Repository) -> Objects<'r> {
        Objects { git }
    }

    /// The commit named `id`.
    #[inline]
    pub fn find_commit(self, id: Oid) -> Result<Commit<'r>> {
        Ok(Commit(self.git.find_commit(id)?))
    }

    /// Whether the object database has the commit `id`.
    pub fn has_commit(self, id: Oid) -> bool {
        self.git.find_commit(id).is_ok()
    }

    /// The commit HEAD names; `None` when HEAD is unborn or names nothing.
    #[inline]
    pub fn head_id(self) -> Option<Oid> {
        self.git.head().ok().and_then(|h| h.target())
    }

    /// What HEAD names: `None` when it is unborn, an error when it cannot be read. A hook reads
    /// it once and hands it on ([`Self::tree_of_commit`]): each reading is eight system calls.
    pub fn head(self) -> Result<Option<Oid>> {
        match self.git.head() {
            Ok(head) => Ok(Some(head.target().context("reading HEAD")?)),
            Err(e) if matches!(e.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound) => Ok(None),
            Err(e) => Err(e).context("reading HEAD"),
        }
    }

    /// HEAD's tree; `None` when HEAD is unborn.
    pub fn head_tree(self) -> Result<Option<RawTree>> {
        self.tree_of_commit(self.head()?)
    }

    /// The tree of the commit `id` names (HEAD's, read by [`Self::head`]); `None` for `None`.
    pub fn tree_of_commit(self, id: Option<Oid>) -> Result<Option<RawTree>> {
        let Some(id) = id else {
            return Ok(None);
        };
        let commit = self
            .git
            .find_object(id, None)
            .and_then(|o| o.peel_to_commit())
            .context("reading HEAD's commit")?;
        Ok(Some(
            RawTree::read(self, commit.tree_id()).context("reading HEAD's tree")?,
        ))
    }

    /// The commit HEAD names, which must exist (the post-commit hook's new commit).
    pub fn head_commit(self) -> Result<Commit<'r>> {
        let head = self.git.head().context("reading HEAD")?;
        Ok(Commit(
            head.peel_to_commit().context("reading the new commit")?,
        ))
    }

    /// libgit2's diff of `head` against the index file at `index_path` (type changes included),
    /// as the raw paths of both sides of each delta. The slow, exact route for an index the
    /// crate's own reader leaves aside; the caller has checked the file with
    /// [`crate::git::index::fit_for_libgit2`] first.
    pub fn diff_tree_to_index_file(
        self,
        head: Option<&RawTree>,
        index_path: &Path,
    ) -> Result<Vec<Vec<u8>>> {
        let head = head.map(|t| t.to_libgit2(self.git)).transpose()?;
        let index = git2::Index::open(index_path)
            .with_context(|| format!("reading the index {}", index_path.display()))?;
        let mut opts = git2::DiffOptions::new();
        opts.include_typechange(true);
        let diff = self
            .git
            .diff_tree_to_index(head.as_ref(), Some(&index), Some(&mut opts))
            .context("comparing the index with HEAD")?;
        let mut out = Vec::new();
        for d in diff.deltas() {
            for f in [d.old_file(), d.new_file()] {
                if let Some(p) = f.path_bytes() {
                    out.push(p.to_vec());
                }
            }
        }
        Ok(out)
    }

    /// The id of what commit `commit` holds at the repo-relative `path` (a blob, a symlink, a
    /// gitlink); `None` when the path is absent there (or names a directory).
    pub fn entry_in_commit(self, commit: Oid, path: &str) -> Result<Option<Oid>> {
        let tree = self
            .git
            .find_commit(commit)
            .and_then(|c| c.tree())
            .with_context(|| format!("reading the tree of {commit}"))?;
        match tree.get_path(Path::new(path)) {
            Ok(e) if e.kind() != Some(ObjectType::Tree) => Ok(Some(e.id())),
            Ok(_) => Ok(None),
            Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("looking up {path} in {commit}")),
        }
    }

    /// The id the index file at `index_path` holds for `path` at stage 0; `None` when the
    /// path is not there (staged as deleted, or in conflict).
    pub fn entry_in_index(self, index_path: &Path, path: &str) -> Result<Option<Oid>> {
        let index = git2::Index::open(index_path)
            .with_context(|| format!("reading the index {}", index_path.display()))?;
        Ok(index.get_path(Path::new(path), 0).map(|e| e.id))
    }

    /// The ids of every gitlink (mode 160000) in the tree of commit `id`, any depth.
    pub fn gitlinks_of(self, id: Oid, out: &mut impl Extend<Oid>) {
        if let Ok(tree) = self.git.find_commit(id).and_then(|c| c.tree()) {
            let _ = tree.walk(git2::TreeWalkMode::PreOrder, |_, entry| {
                if entry.filemode() == 0o160000 {
                    out.extend([entry.id()]);
                }
                git2::TreeWalkResult::Ok
            });
        }
    }
}

impl<'r> Commit<'r> {
    #[inline]
    pub fn id(&self) -> Oid {
        self.0.id()
    }

    /// The first line of the message, or empty.
    pub fn summary(&self) -> &str {
        self.0.summary().unwrap_or("")
    }

    /// The whole message (lossily decoded where it is not UTF-8).
    pub fn message(&self) -> String {
        String::from_utf8_lossy(self.0.message_bytes()).into_owned()
    }

    #[inline]
    pub fn parent_count(&self) -> usize {
        self.0.parent_count()
    }

    /// The `n`th parent's id.
    #[inline]
    pub fn parent_id(&self, n: usize) -> Option<Oid> {
        self.0.parent_id(n).ok()
    }

    /// Every parent's id, first parent first.
    pub fn parent_ids(&self) -> impl Iterator<Item = Oid> + '_ {
        self.0.parent_ids()
    }

    pub fn tree_id(&self) -> Oid {
        self.0.tree_id()
    }

    /// The first parent's tree id; `None` for a root commit.
    pub fn first_parent_tree_id(&self) -> Option<Oid> {
        self.0.parents().next().map(|p| p.tree_id())
    }
}

/// The blob id git gives `bytes` (a symlink's target, say), as `git hash-object` would.
#[inline]
pub fn hash_blob(bytes: &[u8]) -> Option<Oid> {
    Oid::hash_object(ObjectType::Blob, bytes).ok()
}

/// The blob id of the file at `path`'s raw content (no conversion applied).
#[inline]
pub fn hash_blob_file(path: &Path) -> Option<Oid> {
    Oid::hash_file(ObjectType::Blob, path).ok()
}
