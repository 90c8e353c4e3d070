//! `create`: the path printed alone and the session listed active, labels refused before
//! anything is made, creations and updates of one session at once, the configured copies and
//! setup commands, a damaged record set aside, a work tree apart from its repository.
//!
//! Creations that fail, and what their rollback leaves, are in `create_rollback`.

use crate::common;
use common::TestRepo;

#[test]
fn create_prints_the_path_alone_and_lists_it_active() {
    let repo = TestRepo::new();
    let out = repo.run(["create", "fix-login"]).ok();
    let path = repo.sessions_dir().join("fix-login");
    assert_eq!(out.stdout, format!("{}\n", path.display()));
    assert!(path.join("README.md").is_file());
    assert_eq!(
        repo.git_in(&path, ["symbolic-ref", "HEAD"]).trim(),
        "refs/heads/session/fix-login"
    );
    // `cd "$(git session create x)"` as a shell would do it.
    let shell = repo
        .git_cmd(&repo.root)
        .args(["session", "create", "second"])
        .output()
        .unwrap();
    assert!(
        shell.status.success(),
        "{}",
        String::from_utf8_lossy(&shell.stderr)
    );
    let list = repo.run(["list", "--json"]).ok().json();
    let rows = list.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    let row = rows.iter().find(|r| r["label"] == "fix-login").unwrap();
    assert_eq!(row["state"], "active");
    assert_eq!(row["live"], true);
    assert_eq!(row["branch"], "session/fix-login");
    assert_eq!(row["merged"], "ancestor");
    assert_eq!(row["dirty"], 0);
}

#[test]
fn bad_labels_are_refused_before_anything_is_created() {
    let repo = TestRepo::new();
    let long = "x".repeat(300);
    for label in [
        "../x",
        "/abs",
        "-rf",
        "--orphan",
        "",
        "..",
        "a..b",
        "x.lock",
        "@",
        "HEAD",
        "a b",
        "a\nb",
        long.as_str(),
    ] {
        // No label starts with `-`: clap refuses those as options (below); everything after
        // `--` is a command.
        if label.starts_with('-') {
            continue;
        }
        let out = repo.run(["create", label]);
        assert_eq!(out.code, 2, "{label:?} was accepted: {out:?}");
        assert!(
            out.stderr.starts_with("error: invalid label"),
            "{label:?}: {}",
            out.stderr
        );
        assert!(
            out.stderr.contains("hint: a label is 1 to 64 characters"),
            "{}",
            out.stderr
        );
        assert_eq!(out.stderr.lines().count(), 2, "{label:?}: {}", out.stderr);
    }
    assert!(!repo.sessions_dir().exists());
    assert!(
        !repo.store().join("sessions").exists()
            || std::fs::read_dir(repo.store().join("sessions"))
                .unwrap()
                .next()
                .is_none()
    );
    assert_eq!(repo.git(["for-each-ref", "refs/heads/session/"]), "");
    // An option-looking label is clap's to refuse, also with exit 2.
    repo.run(["create", "-rf"]).fails(2);
    repo.run(["create", "--orphan"]).fails(2);
}

#[test]
fn sixteen_creates_at_once_all_succeed() {
    let repo2 = TestRepo::new();
    let spawned: Vec<_> = (0..16)
        .map(|i| {
            repo2
                .cmd_in(&repo2.root)
                .args(["create", &format!("par-{i}")])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in spawned {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let list = repo2.run(["list", "--json"]).ok().json();
    let mut labels: Vec<String> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap().to_string())
        .collect();
    labels.sort();
    let mut want: Vec<String> = (0..16).map(|i| format!("par-{i}")).collect();
    want.sort();
    assert_eq!(labels, want);
    let worktrees = repo2.git(["worktree", "list", "--porcelain"]);
    assert_eq!(
        worktrees
            .matches("\nbranch refs/heads/session/par-")
            .count(),
        16,
        "{worktrees}"
    );
    assert_eq!(worktrees.matches("worktree ").count(), 17);
    assert!(!worktrees.contains("locked"), "{worktrees}");
}

#[test]
fn corrupt_state_file_is_set_aside_and_the_rest_still_listed() {
    let repo = TestRepo::new();
    repo.create("good");
    repo.create("bad");
    let file = repo.store().join("sessions/bad.toml");
    std::fs::write(&file, "version = 1\nlabel = \"bad\n").unwrap();
    let out = repo.run(["list", "--json"]).ok();
    let rows = out.json();
    // The session itself is not lost with its record: git's state registers it again.
    let labels: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["bad", "good"]);
    assert!(
        out.stderr
            .contains("registered session \"bad\" again from its worktree"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("sessions/bad.toml does not parse"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("set aside as"), "{}", out.stderr);
    let aside: Vec<_> = std::fs::read_dir(repo.store().join("sessions"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().into_string().unwrap())
        .filter(|n| n.starts_with("bad.toml.corrupt-"))
        .collect();
    assert_eq!(aside.len(), 1);
    // Nothing was lost: the bad file's bytes are kept.
    let kept = std::fs::read_to_string(repo.store().join("sessions").join(&aside[0])).unwrap();
    assert_eq!(kept, "version = 1\nlabel = \"bad\n");
}

#[test]
fn create_copies_configured_files_and_runs_setup_only_once_approved() {
    let repo = TestRepo::new();
    repo.write(".gitignore", ".env\n");
    repo.git(["add", ".gitignore"]);
    repo.git(["commit", "-qm", "ignore .env"]);
    repo.write(".env", "SECRET=1\n");
    repo.write(
        ".git-session.toml",
        "[create]\ncopy = [\".env\"]\nrun = [\"echo ran > setup-ran.txt\"]\n",
    );
    // No terminal, no approval: the repository's commands do not run.
    let out = repo.run(["create", "first"]).ok();
    let first = repo.sessions_dir().join("first");
    assert_eq!(out.stdout.trim_end(), first.display().to_string());
    assert_eq!(
        std::fs::read_to_string(first.join(".env")).unwrap(),
        "SECRET=1\n"
    );
    assert!(!first.join("setup-ran.txt").exists());
    assert!(
        out.stderr.contains("are not approved, so they did not run: `echo ran > setup-ran.txt`")
            && out
                .stderr
                .contains("hint: read them, then run them in this session with: git session setup first --approve-run"),
        "{}",
        out.stderr
    );
    // Approved once, they run, and keep running for the same list.
    let out = repo.run(["create", "second", "--approve-run"]).ok();
    assert_eq!(
        out.stdout.lines().count(),
        1,
        "setup output leaked to stdout: {}",
        out.stdout
    );
    assert!(repo.sessions_dir().join("second/setup-ran.txt").exists());
    repo.run(["create", "third"]).ok();
    assert!(repo.sessions_dir().join("third/setup-ran.txt").exists());
    // A changed list needs approval again.
    repo.write(
        ".git-session.toml",
        "[create]\nrun = [\"echo changed > changed.txt\"]\n",
    );
    repo.run(["create", "fourth"]).ok();
    assert!(!repo.sessions_dir().join("fourth/changed.txt").exists());
    // The user's own configuration needs no approval.
    repo.write(".git-session.toml", "");
    let user = repo.home.join(".config/git-session");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(
        user.join("config.toml"),
        "[create]\nrun = [\"echo mine > mine.txt\"]\n",
    )
    .unwrap();
    repo.run(["create", "fifth"]).ok();
    assert!(repo.sessions_dir().join("fifth/mine.txt").exists());
}

#[test]
fn fifty_concurrent_updates_of_one_session_all_survive() {
    let repo = TestRepo::new();
    repo.create("busy");
    let children: Vec<_> = (0..50)
        .map(|i| {
            repo.cmd_in(&repo.root)
                .env("GIT_SESSION", "busy")
                .args(["claim", &format!("src/file{i:02}.rs")])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let record = std::fs::read_to_string(repo.store().join("claims/busy.toml")).unwrap();
    for i in 0..50 {
        assert!(
            record.contains(&format!("path = \"src/file{i:02}.rs\"")),
            "claim {i} lost:\n{record}"
        );
    }
    let claims = repo.run(["claims", "--json"]).ok().json();
    assert_eq!(claims.as_array().unwrap().len(), 50);
    // No lock or temporary file is left behind.
    let leftovers: Vec<_> = ["sessions", "claims"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(repo.store().join(dir)).unwrap())
        .flatten()
        .map(|e| e.file_name().into_string().unwrap())
        .filter(|n| !n.ends_with(".toml"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// `core.worktree` naming a directory with no `.git` in it (the work tree apart from the
/// repository): git run there finds no repository, so porcelain runs where git finds it; the
/// session goes next to the work tree, and create and cleanup both work.
#[test]
fn core_worktree_apart_from_the_repository() {
    let repo = TestRepo::new();
    let x = repo.base().join("x");
    let y = repo.base().join("y");
    std::fs::create_dir_all(&y).unwrap();
    repo.git_in(
        &repo.base(),
        ["init", "-q", "-b", "main", x.to_str().unwrap()],
    );
    repo.git_in(&x, ["config", "core.worktree", y.to_str().unwrap()]);
    common::write_in(&y, "file.txt", "y\n");
    repo.git_in(&x, ["add", "file.txt"]);
    repo.git_in(&x, ["commit", "-qm", "first"]);
    let out = repo.run_in(&x, ["create", "s1"]).ok();
    let wt = std::path::PathBuf::from(out.stdout.trim());
    assert_eq!(wt, repo.base().join("y.sessions/s1"));
    assert!(wt.join("file.txt").exists());
    assert_eq!(
        repo.git_in(&wt, ["rev-parse", "--show-toplevel"]).trim(),
        wt.to_str().unwrap()
    );
    repo.run_in(&x, ["cleanup", "s1"]).ok();
    assert!(!wt.exists());
}
