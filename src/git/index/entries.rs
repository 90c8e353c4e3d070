//! The entries of git's index: their layout and the one decoder of it.
//!
//! An entry is 62 fixed bytes (ctime, mtime, dev, ino, mode, uid, gid, size: 32 bits each; the
//! object id; 16 bits of flags), 2 more of extended flags when the flags say so (version 3 and
//! up), then the path. Versions 2 and 3 store the path whole, its length in the flags (`0xfff`
//! meaning "look for the NUL"), the entry NUL-padded to a multiple of eight bytes. Version 4
//! stores it as an edit of the previous entry's path: a varint of bytes to drop from its end,
//! then the suffix to append, NUL-terminated, no padding.

use super::OID_LEN;
use anyhow::{bail, Context, Result};

pub const MODE_TYPE: u32 = 0o170000;
pub const MODE_DIR: u32 = 0o040000;
pub const MODE_FILE: u32 = 0o100000;
pub const MODE_SYMLINK: u32 = 0o120000;
pub const MODE_GITLINK: u32 = 0o160000;

/// `flags`: assumed unchanged (`git update-index --assume-unchanged`).
pub const FLAG_VALID: u16 = 0x8000;
/// `flags`: two bytes of extended flags follow.
pub const FLAG_EXTENDED: u16 = 0x4000;
pub const FLAG_STAGE_MASK: u16 = 0x3000;
/// `flags`: the path's length, when below this mask.
pub const FLAG_NAME_MASK: u16 = 0x0fff;
/// Extended flags: `git add -N`.
pub const FLAG_INTENT_TO_ADD: u16 = 1 << 13;
/// Extended flags: outside the sparse checkout.
pub const FLAG_SKIP_WORKTREE: u16 = 1 << 14;

/// The fixed part of an entry, before the extended flags.
pub const FIXED: usize = 62;
/// The smallest entry: the fixed part, then at least a NUL (version 4 also a one-byte varint).
pub const MIN_ENTRY: usize = FIXED + 1;
/// Offset of the flags in an entry.
pub const FLAGS_AT: usize = 60;

/// One entry's recorded data, everything but its path (which [`decode`] appends to a buffer of
/// the caller's, so a whole index costs one allocation for its paths, not one per entry): the
/// stat data git recorded (32-bit fields, as on disk), the mode, the object id and the flags.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    pub ctime: (u32, u32),
    pub mtime: (u32, u32),
    pub ino: u32,
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    pub size: u32,
    pub oid: [u8; OID_LEN],
    pub flags: u16,
    pub flags_extended: u16,
}

impl Entry {
    /// The conflict stage: 0 when merged.
    pub fn stage(&self) -> u16 {
        (self.flags & FLAG_STAGE_MASK) >> 12
    }

    pub fn intent_to_add(&self) -> bool {
        self.flags_extended & FLAG_INTENT_TO_ADD != 0
    }
}

/// Decodes the entry at the start of `buf` (which ends where the entries may end at most: at
/// the checksum) of an index of `version`, whose previous entry's path was `previous`, and
/// appends its path to `path`. Returns the entry and its size in the file, or `None` when
/// `buf` ends first (a streaming reader then reads more; for a whole file it is truncated), in
/// which case nothing was appended.
pub fn decode(
    buf: &[u8],
    version: u32,
    previous: &[u8],
    path: &mut Vec<u8>,
) -> Result<Option<(Entry, usize)>> {
    if buf.len() < FIXED {
        return Ok(None);
    }
    let u32_at = |at: usize| u32::from_be_bytes(buf[at..at + 4].try_into().expect("4 bytes"));
    let flags = u16::from_be_bytes([buf[FLAGS_AT], buf[FLAGS_AT + 1]]);
    let (fixed, flags_extended) = if flags & FLAG_EXTENDED != 0 {
        if version < 3 {
            bail!("extended flags in a version 2 index");
        }
        let Some(ext) = buf.get(FIXED..FIXED + 2) else {
            return Ok(None);
        };
        (FIXED + 2, u16::from_be_bytes([ext[0], ext[1]]))
    } else {
        (FIXED, 0)
    };
    let size = if version == 4 {
        let Some((strip, used)) = varint(&buf[fixed..])? else {
            return Ok(None);
        };
        let name_at = fixed + used;
        let Some(len) = buf[name_at..].iter().position(|&b| b == 0) else {
            return Ok(None);
        };
        let keep = previous
            .len()
            .checked_sub(strip)
            .context("bad path compression in the index")?;
        // Grown without aborting on a length the file makes up (each entry may repeat most of
        // the previous path, so a small file can describe a great many path bytes).
        path.try_reserve(keep + len)?;
        path.extend_from_slice(&previous[..keep]);
        path.extend_from_slice(&buf[name_at..name_at + len]);
        name_at + len + 1
    } else {
        let len = match usize::from(flags & FLAG_NAME_MASK) {
            len if len == usize::from(FLAG_NAME_MASK) => {
                match buf[fixed..].iter().position(|&b| b == 0) {
                    Some(len) => len,
                    None => return Ok(None),
                }
            }
            len => len,
        };
        let size = padded_size(fixed, len);
        if buf.len() < size {
            return Ok(None);
        }
        path.try_reserve(len)?;
        path.extend_from_slice(&buf[fixed..fixed + len]);
        size
    };
    let mut oid = [0u8; OID_LEN];
    oid.copy_from_slice(&buf[40..40 + OID_LEN]);
    let entry = Entry {
        ctime: (u32_at(0), u32_at(4)),
        mtime: (u32_at(8), u32_at(12)),
        ino: u32_at(20),
        mode: u32_at(24),
        uid: u32_at(28),
        gid: u32_at(32),
        size: u32_at(36),
        oid,
        flags,
        flags_extended,
    };
    Ok(Some((entry, size)))
}

/// The size of a version 2 or 3 entry: its fixed part and path, NUL-padded to a multiple of
/// eight bytes (at least one NUL).
pub fn padded_size(fixed: usize, path_len: usize) -> usize {
    (fixed + path_len + 8) & !7
}

/// The size of the version 2 or 3 entry whose first 64 bytes (or more) are `head`, from its
/// flags alone; `None` when the path is too long for the flags to hold its length.
pub fn size_from_flags(head: &[u8]) -> Option<usize> {
    let flags = u16::from_be_bytes([head[FLAGS_AT], head[FLAGS_AT + 1]]);
    let len = usize::from(flags & FLAG_NAME_MASK);
    if len == usize::from(FLAG_NAME_MASK) {
        return None;
    }
    let fixed = if flags & FLAG_EXTENDED != 0 {
        FIXED + 2
    } else {
        FIXED
    };
    Some(padded_size(fixed, len))
}

/// Git's offset varint (version 4 path compression): the value and the bytes it took, `None`
/// when `data` ends inside it. A value beyond `usize` is damage.
pub fn varint(data: &[u8]) -> Result<Option<(usize, usize)>> {
    let mut used = 0;
    let Some(&first) = data.first() else {
        return Ok(None);
    };
    let mut c = first;
    used += 1;
    let mut val = usize::from(c & 127);
    while c & 128 != 0 {
        let Some(&next) = data.get(used) else {
            return Ok(None);
        };
        c = next;
        used += 1;
        val = val
            .checked_add(1)
            .and_then(|v| v.checked_mul(128))
            .and_then(|v| v.checked_add(usize::from(c & 127)))
            .context("bad varint in the index")?;
    }
    Ok(Some((val, used)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_decode_and_overflow_is_an_error() {
        assert_eq!(varint(&[0x05]).unwrap(), Some((5, 1)));
        // Git's offset encoding: 0x80 0x00 is 128.
        assert_eq!(varint(&[0x80, 0x00]).unwrap(), Some((128, 2)));
        assert_eq!(varint(&[0x80]).unwrap(), None);
        assert_eq!(varint(&[]).unwrap(), None);
        assert!(varint(&[0xff; 12]).is_err());
    }

    fn v2_entry(path: &[u8]) -> Vec<u8> {
        let mut e = vec![0u8; FIXED];
        e[24..28].copy_from_slice(&0o100644u32.to_be_bytes());
        let len = path.len().min(usize::from(FLAG_NAME_MASK)) as u16;
        e[FLAGS_AT..FLAGS_AT + 2].copy_from_slice(&len.to_be_bytes());
        e.extend_from_slice(path);
        e.resize(padded_size(FIXED, path.len()), 0);
        e
    }

    #[test]
    fn entries_decode_or_ask_for_more_bytes() {
        let e = v2_entry(b"dir/file");
        let mut path = b"before|".to_vec();
        let (entry, size) = decode(&e, 2, b"", &mut path).unwrap().unwrap();
        assert_eq!(path, b"before|dir/file");
        assert_eq!(entry.mode, 0o100644);
        assert_eq!(size, e.len());
        assert_eq!(size_from_flags(&e), Some(size));
        for cut in [0, 10, FIXED, e.len() - 1] {
            let mut path = Vec::new();
            assert!(
                decode(&e[..cut], 2, b"", &mut path).unwrap().is_none(),
                "{cut}"
            );
            assert!(path.is_empty(), "{cut}");
        }
        // A path too long for the flags: found by its NUL.
        let long = vec![b'x'; 5000];
        let e = v2_entry(&long);
        assert_eq!(size_from_flags(&e), None);
        let mut path = Vec::new();
        decode(&e, 2, b"", &mut path).unwrap().unwrap();
        assert_eq!(path, long);
    }

    #[test]
    fn version_4_paths_edit_the_previous_one() {
        let mut e = vec![0u8; FIXED];
        e.push(4); // drop "file"
        e.extend_from_slice(b"other\0");
        let mut path = Vec::new();
        let (_, size) = decode(&e, 4, b"dir/file", &mut path).unwrap().unwrap();
        assert_eq!(path, b"dir/other");
        assert_eq!(size, e.len());
        // Dropping more than the previous path holds is damage.
        assert!(decode(&e, 4, b"abc", &mut Vec::new()).is_err());
    }
}
