//! The mark of the last HEAD the hooks (or `create`) saw in a worktree: `git-session-seen` in the
//! worktree's git directory. `create` writes it at the base commit, so commits made without the
//! hooks can be found after the fact (the guard's sweep, [`crate::guard::unguarded`]), and an
//! orphaned creation whose directory holds it is known to be ours.
//!
//! Invariant: the mark is best effort and never fsynced: losing it only makes a later sweep start
//! from an older mark, which finds nothing new that the hooks saw.

use crate::git::Oid;
use std::path::Path;

/// The file in a worktree's git directory that holds the last HEAD the hooks saw.
pub const SEEN: &str = "git-session-seen";

/// The last HEAD the hooks saw in the worktree whose git directory is `gitdir`.
pub fn read_seen(gitdir: &Path) -> Option<Oid> {
    let text = match crate::store::read_state_bytes(&gitdir.join(SEEN), 128).ok()? {
        crate::store::StateBytes::Bytes(b, _) => b,
        _ => return None,
    };
    Oid::from_str(String::from_utf8_lossy(&text).trim()).ok()
}

/// Records `head` as seen (best effort, no fsync: losing it only makes a later sweep start from
/// an older mark, which finds nothing new that the hooks saw).
pub fn mark_seen(gitdir: &Path, head: Oid) {
    let tmp = gitdir.join(format!("{SEEN}.tmp-{}", std::process::id()));
    if std::fs::write(&tmp, format!("{head}\n")).is_ok() {
        let _ = std::fs::rename(&tmp, gitdir.join(SEEN));
    }
}
