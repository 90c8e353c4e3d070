//! Comparing git trees: the paths that differ between two trees, and every path below one.
//! Both trees list their entries in git's tree order, so they are merged in one pass, and only
//! subtrees whose ids differ are read.
//!
//! Paths are raw bytes, `prefix`-joined (`prefix` is empty or ends with `/`). The functions
//! recurse once per directory level, at most [`MAX_DIR_DEPTH`] deep (deeper trees are left to
//! libgit2).

use crate::git::index::{unsupported, MAX_DIR_DEPTH};
use crate::git::{Objects, RawEntry, RawTree};
use anyhow::{Context, Result};

pub(super) fn join(prefix: &[u8], name: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(prefix.len() + name.len() + 1);
    p.extend_from_slice(prefix);
    p.extend_from_slice(name);
    p
}

/// A tree entry as paths: the file itself, or every file below a directory.
pub(super) fn push_entry(
    repo: Objects<'_>,
    e: &RawEntry<'_>,
    prefix: &[u8],
    out: &mut Vec<Vec<u8>>,
) -> Result<()> {
    let path = join(prefix, e.name);
    if e.is_tree() {
        let sub = RawTree::read(repo, e.id()).context("reading a tree of HEAD")?;
        let mut dir = path;
        dir.push(b'/');
        all_files(repo, &sub, &dir, out)
    } else {
        out.push(path);
        Ok(())
    }
}

/// An error when `prefix` nests deeper than the recursion may go.
fn check_depth(prefix: &[u8]) -> Result<()> {
    if prefix.iter().filter(|&&b| b == b'/').count() > MAX_DIR_DEPTH {
        return Err(unsupported(format!(
            "trees nested deeper than {MAX_DIR_DEPTH}"
        )));
    }
    Ok(())
}

/// Every file below `tree`, as `prefix`-joined paths.
pub(super) fn all_files(
    repo: Objects<'_>,
    tree: &RawTree,
    prefix: &[u8],
    out: &mut Vec<Vec<u8>>,
) -> Result<()> {
    check_depth(prefix)?;
    for e in tree.entries() {
        push_entry(repo, &e?, prefix, out)?;
    }
    Ok(())
}

/// Paths that differ between two trees (a missing tree has no files).
pub(super) fn diff_trees(
    repo: Objects<'_>,
    prefix: &[u8],
    old: Option<&RawTree>,
    new: Option<&RawTree>,
    out: &mut Vec<Vec<u8>>,
) -> Result<()> {
    use std::cmp::Ordering;
    let (a, b) = match (old, new) {
        (None, None) => return Ok(()),
        (Some(t), None) | (None, Some(t)) => return all_files(repo, t, prefix, out),
        (Some(a), Some(b)) if a.id() == b.id() => return Ok(()),
        (Some(a), Some(b)) => (a, b),
    };
    check_depth(prefix)?;
    let (mut ia, mut ib) = (a.entries(), b.entries());
    let (mut x, mut y) = (ia.next().transpose()?, ib.next().transpose()?);
    loop {
        // A file and a directory of the same name are different entries in tree order: a
        // type change shows as the file's path and the directory's files.
        let order = match (&x, &y) {
            (None, None) => return Ok(()),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some(x), Some(y)) => tree_order(x.name, x.is_tree(), y.name, y.is_tree()),
        };
        match (order, x, y) {
            (Ordering::Less, Some(e), _) => {
                push_entry(repo, &e, prefix, out)?;
                x = ia.next().transpose()?;
            }
            (Ordering::Greater, _, Some(e)) => {
                push_entry(repo, &e, prefix, out)?;
                y = ib.next().transpose()?;
            }
            (Ordering::Equal, Some(ex), Some(ey)) => {
                x = ia.next().transpose()?;
                y = ib.next().transpose()?;
                if ex.id_bytes() == ey.id_bytes() && ex.mode == ey.mode {
                    continue;
                }
                let path = join(prefix, ex.name);
                if ex.is_tree() {
                    let tx = RawTree::read(repo, ex.id()).context("reading a tree")?;
                    let ty = RawTree::read_new(repo, ey.id()).context("reading a tree")?;
                    let mut dir = path;
                    dir.push(b'/');
                    diff_trees(repo, &dir, Some(&tx), Some(&ty), out)?;
                } else {
                    out.push(path);
                }
            }
            // The order was computed from the entries present.
            _ => return Ok(()),
        }
    }
}

/// Git's order of names in a tree: bytewise, a directory's name compared as if followed by `/`.
pub(super) fn tree_order(a: &[u8], a_dir: bool, b: &[u8], b_dir: bool) -> std::cmp::Ordering {
    let n = a.len().min(b.len());
    a[..n].cmp(&b[..n]).then_with(|| {
        let next = |s: &[u8], dir: bool| s.get(n).copied().or(dir.then_some(b'/'));
        next(a, a_dir).cmp(&next(b, b_dir))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_order_puts_a_directory_where_its_slash_sorts() {
        use std::cmp::Ordering::*;
        assert_eq!(tree_order(b"a", true, b"a-b", false), Greater); // "a/" > "a-b"
        assert_eq!(tree_order(b"a", false, b"a-b", false), Less);
        assert_eq!(tree_order(b"a", true, b"a0", true), Less); // "/" < "0"
        assert_eq!(tree_order(b"a", false, b"a", true), Less); // a file before its namesake
        assert_eq!(tree_order(b"a", true, b"a", true), Equal);
        assert_eq!(tree_order(b"ab", false, b"a", true), Greater); // "b" > "/"
    }
}
