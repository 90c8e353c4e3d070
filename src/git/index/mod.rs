//! Git's index file (`$GIT_DIR/index`), read-only: the one decoder behind the guard's staged
//! paths ([`crate::git::staged`]) and `list`'s status walk ([`crate::git::status`]).
//!
//! The format (versions 2, 3 and 4, SHA-1): a 12-byte header (`DIRC`, the version, the entry
//! count), the entries sorted by path then stage ([`entries`]), extension records
//! `<signature><be32 length><body>` ([`extensions`], among them the cache tree `TREE` and the
//! untracked cache `UNTR`, [`untracked_cache`]), and a 20-byte checksum. Two readers share the
//! decoding:
//! - [`Index::read`] decodes a whole file (the status walk needs every entry's stat data),
//!   streaming it through one small buffer;
//! - [`Cursor`] moves forward through the entries of a file, decoding only
//!   what it is asked to and hopping over whole directories the cache tree vouches for (the
//!   guard must cost about a process start whatever the size of the index).
//!
//! Invariants, kept here and nowhere else:
//! - Nothing on disk can crash a reader: every count read from the file is checked against the
//!   bytes that could hold it before it sizes anything (the header's entry count against the
//!   smallest entry, a cache tree's subtree count against the smallest node), vectors sized
//!   from the file are grown with `try_reserve`, recursion over the cache tree stops at
//!   [`extensions::MAX_CACHE_DEPTH`], walks over paths stop at [`MAX_DIR_DEPTH`], and varints
//!   are overflow-checked. Damage is an error.
//! - What this decoder does not handle (another version or hash, a split or sparse index, a
//!   file over 4 GiB) is an [`Unsupported`] error, which callers answer through libgit2 (only
//!   after [`fit_for_libgit2`], since libgit2 trusts the counts in the file).
//! - The checksum is not verified (git does not verify it on read either); nothing here writes,
//!   and no program runs.

mod cursor;
pub mod entries;
mod ewah;
pub mod extensions;
pub mod untracked_cache;
mod whole;

pub use cursor::Cursor;
pub use entries::Entry;
pub use whole::Index;

use anyhow::{bail, Context, Result};
use std::path::Path;

/// Bytes of an object id (SHA-1; another hash is [`Unsupported`]).
pub const OID_LEN: usize = 20;
/// The header: `DIRC`, version, entry count.
pub const HEADER_LEN: usize = 12;
/// Deepest directory nesting the walks over the index's paths (and HEAD's trees) recurse
/// through, so they fit a 2 MiB thread stack (a rayon worker's) even in a debug build. Deeper,
/// the guard asks libgit2, whose iterators keep their own stack, and the status walk gives up
/// with an error (libgit2's own status refuses beyond 100 levels). Real worktrees nest a few
/// dozen levels.
pub const MAX_DIR_DEPTH: usize = 256;

/// Why a reader stepped aside: a valid index this decoder does not handle, for libgit2.
#[derive(Debug)]
pub struct Unsupported(pub String);

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for Unsupported {}

/// An [`Unsupported`] error.
pub fn unsupported(why: impl Into<String>) -> anyhow::Error {
    Unsupported(why.into()).into()
}

/// Whether `e` says the index is valid but not for this decoder (see [`Unsupported`]).
pub fn is_unsupported(e: &anyhow::Error) -> bool {
    e.downcast_ref::<Unsupported>().is_some()
}

/// The header of an index file.
#[derive(Debug, Clone, Copy)]
pub struct Header {
    pub version: u32,
    /// Entries announced, checked against the file's size.
    pub count: usize,
}

impl Header {
    /// Reads the header at the start of `head` (at least [`HEADER_LEN`] bytes) of a file of
    /// `size` bytes.
    pub fn parse(head: &[u8], size: usize) -> Result<Header> {
        if head.len() < HEADER_LEN || size < HEADER_LEN + OID_LEN {
            bail!("not a git index (too short)");
        }
        if &head[..4] != b"DIRC" {
            bail!("not a git index (bad signature)");
        }
        let version = be32(head, 4)?;
        if !(2..=4).contains(&version) {
            return Err(unsupported(format!("index version {version}")));
        }
        let count = be32(head, 8)? as usize;
        // The count comes from the file: every entry takes MIN_ENTRY bytes at least, so more
        // than fit between the header and the checksum means damage, whatever uses the count.
        if count > (size - HEADER_LEN - OID_LEN) / entries::MIN_ENTRY {
            bail!("the index is truncated (its header counts {count} entries)");
        }
        Ok(Header { version, count })
    }
}

/// Checks the index file at `path` before it is handed to libgit2, which trusts the counts in
/// it: an error names the damage. A missing file, and a valid one this decoder leaves to
/// libgit2, pass.
pub fn fit_for_libgit2(path: &Path) -> Result<()> {
    match Index::read(path) {
        Err(e) if !is_unsupported(&e) => {
            Err(e).with_context(|| format!("reading {}", path.display()))
        }
        _ => Ok(()),
    }
}

pub(crate) fn be32(data: &[u8], at: usize) -> Result<u32> {
    let bytes = data
        .get(at..at.saturating_add(4))
        .context("the index is truncated")?;
    Ok(u32::from_be_bytes(bytes.try_into().expect("4 bytes")))
}
