//! Collisions seen before merging (issue 31): `list --json` and `info --json` say per session
//! whether merging into base now would conflict (the paths) and which other sessions changed the
//! same paths, committed or in the worktree; computed without adding objects to the repository,
//! cached by the pair of tips.

use crate::common::{write_in, TestRepo};
use serde_json::{json, Value};
use std::path::Path;

fn object_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| {
            let p = e.path();
            if p.is_dir() {
                object_files(&p)
            } else {
                1
            }
        })
        .sum()
}

fn of<'a>(list: &'a Value, label: &str) -> &'a Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|s| s["label"] == label)
        .unwrap()
}

#[test]
fn list_and_info_name_the_conflicting_paths_and_the_sessions_that_changed_the_same_ones() {
    let repo = TestRepo::new();
    repo.write("shared.txt", "base\n");
    repo.write("other.txt", "base\n");
    repo.git(["add", "-A"]);
    repo.git(["commit", "-q", "-m", "files"]);
    let x = repo.create("x");
    repo.commit_file(&x, "shared.txt", "by x\n", "x edits shared");
    let y = repo.create("y");
    write_in(&y, "shared.txt", "y, not committed\n");
    let z = repo.create("z");
    repo.commit_file(&z, "z.txt", "z\n", "z adds its own");
    // main changed shared.txt since x began: x would conflict.
    repo.commit_file(
        &repo.root.clone(),
        "shared.txt",
        "by main\n",
        "main edits shared",
    );
    let objects = object_files(&repo.root.join(".git/objects"));
    let list = repo.run(["list", "--json"]).ok().json();
    assert_eq!(
        of(&list, "x")["collisions"],
        json!({"conflicts": ["shared.txt"], "overlaps": [{"label": "y", "paths": ["shared.txt"]}]})
    );
    assert_eq!(
        of(&list, "y")["collisions"],
        json!({"conflicts": null, "overlaps": [{"label": "x", "paths": ["shared.txt"]}]})
    );
    assert_eq!(
        of(&list, "z")["collisions"],
        json!({"conflicts": [], "overlaps": []})
    );
    let info = repo.run(["info", "x", "--json"]).ok().json();
    assert_eq!(info["collisions"], of(&list, "x")["collisions"]);
    assert_eq!(
        object_files(&repo.root.join(".git/objects")),
        objects,
        "no object added"
    );
    // Cached by the pair of tips: the second reading finds them there.
    let cache =
        std::fs::read_to_string(repo.store().join("cache/collisions.toml")).unwrap_or_default();
    let main = repo.git(["rev-parse", "main"]).trim().to_string();
    let x_tip = repo.git(["rev-parse", "session/x"]).trim().to_string();
    assert!(cache.contains(&format!("{main}-{x_tip}")), "{cache}");
    let again = repo.run(["list", "--json"]).ok().json();
    assert_eq!(again, list);
    // A new tip is judged anew: x resolved onto main no longer conflicts.
    repo.git_in(&x, ["merge", "-q", "-X", "ours", "main", "-m", "keep mine"]);
    let list = repo.run(["list", "--json"]).ok().json();
    assert_eq!(of(&list, "x")["collisions"]["conflicts"], json!([]));
}

/// Sessions `x` (conflicting with main in five long paths) and `y` (changing two of them in its
/// worktree), `z` clean.
fn colliding() -> TestRepo {
    let repo = TestRepo::new();
    let paths: Vec<String> = (1..=5)
        .map(|i| format!("src/components/authentication/provider_{i}.rs"))
        .collect();
    for p in &paths {
        repo.write(p, "base\n");
    }
    repo.git(["add", "-A"]);
    repo.git(["commit", "-q", "-m", "files"]);
    let x = repo.create("x");
    for p in &paths {
        write_in(&x, p, "by x\n");
    }
    repo.git_in(&x, ["commit", "-qam", "x edits them"]);
    let y = repo.create("y");
    write_in(&y, &paths[0], "y\n");
    write_in(&y, &paths[1], "y\n");
    let z = repo.create("z");
    repo.commit_file(&z, "z.txt", "z\n", "z adds its own");
    for p in &paths {
        repo.write(p, "by main\n");
    }
    repo.git(["commit", "-qam", "main edits them"]);
    repo
}

#[test]
fn the_table_and_info_name_conflicts_and_pairs_in_lines_of_their_own_within_80_columns() {
    let repo = colliding();
    let piped = repo.run(["list"]).ok().stdout;
    let under: Vec<&str> = piped
        .lines()
        .filter(|l| l.contains(" would conflict with ") || l.contains(" both changed "))
        .collect();
    repo.insta()
        .bind(|| insta::assert_snapshot!("list_lines_piped", under.join("\n")));
    let info = repo.run(["info", "x"]).ok().stdout;
    let lines: Vec<&str> = info
        .lines()
        .filter(|l| l.starts_with("conflicts ") || l.starts_with("overlaps "))
        .collect();
    repo.insta()
        .bind(|| insta::assert_snapshot!("info_lines", lines.join("\n")));
    // y has nothing to merge (no commit): it names x as the pair, no conflict of its own.
    let info_y = repo.run(["info", "y"]).ok().stdout;
    assert!(!info_y.contains("conflicts "), "{info_y}");
    assert!(info_y.contains("overlaps  x changed "), "{info_y}");
    // z collides with nobody: nothing said.
    let info_z = repo.run(["info", "z"]).ok().stdout;
    assert!(!info_z.contains("conflicts ") && !info_z.contains("overlaps "));
    if let Some(shown) = crate::list_fit::on_terminal(&repo, 80, "list") {
        for line in shown.lines() {
            assert!(line.chars().count() <= 80, "{line:?} in\n{shown}");
        }
        assert!(
            shown.contains("x would conflict with main in 5 files (git session info x)"),
            "{shown}"
        );
        assert!(shown.contains("x and y both changed "), "{shown}");
    }
}
