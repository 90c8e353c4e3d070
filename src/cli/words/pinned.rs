//! Every typed refusal the domain can return, worded, pinned by one snapshot: a value of each
//! variant goes through [`super::user_error`] (so a family the registry forgets fails here) and
//! is shown as the user sees it, with its exit code. A change of wording shows in the snapshot.

use super::user_error;
use crate::base::clock::{BadTimeout, Time};
use crate::cli::user_error::UserError;
use crate::config::{ConfigError, Position};
use crate::context::agent_status::StatusError;
use crate::context::hook_config::InstallError;
use crate::git::RepoError;
use crate::guard::Refusal;
use crate::handoff::EmptyNote;
use crate::hazards::Hazard;
use crate::hooks::wire::BothExist;
use crate::lifecycle::create::CreateError;
use crate::lifecycle::merge::{Held, MergeRefusal, Merged};
use crate::lifecycle::LifecycleError;
use crate::ownership::claims_file::ClaimHow;
use crate::ownership::path::PathError;
use crate::ownership::Owner;
use crate::session::{Label, SessionError};
use crate::shared_claims::{PushConflict, SharedClaim, SharedError};
use crate::store::{StoreError, WriteFailed};
use std::path::PathBuf;
use std::time::Duration;

fn time() -> Time {
    chrono::DateTime::parse_from_rfc3339("2026-01-02T03:04:05Z")
        .expect("a valid time")
        .with_timezone(&chrono::Utc)
}

fn shown(e: &UserError) -> String {
    let mut out = format!("[exit {}] error: {}", e.exit_code(), e.message);
    for line in &e.details {
        out.push_str(&format!("\n    {line}"));
    }
    if let Some(hint) = &e.hint {
        out.push_str(&format!("\n  hint: {hint}"));
    }
    out
}

fn worded(e: impl std::error::Error + Send + Sync + 'static) -> String {
    let err = anyhow::Error::from(e).context("while doing something");
    shown(&user_error(&err).expect("a typed error has words"))
}

fn label(s: &str) -> Label {
    Label::new(s).expect("a valid label")
}

fn p(s: &str) -> PathBuf {
    PathBuf::from(s)
}

fn s(x: &str) -> String {
    x.to_string()
}

fn claim(path: &str) -> SharedClaim {
    SharedClaim {
        version: 1,
        path: s(path),
        label: s("other"),
        clone: s("c0ffee"),
        host: s("laptop"),
        since: time(),
        expires: time(),
    }
}

#[test]
fn every_typed_refusal_is_worded_and_pinned() {
    let mut all: Vec<String> = vec![
        worded(ConfigError::BadValue {
            file: p("/r/.git-session.toml"),
            at: Some(Position { line: 1, column: 8 }),
            key: s("base"),
            expected: s("a revision name"),
        }),
        worded(ConfigError::NotADuration {
            file: p("/r/.git-session.toml"),
            at: Some(Position {
                line: 3,
                column: 12,
            }),
            key: s("live_for"),
            text: s("30"),
        }),
        worded(ConfigError::Unreadable {
            file: p("/r/.git-session.toml"),
            at: Some(Position { line: 2, column: 1 }),
            key: None,
            why: s("unknown field `bse`"),
        }),
        worded(ConfigError::Unreadable {
            file: p("/r/.git-session.toml"),
            at: Some(Position {
                line: 4,
                column: 12,
            }),
            key: Some(s("merge.strategy")),
            why: s("invalid type: integer `3`, expected a string"),
        }),
        worded(ConfigError::NotText {
            file: p("/r/.git-session.toml"),
            at: Position { line: 1, column: 3 },
        }),
        worded(ConfigError::NotRead {
            file: p("/r/.git-session.toml"),
            why: s("Permission denied (os error 13)"),
        }),
        worded(RepoError::NotOwned { path: s("/r") }),
        worded(RepoError::NotARepository),
        worded(RepoError::NoMainBranch),
        worded(BadTimeout { given: s("10") }),
        worded(SessionError::InvalidLabel { text: s("../x") }),
        worded(SessionError::InvalidLabelFileName { name: s("a/b") }),
        worded(SessionError::InvalidBase { rev: s("--orphan") }),
        worded(SessionError::NoSuchSession {
            label: s("ghost"),
            others: None,
        }),
        worded(SessionError::NoSuchSession {
            label: s("fix-logn"),
            others: Some(vec![s("docs"), s("fix-login")]),
        }),
        worded(SessionError::NoneHere {
            usage: s("git session info LABEL"),
        }),
        worded(PathError::NeedsWorktree),
        worded(PathError::Outside {
            shown: s("../x"),
            root: p("/r"),
        }),
        worded(PathError::NotUtf8 { rel: p("caf") }),
        worded(PathError::TooLong { shown: s("x/x/x") }),
        worded(PathError::NoFile { shown: s(".git") }),
        worded(EmptyNote::Blank),
        worded(EmptyNote::OnlyHeadings),
        worded(StoreError::NotAPlainName { rel: s("../x") }),
        worded(StoreError::Unreadable {
            path: p("/r/.git/git-session/sessions"),
            error: s("Permission denied (os error 13)"),
        }),
        worded(WriteFailed {
            what: "writing",
            path: p("/r/.git/git-session/sessions/a.toml"),
            error: std::io::Error::from_raw_os_error(nix::libc::ENOSPC),
        }),
        worded(WriteFailed {
            what: "replacing",
            path: p("/r/.git/git-session/sessions/a.toml"),
            error: std::io::Error::from_raw_os_error(nix::libc::EIO),
        }),
        worded(BothExist {
            hook: p("/r/.git/hooks/pre-commit"),
            aside: p("/r/.git/hooks/pre-commit.before-git-session"),
        }),
        worded(LifecycleError::OutsideWorktrees {
            label: s("a"),
            path: p("/elsewhere/a"),
            worktrees_dir: p("/r.sessions"),
        }),
        worded(LifecycleError::RemoveRefused {
            label: s("a"),
            reason: s("contains modified or untracked files"),
            submodules: true,
        }),
        worded(LifecycleError::Conflict {
            label: s("a"),
            base: s("main"),
            at: s(" (at commit 0123456 \"add a\")"),
            paths: vec![s("src/a.rs"), s("src/b.rs")],
        }),
        worded(LifecycleError::MergeNotRolledBack {
            label: s("a"),
            error: s("update-ref failed"),
            left: vec![s("main moved to 0123456789ab")],
        }),
        worded(MergeRefusal::Busy { label: label("a") }),
        worded(MergeRefusal::Attached { label: label("a") }),
        worded(MergeRefusal::Creating { label: label("a") }),
        worded(MergeRefusal::NoBranch {
            label: label("a"),
            branch: s("session/a"),
        }),
        worded(MergeRefusal::BaseNotLocal {
            label: label("a"),
            base: s("origin/main"),
            branch: s("session/a"),
        }),
        worded(MergeRefusal::HeldWork {
            label: label("a"),
            held: Held::Uncommitted,
            items: vec![Hazard::Dirty(vec![s("src/a.rs")])],
            found: Box::default(),
            worktree: p("/r.sessions/a"),
        }),
        worded(MergeRefusal::DirtyBase {
            base: s("main"),
            worktree: p("/r"),
            operations: Vec::new(),
            changed: vec![s("README.md")],
        }),
        worded(MergeRefusal::NotOnBranch {
            label: label("a"),
            branch: s("session/a"),
            worktree: p("/r.sessions/a"),
        }),
        worded(MergeRefusal::Interrupted { label: label("a") }),
        worded(MergeRefusal::TimedOut {
            label: label("a"),
            after: Duration::from_secs(120),
        }),
        worded(MergeRefusal::CheckNotApproved {
            label: label("a"),
            commands: vec![s("cargo test --locked")],
        }),
        worded(MergeRefusal::RegenerateNotApproved {
            label: label("a"),
            paths: vec![s("Cargo.lock")],
            commands: vec![s("Cargo.lock: cargo generate-lockfile")],
        }),
        worded(MergeRefusal::CheckFailed {
            label: label("a"),
            base: s("main"),
            failure: crate::lifecycle::merge_check::Failure {
                command: s("cargo test --locked"),
                why: crate::lifecycle::merge_check::Why::Exit(101),
                tail: vec![s("test it_works ... FAILED"), s("test result: FAILED")],
                log: p("/r/.git/git-session/merge-check-logs/a.log"),
            },
        }),
        worded(MergeRefusal::LostRace {
            label: label("a"),
            base: s("main"),
        }),
        worded(CreateError::NoCommits),
        worded(CreateError::BaseNotACommit { base: s("nope") }),
        worded(CreateError::Exists {
            label: label("a"),
            path: p("/r.sessions/a"),
        }),
        worded(CreateError::CaseTwin {
            label: label("Fix"),
            existing: label("fix"),
        }),
        worded(CreateError::PathNotEmpty {
            path: p("/r.sessions/a"),
        }),
        worded(CreateError::AdminBlocker {
            file: p("/r/.git/worktrees/a"),
        }),
        worded(CreateError::BranchExists {
            branch: s("session/a"),
        }),
        worded(CreateError::BranchCaseTwin {
            branch: s("session/Fix"),
            existing: s("session/fix"),
        }),
        worded(CreateError::BranchInTheWay {
            other: s("session/a/b"),
            branch: s("session/a"),
        }),
        worded(CreateError::Busy { label: label("a") }),
        worded(CreateError::RecordExists { label: label("a") }),
        worded(CreateError::NoWorktreeToAttach),
        worded(CreateError::TimedOut {
            label: label("a"),
            after: Duration::from_secs(300),
            rolled: s("rolled back"),
        }),
        worded(CreateError::Interrupted {
            label: label("a"),
            rolled: s("rolled back"),
        }),
        worded(CreateError::Failed {
            label: label("a"),
            status: Some(128),
            stderr: s("fatal: invalid reference: nope"),
            rolled: s("rolled back"),
            left_nothing: true,
            hook: None,
        }),
        worded(StatusError::NoRepository),
        worded(StatusError::NoSessionHere),
        worded(StatusError::NoAgentLinked { label: s("a") }),
        worded(StatusError::UnreadableTranscript {
            path: p("/t.jsonl"),
            why: s("not found"),
        }),
        worded(StatusError::UnknownAgent { id: s("abc") }),
        worded(StatusError::UnknownAgentToWrapUp { id: s("abc") }),
        worded(StatusError::PayloadNamesNothing),
        worded(StatusError::AgentDisappeared { id: s("abc") }),
        worded(InstallError::Malformed {
            file: p("/r/.claude/settings.json"),
            what: s("`hooks` is not an object"),
        }),
        worded(InstallError::NotJson {
            file: p("/r/.claude/settings.json"),
            why: s("expected value at line 1 column 1"),
        }),
        worded(InstallError::NoHome),
    ];
    let owner = |label: &str, path: &str| Owner {
        label: s(label),
        branch: format!("session/{label}"),
        path: s(path),
        how: ClaimHow::Explicit,
        since: time(),
        last_activity: time(),
    };
    for refusal in [
        Refusal::Owned {
            conflicts: vec![(s("src/a.rs"), owner("other", "src"))],
            me: Some(s("me")),
            now: time(),
        },
        Refusal::Owned {
            conflicts: vec![
                (s("a b.rs"), owner("x", "a b.rs")),
                (s("c.rs"), owner("y", "c.rs")),
            ],
            me: None,
            now: time(),
        },
        Refusal::HeldElsewhere {
            held: vec![(s("src/a.rs"), claim("src/a.rs"))],
            remote: s("origin"),
        },
        Refusal::PushHeld {
            conflicts: vec![PushConflict {
                commit: crate::git::Oid::from_str("0123456789abcdef0123456789abcdef01234567")
                    .expect("an id"),
                path: s("src/a.rs"),
                holder: claim("src/a.rs"),
            }],
            remote: s("origin"),
        },
    ] {
        all.push(shown(&super::guard_refusals::words(&refusal)));
    }
    for e in [
        SharedError::Remote {
            remote: s("origin"),
            why: s("timed out after 20s"),
        },
        SharedError::Held(vec![claim("src/a.rs"), claim("src/b.rs")]),
    ] {
        all.push(shown(&super::guard_refusals::shared(&e)));
    }
    for merged in [
        Merged::AlreadyIn { base: s("main") },
        Merged::Done {
            base: s("main"),
            how: s("2 commits rebased, fast-forward"),
            new_tip: crate::git::Oid::from_str("0123456789abcdef0123456789abcdef01234567")
                .expect("an id"),
            base_worktree: Some(p("/r")),
            checked: vec![s("cargo test --locked")],
            recomputed: true,
            occupied: Vec::new(),
        },
    ] {
        for line in super::merging::checked_and_recomputed(&merged) {
            all.push(line);
        }
        all.push(super::merging::merged("a", &merged));
    }
    let (lines, hint) = super::merging::kept_occupied(
        "a",
        &[Hazard::Occupied(vec![crate::base::process::Occupant {
            pid: 12,
            command: s("sleep 60"),
            cwd: p("/r.sessions/a"),
        }])],
    );
    all.push(format!("{}\n  hint: {hint}", lines.join("\n")));
    for line in &all {
        let first = line.lines().next().unwrap_or_default();
        assert!(
            !first.ends_with('.'),
            "one line, no trailing period: {first}"
        );
    }
    insta::assert_snapshot!(all.join("\n\n"));
}
