//! What a hook decided, as data; the command line words it.

use crate::base::clock;
use crate::ownership::Owner;

/// What a hook decided.
pub enum Verdict {
    Pass,
    Refuse(Refusal),
}

/// Why a commit or a push is refused, as data; the command line words it.
#[derive(Debug)]
pub enum Refusal {
    /// Staged paths other live sessions of this clone own; `me` is the session committing.
    Owned {
        conflicts: Vec<(String, Owner)>,
        me: Option<String>,
        now: clock::Time,
    },
    /// The session named by `GIT_SESSION` commits in a worktree that is not its own: an agent
    /// stays in its worktree, and the main worktree belongs to the sessions attached to it.
    ForeignWorktree {
        label: String,
        /// The session's own worktree, and the one the commit is made in.
        own: std::path::PathBuf,
        here: std::path::PathBuf,
        /// Whether `here` is the main worktree.
        main: bool,
    },
    /// A merge of session `label` moved the base this worktree has checked out and has not
    /// brought the worktree up to it yet (running, or killed): a commit now would revert it.
    MergeUnfinished {
        label: String,
        worktree: std::path::PathBuf,
    },
    /// Staged paths that claims of other clones hold (as last synced).
    HeldElsewhere {
        held: Vec<(String, crate::shared_claims::SharedClaim)>,
        remote: String,
    },
    /// Pushed commits change paths that sessions of other clones hold.
    PushHeld {
        conflicts: Vec<crate::shared_claims::PushConflict>,
        remote: String,
    },
}
