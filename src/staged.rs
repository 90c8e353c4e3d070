//! What a commit is about to change: the index git hands a hook, compared with HEAD.
//!
//! Why not `git2::Repository::diff_tree_to_index`: libgit2 hashes the whole index file to verify
//! its checksum, materialises every entry, and walks every tree of HEAD, so its cost grows with
//! the repository. The guard runs on every commit and must cost about a process start. So this
//! module reads the index file itself (read-only; versions 2, 3 and 4, sparse directory entries)
//! and walks it against HEAD's trees (read through git2), skipping every directory whose
//! cache-tree entry (the index's `TREE` extension, which `git commit` brings up to date before
//! it runs hooks) still matches HEAD. Entries are not materialised: one pass hops from entry to
//! entry (the name length is in the flags) keeping only where each starts, and a directory's
//! entries are delimited by its cache-tree count (confirmed by looking at its first and last
//! entries and the one after) or by binary search. Like git's own lookups, this relies on the
//! index being sorted by path, which every writer of it guarantees. The work grows with the
//! changed directories and the number of entries' offsets, not with the size of their paths.
//!
//! Invariants: paths are raw bytes from the index, converted lossily only for display and claim
//! matching; nothing here runs a program. An index this reader does not understand (a split
//! index, an unknown version) falls back to libgit2's diff, which is slower but exact.

use anyhow::{bail, Context, Result};
use git2::{ObjectType, Oid, Repository, Tree};
use std::path::Path;

const OID_LEN: usize = 20;
const MODE_DIR: u32 = 0o040000;

/// One index entry, decoded on demand and borrowed from the file (or the version 4 paths).
struct Entry<'a> {
    path: &'a [u8],
    mode: u32,
    oid: [u8; OID_LEN],
    stage: u8,
    intent_to_add: bool,
}

/// One node of the cache tree: a directory whose tree id is known while `count >= 0`.
struct CacheNode {
    name: Vec<u8>,
    count: i64,
    oid: Option<Oid>,
    children: Vec<CacheNode>,
}

/// The first pass over the index: where each entry starts and its path; nothing else per
/// entry is kept.
struct ParsedIndex {
    file: std::fs::File,
    /// Byte offset of each entry in the file.
    offsets: Vec<u32>,
    /// Every entry's path, concatenated, and where each ends.
    names: Vec<u8>,
    name_ends: Vec<u32>,
    /// The last block of the file read for [`ParsedIndex::entry`]: its offset and bytes.
    block: std::cell::RefCell<(usize, Vec<u8>)>,
    cache: Option<CacheNode>,
}

/// Why the fast reader stepped aside.
#[derive(Debug)]
struct Unsupported(String);

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for Unsupported {}

/// Paths that differ between HEAD and the index at `index_path` (additions, modifications,
/// deletions, type changes; a rename shows as its old and its new path), sorted, unique.
pub fn staged_paths(repo: &Repository, index_path: &Path) -> Result<Vec<String>> {
    let head_tree = head_tree(repo)?;
    let file = match std::fs::File::open(index_path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // No index at all: everything in HEAD would be deleted.
            let mut out = Vec::new();
            if let Some(t) = &head_tree {
                all_files(repo, t, b"", &mut out)?;
            }
            return Ok(finish(out));
        }
        Err(e) => return Err(e).with_context(|| format!("reading {}", index_path.display())),
    };
    match parse(file) {
        Ok(index) => {
            let mut out = Vec::new();
            walk(
                repo,
                &index,
                b"",
                0,
                index.len(),
                head_tree.as_ref(),
                index.cache.as_ref(),
                &mut out,
            )?;
            Ok(finish(out))
        }
        Err(e) if e.downcast_ref::<Unsupported>().is_some() => {
            libgit2_fallback(repo, index_path, head_tree.as_ref())
        }
        Err(e) => Err(e).with_context(|| format!("reading the index {}", index_path.display())),
    }
}

/// Paths a commit changed relative to its first parent (all its files for a root commit).
pub fn commit_paths(repo: &Repository, commit: &git2::Commit) -> Result<Vec<String>> {
    let tree = commit.tree().context("reading the commit's tree")?;
    let mut out = Vec::new();
    match commit.parents().next() {
        Some(parent) => {
            let parent_tree = parent.tree().context("reading the parent's tree")?;
            diff_trees(repo, b"", Some(&parent_tree), Some(&tree), &mut out)?;
        }
        None => all_files(repo, &tree, b"", &mut out)?,
    }
    Ok(finish(out))
}

fn head_tree(repo: &Repository) -> Result<Option<Tree<'_>>> {
    match repo.head() {
        Ok(head) => Ok(Some(head.peel_to_tree().context("reading HEAD's tree")?)),
        Err(e)
            if matches!(
                e.code(),
                git2::ErrorCode::UnbornBranch | git2::ErrorCode::NotFound
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(e).context("reading HEAD"),
    }
}

fn finish(raw: Vec<Vec<u8>>) -> Vec<String> {
    let mut out: Vec<String> = raw
        .into_iter()
        .map(|p| String::from_utf8_lossy(&p).into_owned())
        .collect();
    out.sort();
    out.dedup();
    out
}

fn join(prefix: &[u8], name: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(prefix.len() + name.len() + 1);
    p.extend_from_slice(prefix);
    p.extend_from_slice(name);
    p
}

/// A HEAD tree entry as paths: the file itself, or every file below a directory.
fn push_head_entry(
    repo: &Repository,
    e: &git2::TreeEntry<'_>,
    prefix: &[u8],
    out: &mut Vec<Vec<u8>>,
) -> Result<()> {
    let path = join(prefix, e.name_bytes());
    if e.kind() == Some(ObjectType::Tree) {
        let sub = repo.find_tree(e.id()).context("reading a tree of HEAD")?;
        let mut dir = path;
        dir.push(b'/');
        all_files(repo, &sub, &dir, out)
    } else {
        out.push(path);
        Ok(())
    }
}

/// Every file below `tree`, as `prefix`-joined paths.
fn all_files(repo: &Repository, tree: &Tree, prefix: &[u8], out: &mut Vec<Vec<u8>>) -> Result<()> {
    for e in tree.iter() {
        push_head_entry(repo, &e, prefix, out)?;
    }
    Ok(())
}

/// Paths that differ between two trees, descending only into subtrees whose ids differ.
fn diff_trees(
    repo: &Repository,
    prefix: &[u8],
    old: Option<&Tree>,
    new: Option<&Tree>,
    out: &mut Vec<Vec<u8>>,
) -> Result<()> {
    match (old, new) {
        (None, None) => Ok(()),
        (Some(t), None) | (None, Some(t)) => all_files(repo, t, prefix, out),
        (Some(a), Some(b)) => {
            if a.id() == b.id() {
                return Ok(());
            }
            let mut names: Vec<Vec<u8>> = a
                .iter()
                .chain(b.iter())
                .map(|e| e.name_bytes().to_vec())
                .collect();
            names.sort();
            names.dedup();
            for name in names {
                let ea = a.get_name_bytes(&name);
                let eb = b.get_name_bytes(&name);
                let path = join(prefix, &name);
                let sub = |e: &Option<git2::TreeEntry>| -> Result<Option<Tree>> {
                    match e {
                        Some(e) if e.kind() == Some(ObjectType::Tree) => {
                            Ok(Some(repo.find_tree(e.id()).context("reading a tree")?))
                        }
                        _ => Ok(None),
                    }
                };
                let (ta, tb) = (sub(&ea)?, sub(&eb)?);
                let blob_a = ea.as_ref().filter(|e| e.kind() != Some(ObjectType::Tree));
                let blob_b = eb.as_ref().filter(|e| e.kind() != Some(ObjectType::Tree));
                match (blob_a, blob_b) {
                    (Some(x), Some(y)) if x.id() == y.id() && x.filemode() == y.filemode() => {}
                    (None, None) => {}
                    _ => out.push(path.clone()),
                }
                if ta.is_some() || tb.is_some() {
                    let mut dir = path;
                    dir.push(b'/');
                    diff_trees(repo, &dir, ta.as_ref(), tb.as_ref(), out)?;
                }
            }
            Ok(())
        }
    }
}

/// Compares the index entries `lo..hi` (all of their paths start with `prefix`) with HEAD's
/// tree there.
#[allow(clippy::too_many_arguments)]
fn walk(
    repo: &Repository,
    index: &ParsedIndex,
    prefix: &[u8],
    lo: usize,
    hi: usize,
    head: Option<&Tree>,
    cache: Option<&CacheNode>,
    out: &mut Vec<Vec<u8>>,
) -> Result<()> {
    if let (Some(c), Some(h)) = (cache, head) {
        if c.count >= 0 && c.oid == Some(h.id()) && c.count as usize == hi - lo {
            return Ok(());
        }
    }
    let Some(head) = head else {
        for i in lo..hi {
            let e = index.entry(i)?;
            if !e.intent_to_add {
                push_entry_path(repo, &e, out)?;
            }
        }
        return Ok(());
    };
    // Names present in the index at this level, in index order (sorted once for the lookups).
    let mut seen: Vec<&[u8]> = Vec::new();
    let mut i = lo;
    while i < hi {
        // Only the path, kept by the first pass: a directory is skipped without reading any
        // of its entries from the file.
        let rest = index
            .path(i)
            .get(prefix.len()..)
            .context("an unsorted index")?;
        match rest.iter().position(|&b| b == b'/') {
            Some(slash) if slash + 1 < rest.len() || index.entry(i)?.mode != MODE_DIR => {
                // A directory: every following entry under `<name>/` belongs to it.
                let name = &rest[..slash];
                let mut dir = join(prefix, name);
                dir.push(b'/');
                let start = i;
                let child = cache.and_then(|c| c.children.iter().find(|n| n.name == name));
                i = index.group_end(&dir, start, hi, child)?;
                let head_entry = head.get_name_bytes(name);
                // Unchanged per the cache tree: skip without even loading HEAD's subtree.
                if let (Some(c), Some(h)) = (child, &head_entry) {
                    if c.count >= 0 && c.oid == Some(h.id()) && c.count as usize == i - start {
                        seen.push(name);
                        continue;
                    }
                }
                let sub = match &head_entry {
                    Some(e) if e.kind() == Some(ObjectType::Tree) => {
                        Some(repo.find_tree(e.id()).context("reading a tree of HEAD")?)
                    }
                    Some(_) => {
                        // HEAD had a file where the index has a directory.
                        out.push(join(prefix, name));
                        None
                    }
                    None => None,
                };
                walk(repo, index, &dir, start, i, sub.as_ref(), child, out)?;
                seen.push(name);
            }
            Some(slash) => {
                // A sparse-index directory entry `<name>/` holding a tree id.
                let name = &rest[..slash];
                let e = index.entry(i)?;
                i += 1;
                let head_entry = head.get_name_bytes(name);
                let mut dir = join(prefix, name);
                dir.push(b'/');
                let new = repo
                    .find_tree(Oid::from_bytes(&e.oid)?)
                    .context("reading a sparse directory's tree")?;
                match &head_entry {
                    Some(h) if h.kind() == Some(ObjectType::Tree) => {
                        let old = repo.find_tree(h.id()).context("reading a tree of HEAD")?;
                        diff_trees(repo, &dir, Some(&old), Some(&new), out)?;
                    }
                    Some(_) => {
                        out.push(join(prefix, name));
                        all_files(repo, &new, &dir, out)?;
                    }
                    None => all_files(repo, &new, &dir, out)?,
                }
                seen.push(name);
            }
            None => {
                // A file, possibly in several conflict stages.
                let first = index.entry(i)?;
                let name = rest;
                let start = i;
                let mut all_intent = true;
                while i < hi {
                    let e = index.entry(i)?;
                    if e.path != first.path {
                        break;
                    }
                    all_intent &= e.intent_to_add;
                    i += 1;
                }
                let stages = i - start;
                seen.push(name);
                if all_intent {
                    continue;
                }
                let e = first;
                match head.get_name_bytes(name) {
                    Some(h) if h.kind() == Some(ObjectType::Tree) => {
                        out.push(e.path.to_vec());
                        let sub = repo.find_tree(h.id()).context("reading a tree of HEAD")?;
                        let mut dir = join(prefix, name);
                        dir.push(b'/');
                        all_files(repo, &sub, &dir, out)?;
                    }
                    Some(h) => {
                        let same = stages == 1
                            && e.stage == 0
                            && h.id().as_bytes() == e.oid
                            && h.filemode() as u32 == e.mode;
                        if !same {
                            out.push(e.path.to_vec());
                        }
                    }
                    None => out.push(e.path.to_vec()),
                }
            }
        }
    }
    // What HEAD has here and the index no longer does: deletions.
    seen.sort_unstable();
    for h in head.iter() {
        if seen.binary_search(&h.name_bytes()).is_ok() {
            continue;
        }
        push_head_entry(repo, &h, prefix, out)?;
    }
    Ok(())
}

fn push_entry_path(repo: &Repository, e: &Entry, out: &mut Vec<Vec<u8>>) -> Result<()> {
    if e.mode == MODE_DIR {
        let tree = repo
            .find_tree(Oid::from_bytes(&e.oid)?)
            .context("reading a sparse directory's tree")?;
        return all_files(repo, &tree, e.path, out);
    }
    out.push(e.path.to_vec());
    Ok(())
}

fn be32(data: &[u8], at: usize) -> Result<u32> {
    let bytes = data.get(at..at + 4).context("the index is truncated")?;
    Ok(u32::from_be_bytes(bytes.try_into().expect("4 bytes")))
}

fn be16(data: &[u8], at: usize) -> Result<u16> {
    let bytes = data.get(at..at + 2).context("the index is truncated")?;
    Ok(u16::from_be_bytes(bytes.try_into().expect("2 bytes")))
}

/// Git's offset varint (index v4 path compression).
fn varint(data: &[u8], at: &mut usize) -> Result<usize> {
    let mut c = *data.get(*at).context("the index is truncated")?;
    *at += 1;
    let mut val = (c & 127) as usize;
    while c & 128 != 0 {
        val = val.checked_add(1).context("bad varint in the index")?;
        c = *data.get(*at).context("the index is truncated")?;
        *at += 1;
        val = val
            .checked_mul(128)
            .and_then(|v| v.checked_add((c & 127) as usize))
            .context("bad varint in the index")?;
    }
    Ok(val)
}

impl ParsedIndex {
    /// Entry `i`: its path from the paths kept by the first pass, the rest read from the file
    /// through a one-block cache (the walk asks for entries in nearly increasing order).
    fn entry(&self, i: usize) -> Result<Entry<'_>> {
        let at = self.offsets[i] as usize;
        let start = if i == 0 {
            0
        } else {
            self.name_ends[i - 1] as usize
        };
        let path = &self.names[start..self.name_ends[i] as usize];
        let mut block = self.block.borrow_mut();
        let (block_at, bytes) = &mut *block;
        if at < *block_at || at + 64 > *block_at + bytes.len() {
            bytes.resize(BLOCK, 0);
            let got = read_full(&self.file, bytes, at)?;
            bytes.truncate(got);
            *block_at = at;
            if got < 62 {
                bail!("the index is truncated");
            }
        }
        let data = &bytes[at - *block_at..];
        let flags = be16(data, 60)?;
        let intent_to_add = flags & 0x4000 != 0 && be16(data, 62)? & 0x2000 != 0;
        let mut oid = [0u8; OID_LEN];
        oid.copy_from_slice(&data[40..60]);
        Ok(Entry {
            path,
            mode: be32(data, 24)?,
            oid,
            stage: ((flags >> 12) & 3) as u8,
            intent_to_add,
        })
    }

    /// The end of the entries `start..hi` whose paths start with `dir` (`<name>/`). The index is
    /// sorted by path (git's own lookups binary-search it too), so they are contiguous: the
    /// cache tree's count for the directory is taken when its last entry and the one after
    /// confirm it, otherwise the end is binary-searched. Either way only a handful of paths are
    /// looked at, however many the directory holds.
    fn group_end(
        &self,
        dir: &[u8],
        start: usize,
        hi: usize,
        cache: Option<&CacheNode>,
    ) -> Result<usize> {
        if let Some(c) = cache.filter(|c| c.count > 0) {
            let end = start + c.count as usize;
            if end <= hi
                && self.path(end - 1).starts_with(dir)
                && (end == hi || !self.path(end).starts_with(dir))
            {
                return Ok(end);
            }
        }
        let (mut lo, mut hi) = (start + 1, hi);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.path(mid).starts_with(dir) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(lo)
    }

    fn path(&self, i: usize) -> &[u8] {
        let start = if i == 0 {
            0
        } else {
            self.name_ends[i - 1] as usize
        };
        &self.names[start..self.name_ends[i] as usize]
    }

    fn len(&self) -> usize {
        self.offsets.len()
    }
}

/// Bytes read at a time: small enough to stay in cache, large enough for few system calls.
const BLOCK: usize = 64 * 1024;

/// Reads into `buf` at file offset `at` until it is full or the file ends; returns the count.
fn read_full(file: &std::fs::File, buf: &mut [u8], at: usize) -> Result<usize> {
    use std::os::unix::fs::FileExt;
    let mut got = 0;
    while got < buf.len() {
        match file.read_at(&mut buf[got..], (at + got) as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e).context("reading the index"),
        }
    }
    Ok(got)
}

/// A forward-only window over the file: the first pass streams through it in blocks instead of
/// reading the whole index into memory (a large index would cost more in page faults than in
/// reading).
struct Window<'f> {
    file: &'f std::fs::File,
    buf: Vec<u8>,
    /// File offset of `buf[0]`.
    start: usize,
}

impl Window<'_> {
    /// The `n` bytes at file offset `pos` (never before an earlier call's `pos`).
    fn get(&mut self, pos: usize, n: usize) -> Result<&[u8]> {
        if pos < self.start {
            bail!("the index reader went backwards");
        }
        if pos + n > self.start + self.buf.len() {
            let keep = self.buf.len().saturating_sub(pos - self.start);
            let from = self.buf.len() - keep;
            self.buf.copy_within(from.., 0);
            self.buf.truncate(keep);
            self.start = pos;
            let want = n.max(BLOCK);
            let have = self.buf.len();
            self.buf.resize(want, 0);
            let got = read_full(self.file, &mut self.buf[have..], pos + have)?;
            self.buf.truncate(have + got);
            if self.buf.len() < n {
                bail!("the index is truncated");
            }
        }
        Ok(&self.buf[pos - self.start..pos - self.start + n])
    }

    /// Offset of the first NUL at or after `pos`, before `end`.
    fn nul(&mut self, pos: usize, end: usize) -> Result<usize> {
        let mut n = 64.min(end.saturating_sub(pos));
        loop {
            let bytes = self.get(pos, n)?;
            if let Some(i) = bytes.iter().position(|&b| b == 0) {
                return Ok(pos + i);
            }
            if pos + n >= end {
                bail!("the index is truncated");
            }
            n = (n * 2).min(end - pos);
        }
    }
}

fn parse(file: std::fs::File) -> Result<ParsedIndex> {
    let size = file.metadata().context("reading the index")?.len() as usize;
    if size < 12 + OID_LEN {
        bail!("not a git index (too short)");
    }
    if u32::try_from(size).is_err() {
        return Err(Unsupported("an index over 4 GiB".to_string()).into());
    }
    let end = size - OID_LEN;
    let mut w = Window {
        file: &file,
        buf: Vec::new(),
        start: 0,
    };
    let head = w.get(0, 12)?;
    if &head[..4] != b"DIRC" {
        bail!("not a git index (bad signature)");
    }
    let version = be32(head, 4)?;
    let count = be32(head, 8)? as usize;
    if !(2..=4).contains(&version) {
        return Err(Unsupported(format!("index version {version}")).into());
    }
    // One pass hops from entry to entry keeping where each starts and its path (one buffer for
    // all of them); the rest of an entry is read again only if the walk asks for it.
    let mut offsets: Vec<u32> = Vec::with_capacity(count);
    let mut names: Vec<u8> = Vec::new();
    let mut name_ends: Vec<u32> = Vec::with_capacity(count);
    let mut previous: Vec<u8> = Vec::new();
    let mut at = 12;
    for _ in 0..count {
        let start = at;
        if start + 62 > end {
            bail!("the index is truncated");
        }
        let flags = be16(w.get(at + 60, 2)?, 0)?;
        let mut fixed = 62;
        if flags & 0x4000 != 0 {
            if version < 3 {
                bail!("extended flags in a version 2 index");
            }
            fixed = 64;
        }
        let name_len = (flags & 0x0fff) as usize;
        at += fixed;
        if version == 4 {
            let head = w.get(at, 10.min(end.saturating_sub(at)))?;
            let mut used = 0;
            let strip = varint(head, &mut used)?;
            at += used;
            let nul = w.nul(at, end)?;
            let keep = previous
                .len()
                .checked_sub(strip)
                .context("bad path compression in the index")?;
            previous.truncate(keep);
            previous.extend_from_slice(w.get(at, nul - at)?);
            names.extend_from_slice(&previous);
            at = nul + 1;
        } else {
            let len = if name_len < 0x0fff {
                name_len
            } else {
                w.nul(at, end)? - at
            };
            names.extend_from_slice(w.get(at, len)?);
            // Entries are NUL-padded to a multiple of eight bytes.
            at = start + ((fixed + len + 8) & !7);
        }
        if at > end {
            bail!("the index is truncated");
        }
        offsets.push(start as u32);
        name_ends.push(u32::try_from(names.len()).context("an index over 4 GiB")?);
    }
    let mut cache = None;
    let tail = w.get(at, end - at)?.to_vec();
    let mut pos = 0;
    while pos + 8 <= tail.len() {
        let sig = &tail[pos..pos + 4];
        let len = be32(&tail, pos + 4)? as usize;
        let body = tail
            .get(pos + 8..pos + 8 + len)
            .context("the index is truncated")?;
        match sig {
            b"TREE" => {
                let mut p = 0;
                cache = parse_cache_node(body, &mut p).ok();
            }
            // Optional extensions start with an upper-case letter; the rest change meaning.
            s if s[0].is_ascii_uppercase() => {}
            s => {
                return Err(
                    Unsupported(format!("index extension {}", String::from_utf8_lossy(s))).into(),
                )
            }
        }
        pos += 8 + len;
    }
    drop(w);
    Ok(ParsedIndex {
        file,
        offsets,
        names,
        name_ends,
        block: std::cell::RefCell::new((0, Vec::new())),
        cache,
    })
}

fn parse_cache_node(body: &[u8], pos: &mut usize) -> Result<CacheNode> {
    let nul = body[*pos..]
        .iter()
        .position(|&b| b == 0)
        .context("bad cache tree")?;
    let name = body[*pos..*pos + nul].to_vec();
    *pos += nul + 1;
    let nl = body[*pos..]
        .iter()
        .position(|&b| b == b'\n')
        .context("bad cache tree")?;
    let line = std::str::from_utf8(&body[*pos..*pos + nl]).context("bad cache tree")?;
    *pos += nl + 1;
    let (count, subtrees) = line.split_once(' ').context("bad cache tree")?;
    let count: i64 = count.parse().context("bad cache tree")?;
    let subtrees: usize = subtrees.parse().context("bad cache tree")?;
    let oid = if count >= 0 {
        let bytes = body.get(*pos..*pos + OID_LEN).context("bad cache tree")?;
        *pos += OID_LEN;
        Some(Oid::from_bytes(bytes)?)
    } else {
        None
    };
    let mut children = Vec::with_capacity(subtrees);
    for _ in 0..subtrees {
        children.push(parse_cache_node(body, pos)?);
    }
    Ok(CacheNode {
        name,
        count,
        oid,
        children,
    })
}

fn libgit2_fallback(
    repo: &Repository,
    index_path: &Path,
    head: Option<&Tree>,
) -> Result<Vec<String>> {
    let index = git2::Index::open(index_path)
        .with_context(|| format!("reading the index {}", index_path.display()))?;
    let mut opts = git2::DiffOptions::new();
    opts.include_typechange(true);
    let diff = repo
        .diff_tree_to_index(head, Some(&index), Some(&mut opts))
        .context("comparing the index with HEAD")?;
    let mut out = Vec::new();
    for d in diff.deltas() {
        for f in [d.old_file(), d.new_file()] {
            if let Some(p) = f.path_bytes() {
                out.push(p.to_vec());
            }
        }
    }
    Ok(finish(out))
}
