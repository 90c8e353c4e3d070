//! The index's untracked cache (`UNTR`): `list` takes untracked names from it exactly where
//! `git status --untracked-files=all` does (so it misses what git's cache misses), while the
//! full walk, and so `cleanup` and `prune`, always read the directories.
//!
//! Each repository records the cache as a user's would (`core.untrackedCache=true`,
//! `status.showUntrackedFiles=all`, one `git status`), with every directory's mtime set back
//! first so no record is racy, and checks through git's own trace that git then opens no
//! directory. Every case compares three answers: ours as git would (`AsGitStatus`) with
//! `git status --porcelain -z -uall` (run with `--no-optional-locks`, so it does not rewrite the
//! index and its cache), and our full walk with the expected truth.

use crate::common;
use common::{write_in, TestRepo};
use git_session::internals::{dirty_files_with, Untracked};
use nix::sys::stat::{utimensat, UtimensatFlags};
use nix::sys::time::TimeSpec;
use std::path::Path;
use std::sync::atomic::{AtomicI64, Ordering};

/// Whole seconds in the past, for directory mtimes; each [`record`] takes the next.
static PAST: AtomicI64 = AtomicI64::new(1_700_000_000);

fn set_mtime(path: &Path, secs: i64) {
    let t = TimeSpec::new(secs, 0);
    utimensat(None, path, &t, &t, UtimensatFlags::NoFollowSymlink).unwrap();
}

/// Every directory under `dir` (not `.git`), `dir` included.
fn dirs_under(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    out.push(dir.to_path_buf());
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.file_type().unwrap().is_dir() && e.file_name() != ".git" {
            dirs_under(&e.path(), out);
        }
    }
}

/// How many directories `git status` opens in `dir` (its trace2 statistics).
fn git_opendirs(repo: &TestRepo, dir: &Path) -> usize {
    let trace = repo.base().join("trace2.txt");
    let _ = std::fs::remove_file(&trace);
    let out = repo
        .git_cmd(dir)
        .env("GIT_TRACE2_PERF", &trace)
        .args(["--no-optional-locks", "status", "--porcelain"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = std::fs::read_to_string(&trace).unwrap();
    let n = text
        .lines()
        .find_map(|l| l.split("..opendir:").nth(1))
        .unwrap_or_else(|| panic!("no opendir statistics in git's trace:\n{text}"));
    n.trim().parse().unwrap()
}

/// Makes `git status` record a fully valid untracked cache for the worktree at `dir`; returns
/// the mtime every directory was given. (A new mtime each time: one put back to a value already
/// recorded would hide the change from git itself, which is the trick the last test plays.)
#[track_caller]
fn record(repo: &TestRepo, dir: &Path) -> i64 {
    let past = PAST.fetch_add(1, Ordering::SeqCst);
    let mut dirs = Vec::new();
    dirs_under(dir, &mut dirs);
    for d in &dirs {
        set_mtime(d, past);
    }
    repo.git_in(dir, ["status", "--porcelain"]);
    let index = repo.git_in(dir, ["rev-parse", "--git-path", "index"]);
    let index = std::fs::read(dir.join(index.trim())).unwrap();
    assert!(index.windows(4).any(|w| w == b"UNTR"), "no untracked cache");
    assert_eq!(git_opendirs(repo, dir), 0, "git does not use its cache");
    past
}

/// Ours as git would equals git's answer; our full walk equals `truth`. Returns git's answer.
#[track_caller]
fn compare(repo: &TestRepo, dir: &Path, truth: &[&str]) -> Vec<String> {
    let as_git = dirty_files_with(dir, Untracked::AsGitStatus).unwrap();
    let full = dirty_files_with(dir, Untracked::FullWalk).unwrap();
    let git = repo.git_status_paths(dir);
    assert_eq!(as_git, git, "ours as git status vs git status");
    let mut truth: Vec<String> = truth.iter().map(|s| s.to_string()).collect();
    truth.sort();
    assert_eq!(full, truth, "our full walk");
    git
}

/// A repository whose configuration makes `git status` keep an untracked cache for
/// `--untracked-files=all`, with tracked files in nested directories, ignore rules at every
/// level, and untracked files in a tracked and in an untracked directory.
fn cached_repo() -> (TestRepo, i64) {
    let repo = TestRepo::new();
    repo.git(["config", "core.untrackedCache", "true"]);
    repo.git(["config", "status.showUntrackedFiles", "all"]);
    let excludes = repo.base().join("excludes");
    std::fs::write(&excludes, "*.tmp\n").unwrap();
    repo.git(["config", "core.excludesFile", excludes.to_str().unwrap()]);
    std::fs::write(repo.root.join(".git/info/exclude"), "*.bak\n").unwrap();
    repo.write(".gitignore", "*.log\n");
    repo.write("a/one.txt", "1\n");
    repo.write("a/b/two.txt", "2\n");
    repo.write("a/b/.gitignore", "*.out\n");
    repo.write("c/three.txt", "3\n");
    repo.git(["add", "."]);
    repo.git(["commit", "-q", "-m", "tree"]);
    repo.write("a/u.txt", "u\n");
    repo.write("n/z.txt", "z\n");
    repo.write("n/deeper/y.txt", "y\n");
    for ignored in ["x.log", "a/x.tmp", "a/b/x.out", "c/x.bak"] {
        repo.write(ignored, "ignored\n");
    }
    let past = record(&repo, &repo.root);
    (repo, past)
}

const UNTRACKED: [&str; 3] = ["a/u.txt", "n/deeper/y.txt", "n/z.txt"];

fn with(extra: &[&'static str]) -> Vec<&'static str> {
    let mut v = UNTRACKED.to_vec();
    v.extend_from_slice(extra);
    v.sort();
    v
}

#[test]
fn a_recorded_cache_gives_gits_answer_and_changes_are_seen() {
    let (repo, _) = cached_repo();
    let root = repo.root.clone();
    assert_eq!(compare(&repo, &root, &UNTRACKED), UNTRACKED);

    // A new file in a tracked directory, a new directory, a file in an untracked directory.
    write_in(&root, "a/new.txt", "n\n");
    write_in(&root, "d/e/f.txt", "f\n");
    write_in(&root, "n/deeper/w.txt", "w\n");
    let now = with(&["a/new.txt", "d/e/f.txt", "n/deeper/w.txt"]);
    assert_eq!(compare(&repo, &root, &now), now);

    // Recorded again, then untracked files deleted.
    record(&repo, &root);
    std::fs::remove_file(root.join("a/u.txt")).unwrap();
    std::fs::remove_file(root.join("n/deeper/y.txt")).unwrap();
    let now = ["a/new.txt", "d/e/f.txt", "n/deeper/w.txt", "n/z.txt"];
    assert_eq!(compare(&repo, &root, &now), now);

    // A nested repository is one entry, from the cache as from the walk.
    repo.git(["init", "-q", "nested"]);
    write_in(&root, "nested/inside.txt", "i\n");
    record(&repo, &root);
    let now = [
        "a/new.txt",
        "d/e/f.txt",
        "n/deeper/w.txt",
        "n/z.txt",
        "nested/",
    ];
    assert_eq!(compare(&repo, &root, &now), now);
}

#[test]
fn edited_ignore_rules_invalidate_what_they_cover() {
    let (repo, _) = cached_repo();
    let root = repo.root.clone();
    // Written in place: no directory's mtime moves, only the ignore files' ids tell.
    write_in(&root, ".gitignore", "*.log\nu.txt\n");
    let now = [".gitignore", "n/deeper/y.txt", "n/z.txt"];
    assert_eq!(compare(&repo, &root, &now), now);
    write_in(&root, ".gitignore", "*.log\n");

    record(&repo, &root);
    write_in(&root, "a/b/.gitignore", "*.out\n!x.out\n");
    let now = with(&["a/b/.gitignore", "a/b/x.out"]);
    assert_eq!(compare(&repo, &root, &now), now);
    write_in(&root, "a/b/.gitignore", "*.out\n");

    record(&repo, &root);
    std::fs::write(root.join(".git/info/exclude"), "*.bak\nz.txt\n").unwrap();
    let now = ["a/u.txt", "n/deeper/y.txt"];
    assert_eq!(compare(&repo, &root, &now), now);

    record(&repo, &root);
    std::fs::write(repo.base().join("excludes"), "").unwrap();
    let now = ["a/u.txt", "a/x.tmp", "n/deeper/y.txt"];
    assert_eq!(compare(&repo, &root, &now), now);

    // Another core.excludesFile altogether.
    record(&repo, &root);
    let other = repo.base().join("other-excludes");
    std::fs::write(&other, "y.txt\n").unwrap();
    repo.git(["config", "core.excludesFile", other.to_str().unwrap()]);
    let now = ["a/u.txt", "a/x.tmp"];
    assert_eq!(compare(&repo, &root, &now), now);
}

#[test]
fn a_damaged_cache_is_done_without() {
    let (repo, past) = cached_repo();
    // So that only the mtime, put back below, tells (see the last test).
    repo.git(["config", "core.trustCtime", "false"]);
    let root = repo.root.clone();
    let index_path = root.join(".git/index");
    let good = std::fs::read(&index_path).unwrap();
    let at = good.windows(4).position(|w| w == b"UNTR").unwrap();
    let len = u32::from_be_bytes(good[at + 4..at + 8].try_into().unwrap()) as usize;
    let body = at + 8..at + 8 + len;
    // A new file whose directory's mtime is put back: only a walk sees it, so the answers
    // below show whether the cache was used.
    write_in(&root, "a/sneaky.txt", "s\n");
    set_mtime(&root.join("a"), past);
    let truth = with(&["a/sneaky.txt"]);
    let name = good[body.clone()]
        .windows(6)
        .position(|w| w == b"u.txt\0")
        .unwrap();
    for (what, at, byte) in [
        // The last byte must be NUL (git's reader refuses the cache too).
        ("the final NUL", body.end - 1, b'x'),
        // The ident's length, so nothing after it reads as written.
        ("the ident length", body.start, 0x7f),
        // A name that is not one path component.
        ("an untracked name", body.start + name, b'/'),
    ] {
        let mut bad = good.clone();
        bad[at] = byte;
        std::fs::write(&index_path, &bad).unwrap();
        let as_git = dirty_files_with(&root, Untracked::AsGitStatus).unwrap();
        let full = dirty_files_with(&root, Untracked::FullWalk).unwrap();
        assert_eq!(as_git, full, "{what}");
        assert_eq!(full, truth, "{what}");
    }
    std::fs::write(&index_path, &good).unwrap();
    assert_eq!(
        repo.git_status_paths(&root),
        UNTRACKED,
        "git's cache hides a/sneaky.txt"
    );
    assert_eq!(
        dirty_files_with(&root, Untracked::AsGitStatus).unwrap(),
        UNTRACKED
    );
    // Every byte of the body replaced: never a crash nor an error. (Damage that still decodes,
    // say a changed name, gives what git would make of the same bytes: a cache is only ever as
    // right as its bytes.)
    for at in body {
        for byte in [0x00, 0xff] {
            let mut bad = good.clone();
            bad[at] = byte;
            std::fs::write(&index_path, &bad).unwrap();
            dirty_files_with(&root, Untracked::AsGitStatus)
                .unwrap_or_else(|e| panic!("byte {at} = {byte:#x}: {e:#}"));
        }
    }
}

/// The safety line: a file the cache cannot see (created in a directory whose mtime is then put
/// back, with `core.trustCtime=false`, so the directory's new ctime does not tell either) is
/// missed by `git status` and by `list`, which count as git counts, but `prune` and `cleanup`
/// decide on the full walk and keep the session.
#[test]
fn cleanup_and_prune_see_what_the_cache_hides_while_list_counts_as_git() {
    let repo = TestRepo::new();
    repo.git(["config", "core.untrackedCache", "true"]);
    repo.git(["config", "status.showUntrackedFiles", "all"]);
    repo.git(["config", "core.trustCtime", "false"]);
    repo.commit_file(&repo.root, "src/lib.txt", "l\n", "src");
    let wt = repo.create("s");
    let past = record(&repo, &wt);
    write_in(&wt, "src/sneaky.txt", "s\n");
    set_mtime(&wt.join("src"), past);

    assert_eq!(repo.git_status_paths(&wt), Vec::<String>::new());
    assert_eq!(git_opendirs(&repo, &wt), 0);
    assert_eq!(
        dirty_files_with(&wt, Untracked::FullWalk).unwrap(),
        ["src/sneaky.txt"]
    );
    let dirty = |rows: serde_json::Value| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["label"] == "s")
            .map(|r| r["dirty"].as_u64().unwrap())
            .unwrap()
    };
    assert_eq!(dirty(repo.run(["list", "--json"]).ok().json()), 0);

    // Thirty days later the session is merged (it has no commits), clean as far as the cache
    // knows, and idle: prune would remove it if it trusted the cache.
    let later = (chrono::Utc::now() + chrono::Duration::days(30)).to_rfc3339();
    let mut prune = repo.cmd_in(&repo.root);
    prune
        .env("GIT_SESSION_NOW", &later)
        .args(["prune", "--older-than", "7d"]);
    let out = common::to_run(prune.output().unwrap()).ok();
    assert!(
        out.stdout.contains("kept s: ") && out.stdout.contains("untracked"),
        "{}",
        out.stdout
    );
    assert!(wt.join("src/sneaky.txt").exists());

    let out = repo.run(["cleanup", "s"]).fails(1);
    assert!(
        out.stderr.contains("    src/sneaky.txt\n"),
        "{}",
        out.stderr
    );
    assert!(wt.join("src/sneaky.txt").exists());

    // The same session once the file is really gone: prune removes it.
    std::fs::remove_file(wt.join("src/sneaky.txt")).unwrap();
    let out = common::to_run(prune.output().unwrap()).ok();
    assert!(out.stdout.contains("removed s: "), "{}", out.stdout);
    assert!(!wt.exists());
}
