use crate::common;
use common::{write_in, TestRepo};
use std::path::PathBuf;

fn in_days(days: i64) -> chrono::DateTime<chrono::Utc> {
    chrono::Utc::now() + chrono::Duration::days(days)
}

/// `git session prune EXTRA` in the main worktree with the clock `days` ahead; not asserted.
fn prune_at(repo: &TestRepo, days: i64, extra: &[&str]) -> common::Run {
    let mut cmd = repo.cmd_in(&repo.root);
    cmd.env("GIT_SESSION_NOW", in_days(days).to_rfc3339())
        .arg("prune")
        .args(extra);
    common::to_run(cmd.output().unwrap())
}

/// A person's own worktree, made with plain `git worktree add` (no session) at `dir` beside the
/// repository, on a new branch `branch` or detached.
fn plain_worktree(repo: &TestRepo, dir: &str, branch: Option<&str>) -> PathBuf {
    let path = repo.base().join(dir);
    let mut args = vec!["worktree", "add", "-q"];
    match branch {
        Some(branch) => args.extend(["-b", branch]),
        None => args.push("--detach"),
    }
    args.push(path.to_str().unwrap());
    repo.git(&args);
    path
}

#[test]
fn prune_removes_exactly_the_merged_clean_inactive_sessions() {
    let repo = TestRepo::new();
    let old = repo.create("old");
    let locked = repo.create("locked");
    let dirty = repo.create("dirty");
    let unmerged = repo.create("unmerged");
    let recent = repo.create("recent");
    let gone = repo.create("gone");
    let other = plain_worktree(&repo, "other-worktree", Some("feature"));

    repo.git([
        "worktree",
        "lock",
        "--reason",
        "keep me",
        locked.to_str().unwrap(),
    ]);
    write_in(&dirty, "scratch.txt", "wip\n");
    repo.commit_file(&unmerged, "u.txt", "u\n", "not merged");
    std::fs::remove_dir_all(&gone).unwrap();
    // `recent` was active a day ago in the future clock's terms.
    let touched = std::process::Command::new("touch")
        .arg("-d")
        .arg(format!("@{}", in_days(29).timestamp()))
        .arg(repo.root.join(".git/worktrees/recent/index"))
        .status()
        .unwrap();
    assert!(touched.success());

    let prune = |extra: &[&str]| {
        let mut args = vec!["--older-than", "7d"];
        args.extend(extra);
        prune_at(&repo, 30, &args)
    };

    let dry = prune(&["--dry-run"]).ok();
    repo.insta()
        .bind(|| insta::assert_snapshot!("prune_dry_run", dry.stdout));
    for p in [&old, &locked, &dirty, &unmerged, &recent] {
        assert!(p.exists(), "dry run removed {}", p.display());
    }
    assert_eq!(repo.labels().len(), 6);

    let out = prune(&[]).ok();
    repo.insta()
        .bind(|| insta::assert_snapshot!("prune_run", out.stdout));
    assert!(!old.exists());
    assert_eq!(repo.git(["branch", "--list", "session/old"]), "");
    for p in [&locked, &dirty, &unmerged, &recent, &other] {
        assert!(p.exists(), "prune removed {}", p.display());
    }
    assert!(dirty.join("scratch.txt").exists());
    assert_ne!(repo.git(["branch", "--list", "session/unmerged"]), "");
    assert_ne!(repo.git(["branch", "--list", "feature"]), "");
    let mut labels = repo.labels();
    labels.sort();
    assert_eq!(labels, ["dirty", "locked", "recent", "unmerged"]);
    let worktrees = repo.git(["worktree", "list", "--porcelain"]);
    assert!(!worktrees.contains("repo.sessions/gone"), "{worktrees}");
    assert!(worktrees.contains("other-worktree"), "{worktrees}");

    // --quiet prints nothing at all when there is nothing wrong.
    let quiet = prune(&["--quiet"]).ok();
    assert_eq!(quiet.stdout, "");
    assert_eq!(quiet.stderr, "");
}

#[test]
fn prune_expires_archive_refs_past_archive_keep_only() {
    let repo = TestRepo::new();
    let wt = repo.create("arch");
    repo.commit_file(&wt, "a.txt", "a\n", "archived work");
    repo.run(["cleanup", "arch", "--force"]).ok();
    let refs = || {
        repo.git([
            "for-each-ref",
            "--format=%(refname)",
            "refs/session-archive/",
        ])
    };
    assert_eq!(refs().lines().count(), 1);
    let run = |days: i64| prune_at(&repo, days, &[]).ok();
    run(29);
    assert_eq!(refs().lines().count(), 1, "expired too early");
    let out = run(31);
    assert!(
        out.stdout
            .contains("expired archive refs/session-archive/arch/"),
        "{}",
        out.stdout
    );
    assert_eq!(refs(), "");
}

/// A record is a claim, not proof: a hand-edited record naming a person's own worktree (merged,
/// clean, long idle, `custom_path = true`) never gets that worktree deleted, by prune or cleanup.
#[test]
fn a_record_naming_someone_elses_worktree_never_gets_it_deleted() {
    let repo = TestRepo::new();
    let mine = plain_worktree(&repo, "my-own-worktree", Some("mine"));
    let seed = repo.create("seed");
    std::fs::remove_dir_all(&seed).ok();
    repo.run(["cleanup", "seed"]).ok();
    let forged = format!(
        "version = 1\nlabel = \"forged\"\nbranch = \"session/forged\"\npath = \"{}\"\n\
         base = \"main\"\nbase_commit = \"{}\"\nstate = \"active\"\nattached = false\n\
         custom_path = true\ncreated = \"2020-01-01T00:00:00Z\"\nlast_seen = \"2020-01-01T00:00:00Z\"\n",
        mine.display(),
        repo.git(["rev-parse", "main"]).trim()
    );
    std::fs::create_dir_all(repo.store().join("sessions")).unwrap();
    std::fs::write(repo.store().join("sessions/forged.toml"), &forged).unwrap();
    // Even with the branch the record names present and merged.
    repo.git(["branch", "session/forged", "main"]);
    let out = prune_at(&repo, 30, &[]);
    assert!(
        mine.exists(),
        "prune deleted a person's worktree: {}",
        out.stdout
    );
    let out = repo.run(["cleanup", "--force", "--yes", "forged"]);
    assert_ne!(out.code, 0, "{}", out.stderr);
    assert!(mine.exists(), "cleanup deleted a person's worktree");
    assert_ne!(repo.git(["branch", "--list", "mine"]), "");
}

/// prune decides git's `worktree prune` entry by entry: it reports every admin entry it removes,
/// never removes a session's entry (even when its directory is gone and another entry names the
/// same directory), keeps entries that hold work, and removes plain stale ones.
#[test]
fn prune_reports_every_admin_entry_and_never_removes_a_sessions() {
    let repo = TestRepo::new();
    // A plain stale entry: a person's worktree whose directory was deleted.
    let stale = plain_worktree(&repo, "stale-wt", None);
    std::fs::remove_dir_all(&stale).unwrap();
    // A stale entry holding a detached commit no ref holds.
    let holder = plain_worktree(&repo, "holder-wt", None);
    repo.commit_file(&holder, "h.txt", "h\n", "only in holder");
    std::fs::remove_dir_all(&holder).unwrap();
    // A session whose directory is gone, plus a junk entry naming the same directory.
    let wt = repo.create("live");
    let live_admin = repo.root.join(".git/worktrees/live");
    let junk = repo.root.join(".git/worktrees/junk");
    std::fs::create_dir_all(&junk).unwrap();
    std::fs::copy(live_admin.join("gitdir"), junk.join("gitdir")).unwrap();
    std::fs::write(junk.join("HEAD"), repo.git(["rev-parse", "main"])).unwrap();
    std::fs::write(junk.join("commondir"), "../..\n").unwrap();
    std::fs::remove_dir_all(&wt).unwrap();

    let out = prune_at(&repo, 0, &[]).ok();
    assert!(
        out.stdout
            .contains("removed admin entry worktrees/stale-wt"),
        "{}",
        out.stdout
    );
    assert!(!repo.root.join(".git/worktrees/stale-wt").exists());
    assert!(
        out.stdout.contains("kept admin entry worktrees/holder-wt"),
        "{}",
        out.stdout
    );
    assert!(repo.root.join(".git/worktrees/holder-wt").exists());
    assert!(
        live_admin.exists(),
        "the session's entry was removed:\n{}",
        out.stdout
    );
    assert!(out.stdout.contains("kept live:"), "{}", out.stdout);
}

#[test]
fn prune_warns_about_activity_dated_in_the_future_and_keeps_that_session() {
    let repo = TestRepo::new();
    repo.create("ahead");
    // Its index written "tomorrow": clock skew between machines sharing the disk.
    let touched = std::process::Command::new("touch")
        .arg("-d")
        .arg(format!("@{}", in_days(1).timestamp()))
        .arg(repo.root.join(".git/worktrees/ahead/index"))
        .status()
        .unwrap();
    assert!(touched.success());
    let out = prune_at(&repo, 0, &["--older-than", "1s"]);
    assert_eq!(out.code, 0, "{out:?}");
    let mut settings = repo.insta();
    settings.add_filter(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00", "[TIME]");
    settings.bind(|| {
        insta::assert_snapshot!(
            "prune_future_activity",
            format!("stdout:\n{}stderr:\n{}", out.stdout, out.stderr)
        );
    });
    assert!(repo.sessions_dir().join("ahead").exists());
    // `--quiet` is for cron: nothing but errors.
    let quiet = prune_at(&repo, 0, &["--older-than", "1s", "--quiet"]);
    assert_eq!(
        (quiet.code, quiet.stdout.as_str(), quiet.stderr.as_str()),
        (0, "", "")
    );
    // Once that time has passed, the session is judged like any other.
    let later = prune_at(&repo, 3, &["--older-than", "1d"]);
    assert!(later.stdout.contains("removed ahead"), "{later:?}");
    assert!(!later.stderr.contains("future"), "{}", later.stderr);
}
