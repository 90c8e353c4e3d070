use crate::common;
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
    repo.insta().bind(|| {
        insta::assert_snapshot!(out.stdout, @r"
    LABEL  AGENT  STATE   AGE  ACTIVE  AHEAD  BEHIND  DIRTY  OWNED  CONTEXT  PATH
    alpha  -      active  2h   2h ago  1      0       1      0      -        [TMP]/repo.sessions/alpha
    beta   -      active  2h   2h ago  new    0       0      0      -        [TMP]/repo.sessions/beta
    ")
    });
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
            "error: {}/.git-session.toml:1:1: unknown field `stale_afer`",
            repo.root.display()
        )),
        "{}",
        out.stderr
    );
    repo.write(".git-session.toml", "live_for = \"forever\"\n");
    let out = repo.run(["list"]).fails(1);
    repo.insta().bind(|| {
        insta::assert_snapshot!(out.stderr, @r#"
    error: [TMP]/repo/.git-session.toml:1:12: bad value for `live_for`: "forever" is not a duration
    hint: give a positive duration such as 30s, 90m, 1h30m or 7d (as a string: live_for = "300s")
    "#)
    });
}

#[test]
fn a_closed_pipe_exits_quietly() {
    let repo = TestRepo::new();
    // Set up as a user would: with the guard, so no warning says it is missing.
    repo.run(["hooks", "install"]).ok();
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

/// Whether the tests run as root (`id -u` is 0): root reads every directory and may give files
/// away, so the permission tests below depend on it.
fn running_as_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// A store that cannot be read is said to be unreadable, never shown as "no sessions" (run as an
/// unprivileged user, since root reads every directory; skipped where that is not possible).
#[test]
fn unreadable_sessions_directory_is_an_error_not_an_empty_list() {
    use std::os::unix::fs::PermissionsExt;
    let is_root = running_as_root();
    let setpriv = std::path::Path::new("/usr/bin/setpriv");
    let repo = TestRepo::new();
    repo.create("one");
    let sessions = repo.store().join("sessions");
    // The unprivileged user owns the repository (so git's ownership check passes) and every
    // directory above it is searchable; only `sessions/` is closed to it.
    let mut dir = repo.base();
    while let Some(parent) = dir.parent() {
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode | 0o711));
        dir = parent.to_path_buf();
    }
    if is_root {
        let ok = std::process::Command::new("chown")
            .args(["-R", "65534:65534"])
            .arg(repo.base())
            .status()
            .unwrap();
        assert!(ok.success());
    }
    std::fs::set_permissions(&sessions, std::fs::Permissions::from_mode(0o000)).unwrap();
    let mut cmd = if is_root && setpriv.exists() {
        let mut c = std::process::Command::new(setpriv);
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(common::bin());
        c
    } else if !is_root {
        std::process::Command::new(common::bin())
    } else {
        eprintln!("SKIPPED: running as root without setpriv; cannot make a directory unreadable");
        return;
    };
    common::hermetic(&mut cmd, &repo.home);
    cmd.current_dir(&repo.root);
    for json in [false, true] {
        let mut c = std::process::Command::new(cmd.get_program());
        c.args(cmd.get_args()).arg("list");
        if json {
            c.arg("--json");
        }
        for (k, v) in cmd.get_envs() {
            match v {
                Some(v) => c.env(k, v),
                None => c.env_remove(k),
            };
        }
        c.current_dir(&repo.root);
        let out = common::to_run(c.output().unwrap());
        std::fs::set_permissions(&sessions, std::fs::Permissions::from_mode(0o755)).unwrap();
        let readable = std::fs::read_dir(&sessions).is_ok();
        std::fs::set_permissions(&sessions, std::fs::Permissions::from_mode(0o000)).unwrap();
        assert!(readable);
        assert_eq!(
            out.code, 1,
            "json={json}\nstdout:{}\nstderr:{}",
            out.stdout, out.stderr
        );
        assert!(
            out.stderr.contains("cannot read the session store"),
            "{}",
            out.stderr
        );
        assert!(!out.stdout.contains("[]"), "{}", out.stdout);
    }
    std::fs::set_permissions(&sessions, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A repository owned by another user gets git's own `safe.directory` hint, never libgit2's raw
/// error, and the tool never sets it.
#[test]
fn repository_owned_by_another_user_gets_the_safe_directory_hint() {
    let is_root = running_as_root();
    if !is_root {
        eprintln!("SKIPPED: needs root to give the repository to another user");
        return;
    }
    let repo = TestRepo::new();
    let ok = std::process::Command::new("chown")
        .args(["-R", "65534:65534"])
        .arg(&repo.root)
        .status()
        .unwrap();
    assert!(ok.success());
    let out = repo.run(["list"]).fails(1);
    assert!(
        out.stderr.contains("is owned by another user"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("git config --global --add safe.directory"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("class="), "{}", out.stderr);
}

/// CPU seconds (user + system) the children of `bash -c` used, from bash's `times`.
fn child_cpu_seconds(times_output: &str) -> f64 {
    let line = times_output.lines().last().unwrap_or("");
    line.split_whitespace()
        .map(|t| {
            let t = t.trim_end_matches('s');
            let (m, s) = t.split_once('m').unwrap_or(("0", t));
            m.parse::<f64>().unwrap_or(0.0) * 60.0 + s.parse::<f64>().unwrap_or(0.0)
        })
        .sum()
}

/// Whatever sits at a `.lock` path (a dangling symlink, a directory, a FIFO), a wait for the lock
/// honours its deadline with backoff instead of spinning, and junk older than the grace period is
/// moved out of the way.
#[test]
fn junk_at_a_lock_path_never_spins_and_old_junk_is_moved_away() {
    let repo = TestRepo::new();
    repo.create("seed");
    let sessions = repo.store().join("sessions");
    let lock = sessions.join("x.toml.lock");
    std::os::unix::fs::symlink("/nonexistent/target", &lock).unwrap();
    let mut cmd = std::process::Command::new("bash");
    common::hermetic(&mut cmd, &repo.home);
    cmd.current_dir(&repo.root).args([
        "-c",
        "git-session create x >/dev/null 2>&1; echo rc=$?; times",
    ]);
    let started = std::time::Instant::now();
    let out = common::to_run(cmd.output().unwrap());
    let wall = started.elapsed().as_secs_f64();
    let cpu = child_cpu_seconds(&out.stdout);
    // The wait is bounded by the lock deadline (10 s) and sleeps between tries.
    assert!(wall < 40.0, "took {wall:.1}s:\n{}", out.stdout);
    assert!(
        cpu < wall * 0.5,
        "spun: {cpu:.2}s of CPU in {wall:.1}s\n{}",
        out.stdout
    );
    // Junk older than the grace period is moved away and the lock is taken.
    std::fs::create_dir(sessions.join("y2.toml.lock")).unwrap();
    let old = std::process::Command::new("touch")
        .args(["-h", "-d", "1 hour ago"])
        .arg(sessions.join("y2.toml.lock"))
        .status()
        .unwrap();
    assert!(old.success());
    let out = repo.run(["create", "y2"]).ok();
    assert!(out.stderr.contains("was not a lock file"), "{}", out.stderr);
}

/// `list` and `info` show what the worktree's ground truth says beyond the record, and never drop
/// a session whose worktree libgit2 cannot open: a detached HEAD, an operation in progress, a
/// branch deleted outside, a submodule not initialised, activity dated in the future, a lock
/// reason with a newline (escaped to one line), a HEAD that is a symlink, a broken `.git` link.
#[test]
fn list_and_info_show_the_worktrees_ground_truth() {
    let repo = TestRepo::new();
    let det = repo.create("det");
    repo.git_in(&det, ["checkout", "-q", "--detach"]);
    let reb = repo.create("reb");
    repo.commit_file(&reb, "README.md", "reb\n", "reb edit");
    repo.commit_file(&repo.root.clone(), "README.md", "main\n", "main edit");
    assert_ne!(repo.git_try(&reb, ["rebase", "-q", "main"]).code, 0);
    let gone = repo.create("gone");
    repo.git_in(&gone, ["checkout", "-q", "--detach"]);
    repo.git(["update-ref", "-d", "refs/heads/session/gone"]);
    let sub = repo.create("sub");
    common::write_in(
        &sub,
        ".gitmodules",
        "[submodule \"lib\"]\n\tpath = lib\n\turl = ../lib\n",
    );
    let locked = repo.create("locked");
    repo.git([
        "worktree",
        "lock",
        "--reason",
        "line one\nline two",
        locked.to_str().unwrap(),
    ]);
    repo.create("link");
    let admin = repo.root.join(".git/worktrees/link");
    std::fs::rename(admin.join("HEAD"), admin.join("HEAD.real")).unwrap();
    std::os::unix::fs::symlink(admin.join("HEAD.real"), admin.join("HEAD")).unwrap();
    let broken = repo.create("broken");
    std::fs::write(broken.join(".git"), "gitdir: /nowhere\n").unwrap();
    let future = repo.store().join("sessions/det.toml");
    let text = std::fs::read_to_string(&future).unwrap();
    let text = regex_free_replace_last_seen(&text, "2099-01-01T00:00:00Z");
    std::fs::write(&future, text).unwrap();

    let out = repo.run(["list", "--json"]).ok();
    let labels = common::labels_of(&out.json());
    for l in ["broken", "det", "gone", "link", "locked", "reb", "sub"] {
        assert!(
            labels.contains(&l.to_string()),
            "{l} dropped: {labels:?}\n{}",
            out.stderr
        );
    }
    for expect in [
        "session \"det\": HEAD detached at",
        "session \"det\": last activity 2099-01-01T00:00:00Z is in the future",
        "session \"reb\": a rebase is in progress",
        "session \"gone\": branch session/gone missing",
        "session \"sub\": submodule lib not initialized",
        "session \"link\": HEAD (",
        "session \"broken\": its .git link is broken; repair it with `git worktree repair`",
    ] {
        assert!(out.stderr.contains(expect), "{expect}\n{}", out.stderr);
    }
    let table = repo.run(["list"]).ok();
    assert!(!table.stdout.contains("line two\n"), "{}", table.stdout);
    let info = repo.run(["info", "broken"]).ok();
    assert!(
        info.stdout.contains("git worktree repair"),
        "{}",
        info.stdout
    );
    let cleanup = repo.run(["cleanup", "locked"]).fails(1);
    assert!(
        cleanup.stderr.contains("line one\\nline two"),
        "{}",
        cleanup.stderr
    );
    assert_eq!(
        cleanup.stderr.trim_end().lines().count(),
        2,
        "{}",
        cleanup.stderr
    );
}

/// `last_seen = ...` in a record's TOML replaced by `when`.
fn regex_free_replace_last_seen(text: &str, when: &str) -> String {
    text.lines()
        .map(|l| {
            if l.starts_with("last_seen = ") {
                format!("last_seen = \"{when}\"")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}
