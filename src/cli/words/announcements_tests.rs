//! The words of every announcement, pinned: each variant listed once, each line snapshotted.

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
        CommittedEscape {
            path: s("a.txt"),
            writer: s("a"),
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
        CommittedEscape { .. } => 41,
    }
}

#[test]
fn every_variant_is_listed_once() {
    // The last entries show the post-commit warning's other reasons again.
    let positions: Vec<usize> = every_variant().iter().map(position).take(42).collect();
    assert_eq!(positions, (0..=41).collect::<Vec<_>>());
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
