//! `git_session::internals::dirty_files` lists exactly the paths
//! `git status --porcelain -z --untracked-files=all --no-renames` lists, in real repositories.
//!
//! Every case states the expected paths too, so a test cannot pass by both sides being empty.
//! Our answer is taken first and git's with `--no-optional-locks`, so git never refreshes the
//! index before we read it (a racy entry stays racy for both).

use crate::common;
use common::{write_in, TestRepo};
use std::path::Path;
use std::time::{Duration, SystemTime};

#[track_caller]
fn assert_status(repo: &TestRepo, dir: &Path, expected: &[&str]) {
    let ours = git_session::internals::dirty_files(dir).unwrap();
    let git = repo.git_status_paths(dir);
    assert_eq!(ours, git, "ours vs git status in {}", dir.display());
    let mut expected: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
    expected.sort();
    assert_eq!(git, expected, "git status itself");
}

fn set_mtime(path: &Path, t: SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(t)
        .unwrap();
}

#[test]
fn clean_touched_and_reverted() {
    let repo = TestRepo::new();
    repo.commit_file(&repo.root, "src/a.txt", "alpha\n", "a");
    assert_status(&repo, &repo.root, &[]);
    // Stat changes, content does not: clean after a content check.
    set_mtime(
        &repo.root.join("src/a.txt"),
        SystemTime::now() + Duration::from_secs(30),
    );
    repo.write("README.md", "changed\n");
    repo.write("README.md", "hello\n");
    assert_status(&repo, &repo.root, &[]);
}

#[test]
fn racy_same_size_rewrite_in_the_index_second() {
    let repo = TestRepo::new();
    // Only mtime and size are left to tell: the inode stays, ctime is not trusted.
    repo.git(["config", "core.trustctime", "false"]);
    repo.commit_file(&repo.root, "a.txt", "aaaa\n", "a");
    let file = repo.root.join("a.txt");
    let recorded = std::fs::metadata(&file).unwrap().modified().unwrap();
    {
        use std::io::{Seek, Write};
        let mut f = std::fs::File::options().write(true).open(&file).unwrap();
        f.seek(std::io::SeekFrom::Start(0)).unwrap();
        f.write_all(b"bbbb\n").unwrap();
    }
    set_mtime(&file, recorded);
    // The index was written in the same second as the file's mtime: racily clean.
    set_mtime(&repo.root.join(".git/index"), recorded);
    assert_status(&repo, &repo.root, &["a.txt"]);
}

#[test]
fn staged_unstaged_deleted() {
    let repo = TestRepo::new();
    for f in ["a", "b", "c", "d", "e"] {
        repo.write(f, &format!("{f}\n"));
    }
    repo.git(["add", "."]);
    repo.git(["commit", "-q", "-m", "files"]);
    repo.write("a", "a2\n"); // unstaged
    repo.write("b", "b2\n");
    repo.git(["add", "b"]); // staged only
    repo.write("c", "c2\n");
    repo.git(["add", "c"]);
    repo.write("c", "c\n"); // staged, then modified back
    std::fs::remove_file(repo.root.join("d")).unwrap(); // deleted
    repo.git(["rm", "-q", "e"]); // deleted and staged
    assert_status(&repo, &repo.root, &["a", "b", "c", "d", "e"]);
}

#[test]
fn untracked_and_ignored() {
    let repo = TestRepo::new();
    repo.write(".gitignore", "*.log\n!keep.log\nbuild/\n");
    repo.write("sub/.gitignore", "secret.txt\n");
    repo.write("sub/tracked.txt", "t\n");
    repo.write("tracked.log", "ignored but tracked\n");
    repo.git(["add", "-f", "."]);
    repo.git(["commit", "-q", "-m", "ignores"]);
    std::fs::write(repo.root.join(".git/info/exclude"), "excluded.txt\n").unwrap();
    for f in [
        "new/deep/er/x.txt",
        "new/y.txt",
        "top.txt",
        "a.log",
        "keep.log",
        "build/out.o",
        "build/keep.log",
        "sub/secret.txt",
        "sub/visible.txt",
        "sub/deeper/z.log",
        "excluded.txt",
        "dir with space/\u{fc} \u{f1}.txt",
    ] {
        repo.write(f, "x\n");
    }
    std::fs::create_dir_all(repo.root.join("empty/dir")).unwrap();
    repo.write("tracked.log", "changed\n");
    assert_status(
        &repo,
        &repo.root,
        &[
            "dir with space/\u{fc} \u{f1}.txt",
            "keep.log",
            "new/deep/er/x.txt",
            "new/y.txt",
            "sub/visible.txt",
            "top.txt",
            "tracked.log",
        ],
    );
}

#[test]
fn exec_bit_and_symlinks() {
    use std::os::unix::fs::{symlink, PermissionsExt};
    let repo = TestRepo::new();
    repo.write("run.sh", "echo\n");
    repo.write("plain", "p\n");
    symlink("README.md", repo.root.join("link")).unwrap();
    symlink("plain", repo.root.join("link2")).unwrap();
    repo.git(["add", "."]);
    repo.git(["commit", "-q", "-m", "links"]);
    assert_status(&repo, &repo.root, &[]);
    let sh = repo.root.join("run.sh");
    std::fs::set_permissions(&sh, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::remove_file(repo.root.join("link")).unwrap();
    symlink("run.sh", repo.root.join("link")).unwrap(); // retargeted
    std::fs::remove_file(repo.root.join("link2")).unwrap();
    repo.write("link2", "plain"); // a file where a symlink was
    symlink("nowhere", repo.root.join("dangling")).unwrap(); // untracked symlink
    assert_status(&repo, &repo.root, &["dangling", "link", "link2", "run.sh"]);
    // With core.fileMode off, the exec bit does not count.
    repo.git(["config", "core.fileMode", "false"]);
    assert_status(&repo, &repo.root, &["dangling", "link", "link2"]);
}

#[test]
fn merge_conflict() {
    let repo = TestRepo::new();
    repo.commit_file(&repo.root, "f.txt", "base\n", "base");
    repo.git(["checkout", "-q", "-b", "other"]);
    repo.commit_file(&repo.root, "f.txt", "theirs\n", "theirs");
    repo.commit_file(&repo.root, "g.txt", "new\n", "clean addition");
    repo.git(["checkout", "-q", "main"]);
    repo.commit_file(&repo.root, "f.txt", "ours\n", "ours");
    let merge = repo.git_try(&repo.root, ["merge", "-q", "other"]);
    assert_ne!(merge.code, 0, "the merge must conflict");
    assert_status(&repo, &repo.root, &["f.txt", "g.txt"]);
}

#[test]
fn unborn_head_with_staged_files() {
    let repo = TestRepo::new();
    let dir = repo.base().join("fresh");
    std::fs::create_dir_all(&dir).unwrap();
    repo.git_in(&dir, ["init", "-q", "-b", "main"]);
    assert_status(&repo, &dir, &[]);
    write_in(&dir, "a.txt", "a\n");
    write_in(&dir, "d/b.txt", "b\n");
    repo.git_in(&dir, ["add", "."]);
    write_in(&dir, "c.txt", "c\n");
    assert_status(&repo, &dir, &["a.txt", "c.txt", "d/b.txt"]);
}

#[test]
fn nested_repository_and_replaced_paths() {
    let repo = TestRepo::new();
    repo.write("tracked/one.txt", "1\n");
    repo.write("file", "f\n");
    repo.git(["add", "."]);
    repo.git(["commit", "-q", "-m", "paths"]);
    let nested = repo.root.join("vendor/nested");
    std::fs::create_dir_all(&nested).unwrap();
    repo.git_in(&nested, ["init", "-q"]);
    write_in(&nested, "inside.txt", "i\n");
    // A tracked directory replaced by a file, a tracked file replaced by a directory.
    std::fs::remove_dir_all(repo.root.join("tracked")).unwrap();
    repo.write("tracked", "now a file\n");
    std::fs::remove_file(repo.root.join("file")).unwrap();
    repo.write("file/inner.txt", "now a dir\n");
    assert_status(
        &repo,
        &repo.root,
        &[
            "file",
            "file/inner.txt",
            "tracked",
            "tracked/one.txt",
            "vendor/nested/",
        ],
    );
}

#[test]
fn gitlink_missing_or_present() {
    let repo = TestRepo::new();
    let head = repo.git(["rev-parse", "HEAD"]).trim().to_string();
    repo.git([
        "update-index",
        "--add",
        "--cacheinfo",
        &format!("160000,{head},sub"),
    ]);
    repo.git(["commit", "-q", "-m", "gitlink"]);
    assert_status(&repo, &repo.root, &["sub"]);
    std::fs::create_dir(repo.root.join("sub")).unwrap();
    assert_status(&repo, &repo.root, &[]);
}

#[test]
fn index_version_4() {
    let repo = TestRepo::new();
    for i in 0..20 {
        repo.write(&format!("dir/sub/file-{i:02}.txt"), &format!("{i}\n"));
    }
    repo.git(["add", "."]);
    repo.git(["commit", "-q", "-m", "many"]);
    repo.git(["update-index", "--index-version", "4"]);
    repo.write("dir/sub/file-07.txt", "changed\n");
    std::fs::remove_file(repo.root.join("dir/sub/file-13.txt")).unwrap();
    repo.write("dir/sub/file-20.txt", "new\n");
    assert_status(
        &repo,
        &repo.root,
        &[
            "dir/sub/file-07.txt",
            "dir/sub/file-13.txt",
            "dir/sub/file-20.txt",
        ],
    );
}

#[test]
fn list_json_dirty_matches_git_status() {
    let repo = TestRepo::new();
    let clean = repo.create("clean");
    let busy = repo.create("busy");
    write_in(&busy, "README.md", "edited\n");
    write_in(&busy, "notes/todo.txt", "untracked\n");
    write_in(&busy, "staged.txt", "s\n");
    repo.git_in(&busy, ["add", "staged.txt"]);
    let rows = repo.run(["list", "--json"]).ok().json();
    let dirty = |label: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["label"] == label)
            .unwrap()["dirty"]
            .as_u64()
            .unwrap() as usize
    };
    assert_eq!(dirty("busy"), 3);
    assert_eq!(dirty("busy"), repo.git_status_paths(&busy).len());
    assert_eq!(dirty("clean"), 0);
    assert_eq!(dirty("clean"), repo.git_status_paths(&clean).len());
}

#[test]
fn crlf_conversion_counts_as_clean() {
    let repo = TestRepo::new();
    repo.git(["config", "core.autocrlf", "true"]);
    // Committed from CRLF text: the blob holds LF, the worktree CRLF.
    repo.commit_file(&repo.root, "a.txt", "one\r\ntwo\r\n", "crlf");
    // Touched: the stat no longer matches, and only the converted content equals the blob.
    set_mtime(
        &repo.root.join("a.txt"),
        SystemTime::now() + Duration::from_secs(30),
    );
    repo.write("b.txt", "new\r\n");
    assert_status(&repo, &repo.root, &["b.txt"]);
    repo.write("a.txt", "one\r\nthree\r\n");
    assert_status(&repo, &repo.root, &["a.txt", "b.txt"]);
}

/// The staged part comes from the guard's routes (two trees when the cache tree names the whole
/// index, one pass over the entries otherwise): staged additions, changes, deletions and type
/// changes in every index version, with the cache tree fresh and invalidated.
#[test]
fn staged_changes_in_every_index_version_and_cache_tree_state() {
    let repo = TestRepo::new();
    for dir in ["a", "a-b", "a/b", "big", "z"] {
        for i in 0..8 {
            repo.write(&format!("{dir}/f{i}.txt"), "one\n");
        }
    }
    repo.write("top", "file\n");
    repo.git(["add", "-A"]);
    repo.git(["commit", "-q", "-m", "tree"]);
    for version in ["2", "3", "4"] {
        for fresh_cache_tree in [true, false] {
            repo.git(["reset", "-q", "--hard", "HEAD"]);
            repo.git(["clean", "-q", "-fd"]);
            repo.git(["update-index", "--index-version", version]);
            repo.write("a/b/f3.txt", "two\n");
            repo.write("new/file.txt", "new\n");
            std::fs::remove_file(repo.root.join("a-b/f5.txt")).unwrap();
            std::fs::remove_file(repo.root.join("top")).unwrap();
            repo.write("top/inner.txt", "now a directory\n");
            repo.git(["add", "-A"]);
            if fresh_cache_tree {
                repo.git(["write-tree"]);
            }
            // Unstaged on top: a staged file changed again, an untracked one.
            repo.write("big/f1.txt", "unstaged\n");
            repo.write("z/untracked.txt", "u\n");
            assert_status(
                &repo,
                &repo.root,
                &[
                    "a-b/f5.txt",
                    "a/b/f3.txt",
                    "big/f1.txt",
                    "new/file.txt",
                    "top",
                    "top/inner.txt",
                    "z/untracked.txt",
                ],
            );
        }
    }
}

/// Paths nested 250 directories deep are read exactly (the walk recurses once per level, up to
/// 256), from `list`'s worker threads too; deeper, the worktree is reported unreadable (so no
/// removal trusts it), never a crash.
#[test]
fn paths_nested_hundreds_of_directories_deep() {
    let repo = TestRepo::new();
    let deep = format!("{}f.txt", "d/".repeat(250));
    let new = format!("{}new.txt", "d/".repeat(240));
    repo.write(&deep, "deep\n");
    repo.write("shallow.txt", "s\n");
    repo.git(["add", "-A"]);
    repo.git(["commit", "-q", "-m", "deep"]);
    repo.run(["create", "--attach", "a"]).ok();
    repo.write(&deep, "changed\n");
    repo.write(&new, "new\n");
    assert_status(&repo, &repo.root, &[deep.as_str(), new.as_str()]);
    let rows = repo.run(["list", "--json"]).ok().json();
    assert_eq!(rows[0]["dirty"], 2, "{rows}");

    repo.write(&format!("{}f.txt", "e/".repeat(300)), "too deep\n");
    repo.git(["add", "-A"]);
    let err = git_session::internals::dirty_files(&repo.root).unwrap_err();
    assert!(format!("{err:#}").contains("deeper than 256"), "{err:#}");
    let list = repo.run(["list"]).ok();
    assert!(
        list.stderr.contains("its files cannot be read"),
        "{}",
        list.stderr
    );
}

/// `list` walks a worktree once however many sessions are attached to it (`status::shared`
/// counts the walks); each session still shows the worktree's own dirty files, and a session
/// of another worktree its own.
#[test]
fn sessions_attached_to_one_worktree_all_show_its_status() {
    let repo = TestRepo::new();
    let own = repo.create("own");
    for i in 0..6 {
        repo.run(["create", "--attach", &format!("att{i}")]).ok();
    }
    repo.write("README.md", "edited\n");
    repo.write("notes/todo.txt", "untracked\n");
    repo.write("staged.txt", "s\n");
    repo.git(["add", "staged.txt"]);
    write_in(&own, "mine.txt", "mine\n");
    let root_paths = repo.git_status_paths(&repo.root);
    assert_eq!(root_paths.len(), 3, "{root_paths:?}");
    let rows = repo.run(["list", "--json"]).ok().json();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 7);
    for row in rows {
        let expected = if row["label"] == "own" {
            repo.git_status_paths(&own).len()
        } else {
            root_paths.len()
        };
        assert_eq!(row["dirty"].as_u64(), Some(expected as u64), "{row}");
    }
    let info = repo.run(["info", "--json", "att3"]).ok().json();
    assert_eq!(info["dirty_files"], serde_json::json!(root_paths));
}
