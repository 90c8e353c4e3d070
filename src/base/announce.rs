//! What domain code has to tell the user, as values: one [`Announcement`] variant per message.
//!
//! Domain modules (the guard, the store, sessions, rollback, setup ...) never print. They say
//! what happened with [`emit`]; the command line holds the words
//! (`crate::cli::words::announcements`) and decides where the lines go ([`set_sink`], installed by
//! `crate::cli::main`).
//!
//! Why a process-wide sink rather than a parameter: most of these messages come from deep in
//! the store and the session loader (a state file set aside, a stale lock moved), reached from
//! every command, and several must be printed at once because the process may die next (the
//! guard's fail-open warning, a warning before a long run). The sink prints each line as it
//! comes, in order with everything else on stderr. Tests pin variants with [`capture`].
//!
//! Invariants: each variant renders to exactly one line (given one-line field values), starting
//! with its [`Kind`]'s prefix; the texts are a user-visible interface pinned by snapshots.

use crate::base::clock::Time;
use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::OnceLock;

/// How a line is shown: a plain note, or behind git's `warning:` prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Note,
    Warning,
}

/// Something domain code tells the user. Field values are data; the command line holds
/// the words (`crate::cli::words::announcements`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Announcement {
    /// A panic caught at the guard's or the hook's entry point ([`crate::cli::failsafe`]).
    PanicFailOpen { name: String, what: String },
    /// That panic could not be written to the audit log either.
    PanicNotAudited { name: String },
    /// The guard's internal error: the commit goes through.
    GuardFailOpen { hook: String, error: String },
    /// A staged path whose owner is no longer live: the commit goes through.
    LapsedOwner {
        path: String,
        owner: String,
        last_activity: Time,
        now: Time,
    },
    /// `GIT_SESSION` names no session: its commit claims are not recorded.
    UnknownActingSession { label: String },
    /// Another session claimed a path between the check and the recording.
    ClaimLostRace { path: String, owner: String },
    /// Post-commit: a commit the pre-commit never saw changes paths others own (first line).
    PostCommitUnguarded { commit: String, why: Unseen },
    /// Post-commit: one path of that commit and its owner.
    PostCommitPath {
        path: String,
        owner: String,
        how: &'static str,
        since: Time,
    },
    /// Post-commit: what to do about it (last line).
    PostCommitAdvice,
    /// Pre-commit, with `[guard] escape = "warn"`: a session commits in a worktree not its own.
    ForeignWorktreeCommit { label: String, here: String },
    /// A commit made without both hooks, found after the fact (first line).
    UnguardedCommit {
        commit: String,
        summary: String,
        /// The session that made it; `None`: made in `worktree` by nobody we can name.
        label: Option<String>,
        worktree: String,
    },
    /// One path of that commit and its owner.
    UnguardedPath {
        path: String,
        owner: String,
        how: &'static str,
        since: Time,
    },
    /// The after-the-fact check itself failed.
    UnguardedCheckFailed { label: String, error: String },
    /// A session record that cannot be read is left out of a listing.
    SessionSkipped { name: String, error: String },
    /// `GIT_SESSION` is not a valid label.
    GitSessionIgnored { value: String },
    /// The derived claims index could not be written (the claims file was).
    ClaimsIndexNotUpdated { error: String },
    /// A state file the store would not read (a FIFO, a symlink, too large).
    FileSkipped { path: PathBuf, why: String },
    /// Something that was no lock file sat where a lock belongs.
    NotALockFile { lock: PathBuf, moved_to: PathBuf },
    /// A state file that does not parse was moved aside.
    SetAside {
        path: PathBuf,
        why: String,
        aside: PathBuf,
    },
    /// A state file that does not parse could not be moved aside.
    CannotSetAside {
        path: PathBuf,
        why: String,
        error: String,
    },
    /// An interrupted `create` whose worktree git had made was completed.
    RolledForward { label: String },
    /// An interrupted `create` was undone.
    RolledBack { label: String },
    /// A claims file whose session record was gone was dropped before a new session of that
    /// label began, so the new session does not inherit another's claims.
    OrphanClaimsDropped { label: String },
    /// A session worktree `create` made, whose record was lost or set aside, was registered again
    /// from git's own state.
    Readopted { label: String, path: PathBuf },
    /// An interrupted `create` was undone only in part.
    RolledBackInPart { label: String, left: String },
    /// One of the configured `[create] run` commands is starting.
    Running { command: String },
    /// What `[create] copy` and `[create] link` did in a worktree: files cloned copy-on-write
    /// (sharing their blocks), files copied plainly (and their bytes), directories linked.
    SetUpFiles {
        reflinked: usize,
        copied: usize,
        copied_bytes: u64,
        linked: Vec<String>,
    },
    /// Post-commit: the commit holds a file an agent of session `writer` wrote into this
    /// worktree from outside its own (let through by `[guard] escape = "warn"`).
    CommittedEscape { path: String, writer: String },
    /// The approval prompt's heading.
    ApprovalAsked,
    /// One command the approval prompt lists.
    ApprovalCommand { command: String },
    /// The approval was given but could not be saved.
    ApprovalNotSaved { error: String },
    /// The pre-push gate could not ask the claims remote; the push goes on.
    PushNotChecked { remote: String, error: String },
    /// A claim of this clone was lost on the claims remote (seen as a push went out).
    SharedClaimLost {
        label: String,
        path: String,
        remote: String,
        why: String,
    },
    /// This clone's pending claims could not be published with a push.
    ClaimsNotPublished { error: String },
    /// A merge whose process died before it moved anything: its record was dropped.
    MergeUndone { label: String, base: String },
    /// A merge whose process died after it moved the base was completed: `worktrees` were
    /// brought up to the new tip.
    MergeCompleted {
        label: String,
        base: String,
        tip: String,
        worktrees: Vec<PathBuf>,
    },
    /// A merge whose process died after it moved `branch`, whose worktree cannot be brought
    /// along safely (`why`); the command that finishes it moves it from `from` to `to`.
    MergeLeft {
        label: String,
        branch: String,
        worktree: PathBuf,
        from: String,
        to: String,
        why: String,
    },
    /// git's lock file at `path`, `age` old, which no live git can hold, was removed.
    GitLockRemoved { path: PathBuf, age: String },
    /// git's lock file at `path`, `age` old, was kept: `why` (a live git named, or the facts
    /// cannot tell).
    GitLockKept {
        path: PathBuf,
        age: String,
        why: String,
    },
    /// A merge whose process died, but `branch` has moved to `at` since: left as it is.
    MergeOvertaken {
        label: String,
        branch: String,
        at: String,
    },
    /// The heading of the prompt that asks to approve the repository's `[merge] check`.
    CheckApprovalAsked,
    /// A merge check whose process died left a scratch worktree at `path`; it was removed.
    MergeCheckCleared { label: String, path: PathBuf },
}

/// Why the pre-commit never saw a commit made in a worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unseen {
    /// The guard is not in force there, for this reason; `install_repairs`: `hooks install`
    /// alone puts it back (the reason is a file of ours, not a choice of the user's).
    NotInForce { why: String, install_repairs: bool },
    /// It is in force, so its hook was skipped (`--no-verify`, or a hook before it).
    Skipped,
    /// Made by a git command that runs no pre-commit hook (`cherry-pick`, `revert`, a
    /// rebase's pick), as HEAD's reflog records it.
    ByCommand { command: String },
    /// No worktree, so no pre-commit could run.
    NoPreCommit,
    /// Its pre-commit ran, but these paths were staged after the guard had read the index (a
    /// process staging while the hook ran): git commits what the index holds when the hooks end.
    StagedDuringCheck { paths: Vec<String> },
}

impl Announcement {
    pub fn kind(&self) -> Kind {
        use Announcement::*;
        match self {
            PostCommitUnguarded { .. }
            | PostCommitPath { .. }
            | PostCommitAdvice
            | RolledForward { .. }
            | RolledBack { .. }
            | MergeUndone { .. }
            | MergeCompleted { .. }
            | Running { .. }
            | SetUpFiles { .. }
            | ApprovalAsked
            | CheckApprovalAsked
            | MergeCheckCleared { .. }
            | ApprovalCommand { .. } => Kind::Note,
            _ => Kind::Warning,
        }
    }
}

/// Where announcements go: a function the command layer installs once.
pub type Sink = fn(&Announcement);

static SINK: OnceLock<Sink> = OnceLock::new();

thread_local! {
    /// Announcements captured on this thread by [`capture`], instead of going to the sink.
    static CAPTURED: RefCell<Option<Vec<Announcement>>> = const { RefCell::new(None) };
}

/// Installs the sink every later announcement goes to (the first call wins).
pub fn set_sink(sink: Sink) {
    let _ = SINK.set(sink);
}

/// Tells the user `what`: to this thread's [`capture`] if one is running, else to the installed
/// sink, else (a caller that installed none, such as a unit test) straight to stderr as a value.
pub fn emit(what: Announcement) {
    let what = match CAPTURED.with(|c| match c.borrow_mut().as_mut() {
        Some(list) => {
            list.push(what);
            None
        }
        None => Some(what),
    }) {
        Some(what) => what,
        None => return,
    };
    match SINK.get() {
        Some(sink) => sink(&what),
        // No command line installed its words (a unit test, a library caller): the value itself.
        None => eprintln!("git-session: {what:?}"),
    }
}

/// Runs `f`, collecting what it announces on this thread instead of printing it.
#[cfg(test)]
pub fn capture<R>(f: impl FnOnce() -> R) -> (R, Vec<Announcement>) {
    let outer = CAPTURED.with(|c| c.borrow_mut().replace(Vec::new()));
    let result = f();
    let got = CAPTURED.with(|c| std::mem::replace(&mut *c.borrow_mut(), outer));
    (result, got.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_collects_in_order_and_restores_the_outer_capture() {
        let ((), outer) = capture(|| {
            emit(Announcement::PostCommitAdvice);
            let ((), inner) = capture(|| emit(Announcement::ApprovalAsked));
            assert_eq!(inner, vec![Announcement::ApprovalAsked]);
            emit(Announcement::RolledBack { label: "a".into() });
        });
        assert_eq!(
            outer,
            vec![
                Announcement::PostCommitAdvice,
                Announcement::RolledBack { label: "a".into() }
            ]
        );
    }
}
