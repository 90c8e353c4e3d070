//! What domain code has to tell the user, as values: one [`Announcement`] variant per message.
//!
//! Domain modules (the guard, the store, sessions, rollback, setup ...) never print. They say
//! what happened with [`emit`]; the words live here, in [`Announcement::line`], and the command
//! layer decides where the lines go ([`set_sink`], installed by [`crate::cli::main`]).
//!
//! Why a process-wide sink rather than a parameter: most of these messages come from deep in
//! the store and the session loader (a state file set aside, a stale lock moved), reached from
//! every command, and several must be printed at once because the process may die next (the
//! guard's fail-open warning, a warning before a long run). The sink prints each line as it
//! comes, in order with everything else on stderr. Tests pin variants with [`capture`].
//!
//! Invariants: each variant renders to exactly one line (given one-line field values), starting
//! with its [`Kind`]'s prefix; the texts are a user-visible interface pinned by snapshots.

use crate::base::clock::{self, Time};
use crate::ownership::show_path;
use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::OnceLock;

/// How a line is shown: a plain note, or behind git's `warning:` prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Note,
    Warning,
}

/// Something domain code tells the user. Field values are data; [`Announcement::line`] holds
/// the words.
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
    PostCommitUnguarded { commit: String, why: String },
    /// Post-commit: one path of that commit and its owner.
    PostCommitPath {
        path: String,
        owner: String,
        how: &'static str,
        since: Time,
    },
    /// Post-commit: what to do about it (last line).
    PostCommitAdvice,
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
    GitSessionIgnored { why: String },
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
    /// The approval prompt's heading.
    ApprovalAsked,
    /// One command the approval prompt lists.
    ApprovalCommand { command: String },
    /// The approval was given but could not be saved.
    ApprovalNotSaved { error: String },
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
            | Running { .. }
            | ApprovalAsked
            | ApprovalCommand { .. } => Kind::Note,
            _ => Kind::Warning,
        }
    }

    /// The message, without the `warning:` prefix a [`Kind::Warning`] is shown behind.
    pub fn text(&self) -> String {
        use Announcement::*;
        match self {
            PanicFailOpen { name, what } => {
                format!(
                    "git-session {name}: internal error ({what}); failing open (nothing refused)"
                )
            }
            PanicNotAudited { name } => {
                format!("git-session {name}: the internal error above is not in the audit log")
            }
            GuardFailOpen { hook, error } => format!(
                "git-session guard {hook}: internal error, letting the commit through: {error}"
            ),
            LapsedOwner {
                path,
                owner,
                last_activity,
                now,
            } => format!(
                "{} was claimed by session \"{owner}\", which is no longer live (last activity {}, \
                 {}); letting it through",
                show_path(path),
                clock::rfc3339(*last_activity),
                crate::cli::output::ago(*last_activity, *now)
            ),
            UnknownActingSession { label } => format!(
                "GIT_SESSION names \"{}\", which is no session of this repository; its commit \
                 claims are not recorded",
                label.escape_debug()
            ),
            ClaimLostRace { path, owner } => format!(
                "{} was claimed by session \"{owner}\" a moment ago; not recorded as yours",
                show_path(path)
            ),
            PostCommitUnguarded { commit, why } => format!(
                "WARNING: git-session: commit {commit} was made without the ownership guard \
                 ({why}) and changes paths other live sessions own:"
            ),
            PostCommitPath {
                path,
                owner,
                how,
                since,
            } => format!(
                "WARNING:   {}: owned by session \"{owner}\" ({how} since {})",
                show_path(path),
                clock::rfc3339(*since)
            ),
            PostCommitAdvice => {
                "WARNING: tell the owners, or undo it with `git reset --soft HEAD^` and coordinate"
                    .to_string()
            }
            UnguardedCommit {
                commit,
                summary,
                label: Some(label),
                ..
            } => format!(
                "commit {commit} ({summary}) of session \"{label}\" was made without the ownership \
                 hooks and changes paths other live sessions own:"
            ),
            UnguardedCommit {
                commit,
                summary,
                label: None,
                worktree,
            } => format!(
                "commit {commit} ({summary}), made in {worktree} without the ownership hooks, \
                 changes paths live sessions own:"
            ),
            UnguardedPath {
                path,
                owner,
                how,
                since,
            } => format!(
                "  {}: owned by session \"{owner}\" ({how} since {})",
                show_path(path),
                clock::rfc3339(*since)
            ),
            UnguardedCheckFailed { label, error } => format!(
                "could not check the commits made without the hooks in session \"{label}\": {error}"
            ),
            SessionSkipped { name, error } => format!("session \"{name}\" skipped: {error}"),
            GitSessionIgnored { why } => format!("GIT_SESSION is ignored: {why}"),
            ClaimsIndexNotUpdated { error } => format!(
                "the claims index was not updated ({error}); it is rebuilt from the store when read"
            ),
            FileSkipped { path, why } => format!("{} skipped: {why}", path.display()),
            NotALockFile { lock, moved_to } => format!(
                "{} was not a lock file; moved to {}",
                lock.display(),
                moved_to.display()
            ),
            SetAside { path, why, aside } => format!(
                "{} does not parse ({why}); set aside as {}",
                path.display(),
                aside.display()
            ),
            CannotSetAside { path, why, error } => format!(
                "{} does not parse ({why}) and cannot be set aside ({error}); skipped",
                path.display()
            ),
            RolledForward { label } => format!(
                "completed the interrupted creation of session \"{label}\": git had made its worktree"
            ),
            RolledBack { label } => {
                format!("rolled back the interrupted creation of session \"{label}\"")
            }
            Readopted { label, path } => format!(
                "registered session \"{label}\" again from its worktree {}: its record was lost",
                path.display()
            ),
            OrphanClaimsDropped { label } => format!(
                "dropped the claims an earlier session \"{label}\" left without its record; \
                 the new session starts with none"
            ),
            RolledBackInPart { label, left } => {
                format!("rolled back the interrupted creation of \"{label}\" only in part: {left}")
            }
            Running { command } => format!("running: {command}"),
            ApprovalAsked => {
                "This repository's .git-session.toml asks to run, in each new worktree:".to_string()
            }
            ApprovalCommand { command } => format!("  {command}"),
            ApprovalNotSaved { error } => error.clone(),
        }
    }

    /// The whole line as shown without colour: `warning: <text>` or the note's text.
    pub fn line(&self) -> String {
        match self.kind() {
            Kind::Note => self.text(),
            Kind::Warning => format!("warning: {}", self.text()),
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
/// sink, else (a caller that installed none, such as a unit test) straight to stderr.
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
        None => crate::cli::output::announce(&what),
    }
}

/// Runs `f`, collecting what it announces on this thread instead of printing it.
pub fn capture<R>(f: impl FnOnce() -> R) -> (R, Vec<Announcement>) {
    let outer = CAPTURED.with(|c| c.borrow_mut().replace(Vec::new()));
    let result = f();
    let got = CAPTURED.with(|c| std::mem::replace(&mut *c.borrow_mut(), outer));
    (result, got.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn time() -> Time {
        chrono::DateTime::parse_from_rfc3339("2026-01-02T03:04:05Z")
            .expect("a valid time")
            .with_timezone(&chrono::Utc)
    }

    /// One of each variant, with one-line values.
    fn every_variant() -> Vec<Announcement> {
        use Announcement::*;
        let t = time();
        let s = |x: &str| x.to_string();
        vec![
            PanicFailOpen {
                name: s("guard"),
                what: s("boom"),
            },
            PanicNotAudited { name: s("guard") },
            GuardFailOpen {
                hook: s("pre-commit"),
                error: s("broken"),
            },
            LapsedOwner {
                path: s("a.txt"),
                owner: s("old"),
                last_activity: t,
                now: t,
            },
            UnknownActingSession { label: s("ghost") },
            ClaimLostRace {
                path: s("a.txt"),
                owner: s("fast"),
            },
            PostCommitUnguarded {
                commit: s("0123456789ab"),
                why: s("its pre-commit hook was skipped: --no-verify"),
            },
            PostCommitPath {
                path: s("a.txt"),
                owner: s("other"),
                how: "claimed explicitly",
                since: t,
            },
            PostCommitAdvice,
            UnguardedCommit {
                commit: s("0123456789ab"),
                summary: s("a change"),
                label: Some(s("me")),
                worktree: s("/repo.sessions/me"),
            },
            UnguardedPath {
                path: s("a.txt"),
                owner: s("other"),
                how: "claimed by commit",
                since: t,
            },
            UnguardedCheckFailed {
                label: s("me"),
                error: s("broken"),
            },
            SessionSkipped {
                name: s("bad"),
                error: s("does not parse"),
            },
            GitSessionIgnored {
                why: s("not a label"),
            },
            ClaimsIndexNotUpdated { error: s("full") },
            FileSkipped {
                path: PathBuf::from("/s/x"),
                why: s("a FIFO"),
            },
            NotALockFile {
                lock: PathBuf::from("/s/x.lock"),
                moved_to: PathBuf::from("/s/x.lock.stale-1"),
            },
            SetAside {
                path: PathBuf::from("/s/x.toml"),
                why: s("bad"),
                aside: PathBuf::from("/s/x.toml.corrupt"),
            },
            CannotSetAside {
                path: PathBuf::from("/s/x.toml"),
                why: s("bad"),
                error: s("denied"),
            },
            RolledBack { label: s("a") },
            RolledBackInPart {
                label: s("a"),
                left: s("the branch"),
            },
            Running { command: s("make") },
            ApprovalAsked,
            ApprovalCommand { command: s("make") },
            ApprovalNotSaved {
                error: s("saving the approval: denied"),
            },
            RolledForward { label: s("a") },
            OrphanClaimsDropped { label: s("a") },
            Readopted {
                label: s("a"),
                path: PathBuf::from("/w/a"),
            },
        ]
    }

    #[test]
    fn every_variant_renders_one_line_behind_its_prefix() {
        let all = every_variant();
        for a in &all {
            let line = a.line();
            assert!(!line.contains('\n'), "{a:?} renders more than one line");
            assert!(!a.text().trim().is_empty(), "{a:?} renders nothing");
            match a.kind() {
                Kind::Warning => assert_eq!(line, format!("warning: {}", a.text()), "{a:?}"),
                Kind::Note => assert_eq!(line, a.text(), "{a:?}"),
            }
        }
        // The post-commit lines keep git's loud `WARNING:` as their own prefix.
        for a in all.iter().filter(|a| a.line().starts_with("WARNING:")) {
            assert_eq!(a.kind(), Kind::Note, "{a:?}");
        }
    }

    /// Each variant's place in [`every_variant`]. The match has no wildcard, so a new variant
    /// does not compile until it is added here, and then the test below wants it listed.
    fn position(a: &Announcement) -> usize {
        use Announcement::*;
        match a {
            PanicFailOpen { .. } => 0,
            PanicNotAudited { .. } => 1,
            GuardFailOpen { .. } => 2,
            LapsedOwner { .. } => 3,
            UnknownActingSession { .. } => 4,
            ClaimLostRace { .. } => 5,
            PostCommitUnguarded { .. } => 6,
            PostCommitPath { .. } => 7,
            PostCommitAdvice => 8,
            UnguardedCommit { .. } => 9,
            UnguardedPath { .. } => 10,
            UnguardedCheckFailed { .. } => 11,
            SessionSkipped { .. } => 12,
            GitSessionIgnored { .. } => 13,
            ClaimsIndexNotUpdated { .. } => 14,
            FileSkipped { .. } => 15,
            NotALockFile { .. } => 16,
            SetAside { .. } => 17,
            CannotSetAside { .. } => 18,
            RolledBack { .. } => 19,
            RolledBackInPart { .. } => 20,
            Running { .. } => 21,
            ApprovalAsked => 22,
            ApprovalCommand { .. } => 23,
            ApprovalNotSaved { .. } => 24,
            RolledForward { .. } => 25,
            OrphanClaimsDropped { .. } => 26,
            Readopted { .. } => 27,
        }
    }

    #[test]
    fn every_variant_is_listed_once() {
        let positions: Vec<usize> = every_variant().iter().map(position).collect();
        assert_eq!(positions, (0..=27).collect::<Vec<_>>());
    }

    #[test]
    fn texts_are_today_s_words() {
        let t = time();
        assert_eq!(
            Announcement::LapsedOwner {
                path: "a b.txt".into(),
                owner: "old".into(),
                last_activity: t,
                now: t,
            }
            .line(),
            "warning: \"a b.txt\" was claimed by session \"old\", which is no longer live \
             (last activity 2026-01-02T03:04:05Z, now); letting it through"
        );
        assert_eq!(
            Announcement::UnknownActingSession {
                label: "a\"b".into()
            }
            .text(),
            "GIT_SESSION names \"a\\\"b\", which is no session of this repository; its commit \
             claims are not recorded"
        );
    }

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
