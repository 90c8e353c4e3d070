//! Issue 3: path ownership and the commit guard, against real git with the hooks installed.
use crate::common;
use common::{guarded, TestRepo};

pub(crate) fn audit(repo: &TestRepo) -> String {
    std::fs::read_to_string(repo.store().join("audit.log")).unwrap_or_default()
}

/// 1. Two sessions in one worktree: B's `git add -A && git commit` would sweep A's staged edit.
#[test]
fn one_worktree_collision_is_refused_then_owner_commits() {
    let repo = common::a_owns_config();
    let root = repo.root.clone();
    common::write_in(&root, "src/config.rs", "A's edit\n");
    repo.git(["add", "src/config.rs"]);
    common::write_in(&root, "notes.txt", "B's work\n");
    repo.git(["add", "-A"]);
    let refused = repo
        .git_as(&root, "B", ["commit", "-q", "-m", "B's work"])
        .fails(1);
    repo.insta()
        .bind(|| insta::assert_snapshot!("refusal", refused.stderr));
    assert_eq!(repo.head_subject(&root), "lib");
    repo.git_as(&root, "A", ["commit", "-q", "-m", "A's work"])
        .ok();
    assert_eq!(repo.head_subject(&root), "A's work");
}

/// A refusal is the guard's answer, not an error: with Rust's backtrace variables set (as many
/// Rust developers keep them) it reads the same, exit 1, and carries no backtrace.
#[test]
fn a_refusal_is_the_same_whatever_the_backtrace_variables_say() {
    let repo = common::a_owns_config();
    let root = repo.root.clone();
    common::write_in(&root, "src/config.rs", "B's edit\n");
    repo.git(["add", "src/config.rs"]);
    let refusal = |vars: &[(&str, &str)]| {
        let mut cmd = repo.cmd_in(&root);
        cmd.env_remove("RUST_BACKTRACE")
            .env_remove("RUST_LIB_BACKTRACE")
            .env("GIT_SESSION", "B")
            .args(["guard", "pre-commit"]);
        for (k, v) in vars {
            cmd.env(k, v);
        }
        common::to_run(cmd.output().unwrap()).fails(1).stderr
    };
    let plain = refusal(&[]);
    assert!(plain.contains("commit refused"), "{plain}");
    for vars in [
        &[("RUST_BACKTRACE", "1")][..],
        &[("RUST_BACKTRACE", "full"), ("RUST_LIB_BACKTRACE", "1")][..],
    ] {
        assert_eq!(refusal(vars), plain, "{vars:?}");
    }
}

/// 2. Separate worktrees; ownership by commit ends with the merge; liveness ends it too.
#[test]
fn commit_claims_in_separate_worktrees_end_with_merge() {
    let repo = guarded();
    let a = repo.create("A");
    let b = repo.create("B");
    repo.commit_file(&a, "src/lib.rs", "A's lib\n", "A changes lib");
    let claims = repo.claims();
    assert_eq!(claims[0]["path"], "src/lib.rs");
    assert_eq!(claims[0]["label"], "A");
    assert_eq!(claims[0]["how"], "commit");
    assert_eq!(claims[0]["live"], true);
    common::write_in(&b, "src/lib.rs", "B's lib\n");
    repo.git_in(&b, ["add", "src/lib.rs"]);
    let out = repo.git_try(&b, ["commit", "-q", "-m", "B lib"]).fails(1);
    assert!(
        out.stderr.contains("session \"A\" (branch session/A)"),
        "{}",
        out.stderr
    );
    // When A stops being live, B goes through with a warning (nothing is committed here: dry check).
    let later = [("GIT_SESSION_NOW", "2099-01-01T00:00:00Z")];
    let mut cmd = repo.cmd_in(&b);
    cmd.envs(later).args(["guard", "pre-commit"]);
    let out = common::to_run(cmd.output().unwrap()).ok();
    assert!(out.stderr.contains("no longer live"), "{}", out.stderr);
    // Merged into main: A's commit claim has ended. B's guard, acting on the path, removes
    // the ended record (it never comes back) and B's commit claims it anew.
    repo.git(["merge", "-q", "--no-edit", "session/A"]);
    let claims = repo.claims();
    let a_claim = claims.iter().find(|c| c["label"] == "A").unwrap();
    assert_eq!(a_claim["live"], false);
    repo.git_try(&b, ["commit", "-q", "-m", "B lib"]).ok();
    assert_eq!(repo.head_subject(&b), "B lib");
    let claims = repo.claims();
    assert!(claims.iter().all(|c| c["label"] != "A"), "{claims:?}");
    let b_claim = claims.iter().find(|c| c["label"] == "B").unwrap();
    assert_eq!(b_claim["path"], "src/lib.rs");
    assert_eq!(b_claim["live"], true);
}

/// 3. `commit -a`, `commit <path>`, `commit --only <path>` in a linked worktree; renames,
///    deletions.
#[test]
fn temp_indexes_renames_and_deletions_are_guarded() {
    let repo = guarded();
    let b = repo.create("B");
    repo.attach("A");
    repo.run_as("A", ["claim", "src/config.rs"]).ok();
    common::write_in(&b, "src/config.rs", "B edits\n");
    for args in [
        vec!["commit", "-q", "-a", "-m", "x"],
        vec!["commit", "-q", "-m", "x", "src/config.rs"],
        vec!["commit", "-q", "--only", "-m", "x", "src/config.rs"],
    ] {
        let out = repo.git_try(&b, &args).fails(1);
        assert!(
            out.stderr.contains("src/config.rs"),
            "{args:?}: {}",
            out.stderr
        );
    }
    repo.git_in(&b, ["checkout", "--", "src/config.rs"]);
    repo.git_in(&b, ["mv", "src/config.rs", "src/settings.rs"]);
    let out = repo.git_try(&b, ["commit", "-q", "-m", "rename"]).fails(1);
    assert!(out.stderr.contains("src/config.rs"), "{}", out.stderr);
    repo.git_in(&b, ["reset", "-q", "--hard"]);
    repo.git_in(&b, ["rm", "-q", "src/config.rs"]);
    repo.git_try(&b, ["commit", "-q", "-m", "delete"]).fails(1);
    // Renaming *onto* an owned name is guarded by the new path.
    repo.git_in(&b, ["reset", "-q", "--hard"]);
    repo.run_as("A", ["claim", "src/new.rs"]).ok();
    repo.git_in(&b, ["mv", "src/lib.rs", "src/new.rs"]);
    let out = repo.git_try(&b, ["commit", "-q", "-m", "rename"]).fails(1);
    assert!(out.stderr.contains("src/new.rs"), "{}", out.stderr);
    // Unowned work still commits from a temp index.
    repo.git_in(&b, ["reset", "-q", "--hard"]);
    common::write_in(&b, "src/lib.rs", "fine\n");
    repo.git_try(&b, ["commit", "-q", "-a", "-m", "fine"]).ok();
}

/// 4. Hostile path names are data, never code.
#[test]
fn weird_paths_are_exact_and_never_evaluated() {
    let repo = common::two_sessions_in_one_worktree();
    let root = repo.root.clone();
    let names = [
        "with space.txt",
        "quote\"d'.txt",
        "new\nline.txt",
        "-leading.txt",
        "$(touch canary).txt",
    ];
    for name in names {
        common::write_in(&root, name, "v1\n");
    }
    repo.git(["add", "-A"]);
    repo.git(["commit", "-q", "-m", "weird"]);
    let mut claim = vec!["claim", "--"];
    claim.extend(names);
    repo.run_as("A", &claim).ok();
    let mut got: Vec<String> = repo
        .claims()
        .iter()
        .map(|c| c["path"].as_str().unwrap().to_string())
        .collect();
    got.sort();
    let mut want: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(got, want);
    for name in names {
        common::write_in(&root, name, "v2\n");
        repo.git(["add", "--", name]);
        let out = repo
            .git_as(&root, "B", ["commit", "-q", "-m", "x"])
            .fails(1);
        assert!(
            out.stderr.contains(&name.escape_debug().to_string()),
            "{name:?}: {}",
            out.stderr
        );
        repo.git(["reset", "-q", "--hard"]);
    }
    // A path sharing a prefix with an owned one is not owned.
    common::write_in(&root, "with space.txt2", "x\n");
    repo.git(["add", "--", "with space.txt2"]);
    repo.git_as(&root, "B", ["commit", "-q", "-m", "prefix"])
        .ok();
    assert!(!root.join("canary").exists());
    assert!(!repo.home.join("canary").exists());
}

/// 5. The audited bypass, and `--no-verify` caught after the fact.
#[test]
fn bypass_is_audited_and_no_verify_is_caught_by_post_commit() {
    let repo = common::two_sessions_in_one_worktree();
    let root = repo.root.clone();
    repo.run_as("A", ["claim", "src/config.rs", "src/lib.rs"])
        .ok();
    common::write_in(&root, "src/config.rs", "bypass\n");
    repo.git(["add", "-A"]);
    // B commits what is staged with the guard switched off.
    let bypass = |message: &str| {
        let mut cmd = repo.git_cmd_as(&root, "B");
        cmd.env("GIT_SESSION_GUARD", "off")
            .args(["commit", "-q", "-m", message]);
        common::to_run(cmd.output().unwrap())
    };
    let out = bypass("bypass").ok();
    assert!(
        out.stderr.contains("GIT_SESSION_GUARD=off"),
        "{}",
        out.stderr
    );
    assert!(
        audit(&repo).contains("\"event\":\"guard-bypass\""),
        "{}",
        audit(&repo)
    );
    // The audit line names the session acting.
    assert!(
        audit(&repo).contains("\"session\":\"B\""),
        "{}",
        audit(&repo)
    );
    // An audit log that cannot be written: the bypass still goes through, and says so loudly.
    let log = repo.store().join("audit.log");
    std::fs::remove_file(&log).unwrap();
    std::fs::create_dir(&log).unwrap();
    common::write_in(&root, "src/config.rs", "bypass again\n");
    repo.git(["add", "-A"]);
    let out = bypass("again").ok();
    assert!(
        out.stderr.contains("THIS BYPASS IS NOT RECORDED"),
        "{}",
        out.stderr
    );
    std::fs::remove_dir(&log).unwrap();
    common::write_in(&root, "src/lib.rs", "sneaky\n");
    repo.git(["add", "-A"]);
    let out = repo
        .git_as(&root, "B", ["commit", "-q", "--no-verify", "-m", "sneaky"])
        .ok();
    assert_eq!(repo.head_subject(&root), "sneaky");
    assert!(
        out.stderr.contains("without the ownership guard"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("src/lib.rs: owned by session \"A\""),
        "{}",
        out.stderr
    );
    let log = audit(&repo);
    assert!(
        log.contains("\"event\":\"guard-unguarded-commit\""),
        "{log}"
    );
    // A guarded commit leaves no such warning.
    common::write_in(&root, "free.txt", "ok\n");
    repo.git(["add", "free.txt"]);
    let out = repo.git_as(&root, "B", ["commit", "-q", "-m", "ok"]).ok();
    assert!(!out.stderr.contains("WARNING"), "{}", out.stderr);
}

/// 7. First claim wins; release frees; `[guard] shared` globs are never refused.
#[test]
fn first_claim_wins_release_and_shared_globs() {
    let repo = TestRepo::new();
    repo.write(
        ".git-session.toml",
        "[guard]\nshared = [\"*.lock\", \"CHANGELOG.md\"]\n",
    );
    repo.commit_file(&repo.root.clone(), "Cargo.lock", "v1\n", "lock");
    repo.run(["hooks", "install"]).ok();
    let root = repo.root.clone();
    repo.attach("A");
    repo.attach("B");
    // Relative to the current directory, like a pathspec.
    std::fs::create_dir_all(root.join("src")).unwrap();
    repo.run_as_in(
        &root.join("src"),
        "A",
        ["claim", "main.rs", "../Cargo.lock"],
    )
    .ok();
    let out = repo.run_as("B", ["claim", "src/main.rs"]).fails(1);
    repo.insta()
        .bind(|| insta::assert_snapshot!("claim_refused", out.stderr));
    let out = repo.run_as("B", ["claim", "src/main.rs/inner"]).fails(1);
    assert!(out.stderr.contains("session \"A\""), "{}", out.stderr);
    // Shared: A's claim on the lock file does not stop B.
    common::write_in(&root, "Cargo.lock", "v2\n");
    repo.git(["add", "Cargo.lock"]);
    repo.git_as(&root, "B", ["commit", "-q", "-m", "lock"]).ok();
    repo.run_as("A", ["release", "src/main.rs"]).ok();
    repo.run_as("B", ["claim", "src/main.rs"]).ok();
    let claims = repo.claims();
    let owner = claims.iter().find(|c| c["path"] == "src/main.rs").unwrap();
    assert_eq!(owner["label"], "B");
    repo.run_as("A", ["release", "--all"]).ok();
    assert_eq!(repo.claims().len(), 1);
    // Nobody is acting in a worktree shared by two sessions without GIT_SESSION.
    let out = repo.run(["claim", "x"]).fails(1);
    assert!(out.stderr.contains("GIT_SESSION"), "{}", out.stderr);
}

/// First claim wins for every path a claim covers, in both directions: a directory claim over
/// another live session's file is refused naming it, a file claim inside another live session's
/// directory claim is refused, and where claims overlap anyway (written before this rule, or by
/// hand) the earlier claim wins at commit time: the first owner's own commit is never blocked.
#[test]
fn first_claim_wins_in_both_directions() {
    let repo = common::a_owns_config();
    let root = repo.root.clone();
    // A directory over A's file.
    let out = repo.run_as("B", ["claim", "src"]).fails(1);
    assert!(out.stderr.contains("src/config.rs"), "{}", out.stderr);
    assert!(out.stderr.contains("session \"A\""), "{}", out.stderr);
    assert!(!out.stderr.contains("claimed src for"), "{}", out.stderr);
    // A file inside a directory another session claimed.
    repo.run_as("A", ["claim", "docs"]).ok();
    let out = repo.run_as("B", ["claim", "docs/guide.md"]).fails(1);
    assert!(out.stderr.contains("session \"A\""), "{}", out.stderr);
    // Unrelated paths are still free.
    repo.run_as("B", ["claim", "src/lib.rs"]).ok();
    // An overlap written by hand: B's later directory claim over A's earlier file claim.
    let b = repo.store().join("claims/B.toml");
    let text = std::fs::read_to_string(&b).unwrap();
    let later = "2099-01-01T00:00:00Z";
    // Through a lock file and a rename, as the store writes, so the claims index sees it.
    let lock = repo.store().join("claims/B.toml.lock");
    std::fs::write(
        &lock,
        format!("{text}\n[[claims]]\npath = \"src\"\nhow = \"explicit\"\nsince = \"{later}\"\n"),
    )
    .unwrap();
    std::fs::rename(&lock, &b).unwrap();
    // The overlap is really there: B's directory claim is listed beside A's file claim.
    let listed = repo.claims();
    assert!(
        listed
            .iter()
            .any(|c| c["path"] == "src" && c["label"] == "B"),
        "{listed:?}"
    );
    // A commits its own file: not blocked "through" B's later directory claim.
    common::write_in(&root, "src/config.rs", "A's change\n");
    repo.git(["add", "src/config.rs"]);
    repo.git_as(&root, "A", ["commit", "-qm", "A commits its file"])
        .ok();
    // B committing A's file is still refused: A was first.
    common::write_in(&root, "src/config.rs", "B's change\n");
    repo.git(["add", "src/config.rs"]);
    let out = repo
        .git_as(&root, "B", ["commit", "-qm", "B over A"])
        .fails(1);
    assert!(
        out.stderr.contains("owned by session \"A\""),
        "{}",
        out.stderr
    );
    repo.git(["reset", "-q", "--hard"]);
    // A path only B's directory claim covers is B's to commit.
    common::write_in(&root, "src/lib.rs", "B's lib\n");
    repo.git(["add", "src/lib.rs"]);
    repo.git_as(&root, "B", ["commit", "-qm", "B commits lib"])
        .ok();
}

/// Commits made with both hooks skipped over another session's path are found after the fact:
/// by `list` (and `info`, `cleanup`), or by the next guarded commit in that worktree; warned
/// about and recorded once each. Another session's commits merged in are not mistaken for them.
#[test]
fn commits_with_both_hooks_skipped_are_found_after_the_fact() {
    let repo = guarded();
    let root = repo.root.clone();
    let wa = repo.create("A");
    let wb = repo.create("B");
    repo.run_as_in(&wa, "A", ["claim", "src/config.rs"]).ok();
    let count = |repo: &TestRepo| audit(repo).matches("guard-unguarded-commit").count();
    // A's own commit on its own path, merged into B later: not B's theft.
    common::write_in(&wa, "src/config.rs", "A's own\n");
    repo.git_in(&wa, ["commit", "-qam", "A edits its file"]);
    // B goes around both hooks.
    common::write_in(&wb, "src/config.rs", "B sneaks\n");
    let out = repo.git_try(
        &wb,
        ["-c", "core.hooksPath=/dev/null", "commit", "-qam", "sneaky"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(count(&repo), 0);
    let out = repo.run_in(&root, ["list"]).ok();
    assert!(
        out.stderr.contains("without the ownership hooks"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("sneaky"), "{}", out.stderr);
    assert!(
        out.stderr.contains("src/config.rs: owned by session \"A\""),
        "{}",
        out.stderr
    );
    assert_eq!(count(&repo), 1);
    // Once: a second look says nothing more.
    let out = repo.run_in(&root, ["list"]).ok();
    assert!(
        !out.stderr.contains("without the ownership hooks"),
        "{}",
        out.stderr
    );
    assert_eq!(count(&repo), 1);
    // Found by the next guarded commit in that worktree too.
    common::write_in(&wb, "src/config.rs", "B sneaks again\n");
    repo.git_try(
        &wb,
        ["-c", "core.hooksPath=/dev/null", "commit", "-qam", "again"],
    );
    common::write_in(&wb, "notes.txt", "B's own file\n");
    repo.git_in(&wb, ["add", "notes.txt"]);
    let out = repo.git_try(&wb, ["commit", "-qm", "B's own"]).ok();
    assert!(
        out.stderr.contains("without the ownership hooks"),
        "{}",
        out.stderr
    );
    assert_eq!(count(&repo), 2);
    // Merging A's branch (A's commits on A's path) into B raises nothing.
    let out = repo.git_try(
        &wb,
        [
            "-c",
            "core.hooksPath=/dev/null",
            "merge",
            "-q",
            "-X",
            "theirs",
            "--no-edit",
            "session/A",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    repo.run_in(&root, ["list"]).ok();
    assert_eq!(count(&repo), 2, "{}", audit(&repo));
}
