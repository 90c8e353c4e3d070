//! What install or uninstall did to the hooks, one value per change, for the command line to
//! put into words. Its own file so that installing (`wire`) and taking out (`unwire`) both
//! report in it without importing each other.

use super::managers::Manager;
use super::Event;
use std::path::PathBuf;

/// One thing install or uninstall did (or found done), for the command to put into words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// A config-based hook set (`hook.<name>`), for `event`.
    ConfigHookSet {
        name: String,
        event: Event,
    },
    ConfigHookRemoved {
        name: String,
    },
    /// Our hook file written where there was none.
    FileWritten {
        path: PathBuf,
    },
    /// Our block put into someone else's shell hook (or into a manager's script).
    BlockAdded {
        path: PathBuf,
    },
    /// Our block brought up to date.
    BlockUpdated {
        path: PathBuf,
    },
    /// Already in place.
    Present {
        path: PathBuf,
    },
    /// Our own hook file, which had lost its executable bit, made executable again.
    MadeExecutable {
        path: PathBuf,
    },
    /// Someone's non-shell hook moved aside and chained.
    Chained {
        path: PathBuf,
        aside: PathBuf,
    },
    /// A manager's configuration now runs the guard.
    ManagerConfig {
        manager: Manager,
        path: PathBuf,
    },
    /// A manager's configuration could not be edited safely: what to add by hand.
    ManagerConfigRefused {
        manager: Manager,
        path: PathBuf,
        why: String,
        add_by_hand: String,
    },
    /// A file we had left that nothing runs any more (an old copy a manager's install set
    /// aside) or that would run the guard twice.
    StaleRemoved {
        path: PathBuf,
    },
    /// A generated hooks directory copied into a session worktree.
    Materialized {
        dir: PathBuf,
    },
    /// `path` is tracked by git: worktrees made from a commit without the change do not run the
    /// guard until it is committed.
    CommitToShare {
        path: PathBuf,
    },
    /// Uninstall: our block taken out of a file that stays.
    BlockRemoved {
        path: PathBuf,
    },
    /// Uninstall: our file removed.
    FileRemoved {
        path: PathBuf,
    },
    /// Uninstall: the hook that was there before put back.
    Restored {
        path: PathBuf,
    },
    /// Uninstall: nothing of ours there.
    Absent {
        path: PathBuf,
    },
}
