//! One rule names a path of the repository, whoever names it: `claim`/`release` on the command
//! line and the context hook's claims and refusals agree, through `..`, a symlinked directory
//! and a symlink of its own.

use crate::common;
use crate::context_support;

use common::TestRepo;
use context_support::{file_tool, hook};
use serde_json::Value;
use std::os::unix::fs::symlink;

fn claims(repo: &TestRepo) -> Vec<(String, String)> {
    repo.run(["claims", "--json"])
        .ok()
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["path"].as_str().unwrap().to_string(),
                c["label"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn the_command_line_and_the_context_hook_name_paths_by_one_rule() {
    let repo = TestRepo::new();
    let a = repo.create("alpha");
    let b = repo.create("beta");
    std::fs::create_dir_all(a.join("src")).unwrap();
    symlink(a.join("src"), a.join("alias")).unwrap();
    symlink("README.md", a.join("link")).unwrap();

    // On the command line: `..` and `.` read like a pathspec, the symlinked directory resolved
    // to the files git sees, a symlink kept as the file it is.
    repo.run_in(&a.join("src"), ["claim", "../alias/./x.rs", "../link"])
        .ok();
    // From alpha's agent: a write through the symlinked directory claims the same kind of path.
    let run = hook(
        &repo,
        &file_tool("PostToolUse", "agent-a", &a, "Write", &a.join("alias/y.rs")),
        &[],
    );
    assert_eq!(run.stdout, "");
    let mut got = claims(&repo);
    got.sort();
    let want: Vec<(String, String)> = [
        ("link", "alpha"),
        ("src/x.rs", "alpha"),
        ("src/y.rs", "alpha"),
    ]
    .iter()
    .map(|(p, l)| (p.to_string(), l.to_string()))
    .collect();
    assert_eq!(got, want);

    // beta's agent is denied those paths, named its own way in its own worktree.
    for rel in ["src/x.rs", "./src/../src/y.rs", "link"] {
        let deny = hook(
            &repo,
            &file_tool("PreToolUse", "agent-b", &b, "Edit", &b.join(rel)),
            &[],
        );
        let v: Value = serde_json::from_str(&deny.stdout)
            .unwrap_or_else(|e| panic!("{rel}: {e}: {}", deny.stdout));
        assert_eq!(
            v["hookSpecificOutput"]["permissionDecision"], "deny",
            "{rel}"
        );
    }

    // Released by the same rule that claimed: through the alias, from the worktree's root.
    let out = repo.run_in(&a, ["release", "alias/x.rs", "link"]).ok();
    assert!(
        out.stderr.contains("released src/x.rs (session \"alpha\")"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("released link (session \"alpha\")"),
        "{}",
        out.stderr
    );
    assert_eq!(
        claims(&repo),
        [("src/y.rs".to_string(), "alpha".to_string())]
    );

    // Paths that are no file of the repository are refused on the command line, one line each.
    for (bad, says) in [
        ("..", "is outside the worktree"),
        ("../beta/src/x.rs", "is outside the worktree"),
        (".git/config", "names no file of the repository"),
        (".", "names no file of the repository"),
    ] {
        let out = repo.run_in(&a, ["claim", bad]).fails(1);
        let first = out.stderr.lines().next().unwrap();
        assert!(
            first.starts_with("error: ") && first.contains(says),
            "{bad}: {}",
            out.stderr
        );
    }
    assert_eq!(claims(&repo).len(), 1);
}
