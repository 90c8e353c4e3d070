//! A bad label from each place labels come from (a command-line argument, `GIT_SESSION`, a
//! WorktreeCreate payload, a name or a record in the store) is refused with the one-line error
//! and its hint, or skipped with a warning; nothing is written for it and nothing is lost.

use crate::common;

use common::{to_run, TestRepo};
use std::collections::BTreeMap;
use std::path::Path;

const RULE_HINT: &str = "hint: a label is 1 to 64 characters of A-Z a-z 0-9 . _ - /, not \
                         starting with -, . or /, not ending in / or ., without .. or //, no part \
                         starting with . or ending in .lock, and not HEAD";

/// Every state file under `dir` with its bytes: what "nothing changed, nothing lost" compares.
/// The derived claims index is left out: any reader may (re)build it (see the store's doc).
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).unwrap().display().to_string();
                if rel == "claims.index" {
                    continue;
                }
                out.insert(rel, std::fs::read(&path).unwrap_or_default());
            }
        }
    }
    out
}

#[test]
fn a_bad_label_argument_is_refused_in_one_line_by_every_command_and_changes_nothing() {
    let repo = TestRepo::new();
    let wt = repo.create("good");
    let before = files(&repo.store());
    let branches = repo.git(["branch", "--list"]);
    for bad in [
        "../x",
        "a\nb",
        "-rf",
        "x.lock",
        "HEAD",
        "a//b",
        "a/",
        "",
        &"y".repeat(65),
    ] {
        let session = format!("--session={bad}");
        // `--` before each label: one starting with `-` must reach the command, not clap.
        // `create` takes its label before `--` (a command after it), where clap refuses a `-`.
        for args in [
            vec!["create", bad],
            vec!["info", "--", bad],
            vec!["setup", "--", bad],
            vec!["cleanup", "--force", "--yes", "--", "good", bad],
            vec!["handoff", "show", "--", bad],
            vec!["handoff", "list", "--", bad],
            vec!["handoff", "write", &session, "-"],
        ]
        .into_iter()
        .filter(|args| args[0] != "create" || !bad.starts_with('-'))
        {
            let out = repo.run(&args).fails(2);
            let lines: Vec<&str> = out.stderr.lines().collect();
            assert_eq!(lines.len(), 2, "{args:?}: {}", out.stderr);
            assert!(
                lines[0].starts_with("error: invalid label \""),
                "{args:?}: {}",
                out.stderr
            );
            assert_eq!(lines[1], RULE_HINT, "{args:?}");
            assert!(out.stdout.is_empty(), "{args:?}");
        }
    }
    // Nothing was written, moved or removed: not by the refusals, and not by `cleanup`, which
    // checks every label before it removes any session.
    assert_eq!(files(&repo.store()), before);
    assert_eq!(repo.git(["branch", "--list"]), branches);
    assert!(wt.is_dir());
    assert_eq!(repo.labels(), ["good"]);
}

#[test]
fn a_bad_git_session_is_ignored_with_one_warning_and_the_worktree_decides() {
    let repo = TestRepo::new();
    // Set up as a user would: with the guard, so no warning says it is missing.
    repo.run(["hooks", "install"]).ok();
    let wt = repo.create("good");
    // What a good `info` writes (its disk-use cache) is there before the bad names come.
    repo.run_in(&wt, ["info", "--json"]).ok();
    let before = files(&repo.store());
    for bad in ["../../x", "a b", "x\u{1b}[31m"] {
        // In the session's worktree: the worktree names the session.
        let mut cmd = repo.cmd_in(&wt);
        cmd.env("GIT_SESSION", bad).args(["info", "--json"]);
        let out = to_run(cmd.output().unwrap()).ok();
        assert_eq!(out.json()["label"], "good");
        let warnings: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(warnings.len(), 1, "{}", out.stderr);
        assert!(
            warnings[0].starts_with("warning: GIT_SESSION is ignored: invalid label \""),
            "{}",
            out.stderr
        );
        assert!(
            !warnings[0].contains('\u{1b}'),
            "escaped: {:?}",
            warnings[0]
        );
        // In the main worktree nobody is acting: a claim is refused, and nothing is claimed.
        let mut cmd = repo.cmd_in(&repo.root);
        cmd.env("GIT_SESSION", bad).args(["claim", "README.md"]);
        let out = to_run(cmd.output().unwrap()).fails(1);
        assert!(
            out.stderr
                .contains("error: no session is acting here, so there is nothing to claim for"),
            "{}",
            out.stderr
        );
    }
    assert_eq!(files(&repo.store()), before);
}

#[test]
fn a_worktree_create_name_that_is_no_label_becomes_one_and_never_a_path() {
    let repo = TestRepo::new();
    for name in [
        "../../escape",
        "/abs/olute",
        "a\nb",
        ".git",
        "x.lock",
        "HEAD",
    ] {
        let out = repo
            .worktree_hook(
                "create",
                serde_json::json!({"name": name, "cwd": repo.root.display().to_string()}),
            )
            .ok();
        let path = out.stdout.lines().last().unwrap().to_string();
        let path = Path::new(&path);
        // Inside the worktrees directory, under a name made of label characters only.
        assert_eq!(
            path.parent(),
            Some(repo.sessions_dir().as_path()),
            "{name:?}"
        );
        let label = path.file_name().unwrap().to_str().unwrap();
        assert!(
            label
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)),
            "{name:?} -> {label}"
        );
        assert!(repo
            .store()
            .join(format!("sessions/{label}.toml"))
            .is_file());
    }
    assert!(!repo.base().join("escape").exists());
    assert!(!Path::new("/abs/olute").exists());
    assert_eq!(repo.labels().len(), 6);
}

#[test]
fn badly_named_store_files_are_skipped_and_a_record_with_a_bad_label_is_set_aside() {
    let repo = TestRepo::new();
    repo.run(["hooks", "install"]).ok();
    repo.create("good");
    let store = repo.store();
    let record = std::fs::read_to_string(store.join("sessions/good.toml")).unwrap();
    // Names no label can have: nobody reads them as records, and nobody touches them.
    for name in ["bad name", "-x", "x.lock", "..hidden", "a..b", "HEAD"] {
        std::fs::write(
            store.join(format!("sessions/{name}.toml")),
            record.replace("label = \"good\"", &format!("label = {name:?}")),
        )
        .unwrap();
    }
    std::fs::create_dir_all(store.join("handoffs/..bad")).unwrap();
    std::fs::write(store.join("handoffs/..bad/1.md"), "# stray\n").unwrap();
    // A file named like a label whose record names a bad one: it does not parse as a record.
    let tampered = record.replace("label = \"good\"", "label = \"../../x\"");
    std::fs::write(store.join("sessions/other.toml"), &tampered).unwrap();
    let before = files(&store);

    let out = repo.run(["list", "--json"]).ok();
    let got: Vec<_> = out
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["label"].clone())
        .collect();
    assert_eq!(got, [serde_json::json!("good")]);
    let warnings: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(warnings.len(), 1, "{}", out.stderr);
    assert!(
        warnings[0].contains("sessions/other.toml does not parse"),
        "{}",
        out.stderr
    );
    assert!(warnings[0].contains("set aside as"), "{}", out.stderr);

    // Lost nothing: every badly named file is where it was, byte for byte, and the tampered
    // record's bytes are kept beside it.
    let after = files(&store);
    for (name, bytes) in &before {
        if name == "sessions/other.toml" {
            continue;
        }
        assert_eq!(after.get(name), Some(bytes), "{name}");
    }
    let aside: Vec<_> = after
        .iter()
        .filter(|(n, _)| n.starts_with("sessions/other.toml.corrupt-"))
        .collect();
    assert_eq!(aside.len(), 1, "{:?}", after.keys());
    assert_eq!(aside[0].1, tampered.as_bytes());

    // The other readers skip the same names: completion, handoff listing, claims.
    let out = repo.run(["__complete-labels"]).ok();
    assert_eq!(out.stdout, "good\n");
    let out = repo.run(["handoff", "list", "--all", "--json"]).ok();
    assert_eq!(out.json(), serde_json::json!([]));
    repo.run(["claims"]).ok();
    assert_eq!(repo.labels(), ["good"]);
}
