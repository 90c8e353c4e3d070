//! Issue 27: husky configured but not installed (a fresh clone before `npm install` runs husky's
//! `prepare`), then `git session hooks install`, then husky's install: the guard is in force
//! before husky installs (from the hooks directory) and after (from husky's own scripts), in the
//! main worktree and in session worktrees. The real husky, found as tests/it/managers.rs finds it.

use crate::common::{self, TestRepo};
use crate::managers::{available, Manager, Scene};
use std::path::Path;

/// In `dir`: `hooks status` says the guard is in force, and a commit over `owned` (session
/// "a"'s) is refused.
#[track_caller]
fn refused_in(s: &Scene, dir: &Path, owned: &str, step: &str) {
    let status = s.session(dir, &["hooks", "status"]);
    assert_eq!(
        status.code, 0,
        "{step}: {}\n{}",
        status.stdout, status.stderr
    );
    common::write_in(dir, owned, &format!("{step}\n"));
    s.git(dir, &["add", "--", owned]);
    let out = s.git(dir, &["commit", "-q", "-m", "over another session's path"]);
    assert_ne!(
        out.code,
        0,
        "{step}: went through in {}\n{}",
        dir.display(),
        out.stderr
    );
    assert!(
        out.stderr.contains("owned by session \"a\""),
        "{step}: {}",
        out.stderr
    );
    s.git(dir, &["reset", "-q", "--", owned]);
    s.git(dir, &["checkout", "-q", "--", owned]);
}

#[test]
fn husky_configured_not_installed_git_session_first() {
    let Some(bin) = available(Manager::Husky) else {
        return;
    };
    let repo = TestRepo::new();
    let root = repo.root.clone();
    repo.commit_file(&root, "shared.txt", "shared\n", "shared file");
    let s = Scene {
        repo,
        manager: Manager::Husky,
        bin,
    };
    // What a clone of a project that uses husky holds before `npm install`.
    let own = r#"echo ran >> "$(git rev-parse --git-common-dir)/manager-ran""#;
    common::write_in(
        &root,
        "package.json",
        "{\n  \"name\": \"demo\",\n  \"scripts\": { \"prepare\": \"husky\" },\n  \
         \"devDependencies\": { \"husky\": \"9.1.7\" }\n}\n",
    );
    common::write_in(&root, ".husky/pre-commit", &format!("{own}\n"));
    s.commit_all("a project that uses husky");
    assert_ne!(s.git(&root, &["config", "core.hooksPath"]).code, 0);

    let out = s.session(&root, &["hooks", "install"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let script = std::fs::read_to_string(root.join(".husky/pre-commit")).unwrap();
    assert!(script.contains("git-session guard pre-commit"), "{script}");
    assert!(script.contains(own), "husky's own line is kept: {script}");
    let post = std::fs::read_to_string(root.join(".husky/post-commit")).unwrap();
    assert!(post.contains("git-session guard post-commit"), "{post}");
    // The changed scripts go to the team, as install's hint says.
    assert!(out.stderr.contains(".husky/pre-commit"), "{}", out.stderr);
    s.commit_all("the ownership guard in husky's scripts");

    let a = s.repo.create("a");
    let early = s.repo.create("early");
    let claim = s.session(&a, &["claim", "shared.txt"]);
    assert_eq!(claim.code, 0, "{}", claim.stderr);
    // Before husky installs, git runs the hooks directory's files: the guard is there.
    refused_in(&s, &root, "shared.txt", "main before husky installs");
    refused_in(&s, &early, "shared.txt", "session before husky installs");

    // `npm install` runs husky's `prepare`: core.hooksPath=.husky/_.
    s.reinstall_manager();
    assert_eq!(
        s.git(&root, &["config", "core.hooksPath"]).stdout.trim(),
        ".husky/_"
    );
    s.check(&root, "shared.txt", "main after husky installs");
    let b = s.repo.create("b");
    s.check(&b, "shared.txt", "session made after husky installs");
    // A session made before husky installed lacks husky's generated `.husky/_` (ignored, so no
    // checkout brings it): nothing runs there, which `hooks status` says, naming the fix; the
    // fix copies the directory in, and husky's scripts (with the guard) run there too.
    let status = s.session(&early, &["hooks", "status"]);
    assert_eq!(status.code, 1, "{}", status.stderr);
    assert!(
        status
            .stderr
            .contains("hint: run `git session hooks install`"),
        "{}",
        status.stderr
    );
    let out = s.session(&root, &["hooks", "install"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    s.check(&early, "shared.txt", "session made before husky installs");

    // Uninstall takes out what install added; husky's own hook still runs.
    let out = s.session(&root, &["hooks", "uninstall"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let script = std::fs::read_to_string(root.join(".husky/pre-commit")).unwrap();
    assert_eq!(script, format!("{own}\n"));
    assert!(!root.join(".husky/post-commit").exists());
}

/// The agent of a session runs `npm install` in its worktree first: husky's install points the
/// shared `core.hooksPath` at `.husky/_`, which then exists in that session only, so no hook runs
/// in the main worktree or the other sessions (`hooks status` says so). `hooks install` in the
/// main worktree, as its hint says, copies the directory from that session into the main
/// worktree and on into the other sessions: the guard is in force everywhere again.
#[test]
fn husky_installed_in_a_session_first() {
    let Some(bin) = available(Manager::Husky) else {
        return;
    };
    let repo = TestRepo::new();
    let root = repo.root.clone();
    repo.commit_file(&root, "shared.txt", "shared\n", "shared file");
    let s = Scene {
        repo,
        manager: Manager::Husky,
        bin,
    };
    let own = r#"echo ran >> "$(git rev-parse --git-common-dir)/manager-ran""#;
    common::write_in(
        &root,
        "package.json",
        "{\n  \"name\": \"demo\",\n  \"devDependencies\": { \"husky\": \"9.1.7\" }\n}\n",
    );
    common::write_in(&root, ".husky/pre-commit", &format!("{own}\n"));
    s.commit_all("a project that uses husky");
    let out = s.session(&root, &["hooks", "install"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    s.commit_all("the ownership guard in husky's scripts");
    let a = s.repo.create("a");
    let b = s.repo.create("b");
    let claim = s.session(&a, &["claim", "shared.txt"]);
    assert_eq!(claim.code, 0, "{}", claim.stderr);

    s.run_ok("husky", &a, &[]);
    let status = s.session(&root, &["hooks", "status"]);
    assert_eq!(status.code, 1, "{}", status.stderr);
    assert!(
        status
            .stderr
            .contains("hint: run `git session hooks install`"),
        "{}",
        status.stderr
    );
    let out = s.session(&root, &["hooks", "install"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    s.check(
        &root,
        "shared.txt",
        "main after husky installed in a session",
    );
    s.check(
        &b,
        "shared.txt",
        "another session after husky installed in a session",
    );
}
