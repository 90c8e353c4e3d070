//! Reading state files safely: the one way the store, and git's own admin files and reflogs, are
//! opened and read ([`open_state_file`]).
//!
//! Invariant: a state file is read without following a symlink, without blocking on a FIFO, and
//! only when it is a regular file of at most the size asked for; anything else is `Bad`, for
//! the caller to set aside with its reason. Buffers are sized from the open file, never from a
//! count inside it.

use anyhow::{Context, Result};
use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Read};
use std::path::Path;

/// The largest state file read; anything larger is not ours (a record with 10,000 claims is
/// under 1 MiB).
pub const MAX_STATE_FILE: u64 = 8 << 20;

/// What one state file holds, as [`read_state_file`] found it.
#[derive(Debug)]
pub enum StateFile {
    Absent,
    Text(String, fs::Metadata),
    /// Not a small regular UTF-8 file: why, for the warning that sets it aside.
    Bad(String),
}

/// The bytes of one state file, as [`read_state_bytes`] found them.
#[derive(Debug)]
pub enum StateBytes {
    Absent,
    Bytes(Vec<u8>, fs::Metadata),
    /// Not a regular file of at most the given size: why.
    Bad(String),
}

/// A state file opened for reading, as [`open_state_file`] found it.
#[derive(Debug)]
pub enum StateOpen {
    Absent,
    /// A regular file of at most the given size, with its metadata (from the open file).
    File(File, fs::Metadata),
    /// Not a regular file of at most the given size: why.
    Bad(String),
}

/// The one way state files are opened. Never follows a symlink, never blocks (a FIFO), never
/// opens a directory, a device or a file larger than `max` bytes: each of those is `Bad`, to be
/// set aside by the caller. Only a failure to open a good file (permission, I/O) is an error.
pub fn open_state_file(path: &Path, max: u64) -> Result<StateOpen> {
    open_regular(path, max, nix::libc::O_NOFOLLOW)
}

/// A small text file someone else wrote (git's admin files, a worktree's `.git` file,
/// `.gitmodules`, a configuration file), read with the guarantees of [`open_state_file`] except
/// that a symbolic link is followed, as git follows it: a FIFO, a directory, a device, a file
/// larger than `max` bytes or one that is not UTF-8 is an error (`InvalidData`, saying which),
/// never a hang.
pub fn read_text(path: &Path, max: u64) -> std::io::Result<String> {
    let bad = |why: String| std::io::Error::new(ErrorKind::InvalidData, why);
    let (file, meta) = match open_regular(path, max, 0).map_err(|e| bad(format!("{e:#}")))? {
        StateOpen::Absent => return Err(ErrorKind::NotFound.into()),
        StateOpen::Bad(why) => return Err(bad(why)),
        StateOpen::File(file, meta) => (file, meta),
    };
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(meta.len() as usize + 1)
        .map_err(|e| bad(e.to_string()))?;
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(bad("it grew past the size of any such file".into()));
    }
    String::from_utf8(bytes).map_err(|_| bad("it is not UTF-8 text".into()))
}

/// Opens `path` for reading without blocking, with `flags` added (`O_NOFOLLOW` for the store's
/// own files), and keeps it only when it is a regular file of at most `max` bytes.
fn open_regular(path: &Path, max: u64, flags: i32) -> Result<StateOpen> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(flags | nix::libc::O_NONBLOCK)
        .open(path);
    let file = match file {
        Ok(f) => f,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(StateOpen::Absent),
        Err(e) if e.raw_os_error() == Some(nix::libc::ELOOP) => {
            return Ok(StateOpen::Bad("it is a symbolic link".into()))
        }
        Err(e) if e.raw_os_error() == Some(nix::libc::ENXIO) => {
            return Ok(StateOpen::Bad("it is a socket or device".into()))
        }
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let meta = file
        .metadata()
        .with_context(|| format!("reading {}", path.display()))?;
    let kind = meta.file_type();
    if !kind.is_file() {
        let what = if kind.is_dir() {
            "a directory"
        } else {
            "not a regular file (a FIFO, socket or device)"
        };
        return Ok(StateOpen::Bad(format!("it is {what}")));
    }
    if meta.len() > max {
        return Ok(StateOpen::Bad(format!(
            "it is {} bytes, larger than any such file ({max})",
            meta.len()
        )));
    }
    Ok(StateOpen::File(file, meta))
}

/// The bytes of a state file opened by [`open_state_file`] (so with the same guarantees).
pub fn read_state_bytes(path: &Path, max: u64) -> Result<StateBytes> {
    let (mut file, meta) = match open_state_file(path, max)? {
        StateOpen::Absent => return Ok(StateBytes::Absent),
        StateOpen::Bad(why) => return Ok(StateBytes::Bad(why)),
        StateOpen::File(file, meta) => (file, meta),
    };
    // Sized from the open file (bounded by `max` above): one read, and no buffer grown by
    // doubling, whose fresh pages cost more than the copy on a large file.
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(meta.len() as usize + 1)
        .with_context(|| format!("reading {}", path.display()))?;
    Read::by_ref(&mut file)
        .take(max + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("reading {}", path.display()))?;
    if bytes.len() as u64 > max {
        return Ok(StateBytes::Bad(
            "it grew past the size of any such file".into(),
        ));
    }
    Ok(StateBytes::Bytes(bytes, meta))
}

/// [`read_state_bytes`] for a TOML or Markdown state file: at most [`MAX_STATE_FILE`] bytes of
/// UTF-8.
pub fn read_state_file(path: &Path) -> Result<StateFile> {
    Ok(match read_state_bytes(path, MAX_STATE_FILE)? {
        StateBytes::Absent => StateFile::Absent,
        StateBytes::Bad(why) => StateFile::Bad(why),
        StateBytes::Bytes(bytes, meta) => match String::from_utf8(bytes) {
            Ok(text) => StateFile::Text(text, meta),
            Err(_) => StateFile::Bad("it is not UTF-8 text".into()),
        },
    })
}
