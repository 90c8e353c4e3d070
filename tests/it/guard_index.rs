//! The guard's fast paths (issue 3, speed): the claims index it trusts on one `stat`, and its own
//! reader of the git index. Each test checks the fast path against ground truth.
use crate::common;
use common::TestRepo;
use std::path::Path;

/// Rewrites a record the way the store does (write `<file>.lock`, rename it over the file), so
/// the claims index is not rewritten with it.
fn store_write(file: &Path, text: &str) {
    let mut lock = file.as_os_str().to_owned();
    lock.push(".lock");
    std::fs::write(&lock, text).unwrap();
    std::fs::rename(&lock, file).unwrap();
}

/// A repository with `src/config.rs` committed and sessions A and B attached to its main
/// worktree; no hooks, as these tests run `guard pre-commit` themselves.
fn config_and_two_sessions() -> TestRepo {
    let repo = TestRepo::new();
    repo.commit_file(&repo.root.clone(), "src/config.rs", "config\n", "config");
    repo.attach("A");
    repo.attach("B");
    repo
}

/// A claims file changed right after a guard run rebuilt the index (within one filesystem clock
/// tick of its stamp) is still seen: the index is only trusted when `sessions/` and `claims/`
/// are older than the stamp, so a claim can never be missed.
#[test]
fn record_rewritten_right_after_the_index_is_seen() {
    let repo = config_and_two_sessions();
    repo.run_as("A", ["claim", "notes.txt"]).ok();
    let record = repo.store().join("claims/A.toml");
    let without = std::fs::read_to_string(&record).unwrap();
    let since = without
        .lines()
        .find_map(|l| l.strip_prefix("since = "))
        .unwrap()
        .to_string();
    let with = format!(
        "{without}\n[[claims]]\npath = \"src/config.rs\"\nhow = \"explicit\"\nsince = {since}\n"
    );
    common::write_in(&repo.root, "src/config.rs", "changed\n");
    repo.git(["add", "src/config.rs"]);
    for round in 0..15 {
        // Nothing of B's is claimed: passes, and brings the index up to date (and stamps it).
        store_write(&record, &without);
        repo.run_as("B", ["guard", "pre-commit"]).ok();
        // Immediately: A's record gains a claim on the staged path, the index is not rewritten.
        store_write(&record, &with);
        let out = repo.run_as("B", ["guard", "pre-commit"]).fails(1);
        assert!(
            out.stderr
                .contains("commit refused: src/config.rs is owned by another live session"),
            "round {round}: {}",
            out.stderr
        );
    }
    // A trusted index (the directory is older than its stamp) still answers exactly.
    std::thread::sleep(std::time::Duration::from_millis(50));
    repo.run_as("B", ["guard", "pre-commit"]).fails(1);
    repo.run_as("B", ["guard", "pre-commit"]).fails(1);
    store_write(&record, &without);
    repo.run_as("B", ["guard", "pre-commit"]).ok();
}

/// A damaged, truncated, padded or old-format claims index is rebuilt from the records, never
/// searched.
#[test]
fn damaged_claims_index_is_rebuilt() {
    let repo = config_and_two_sessions();
    let many: Vec<String> = (0..50).map(|i| format!("dir{i:02}/file.rs")).collect();
    let mut args = vec!["claim", "--", "src/config.rs"];
    args.extend(many.iter().map(String::as_str));
    repo.run_as("A", &args).ok();
    common::write_in(&repo.root, "src/config.rs", "changed\n");
    repo.git(["add", "src/config.rs"]);
    let index = repo.store().join("claims.index");
    let good = std::fs::read(&index).unwrap();
    let header_end = good.iter().position(|&b| b == b'\n').unwrap();
    let mut damaged: Vec<(&str, Vec<u8>)> = vec![
        ("truncated", good[..good.len() - 3].to_vec()),
        ("padded", [good.as_slice(), b"\n"].concat()),
        ("empty", Vec::new()),
        ("garbage", b"\x00\x01 not an index".to_vec()),
        (
            "old format",
            b"git-session claims index v1\nC\tsrc/config.rs\tB\texplicit\t2020-01-01T00:00:00Z\n"
                .to_vec(),
        ),
    ];
    // The header claims no claims at all while the body still holds them.
    let header = String::from_utf8(good[..header_end].to_vec()).unwrap();
    let fields: Vec<&str> = header.split(' ').collect();
    let mut zeroed = fields.clone();
    zeroed[5] = "0";
    damaged.push(("miscounted", {
        let mut v = zeroed.join(" ").into_bytes();
        v.extend_from_slice(&good[header_end..]);
        v
    }));
    for (what, bytes) in damaged {
        std::fs::write(&index, &bytes).unwrap();
        let out = repo.run_as("B", ["guard", "pre-commit"]).fails(1);
        assert!(
            out.stderr.contains("src/config.rs is owned"),
            "{what}: {}",
            out.stderr
        );
    }
}

/// Paths whose bytes sort around the index's separators (control bytes, backslashes, `-`, `.`,
/// a directory and its longer siblings) are each found, exactly, and a directory claim covers
/// only what is below it.
#[test]
fn tricky_claimed_paths_are_found_exactly() {
    let repo = TestRepo::new();
    repo.attach("A");
    repo.attach("B");
    let claimed = [
        "a",
        "a b",
        "a-b/x",
        "a.b",
        "a\u{1}c",
        "a\\d",
        "a\tb",
        "ab/c",
        "z/deep/er/file",
    ];
    let mut args = vec!["claim", "--"];
    args.extend(claimed);
    repo.run_as("A", &args).ok();
    for (path, owner) in [
        ("a/inside.txt", Some("a")),
        ("a b", Some("a b")),
        ("a-b/x", Some("a-b/x")),
        ("a-b/y", None),
        ("a.b", Some("a.b")),
        ("a.c", None),
        ("a\u{1}c", Some("a\u{1}c")),
        ("a\u{1}", None),
        ("a\\d", Some("a\\d")),
        ("a\tb", Some("a\tb")),
        ("ab/c", Some("ab/c")),
        // A directory over another session's claimed file: first claim wins that way too.
        ("ab", Some("ab/c")),
        ("z/deep/er/file", Some("z/deep/er/file")),
        ("z/deep/er", Some("z/deep/er/file")),
        ("z/deep/e", None),
        ("b", None),
    ] {
        let out = repo.run_as("B", ["claim", "--", path]);
        match owner {
            Some(_) => {
                assert_eq!(out.code, 1, "{path:?} should be owned: {}", out.stderr);
                assert!(out.stderr.contains("\"A\""), "{path:?}: {}", out.stderr);
            }
            None => {
                assert_eq!(out.code, 0, "{path:?} should be free: {}", out.stderr);
                repo.run_as("B", ["release", "--", path]).ok();
            }
        }
    }
}

/// Stages everything in the main worktree, writes the cache tree when `fresh_cache_tree` (else
/// leaves it invalidated), and runs the pre-commit guard: returns the fingerprint of what the
/// guard read as staged (line 2 of its marker file) and, as ground truth, the paths
/// `git diff --cached` lists, sorted.
fn guard_what_is_staged(repo: &TestRepo, fresh_cache_tree: bool) -> (Option<String>, Vec<String>) {
    repo.git(["add", "-A"]);
    if fresh_cache_tree {
        repo.git(["write-tree"]);
    }
    repo.run(["guard", "pre-commit"]).ok();
    let marker = std::fs::read_to_string(repo.root.join(".git/git-session-guard")).unwrap();
    let raw = repo.git(["diff", "--cached", "--no-renames", "--name-only", "-z"]);
    let mut staged: Vec<String> = raw
        .split('\0')
        .filter(|p| !p.is_empty())
        .map(String::from)
        .collect();
    staged.sort();
    (marker.lines().nth(1).map(String::from), staged)
}

/// The guard's fingerprint of what it read as staged (left in its marker file) equals the one
/// of `git diff --cached`, for index versions 2, 3 and 4, with the cache tree up to date (whole
/// directories skipped by count) and invalidated (directories found by binary search).
#[test]
fn staged_paths_match_git_diff_cached() {
    let repo = TestRepo::new();
    let root = repo.root.clone();
    let mut files = Vec::new();
    for dir in [
        "a", "a-b", "a.b", "a/b", "a/b/c", "big", "big2", "m", "m/n", "z",
    ] {
        for i in 0..30 {
            files.push(format!("{dir}/f{i:02}.txt"));
        }
    }
    files.extend(["a.txt".to_string(), "top".to_string(), "zz".to_string()]);
    for f in &files {
        common::write_in(&root, f, "one\n");
    }
    repo.git(["add", "-A"]);
    repo.git(["commit", "-q", "-m", "tree"]);
    let head = repo.git(["rev-parse", "HEAD"]).trim().to_string();
    for version in ["2", "3", "4"] {
        for fresh_cache_tree in [true, false] {
            repo.git(["reset", "-q", "--hard", &head]);
            repo.git(["update-index", "--index-version", version]);
            // Changes in some directories only; a deletion, a file become a directory, a new
            // directory, a new file at the top.
            common::write_in(&root, "a/b/f03.txt", "two\n");
            common::write_in(&root, "big2/f29.txt", "two\n");
            common::write_in(&root, "m/n/new.txt", "new\n");
            std::fs::remove_file(root.join("a-b/f07.txt")).unwrap();
            std::fs::remove_file(root.join("top")).unwrap();
            common::write_in(&root, "top/inner.txt", "now a directory\n");
            common::write_in(&root, "new/dir/file.txt", "new\n");
            let (marker, expected) = guard_what_is_staged(&repo, fresh_cache_tree);
            let fingerprint = git_session::internals::fingerprint(&expected);
            assert_eq!(
                marker.as_deref(),
                Some(fingerprint.as_str()),
                "version {version}, fresh cache tree {fresh_cache_tree}: expected {expected:?}"
            );
        }
    }
}

/// Paths nested deeper than the guard's walks recurse (256 directories), with the cache tree
/// fresh (two trees compared) and invalidated (the pass over the entries): libgit2 answers, as
/// exactly as `git diff --cached`. Deeper than a cache tree may nest (1,024), the index is not
/// read (libgit2 would recurse without a bound): the guard fails open, saying why.
#[test]
fn staged_paths_nested_deeper_than_the_walks_go() {
    let repo = TestRepo::new();
    let root = repo.root.clone();
    let deep = format!("{}f.txt", "d/".repeat(300));
    common::write_in(&root, &deep, "one\n");
    common::write_in(&root, "top.txt", "one\n");
    repo.git(["add", "-A"]);
    repo.git(["commit", "-q", "-m", "deep"]);
    for fresh_cache_tree in [true, false] {
        let text = if fresh_cache_tree { "two\n" } else { "three\n" };
        common::write_in(&root, &deep, text);
        common::write_in(&root, &format!("{}new.txt", "d/".repeat(280)), "new\n");
        let (marker, expected) = guard_what_is_staged(&repo, fresh_cache_tree);
        assert_eq!(expected.len(), 2, "{expected:?}");
        assert_eq!(
            marker.as_deref(),
            Some(git_session::internals::fingerprint(&expected).as_str()),
            "fresh cache tree {fresh_cache_tree}: expected {expected:?}"
        );
    }
    common::write_in(&root, &format!("{}f.txt", "e/".repeat(1100)), "too deep\n");
    repo.git(["add", "-A"]);
    repo.git(["write-tree"]);
    let out = repo.run(["guard", "pre-commit"]).ok();
    assert!(
        out.stderr.contains("nested deeper than 1024"),
        "{}",
        out.stderr
    );
}
