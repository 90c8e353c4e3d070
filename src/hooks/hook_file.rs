//! One hook file on disk: read as text without blocking, written atomically with its mode,
//! and the name a hook moved aside for ours goes by. Install and uninstall share these, so a
//! hook file is read and written one way.

use anyhow::{Context, Result};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Where a hook that was there before ours is kept, run first by ours.
pub const ASIDE: &str = ".before-git-session";

pub(super) fn aside_path(target: &Path) -> PathBuf {
    let mut s = target.as_os_str().to_owned();
    s.push(ASIDE);
    PathBuf::from(s)
}

/// A hook or configuration file as text, without blocking on a FIFO or reading a directory, a
/// device or a large binary.
pub(super) fn read_hook(path: &Path) -> std::io::Result<String> {
    crate::store::read_text(path, 1 << 20)
}

pub(super) fn mode_of(path: &Path) -> u32 {
    std::fs::metadata(path)
        .map(|m| m.permissions().mode() & 0o7777)
        .unwrap_or(0o755)
}

/// Writes a file atomically (a temporary file renamed over it) with `mode`.
pub(super) fn write_file(target: &Path, text: &str, mode: u32) -> Result<()> {
    let dir = target.parent().context("the path has no directory")?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".git-session-hook")
        .tempfile_in(dir)
        .with_context(|| format!("writing into {}", dir.display()))?;
    use std::io::Write;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(mode))?;
    tmp.persist(target)
        .with_context(|| format!("installing {}", target.display()))?;
    Ok(())
}
