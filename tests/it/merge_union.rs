//! `[merge] union` and `[merge] regenerate` (issue 31): shared files that merge instead of
//! colliding, in batches and single merges, whatever the strategy. A union file keeps every
//! line each side added, once; a side that changed or deleted a line still conflicts and is
//! skipped intact; a generated file is rebuilt by its command on the result, and the check sees
//! the rebuilt file.

use crate::common::{write_in, TestRepo};
use crate::merge_check::user_config;

fn rev(repo: &TestRepo, name: &str) -> String {
    repo.git(["rev-parse", name]).trim().to_string()
}

const CHANGELOG: &str = "# Changelog\n\n## Unreleased\n- base entry\n\n## 1.0\n- first\n";

/// CHANGELOG.md on main, then one session per `(label, new changelog text)`, each committing
/// its text (in creation order, so the batch's order is the list's).
fn sessions_editing_the_changelog(repo: &TestRepo, edits: &[(&str, String)]) {
    repo.commit_file(&repo.root.clone(), "CHANGELOG.md", CHANGELOG, "changelog");
    for (label, text) in edits {
        let wt = repo.create(label);
        repo.commit_file(&wt, "CHANGELOG.md", text, &format!("{label}: changelog"));
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The base's changelog with `lines` added under "Unreleased", after its entry.
fn with_entries(lines: &[&str]) -> String {
    let added: String = lines.iter().map(|l| format!("{l}\n")).collect();
    CHANGELOG.replace("- base entry\n", &format!("- base entry\n{added}"))
}

#[test]
fn three_sessions_adding_a_line_each_to_a_union_changelog_merge_in_one_batch_each_line_once() {
    for strategy in ["rebase", "merge", "squash"] {
        let repo = TestRepo::new();
        let edits: Vec<(&str, String)> = ["a", "b", "c"]
            .iter()
            .map(|l| (*l, with_entries(&[&format!("- entry of {l}")])))
            .collect();
        sessions_editing_the_changelog(&repo, &edits);
        // Without `union` the second and third conflict with the first: the failure this
        // configuration exists for.
        user_config(&repo, &format!("[merge]\nstrategy = \"{strategy}\"\n"));
        let plain = repo.run(["merge", "--all", "--dry-run", "--json"]).fails(1);
        let outcomes: Vec<&str> = plain
            .json()
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["outcome"].as_str().unwrap().to_string())
            .map(|o| {
                if o == "skipped" {
                    "skipped"
                } else {
                    "would-merge"
                }
            })
            .collect();
        assert_eq!(
            outcomes,
            ["would-merge", "skipped", "skipped"],
            "{strategy}"
        );
        user_config(
            &repo,
            &format!("[merge]\nstrategy = \"{strategy}\"\nunion = [\"CHANGELOG.md\"]\n"),
        );
        let out = repo.run(["merge", "--all"]).ok();
        assert!(repo.labels().is_empty(), "{strategy}: {}", out.stderr);
        let want = with_entries(&["- entry of a", "- entry of b", "- entry of c"]);
        let merged = repo.git(["show", "main:CHANGELOG.md"]);
        assert_eq!(merged, want, "{strategy}");
        // The base's worktree followed, and nothing is left uncommitted there.
        assert_eq!(
            std::fs::read_to_string(repo.root.join("CHANGELOG.md")).unwrap(),
            want
        );
        assert_eq!(repo.git(["status", "--porcelain"]), "", "{strategy}");
    }
}

#[test]
fn a_line_two_sessions_both_added_appears_once() {
    let repo = TestRepo::new();
    user_config(&repo, "[merge]\nunion = [\"*.md\"]\n");
    sessions_editing_the_changelog(
        &repo,
        &[
            ("a", with_entries(&["- fix the login"])),
            ("b", with_entries(&["- fix the login", "- add search"])),
        ],
    );
    repo.run(["merge", "a", "b"]).ok();
    assert_eq!(
        repo.git(["show", "main:CHANGELOG.md"]),
        with_entries(&["- fix the login", "- add search"])
    );
    // A single merge takes the same way: a third session, main adding at the same place.
    let wt = repo.create("c");
    let now = repo.git(["show", "main:CHANGELOG.md"]);
    let main_text = now.replace("- add search\n", "- add search\n- from main\n");
    repo.commit_file(
        &repo.root.clone(),
        "CHANGELOG.md",
        &main_text,
        "main: changelog",
    );
    let c_text = now.replace("- add search\n", "- add search\n- add search\n- c\n");
    repo.commit_file(&wt, "CHANGELOG.md", &c_text, "c: changelog");
    repo.run(["merge", "c"]).ok();
    // c added "- add search" a second time itself: that is c's own content, kept.
    assert_eq!(
        repo.git(["show", "main:CHANGELOG.md"]),
        with_entries(&[
            "- fix the login",
            "- add search",
            "- from main",
            "- add search",
            "- c"
        ])
    );
}

#[test]
fn a_session_that_changes_an_existing_line_still_conflicts_and_is_skipped_intact() {
    let repo = TestRepo::new();
    user_config(&repo, "[merge]\nunion = [\"CHANGELOG.md\"]\n");
    let edited = with_entries(&["- entry of b"]).replace("- first\n", "- the first release\n");
    sessions_editing_the_changelog(
        &repo,
        &[("a", with_entries(&["- entry of a"])), ("b", edited)],
    );
    let b_tip = rev(&repo, "session/b");
    let b_wt = repo.sessions_dir().join("b");
    let out = repo.run(["merge", "--all"]).fails(1);
    assert!(
        out.stderr
            .contains("skipped b: session \"b\" conflicts with main"),
        "{}",
        out.stderr
    );
    assert_eq!(
        repo.git(["show", "main:CHANGELOG.md"]),
        with_entries(&["- entry of a"])
    );
    assert_eq!(rev(&repo, "session/b"), b_tip);
    assert_eq!(repo.git_in(&b_wt, ["status", "--porcelain"]), "");
    assert_eq!(repo.labels(), vec!["b".to_string()]);
    assert_eq!(repo.git(["status", "--porcelain"]), "");
}

/// The generator standing in for a package manager: `deps.lock` from every `deps/*.txt`.
const GENERATOR: &str = "#!/bin/sh\nset -e\n{ echo '# generated'; cat deps/*.txt | sort; } > \
                         deps.lock\necho regenerated >&2\n";

/// The check: the lockfile is what the generator makes of the dependencies there.
const CHECK: &str = "{ echo '# generated'; cat deps/*.txt | sort; } | cmp -s - deps.lock\n";

fn regenerating_repo(repo: &TestRepo) {
    let root = repo.root.clone();
    write_in(&root, "gen.sh", GENERATOR);
    write_in(&root, "check.sh", CHECK);
    write_in(&root, "deps/base.txt", "base-dep\n");
    repo.git(["add", "gen.sh", "check.sh", "deps/base.txt"]);
    repo.git(["commit", "-q", "-m", "generator"]);
    std::process::Command::new("sh")
        .arg("gen.sh")
        .current_dir(&root)
        .status()
        .unwrap();
    repo.git(["add", "deps.lock"]);
    repo.git(["commit", "-q", "-m", "lock"]);
}

/// A session adding `deps/<label>.txt` and the lockfile it generated.
fn session_adding_a_dep(repo: &TestRepo, label: &str) {
    let wt = repo.create(label);
    write_in(&wt, &format!("deps/{label}.txt"), &format!("{label}-dep\n"));
    let ran = std::process::Command::new("sh")
        .arg("gen.sh")
        .current_dir(&wt)
        .status()
        .unwrap();
    assert!(ran.success());
    repo.git_in(&wt, ["add", "-A"]);
    repo.git_in(&wt, ["commit", "-q", "-m", &format!("{label}: dependency")]);
    std::thread::sleep(std::time::Duration::from_millis(20));
}

#[test]
fn a_generated_file_conflicting_in_two_sessions_is_regenerated_and_the_check_sees_it() {
    let repo = TestRepo::new();
    regenerating_repo(&repo);
    for label in ["a", "b"] {
        session_adding_a_dep(&repo, label);
    }
    // Passes only where deps.lock holds every dependency: never on b with main's lockfile.
    let check = "sh check.sh && git diff --quiet HEAD";
    user_config(
        &repo,
        &format!(
            "[merge]\nregenerate = {{ \"deps.lock\" = \"sh gen.sh\" }}\ncheck = [\"{check}\"]\n"
        ),
    );
    let out = repo.run(["merge", "--all"]).ok();
    assert!(repo.labels().is_empty(), "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "merged  b: 1 commit rebased onto main, then fast-forward, deps.lock regenerated"
        ),
        "{}",
        out.stderr
    );
    let lock = repo.git(["show", "main:deps.lock"]);
    assert_eq!(lock, "# generated\na-dep\nb-dep\nbase-dep\n");
    let log = repo.git(["log", "--format=%s", "main"]);
    assert_eq!(
        log.lines().take(3).collect::<Vec<_>>(),
        vec![
            "Regenerate deps.lock after merging session/b",
            "b: dependency",
            "a: dependency"
        ],
        "{log}"
    );
    // The commit of b alone kept the base's lockfile; the regenerated one is on top.
    assert_eq!(
        repo.git(["show", "main~1:deps.lock"]),
        "# generated\na-dep\nbase-dep\n"
    );
    assert_eq!(
        std::fs::read_to_string(repo.root.join("deps.lock")).unwrap(),
        lock
    );
    assert_eq!(repo.git(["status", "--porcelain"]), "");
    // The command's output went to the check's log.
    let log = std::fs::read_to_string(repo.store().join("merge-check-logs/b.log")).unwrap();
    assert!(log.contains("$ sh gen.sh\nregenerated\n"), "{log}");
    crate::merge_check::assert_no_scratch(&repo);
}

#[test]
fn a_repository_regenerate_table_needs_approval_and_a_failing_command_merges_nothing() {
    let repo = TestRepo::new();
    regenerating_repo(&repo);
    repo.commit_file(
        &repo.root.clone(),
        ".git-session.toml",
        "[merge]\nregenerate = { \"deps.lock\" = \"sh gen.sh\" }\n",
        "team config",
    );
    for label in ["a", "b"] {
        session_adding_a_dep(&repo, label);
    }
    repo.run(["merge", "a"]).ok();
    let main = rev(&repo, "main");
    let b_tip = rev(&repo, "session/b");
    let out = repo.run(["merge", "b"]).fails(1);
    repo.insta()
        .bind(|| insta::assert_snapshot!(out.stderr.trim_end()));
    assert_eq!(
        (rev(&repo, "main"), rev(&repo, "session/b")),
        (main.clone(), b_tip.clone())
    );
    // Approved, but the command fails: nothing moves, the failure is shown.
    user_config(
        &repo,
        "[merge]\nregenerate = { \"deps.lock\" = \"sh gen.sh && exit 3\" }\n",
    );
    let out = repo.run(["merge", "b"]).fails(1);
    assert!(
        out.stderr.contains("`sh gen.sh && exit 3` exited with 3"),
        "{}",
        out.stderr
    );
    assert_eq!((rev(&repo, "main"), rev(&repo, "session/b")), (main, b_tip));
    crate::merge_check::assert_no_scratch(&repo);
    user_config(&repo, "");
    repo.run(["merge", "b", "--approve-check"]).ok();
    assert_eq!(
        repo.git(["show", "main:deps.lock"]),
        "# generated\na-dep\nb-dep\nbase-dep\n"
    );
}
