//! History: reachability, revision walks, and whether a branch's work is in its base.
//!
//! Invariants: every walk is bounded by its caller's `limit`; nothing here writes a ref or an
//! object (the squash-merge check compares the merged index with base's tree in memory).

use super::{Merged, Repo};
use anyhow::{Context, Result};
use git2::{Oid, Repository, Revwalk};

/// A revision walk being set up: tips pushed, what is already held hidden, then
/// [`History::commits`]. Newest first, as `git log` lists them.
pub struct History<'r> {
    git: &'r Repository,
    walk: Revwalk<'r>,
}

impl<'r> History<'r> {
    pub(super) fn new(git: &'r Repository) -> Result<History<'r>> {
        Ok(History {
            git,
            walk: git.revwalk()?,
        })
    }

    /// Walks from `id` too.
    pub fn push(&mut self, id: Oid) -> Result<()> {
        Ok(self.walk.push(id)?)
    }

    /// Leaves out `id` and everything it reaches.
    pub fn hide(&mut self, id: Oid) -> Result<()> {
        Ok(self.walk.hide(id)?)
    }

    /// Leaves out the commit every ref whose full name passes `only` points at (peeled), and
    /// everything they reach. Unreadable refs are passed over.
    pub fn hide_refs(&mut self, only: &dyn Fn(&str) -> bool) {
        for id in ref_commits(self.git, only) {
            let _ = self.walk.hide(id);
        }
    }

    /// Leaves out the branches `refs/heads/<prefix>*` other than `except` (a short name).
    pub fn hide_branches(&mut self, prefix: &str, except: &str) -> Result<()> {
        for r in self
            .git
            .references_glob(&format!("refs/heads/{prefix}*"))?
            .flatten()
        {
            if r.shorthand() == Some(except) {
                continue;
            }
            if let Ok(c) = r.peel_to_commit() {
                self.walk.hide(c.id())?;
            }
        }
        Ok(())
    }

    /// The commit ids the walk yields, at most `limit`.
    pub fn ids(self, limit: usize) -> Result<Vec<Oid>> {
        Ok(self.walk.take(limit).collect::<Result<_, _>>()?)
    }

    /// The commits the walk yields (at most `limit`), each with its summary line.
    pub fn commits(self, limit: usize) -> Result<Vec<(Oid, String)>> {
        let mut out = Vec::new();
        for id in self.walk.take(limit) {
            let id = id?;
            let summary = self
                .git
                .find_commit(id)
                .ok()
                .and_then(|c| c.summary().map(str::to_string))
                .unwrap_or_default();
            out.push((id, summary));
        }
        Ok(out)
    }
}

/// The commit each ref whose full name passes `only` points at, peeled.
pub(super) fn ref_commits(git: &Repository, only: &dyn Fn(&str) -> bool) -> Vec<Oid> {
    let mut out = Vec::new();
    if let Ok(refs) = git.references() {
        for r in refs.flatten() {
            if !r.name().is_some_and(only) {
                continue;
            }
            if let Ok(c) = r.peel_to_commit() {
                out.push(c.id());
            }
        }
    }
    out
}

impl Repo {
    /// A new revision walk of this repository.
    pub fn history(&self) -> Result<History<'_>> {
        History::new(&self.git)
    }

    /// `descendant` is `ancestor` or reaches it.
    pub fn is_descendant_of(&self, descendant: Oid, ancestor: Oid) -> Result<bool> {
        Ok(self.git.graph_descendant_of(descendant, ancestor)?)
    }

    /// Commits on `tip` that are not on `base`, newest first (at most `limit`).
    pub fn unmerged_commits(
        &self,
        tip: Oid,
        base: Oid,
        limit: usize,
    ) -> Result<Vec<(Oid, String)>> {
        let mut walk = self.history()?;
        walk.push(tip)?;
        walk.hide(base)?;
        walk.commits(limit)
    }

    pub fn ahead_behind(&self, tip: Oid, base: Oid) -> Result<(usize, usize)> {
        self.git
            .graph_ahead_behind(tip, base)
            .context("counting commits ahead of and behind base")
    }

    /// Whether `tip`'s work is already in `base`, checked against base explicitly.
    pub fn merge_state(&self, tip: Oid, base: Oid) -> Result<Merged> {
        if tip == base || self.git.graph_descendant_of(base, tip)? {
            return Ok(Merged::Ancestor);
        }
        if self.patches_in_base(tip, base)? || self.merge_changes_nothing(tip, base)? {
            return Ok(Merged::Integrated);
        }
        Ok(Merged::No)
    }

    /// Every non-merge commit of `tip` not in `base` has a patch-id equal to one in `base` since
    /// their merge base (a rebase merge, or a cherry-pick of each).
    fn patches_in_base(&self, tip: Oid, base: Oid) -> Result<bool> {
        const LIMIT: usize = 2000;
        let ids = |from: Oid, hide: Oid| -> Result<Option<Vec<Oid>>> {
            let mut walk = self.history()?;
            walk.push(from)?;
            walk.hide(hide)?;
            let ids = walk.ids(LIMIT + 1)?;
            Ok((ids.len() <= LIMIT).then_some(ids))
        };
        let (Some(mine), Some(theirs)) = (ids(tip, base)?, ids(base, tip)?) else {
            return Ok(false);
        };
        let mut base_patches = std::collections::HashSet::new();
        for id in theirs {
            if let Some(p) = self.patch_id(id)? {
                base_patches.insert(p);
            }
        }
        for id in mine {
            match self.patch_id(id)? {
                Some(p) if base_patches.contains(&p) => {}
                Some(_) => return Ok(false),
                // A merge commit or an empty commit carries no patch of its own.
                None => {}
            }
        }
        Ok(true)
    }

    fn patch_id(&self, id: Oid) -> Result<Option<Oid>> {
        let commit = self.git.find_commit(id)?;
        if commit.parent_count() != 1 {
            return Ok(None);
        }
        let parent = commit.parent(0)?.tree()?;
        let diff = self
            .git
            .diff_tree_to_tree(Some(&parent), Some(&commit.tree()?), None)?;
        if diff.deltas().len() == 0 {
            return Ok(None);
        }
        Ok(Some(diff.patchid(None)?))
    }

    /// Merging `tip` into `base` would leave base's tree as it is (a squash merge).
    fn merge_changes_nothing(&self, tip: Oid, base: Oid) -> Result<bool> {
        let ours = self.git.find_commit(base)?;
        let theirs = self.git.find_commit(tip)?;
        let index = match self.git.merge_commits(&ours, &theirs, None) {
            Ok(i) => i,
            Err(_) => return Ok(false),
        };
        if index.has_conflicts() {
            return Ok(false);
        }
        // Compared in memory: a read-only command must not grow the object store.
        let diff = self
            .git
            .diff_tree_to_index(Some(&ours.tree()?), Some(&index), None)?;
        Ok(diff.deltas().len() == 0)
    }
}
