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
    let b = clone_of(&remote);
    (tmp, remote, a, b)
}

/// One more clone of `remote`.
fn clone_of(remote: &std::path::Path) -> TestRepo {
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
    b
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

#[test]
fn a_merge_withdraws_the_blocks_of_the_sessions_it_removes() {
    let (_tmp, remote, a, b) = two_clones();
    let done = a.create("done");
    a.create("kept");
    a.commit_file(&done, "work.txt", "work\n", "work");
    a.run(["merge", "done"]).ok();
    assert_eq!(
        on_remote(&a, &remote),
        BTreeSet::from([27010]),
        "the merged session's block left the remote with it"
    );
    b.create("next");
    assert_eq!(firsts(&b), [("next".to_string(), 27000)]);
    // A batch withdraws the blocks of all it removed, and keeps the others'.
    for label in ["one", "two"] {
        let wt = a.create(label);
        a.commit_file(&wt, &format!("{label}.txt"), "x\n", label);
    }
    let held: BTreeSet<u64> = firsts(&a).into_iter().map(|(_, p)| p).collect();
    assert_eq!(held.len(), 3);
    a.run(["merge", "one", "two"]).ok();
    assert_eq!(
        on_remote(&a, &remote),
        BTreeSet::from([27000, 27010]),
        "left: kept's and next's"
    );
    // --keep keeps the session, and so its block.
    let wt = a.create("keeper");
    a.commit_file(&wt, "keeper.txt", "x\n", "keeper");
    a.run(["merge", "keeper", "--keep"]).ok();
    assert_eq!(on_remote(&a, &remote).len(), 3);
}

/// Runs `git-session ARGS` in `repo` with the clock `hours` after `start`.
fn at(
    repo: &TestRepo,
    start: chrono::DateTime<chrono::Utc>,
    hours: i64,
    args: &[&str],
) -> common::Run {
    let now = (start + chrono::Duration::hours(hours)).to_rfc3339();
    let out = repo
        .cmd_in(&repo.root)
        .env("GIT_SESSION_NOW", now)
        .args(args)
        .output()
        .unwrap();
    common::to_run(out)
}

/// Who holds block `first` on the remote: its record's label.
fn holder(repo: &TestRepo, remote: &std::path::Path, first: u64) -> String {
    let port = first - 27000 + u64::from(ports().base);
    let tree = repo.git_in(
        remote,
        [
            "ls-tree",
            "--name-only",
            &format!("refs/git-session/claims/ports/{port}"),
        ],
    );
    let file = tree.lines().next().unwrap().to_string();
    let text = repo.git_in(
        remote,
        [
            "show",
            &format!("refs/git-session/claims/ports/{port}:{file}"),
        ],
    );
    let block: toml::Value = toml::from_str(&text).unwrap();
    block["label"].as_str().unwrap().to_string()
}

#[test]
fn a_block_of_a_clone_that_vanished_lapses_after_the_ttl_and_is_taken_over_once() {
    let (_tmp, remote, a, b) = two_clones();
    let start = chrono::Utc::now();
    a.create("gone");
    // Clone a vanishes with its session: nothing of it will ever give the block back.
    std::fs::remove_dir_all(&a.root).unwrap();
    // Within the ttl (8 h by default) the block is a's.
    at(&b, start, 7, &["create", "early"]).ok();
    assert_eq!(firsts(&b), [("early".to_string(), 27010)]);
    // Past it, two clones want the lowest block at once: one takes it over, the other gets
    // another; never both.
    let c = clone_of(&remote);
    let now = (start + chrono::Duration::hours(9)).to_rfc3339();
    let children: Vec<_> = [(&b, "late-b"), (&c, "late-c")]
        .iter()
        .map(|(repo, label)| {
            repo.cmd_in(&repo.root)
                .env("GIT_SESSION_NOW", &now)
                .args(["create", label])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        common::to_run(child.wait_with_output().unwrap()).ok();
    }
    let mut all = firsts(&b);
    all.extend(firsts(&c));
    let blocks: BTreeSet<u64> = all.iter().map(|(_, p)| *p).collect();
    assert_eq!(blocks.len(), 3, "a block handed out twice: {all:?}");
    assert!(
        blocks.contains(&27000),
        "the lapsed block was not taken: {all:?}"
    );
    let winner = all.iter().find(|(_, p)| *p == 27000).unwrap().0.clone();
    assert_eq!(holder(&b, &remote, 27000), winner);
    assert_eq!(on_remote(&b, &remote), blocks);
}

#[test]
fn a_sync_renews_a_block_and_says_when_another_clone_took_it() {
    let (_tmp, remote, a, b) = two_clones();
    let start = chrono::Utc::now();
    a.create("long");
    // Less than half the ttl gone: nothing to renew.
    let out = at(&a, start, 3, &["sync"]).ok();
    assert!(
        out.stderr
            .contains("port blocks on origin: 1 held, 0 renewed"),
        "{}",
        out.stderr
    );
    // Past half of it: renewed, so it holds 8 h from now.
    let out = at(&a, start, 5, &["sync"]).ok();
    assert!(
        out.stderr
            .contains("port blocks on origin: 0 held, 1 renewed"),
        "{}",
        out.stderr
    );
    at(&b, start, 9, &["create", "b1"]).ok();
    assert_eq!(
        firsts(&b),
        [("b1".to_string(), 27010)],
        "renewed, not lapsed"
    );
    // Not renewed again: past 5 + 8 h another clone takes it over, and a's next sync says so.
    at(&b, start, 14, &["create", "b2"]).ok();
    assert!(firsts(&b).contains(&("b2".to_string(), 27000)));
    assert_eq!(holder(&b, &remote, 27000), "b2");
    let out = at(&a, start, 14, &["sync"]).ok();
    let said = common::strip_colour(&out.stderr);
    assert!(
        ports().unshift(&said).contains(
            "ports 27000-27009 of session \"long\" are no longer this clone's on origin: held by \
             session \"b2\""
        ),
        "{said}"
    );
}
