//! The guard in force, or loudly not: classes of ways a commit escapes the pre-commit guard,
//! and what the tool then says and records.

use crate::common::{self, guarded, TestRepo};
use crate::guard::audit;

const HOOKS_OFF: [&str; 2] = ["-c", "core.hooksPath=/dev/null"];

fn hooks_off(repo: &TestRepo, dir: &std::path::Path, args: &[&str]) {
    let mut all: Vec<&str> = HOOKS_OFF.to_vec();
    all.extend_from_slice(args);
    let out = repo.git_try(dir, &all);
    assert_eq!(out.code, 0, "git {all:?}: {}", out.stderr);
}

fn unguarded_lines(repo: &TestRepo) -> Vec<serde_json::Value> {
    audit(repo)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["event"] == "guard-unguarded-commit")
        .collect()
}

/// A change made over another session's path with the hooks off is judged by where it was
/// made, not by what base holds later: however it reaches base (fast-forward, merge commit),
/// the sweep that runs next (`cleanup` of that session, `list`) reports and records it.
#[test]
fn a_commit_made_with_hooks_off_is_not_laundered_by_reaching_base() {
    for integrate in [
        &["merge", "-q", "--ff-only", "session/B"][..],
        &["merge", "-q", "--no-ff", "--no-edit", "session/B"][..],
    ] {
        let repo = guarded();
        let root = repo.root.clone();
        let wa = repo.create("A");
        let wb = repo.create("B");
        repo.run_in(&wa, ["claim", "src/config.rs"]).ok();
        common::write_in(&wb, "src/config.rs", "B sneaks\n");
        hooks_off(&repo, &wb, &["commit", "-qam", "sneaky"]);
        let sneaky = repo.git_in(&wb, ["rev-parse", "HEAD"]).trim().to_string();
        // Base takes the change before any git-session command looked.
        hooks_off(&repo, &root, integrate);
        let out = repo.run(["cleanup", "B"]).ok();
        assert!(
            out.stderr.contains("without the ownership hooks"),
            "{integrate:?}: {}",
            out.stderr
        );
        let lines = unguarded_lines(&repo);
        assert!(
            lines.iter().any(|l| l.to_string().contains(&sneaky)),
            "{integrate:?}: no audit line names {sneaky}:\n{}",
            audit(&repo)
        );
        // The main worktree made nothing itself: its sweep adds nothing.
        let before = unguarded_lines(&repo).len();
        repo.run(["list"]).ok();
        assert_eq!(unguarded_lines(&repo).len(), before, "{}", audit(&repo));
    }
}

/// A commit made in the main worktree (by a person, nobody acting) with the hooks off, over a
/// session's path, is found by `list` and recorded with the worktree; commits the main worktree
/// only fast-forwarded to are not its own and raise nothing.
#[test]
fn commits_made_in_the_main_worktree_without_hooks_are_found() {
    let repo = guarded();
    let root = repo.root.clone();
    let wa = repo.create("A");
    repo.run_in(&wa, ["claim", "src/config.rs"]).ok();
    // Marks where the main worktree's hooks last looked.
    repo.commit_file(&root, "notes.txt", "a note\n", "a guarded note");
    // A's own commit on its own path, then brought into main by a fast-forward: not main's.
    common::write_in(&wa, "src/config.rs", "A's own\n");
    repo.git_in(&wa, ["commit", "-qam", "A edits its file"]);
    repo.git_in(&wa, ["rebase", "-q", "main"]);
    hooks_off(&repo, &root, &["merge", "-q", "--ff-only", "session/A"]);
    repo.run(["list"]).ok();
    assert!(unguarded_lines(&repo).is_empty(), "{}", audit(&repo));
    // Now a person commits over A's path with the hooks off.
    common::write_in(&root, "src/config.rs", "a person's edit\n");
    hooks_off(&repo, &root, &["commit", "-qam", "person"]);
    let out = repo.run(["list"]).ok();
    assert!(out.stderr.contains("person"), "{}", out.stderr);
    assert!(
        out.stderr.contains(&format!("made in {}", root.display())),
        "{}",
        out.stderr
    );
    let lines = unguarded_lines(&repo);
    assert_eq!(lines.len(), 1, "{}", audit(&repo));
    assert_eq!(lines[0]["worktree"], root.display().to_string());
    assert!(lines[0]["session"].is_null());
}

/// When the pre-commit never saw a commit, the post-commit names why: the guard is not in force
/// here (and how to put it back), or its hook was skipped with --no-verify.
#[test]
fn the_post_commit_check_names_a_replaced_guard_rather_than_guessing() {
    let repo = guarded();
    let wa = repo.create("A");
    let wb = repo.create("B");
    repo.run_in(&wa, ["claim", "src/config.rs"]).ok();
    common::write_in(&wb, "src/config.rs", "B\n");
    let out = repo
        .git_try(&wb, ["commit", "--no-verify", "-qam", "skipped"])
        .ok();
    assert!(
        out.stderr.contains("skipped: --no-verify"),
        "{}",
        out.stderr
    );
    // Another tool writes its own pre-commit over ours.
    let hook = repo.root.join(".git/hooks/pre-commit");
    std::fs::write(&hook, "#!/bin/sh\nexit 0\n").unwrap();
    common::write_in(&wb, "src/config.rs", "B again\n");
    let out = repo.git_try(&wb, ["commit", "-qam", "replaced"]).ok();
    assert!(out.stderr.contains("not in force here"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("another hook that does not run the guard"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("git session hooks install"),
        "{}",
        out.stderr
    );
    // And `hooks status`, `list`, `info` and `create` say so too.
    let status = repo.run_in(&wb, ["hooks", "status"]).fails(1);
    assert!(status.stderr.contains("would not run"), "{}", status.stderr);
    let list = repo.run(["list"]).ok();
    assert!(list.stderr.contains("not in force"), "{}", list.stderr);
    let info = repo.run_in(&wb, ["info"]).ok();
    assert!(
        info.stderr.contains("not in force in session \"B\""),
        "{}",
        info.stderr
    );
    let create = repo.run(["create", "C"]).ok();
    assert!(
        create.stderr.contains("not in force in session \"C\""),
        "{}",
        create.stderr
    );
    // Installing again puts the guard into that hook, which keeps its own line.
    repo.run(["hooks", "install"]).ok();
    let text = std::fs::read_to_string(&hook).unwrap();
    assert!(
        text.contains("git-session guard pre-commit") && text.ends_with("exit 0\n"),
        "{text}"
    );
    repo.run_in(&wb, ["hooks", "status"]).ok();
}

/// Worktrees git can use and libgit2 cannot read (a symbolic-link HEAD from
/// `core.preferSymlinkRefs`): `create` never makes one, and in one made by hand the guard fails
/// open loudly (a warning and an audit line), never silently.
#[test]
fn a_symlinked_head_never_silences_the_guard() {
    let repo = guarded();
    let root = repo.root.clone();
    repo.git(["config", "core.preferSymlinkRefs", "true"]);
    let wa = repo.create("A");
    repo.run_in(&wa, ["claim", "src/config.rs"]).ok();
    let info = repo.run_in(&wa, ["info", "--json"]).ok().json();
    assert_eq!(info["label"], "A");
    // A worktree made with git itself, HEAD a symbolic link into its admin entry.
    let by_hand = repo.base().join("by-hand");
    repo.git([
        "worktree",
        "add",
        "-q",
        "-b",
        "by-hand",
        by_hand.to_str().unwrap(),
    ]);
    let head = root.join(".git/worktrees/by-hand/HEAD");
    assert!(std::fs::symlink_metadata(&head)
        .unwrap()
        .file_type()
        .is_symlink());
    common::write_in(&by_hand, "src/config.rs", "over A's claim\n");
    let out = repo.git_try(&by_hand, ["commit", "-qam", "by hand"]);
    assert!(
        out.code == 1 || out.stderr.contains("cannot open the repository"),
        "exit {}: {}",
        out.code,
        out.stderr
    );
    if out.code == 0 {
        assert!(audit(&repo).contains("guard-error"), "{}", audit(&repo));
    }
}

/// A deliberate bypass is offered to a person (nobody acting) and, once used, recorded as a
/// bypass only: no later sweep reports the same commit as made without the hooks.
#[test]
fn a_deliberate_bypass_is_offered_to_a_person_and_reported_once_as_what_it_is() {
    let repo = guarded();
    let root = repo.root.clone();
    let wa = repo.create("A");
    repo.run_in(&wa, ["claim", "src/config.rs"]).ok();
    common::write_in(&root, "src/config.rs", "a person's fix\n");
    repo.git(["add", "src/config.rs"]);
    let refused = repo.git_try(&root, ["commit", "-q", "-m", "fix"]).fails(1);
    assert!(
        refused.stderr.contains("GIT_SESSION_GUARD=off git commit"),
        "{}",
        refused.stderr
    );
    let out = common::to_run(
        repo.git_cmd(&root)
            .env("GIT_SESSION_GUARD", "off")
            .args(["commit", "-q", "-m", "deliberate"])
            .output()
            .unwrap(),
    )
    .ok();
    assert!(out.stderr.contains("bypassed"), "{}", out.stderr);
    assert!(
        !out.stderr.contains("without the ownership"),
        "{}",
        out.stderr
    );
    let list = repo.run(["list"]).ok();
    assert!(
        !list.stderr.contains("without the ownership hooks"),
        "{}",
        list.stderr
    );
    let log = audit(&repo);
    assert_eq!(log.matches("\"guard-bypass\"").count(), 1, "{log}");
    assert_eq!(log.matches("guard-unguarded-commit").count(), 0, "{log}");
}

/// Every way a worktree can keep git from running the guard is named, with the change that
/// fixes it, and a hint after `hooks install` never says to run install again. What is ours,
/// install repairs (our hook file without its executable bit), and the guard then refuses for
/// real; what is the user's (their hook, their `core.hooksPath`) is named, never overridden.
#[test]
fn a_guard_kept_off_is_named_with_its_fix_and_install_repairs_only_what_is_ours() {
    use std::os::unix::fs::PermissionsExt;
    let chmod = |path: &std::path::Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    let one_line = |out: &common::Run| {
        let lines: Vec<&str> = out.stderr.lines().collect();
        let error = lines.iter().find(|l| l.starts_with("error: ")).copied();
        let hint = lines.iter().find(|l| l.starts_with("hint: ")).copied();
        (
            error.unwrap_or_default().to_string(),
            hint.unwrap_or_default().to_string(),
        )
    };

    // Ours, without its executable bit: git skips it without a word.
    let repo = guarded();
    let hook = repo.root.join(".git/hooks/pre-commit");
    chmod(&hook, 0o644);
    let (error, hint) = one_line(&repo.run(["hooks", "status"]).fails(1));
    assert!(error.contains("is not executable"), "{error}");
    assert!(hint.contains("hooks install"), "{hint}");
    let out = repo.run(["hooks", "install"]).ok();
    assert!(
        out.stderr.contains("made executable again"),
        "{}",
        out.stderr
    );
    let wa = repo.create("A");
    let wb = repo.create("B");
    repo.run_in(&wa, ["claim", "src/config.rs"]).ok();
    common::write_in(&wb, "src/config.rs", "B\n");
    let refused = repo.git_try(&wb, ["commit", "-qam", "B"]).fails(1);
    assert!(refused.stderr.contains("\"A\""), "{}", refused.stderr);

    // The user's own hook, with our block in it, made not executable: install leaves it so
    // (making it executable would run the rest of their hook too) and says how.
    let repo = guarded();
    let hook = repo.root.join(".git/hooks/pre-commit");
    let text = std::fs::read_to_string(&hook).unwrap();
    std::fs::write(&hook, format!("{text}echo the users own line\n")).unwrap();
    chmod(&hook, 0o644);
    let (error, hint) = one_line(&repo.run(["hooks", "install"]).fails(1));
    assert!(error.contains("is not executable"), "{error}");
    assert!(hint.starts_with("hint: `chmod +x "), "{hint}");
    let mode = std::fs::metadata(&hook).unwrap().permissions().mode();
    assert_eq!(mode & 0o111, 0, "install made the user's hook executable");
    // The same fix is in `hooks status --json`, for a program to show.
    let json = repo.run(["hooks", "status", "--json"]).fails(1).json();
    assert_eq!(json[0]["in_force"], false, "{json}");
    assert!(
        json[0]["fix"]
            .as_str()
            .is_some_and(|f| f.starts_with("`chmod +x ")),
        "{json}"
    );

    // Hooks turned off for the repository (`core.hooksPath=/dev/null`) with a git that has no
    // config-based hooks: install writes nothing, and says what to undo.
    let repo = TestRepo::new();
    repo.git(["config", "core.hooksPath", "/dev/null"]);
    let out = repo.run(["hooks", "install"]).fails(1);
    let (error, hint) = one_line(&out);
    assert!(
        error.contains("core.hooksPath is /dev/null"),
        "{}",
        out.stderr
    );
    assert!(hint.contains("git config --unset core.hooksPath"), "{hint}");
    assert!(!out.stderr.contains("File exists"), "{}", out.stderr);
    repo.git(["config", "--unset", "core.hooksPath"]);
    repo.run(["hooks", "install"]).ok();
    repo.run(["hooks", "status"]).ok();
}

/// Where git looks for hooks is read as git reads it, environment included: a `core.hooksPath`
/// in the file `GIT_CONFIG_GLOBAL` names (libgit2 alone reads only `~/.gitconfig`), or set for
/// the command by `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_0` or `GIT_CONFIG_PARAMETERS` (`git -c`),
/// moves the hooks out of the repository. `hooks status` then says the guard is off, install
/// puts it where git runs it (saying that directory serves other repositories too), the guard
/// refuses for real, and a repository git-session never worked in commits through it untouched.
#[test]
fn a_hooks_path_from_the_environment_is_where_the_guard_goes() {
    for way in [
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_COUNT",
        "GIT_CONFIG_PARAMETERS",
    ] {
        let repo = guarded();
        let shared = repo.base().join("everyones-hooks");
        let global = repo.base().join("global.gitconfig");
        std::fs::write(
            &global,
            format!("[core]\n\thooksPath = {}\n", shared.display()),
        )
        .unwrap();
        let dir = shared.display().to_string();
        let env: Vec<(String, String)> = match way {
            "GIT_CONFIG_GLOBAL" => vec![(way.into(), global.display().to_string())],
            "GIT_CONFIG_COUNT" => vec![
                (way.into(), "1".into()),
                ("GIT_CONFIG_KEY_0".into(), "core.hooksPath".into()),
                ("GIT_CONFIG_VALUE_0".into(), dir.clone()),
            ],
            _ => vec![(way.into(), format!("'core.hooksPath'='{dir}'"))],
        };
        let with_env = |mut cmd: std::process::Command| {
            cmd.envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
            common::to_run(cmd.output().unwrap())
        };
        let session = |dir: &std::path::Path, args: &[&str]| {
            let mut cmd = repo.cmd_in(dir);
            cmd.args(args);
            with_env(cmd)
        };
        let git = |dir: &std::path::Path, args: &[&str]| {
            let mut cmd = repo.git_cmd(dir);
            cmd.args(args);
            with_env(cmd)
        };
        // Ours are in .git/hooks, which git no longer reads.
        let status = session(&repo.root, &["hooks", "status"]);
        assert_eq!(status.code, 1, "{way}: {}", status.stderr);
        assert!(
            status.stderr.contains("everyones-hooks"),
            "{way}: {}",
            status.stderr
        );
        let install = session(&repo.root, &["hooks", "install"]);
        assert_eq!(install.code, 0, "{way}: {}", install.stderr);
        assert!(
            install.stderr.contains("outside this repository"),
            "{way}: {}",
            install.stderr
        );
        assert!(shared.join("pre-commit").is_file(), "{way}");
        assert_eq!(session(&repo.root, &["hooks", "status"]).code, 0, "{way}");
        let wa = repo.create("A");
        let wb = repo.create("B");
        repo.run_in(&wa, ["claim", "src/config.rs"]).ok();
        common::write_in(&wb, "src/config.rs", "B\n");
        let refused = git(&wb, &["commit", "-qam", "over A's path"]);
        assert_eq!(refused.code, 1, "{way}: {}", refused.stderr);
        assert!(
            refused.stderr.contains("\"A\""),
            "{way}: {}",
            refused.stderr
        );
        // Another repository, which the same setting hands the same hooks.
        let other = repo.base().join("other");
        assert_eq!(git(&repo.base(), &["init", "-q", "other"]).code, 0);
        common::write_in(&other, "f.txt", "f\n");
        assert_eq!(git(&other, &["add", "f.txt"]).code, 0);
        let commit = git(&other, &["commit", "-qm", "mine"]);
        assert_eq!(commit.code, 0, "{way}: {}", commit.stderr);
        assert!(!other.join(".git/git-session").exists(), "{way}");
    }
}

/// git runs no pre-commit hook for `cherry-pick`, `revert` or a rebase's picks, only the
/// post-commit after each: a commit they make over another session's path is reported as made
/// by that command (from HEAD's reflog), never blamed on `--no-verify`.
#[test]
fn commits_made_by_commands_without_a_pre_commit_hook_are_named_by_command() {
    let repo = guarded();
    let wa = repo.create("A");
    let wb = repo.create("B");
    repo.run_in(&wa, ["claim", "src/config.rs"]).ok();
    // A change over A's path, made beside the guard on purpose, on a branch of its own.
    let root = repo.root.clone();
    repo.git_in(&root, ["checkout", "-q", "-b", "side"]);
    common::write_in(&root, "src/config.rs", "side\n");
    let out = repo
        .git_cmd(&root)
        .env("GIT_SESSION_GUARD", "off")
        .args(["commit", "-qam", "side"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let side = repo.git(["rev-parse", "HEAD"]).trim().to_string();
    repo.git_in(&root, ["checkout", "-q", "main"]);
    let said = |out: common::Run| format!("{}{}", out.stdout, out.stderr);
    let picked = said(repo.git_try(&wb, ["cherry-pick", &side]).ok());
    assert!(picked.contains("`git cherry-pick` made it"), "{picked}");
    let reverted = said(repo.git_try(&wb, ["revert", "--no-edit", "HEAD"]).ok());
    assert!(reverted.contains("`git revert` made it"), "{reverted}");
    // A rebase replays B's commits over A's path onto a base that moved.
    repo.commit_file(&root, "elsewhere.txt", "x\n", "base moves");
    let rebased = said(repo.git_try(&wb, ["rebase", "main"]).ok());
    assert!(rebased.contains("`git rebase` made it"), "{rebased}");
    assert!(!format!("{picked}{reverted}{rebased}").contains("--no-verify"));
}
