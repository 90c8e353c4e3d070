//! The words of every [`Announcement`] the domain emits: one line each, behind its kind's prefix.
//!
//! Invariants a reader must not break: each variant renders to exactly one line (given one-line
//! field values), starting with its [`Kind`]'s prefix; the texts are a user-visible interface,
//! pinned by the tests below and by the snapshots of the commands that show them.

use crate::base::announce::{Announcement, Kind, Unseen};
use crate::base::clock;
use crate::base::quote::show_path;

/// The message, without the `warning:` prefix a [`Kind::Warning`] is shown behind.
pub fn text(a: &Announcement) -> String {
    use Announcement::*;
    match a {
        PanicFailOpen { name, what } => {
            format!("git-session {name}: internal error ({what}); failing open (nothing refused)")
        }
        PanicNotAudited { name } => {
            format!("git-session {name}: the internal error above is not in the audit log")
        }
        GuardFailOpen { hook, error } => {
            format!("git-session guard {hook}: internal error, letting the commit through: {error}")
        }
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
             ({}) and changes paths other live sessions own:",
            unseen(why)
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
        ForeignWorktreeCommit { label, here } => format!(
            "session \"{label}\" commits in {here}, a worktree not its own; let through, as \
             this repository's `[guard] escape` is \"warn\""
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
        GitSessionIgnored { value } => format!(
            "GIT_SESSION is ignored: invalid label \"{}\"",
            crate::base::quote::shortened(value)
        ),
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
        MergeUndone { label, base } => format!(
            "rolled back the interrupted merge of session \"{label}\": {base} had not moved"
        ),
        MergeCompleted {
            label,
            base,
            tip,
            worktrees,
        } => {
            let updated: Vec<String> = worktrees.iter().map(|w| w.display().to_string()).collect();
            let updated = if updated.is_empty() {
                String::new()
            } else {
                format!("; updated the worktree {}", updated.join(" and "))
            };
            format!(
                "completed the interrupted merge of session \"{label}\": {base} is at {tip}{updated}"
            )
        }
        MergeLeft {
            label,
            branch,
            worktree,
            from,
            to,
            why,
        } => format!(
            "the interrupted merge of session \"{label}\" moved {branch}, but the worktree {} \
             {why}, so it was left as it is; finish it with: git -C {} read-tree -m -u {from} {to}",
            worktree.display(),
            crate::base::quote::shell_quote(&worktree.display().to_string())
        ),
        MergeOvertaken { label, branch, at } if at.bytes().all(|b| b == b'0') => format!(
            "the interrupted merge of session \"{label}\" is left as it is: {branch} was deleted \
             since"
        ),
        MergeOvertaken { label, branch, at } => format!(
            "the interrupted merge of session \"{label}\" is left as it is: {branch} has moved \
             to {at} since"
        ),
        CheckApprovalAsked => "This repository's .git-session.toml asks to run, on every merge \
                               before the base moves:"
            .to_string(),
        MergeCheckCleared { label, path } => format!(
            "removed the scratch worktree {} of an interrupted merge check of session \"{label}\"",
            path.display()
        ),
        GitLockRemoved { path, age } => format!(
            "removed git's lock {} ({age} old): no git process works in this repository, so a \
             killed one left it",
            path.display()
        ),
        GitLockKept { path, age, why } => format!(
            "git's lock {} ({age} old) is kept: {why}; git commands that need it fail until it \
             goes",
            path.display()
        ),
        Running { command } => format!("running: {command}"),
        SetUpFiles {
            reflinked,
            copied,
            copied_bytes,
            linked,
        } => {
            let mut parts = Vec::new();
            if *reflinked > 0 {
                parts.push(format!(
                    "{} cloned copy-on-write (reflink: no disk used until changed)",
                    crate::cli::output::count(*reflinked, "file")
                ));
            }
            if *copied > 0 {
                parts.push(format!(
                    "{} copied in full ({copied_bytes} bytes; the file system offers no reflink)",
                    crate::cli::output::count(*copied, "file")
                ));
            }
            if !linked.is_empty() {
                parts.push(format!(
                    "linked to the main worktree's: {}",
                    linked.join(", ")
                ));
            }
            format!("[create] copy and link: {}", parts.join("; "))
        }
        ApprovalAsked => {
            "This repository's .git-session.toml asks to run, in each new worktree:".to_string()
        }
        ApprovalCommand { command } => format!("  {command}"),
        ApprovalNotSaved { error } => error.clone(),
        PushNotChecked { remote, error } => format!(
            "the claims on {remote} could not be checked before this push ({error}); it goes on"
        ),
        SharedClaimLost {
            label,
            path,
            remote,
            why,
        } => format!(
            "the claim of session \"{label}\" on {} is lost on {remote}: {why}",
            show_path(path)
        ),
        ClaimsNotPublished { error } => format!("claims not published with this push: {error}"),
    }
}

/// The whole line as shown without colour: `warning: <text>` or the note's text.
/// Why the pre-commit never saw a commit, as the post-commit warning says it.
fn unseen(why: &Unseen) -> String {
    match why {
        Unseen::NotInForce {
            why,
            install_repairs: true,
        } => format!(
            "the pre-commit guard is not in force here: {why}; `git session hooks install` puts it \
             back"
        ),
        Unseen::NotInForce {
            why,
            install_repairs: false,
        } => format!(
            "the pre-commit guard is not in force here: {why}; `git session hooks status` says what \
             puts it back"
        ),
        Unseen::Skipped => "its pre-commit hook was skipped: --no-verify".to_string(),
        Unseen::ByCommand { command } => {
            format!("`git {command}` made it, and git runs no pre-commit hook for that")
        }
        Unseen::NoPreCommit => "no pre-commit ran".to_string(),
        Unseen::StagedDuringCheck { paths } => format!(
            "{} staged while its pre-commit hook ran, after the guard had checked the index: {}",
            match paths.len() {
                1 => "1 path was".to_string(),
                n => format!("{n} paths were"),
            },
            paths
                .iter()
                .take(5)
                .map(|p| show_path(p))
                .collect::<Vec<_>>()
                .join(", ")
                + if paths.len() > 5 { ", ..." } else { "" }
        ),
    }
}

pub fn line(a: &Announcement) -> String {
    match a.kind() {
        Kind::Note => text(a),
        Kind::Warning => format!("warning: {}", text(a)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::clock::Time;
    use std::path::PathBuf;

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
                why: Unseen::Skipped,
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
            GitSessionIgnored { value: s("../x") },
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
            PushNotChecked {
                remote: s("origin"),
                error: s("timed out"),
            },
            SharedClaimLost {
                label: s("a"),
                path: s("a.txt"),
                remote: s("origin"),
                why: s("taken after it lapsed"),
            },
            ClaimsNotPublished { error: s("denied") },
            ForeignWorktreeCommit {
                label: s("a"),
                here: s("/w/b"),
            },
            MergeUndone {
                label: s("a"),
                base: s("main"),
            },
            MergeCompleted {
                label: s("a"),
                base: s("main"),
                tip: s("0123456789ab"),
                worktrees: vec![PathBuf::from("/w/main")],
            },
            MergeLeft {
                label: s("a"),
                branch: s("main"),
                worktree: PathBuf::from("/w/main"),
                from: s("1111111111111111111111111111111111111111"),
                to: s("2222222222222222222222222222222222222222"),
                why: s("has changes made since"),
            },
            MergeOvertaken {
                label: s("a"),
                branch: s("main"),
                at: s("0123456789ab"),
            },
            GitLockRemoved {
                path: PathBuf::from("/r/.git/packed-refs.lock"),
                age: s("40s"),
            },
            GitLockKept {
                path: PathBuf::from("/r/.git/index.lock"),
                age: s("40s"),
                why: s("a git process works in this repository: pid 12 (git gc)"),
            },
            CheckApprovalAsked,
            MergeCheckCleared {
                label: s("a"),
                path: PathBuf::from("/r/.git/git-session/merge-check-worktrees/a"),
            },
            SetUpFiles {
                reflinked: 2,
                copied: 1,
                copied_bytes: 120,
                linked: vec![s("node_modules")],
            },
            PostCommitUnguarded {
                commit: s("0123456789ab"),
                why: Unseen::NotInForce {
                    why: s("core.hooksPath is /dev/null"),
                    install_repairs: false,
                },
            },
            PostCommitUnguarded {
                commit: s("0123456789ab"),
                why: Unseen::NotInForce {
                    why: s("/w/.git/hooks/pre-commit does not exist"),
                    install_repairs: true,
                },
            },
            PostCommitUnguarded {
                commit: s("0123456789ab"),
                why: Unseen::NoPreCommit,
            },
            PostCommitUnguarded {
                commit: s("0123456789ab"),
                why: Unseen::ByCommand {
                    command: s("cherry-pick"),
                },
            },
            PostCommitUnguarded {
                commit: s("0123456789ab"),
                why: Unseen::StagedDuringCheck {
                    paths: vec![s("late.txt")],
                },
            },
        ]
    }

    #[test]
    fn every_variant_renders_one_line_behind_its_prefix() {
        let all = every_variant();
        for a in &all {
            let line = line(a);
            assert!(!line.contains('\n'), "{a:?} renders more than one line");
            assert!(!text(a).trim().is_empty(), "{a:?} renders nothing");
            match a.kind() {
                Kind::Warning => assert_eq!(line, format!("warning: {}", text(a)), "{a:?}"),
                Kind::Note => assert_eq!(line, text(a), "{a:?}"),
            }
        }
        // The post-commit lines keep git's loud `WARNING:` as their own prefix.
        for a in all.iter().filter(|a| line(a).starts_with("WARNING:")) {
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
            PushNotChecked { .. } => 28,
            SharedClaimLost { .. } => 29,
            ClaimsNotPublished { .. } => 30,
            ForeignWorktreeCommit { .. } => 31,
            MergeUndone { .. } => 32,
            MergeCompleted { .. } => 33,
            MergeLeft { .. } => 34,
            MergeOvertaken { .. } => 35,
            GitLockRemoved { .. } => 36,
            GitLockKept { .. } => 37,
            CheckApprovalAsked => 38,
            MergeCheckCleared { .. } => 39,
            SetUpFiles { .. } => 40,
        }
    }

    #[test]
    fn every_variant_is_listed_once() {
        // The last entries show the post-commit warning's other reasons again.
        let positions: Vec<usize> = every_variant().iter().map(position).take(41).collect();
        assert_eq!(positions, (0..=40).collect::<Vec<_>>());
    }

    /// Every variant's line, pinned: a change of wording shows here first.
    #[test]
    fn every_line_is_pinned() {
        let lines: Vec<String> = every_variant().iter().map(line).collect();
        insta::assert_snapshot!(lines.join("\n"));
    }

    #[test]
    fn texts_are_today_s_words() {
        let t = time();
        assert_eq!(
            line(&Announcement::LapsedOwner {
                path: "a b.txt".into(),
                owner: "old".into(),
                last_activity: t,
                now: t,
            }),
            "warning: \"a b.txt\" was claimed by session \"old\", which is no longer live \
             (last activity 2026-01-02T03:04:05Z, now); letting it through"
        );
        assert_eq!(
            text(&Announcement::UnknownActingSession {
                label: "a\"b".into()
            }),
            "GIT_SESSION names \"a\\\"b\", which is no session of this repository; its commit \
             claims are not recorded"
        );
    }
}
