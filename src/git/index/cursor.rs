//! A forward-only reader of the index's entries, for the guard: it reads the file through one
//! reused block and decodes an entry only when asked, so stepping over a directory costs one
//! read of each entry's flags and nothing of it is kept.
//!
//! The cache tree is stored after the entries, and nothing tells where the entries end unless
//! git was asked to write an `EOIE` extension. So the extensions are found from the end of the
//! file: the chain of records that starts with `TREE` and ends exactly at the checksum. That is
//! a guess until it is confirmed: [`Cursor::whole_tree`] confirms it by the root counting exactly
//! the header's entries and naming a tree that exists; [`Cursor::finish`] by the entries ending
//! exactly where the extensions were found to start; [`Cursor::skip`] by each directory hopped
//! over starting and ending where its count says. Anything else is [`super::Unsupported`].
//!
//! Like git's own lookups, the reader relies on the index being sorted by path, which every
//! writer of it guarantees; consecutive decoded entries are checked.

use super::entries::{self, Entry};
use super::extensions::{self, CacheNode};
use super::{unsupported, Header, HEADER_LEN, OID_LEN};
use crate::git::Objects;
use anyhow::{bail, Context, Result};
use std::ops::Range;

/// Bytes read at a time: small enough to stay in cache, large enough for few system calls.
const BLOCK: usize = 128 * 1024;
/// The first look at the end of the file for the extensions (a cache tree takes about 40 bytes
/// per directory); quadrupled until they are found.
const TAIL: usize = 16 * 1024;
/// Bytes first offered to the entry decoder (more when its path is longer).
const FIRST_LOOK: usize = 512;

/// An entry the cursor decoded: its data and its path.
pub struct Decoded {
    pub entry: Entry,
    pub path: Vec<u8>,
}

pub struct Cursor {
    file: std::fs::File,
    version: u32,
    /// Entries the header announces, and how many were passed.
    count: usize,
    passed: usize,
    /// File offset of the next entry.
    pos: usize,
    /// Entries stepped over without being decoded.
    pub hopped: usize,
    /// Where the extensions start, when found from the end of the file (see the module doc).
    extensions_at: Option<usize>,
    /// Where the checksum starts: nothing of the entries or extensions lies beyond.
    end: usize,
    /// The `TREE` extension's body, parsed only when the walk needs it.
    cache_body: Option<Vec<u8>>,
    buf: Vec<u8>,
    /// File offset of `buf[0]`, and how many of its bytes are read.
    buf_at: usize,
    filled: usize,
    /// The entry at `pos` and its size, once decoded.
    current: Option<(Decoded, usize)>,
    /// The last decoded path: version 4 paths are stored as an edit of it, and the order of
    /// consecutive decoded entries is checked against it.
    previous: Vec<u8>,
}

impl Cursor {
    /// A cursor over the index file `file`, which it reads block by block.
    pub fn open(file: std::fs::File) -> Result<Cursor> {
        let size = file.metadata().context("reading the index")?.len() as usize;
        let mut head = [0u8; HEADER_LEN];
        if size < HEADER_LEN + OID_LEN || read_full(&file, &mut head, 0)? < head.len() {
            bail!("not a git index (too short)");
        }
        let header = Header::parse(&head, size)?;
        if u32::try_from(size).is_err() {
            return Err(unsupported("an index over 4 GiB"));
        }
        let mut cursor = Cursor {
            file,
            version: header.version,
            count: header.count,
            passed: 0,
            pos: HEADER_LEN,
            hopped: 0,
            extensions_at: None,
            end: size - OID_LEN,
            cache_body: None,
            // Allocated on the first read of entries: the tree route reads none.
            buf: Vec::new(),
            buf_at: 0,
            filled: 0,
            current: None,
            previous: Vec::new(),
        };
        cursor.find_extensions()?;
        Ok(cursor)
    }

    /// The bytes `from..to` of the file.
    fn range(&self, from: usize, to: usize) -> Result<Vec<u8>> {
        let mut bytes = vec![0; to - from];
        if read_full(&self.file, &mut bytes, from)? < bytes.len() {
            bail!("the index is truncated");
        }
        Ok(bytes)
    }

    /// Looks for the extensions from the end of the file (a guess the pass confirms): the
    /// earliest `TREE` record whose chain of records ends exactly at the checksum.
    fn find_extensions(&mut self) -> Result<()> {
        let mut tail = TAIL;
        loop {
            let from = self.end.saturating_sub(tail).max(HEADER_LEN);
            let found = {
                let bytes = self.range(from, self.end)?;
                chain_from_tree(&bytes)?.map(|(start, body)| (from + start, body))
            };
            if let Some((at, body)) = found {
                self.extensions_at = Some(at);
                self.cache_body = Some(body);
                return Ok(());
            }
            if from == HEADER_LEN {
                // No cache tree: every directory is compared.
                return Ok(());
            }
            tail *= 4;
        }
    }

    /// The tree the index holds, when its cache tree names it: the root entry is valid and
    /// covers every entry (none is unmerged or intent-to-add, which the cache tree leaves out),
    /// and the object database has that tree. That is the tree `git commit` will commit; it
    /// brings the cache tree up to date, writing the trees, before it runs the pre-commit hook.
    ///
    /// The extensions were found from the end of the file without the pass that confirms them;
    /// here the confirmation is that the root entry names an existing tree and counts exactly
    /// the entries the header announces, which a misread stretch of the file cannot do.
    pub fn whole_tree(&self, repo: Objects<'_>) -> Option<crate::git::RawTree> {
        let (count, oid) = extensions::cache_root(self.cache_body.as_deref()?)?;
        if count != self.count {
            return None;
        }
        crate::git::RawTree::read_new(repo, oid).ok()
    }

    /// The whole cache tree, for the walk; `None` when there is none or it does not parse.
    pub fn cache_tree(&mut self) -> Option<CacheNode> {
        CacheNode::parse(&self.cache_body.take()?).ok()
    }

    /// Makes the `n` bytes at file offset `at` available in `buf`; their range in it.
    fn fill(&mut self, at: usize, n: usize) -> Result<Range<usize>> {
        if at < self.buf_at || at + n > self.buf_at + self.filled {
            if self.buf.len() < n.max(BLOCK) {
                self.buf.resize(n.max(BLOCK).next_power_of_two(), 0);
            }
            let want = self.buf.len().min((self.end + OID_LEN).saturating_sub(at));
            let got = read_full(&self.file, &mut self.buf[..want], at)?;
            self.buf_at = at;
            self.filled = got;
            if got < n {
                bail!("the index is truncated");
            }
        }
        Ok(at - self.buf_at..at - self.buf_at + n)
    }

    /// The entry at the cursor, `None` after the last one.
    pub fn peek(&mut self) -> Result<Option<&Decoded>> {
        if self.current.is_none() && self.passed < self.count {
            let (entry, size) = self.decode()?;
            if entry.path.as_slice() < self.previous.as_slice() {
                return Err(unsupported("the index is not sorted by path"));
            }
            self.previous.clone_from(&entry.path);
            self.current = Some((entry, size));
        }
        Ok(self.current.as_ref().map(|(e, _)| e))
    }

    /// Steps past the entry at the cursor.
    pub fn advance(&mut self) -> Result<()> {
        if self.peek()?.is_none() {
            bail!("the index ended early");
        }
        let (_, size) = self.current.take().expect("peeked");
        self.pos += size;
        self.passed += 1;
        Ok(())
    }

    /// Steps over the `n` entries of directory `dir` (`<name>/`, empty for the whole index),
    /// the first being the one at the cursor, without decoding them (version 4 paths must
    /// still be followed), then confirms that the last one was below `dir` and the next one is
    /// not.
    pub fn skip(&mut self, n: usize, dir: &[u8]) -> Result<()> {
        if n == 0 || self.passed + n > self.count {
            return Err(unsupported("a cache-tree count beyond the index"));
        }
        let mut left = n;
        let mut last = None;
        if let Some((e, size)) = self.current.take() {
            self.pos += size;
            self.passed += 1;
            left -= 1;
            last = Some(e.path);
        }
        if left > 0 {
            if self.version == 4 {
                for _ in 0..left - 1 {
                    let (e, size) = self.decode()?;
                    self.previous = e.path;
                    self.pos += size;
                }
            } else {
                self.hop(left - 1)?;
                self.hopped += left - 1;
            }
            self.passed += left - 1;
            let (e, size) = self.decode()?;
            if e.path.as_slice() < self.previous.as_slice() {
                return Err(unsupported("the index is not sorted by path"));
            }
            self.previous.clone_from(&e.path);
            self.pos += size;
            self.passed += 1;
            last = Some(e.path);
        }
        let mismatch = || unsupported("a cache-tree count that does not match the entries");
        if !last.is_some_and(|p| p.starts_with(dir)) {
            return Err(mismatch());
        }
        if self.peek()?.is_some_and(|next| next.path.starts_with(dir)) {
            return Err(mismatch());
        }
        Ok(())
    }

    /// Steps over `n` version 2 or 3 entries from `pos`, reading only their flags (which hold
    /// the path's length).
    fn hop(&mut self, mut n: usize) -> Result<()> {
        while n > 0 {
            // The loop that matters on a large index: entries inside the block.
            let mut pos = self.pos;
            let block_end = self.buf_at + self.filled;
            while n > 0 && pos >= self.buf_at && pos + 64 <= block_end {
                let i = pos - self.buf_at;
                let Some(size) = entries::size_from_flags(&self.buf[i..i + 64]) else {
                    break;
                };
                pos += size;
                n -= 1;
            }
            self.pos = pos;
            if n > 0 {
                // At the block's end, or a path too long for the flags to hold its length.
                let (_, size) = self.decode()?;
                self.pos += size;
                n -= 1;
            }
        }
        Ok(())
    }

    /// Decodes the entry at `pos`, offering the decoder more bytes while it needs them.
    fn decode(&mut self) -> Result<(Decoded, usize)> {
        let at = self.pos;
        let avail = self.end.checked_sub(at).context("the index is truncated")?;
        let mut want = avail.min(FIRST_LOOK);
        let mut path = Vec::new();
        loop {
            let r = self.fill(at, want)?;
            match entries::decode(&self.buf[r], self.version, &self.previous, &mut path)? {
                Some((entry, size)) => return Ok((Decoded { entry, path }, size)),
                None if want == avail => bail!("the index is truncated"),
                None => want = want.saturating_mul(4).min(avail),
            }
        }
    }

    /// After the walk: every entry was passed, and they end where the extensions were found to
    /// start; if they were not found, the extensions after the entries are checked now.
    pub fn finish(&mut self) -> Result<()> {
        if self.passed != self.count {
            bail!("the index ended early");
        }
        match self.extensions_at {
            Some(at) if at == self.pos => Ok(()),
            Some(_) => Err(unsupported("index extensions not where they were found")),
            None => {
                if self.pos > self.end {
                    bail!("the index is truncated");
                }
                let bytes = self.range(self.pos, self.end)?;
                let records = extensions::chain(&bytes).context("bad index extensions")?;
                match records
                    .iter()
                    .find(|(sig, _)| !extensions::is_optional(sig))
                {
                    Some((sig, _)) => Err(unsupported(format!(
                        "index extension {}",
                        String::from_utf8_lossy(sig)
                    ))),
                    None => Ok(()),
                }
            }
        }
    }
}

/// In `bytes` (the end of the file up to the checksum), the earliest `TREE` record whose chain
/// of records covers the rest exactly: where it starts, and the cache tree's body. An error
/// when that chain holds an extension this decoder does not handle.
fn chain_from_tree(bytes: &[u8]) -> Result<Option<(usize, Vec<u8>)>> {
    let mut at = 0;
    while let Some(i) = extensions::find(&bytes[at..], b"TREE") {
        let start = at + i;
        if let Some(records) = extensions::chain(&bytes[start..]) {
            let mut body = None;
            for (sig, b) in records {
                if sig == b"TREE" {
                    body = Some(b.to_vec());
                } else if !extensions::is_optional(sig) {
                    // The rest change what the entries mean.
                    return Err(unsupported(format!(
                        "index extension {}",
                        String::from_utf8_lossy(sig)
                    )));
                }
            }
            return Ok(body.map(|b| (start, b)));
        }
        at = start + 1;
    }
    Ok(None)
}

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
