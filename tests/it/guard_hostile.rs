//! Issue 3, the guard against hostile input: a bad record, an unreadable store, every index
//! version, labels and state files that try to reach outside the store.
use crate::common;
use common::{guarded, within};
use std::path::Path;

/// 8. One bad record never opens the guard: it is set aside, and the others still judge.
#[test]
fn a_bad_record_is_set_aside_and_the_guard_still_refuses() {
    let repo = common::a_owns_config();
    let root = repo.root.clone();
    let record = repo.store().join("sessions/A.toml");
    let before = std::fs::read(&record).unwrap();
    // A record that is not a file at all (a directory where a file should be).
    std::fs::create_dir_all(repo.store().join("sessions/broken.toml")).unwrap();
    let out = common::b_commits_over_a(&repo, "x\n", "over").fails(1);
    assert!(
        out.stderr.contains("owned by session \"A\""),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("sessions/broken.toml does not parse (it is a directory)"),
        "{}",
        out.stderr
    );
    assert_eq!(std::fs::read(&record).unwrap(), before);
    assert_ne!(repo.head_subject(&root), "over");
}

/// 8b. When the guard truly cannot judge (the store itself cannot be read), it lets the commit
/// through loudly and leaves the store as it was.
#[test]
fn internal_error_fails_open_without_touching_the_store() {
    let repo = guarded();
    let root = repo.root.clone();
    repo.attach("A");
    repo.run_as("A", ["claim", "src/config.rs"]).ok();
    // The store replaced by a file: nothing under it can be listed.
    let store = repo.store();
    let moved = repo.base().join("store-away");
    std::fs::rename(&store, &moved).unwrap();
    std::fs::write(&store, "not a directory\n").unwrap();
    let out = common::b_commits_over_a(&repo, "x\n", "through").ok();
    assert!(
        out.stderr
            .contains("internal error, letting the commit through"),
        "{}",
        out.stderr
    );
    assert_eq!(std::fs::read(&store).unwrap(), b"not a directory\n");
    assert_eq!(repo.head_subject(&root), "through");
}

/// The guard's own index reader: index versions 2, 3 (intent-to-add) and 4 (compressed paths).
#[test]
fn index_versions_are_read_exactly() {
    let repo = common::two_sessions_in_one_worktree();
    let root = repo.root.clone();
    repo.run_as("A", ["claim", "src/lib.rs"]).ok();
    for version in ["4", "3", "2"] {
        repo.git(["update-index", "--index-version", version]);
        common::write_in(&root, "src/lib.rs", &format!("v{version}\n"));
        common::write_in(&root, "other.txt", &format!("v{version}\n"));
        repo.git(["add", "src/lib.rs", "other.txt"]);
        if version == "3" {
            common::write_in(&root, "later.txt", "i-t-a\n");
            repo.git(["add", "-N", "later.txt"]);
        }
        let out = repo
            .git_as(&root, "B", ["commit", "-q", "-m", "x"])
            .fails(1);
        assert!(
            out.stderr.contains("commit refused: src/lib.rs is owned"),
            "v{version}: {}",
            out.stderr
        );
        repo.git(["reset", "-q", "--", "src/lib.rs"]);
        repo.git_as(
            &root,
            "B",
            ["commit", "-q", "-m", &format!("other v{version}")],
        )
        .ok();
        repo.git(["checkout", "--", "src/lib.rs"]);
    }
}

/// Every file outside `.git`, with its content: what a hostile label must never change.
fn files_outside_git(root: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.file_name().is_some_and(|n| n == ".git") && dir == root.join("repo") {
                continue;
            }
            let t = e.file_type().unwrap();
            if t.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(root).unwrap().display().to_string();
                out.insert(rel, std::fs::read(&p).unwrap_or_default());
            }
        }
    }
    out
}

/// Labels from the environment never become paths: whatever GIT_SESSION holds, a commit through
/// the hooks, `claim`, `list` and the context hook touch no file outside the store, and say
/// that the label is ignored.
#[test]
fn hostile_git_session_labels_never_touch_files_outside_the_store() {
    let repo = guarded();
    let root = repo.root.clone();
    repo.commit_file(&root, "Cargo.toml", "[package]\n", "cargo");
    // Where `sessions/<label>.toml` would land for the traversals below.
    std::fs::write(repo.base().join("x.toml"), "outside = true\n").unwrap();
    let hostile = [
        "../../../Cargo",
        "../../../../x",
        "/etc/passwd",
        "a/../../b",
        "..",
        ".hidden",
        "-rf",
        "x\ny",
    ];
    for (i, label) in hostile.iter().enumerate() {
        let file = format!("f{i}.txt");
        common::write_in(&root, &file, "x\n");
        let before = files_outside_git(&repo.base());
        repo.git_as(&root, label, ["add", &file]);
        let commit = repo.git_as(&root, label, ["commit", "-qm", &file]);
        assert_eq!(commit.code, 0, "{label:?}: {}", commit.stderr);
        assert!(
            commit.stderr.contains("GIT_SESSION is ignored"),
            "{label:?}: {}",
            commit.stderr
        );
        repo.run_as(label, ["list"]);
        repo.run_as(label, ["claim", "src/lib.rs"]);
        let mut hook = repo.as_session(label);
        hook.args(["context", "hook"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        let mut child = hook.spawn().unwrap();
        {
            use std::io::Write;
            let payload = serde_json::json!({
                "session_id": "s1", "transcript_path": "/nonexistent.jsonl",
                "cwd": root, "hook_event_name": "PostToolUse", "tool_name": "Write",
                "tool_input": {"file_path": root.join("src/lib.rs")}
            });
            let _ = child
                .stdin
                .take()
                .unwrap()
                .write_all(payload.to_string().as_bytes());
        }
        child.wait().unwrap();
        let after = files_outside_git(&repo.base());
        assert_eq!(
            before.keys().collect::<Vec<_>>(),
            after.keys().collect::<Vec<_>>(),
            "{label:?} changed the files outside .git"
        );
        assert!(before == after, "{label:?} changed a file's content");
    }
}

/// The class: any state path that is not a small regular UTF-8 TOML file (garbage bytes, a
/// directory, a FIFO, a symlink to /dev/zero, a dangling symlink, a huge file) is set aside with a
/// warning naming it, and every command, the guard and the hook keep working: nothing hangs,
/// nothing fails because of it, and the guard still refuses another session's owned path.
#[test]
fn any_bad_state_file_is_set_aside_and_everything_keeps_working() {
    type Make = fn(&Path);
    let kinds: [(&str, Make); 7] = [
        ("invalid utf-8", |p| {
            std::fs::write(p, b"version = 1\nlabel = \"\xff\xfe\"\n").unwrap()
        }),
        ("binary garbage", |p| {
            std::fs::write(p, [0u8, 159, 146, 150, 0, 1, 2, 255]).unwrap()
        }),
        ("directory", |p| {
            std::fs::create_dir_all(p.join("inner")).unwrap()
        }),
        ("fifo", |p| {
            let ok = std::process::Command::new("mkfifo")
                .arg(p)
                .status()
                .unwrap();
            assert!(ok.success());
        }),
        ("symlink to /dev/zero", |p| {
            std::os::unix::fs::symlink("/dev/zero", p).unwrap()
        }),
        ("dangling symlink", |p| {
            std::os::unix::fs::symlink("/nonexistent/x", p).unwrap()
        }),
        ("huge file", |p| {
            let f = std::fs::File::create(p).unwrap();
            f.set_len(64 << 20).unwrap();
        }),
    ];
    for (kind, make) in kinds {
        let repo = common::a_owns_config();
        let root = repo.root.clone();
        let store = repo.store();
        std::fs::create_dir_all(store.join("agents")).unwrap();
        // The same bad thing as a session record, an agent record and the derived index.
        for rel in ["sessions/zz.toml", "agents/agent-1.toml", "claims.index"] {
            let p = store.join(rel);
            let _ = std::fs::remove_file(&p);
            make(&p);
        }
        let ctx = kind.to_string();
        let mut list = repo.cmd_in(&root);
        list.args(["list", "--json"]);
        let out = within(list, 20, "");
        assert_eq!(out.code, 0, "{ctx}: list: {}", out.stderr);
        assert_eq!(common::labels_of(&out.json()), ["A", "B"], "{ctx}");
        assert!(
            out.stderr.contains("sessions/zz.toml"),
            "{ctx}: {}",
            out.stderr
        );
        let mut info = repo.cmd_in(&root);
        info.args(["info", "A"]);
        assert_eq!(within(info, 20, "").code, 0, "{ctx}: info");
        // The guard still refuses B's commit over A's path.
        common::write_in(&root, "src/config.rs", &format!("{kind}\n"));
        repo.git(["add", "-A"]);
        let mut commit = repo.git_cmd_as(&root, "B");
        commit.args(["commit", "-qm", "over"]);
        let out = within(commit, 30, "");
        assert_eq!(
            out.code, 1,
            "{ctx}: the guard let B commit over A:\n{}",
            out.stderr
        );
        assert!(
            out.stderr.contains("owned by session \"A\""),
            "{ctx}: {}",
            out.stderr
        );
        repo.git(["reset", "-q", "--hard"]);
        // Claims and creation keep working.
        let mut claim = repo.as_session("B");
        claim.args(["claim", "src/lib.rs"]);
        let out = within(claim, 20, "");
        assert_eq!(out.code, 0, "{ctx}: claim: {}", out.stderr);
        let mut create = repo.cmd_in(&root);
        create.args(["create", "fresh"]);
        let out = within(create, 60, "");
        assert_eq!(out.code, 0, "{ctx}: create: {}", out.stderr);
        // The context hook never breaks the agent: exit 0, within its budget.
        let mut hook = repo.cmd_in(&root);
        hook.args(["context", "hook"]);
        let payload = serde_json::json!({
            "session_id": "agent-1", "transcript_path": "/nonexistent.jsonl",
            "cwd": root, "hook_event_name": "PostToolUse", "tool_name": "Write",
            "tool_input": {"file_path": root.join("src/lib.rs")}
        });
        let out = within(hook, 20, &payload.to_string());
        assert_eq!(out.code, 0, "{ctx}: hook: {}", out.stderr);
        // Set aside, not deleted: the evidence is kept beside the store path.
        let aside = std::fs::read_dir(store.join("sessions"))
            .unwrap()
            .flatten()
            .any(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with("zz.toml.corrupt-")
            });
        assert!(aside, "{ctx}: sessions/zz.toml was not set aside");
    }
}
