//! Claims across machines: several clones of one bare remote on disk, `[claims] remote` set,
//! and the real git pushing and fetching between them (no network: every remote is a path, or a
//! transport command of our own that stalls).

use crate::common::{self, TestRepo};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

struct Net {
    /// Keeps the bare remote's directory alive.
    _tmp: tempfile::TempDir,
    remote: PathBuf,
    clones: Vec<TestRepo>,
}

const CONFIG: &str = "[claims]\nremote = \"origin\"\ntimeout = \"60s\"\n";

/// A bare remote whose `main` holds `.git-session.toml` sharing claims through it, and `n`
/// clones of it, each with the guard installed.
fn net(n: usize, config: &str) -> Net {
    let tmp = tempfile::tempdir().unwrap();
    let remote = std::fs::canonicalize(tmp.path())
        .unwrap()
        .join("remote.git");
    let first = TestRepo::new();
    first.git([
        "init",
        "-q",
        "--bare",
        "-b",
        "main",
        remote.to_str().unwrap(),
    ]);
    first.write(".git-session.toml", config);
    first.write("src/api.rs", "api\n");
    first.write("src/db.rs", "db\n");
    first.git(["add", "-A"]);
    first.git(["commit", "-q", "-m", "shared claims"]);
    first.git(["remote", "add", "origin", remote.to_str().unwrap()]);
    first.git(["push", "-q", "origin", "main"]);
    let mut clones = vec![first];
    for _ in 1..n {
        let c = TestRepo::new();
        std::fs::remove_dir_all(&c.root).unwrap();
        c.git_in(
            &c.base(),
            [
                "clone",
                "-q",
                remote.to_str().unwrap(),
                c.root.to_str().unwrap(),
            ],
        );
        clones.push(c);
    }
    for c in &clones {
        c.run(["hooks", "install"]).ok();
    }
    Net {
        _tmp: tmp,
        remote,
        clones,
    }
}

fn remote_refs(net: &Net) -> Vec<String> {
    let out = net.clones[0].git([
        "ls-remote",
        net.remote.to_str().unwrap(),
        "refs/git-session/*",
    ]);
    out.lines()
        .map(|l| l.split('\t').nth(1).unwrap().to_string())
        .collect()
}

fn session(repo: &TestRepo, label: &str) -> PathBuf {
    repo.create(label)
}

/// The binary run in `dir` with its clock at `now` (`GIT_SESSION_NOW`, RFC 3339).
fn run_at(repo: &TestRepo, dir: &Path, now: &str, args: &[&str]) -> common::Run {
    common::to_run(
        repo.cmd_in(dir)
            .env("GIT_SESSION_NOW", now)
            .args(args)
            .output()
            .unwrap(),
    )
}

#[test]
fn a_claim_is_refused_in_another_clone_and_by_its_guard_after_one_sync() {
    let net = net(2, CONFIG);
    let (one, two) = (&net.clones[0], &net.clones[1]);
    let a = session(one, "a");
    let b = session(two, "b");
    one.run_in(&a, ["claim", "src/api.rs"]).ok();
    assert_eq!(
        remote_refs(&net).len(),
        1,
        "published before claim returned"
    );
    // The claim command asks the remote itself.
    let refused = two.run_in(&b, ["claim", "src/api.rs"]).fails(1);
    assert!(
        refused.stderr.contains("held by session \"a\" on"),
        "{}",
        refused.stderr
    );
    assert!(two
        .run(["claims", "--json"])
        .ok()
        .json()
        .as_array()
        .unwrap()
        .is_empty());
    // The guard reads the last synced view: after one sync it refuses the commit.
    two.run(["sync"]).ok();
    let claims = two.run(["claims", "--json"]).ok().json();
    let row = &claims[0];
    assert_eq!(row["how"], "elsewhere", "{claims:#}");
    assert_eq!(row["label"], "a");
    assert_eq!(row["live"], true);
    assert!(row["host"].is_string() && row["clone"].is_string() && row["expires"].is_string());
    let list = two.run(["list"]).ok();
    assert!(
        list.stderr
            .contains("1 paths are claimed by sessions of other clones on origin"),
        "{}",
        list.stderr
    );
    common::write_in(&b, "src/api.rs", "b's change\n");
    two.git_in(&b, ["add", "src/api.rs"]);
    let out = two
        .git_try(&b, ["commit", "-q", "-m", "over a's claim"])
        .fails(1);
    assert!(
        out.stderr.contains("claimed by session \"a\" on"),
        "{}",
        out.stderr
    );
    two.git_in(&b, ["reset", "-q", "--hard", "HEAD"]);
    // Another path goes through, offline: the guard never reaches the network.
    std::fs::rename(&net.remote, net.remote.with_extension("away")).unwrap();
    common::write_in(&b, "src/db.rs", "b's db\n");
    two.git_in(&b, ["add", "src/db.rs"]);
    two.git_try(&b, ["commit", "-q", "-m", "free path"]).ok();
    std::fs::rename(net.remote.with_extension("away"), &net.remote).unwrap();
    two.git_in(&b, ["reset", "-q", "--hard", "HEAD"]);
    // Released there, free here after one sync.
    one.run_in(&a, ["release", "src/api.rs"]).ok();
    assert!(remote_refs(&net).is_empty());
    two.run(["sync"]).ok();
    common::write_in(&b, "src/api.rs", "b's change\n");
    two.git_in(&b, ["add", "src/api.rs"]);
    two.git_try(&b, ["commit", "-q", "-m", "now free"]).ok();
    // Its commit claimed the path here; the next sync publishes it for the others.
    let info = two.run_in(&b, ["info"]).ok();
    assert!(info.stdout.contains("not shared yet"), "{}", info.stdout);
    let synced = two.run(["sync"]).ok();
    assert!(synced.stderr.contains("1 published"), "{}", synced.stderr);
    let info = two.run_in(&b, ["info"]).ok();
    assert!(
        info.stdout.contains("commit, since") && info.stdout.contains(", shared)"),
        "{}",
        info.stdout
    );
    let refused = one.run_in(&a, ["claim", "src/api.rs"]).fails(1);
    assert!(
        refused.stderr.contains("held by session \"b\""),
        "{}",
        refused.stderr
    );
}

#[test]
fn twenty_claimers_in_four_clones_exactly_one_wins() {
    let net = net(4, CONFIG);
    let mut children = Vec::new();
    for (i, clone) in net.clones.iter().enumerate() {
        for j in 0..5 {
            let label = format!("c{i}s{j}");
            clone.run(["create", "--attach", &label]).ok();
            let mut cmd = clone.cmd_in(&clone.root);
            cmd.env("GIT_SESSION", &label)
                .args(["claim", "src/api.rs"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            children.push(cmd);
        }
    }
    let running: Vec<_> = children.iter_mut().map(|c| c.spawn().unwrap()).collect();
    let outs: Vec<_> = running
        .into_iter()
        .map(|c| common::to_run(c.wait_with_output().unwrap()))
        .collect();
    let won = outs.iter().filter(|o| o.code == 0).count();
    assert_eq!(
        won,
        1,
        "{:#?}",
        outs.iter()
            .map(|o| (&o.code, &o.stderr))
            .collect::<Vec<_>>()
    );
    for o in outs.iter().filter(|o| o.code != 0) {
        assert_eq!(o.code, 1, "{}", o.stderr);
    }
    assert_eq!(remote_refs(&net).len(), 1);
}

#[test]
fn a_lapsed_claim_is_taken_and_one_label_in_two_clones_is_two_claimants() {
    let net = net(2, CONFIG);
    let (one, two) = (&net.clones[0], &net.clones[1]);
    let a1 = session(one, "a");
    let a2 = session(two, "a");
    one.run_in(&a1, ["claim", "src/api.rs"]).ok();
    // Same label, another clone: someone else.
    two.run_in(&a2, ["claim", "src/api.rs"]).fails(1);
    // Nine hours on (ttl 8h): lapsed, and taken by compare-and-swap.
    let later = run_at(two, &a2, "2099-01-01T00:00:00Z", &["claim", "src/api.rs"]).ok();
    assert!(
        later.stderr.contains("claimed src/api.rs"),
        "{}",
        later.stderr
    );
    // The first clone learns it lost the claim at its next sync.
    let lost = one.run(["sync"]).fails(1);
    assert!(lost.stderr.contains("lost"), "{}", lost.stderr);
}

#[test]
fn a_claim_of_several_paths_is_all_or_nothing() {
    let net = net(2, CONFIG);
    let (one, two) = (&net.clones[0], &net.clones[1]);
    let a = session(one, "a");
    let b = session(two, "b");
    one.run_in(&a, ["claim", "src/api.rs"]).ok();
    two.run_in(&b, ["claim", "src/db.rs", "src/api.rs"])
        .fails(1);
    assert_eq!(remote_refs(&net).len(), 1, "no partial claim of src/db.rs");
    assert!(two
        .run(["claims", "--json"])
        .ok()
        .json()
        .as_array()
        .unwrap()
        .is_empty());
}

fn timed_claim(repo: &TestRepo, dir: &Path, env: &[(&str, &str)]) -> (common::Run, Duration) {
    let mut cmd = repo.cmd_in(dir);
    cmd.args(["claim", "src/api.rs"]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let start = Instant::now();
    let out = common::to_run(cmd.output().unwrap());
    (out, start.elapsed())
}

#[test]
fn an_unreachable_a_stalled_and_a_refusing_remote_each_get_one_line_in_bounded_time() {
    let net = net(1, "[claims]\nremote = \"origin\"\ntimeout = \"2s\"\n");
    let one = &net.clones[0];
    let a = session(one, "a");
    // Unreachable: a path with nothing there.
    one.git(["remote", "set-url", "origin", "/nonexistent/remote.git"]);
    let (out, _) = timed_claim(one, &a, &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("remote origin"), "{}", out.stderr);
    assert_eq!(
        out.stderr
            .lines()
            .filter(|l| l.starts_with("error:"))
            .count(),
        1,
        "{}",
        out.stderr
    );
    assert!(
        one.run(["claims", "--json"])
            .ok()
            .json()
            .as_array()
            .unwrap()
            .is_empty(),
        "nothing recorded"
    );
    // Stalled: a transport that never answers, cut at the deadline.
    one.git([
        "remote",
        "set-url",
        "origin",
        "ssh://stalled.invalid/remote.git",
    ]);
    let (out, took) = timed_claim(one, &a, &[("GIT_SSH_COMMAND", "sleep 30 #")]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("no answer within 2s"), "{}", out.stderr);
    assert!(took < Duration::from_secs(15), "{took:?}");
    // An unrelated commit goes through meanwhile.
    common::write_in(&a, "notes.txt", "n\n");
    one.git_in(&a, ["add", "notes.txt"]);
    one.git_try(&a, ["commit", "-q", "-m", "unrelated"]).ok();
    // A remote that hides the namespace, and one that cannot push atomically.
    one.git(["remote", "set-url", "origin", net.remote.to_str().unwrap()]);
    one.git([
        "--git-dir",
        net.remote.to_str().unwrap(),
        "config",
        "receive.hideRefs",
        "refs/git-session",
    ]);
    let (out, _) = timed_claim(one, &a, &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("remote origin"), "{}", out.stderr);
    one.git([
        "--git-dir",
        net.remote.to_str().unwrap(),
        "config",
        "--unset",
        "receive.hideRefs",
    ]);
    one.git([
        "--git-dir",
        net.remote.to_str().unwrap(),
        "config",
        "receive.advertiseAtomic",
        "false",
    ]);
    let (out, _) = timed_claim(one, &a, &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("atomic"), "{}", out.stderr);
    assert!(remote_refs(&net).is_empty(), "no partial refs");
}

#[test]
fn garbage_on_the_remote_is_named_and_enforces_nothing() {
    let net = net(2, CONFIG);
    let (one, two) = (&net.clones[0], &net.clones[1]);
    // Someone points a claims ref at a blob, and another at a commit holding junk.
    let blob = one.git(["hash-object", "-w", "--stdin"]);
    let _ = blob;
    let junk = {
        let mut cmd = one.git_cmd(&one.root);
        cmd.args(["hash-object", "-w", "--stdin"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(b"\x00\xffnot a claim")
            .unwrap();
        String::from_utf8(child.wait_with_output().unwrap().stdout)
            .unwrap()
            .trim()
            .to_string()
    };
    let target = format!("refs/git-session/claims/{}", "1".repeat(40));
    one.git(["push", "-q", "origin", &format!("{junk}:{target}")]);
    let b = session(two, "b");
    let out = two.run(["sync"]).ok();
    assert!(out.stderr.contains(&target), "{}", out.stderr);
    common::write_in(&b, "src/api.rs", "b\n");
    two.git_in(&b, ["add", "src/api.rs"]);
    two.git_try(&b, ["commit", "-q", "-m", "nothing enforced"])
        .ok();
}

/// A sync renews a claim of this clone only past half its time to live, so syncs that run
/// often push nothing; each renewal is a compare-and-swap from what the fetch saw, and a run of
/// syncs over many claims loses none of them (no lease goes stale between our own fetch and
/// push).
#[test]
fn syncs_renew_past_half_the_ttl_and_lose_nothing() {
    let net = net(1, CONFIG);
    let one = &net.clones[0];
    let a = session(one, "a");
    let paths: Vec<String> = (0..200).map(|i| format!("many/f{i:03}.txt")).collect();
    for p in &paths {
        common::write_in(&one.root, p, "x\n");
    }
    let mut args = vec!["claim".to_string()];
    args.extend(paths.iter().cloned());
    one.run_in(&a, &args).ok();
    let sync_at = |hours: i64| {
        let now = (chrono::Utc::now() + chrono::Duration::hours(hours)).to_rfc3339();
        let out = run_at(one, &a, &now, &["sync"]);
        assert_eq!(out.code, 0, "at +{hours}h: {}", out.stderr);
        out.stderr
    };
    assert!(sync_at(0).contains("200 held, 0 renewed"));
    assert!(sync_at(5).contains("0 held, 200 renewed"));
    for _ in 0..3 {
        assert!(sync_at(5).contains("200 held, 0 renewed"));
    }
    assert!(sync_at(10).contains("0 held, 200 renewed"));
    assert_eq!(remote_refs(&net).len(), 200);
}

/// The pre-push gate: a commit made before this clone learned of a claim elsewhere (its guard
/// had nothing to go on) is stopped at the push, naming the holder; an unrelated push goes
/// through; a claims remote that cannot be asked is one warning and the push goes on.
#[test]
fn a_push_over_a_path_held_elsewhere_is_refused_and_an_unanswered_check_lets_it_go() {
    let net = net(2, CONFIG);
    let (one, two) = (&net.clones[0], &net.clones[1]);
    assert!(two.root.join(".git/hooks/pre-push").is_file());
    let a = session(one, "a");
    one.run_in(&a, ["claim", "src/api.rs"]).ok();
    let b = session(two, "b");
    common::write_in(&b, "src/api.rs", "b's change\n");
    two.git_try(&b, ["commit", "-qam", "b before any sync"])
        .ok();
    let out = two.git_try(&b, ["push", "-q", "origin", "session/b"]);
    assert_ne!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("push refused"), "{}", out.stderr);
    assert!(out.stderr.contains("session \"a\" on"), "{}", out.stderr);
    let heads = one.git([
        "ls-remote",
        net.remote.to_str().unwrap(),
        "refs/heads/session/b",
    ]);
    assert!(heads.trim().is_empty(), "{heads}");
    // Another session's unrelated work is pushed, and its commit's claim goes out with it.
    let c = session(two, "c");
    common::write_in(&c, "src/db.rs", "c's db\n");
    two.git_try(&c, ["commit", "-qam", "c"]).ok();
    two.git_try(&c, ["push", "-q", "origin", "session/c"]).ok();
    let refused = one.run_in(&a, ["claim", "src/db.rs"]).fails(1);
    assert!(
        refused.stderr.contains("held by session \"c\""),
        "{}",
        refused.stderr
    );
    // Claims shared through a remote that does not answer (the user's config names another).
    let config = two.home.join(".config/git-session/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, "[claims]\nremote = \"claims\"\ntimeout = \"2s\"\n").unwrap();
    two.git(["remote", "add", "claims", "/nonexistent/claims.git"]);
    let out = two.git_try(&b, ["push", "-q", "origin", "session/b"]).ok();
    assert!(
        out.stderr.contains("could not be checked"),
        "{}",
        out.stderr
    );
}
