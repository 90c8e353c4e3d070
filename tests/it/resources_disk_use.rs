//! Each worktree's own disk use (`list --wide`, `list --json`, `info`): what it holds beyond
//! what it shares with the main worktree, measured once per change and kept in the store.

use crate::common::TestRepo;
use serde_json::Value;
use std::path::{Path, PathBuf};

const MIB: u64 = 1 << 20;

/// The `disk` object `list --json` shows for each session, by label.
fn disk_of(repo: &TestRepo, envs: &[(&str, &str)]) -> std::collections::BTreeMap<String, Value> {
    let mut cmd = repo.cmd_in(&repo.root);
    cmd.args(["list", "--json"]);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = crate::common::to_run(cmd.output().unwrap()).ok();
    out.json()
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["label"].as_str().unwrap().to_string(), s["disk"].clone()))
        .collect()
}

fn bytes(disk: &Value) -> u64 {
    disk["bytes"]
        .as_u64()
        .unwrap_or_else(|| panic!("no bytes in {disk}"))
}

/// A file of `len` bytes that are not zero (so no file system stores it sparse).
fn write_big(path: &Path, len: u64) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, vec![0x5a_u8; len as usize]).unwrap();
}

fn repo_with_build_dirs() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(".gitignore", "target/\nnode_modules\n");
    repo.write(".git-session.toml", "[create]\nlink = [\"node_modules\"]\n");
    repo.git(["add", ".gitignore", ".git-session.toml"]);
    repo.git(["commit", "-qm", "ignore build output"]);
    // The main worktree's packages: 1 MiB the sessions share by the link.
    write_big(&repo.root.join("node_modules/pkg/index.bin"), MIB);
    repo
}

#[test]
fn a_build_file_counts_and_a_linked_directory_and_hard_links_do_not() {
    let repo = repo_with_build_dirs();
    let plain = repo.create("plain");
    let built = repo.create("built");
    assert!(std::fs::symlink_metadata(plain.join("node_modules"))
        .unwrap()
        .is_symlink());
    // `built` builds 1 MiB of ignored output; `plain` hard-links the main worktree's 1 MiB.
    write_big(&built.join("target/debug/app"), MIB);
    std::fs::hard_link(
        repo.root.join("node_modules/pkg/index.bin"),
        plain.join("target-shared.bin"),
    )
    .unwrap();
    repo.run(["create", "--attach", "here"]).ok();
    let disk = disk_of(&repo, &[]);
    let (p, b) = (bytes(&disk["plain"]), bytes(&disk["built"]));
    assert!(
        p < 64 << 10,
        "the linked node_modules and the hard link count nothing: {p}"
    );
    assert!(
        (MIB..MIB + (64 << 10)).contains(&(b - p)),
        "1 MiB of build output is 1 MiB more: {b} vs {p}"
    );
    assert_eq!(
        disk["here"],
        Value::Null,
        "an attached session owns no worktree"
    );
    // `info` says the same, in JSON and in words; `list --wide` has the column.
    let info = repo.run(["info", "built", "--json"]).ok().json();
    assert_eq!(info["disk"], disk["built"]);
    let text = repo.run(["info", "built"]).ok().stdout;
    assert!(
        text.contains("disk      1.0 MiB of its own in ")
            && text.contains("(shared and linked files not counted; measured now)"),
        "{text}"
    );
    let wide = repo.run(["list", "--wide"]).ok().stdout;
    let header = wide.lines().next().unwrap();
    assert!(
        header.contains(" DISK ") && header.ends_with("PATH"),
        "{wide}"
    );
    let row = wide.lines().find(|l| l.starts_with("built ")).unwrap();
    assert!(row.contains(" 1.0 MiB "), "{wide}");
    let narrow = repo.run(["list"]).ok().stdout;
    assert!(!narrow.contains("DISK"), "{narrow}");
}

/// The cache file's text with the one measurement of `label` set to `bytes`.
fn forge_cached_bytes(store: &Path, label: &str, bytes: u64) {
    let path = store.join("disk-use.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut doc: toml::Value = toml::from_str(&text).unwrap();
    let entries = doc["entry"].as_array_mut().unwrap();
    let entry = entries
        .iter_mut()
        .find(|e| e["label"].as_str() == Some(label))
        .unwrap_or_else(|| panic!("{label} is not cached: {text}"));
    entry["bytes"] = toml::Value::Integer(bytes as i64);
    std::fs::write(&path, toml::to_string(&doc).unwrap()).unwrap();
}

#[test]
fn a_measurement_is_reused_until_the_worktree_changes() {
    let repo = repo_with_build_dirs();
    let wt: PathBuf = repo.create("s");
    write_big(&wt.join("target/out.bin"), MIB);
    let first = bytes(&disk_of(&repo, &[])["s"]);
    assert!(first >= MIB, "{first}");
    // What list and info show next comes from the store, not from a walk: a value no walk
    // would find is shown as it is.
    forge_cached_bytes(&repo.store(), "s", 777);
    assert_eq!(bytes(&disk_of(&repo, &[])["s"]), 777);
    assert_eq!(
        bytes(&repo.run(["info", "s", "--json"]).ok().json()["disk"]),
        777
    );
    // A change the key sees (a new file in a build directory, a commit) is measured anew.
    write_big(&wt.join("target/second.bin"), MIB);
    let second = bytes(&disk_of(&repo, &[])["s"]);
    assert!(
        (first + MIB..first + MIB + (64 << 10)).contains(&second),
        "{first} then {second}"
    );
    forge_cached_bytes(&repo.store(), "s", 777);
    repo.commit_file(&wt, "src.txt", "work\n", "work");
    let third = bytes(&disk_of(&repo, &[])["s"]);
    assert!(third > second, "{second} then {third}");
    // Nothing changed but the measurement is older than an hour: measured again.
    forge_cached_bytes(&repo.store(), "s", 777);
    let later = (chrono::Utc::now() + chrono::Duration::minutes(61)).to_rfc3339();
    assert_eq!(
        bytes(&disk_of(&repo, &[("GIT_SESSION_NOW", &later)])["s"]),
        third
    );
}

#[test]
fn commits_and_the_context_hook_never_measure() {
    let repo = repo_with_build_dirs();
    repo.run(["hooks", "install"]).ok();
    let wt = repo.create("g");
    write_big(&wt.join("target/out.bin"), MIB);
    repo.commit_file(&wt, "a.txt", "a\n", "a");
    let payload = serde_json::json!({
        "session_id": "agent-1",
        "hook_event_name": "PostToolUse",
        "cwd": wt,
        "tool_name": "Write",
        "tool_input": {"file_path": wt.join("b.txt")},
    });
    let mut hook = repo.cmd_in(&wt);
    hook.args(["context", "hook"]);
    crate::common::within(hook, 60, &payload.to_string()).ok();
    assert!(
        !repo.store().join("disk-use.toml").exists(),
        "the guard or the hook measured disk use"
    );
    // And no source of theirs reaches the measurement.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for dir in ["guard", "context", "hooks"] {
        let mut stack = vec![src.join(dir)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    let text = std::fs::read_to_string(&p).unwrap();
                    assert!(
                        !text.contains("disk::"),
                        "{} measures disk use",
                        p.display()
                    );
                }
            }
        }
    }
}
