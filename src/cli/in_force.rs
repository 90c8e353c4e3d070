//! The warning `create`, `list` and `info` share: sessions where a commit would not run the
//! pre-commit guard. It lives beside the commands, not in one of them, so none calls another.
//!
//! Invariant: one line per session that lacks the guard, or one line for all when none has it,
//! then one hint; nothing when the guard is in force everywhere.

use crate::cli::output;
use crate::hooks::force::Off;
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
    let off: Vec<(&str, Off, PathBuf)> = hooks::force::check_many(common_dir, &seen)
        .into_iter()
        .zip(labels)
        .filter_map(|(e, label)| match e.pre_commit {
            Check::Off(off) => Some((label, off, e.worktree)),
            Check::InForce(_) => None,
        })
        .collect();
    if off.is_empty() {
        return;
    }
    // A reason install cannot repair (a switch in this environment, a hook of the user's) gets
    // its own fix, not the install hint.
    let own_fix = off
        .iter()
        .find(|(_, o, _)| !o.install_repairs())
        .map(|(_, o, wt)| crate::cli::words::hooks_off::fix(o, wt, false));
    if off.len() == checked && checked > 1 {
        output::warn(format!(
            "the ownership guard is not in force in any of the {checked} session worktrees \
             (in \"{}\": {})",
            off[0].0, off[0].1
        ));
        output::hint(own_fix.unwrap_or_else(|| {
            "run `git session hooks install` (and `git session hooks status` in a session \
             worktree to check)"
                .to_string()
        }));
        return;
    }
    for (label, why, _) in &off {
        output::warn(format!(
            "the ownership guard is not in force in session \"{label}\": {why}"
        ));
    }
    output::hint(own_fix.unwrap_or_else(|| {
        "run `git session hooks install`, then `git session hooks status` in the session's \
         worktree"
            .to_string()
    }));
}
