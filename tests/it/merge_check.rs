//! `[merge] check` (issue 31): the commands run on the integrated result in a scratch worktree
//! before the base moves; a failure changes nothing; the repository's own list needs approval;
//! `--no-check` is audited; the scratch worktree goes in every outcome, a kill included.

use crate::common::{to_run, write_in, TestRepo};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn rev(repo: &TestRepo, name: &str) -> String {
    repo.git(["rev-parse", name]).trim().to_string()
}

/// The user's own configuration (needs no approval).
pub fn user_config(repo: &TestRepo, text: &str) {
    write_in(&repo.home.join(".config/git-session"), "config.toml", text);
}

/// A session adding `b.txt` while main added `a.txt` after it began: only the integrated result
/// holds both.
pub fn diverged(repo: &TestRepo) -> PathBuf {
    let wt = repo.create("feat");
    repo.commit_file(&wt, "b.txt", "b\n", "add b");
    repo.commit_file(&repo.root.clone(), "a.txt", "a\n", "add a");
    wt
}

/// Every worktree git knows, by path.
fn worktrees(repo: &TestRepo) -> Vec<String> {
    repo.git(["worktree", "list", "--porcelain"])
        .lines()
        .filter_map(|l| l.strip_prefix("worktree "))
        .map(str::to_string)
        .collect()
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

/// No scratch worktree (known to git or on disk) and no record of one.
#[track_caller]
pub fn assert_no_scratch(repo: &TestRepo) {
    let known = worktrees(repo);
    assert!(
        !known.iter().any(|w| w.contains("merge-check")),
        "{known:?}"
    );
    let left = entries(&repo.store().join("merge-check-worktrees"));
    assert!(left.is_empty(), "{left:?}");
    let records = entries(&repo.store().join("merge-checks"));
    assert!(records.is_empty(), "{records:?}");
    let admin = entries(&repo.root.join(".git/worktrees"));
    assert!(
        admin
            .iter()
            .all(|a| !std::fs::read_to_string(a.join("gitdir"))
                .unwrap_or_default()
                .contains("merge-check")),
        "{admin:?}"
    );
}

#[test]
fn a_check_that_passes_only_on_the_combined_changes_runs_on_the_integrated_result() {
    let repo = TestRepo::new();
    let root = repo.root.display().to_string();
    user_config(
        &repo,
        &format!(
            "[merge]\ncheck = [\"test -f a.txt && test -f b.txt\", \"test \\\"$(pwd)\\\" != \
             '{root}' && touch ran-here\"]\n"
        ),
    );
    let wt = diverged(&repo);
    let out = repo.run(["merge", "feat"]).ok();
    assert!(
        out.stderr
            .contains("the merge check passed on the result: `test -f a.txt && test -f b.txt`"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("running: test -f a.txt"),
        "{}",
        out.stderr
    );
    let log = repo.git(["log", "--format=%s", "main"]);
    assert_eq!(log, "add b\nadd a\ninitial\n");
    assert!(
        !repo.root.join("ran-here").exists(),
        "never in the base worktree"
    );
    assert!(!wt.exists());
    assert_no_scratch(&repo);
}

#[test]
fn a_failing_check_leaves_base_the_session_and_its_worktree_as_they_were() {
    let repo = TestRepo::new();
    user_config(
        &repo,
        "[merge]\ncheck = [\"true\", \"for i in $(seq 1 25); do echo line $i; done; echo the \
         end >&2; exit 3\", \"touch never-ran\"]\n",
    );
    let wt = diverged(&repo);
    let (main, tip) = (rev(&repo, "main"), rev(&repo, "session/feat"));
    let out = repo.run(["merge", "feat"]).fails(1);
    repo.insta().bind(|| insta::assert_snapshot!(out.stderr));
    assert_eq!(rev(&repo, "main"), main);
    assert_eq!(rev(&repo, "session/feat"), tip);
    assert!(wt.join("b.txt").is_file());
    assert_eq!(repo.git(["status", "--porcelain"]), "");
    assert_eq!(repo.git_in(&wt, ["status", "--porcelain"]), "");
    assert_eq!(repo.labels(), vec!["feat".to_string()]);
    let log = std::fs::read_to_string(repo.store().join("merge-check-logs/feat.log")).unwrap();
    assert!(log.contains("line 1\n") && log.contains("the end"), "{log}");
    assert!(!log.contains("never-ran"), "{log}");
    assert_no_scratch(&repo);
    // Nothing of it is left to hold the next attempt back.
    let out = repo.run(["merge", "feat", "--no-check"]).ok();
    assert!(
        out.stderr.contains("merged session \"feat\""),
        "{}",
        out.stderr
    );
}

#[test]
fn the_repository_s_checks_need_approval_and_skipping_them_is_audited() {
    let repo = TestRepo::new();
    repo.write(
        ".git-session.toml",
        "[merge]\ncheck = [\"touch approved-ran\"]\n",
    );
    let wt = repo.create("one");
    repo.commit_file(&wt, "one.txt", "1\n", "one");
    let main = rev(&repo, "main");
    let out = repo.run(["merge", "one"]).fails(1);
    repo.insta().bind(|| insta::assert_snapshot!(out.stderr, @r#"
    error: the [merge] check commands of .git-session.toml are not approved, so session "one" was not merged: `touch approved-ran`
    hint: read them, then: git session merge one --approve-check (or skip them: --no-check)
    "#));
    assert_eq!(rev(&repo, "main"), main);
    assert_no_scratch(&repo);

    let out = repo.run(["merge", "one", "--no-check"]).ok();
    assert!(!out.stderr.contains("running:"), "{}", out.stderr);
    let audit = std::fs::read_to_string(repo.store().join("audit.log")).unwrap_or_default();
    let skipped: Vec<&str> = audit
        .lines()
        .filter(|l| l.contains("\"merge-check-skipped\""))
        .collect();
    assert_eq!(skipped.len(), 1, "{audit}");
    assert!(skipped[0].contains("\"one\"") && skipped[0].contains("touch approved-ran"));

    let wt = repo.create("two");
    repo.commit_file(&wt, "two.txt", "2\n", "two");
    let out = repo.run(["merge", "two", "--approve-check"]).ok();
    assert!(
        out.stderr.contains("running: touch approved-ran"),
        "{}",
        out.stderr
    );
    // Approved once, the same list runs without asking again.
    let wt = repo.create("three");
    repo.commit_file(&wt, "three.txt", "3\n", "three");
    let out = repo.run(["merge", "three"]).ok();
    assert!(
        out.stderr.contains("running: touch approved-ran"),
        "{}",
        out.stderr
    );
    // A changed list asks again.
    repo.write(".git-session.toml", "[merge]\ncheck = [\"true\"]\n");
    let wt = repo.create("four");
    repo.commit_file(&wt, "four.txt", "4\n", "four");
    repo.run(["merge", "four"]).fails(1);
    assert_no_scratch(&repo);
}

#[test]
fn a_check_past_its_deadline_is_stopped_and_changes_nothing() {
    let repo = TestRepo::new();
    user_config(
        &repo,
        "[merge]\ncheck = [\"sleep 30\"]\ncheck_timeout = \"1s\"\n",
    );
    let wt = diverged(&repo);
    let main = rev(&repo, "main");
    let started = Instant::now();
    let out = repo.run(["merge", "feat"]).fails(1);
    assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
    assert!(
        out.stderr
            .contains("the merge check `sleep 30` did not finish within 1s"),
        "{}",
        out.stderr
    );
    assert_eq!(rev(&repo, "main"), main);
    assert!(wt.is_dir());
    assert_no_scratch(&repo);
}

/// The pid a check command wrote into `file`, once it is there.
fn pid_in(file: &Path) -> Option<u32> {
    std::fs::read_to_string(file).ok()?.trim().parse().ok()
}

/// Whether `pid` still runs (a zombie awaiting its reaper does not), as `ps` shows it.
fn runs(pid: u32) -> bool {
    let out = std::process::Command::new("ps")
        .args(["-o", "stat=", "-p", &pid.to_string()])
        .output()
        .unwrap();
    let stat = String::from_utf8_lossy(&out.stdout).trim().to_string();
    !stat.is_empty() && !stat.starts_with('Z')
}

#[test]
fn a_merge_killed_during_its_check_leaves_nothing_once_the_next_command_ran() {
    for step in [
        "merge-check:journal-written",
        "merge-check:worktree-added",
        "merge-check:running",
    ] {
        let repo = TestRepo::new();
        let pid_file = repo.base().join("check.pid");
        user_config(
            &repo,
            &format!(
                "[merge]\ncheck = [\"echo $$ > '{}'; exec sleep 60\"]\n",
                pid_file.display()
            ),
        );
        let wt = diverged(&repo);
        let (main, tip) = (rev(&repo, "main"), rev(&repo, "session/feat"));
        let out = to_run(
            repo.cmd_in(&repo.root)
                .env("GIT_SESSION_TEST_KILL_AT", step)
                .args(["merge", "feat"])
                .output()
                .unwrap(),
        );
        assert_eq!(out.code, -1, "{step}: killed, {out:?}");
        // The command it started outlives it, until the next command stops it.
        let pid = if step == "merge-check:running" {
            let deadline = Instant::now() + Duration::from_secs(10);
            while pid_in(&pid_file).is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            let pid = pid_in(&pid_file).expect("the check started");
            assert!(runs(pid), "{step}: the check still runs after the kill");
            Some(pid)
        } else {
            None
        };
        let list = repo.run(["list"]).ok();
        assert!(
            list.stderr.contains("removed the scratch worktree"),
            "{step}: {}",
            list.stderr
        );
        if let Some(pid) = pid {
            let deadline = Instant::now() + Duration::from_secs(5);
            while runs(pid) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            assert!(!runs(pid), "{step}: the orphaned check was stopped");
        }
        assert_no_scratch(&repo);
        assert_eq!(rev(&repo, "main"), main, "{step}");
        assert_eq!(rev(&repo, "session/feat"), tip, "{step}");
        assert_eq!(repo.git(["status", "--porcelain"]), "", "{step}");
        assert!(wt.join("b.txt").is_file(), "{step}");
        user_config(&repo, "[merge]\ncheck = [\"true\"]\n");
        repo.run(["merge", "feat"]).ok();
        assert_eq!(
            repo.git(["log", "--format=%s", "main"]),
            "add b\nadd a\ninitial\n",
            "{step}"
        );
    }
}
