//! The untracked cache (`UNTR`), decoded: what `git status` last found untracked in each
//! directory, with what it needs to tell whether that still holds (git's gitformat-index,
//! "Untracked cache"; written by `core.untrackedCache`).
//!
//! The body, in order:
//! - a varint length, then that many bytes of "ident": NUL-ended strings naming where the cache
//!   may be used (git writes one, `Location <worktree>, system <uname -s>`, and compares only it);
//! - the stat data of `$GIT_COMMON_DIR/info/exclude` and of `core.excludesFile` (36 bytes each),
//!   the be32 `dir_flags` of the `git status` run that wrote it, then the two files' object ids
//!   (all zero: no such file) and the NUL-ended per-directory ignore file name (`.gitignore`);
//! - a varint count of directory blocks (zero: the body ends here), then the blocks depth first,
//!   each `<varint untracked count><varint subdirectory count><name>\0<untracked names, each
//!   NUL-ended>` (the root's name is empty; an untracked nested repository is named `dir/`);
//! - three EWAH bitmaps (`ewah.rs`) over the blocks: valid, check-only, and "has an
//!   ignore file id"; then the stat data of each valid block, and the ignore file id of each
//!   block with one, in block order; then one NUL.
//!
//! Invariants: everything here comes from disk and is checked as git's reader checks it (the
//! last byte is the NUL, the blocks read are exactly the count, the data ends exactly at that
//! NUL) and more: every count is checked against the bytes left before it sizes anything (a
//! block takes 3 bytes at least, a name 1), nesting stops at [`MAX_DIR_DEPTH`] and is read with
//! an explicit stack, bitmaps cannot set bits beyond the blocks, and names are single path
//! components (a name with a `/`, `.` or `..` could send a walk out of its directory). Any
//! damage is an error; the caller then does without the cache, as git does.

use super::entries::varint;
use super::{ewah, MAX_DIR_DEPTH, OID_LEN};
use anyhow::{bail, ensure, Context, Result};

/// One stat record as the cache keeps it: 32-bit fields (git's `struct stat_data`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StatData {
    pub ctime: (u32, u32),
    pub mtime: (u32, u32),
    pub dev: u32,
    pub ino: u32,
    pub uid: u32,
    pub gid: u32,
    pub size: u32,
}

/// Bytes of a [`StatData`] on disk.
pub const STAT_LEN: usize = 36;

impl StatData {
    fn parse(b: &[u8]) -> StatData {
        let f = |i: usize| u32::from_be_bytes(b[i * 4..i * 4 + 4].try_into().expect("4 bytes"));
        StatData {
            ctime: (f(0), f(1)),
            mtime: (f(2), f(3)),
            dev: f(4),
            ino: f(5),
            uid: f(6),
            gid: f(7),
            size: f(8),
        }
    }
}

/// One directory block.
#[derive(Debug, Default)]
pub struct CachedDir {
    /// Empty for the root.
    pub name: Vec<u8>,
    /// Untracked, not ignored names found in it: files, and nested repositories as `name/`.
    pub untracked: Vec<Vec<u8>>,
    /// Its subdirectories' blocks (indices into [`UntrackedCache::dirs`]), sorted by name.
    pub dirs: Vec<usize>,
    /// The directory's stat data when its record is valid.
    pub stat: Option<StatData>,
    /// Recorded by a run that only looked for whether anything is untracked below.
    pub check_only: bool,
    /// The id git computed for the directory's ignore file, when it had one.
    pub exclude_oid: Option<[u8; OID_LEN]>,
}

#[derive(Debug)]
pub struct UntrackedCache {
    /// The first ident string (git compares only that one).
    pub ident: Vec<u8>,
    /// Ids of `info/exclude` and `core.excludesFile` as git last read them; `None`: absent.
    pub info_exclude: Option<[u8; OID_LEN]>,
    pub excludes_file: Option<[u8; OID_LEN]>,
    /// The `read_directory` flags of the run the cache serves (0: `--untracked-files=all`).
    pub dir_flags: u32,
    /// The per-directory ignore file name.
    pub exclude_per_dir: Vec<u8>,
    /// The blocks in the file's order; the first is the root. Empty: nothing recorded yet.
    pub dirs: Vec<CachedDir>,
}

/// Smallest directory block: two one-byte varints and the name's NUL.
const MIN_BLOCK: usize = 3;
/// The fixed part after the ident: two stat records and the flags, then two ids.
const FIXED: usize = 2 * STAT_LEN + 4 + 2 * OID_LEN;

impl UntrackedCache {
    /// Decodes an `UNTR` body; an error for anything git's reader would refuse, and for counts
    /// or names no real cache has.
    pub fn parse(body: &[u8]) -> Result<UntrackedCache> {
        ensure!(
            body.len() > 1 && body.last() == Some(&0),
            "the untracked cache does not end in NUL"
        );
        // Everything is read from `data`; the final NUL is only a guard.
        let data = &body[..body.len() - 1];
        let mut r = Reader { data, at: 0 };
        let ident_len = r.varint()?;
        let ident = r.take(ident_len)?;
        let ident = ident.split(|&b| b == 0).next().unwrap_or_default().to_vec();
        let fixed = r.take(FIXED)?;
        let oid = |at: usize| {
            let id: [u8; OID_LEN] = fixed[at..at + OID_LEN].try_into().expect("an id");
            (id != [0; OID_LEN]).then_some(id)
        };
        let dir_flags = u32::from_be_bytes(
            fixed[2 * STAT_LEN..2 * STAT_LEN + 4]
                .try_into()
                .expect("4 bytes"),
        );
        let info_exclude = oid(2 * STAT_LEN + 4);
        let excludes_file = oid(2 * STAT_LEN + 4 + OID_LEN);
        let exclude_per_dir = r.string()?.to_vec();
        let mut cache = UntrackedCache {
            ident,
            info_exclude,
            excludes_file,
            dir_flags,
            exclude_per_dir,
            dirs: Vec::new(),
        };
        if r.at == data.len() {
            return Ok(cache);
        }
        let count = r.varint()?;
        if count == 0 {
            ensure!(r.at == data.len(), "bytes after an empty untracked cache");
            return Ok(cache);
        }
        if count > (data.len() - r.at) / MIN_BLOCK {
            bail!("the untracked cache counts more directories than its bytes hold");
        }
        cache
            .dirs
            .try_reserve_exact(count)
            .context("an untracked cache too large for memory")?;
        cache.read_blocks(&mut r, count)?;
        cache.read_bitmaps(&mut r)?;
        ensure!(r.at == data.len(), "bytes left over in the untracked cache");
        for d in 0..cache.dirs.len() {
            let mut children = std::mem::take(&mut cache.dirs[d].dirs);
            children.sort_unstable_by(|&a, &b| cache.dirs[a].name.cmp(&cache.dirs[b].name));
            cache.dirs[d].dirs = children;
        }
        Ok(cache)
    }

    /// The block of subdirectory `name` of block `dir`.
    pub fn child(&self, dir: usize, name: &[u8]) -> Option<usize> {
        let dirs = &self.dirs.get(dir)?.dirs;
        dirs.binary_search_by(|&d| self.dirs[d].name.as_slice().cmp(name))
            .ok()
            .map(|i| dirs[i])
    }

    /// Reads `count` blocks, depth first, with an explicit stack.
    fn read_blocks(&mut self, r: &mut Reader, count: usize) -> Result<()> {
        // Open blocks: index, and subdirectories still to come.
        let mut open: Vec<(usize, usize)> = Vec::new();
        loop {
            let (dir, subdirs) = self.read_block(r, count, open.is_empty())?;
            if let Some(&(parent, _)) = open.last() {
                self.dirs[parent].dirs.push(dir);
            }
            open.push((dir, subdirs));
            // Close every block whose subdirectories are all read.
            while let Some((_, left)) = open.last_mut() {
                if *left > 0 {
                    *left -= 1;
                    break;
                }
                open.pop();
            }
            if open.is_empty() {
                ensure!(
                    self.dirs.len() == count,
                    "the untracked cache holds another number of directories than it counts"
                );
                return Ok(());
            }
            ensure!(
                open.len() <= MAX_DIR_DEPTH,
                "the untracked cache nests deeper than {MAX_DIR_DEPTH} directories"
            );
        }
    }

    /// Reads one block's own fields; its index, and how many subdirectory blocks follow.
    fn read_block(&mut self, r: &mut Reader, count: usize, root: bool) -> Result<(usize, usize)> {
        ensure!(
            self.dirs.len() < count,
            "the untracked cache holds more directories than it counts"
        );
        let untracked_count = r.varint()?;
        let subdirs = r.varint()?;
        // Each name takes a NUL at least, each block MIN_BLOCK bytes.
        ensure!(
            untracked_count <= r.left() && subdirs < count - self.dirs.len(),
            "the untracked cache counts more names than its bytes hold"
        );
        let name = r.string()?.to_vec();
        ensure!(
            if root {
                name.is_empty()
            } else {
                is_component(&name)
            },
            "a bad directory name in the untracked cache"
        );
        let mut untracked = Vec::new();
        untracked.try_reserve_exact(untracked_count)?;
        for _ in 0..untracked_count {
            let n = r.string()?;
            ensure!(
                is_component(n.strip_suffix(b"/").unwrap_or(n)),
                "a bad untracked name in the untracked cache"
            );
            untracked.push(n.to_vec());
        }
        let mut dirs = Vec::new();
        dirs.try_reserve_exact(subdirs)?;
        self.dirs.push(CachedDir {
            name,
            untracked,
            dirs,
            ..CachedDir::default()
        });
        Ok((self.dirs.len() - 1, subdirs))
    }

    /// The three bitmaps, then the stat data and ids they announce.
    fn read_bitmaps(&mut self, r: &mut Reader) -> Result<()> {
        let n = self.dirs.len();
        let mut bitmap = || -> Result<Vec<bool>> {
            let (flags, used) = ewah::set_bits(&r.data[r.at..], n)?;
            r.at += used;
            Ok(flags)
        };
        let valid = bitmap()?;
        let check_only = bitmap()?;
        let has_oid = bitmap()?;
        for (d, &check) in self.dirs.iter_mut().zip(&check_only) {
            d.check_only = check;
        }
        for (d, _) in self.dirs.iter_mut().zip(&valid).filter(|(_, &v)| v) {
            d.stat = Some(StatData::parse(r.take(STAT_LEN)?));
        }
        for (d, _) in self.dirs.iter_mut().zip(&has_oid).filter(|(_, &v)| v) {
            d.exclude_oid = Some(r.take(OID_LEN)?.try_into().expect("an id"));
        }
        Ok(())
    }
}

/// A single path component a walk may open or list: not empty, no `/`, not `.` or `..`.
fn is_component(name: &[u8]) -> bool {
    !name.is_empty() && !name.contains(&b'/') && name != b"." && name != b".."
}

struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn left(&self) -> usize {
        self.data.len() - self.at
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let out = self
            .data
            .get(self.at..self.at.saturating_add(n))
            .context("the untracked cache is truncated")?;
        self.at += n;
        Ok(out)
    }

    fn varint(&mut self) -> Result<usize> {
        let (value, used) =
            varint(&self.data[self.at..])?.context("the untracked cache is truncated")?;
        self.at += used;
        Ok(value)
    }

    /// A NUL-ended string (the NUL consumed, not returned).
    fn string(&mut self) -> Result<&'a [u8]> {
        let rest = &self.data[self.at..];
        let nul = rest
            .iter()
            .position(|&b| b == 0)
            .context("the untracked cache is truncated")?;
        self.at += nul + 1;
        Ok(&rest[..nul])
    }
}

#[cfg(test)]
#[path = "untracked_cache_tests.rs"]
mod tests;
