//! Port blocks across machines: clones of one bare remote with `[claims] remote` set lease
//! their blocks through the claims' refs, so two clones never hand out one block, and a block
//! one clone's `cleanup` gives back is the next block another clone's `create` gets.

use crate::common::{self, TestRepo};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Stdio;

/// The range the tests run in: 27000-27999 unless a program here holds a port of it; the
/// helpers below name ports as if it were 27000-27999.
fn ports() -> common::Ports {
    static PORTS: std::sync::OnceLock<common::Ports> = std::sync::OnceLock::new();
    *PORTS.get_or_init(|| common::free_ports(27000, 1000))
}

fn config() -> String {
    format!(
        "[claims]\nremote = \"origin\"\ntimeout = \"60s\"\n\
         [resources]\nports = 10\nport_range = \"{}\"\n",
        ports().range()
    )
}

/// A bare remote whose `main` holds `config()`, and two clones of it.
fn two_clones() -> (tempfile::TempDir, PathBuf, TestRepo, TestRepo) {
    let tmp = tempfile::tempdir().unwrap();
    let remote = std::fs::canonicalize(tmp.path())
        .unwrap()
        .join("remote.git");
    let a = TestRepo::new();
    a.git([
        "init",
        "-q",
        "--bare",
        "-b",
        "main",
        remote.to_str().unwrap(),
    ]);
    a.write(".git-session.toml", &config());
    a.git(["add", "-A"]);
    a.git(["commit", "-q", "-m", "share ports"]);
    a.git(["remote", "add", "origin", remote.to_str().unwrap()]);
    a.git(["push", "-q", "origin", "main"]);
    let b = TestRepo::new();
    std::fs::remove_dir_all(&b.root).unwrap();
    b.git_in(
        &b.base(),
        [
            "clone",
            "-q",
            remote.to_str().unwrap(),
            b.root.to_str().unwrap(),
        ],
    );
    (tmp, remote, a, b)
}

/// The first port of each session's block in `repo`.
fn firsts(repo: &TestRepo) -> Vec<(String, u64)> {
    repo.run(["list", "--json"])
        .ok()
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["label"].as_str().unwrap().to_string(),
                ports().unshift_port(
                    s["resources"]["port"]
                        .as_u64()
                        .unwrap_or_else(|| panic!("{s}")),
                ),
            )
        })
        .collect()
}

/// The port blocks the remote holds (first ports).
fn on_remote(a: &TestRepo, remote: &std::path::Path) -> BTreeSet<u64> {
    a.git_in(
        remote,
        [
            "for-each-ref",
            "--format=%(refname)",
            "refs/git-session/claims/ports/",
        ],
    )
    .lines()
    .map(|r| ports().unshift_port(r.rsplit('/').next().unwrap().parse().unwrap()))
    .collect()
}

#[test]
fn two_clones_creating_at_once_never_hand_out_one_block() {
    let (_tmp, remote, a, b) = two_clones();
    let mut children = Vec::new();
    for i in 0..4 {
        for (repo, who) in [(&a, "a"), (&b, "b")] {
            children.push(
                repo.cmd_in(&repo.root)
                    .args(["create", &format!("{who}{i}")])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap(),
            );
        }
    }
    for child in children {
        common::to_run(child.wait_with_output().unwrap()).ok();
    }
    let mut all = firsts(&a);
    all.extend(firsts(&b));
    assert_eq!(all.len(), 8, "{all:?}");
    let blocks: BTreeSet<u64> = all.iter().map(|(_, p)| *p).collect();
    assert_eq!(blocks.len(), 8, "a block handed out twice: {all:?}");
    assert!(blocks
        .iter()
        .all(|p| (27000..27999).contains(p) && p % 10 == 0));
    assert_eq!(
        on_remote(&a, &remote),
        blocks,
        "every block is held on the remote"
    );
    // A claims sync leaves the blocks alone (they are not path claims).
    a.run(["sync"]).ok();
    assert_eq!(on_remote(&a, &remote), blocks);
}

#[test]
fn a_block_one_clone_cleans_up_is_the_next_another_clone_gets() {
    let (_tmp, remote, a, b) = two_clones();
    a.create("first");
    b.create("second");
    assert_eq!(firsts(&a), [("first".to_string(), 27000)]);
    assert_eq!(firsts(&b), [("second".to_string(), 27010)]);
    a.run(["cleanup", "first"]).ok();
    assert_eq!(on_remote(&a, &remote), BTreeSet::from([27010]));
    b.create("third");
    assert!(
        firsts(&b).contains(&("third".to_string(), 27000)),
        "{:?}",
        firsts(&b)
    );
}

#[test]
fn a_remote_that_does_not_answer_leases_nothing_and_makes_nothing() {
    let (_tmp, remote, _a, b) = two_clones();
    std::fs::rename(&remote, remote.with_extension("gone")).unwrap();
    let out = b.run(["create", "offline"]).fails(1);
    assert!(
        out.stderr.contains(
            "cannot create the session: no block of ports could be leased through remote origin"
        ),
        "{}",
        out.stderr
    );
    assert!(b.labels().is_empty());
    assert!(!b.store().join("leases.toml").exists());
    assert!(!b.sessions_dir().join("offline").exists());
}
