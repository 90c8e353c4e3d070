mod common;
use common::{write_in, TestRepo};

#[test]
fn list_table_and_info_show_the_session() {
    let repo = TestRepo::new();
    let wt = repo.create("alpha");
    repo.commit_file(&wt, "a.txt", "a\n", "alpha work");
    write_in(&wt, "wip.txt", "wip\n");
    repo.create("beta");
    let mut cmd = repo.cmd_in(&repo.root);
    // A clock two hours ahead: ages are stable, and both sessions are still live.
    let now = (chrono::Utc::now() + chrono::Duration::minutes(150)).to_rfc3339();
    cmd.env("GIT_SESSION_NOW", &now).arg("list");
    let out = common::to_run(cmd.output().unwrap()).ok();
    repo.insta().bind(|| insta::assert_snapshot!(out.stdout, @r"
    LABEL  STATE   AGE  ACTIVE  AHEAD         BEHIND  DIRTY  OWNED  CONTEXT  PATH
    alpha  active  2h   2h ago  1             0       1      0      -        [TMP]/repo.sessions/alpha
    beta   active  2h   2h ago  0 (ancestor)  0       0      0      -        [TMP]/repo.sessions/beta
    "));
}

#[test]
fn info_json_has_the_documented_keys() {
    let repo = TestRepo::new();
    let wt = repo.create("gamma");
    repo.commit_file(&wt, "g.txt", "g\n", "gamma work");
    write_in(&wt, "wip.txt", "wip\n");
    // Default session: the one whose worktree we stand in.
    let info = repo.run_in(&wt, ["info", "--json"]).ok().json();
    for key in [
        "label",
        "branch",
        "path",
        "state",
        "live",
        "merged",
        "ahead",
        "behind",
        "dirty",
        "owned",
        "created",
        "last_activity",
        "context_percent",
        "locked",
        "base",
        "agent_sessions",
        "claims",
        "unmerged_commits",
        "archives",
    ] {
        assert!(info.get(key).is_some(), "missing key {key} in {info}");
    }
    assert_eq!(info["label"], "gamma");
    assert_eq!(info["base"], "main");
    assert_eq!(info["ahead"], 1);
    assert_eq!(info["dirty"], 1);
    assert_eq!(info["unmerged_commits"][0]["summary"], "gamma work");
    let text = repo.run_in(&wt, ["info"]).ok();
    assert!(text.stdout.contains("session   gamma\n"), "{}", text.stdout);
    assert!(text.stdout.contains("gamma work"), "{}", text.stdout);
}

#[test]
fn commands_work_from_any_worktree() {
    let repo = TestRepo::new();
    let a = repo.create("a");
    // Creating from inside a linked worktree still bases on main and lands beside the others.
    let out = repo.run_in(&a, ["create", "b"]).ok();
    assert_eq!(
        out.stdout.trim_end(),
        repo.sessions_dir().join("b").display().to_string()
    );
    let list = repo.run_in(&a.join("."), ["list", "--json"]).ok().json();
    assert_eq!(list.as_array().unwrap().len(), 2);
}

#[test]
fn create_with_path_and_attach() {
    let repo = TestRepo::new();
    let custom = repo.base().join("elsewhere/custom");
    let out = repo
        .run(["create", "custom", "--path", custom.to_str().unwrap()])
        .ok();
    assert_eq!(out.stdout.trim_end(), custom.display().to_string());
    assert!(custom.join("README.md").exists());
    // Attach registers the current worktree without making one.
    let out = repo.run(["create", "--attach", "here"]).ok();
    assert_eq!(out.stdout.trim_end(), repo.root.display().to_string());
    assert!(out.stderr.contains("GIT_SESSION=here"), "{}", out.stderr);
    let info = repo.run(["info", "here", "--json"]).ok().json();
    assert_eq!(info["attached"], true);
    assert_eq!(info["branch"], "main");
    // Cleanup of an attached session removes only its record.
    repo.run(["cleanup", "here"]).ok();
    assert!(repo.root.join("README.md").exists());
    repo.run(["cleanup", "custom"]).ok();
    assert!(!custom.exists());
}

#[test]
fn create_from_a_remote_tracking_base_writes_no_tracking_config() {
    let repo = TestRepo::new();
    let upstream = repo.base().join("upstream.git");
    repo.git([
        "clone",
        "-q",
        "--bare",
        repo.root.to_str().unwrap(),
        upstream.to_str().unwrap(),
    ]);
    repo.git(["remote", "add", "origin", upstream.to_str().unwrap()]);
    repo.git(["fetch", "-q", "origin"]);
    repo.run(["create", "tracked", "--base", "origin/main"])
        .ok();
    let config = std::fs::read_to_string(repo.root.join(".git/config")).unwrap();
    assert!(!config.contains("session/tracked"), "{config}");
}

#[test]
fn outside_a_repository_and_bad_config_are_clear_errors() {
    let repo = TestRepo::new();
    let out = repo.run_in(&repo.home, ["list"]).fails(1);
    repo.insta().bind(|| {
        insta::assert_snapshot!(out.stderr, @r"
    error: not inside a git repository
    hint: run git session from a repository or one of its worktrees
    ")
    });
    repo.write(".git-session.toml", "stale_afer = \"7d\"\n");
    let out = repo.run(["list"]).fails(1);
    assert!(
        out.stderr.starts_with(&format!(
            "error: {}/.git-session.toml: unknown field `stale_afer`",
            repo.root.display()
        )),
        "{}",
        out.stderr
    );
    repo.write(".git-session.toml", "live_for = \"forever\"\n");
    let out = repo.run(["list"]).fails(1);
    repo.insta().bind(|| insta::assert_snapshot!(out.stderr, @r#"
    error: [TMP]/repo/.git-session.toml: bad value for `live_for`: expected a positive duration such as "300s", "5m", "24h", "7d"
    hint: fix or remove `live_for` in [TMP]/repo/.git-session.toml
    "#));
}

#[test]
fn a_closed_pipe_exits_quietly() {
    let repo = TestRepo::new();
    for i in 0..3 {
        repo.create(&format!("p{i}"));
    }
    let mut cmd = std::process::Command::new("sh");
    common::hermetic(&mut cmd, &repo.home);
    let out = cmd
        .arg("-c")
        .arg(format!(
            "'{}' list --json | head -c 1",
            common::bin().display()
        ))
        .current_dir(&repo.root)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}
