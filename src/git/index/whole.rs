//! A whole index file decoded, for the status walk, which needs every entry's stat data.
//!
//! The file is streamed through one buffer of [`BLOCK`] bytes (grown only for an entry longer
//! than that), not held whole (a 50k-entry index is 4 MB), and the paths go to one buffer, not
//! one allocation each. What stays is what the walk needs: 64 bytes of data and the path per
//! entry.

use super::entries::{self, Entry};
use super::{extensions, unsupported, Header, HEADER_LEN, OID_LEN};
use anyhow::{bail, Context, Result};
use std::io::Read;
use std::path::Path;

/// Bytes read at a time.
const BLOCK: usize = 128 * 1024;

/// A whole index file, decoded: its entries, and their paths held in one buffer.
#[derive(Default)]
pub struct Index {
    /// Sorted by path, then stage (as git writes them).
    pub entries: Vec<Entry>,
    /// Where each entry's path ends in `paths` (it starts where the previous one's ends).
    ends: Vec<usize>,
    paths: Vec<u8>,
    /// The tree the index would write, when the cache tree's root is valid.
    pub tree: Option<crate::git::Oid>,
    /// The body of the untracked cache extension (`UNTR`), undecoded: only a walk that may use
    /// it decodes it ([`super::untracked_cache`]), and damage there only means doing without.
    pub untracked_cache: Option<Vec<u8>>,
}

impl Index {
    /// The path of entry `i`.
    pub fn path(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.paths[start..self.ends[i]]
    }

    /// Adds an entry at the end (the caller keeps the order).
    pub fn push(&mut self, entry: Entry, path: &[u8]) {
        self.paths.extend_from_slice(path);
        self.ends.push(self.paths.len());
        self.entries.push(entry);
    }

    /// Reads and decodes the index file at `path`; a missing file is an empty index.
    pub fn read(path: &Path) -> Result<Index> {
        let file = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Index::default()),
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        let size = file.metadata()?.len();
        let size = usize::try_from(size).context("an index beyond the address space")?;
        Index::decode(file, size)
    }

    /// Decodes the index file held in `data`.
    pub fn parse(data: &[u8]) -> Result<Index> {
        Index::decode(data, data.len())
    }

    /// Decodes the index file of `size` bytes that `source` reads. [`super::Unsupported`] for a
    /// version or a mandatory extension this decoder does not handle, but only once the whole
    /// file has been checked (so that [`super::fit_for_libgit2`] can vouch for it).
    fn decode(mut source: impl Read, size: usize) -> Result<Index> {
        let mut head = [0u8; HEADER_LEN];
        if size < HEADER_LEN + OID_LEN {
            bail!("not a git index (too short)");
        }
        source
            .read_exact(&mut head)
            .context("the index is truncated")?;
        let header = Header::parse(&head, size)?;
        // Bytes of entries and extensions: everything up to the checksum.
        let mut left = size - HEADER_LEN - OID_LEN;
        let mut index = Index::default();
        index
            .entries
            .try_reserve_exact(header.count)
            .and_then(|()| index.ends.try_reserve_exact(header.count))
            .context("the index counts more entries than fit in memory")?;
        let mut buf = vec![0u8; BLOCK.min(left)];
        // `buf[at..filled]` is read and not yet decoded.
        let (mut at, mut filled) = (0, 0);
        // The previous path, for version 4's path compression (a copy: `paths` grows under it).
        let mut previous: Vec<u8> = Vec::new();
        let mut decoded = 0;
        while decoded < header.count {
            let start = index.paths.len();
            let found = entries::decode(
                &buf[at..filled],
                header.version,
                &previous,
                &mut index.paths,
            )?;
            let Some((entry, size)) = found else {
                // The entry goes on past what was read: keep its start, read on.
                if left == 0 {
                    bail!("the index is truncated");
                }
                buf.copy_within(at..filled, 0);
                filled -= at;
                at = 0;
                if filled == buf.len() {
                    // One entry longer than the buffer (a very long path).
                    buf.resize(buf.len() * 2, 0);
                }
                let want = (buf.len() - filled).min(left);
                source
                    .read_exact(&mut buf[filled..filled + want])
                    .context("the index is truncated")?;
                filled += want;
                left -= want;
                continue;
            };
            at += size;
            decoded += 1;
            index.entries.push(entry);
            index.ends.push(index.paths.len());
            if header.version == 4 {
                previous.clear();
                previous.extend_from_slice(&index.paths[start..]);
            }
        }
        // The extensions: what is left of the buffer and of the file before the checksum.
        let mut rest = buf[at..filled].to_vec();
        drop(buf);
        let read = rest.len();
        rest.try_reserve_exact(left)?;
        rest.resize(read + left, 0);
        source
            .read_exact(&mut rest[read..])
            .context("the index is truncated")?;
        index.read_extensions(&rest)?;
        Ok(index)
    }

    /// Checks the extension records `bytes` and keeps what the cache tree says.
    fn read_extensions(&mut self, bytes: &[u8]) -> Result<()> {
        let records = extensions::chain(bytes).context("bad index extensions")?;
        let mut mandatory = None;
        for (sig, body) in records {
            if sig == b"TREE" {
                // libgit2 reads the cache tree recursively and sizes allocations from its
                // counts: a file whose cache tree does not pass the bounded reader is damaged.
                extensions::CacheNode::parse(body)?;
                self.tree = extensions::cache_root(body).map(|(_, oid)| oid);
            } else if sig == b"UNTR" {
                self.untracked_cache = Some(body.to_vec());
            } else if !extensions::is_optional(sig) {
                mandatory.get_or_insert_with(|| String::from_utf8_lossy(sig).into_owned());
            }
        }
        match mandatory {
            Some(sig) => Err(unsupported(format!("index extension {sig}"))),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A version 2 index of `paths` (each entry a regular file), with `extensions` after them.
    fn index_file(paths: &[&[u8]], extensions: &[u8]) -> Vec<u8> {
        let mut out = b"DIRC".to_vec();
        out.extend_from_slice(&2u32.to_be_bytes());
        out.extend_from_slice(&(paths.len() as u32).to_be_bytes());
        for p in paths {
            let mut e = vec![0u8; entries::FIXED];
            e[24..28].copy_from_slice(&0o100644u32.to_be_bytes());
            let len = p.len().min(usize::from(entries::FLAG_NAME_MASK)) as u16;
            e[entries::FLAGS_AT..entries::FLAGS_AT + 2].copy_from_slice(&len.to_be_bytes());
            e.extend_from_slice(p);
            e.resize(entries::padded_size(entries::FIXED, p.len()), 0);
            out.extend_from_slice(&e);
        }
        out.extend_from_slice(extensions);
        out.extend_from_slice(&[0u8; OID_LEN]);
        out
    }

    #[test]
    fn entries_across_blocks_and_longer_than_a_block_are_decoded() {
        let long = vec![b'l'; BLOCK * 2 + 17];
        let many: Vec<Vec<u8>> = (0..5000)
            .map(|i| format!("d/{i:06}").into_bytes())
            .collect();
        let mut paths: Vec<&[u8]> = many.iter().map(Vec::as_slice).collect();
        paths.insert(2500, &long);
        let file = index_file(&paths, b"");
        let index = Index::parse(&file).unwrap();
        assert_eq!(index.entries.len(), paths.len());
        for (i, p) in paths.iter().enumerate() {
            assert_eq!(index.path(i), *p, "{i}");
        }
        // Cut anywhere: an error, never a panic.
        for cut in [13, file.len() / 2, file.len() - OID_LEN - 1] {
            let mut cut_file = file[..cut].to_vec();
            cut_file.extend_from_slice(&[0u8; OID_LEN]);
            assert!(Index::parse(&cut_file).is_err(), "{cut}");
        }
    }

    #[test]
    fn a_mandatory_extension_is_left_to_libgit2_after_the_rest_is_checked() {
        let mut ext = b"link".to_vec();
        ext.extend_from_slice(&0u32.to_be_bytes());
        let e = Index::parse(&index_file(&[b"a"], &ext)).err().unwrap();
        assert!(super::super::is_unsupported(&e), "{e:#}");
        // A damaged cache tree beside it is damage, not "unsupported".
        let mut bad = b"TREE".to_vec();
        bad.extend_from_slice(&3u32.to_be_bytes());
        bad.extend_from_slice(b"\0x\n");
        bad.extend_from_slice(&ext);
        let e = Index::parse(&index_file(&[b"a"], &bad)).err().unwrap();
        assert!(!super::super::is_unsupported(&e), "{e:#}");
    }
}
