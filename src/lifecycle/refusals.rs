//! The refusals of removing and merging a session, as typed values; `src/cli/words/lifecycle.rs`
//! words them (message, details, hint).
//!
//! Invariant: each Display is the one-line message the user reads, naming no command; everything
//! the words need (paths, git's reason, what is left where) is carried in the variant.

use std::fmt;
use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LifecycleError {
    /// [`super::remove`]: the record points at a directory outside the worktrees directory.
    OutsideWorktrees {
        label: String,
        path: PathBuf,
        worktrees_dir: PathBuf,
    },
    /// [`super::remove`]: `git worktree remove` refused; `reason` is git's, `submodules` whether
    /// it refused because of submodules (which only `--force` passes).
    RemoveRefused {
        label: String,
        reason: String,
        submodules: bool,
    },
    /// [`super::remove`] or [`super::finish_removal`]: the removal began but could not finish
    /// (`reason`); what is left of the directory is `left` (first few) of `left_count`, and the
    /// processes working inside are `inside` (pid and command). The removal's record stays, so
    /// the session is listed as damaged and the next `cleanup` finishes it.
    RemovalUnfinished {
        label: String,
        path: PathBuf,
        reason: String,
        left: Vec<String>,
        left_count: usize,
        inside: Vec<(u32, String)>,
    },
    /// [`super::finish_removal`]: the session's directory is no worktree git knows and no
    /// removal of ours left it so: it may hold work, so only `--force` (which archives it first)
    /// removes it.
    Unregistered {
        label: String,
        path: PathBuf,
        repairable: bool,
        left_count: usize,
    },
    /// [`super::integrate::compute`]: the session conflicts with its base in `paths`; `at` is
    /// ` (at commit <short> "<subject>")` when one commit of a replay is where it stopped.
    Conflict {
        label: String,
        base: String,
        at: String,
        paths: Vec<String>,
    },
    /// [`super::integrate::apply`] stopped (`error`) and undoing it left `left` behind.
    MergeNotRolledBack {
        label: String,
        error: String,
        left: Vec<String>,
    },
}

impl fmt::Display for LifecycleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LifecycleError::OutsideWorktrees {
                label,
                path,
                worktrees_dir,
            } => write!(
                f,
                "the record of \"{label}\" points at {}, outside {}",
                path.display(),
                worktrees_dir.display()
            ),
            LifecycleError::RemoveRefused { label, reason, .. } => write!(
                f,
                "git refused to remove the worktree of \"{label}\": {reason}"
            ),
            LifecycleError::RemovalUnfinished {
                label,
                path,
                reason,
                left_count,
                ..
            } => write!(
                f,
                "the removal of \"{label}\" could not finish: {reason}; {} left in {}",
                entries(*left_count),
                path.display()
            ),
            LifecycleError::Unregistered {
                label,
                path,
                left_count,
                ..
            } => write!(
                f,
                "git knows no worktree at {}, the directory of \"{label}\" ({} there); \
                 nothing was removed",
                path.display(),
                entries(*left_count)
            ),
            LifecycleError::Conflict {
                label,
                base,
                at,
                paths,
            } => write!(
                f,
                "session \"{label}\" conflicts with {base} in {}{at}; nothing was changed",
                super::count(paths.len(), "file")
            ),
            LifecycleError::MergeNotRolledBack { label, error, .. } => write!(
                f,
                "the merge of \"{label}\" stopped ({error}) and could not be rolled back \
                 completely"
            ),
        }
    }
}

impl std::error::Error for LifecycleError {}

fn entries(n: usize) -> String {
    if n == 1 {
        "1 entry".to_string()
    } else {
        format!("{n} entries")
    }
}
