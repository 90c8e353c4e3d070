//! The index's extensions, and the one this crate reads: the cache tree (`TREE`).
//!
//! Each extension is a record `<4-byte signature><be32 length><body>`; they follow the entries
//! and end exactly at the checksum. A signature starting with an upper-case letter is optional
//! (a reader may ignore it); any other changes what the entries mean (a split index's `link`, a
//! sparse index's `sdir`), and this decoder does not handle those.
//!
//! The cache tree records, for the root and each directory below it, the number of index
//! entries it covers and, while still valid (a count of -1 marks it invalidated), the id of the
//! tree those entries make. Nodes are written depth first: `<name>\0<count> <subtrees>\n`, the
//! id when valid, then the subtrees.

use super::OID_LEN;
use crate::git::Oid;
use anyhow::{bail, Context, Result};

/// Whether an extension with this signature may be ignored by a reader that does not know it.
pub fn is_optional(sig: &[u8]) -> bool {
    sig.first().is_some_and(u8::is_ascii_uppercase)
}

/// `bytes` split into extension records, when they cover it exactly and every signature is four
/// ASCII letters.
pub fn chain(bytes: &[u8]) -> Option<Vec<(&[u8], &[u8])>> {
    let mut records = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let sig = bytes.get(at..at + 4)?;
        if !sig.iter().all(u8::is_ascii_alphabetic) {
            return None;
        }
        let len = super::be32(bytes, at + 4).ok()? as usize;
        let body = bytes.get(at + 8..(at + 8).checked_add(len)?)?;
        records.push((sig, body));
        at += 8 + len;
    }
    Some(records)
}

/// Position of `needle` (not empty) in `hay`.
pub fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let mut at = 0;
    while let Some(i) = hay[at..].iter().position(|&b| b == needle[0]) {
        if hay[at + i..].starts_with(needle) {
            return Some(at + i);
        }
        at += i + 1;
    }
    None
}

/// The root node of a cache tree, when valid: how many index entries it covers, and its tree.
/// Reads only the root's line, so it is cheap whatever the size of the tree.
pub fn cache_root(body: &[u8]) -> Option<(usize, Oid)> {
    let rest = body.strip_prefix(b"\0")?;
    let nl = rest.iter().position(|&b| b == b'\n')?;
    let (count, _subtrees) = std::str::from_utf8(&rest[..nl]).ok()?.split_once(' ')?;
    let count: usize = count.parse().ok()?;
    let oid = Oid::from_bytes(rest.get(nl + 1..nl + 1 + OID_LEN)?).ok()?;
    Some((count, oid))
}

/// Deepest cache-tree nesting read, so damaged bytes cannot exhaust the stack (a real one is
/// as deep as the worktree's directories).
pub const MAX_CACHE_DEPTH: usize = 1024;

/// Smallest encoded cache-tree node: a NUL-ended empty name and `"0 0\n"`.
const MIN_CACHE_NODE: usize = 5;

/// One node of the cache tree: a directory whose tree id is known while `count >= 0`.
pub struct CacheNode {
    pub name: Vec<u8>,
    pub count: i64,
    pub oid: Option<Oid>,
    /// Sorted by name, for [`CacheNode::child`].
    pub children: Vec<CacheNode>,
}

impl CacheNode {
    /// Parses a whole `TREE` body; an error when it is damaged, nested deeper than
    /// [`MAX_CACHE_DEPTH`], or counts more subtrees than its bytes could hold. Nodes are
    /// written depth first; they are read with an explicit stack, so no nesting in the file can
    /// exhaust the thread's stack.
    pub fn parse(body: &[u8]) -> Result<CacheNode> {
        let mut pos = 0;
        // Nodes being read, each with the number of its subtrees still to come.
        let mut open = vec![CacheNode::read_one(body, &mut pos)?];
        loop {
            let (_, left) = open.last_mut().expect("a node is open");
            if *left > 0 {
                *left -= 1;
                if open.len() > MAX_CACHE_DEPTH {
                    bail!("bad cache tree (nested deeper than {MAX_CACHE_DEPTH})");
                }
                open.push(CacheNode::read_one(body, &mut pos)?);
                continue;
            }
            let (mut done, _) = open.pop().expect("a node is open");
            // Git keeps them sorted by length first; lookups here go by name.
            done.children.sort_unstable_by(|a, b| a.name.cmp(&b.name));
            match open.last_mut() {
                Some((parent, _)) => parent.children.push(done),
                None => return Ok(done),
            }
        }
    }

    /// Reads one node's own fields at `pos`, with room reserved for its subtrees, and their
    /// count.
    fn read_one(body: &[u8], pos: &mut usize) -> Result<(CacheNode, usize)> {
        let rest = body.get(*pos..).context("bad cache tree")?;
        let nul = rest
            .iter()
            .position(|&b| b == 0)
            .context("bad cache tree")?;
        let name = rest[..nul].to_vec();
        *pos += nul + 1;
        let rest = &body[*pos..];
        let nl = rest
            .iter()
            .position(|&b| b == b'\n')
            .context("bad cache tree")?;
        let line = std::str::from_utf8(&rest[..nl]).context("bad cache tree")?;
        *pos += nl + 1;
        let (count, subtrees) = line.split_once(' ').context("bad cache tree")?;
        let count: i64 = count.parse().context("bad cache tree")?;
        let subtrees: usize = subtrees.parse().context("bad cache tree")?;
        let oid = if count >= 0 {
            let bytes = body
                .get(*pos..pos.saturating_add(OID_LEN))
                .context("bad cache tree")?;
            *pos += OID_LEN;
            Some(Oid::from_bytes(bytes)?)
        } else {
            None
        };
        // The subtree count comes from the file: each takes MIN_CACHE_NODE bytes at least.
        if subtrees > (body.len() - *pos) / MIN_CACHE_NODE {
            bail!("bad cache tree (more subtrees than bytes)");
        }
        let mut children = Vec::new();
        children.try_reserve_exact(subtrees)?;
        let node = CacheNode {
            name,
            count,
            oid,
            children,
        };
        Ok((node, subtrees))
    }

    pub fn child(&self, name: &[u8]) -> Option<&CacheNode> {
        self.children
            .binary_search_by(|c| c.name.as_slice().cmp(name))
            .ok()
            .map(|i| &self.children[i])
    }

    /// The directory's entry count, when its tree id is known to be `tree`.
    pub fn unchanged_count(&self, tree: Oid) -> Option<usize> {
        (self.count > 0 && self.oid == Some(tree)).then_some(self.count as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extension_chains_must_cover_the_tail_exactly() {
        let mut bytes = b"TREE".to_vec();
        bytes.extend_from_slice(&3u32.to_be_bytes());
        bytes.extend_from_slice(b"abc");
        bytes.extend_from_slice(b"EOIE");
        bytes.extend_from_slice(&0u32.to_be_bytes());
        assert_eq!(chain(&bytes).map(|r| r.len()), Some(2));
        assert!(chain(&bytes[..bytes.len() - 1]).is_none());
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(chain(&longer).is_none());
        assert_eq!(find(b"xxTRTREE", b"TREE"), Some(4));
        assert_eq!(find(b"TRE", b"TREE"), None);
        assert!(is_optional(b"TREE") && !is_optional(b"link") && !is_optional(b""));
    }

    #[test]
    fn cache_trees_parse_within_bounds() {
        let oid = [7u8; OID_LEN];
        let mut body = b"\x003 1\n".to_vec();
        body.extend_from_slice(&oid);
        body.extend_from_slice(b"sub\0-1 0\n");
        let root = CacheNode::parse(&body).unwrap();
        assert_eq!(root.count, 3);
        assert!(root.child(b"sub").is_some_and(|c| c.oid.is_none()));
        assert_eq!(cache_root(&body), Some((3, Oid::from_bytes(&oid).unwrap())));
        // An invalidated root names no tree.
        assert_eq!(cache_root(b"\0-1 0\n"), None);
        // Counts beyond the bytes, and nesting beyond the limit, are errors.
        assert!(CacheNode::parse(b"\0-1 4294967295\n").is_err());
        let mut deep = b"\0-1 1\n".to_vec();
        for _ in 0..MAX_CACHE_DEPTH + 1 {
            deep.extend_from_slice(b"d\0-1 1\n");
        }
        deep.extend_from_slice(b"d\0-1 0\n");
        assert!(CacheNode::parse(&deep).is_err());
    }
}
