//! Escapes that get through are found (issue 29): where `[guard] escape = "warn"` lets an agent's
//! write into another worktree through, `list` and `info` name it while it is an uncommitted
//! change there (in the main worktree and in another session's), `info` of the writing session
//! names it too, the commit that takes it says so, and the audit log holds each one. A write the
//! tool never made, one undone, and one denied are never named.

use crate::common::{guarded, write_in, TestRepo};
use crate::context_support::hook;
use crate::worktree_escape::write_call;
use std::path::Path;

/// What `list` warns about on stderr, the lines naming writes from outside.
fn named(repo: &TestRepo) -> Vec<String> {
    let out = repo.run(["list"]).ok();
    out.stderr
        .lines()
        .filter(|l| l.contains("from outside its own worktree"))
        .map(str::to_string)
        .collect()
}

fn escaped_writes(repo: &TestRepo) -> Option<String> {
    std::fs::read_to_string(repo.store().join("escapes.toml")).ok()
}

/// Agent A, in its own worktree, calls `kind` on `file`.
fn call(repo: &TestRepo, a: &Path, kind: &str, file: &Path) {
    let (payload, _) = write_call(kind, a, file);
    hook(repo, &payload, &[]);
}

#[test]
fn writes_let_through_outside_the_worktree_are_named_until_committed_or_undone() {
    let repo = guarded();
    repo.commit_file(&repo.root, "shared.txt", "base\n", "a shared file");
    let a = repo.create("A");
    let b = repo.create("B");
    let root = repo.root.clone();

    // Denied (the default): nothing is written, so nothing is recorded.
    call(&repo, &a, "Write", &root.join("shared.txt"));
    assert_eq!(escaped_writes(&repo), None);

    repo.commit_file(
        &root,
        ".git-session.toml",
        "[guard]\nescape = \"warn\"\n",
        "escapes warn",
    );
    // Claude Code's Write into the main worktree, Codex's apply_patch into B's, and an Edit
    // into B's that the tool never carried out (it failed, or the user refused it).
    call(&repo, &a, "Write", &root.join("shared.txt"));
    call(&repo, &a, "apply_patch", &b.join("new.txt"));
    call(&repo, &a, "Edit", &b.join("never.txt"));
    write_in(&root, "shared.txt", "changed by A's agent\n");
    write_in(&b, "new.txt", "made by A's agent\n");

    let mut s = repo.insta();
    s.add_filter(r"warning: list: .*\n", "");
    let lines = named(&repo);
    s.bind(|| {
        insta::assert_snapshot!(lines.join("\n"), @r#"
        warning: session "B": an agent of session "A" wrote new.txt here from outside its own worktree, not committed; review it before a commit takes it (git diff)
        warning: the main worktree: an agent of session "A" wrote shared.txt here from outside its own worktree, not committed; review it before a commit takes it (git diff)
        "#)
    });
    let info_b = repo.run(["info", "B"]).ok().stdout;
    assert!(
        info_b.contains("an agent of session \"A\" wrote new.txt here"),
        "{info_b}"
    );
    let info_a = repo.run(["info", "A"]).ok().stdout;
    for file in [b.join("new.txt"), root.join("shared.txt")] {
        let line = format!(
            "its agent wrote {} outside its own worktree",
            file.display()
        );
        assert!(info_a.contains(&line), "{line}\n{info_a}");
    }
    assert!(!info_a.contains("never.txt"), "{info_a}");
    let warnings_b = repo.run(["info", "B", "--json"]).ok().json()["warnings"].to_string();
    assert!(warnings_b.contains("wrote new.txt here"), "{warnings_b}");

    // Undone in the main worktree: no longer a change there.
    repo.git(["checkout", "--", "shared.txt"]);
    assert_eq!(named(&repo).len(), 1, "{:?}", named(&repo));

    // B commits it: the commit says whose agent wrote it, and it is no longer named.
    repo.git_in(&b, ["add", "new.txt"]);
    let mut commit = repo.git_cmd_as(&b, "B");
    commit.args(["commit", "-q", "-m", "B takes it"]);
    let out = crate::common::to_run(commit.output().unwrap());
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains(
            "this commit holds new.txt, which an agent of session \"A\" wrote from outside its \
             own worktree"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(named(&repo), Vec::<String>::new());
    let audit = std::fs::read_to_string(repo.store().join("audit.log")).unwrap();
    assert_eq!(audit.matches("\"context-escape\"").count(), 4, "{audit}");
    assert_eq!(audit.matches("\"escape-committed\"").count(), 1, "{audit}");
}
