//! `merge --all` and several labels (issue 31): every ready session in creation order, each onto
//! the result of the one before and checked there; one that conflicts or fails its check is
//! skipped and left exactly as it was; `--dry-run` moves nothing; two batches at once lose
//! nothing.

use crate::common::{to_run, write_in, Run, TestRepo};
use crate::merge_check::user_config;
use std::path::PathBuf;
use std::process::Stdio;

fn rev(repo: &TestRepo, name: &str) -> String {
    repo.git(["rev-parse", name]).trim().to_string()
}

/// A commit in `wt` by an agent of its own.
fn agent_commit(repo: &TestRepo, wt: &std::path::Path, rel: &str, content: &str, who: &str) {
    write_in(wt, rel, content);
    repo.git_in(wt, ["add", "--", rel]);
    let author = format!("Agent {who} <{who}@agents.example>");
    repo.git_in(
        wt,
        [
            "commit",
            "-q",
            "--author",
            &author,
            "-m",
            &format!("{who}: {rel}"),
        ],
    );
}

/// Five sessions made in the order a..e: `c` conflicts with `b` (both rewrite README.md) and `d`
/// fails the check (it adds `fail.txt`); main moved on after they began.
fn five() -> (TestRepo, Vec<PathBuf>) {
    let repo = TestRepo::new();
    user_config(&repo, "[merge]\ncheck = [\"test ! -e fail.txt\"]\n");
    let mut wts = Vec::new();
    for label in ["a", "b", "c", "d", "e"] {
        wts.push(repo.create(label));
        // Creation times differ, so the order is the creation order, not the labels'.
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    agent_commit(&repo, &wts[0], "a.txt", "a\n", "a");
    agent_commit(&repo, &wts[1], "README.md", "by b\n", "b");
    agent_commit(&repo, &wts[2], "README.md", "by c\n", "c");
    agent_commit(&repo, &wts[3], "fail.txt", "d\n", "d");
    agent_commit(&repo, &wts[4], "e.txt", "e\n", "e");
    repo.commit_file(&repo.root.clone(), "main.txt", "m\n", "on main");
    (repo, wts)
}

#[test]
fn a_batch_merges_the_ready_in_order_and_skips_a_conflict_and_a_failed_check_intact() {
    let (repo, wts) = five();
    let (c_tip, d_tip) = (rev(&repo, "session/c"), rev(&repo, "session/d"));
    let out = repo.run(["merge", "--all"]).fails(1);
    let summary: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| {
            l.starts_with("merged  ") || l.starts_with("skipped ") || l.starts_with("error")
        })
        .collect();
    repo.insta()
        .bind(|| insta::assert_snapshot!(summary.join("\n")));
    let log = repo.git(["log", "--format=%s|%an|%P", "main"]);
    let subjects: Vec<&str> = log.lines().map(|l| l.split('|').next().unwrap()).collect();
    assert_eq!(
        subjects,
        vec!["e: e.txt", "b: README.md", "a: a.txt", "on main", "initial"],
        "{log}"
    );
    assert!(
        log.lines()
            .all(|l| !l.split('|').nth(2).unwrap().contains(' ')),
        "linear: {log}"
    );
    for (who, line) in [("e", 0), ("b", 1), ("a", 2)] {
        assert_eq!(
            log.lines().nth(line).unwrap().split('|').nth(1).unwrap(),
            format!("Agent {who}"),
            "{log}"
        );
    }
    // The skipped two are exactly as they were.
    assert_eq!(rev(&repo, "session/c"), c_tip);
    assert_eq!(rev(&repo, "session/d"), d_tip);
    for wt in [&wts[2], &wts[3]] {
        assert!(wt.is_dir());
        assert_eq!(repo.git_in(wt, ["status", "--porcelain"]), "");
    }
    assert_eq!(repo.labels(), vec!["c".to_string(), "d".to_string()]);
    assert_eq!(repo.git(["status", "--porcelain"]), "");
    assert!(!repo.root.join("fail.txt").exists());
}

/// `merge --json` output fits schema/merge.schema.json, as published and closed (no key the
/// schema does not describe).
#[track_caller]
fn fits_schema(items: &serde_json::Value) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/merge.schema.json");
    let mut schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    for closed in [false, true] {
        if closed {
            schema["items"]["additionalProperties"] = serde_json::json!(false);
        }
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(&schema)
            .unwrap();
        let errors: Vec<String> = validator
            .iter_errors(items)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{errors:?}\n{items}");
    }
}

#[test]
fn a_dry_run_computes_and_checks_everything_and_moves_nothing() {
    let (repo, _wts) = five();
    let refs = repo.git(["for-each-ref", "--format=%(refname) %(objectname)"]);
    let out = repo.run(["merge", "--all", "--dry-run", "--json"]).fails(1);
    let items = out.json();
    let outcomes: Vec<(String, String)> = items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["label"].as_str().unwrap().to_string(),
                i["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want: Vec<(String, String)> = [
        ("a", "would-merge"),
        ("b", "would-merge"),
        ("c", "skipped"),
        ("d", "skipped"),
        ("e", "would-merge"),
    ]
    .iter()
    .map(|(l, o)| (l.to_string(), o.to_string()))
    .collect();
    assert_eq!(outcomes, want, "{}", out.stdout);
    assert!(
        items[2]["why"].as_str().unwrap().contains("conflict"),
        "{items}"
    );
    assert!(
        items[3]["why"]
            .as_str()
            .unwrap()
            .contains("test ! -e fail.txt"),
        "{items}"
    );
    fits_schema(&items);
    assert_eq!(
        repo.git(["for-each-ref", "--format=%(refname) %(objectname)"]),
        refs
    );
    assert_eq!(repo.labels().len(), 5);
    // The plan is what the batch then does.
    let planned_tip = items[4]["tip"].as_str().unwrap().to_string();
    let done = repo.run(["merge", "--all", "--json"]).fails(1).json();
    fits_schema(&done);
    assert_eq!(done[4]["outcome"], "merged");
    assert_eq!(rev(&repo, "main"), planned_tip);
}

#[test]
fn two_batches_at_once_lose_nothing() {
    let repo = TestRepo::new();
    user_config(&repo, "[merge]\ncheck = [\"sleep 1\"]\n");
    let labels = ["p", "q", "r", "s"];
    for label in labels {
        let wt = repo.create(label);
        agent_commit(&repo, &wt, &format!("{label}.txt"), "x\n", label);
    }
    let children: Vec<_> = (0..2)
        .map(|_| {
            repo.cmd_in(&repo.root)
                .args(["merge", "--all"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outs: Vec<Run> = children
        .into_iter()
        .map(|c| to_run(c.wait_with_output().unwrap()))
        .collect();
    for out in &outs {
        assert!(out.code == 0 || out.code == 1, "{out:?}");
    }
    // Whatever one batch skipped (taken by the other, or beaten to main twice) is still there
    // to merge: nothing is lost, nothing merged twice.
    if !repo.labels().is_empty() {
        repo.run(["merge", "--all"]).ok();
    }
    let log = repo.git(["log", "--format=%s|%P", "main"]);
    for label in labels {
        assert_eq!(
            log.matches(&format!("{label}: {label}.txt|")).count(),
            1,
            "{label} once: {log}\n{outs:?}"
        );
    }
    assert_eq!(log.lines().count(), 5, "{log}");
    assert!(log
        .lines()
        .all(|l| !l.split('|').nth(1).unwrap().contains(' ')));
    assert_eq!(repo.labels(), Vec::<String>::new());
    assert_eq!(repo.git(["status", "--porcelain"]), "");
}
