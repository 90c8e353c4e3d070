//! Read-only commands do not grow the object store (issue 31): `list` and `info` judge whether a
//! session is in its base without writing the merged tree (`src/git/history.rs` wrote it).

use crate::common::{write_in, TestRepo};
use std::path::Path;

/// Every object file under `.git/objects` (loose objects and packs), by path.
fn objects(repo: &TestRepo) -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push(p.display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(&repo.root.join(".git/objects"), &mut out);
    out.sort();
    out
}

#[test]
fn list_and_info_add_no_object_to_the_repository() {
    let repo = TestRepo::new();
    // Sessions whose merge with main is a tree git has never seen: one clean, one with edits.
    let a = repo.create("a");
    repo.commit_file(&a, "a.txt", "a\n", "a one");
    repo.commit_file(&a, "a2.txt", "a2\n", "a two");
    let b = repo.create("b");
    repo.commit_file(&b, "dir/b.txt", "b\n", "b one");
    write_in(&b, "dir/b.txt", "edited\n");
    repo.commit_file(&repo.root.clone(), "main.txt", "m\n", "on main");
    // A squash merge of a into main by hand: judged by comparing trees.
    let c = repo.create("c");
    repo.commit_file(&c, "c1.txt", "1\n", "c one");
    repo.commit_file(&c, "c2.txt", "2\n", "c two");
    repo.git(["merge", "-q", "--squash", "session/c"]);
    repo.git(["commit", "-q", "-m", "squashed c"]);
    let before = objects(&repo);
    for args in [
        vec!["list"],
        vec!["list", "--json"],
        vec!["info", "a", "--json"],
        vec!["info", "b"],
        vec!["list"],
    ] {
        repo.run(&args).ok();
        assert_eq!(objects(&repo), before, "{args:?} wrote objects");
    }
    let list = repo.run(["list", "--json"]).ok().json();
    let c = list
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["label"] == "c")
        .unwrap();
    assert_eq!(c["merged"], "integrated", "{c}");
}
