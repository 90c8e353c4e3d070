//! The warning `create`, `list` and `info` share: sessions where a commit would not run the
//! pre-commit guard. It lives beside the commands, not in one of them, so none calls another.
//!
//! Invariant: one line per session that lacks the guard, or one line for all when none has it,
//! then one hint; nothing when the guard is in force everywhere.

use crate::cli::output;
use crate::hooks::{self, Check};
use std::path::{Path, PathBuf};

/// Warns about each session (label, worktree) in which a commit would not run the pre-commit
/// guard: one line for each, or one line for all when none of them has it.
pub fn warn_unguarded(common_dir: &Path, sessions: &[(String, PathBuf)]) {
    let mut seen: Vec<&Path> = Vec::new();
    let mut labels: Vec<&str> = Vec::new();
    for (label, path) in sessions {
        if path.is_dir() && !seen.contains(&path.as_path()) {
            seen.push(path);
            labels.push(label);
        }
    }
    let checked = seen.len();
    let off: Vec<(&str, String)> = hooks::force::check_many(common_dir, &seen)
        .into_iter()
        .zip(labels)
        .filter_map(|(e, label)| match e.pre_commit {
            Check::Off(off) => Some((label, off.to_string())),
            Check::InForce(_) => None,
        })
        .collect();
    if off.is_empty() {
        return;
    }
    if off.len() == checked && checked > 1 {
        output::warn(format!(
            "the ownership guard is not in force in any of the {checked} session worktrees \
             (in \"{}\": {})",
            off[0].0, off[0].1
        ));
        output::hint("run `git session hooks install` (and `git session hooks status` in a session worktree to check)");
        return;
    }
    for (label, why) in off {
        output::warn(format!(
            "the ownership guard is not in force in session \"{label}\": {why}"
        ));
    }
    output::hint("run `git session hooks install`, then `git session hooks status` in the session's worktree");
}
