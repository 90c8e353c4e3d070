//! Where the guard's git hooks live, whether they are in force, and how they are wired in beside
//! the hook managers people already use.
//!
//! The guard is worth nothing where git does not run it, and a hook file can be rewritten at any
//! time by a tool we do not own (husky, lefthook, pre-commit, simple-git-hooks). So this module
//! answers one question from ground truth, for any worktree: would a commit made here run
//! `git-session guard pre-commit` (and `post-commit`)? [`force::check`] follows git's own rules:
//! config-based hooks (`hook.<name>.command`, git 2.54 and later), then the hooks directory
//! (`core.hooksPath` resolved against that worktree's root, as git resolves it, else the common
//! directory's `hooks/`), then, where the hook file is a manager's dispatcher, the manager's own
//! configuration in that worktree. [`wire`] installs and removes, in the place each route needs.
//!
//! Invariants a reader must not break:
//! - One test for "runs the guard": an uncommented line naming `git-session guard <event>`
//!   ([`runs_guard`]); every route is judged by it, so what install writes and what the analysis
//!   accepts cannot drift apart.
//! - Install never breaks a hook it found: a foreign shell hook gets our block inside it (its
//!   file name, `$0`, unchanged: husky's stub dispatches on it); only a hook that is not a shell
//!   script is moved aside and chained. Uninstall removes exactly what install added.
//! - Every block we add sits between [`BEGIN`] and [`END`], so a second install changes nothing
//!   and uninstall finds it again.
//! - Reads here never run a program, except `git --version`, and only once config-based hooks
//!   are configured (to know whether the git on `PATH` runs them).

mod change;
pub mod force;
mod hook_file;
pub mod husky;
pub mod managers;
pub mod place;
pub mod skips;
pub mod text;
pub mod unwire;
pub mod wire;

pub use force::{check, Check, Enforcement, Route};
pub use text::runs_guard;

/// The two hook events the guard runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    PreCommit,
    PostCommit,
    /// Installed only where claims are shared across machines (`[claims] remote`).
    PrePush,
}

impl Event {
    /// The commit hooks, installed everywhere.
    pub const ALL: [Event; 2] = [Event::PreCommit, Event::PostCommit];
    /// Every hook this tool may install (what uninstall looks for).
    pub const EVERY: [Event; 3] = [Event::PreCommit, Event::PostCommit, Event::PrePush];

    /// git's name for the event, which is also the hook file's name.
    pub fn name(self) -> &'static str {
        match self {
            Event::PreCommit => "pre-commit",
            Event::PostCommit => "post-commit",
            Event::PrePush => "pre-push",
        }
    }

    /// The hook file this tool ships for the event (`githooks/`, embedded).
    pub fn shipped(self) -> &'static str {
        match self {
            Event::PreCommit => include_str!("../../githooks/pre-commit"),
            Event::PostCommit => include_str!("../../githooks/post-commit"),
            Event::PrePush => include_str!("../../githooks/pre-push"),
        }
    }

    /// The one shell line that runs the guard for this event. Where `git-session` is not on
    /// `PATH` it warns and allows (DESIGN: a missing binary never bricks commits); a pre-commit
    /// refusal ends the surrounding script with the guard's exit code, so the line can stand
    /// first in someone else's hook.
    pub fn guard_line(self) -> &'static str {
        match self {
            Event::PreCommit => {
                "if command -v git-session >/dev/null 2>&1; then git-session guard pre-commit || exit $?; else echo \"warning - git-session is not on PATH, so the path-ownership guard did not run\" >&2; fi"
            }
            Event::PostCommit => {
                "if command -v git-session >/dev/null 2>&1; then git-session guard post-commit; else echo \"warning - git-session is not on PATH, so the path-ownership check did not run\" >&2; fi"
            }
            // The refs git pushes come on stdin: kept in a file, handed to the guard, and put
            // back as this script's own stdin for whatever runs after the line.
            Event::PrePush => {
                "gs_in=$(mktemp) && cat >\"$gs_in\" && exec <\"$gs_in\" && if command -v git-session >/dev/null 2>&1; then git-session guard pre-push \"$@\" <\"$gs_in\" || { rm -f \"$gs_in\"; exit 1; }; else echo \"warning - git-session is not on PATH, so the shared claims were not checked\" >&2; fi; rm -f \"$gs_in\""
            }
        }
    }
}
