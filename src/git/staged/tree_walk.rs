//! Route 2 of [`super`]: one forward pass over the index's entries, compared with HEAD's trees
//! as it goes, hopping over every directory whose cache-tree entry still matches HEAD (such a
//! directory costs one read of each entry's flags, and nothing of it is kept). Only the entries
//! of changed directories are decoded. It recurses once per directory level, at most
//! [`MAX_DIR_DEPTH`] deep.

use super::trees::{all_files, diff_trees, join, push_entry, tree_order};
use crate::git::index::entries::MODE_DIR;
use crate::git::index::extensions::CacheNode;
use crate::git::index::{unsupported, Cursor, MAX_DIR_DEPTH};
use crate::git::{Objects, Oid, RawEntry, RawTree};
use anyhow::{Context, Result};

/// The comparison of the index with HEAD, directory by directory, in index order.
pub(super) struct Walker<'r> {
    pub repo: Objects<'r>,
    pub cursor: Cursor,
    pub out: Vec<Vec<u8>>,
}

impl Walker<'_> {
    /// Consumes every entry below `prefix` (`<dir>/`, or empty for the whole index), comparing
    /// them with `head`, HEAD's tree there if it has one. The index's entries at this level and
    /// HEAD's tree entries come in the same order (git's tree order, a directory sorting as its
    /// name followed by `/`), so the two are merged: HEAD's entries passed over without a match
    /// are deletions.
    pub fn dir(
        &mut self,
        prefix: &[u8],
        depth: usize,
        head: Option<&RawTree>,
        cache: Option<&CacheNode>,
    ) -> Result<()> {
        if depth > MAX_DIR_DEPTH {
            return Err(unsupported(format!(
                "directories nested deeper than {MAX_DIR_DEPTH}"
            )));
        }
        if let (Some(c), Some(h)) = (cache, head) {
            if let Some(count) = c.unchanged_count(h.id()) {
                return self.cursor.skip(count, prefix);
            }
        }
        let head: Vec<RawEntry> = match head {
            Some(h) => h.entries().collect::<Result<_>>()?,
            None => Vec::new(),
        };
        let mut next_head = 0;
        while let Some(e) = self.cursor.peek()? {
            if !e.path.starts_with(prefix) {
                break;
            }
            let rest = &e.path[prefix.len()..];
            match rest.iter().position(|&b| b == b'/') {
                Some(slash) if slash + 1 < rest.len() || e.entry.mode != MODE_DIR => {
                    // A directory: every following entry under `<name>/` belongs to it.
                    let name = rest[..slash].to_vec();
                    let dir = join(&e.path[..prefix.len() + slash], b"/");
                    let child = cache.and_then(|c| c.child(&name));
                    // (A file of HEAD by the same name sorts before it: a deletion.)
                    let sub = match self.merge_head(&head, &mut next_head, prefix, &name, true)? {
                        Some(h) => {
                            // Unchanged per the cache tree: hop over it without loading
                            // HEAD's subtree.
                            if let Some(count) = child.and_then(|c| c.unchanged_count(h.id())) {
                                self.cursor.skip(count, &dir)?;
                                continue;
                            }
                            Some(
                                RawTree::read(self.repo, h.id())
                                    .context("reading a tree of HEAD")?,
                            )
                        }
                        None => None,
                    };
                    self.dir(&dir, depth + 1, sub.as_ref(), child)?;
                }
                Some(slash) => {
                    // A sparse-index directory entry `<name>/` holding a tree id.
                    let name = rest[..slash].to_vec();
                    let dir = e.path.clone();
                    let new = RawTree::read_new(self.repo, Oid::from_bytes(&e.entry.oid)?)
                        .context("reading a sparse directory's tree")?;
                    self.cursor.advance()?;
                    match self.merge_head(&head, &mut next_head, prefix, &name, true)? {
                        Some(h) => {
                            let old = RawTree::read(self.repo, h.id())
                                .context("reading a tree of HEAD")?;
                            diff_trees(self.repo, &dir, Some(&old), Some(&new), &mut self.out)?;
                        }
                        None => all_files(self.repo, &new, &dir, &mut self.out)?,
                    }
                }
                None => {
                    // A file, possibly in several conflict stages. (A directory of HEAD by the
                    // same name sorts after it and is reported deleted when passed.)
                    let name = rest.to_vec();
                    let (path, mode, oid, stage) =
                        (e.path.clone(), e.entry.mode, e.entry.oid, e.entry.stage());
                    let mut stages = 0;
                    let mut all_intent = true;
                    while let Some(e) = self.cursor.peek()? {
                        if e.path != path {
                            break;
                        }
                        all_intent &= e.entry.intent_to_add();
                        stages += 1;
                        self.cursor.advance()?;
                    }
                    let matched = self.merge_head(&head, &mut next_head, prefix, &name, false)?;
                    if all_intent {
                        continue;
                    }
                    let same = matched.is_some_and(|h| {
                        stages == 1 && stage == 0 && h.id_bytes() == oid && h.mode == mode
                    });
                    if !same {
                        self.out.push(path);
                    }
                }
            }
        }
        // What HEAD has here beyond the index's last entry: deletions.
        for h in &head[next_head..] {
            push_entry(self.repo, h, prefix, &mut self.out)?;
        }
        Ok(())
    }

    /// Moves through `head` (HEAD's entries at `prefix`) up to the index's `name` (a directory
    /// if `dir`): the entries passed over are deletions; returns HEAD's entry of that name and
    /// kind, if any.
    fn merge_head<'t>(
        &mut self,
        head: &'t [RawEntry<'t>],
        next: &mut usize,
        prefix: &[u8],
        name: &[u8],
        dir: bool,
    ) -> Result<Option<&'t RawEntry<'t>>> {
        while let Some(h) = head.get(*next) {
            match tree_order(h.name, h.is_tree(), name, dir) {
                std::cmp::Ordering::Less => {
                    push_entry(self.repo, h, prefix, &mut self.out)?;
                    *next += 1;
                }
                std::cmp::Ordering::Equal => {
                    *next += 1;
                    return Ok(Some(h));
                }
                std::cmp::Ordering::Greater => break,
            }
        }
        Ok(None)
    }
}
