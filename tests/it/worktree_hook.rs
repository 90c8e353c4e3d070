//! Claude Code's WorktreeCreate/WorktreeRemove hooks, driven as Claude Code drives them: JSON on
//! stdin, the path on the last stdout line, removal only when cleanup would allow it.

use crate::common;

use common::TestRepo;

#[test]
fn create_makes_a_session_and_prints_its_path_last() {
    let repo = TestRepo::new();
    let cwd = repo.root.display().to_string();
    let out = repo
        .worktree_hook(
            "create",
            serde_json::json!({
        "hook_event_name": "WorktreeCreate", "name": "feature-auth", "cwd": cwd}),
        )
        .ok();
    let path = out.stdout.lines().last().unwrap().to_string();
    assert_eq!(
        path,
        repo.sessions_dir()
            .join("feature-auth")
            .display()
            .to_string()
    );
    assert!(std::path::Path::new(&path).is_dir());
    // A name that is no label maps to one, the same one every time; asking again hands back
    // the same worktree instead of failing.
    let odd = serde_json::json!({"name": "fix the ../login", "cwd": cwd});
    let first = repo.worktree_hook("create", odd.clone()).ok().stdout;
    let again = repo.worktree_hook("create", odd).ok().stdout;
    assert_eq!(first, again);
    let mut got = repo.labels();
    got.sort();
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got[1].starts_with("fix-the-login-"), "{got:?}");
    // Input that names nothing fails the creation (non-zero), leaving nothing.
    repo.worktree_hook("create", serde_json::json!({"cwd": cwd}))
        .fails(2);
    assert_eq!(repo.labels().len(), 2);
}

/// Every payload shape Claude Code has sent or documented for WorktreeCreate: `name` (the
/// runtime), `worktree_name` + `source_ref` + `base_path` (the hooks reference), `worktree_path`
/// (older builds). The reference's `source_ref` is where the session starts; a bad one fails.
#[test]
fn create_reads_every_documented_payload_shape() {
    let repo = TestRepo::new();
    let cwd = repo.root.display().to_string();
    repo.git(["branch", "older", "HEAD"]);
    repo.write("later.txt", "x\n");
    repo.git(["add", "later.txt"]);
    repo.git(["commit", "-qm", "later"]);
    let older = repo.git(["rev-parse", "older"]);
    let documented = repo
        .worktree_hook(
            "create",
            serde_json::json!({"hook_event_name": "WorktreeCreate", "session_id": "s1",
            "transcript_path": "/nonexistent/t.jsonl", "cwd": cwd, "worktree_name": "doc-shape",
            "source_ref": "older", "base_path": repo.base().join(".worktrees")}),
        )
        .ok();
    let path = std::path::PathBuf::from(documented.stdout.lines().last().unwrap());
    assert_eq!(path, repo.sessions_dir().join("doc-shape"));
    assert_eq!(
        repo.git_in(&path, ["rev-parse", "HEAD"]),
        older,
        "started from source_ref"
    );
    assert!(
        !repo.base().join(".worktrees").exists(),
        "base_path is not followed"
    );
    let old_shape = repo
        .worktree_hook(
            "create",
            serde_json::json!({"cwd": cwd, "worktree_path": repo.base().join("x/agent-7")}),
        )
        .ok();
    assert!(
        old_shape.stdout.trim_end().ends_with("/agent-7"),
        "{}",
        old_shape.stdout
    );
    let bad = repo.worktree_hook(
        "create",
        serde_json::json!({"cwd": cwd, "name": "bad-base", "source_ref": "no-such-ref"}),
    );
    assert_ne!(bad.code, 0, "a bad source_ref must fail the creation");
    assert!(!repo.labels().contains(&"bad-base".to_string()));
}

#[test]
fn remove_takes_a_clean_session_and_keeps_one_with_work() {
    let repo = TestRepo::new();
    let cwd = repo.root.display().to_string();
    let clean = repo
        .worktree_hook("create", serde_json::json!({"name": "clean", "cwd": cwd}))
        .ok();
    let clean = clean.stdout.lines().last().unwrap().to_string();
    let busy = repo
        .worktree_hook("create", serde_json::json!({"name": "busy", "cwd": cwd}))
        .ok();
    let busy = busy.stdout.lines().last().unwrap().to_string();
    let busy_path = std::path::PathBuf::from(&busy);
    std::fs::write(busy_path.join("work.txt"), "unsaved\n").unwrap();
    repo.git_in(&busy_path, ["add", "work.txt"]);
    repo.git_in(&busy_path, ["commit", "-qm", "agent work"]);

    repo.worktree_hook(
        "remove",
        serde_json::json!({"worktree_path": clean, "cwd": cwd}),
    )
    .ok();
    // Kept: the exit status says so, and Claude Code then says the worktree was kept.
    let out = repo
        .worktree_hook(
            "remove",
            serde_json::json!({"worktree_path": busy, "cwd": cwd}),
        )
        .fails(1);
    assert!(
        out.stderr.contains("kept session \"busy\""),
        "{}",
        out.stderr
    );
    assert_eq!(repo.labels(), ["busy"]);
    assert!(busy_path.join("work.txt").is_file());
    let audit = std::fs::read_to_string(repo.store().join("audit.log")).unwrap();
    let kept: Vec<&str> = audit
        .lines()
        .filter(|l| l.contains("agent-worktree-kept"))
        .collect();
    assert_eq!(kept.len(), 1, "{audit}");
    assert!(kept[0].contains("not in main"), "{}", kept[0]);
    // `list` and `info` say it was kept and why, until someone cleans it up.
    let listed = repo.run(["list", "--json"]).ok().stdout;
    let rows: serde_json::Value = serde_json::from_str(&listed).unwrap();
    assert_eq!(rows[0]["label"], "busy");
    assert_eq!(
        rows[0]["kept"]["reasons"][0], "1 commit not in main",
        "{listed}"
    );
    let table = repo.run(["list"]).ok().stdout;
    assert!(table.contains("(kept)"), "{table}");
    let info = repo.run(["info", "busy"]).ok().stdout;
    assert!(
        info.contains("its agent session ended while it held work")
            && info.contains("  1 commit not in main"),
        "{info}"
    );
    // A path that is no session is left alone, and not reported as removed; one that is
    // already gone is.
    let other = repo.base().join("elsewhere");
    std::fs::create_dir_all(&other).unwrap();
    let out = repo
        .worktree_hook(
            "remove",
            serde_json::json!({"worktree_path": other, "cwd": cwd}),
        )
        .fails(1);
    assert!(out.stderr.contains("left as it is"), "{}", out.stderr);
    assert!(other.is_dir());
    repo.worktree_hook(
        "remove",
        serde_json::json!({"worktree_path": repo.base().join("gone"), "cwd": cwd}),
    )
    .ok();
}

#[test]
fn context_install_configures_both_hooks_once() {
    let repo = TestRepo::new();
    let settings = repo.root.join(".claude/settings.json");
    repo.run(["context", "install"]).ok();
    repo.run(["context", "install"]).ok();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    for (event, command) in [
        ("WorktreeCreate", "git session worktree-hook create"),
        ("WorktreeRemove", "git session worktree-hook remove"),
    ] {
        let groups = v["hooks"][event].as_array().unwrap();
        assert_eq!(groups.len(), 1, "{event}: {v}");
        assert_eq!(groups[0]["hooks"][0]["command"], command);
    }
}
