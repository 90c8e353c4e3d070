//! The staged paths against `git diff --cached`, route by route.

use super::*;
use std::process::Command;

/// A repository driven by the real `git`, hermetic.
struct Repo {
    dir: tempfile::TempDir,
}

impl Repo {
    fn new() -> Repo {
        let repo = Repo {
            dir: tempfile::tempdir().unwrap(),
        };
        repo.git(&["init", "-q", "-b", "main"]);
        repo
    }

    fn git(&self, args: &[&str]) -> String {
        let out = self.command(args).output().unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("git");
        cmd.args(args)
            .current_dir(self.dir.path())
            .env("HOME", self.dir.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "T")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "T")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
            .env("TZ", "UTC");
        cmd
    }

    fn write(&self, path: &str, text: &str) {
        let p = self.dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// What this module reads, the route that answered, and what git says.
    fn compare(&self) -> (Vec<String>, Route, Vec<String>) {
        self.compare_index(&self.dir.path().join(".git/index"))
    }

    /// [`Self::compare`] for the index file at `index`.
    fn compare_index(&self, index: &Path) -> (Vec<String>, Route, Vec<String>) {
        let repo = crate::git::Checkout::open(self.dir.path()).unwrap();
        let (ours, route) = read_staged(repo.objects(), index).unwrap();
        let out = self
            .command(&["diff", "--cached", "--no-renames", "--name-only", "-z"])
            .env("GIT_INDEX_FILE", index)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut theirs: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .split('\0')
            .filter(|p| !p.is_empty())
            .map(String::from)
            .collect();
        theirs.sort();
        (ours, route, theirs)
    }

    /// Deletes a loose object, as if the writer of the index had only computed its id.
    fn drop_object(&self, oid: &str) {
        let oid = oid.trim();
        let path = self
            .dir
            .path()
            .join(".git/objects")
            .join(&oid[..2])
            .join(&oid[2..]);
        std::fs::remove_file(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

/// A tree with directories whose names sort around `/` and one named like the extension.
fn populated() -> Repo {
    let repo = Repo::new();
    for dir in ["a", "a-b", "a.b", "a/b", "a/b/c", "big", "m/n", "TREE", "z"] {
        for i in 0..12 {
            repo.write(&format!("{dir}/f{i:02}.txt"), "one\n");
        }
    }
    for f in ["a.txt", "top", "TREE.md", "zz"] {
        repo.write(f, "one\n");
    }
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "tree"]);
    repo
}

fn change(repo: &Repo) {
    repo.write("a/b/f03.txt", "two\n");
    repo.write("TREE/f11.txt", "two\n");
    repo.write("m/n/new.txt", "new\n");
    std::fs::remove_file(repo.dir.path().join("a-b/f07.txt")).unwrap();
    std::fs::remove_file(repo.dir.path().join("top")).unwrap();
    repo.write("top/inner.txt", "now a directory\n");
    std::fs::remove_dir_all(repo.dir.path().join("z")).unwrap();
    repo.write("z", "now a file\n");
    repo.write("new/dir/file.txt", "new\n");
    repo.git(&["add", "-A"]);
}

#[test]
fn every_index_version_with_and_without_a_cache_tree_is_read_exactly_and_fast() {
    let repo = populated();
    for version in ["2", "3", "4"] {
        for eoie in ["false", "true"] {
            for fresh_cache_tree in [true, false] {
                repo.git(&["reset", "-q", "--hard", "HEAD"]);
                repo.git(&["clean", "-q", "-fd"]);
                repo.git(&["config", "index.recordEndOfIndexEntries", eoie]);
                repo.git(&["update-index", "--index-version", version]);
                change(&repo);
                if fresh_cache_tree {
                    repo.git(&["write-tree"]);
                }
                let (ours, route, theirs) = repo.compare();
                let case = format!("v{version} eoie {eoie} cache tree {fresh_cache_tree}");
                assert_eq!(ours, theirs, "{case}");
                assert!(ours.len() >= 20, "{case}: {ours:?}");
                if fresh_cache_tree {
                    // What `git commit` hands its hook: two trees compared, no entry read.
                    assert_eq!(route, Route::Trees, "{case}");
                } else {
                    // `git add` invalidated the root: the entries are walked.
                    assert!(matches!(route, Route::Walk { .. }), "{case}: {route:?}");
                }
            }
        }
    }
}

#[test]
fn nothing_staged_with_a_fresh_cache_tree_reads_no_entries() {
    let repo = populated();
    repo.git(&["write-tree"]);
    let (ours, route, theirs) = repo.compare();
    assert!(ours.is_empty() && theirs.is_empty());
    assert_eq!(route, Route::Trees);
}

/// The tree route is taken only when the cache tree names every entry's tree and the
/// object database has it; otherwise the walk answers, as exactly.
#[test]
fn the_index_tree_route_steps_aside_when_it_cannot_be_sure() {
    // An intent-to-add entry: the cache tree is valid but leaves it out.
    let repo = populated();
    change(&repo);
    repo.write("big/planned.txt", "later\n");
    repo.git(&["add", "-N", "big/planned.txt"]);
    repo.git(&["write-tree"]);
    for version in ["2", "3", "4"] {
        repo.git(&["update-index", "--index-version", version]);
        let (ours, route, theirs) = repo.compare();
        assert_eq!(ours, theirs, "v{version}");
        // Unchanged directories are hopped over (version 4 paths are decoded as they go).
        let Route::Walk { hopped } = route else {
            panic!("v{version}: {route:?}");
        };
        assert!(version == "4" || hopped > 0, "v{version}");
    }

    // The index's root tree, then only one of its subtrees, missing from the objects.
    for missing in ["", "TREE"] {
        let repo = populated();
        change(&repo);
        let root = repo.git(&["write-tree"]);
        let oid = if missing.is_empty() {
            root
        } else {
            repo.git(&["rev-parse", &format!("{}:{missing}", root.trim())])
        };
        repo.drop_object(&oid);
        let (ours, route, theirs) = repo.compare();
        assert_eq!(ours, theirs, "missing {missing:?}");
        assert!(
            matches!(route, Route::Walk { .. }),
            "missing {missing:?}: {route:?}"
        );
    }
}

/// Pins the git behaviour route 1 relies on: the index `git commit` hands its pre-commit
/// hook names its whole tree, with the trees written, for a plain commit, `-a` and `-i`; a
/// partial commit (`git commit <path>`) hands a temporary index that is walked.
#[test]
fn the_index_git_commit_hands_its_hook_is_read_as_two_trees() {
    let repo = populated();
    let hook = repo.dir.path().join(".git/hooks/pre-commit");
    std::fs::create_dir_all(hook.parent().unwrap()).unwrap();
    // Keep a copy of what the hook was handed, then refuse: the commit never happens.
    std::fs::write(
        &hook,
        "#!/bin/sh\ncp \"$GIT_INDEX_FILE\" .git/seen-index\nexit 1\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let cases: [(&str, &[&str], bool); 4] = [
        ("plain", &["commit", "-q", "-m", "x"], true),
        ("-a", &["commit", "-q", "-a", "-m", "x"], true),
        (
            "-i",
            &["commit", "-q", "-m", "x", "-i", "a/b/f03.txt"],
            true,
        ),
        ("<path>", &["commit", "-q", "-m", "x", "a/b/f03.txt"], false),
    ];
    for (name, args, trees) in cases {
        repo.git(&["reset", "-q", "--hard", "HEAD"]);
        repo.git(&["clean", "-q", "-fd"]);
        repo.write("a/b/f03.txt", "two\n");
        repo.write("big/f05.txt", "two\n");
        repo.write("m/n/new.txt", "new\n");
        repo.git(&["add", "m/n/new.txt"]);
        if name == "plain" {
            repo.git(&["add", "-A"]);
        }
        let refused = repo.command(args).output().unwrap();
        assert!(
            !refused.status.success(),
            "{name}: the hook must have run and refused"
        );
        let (ours, route, theirs) = repo.compare_index(&repo.dir.path().join(".git/seen-index"));
        assert_eq!(ours, theirs, "{name}");
        assert!(!ours.is_empty(), "{name}");
        if trees {
            assert_eq!(route, Route::Trees, "{name}");
        } else {
            assert!(matches!(route, Route::Walk { .. }), "{name}: {route:?}");
        }
    }
}

#[test]
fn conflicts_and_intent_to_add_are_read_exactly() {
    let repo = populated();
    repo.git(&["checkout", "-q", "-b", "other"]);
    repo.write("a/f01.txt", "other\n");
    repo.git(&["commit", "-q", "-am", "other"]);
    repo.git(&["checkout", "-q", "main"]);
    repo.write("a/f01.txt", "main\n");
    repo.git(&["commit", "-q", "-am", "main"]);
    let merge = repo.command(&["merge", "-q", "other"]).output().unwrap();
    assert!(!merge.status.success(), "the merge must conflict");
    assert!(repo.git(&["ls-files", "-u"]).contains("a/f01.txt"));
    repo.write("m/n/planned.txt", "later\n");
    repo.git(&["add", "-N", "m/n/planned.txt"]);
    let (ours, route, theirs) = repo.compare();
    assert_eq!(ours, theirs);
    assert!(matches!(route, Route::Walk { .. }), "{route:?}");
    assert!(ours.contains(&"a/f01.txt".to_string()), "{ours:?}");
}

#[test]
fn a_split_index_is_handed_to_libgit2() {
    let repo = populated();
    repo.git(&["update-index", "--split-index"]);
    change(&repo);
    let opened = crate::git::Checkout::open(repo.dir.path()).unwrap();
    let result = read_staged(opened.objects(), &repo.dir.path().join(".git/index"));
    // libgit2 cannot read a split index either: an error the guard reports and fails
    // open on, never a wrong answer.
    if let Ok((ours, route)) = result {
        assert_eq!(route, Route::Libgit2);
        let (_, _, theirs) = repo.compare();
        assert_eq!(ours, theirs);
    }
}

/// A damaged index is an error (the guard then fails open, loudly) or libgit2's answer,
/// never a panic: a panic would abort the hook and refuse the commit.
#[test]
fn a_damaged_index_is_an_error_not_a_crash() {
    let repo = populated();
    change(&repo);
    repo.git(&["write-tree"]);
    let good = std::fs::read(repo.dir.path().join(".git/index")).unwrap();
    let damaged = repo.dir.path().join("damaged-index");
    let opened = crate::git::Checkout::open(repo.dir.path()).unwrap();
    let mut cases: Vec<Vec<u8>> = vec![good[..good.len() / 2].to_vec(), good[..40].to_vec()];
    for at in (12..good.len()).step_by(97) {
        let mut bytes = good.clone();
        bytes[at] ^= 0xff;
        cases.push(bytes);
    }
    for bytes in cases {
        std::fs::write(&damaged, &bytes).unwrap();
        let _ = read_staged(opened.objects(), &damaged);
    }
}
