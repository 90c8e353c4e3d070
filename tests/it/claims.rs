//! Issue 11 item 3: claims are their own store entity (`claims/<label>.toml`). A store written
//! before (every claim embedded in `sessions/<label>.toml`) is read as it is and migrated by the
//! session's first claims write, losing and duplicating nothing, even when the writer is killed
//! between the two steps of the migration.
use crate::common::{self, Run, TestRepo};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// The bytes the previous version of the tool wrote for a session attached to `path` that had
/// claimed three paths (one of each kind, the second with a name TOML must quote), copied from a
/// real store (`create --attach old`, `claim`, the guard and the context hook).
fn old_record(path: &Path, base_commit: &str) -> String {
    format!(
        r#"version = 1
label = "old"
branch = "main"
path = "{}"
base = "main"
base_commit = "{base_commit}"
state = "active"
attached = true
custom_path = true
created = "2026-01-02T03:04:05Z"
last_seen = "2026-01-02T03:04:05Z"
agent_sessions = ["agent-1"]

[[claims]]
path = "src/a.rs"
how = "explicit"
since = "2026-01-02T03:04:05Z"

[[claims]]
path = 'odd "name".txt'
how = "commit"
since = "2026-01-02T03:05:06.250Z"

[[claims]]
path = "docs"
how = "edit"
since = "2026-01-03T00:00:00Z"
"#,
        path.display()
    )
}

/// A repository whose store holds only the old-format record of session "old" (attached to the
/// main worktree) and an attached session "B" made by this version.
fn old_store() -> (TestRepo, PathBuf) {
    let repo = TestRepo::new();
    repo.run(["create", "--attach", "B"]).ok();
    let head = repo.git(["rev-parse", "HEAD"]).trim().to_string();
    let record = repo.store().join("sessions/old.toml");
    std::fs::write(&record, old_record(&repo.root, &head)).unwrap();
    let _ = std::fs::remove_file(repo.store().join("claims.index"));
    (repo, record)
}

/// `git-session ARGS` as session `who` in the main worktree, to run or to spawn.
fn as_session(repo: &TestRepo, who: &str, args: &[&str]) -> Command {
    let mut cmd = repo.as_session(who);
    cmd.args(args);
    Command(cmd)
}

struct Command(std::process::Command);

impl Command {
    fn run(mut self) -> Run {
        common::to_run(self.0.output().unwrap())
    }
    fn spawn(mut self) -> Child {
        self.0
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    }
}

/// `(path, label, how, since)` of every claim of session "old" that `claims --json` lists (B's
/// guard runs record B's commit claims beside them).
fn listed(repo: &TestRepo) -> Vec<(String, String, String, String)> {
    let out = repo.run(["claims", "--json"]).ok().json();
    out.as_array()
        .unwrap()
        .iter()
        .filter(|c| c["label"] != "B")
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap().to_string();
            (s("path"), s("label"), s("how"), s("since"))
        })
        .collect()
}

fn old_claims() -> Vec<(String, String, String, String)> {
    [
        ("docs", "edit", "2026-01-03T00:00:00Z"),
        ("odd \"name\".txt", "commit", "2026-01-02T03:05:06Z"),
        ("src/a.rs", "explicit", "2026-01-02T03:04:05Z"),
    ]
    .iter()
    .map(|(p, h, s)| {
        (
            p.to_string(),
            "old".to_string(),
            h.to_string(),
            s.to_string(),
        )
    })
    .collect()
}

fn toml_of(path: &Path) -> toml::Table {
    std::fs::read_to_string(path).unwrap().parse().unwrap()
}

/// Stages `file` in the main worktree and runs the pre-commit guard as session B.
fn guard_as_b(repo: &TestRepo, file: &str) -> Run {
    common::write_in(&repo.root, file, "B's change\n");
    repo.git(["add", "--", file]);
    let out = as_session(repo, "B", &["guard", "pre-commit"]).run();
    repo.git(["reset", "-q", "--", file]);
    out
}

/// An old-format store is read as it is (claims, list, info, the guard) without being written,
/// and the session's first claims write moves its claims out, exactly, in one go.
#[test]
fn old_format_store_is_read_then_migrated_by_the_first_write() {
    let (repo, record) = old_store();
    let before = std::fs::read(&record).unwrap();
    assert_eq!(listed(&repo), old_claims());
    let list = repo.run(["list", "--json"]).ok().json();
    let old = list
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["label"] == "old")
        .unwrap();
    assert_eq!(old["owned"], 3, "{list}");
    let info = repo.run(["info", "old", "--json"]).ok().json();
    assert_eq!(info["claims"].as_array().unwrap().len(), 3, "{info}");
    // The guard finds old's claims in the old record: B may not commit them.
    let out = guard_as_b(&repo, "docs/guide.md").fails(1);
    assert!(
        out.stderr.contains("owned by session \"old\""),
        "{}",
        out.stderr
    );
    guard_as_b(&repo, "free.txt").ok();
    // Reading wrote nothing of the session's.
    assert_eq!(std::fs::read(&record).unwrap(), before);
    assert!(!repo.store().join("claims/old.toml").exists());

    // The first write: a claim of one more path.
    as_session(&repo, "old", &["claim", "new.txt"]).run().ok();
    let claims = toml_of(&repo.store().join("claims/old.toml"));
    assert_eq!(claims["version"].as_integer(), Some(1));
    assert_eq!(claims["label"].as_str(), Some("old"));
    assert_eq!(claims["claims"].as_array().unwrap().len(), 4);
    let migrated = toml_of(&record);
    assert!(!migrated.contains_key("claims"), "{migrated}");
    let kept = toml_of(&record);
    let was: toml::Table = String::from_utf8(before).unwrap().parse().unwrap();
    for key in [
        "label",
        "branch",
        "path",
        "base_commit",
        "created",
        "agent_sessions",
    ] {
        assert_eq!(kept[key], was[key], "{key}");
    }
    let now = listed(&repo);
    let mut want = old_claims();
    want.extend(now.iter().filter(|c| c.0 == "new.txt").cloned());
    want.sort();
    assert_eq!(now, want);
    assert_eq!(now.len(), 4);
    // Sub-second `since` survives the move (the index keeps nanoseconds, the file the text).
    let since = claims["claims"].as_array().unwrap()[1]["since"].to_string();
    assert!(since.contains("03:05:06.25"), "{since}");
    // A released claim stays released.
    as_session(&repo, "old", &["release", "src/a.rs"])
        .run()
        .ok();
    assert!(!listed(&repo).iter().any(|c| c.0 == "src/a.rs"));
    guard_as_b(&repo, "src/a.rs").ok();
    guard_as_b(&repo, "docs/guide.md").fails(1);
}

/// The identity `LockFile` writes for a live process: this test's own.
fn own_lock_owner() -> String {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let rest = &stat[stat.rfind(')').unwrap() + 1..];
    let start = rest.split_whitespace().nth(19).unwrap();
    let host = nix_hostname();
    format!("{} {start} {host}\n", std::process::id())
}

fn nix_hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string()
}

/// Runs `claim new.txt` as "old" while this process holds `held` (a lock the claim needs after
/// the steps before it), waits until `reached` exists and a little more (the claim is then
/// waiting for the lock), and kills it there with SIGKILL.
fn kill_claim_at(repo: &TestRepo, held: &str, reached: &Path) {
    let lock = repo.store().join(held);
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    std::fs::write(&lock, own_lock_owner()).unwrap();
    let mut child = as_session(repo, "old", &["claim", "new.txt"]).spawn();
    let started = Instant::now();
    loop {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the claim did not wait"
        );
        let there = reached.exists();
        if there && started.elapsed() > Duration::from_millis(300) {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(8), "never reached");
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    std::fs::remove_file(&lock).unwrap();
}

/// Killed between the two steps of the migration (the claims file written, the record not yet
/// stripped): the file wins, so every claim is there once, the interrupted claim included, and
/// nothing released later comes back from the stale copy in the record.
#[test]
fn a_kill_between_the_migration_steps_loses_and_duplicates_nothing() {
    let (repo, record) = old_store();
    let file = repo.store().join("claims/old.toml");
    // The record's lock is held, so the claim stops after writing the claims file.
    kill_claim_at(&repo, "sessions/old.toml.lock", &file);
    assert!(file.exists());
    assert!(
        toml_of(&record).contains_key("claims"),
        "the record was stripped"
    );
    let mut want = old_claims();
    want.extend(listed(&repo).into_iter().filter(|c| c.0 == "new.txt"));
    want.sort();
    assert_eq!(listed(&repo), want, "a claim lost or duplicated");
    assert_eq!(want.len(), 4);
    let info = repo.run(["info", "old", "--json"]).ok().json();
    assert_eq!(info["claims"].as_array().unwrap().len(), 4, "{info}");
    // The next write strips the stale copy; what it releases stays released.
    as_session(&repo, "old", &["release", "docs"]).run().ok();
    assert!(!toml_of(&record).contains_key("claims"));
    let left: Vec<String> = listed(&repo).into_iter().map(|c| c.0).collect();
    assert_eq!(left, ["new.txt", "odd \"name\".txt", "src/a.rs"]);
    guard_as_b(&repo, "docs/guide.md").ok();
    guard_as_b(&repo, "src/a.rs").fails(1);
}

/// Killed before the first step (the claims file's lock held): the old store is untouched and
/// still read whole; the next claim migrates it.
#[test]
fn a_kill_before_the_migration_leaves_the_old_store_whole() {
    let (repo, record) = old_store();
    let before = std::fs::read(&record).unwrap();
    let index_lock = repo.store().join("claims.index.lock");
    kill_claim_at(&repo, "claims/old.toml.lock", &index_lock);
    assert_eq!(std::fs::read(&record).unwrap(), before);
    assert!(!repo.store().join("claims/old.toml").exists());
    assert_eq!(listed(&repo), old_claims());
    // The killed claim left the index lock behind; its owner is dead, so it is broken.
    as_session(&repo, "old", &["claim", "new.txt"]).run().ok();
    assert_eq!(listed(&repo).len(), 4);
    assert!(!toml_of(&record).contains_key("claims"));
}

/// The session record no longer grows with claims: reading who is acting costs the same with
/// one claim or a thousand.
#[test]
fn the_session_record_does_not_grow_with_claims() {
    let repo = TestRepo::new();
    repo.run(["create", "--attach", "A"]).ok();
    let record = repo.store().join("sessions/A.toml");
    let size = |p: &Path| std::fs::metadata(p).unwrap().len();
    as_session(&repo, "A", &["claim", "f0"]).run().ok();
    let one = size(&record);
    let paths: Vec<String> = (1..1000).map(|i| format!("dir/f{i:04}.txt")).collect();
    let mut args = vec!["claim"];
    args.extend(paths.iter().map(String::as_str));
    as_session(&repo, "A", &args).run().ok();
    // Equal but for the digits of the `last_seen` timestamp (chrono writes 3, 6 or 9 of them,
    // by how many trailing zeros the instant has): a thousand claims would add 30 kB.
    let after = size(&record);
    assert!(after.abs_diff(one) <= 6, "{one} then {after}");
    assert!(size(&repo.store().join("claims/A.toml")) > 30_000);
    let list = repo.run(["list", "--json"]).ok().json();
    assert_eq!(list[0]["owned"], 1000);
}

/// Removing a session removes its claims first: a new session of the same label starts with
/// none, and no claims file is left behind.
#[test]
fn cleanup_removes_the_claims_and_a_new_session_inherits_none() {
    let repo = TestRepo::new();
    let wt = repo.create("gone");
    let mut cmd = repo.cmd_in(&wt);
    cmd.args(["claim", "src/x.rs"]);
    common::to_run(cmd.output().unwrap()).ok();
    assert!(repo.store().join("claims/gone.toml").exists());
    repo.run(["cleanup", "gone"]).ok();
    assert!(!repo.store().join("claims/gone.toml").exists());
    assert!(!repo.store().join("sessions/gone.toml").exists());
    repo.create("gone");
    assert!(listed(&repo).is_empty());
    let info = repo.run(["info", "gone", "--json"]).ok().json();
    assert_eq!(info["owned"], 0);
}

/// A claims file outlives its record only when a person deleted the record by hand. A new
/// session of that label, attached or created, starts with no claims, says so once, and the
/// dropped claims no longer bind anyone.
#[test]
fn a_new_session_never_inherits_the_claims_of_a_deleted_record() {
    for how in ["attach", "create"] {
        let repo = TestRepo::new();
        repo.run(["create", "--attach", "again"]).ok();
        as_session(&repo, "again", &["claim", "README.md"])
            .run()
            .ok();
        let claims_file = repo.store().join("claims/again.toml");
        assert!(claims_file.exists());
        std::fs::remove_file(repo.store().join("sessions/again.toml")).unwrap();

        let out = if how == "attach" {
            repo.run(["create", "--attach", "again"]).ok()
        } else {
            repo.run(["create", "again"]).ok()
        };
        assert!(
            out.stderr.contains(
                "dropped the claims an earlier session \"again\" left without its record"
            ),
            "{how}: {}",
            out.stderr
        );
        assert!(!claims_file.exists(), "{how}");
        let info = repo.run(["info", "again", "--json"]).ok().json();
        assert_eq!(info["claims"].as_array().unwrap().len(), 0, "{how}: {info}");
        let all = repo.run(["claims", "--json"]).ok().json();
        assert_eq!(all.as_array().unwrap().len(), 0, "{how}: {all}");
        let audit = std::fs::read_to_string(repo.store().join("audit.log")).unwrap();
        assert!(audit.contains("\"orphan-claims\""), "{how}: {audit}");
        // Once: the next session of another label hears nothing of it.
        let next = repo.run(["create", "other"]).ok();
        assert!(!next.stderr.contains("dropped"), "{how}: {}", next.stderr);
    }
}
