//! Labels that differ only in ASCII case (`Fix` beside `fix`): on a case-insensitive file
//! system (APFS, NTFS by default) they would share one worktree directory, one store file and one
//! branch file, so a new label that is any case variant of an existing session's label (or whose
//! branch is an existing branch in another case) is refused on every platform, naming the one
//! that exists, before anything is made. Labels that differ in more than case are unaffected.

use crate::common;
use common::TestRepo;
use std::collections::BTreeMap;

/// Everything a refused creation must leave as it was: the branches, the worktrees git knows,
/// the directories of the worktrees directory and the store's files with their bytes (the
/// derived claims index and the audit log aside: readers may rebuild the one, every command
/// may append to the other).
fn state(repo: &TestRepo) -> (String, String, Vec<String>, BTreeMap<String, Vec<u8>>) {
    let branches = repo.git(["for-each-ref", "--format=%(refname)", "refs/heads/"]);
    let worktrees = repo.git(["worktree", "list", "--porcelain"]);
    let mut dirs: Vec<String> = std::fs::read_dir(repo.sessions_dir())
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    let mut files = BTreeMap::new();
    let store = repo.store();
    let mut stack = vec![store.clone()];
    while let Some(d) = stack.pop() {
        // No store yet: nothing in it.
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path.strip_prefix(&store).unwrap().display().to_string();
            if rel != "claims.index" && rel != "audit.log" && !rel.starts_with("locks/") {
                files.insert(rel, std::fs::read(&path).unwrap_or_default());
            }
        }
    }
    (branches, worktrees, dirs, files)
}

/// Every way a label enters a new session, for `label`, refused naming `existing` and changing
/// nothing: `create`, `create --attach` and Claude Code's `worktree-hook create`.
#[track_caller]
fn refused_everywhere(repo: &TestRepo, label: &str, existing: &str) {
    let before = state(repo);
    let expected =
        format!("error: session \"{existing}\" already exists; \"{label}\" differs only in case");
    let out = repo.run(["create", label]).fails(1);
    assert_eq!(
        out.stderr.lines().next(),
        Some(expected.as_str()),
        "{label}"
    );
    assert_eq!(
        out.stderr.lines().count(),
        2,
        "one line and a hint: {}",
        out.stderr
    );
    assert!(out.stdout.is_empty(), "{label}: {}", out.stdout);
    let out = repo.run(["create", "--attach", label]).fails(1);
    assert_eq!(
        out.stderr.lines().next(),
        Some(expected.as_str()),
        "--attach {label}"
    );
    let out = repo.worktree_hook(
        "create",
        serde_json::json!({"name": label, "cwd": repo.root.display().to_string()}),
    );
    assert_ne!(out.code, 0, "worktree-hook create {label}: {}", out.stdout);
    assert!(
        out.stderr.contains(&expected),
        "worktree-hook {label}: {}",
        out.stderr
    );
    assert_eq!(
        state(repo),
        before,
        "{label}: something was made or changed"
    );
}

#[test]
fn every_case_variant_of_a_session_label_is_refused_naming_it_and_nothing_is_made() {
    let repo = TestRepo::new();
    let fix = repo.create("fix");
    let out = repo.run(["create", "Fix"]).fails(1);
    insta::assert_snapshot!(out.stderr, @r#"
    error: session "fix" already exists; "Fix" differs only in case
    hint: on a case-insensitive file system (macOS's, Windows') the two would share one worktree directory and one branch file: choose another label, or use "fix" (git session switch fix)
    "#);
    for variant in ["Fix", "FIX", "fiX", "fIx"] {
        refused_everywhere(&repo, variant, "fix");
    }
    // A slash label: the whole label is compared, every part of it.
    repo.create("team/Api");
    for variant in ["team/api", "TEAM/API", "Team/Api", "team/aPI"] {
        refused_everywhere(&repo, variant, "team/Api");
    }
    // Labels that differ in more than case are sessions of their own.
    for other in ["fix2", "Fixed", "fixes/Login", "team/api-v2", "Team-Api"] {
        repo.create(other);
    }
    assert_eq!(
        repo.labels(),
        [
            "Fixed",
            "Team-Api",
            "fix",
            "fix2",
            "fixes/Login",
            "team/Api",
            "team/api-v2"
        ]
    );
    // The exact label is still the plain "already exists" (with the way in).
    let out = repo.run(["create", "fix"]).fails(1);
    assert!(
        out.stderr
            .starts_with("error: session \"fix\" already exists\n"),
        "{}",
        out.stderr
    );
    // Once "fix" is gone, any case of it may be created again.
    repo.run(["cleanup", "fix"]).ok();
    assert!(!fix.exists());
    let again = repo.create("Fix");
    assert_eq!(again, repo.sessions_dir().join("Fix"));
    assert_eq!(
        repo.git_in(&again, ["symbolic-ref", "HEAD"]).trim(),
        "refs/heads/session/Fix"
    );
    refused_everywhere(&repo, "fix", "Fix");
}

#[test]
fn a_branch_without_a_session_in_another_case_is_refused_too() {
    let repo = TestRepo::new();
    repo.git(["branch", "session/Old"]);
    // Any branch name in another case, not only the session prefix's.
    repo.git(["branch", "Session/other"]);
    for (label, existing, branch) in [
        ("old", "session/Old", "session/old"),
        ("OLD", "session/Old", "session/OLD"),
        ("other", "Session/other", "session/other"),
    ] {
        let before = state(&repo);
        let out = repo.run(["create", label]).fails(1);
        assert_eq!(
            out.stderr.lines().next(),
            Some(
                format!("error: branch {existing} already exists; {branch} differs only in case")
                    .as_str()
            ),
            "{}",
            out.stderr
        );
        assert_eq!(
            state(&repo),
            before,
            "{label}: something was made or changed"
        );
        if label == "old" {
            insta::assert_snapshot!(out.stderr, @r"
            error: branch session/Old already exists; session/old differs only in case
            hint: on a case-insensitive file system (macOS's, Windows') the two would be one branch file: choose another label, or `git session create --attach` in a worktree of session/Old
            ");
        }
    }
    // The exact name is the existing refusal; a session whose branch differs in more than case
    // is made.
    let out = repo.run(["create", "Old"]).fails(1);
    assert!(
        out.stderr
            .starts_with("error: branch session/Old already exists\n"),
        "{}",
        out.stderr
    );
    repo.create("older");
}
