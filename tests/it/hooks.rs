//! Issue 3, item 6: installing the hooks next to the user's own.
use crate::common;
use common::TestRepo;
use std::os::unix::fs::PermissionsExt;

const USER_HOOK: &str = "#!/bin/sh\n# the user's own hook\nif [ -f reject-me ]; then echo 'user hook says no' >&2; exit 3; fi\necho user-hook-ran >> \"$(git rev-parse --git-common-dir)/ran\"\n";

#[test]
fn install_is_idempotent_keeps_user_hook_and_uninstall_restores_it() {
    let repo = TestRepo::new();
    let hooks = repo.root.join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let user = hooks.join("pre-commit");
    std::fs::write(&user, USER_HOOK).unwrap();
    std::fs::set_permissions(&user, std::fs::Permissions::from_mode(0o750)).unwrap();
    // From a linked worktree: the hooks live in the common directory.
    let wt = repo.create("w");
    repo.run_in(&wt, ["hooks", "install"]).ok();
    let first = std::fs::read(&user).unwrap();
    repo.run_in(&wt, ["hooks", "install"]).ok();
    assert_eq!(
        std::fs::read(&user).unwrap(),
        first,
        "second install changed the hook"
    );
    // The user's shell hook keeps its name and mode (a hook that dispatches on `$0`, as
    // husky's does, still finds itself), with our block first inside it.
    assert_eq!(
        std::fs::metadata(&user).unwrap().permissions().mode() & 0o777,
        0o750
    );
    let text = std::fs::read_to_string(&user).unwrap();
    assert!(
        text.starts_with("#!/bin/sh\n# >>> git-session >>>"),
        "{text}"
    );
    assert!(text.ends_with(&USER_HOOK["#!/bin/sh\n".len()..]), "{text}");
    assert!(!hooks.join("pre-commit.before-git-session").exists());
    let status = repo.run(["hooks", "status", "--json"]).ok().json();
    assert_eq!(status[0]["state"], "installed");
    assert_eq!(status[0]["in_force"], true);
    assert_eq!(status[0]["route"], "hook file");
    assert!(status[0]["user_hook"].is_null());
    // The user's hook still runs, and can still reject.
    repo.commit_file(&wt, "a.txt", "a\n", "a");
    let ran = std::fs::read_to_string(repo.root.join(".git/ran")).unwrap();
    assert_eq!(ran, "user-hook-ran\n");
    common::write_in(&wt, "reject-me", "x\n");
    repo.git_in(&wt, ["add", "reject-me"]);
    let out = repo.git_try(&wt, ["commit", "-q", "-m", "nope"]).fails(1);
    assert!(out.stderr.contains("user hook says no"), "{}", out.stderr);
    // Uninstall restores the user's hook byte for byte, mode included; post-commit goes away.
    repo.run(["hooks", "uninstall"]).ok();
    assert_eq!(std::fs::read_to_string(&user).unwrap(), USER_HOOK);
    assert_eq!(
        std::fs::metadata(&user).unwrap().permissions().mode() & 0o777,
        0o750
    );
    assert!(!hooks.join("post-commit").exists());
    assert!(!hooks.join("pre-commit.before-git-session").exists());
}

/// A hook that is not a shell script cannot take our line: it is moved aside, bytes and mode
/// intact, and run first by ours; a stale copy of a manager's dispatcher left aside by an older
/// install is replaced instead of refusing.
#[test]
fn a_hook_in_another_language_is_chained_and_a_stale_copy_replaced() {
    let repo = TestRepo::new();
    let hooks = repo.root.join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let user = hooks.join("pre-commit");
    let script = "#!/usr/bin/env python3\nimport sys\nsys.exit(0)\n";
    std::fs::write(&user, script).unwrap();
    std::fs::set_permissions(&user, std::fs::Permissions::from_mode(0o755)).unwrap();
    // What an older install left: husky's dispatcher, set aside.
    let aside = hooks.join("pre-commit.before-git-session");
    std::fs::write(&aside, "#!/usr/bin/env sh\n. \"$(dirname \"$0\")/h\"").unwrap();
    std::fs::write(hooks.join("h"), "exit 0\n").unwrap();
    let out = repo.run(["hooks", "install"]).ok();
    assert!(out.stderr.contains("removed"), "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(&aside).unwrap(), script);
    assert_eq!(
        std::fs::read_to_string(&user).unwrap(),
        include_str!("../../githooks/pre-commit")
    );
    repo.run(["hooks", "status"]).ok();
    repo.run(["hooks", "uninstall"]).ok();
    assert_eq!(std::fs::read_to_string(&user).unwrap(), script);
    assert!(!aside.exists());
}

#[test]
fn install_honours_core_hooks_path_and_allows_without_binary() {
    let repo = TestRepo::new();
    repo.git(["config", "core.hooksPath", ".githooks"]);
    let out = repo.run(["hooks", "install"]).ok();
    assert!(out.stderr.contains(".githooks"), "{}", out.stderr);
    let hook = repo.root.join(".githooks/pre-commit");
    let text = std::fs::read_to_string(&hook).unwrap();
    assert_eq!(text, include_str!("../../githooks/pre-commit"));
    assert!(!repo.root.join(".git/hooks/pre-commit").exists());
    // Without git-session on PATH the hook warns and allows.
    repo.write("b.txt", "b\n");
    repo.git(["add", "b.txt"]);
    let out = repo
        .git_cmd(&repo.root)
        .env("PATH", "/usr/bin:/bin")
        .args(["commit", "-q", "-m", "b"])
        .output()
        .unwrap();
    let out = common::to_run(out).ok();
    assert!(
        out.stderr.contains("git-session is not on PATH"),
        "{}",
        out.stderr
    );
    repo.run(["hooks", "uninstall"]).ok();
    assert!(!hook.exists());
}

/// With claims shared across machines, install adds the pre-push gate; put inside someone's
/// shell pre-push, it hands git's lines to the guard and still leaves them on the script's own
/// stdin for what follows it.
#[test]
fn the_pre_push_gate_inside_a_users_hook_leaves_it_its_stdin() {
    let repo = TestRepo::new();
    repo.write(
        ".git-session.toml",
        "[claims]\nremote = \"nowhere\"\ntimeout = \"2s\"\n",
    );
    repo.git(["remote", "add", "nowhere", "/nonexistent/remote.git"]);
    let hook = repo.root.join(".git/hooks/pre-push");
    std::fs::create_dir_all(hook.parent().unwrap()).unwrap();
    let user = "#!/bin/sh\ncat > \"$(git rev-parse --git-common-dir)/pushed-lines\"\n";
    std::fs::write(&hook, user).unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    repo.run(["hooks", "install"]).ok();
    let text = std::fs::read_to_string(&hook).unwrap();
    assert!(text.contains("git-session guard pre-push"), "{text}");
    let zero = "0".repeat(40);
    let head = repo.git(["rev-parse", "HEAD"]).trim().to_string();
    let lines = format!("refs/heads/main {head} refs/heads/main {zero}\n");
    let mut run = std::process::Command::new(&hook);
    common::hermetic(&mut run, &repo.home);
    run.current_dir(&repo.root)
        .args(["nowhere", "/nonexistent/remote.git"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = run.spawn().unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(lines.as_bytes())
        .unwrap();
    let out = common::to_run(child.wait_with_output().unwrap()).ok();
    assert!(
        out.stderr.contains("could not be checked"),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read_to_string(repo.root.join(".git/pushed-lines")).unwrap(),
        lines
    );
    repo.run(["hooks", "uninstall"]).ok();
    assert_eq!(std::fs::read_to_string(&hook).unwrap(), user);
}
