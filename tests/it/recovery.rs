//! Creations whose process died, and what the next command makes of them: undone while git's
//! state shows them unfinished (our `git worktree add --lock` still held, or no registration),
//! completed once git registered the worktree and `create` removed its lock, so that a lost final
//! record update (a kill in the instant before it, or a machine crash: it is not fsync'd) never
//! costs the worktree someone was handed.
//!
//! Finished sessions whose record was lost are in `recovery_lost_records`, recovery on a
//! platform that cannot tell a process's facts in `recovery_without_process_facts`.

use crate::common::{
    assert_nothing_left, create_in_background, slow_post_checkout, wait_for, TestRepo,
};
use std::process::Stdio;

/// Pids of processes whose command line is exactly `cmdline`.
fn processes(cmdline: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid = e.file_name().to_str()?.parse().ok()?;
            let c = std::fs::read(e.path().join("cmdline")).ok()?;
            (String::from_utf8_lossy(&c).replace('\0', " ").trim() == cmdline).then_some(pid)
        })
        .collect()
}

#[test]
fn a_finished_creation_whose_final_record_was_lost_is_completed_not_undone() {
    let repo = TestRepo::new();
    slow_post_checkout(&repo, 2);
    let label = "handed-out";
    let record = repo.store().join(format!("sessions/{label}.toml"));
    // The record exactly as the store holds it while git checks out (creator and worker pids
    // included): what a machine crash before the final update reached the disk leaves.
    let (child, wt) = create_in_background(&repo, label);
    let creating = std::fs::read_to_string(&record).unwrap();
    assert!(creating.contains("state = \"creating\""), "{creating}");
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim_end(),
        wt.display().to_string()
    );
    // The path was handed out, and someone works there.
    repo.git_in(&wt, ["commit", "-q", "--allow-empty", "-m", "first step"]);
    std::fs::write(wt.join("notes.txt"), "uncommitted\n").unwrap();
    std::fs::write(&record, &creating).unwrap();

    let out = repo.run(["list", "--json"]).ok();
    assert!(
        out.stderr.contains(&format!(
            "completed the interrupted creation of session \"{label}\": git had made its worktree"
        )),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("rolled back"), "{}", out.stderr);
    let rows = out.json();
    let row = &rows.as_array().unwrap()[0];
    assert_eq!(row["label"], label);
    assert_eq!(row["state"], "active", "{row}");
    assert_eq!(
        std::fs::read_to_string(wt.join("notes.txt")).unwrap(),
        "uncommitted\n"
    );
    assert_eq!(
        repo.git(["log", "-1", "--format=%s", &format!("session/{label}")])
            .trim_end(),
        "first step"
    );
    let state = std::fs::read_to_string(&record).unwrap();
    assert!(
        state.contains("state = \"active\"")
            && !state.contains("creator")
            && !state.contains("worker"),
        "{state}"
    );
    // Once is enough: the next command has nothing to recover.
    let again = repo.run(["info", label]).ok();
    assert!(!again.stderr.contains("interrupted"), "{}", again.stderr);
    let audit = std::fs::read_to_string(repo.store().join("audit.log")).unwrap();
    assert!(audit.contains("\"roll-forward\""), "{audit}");
}

#[test]
fn a_creation_killed_during_its_setup_commands_is_rolled_back() {
    let repo = TestRepo::new();
    // A duration no other test uses, to find the command below.
    repo.write(".git-session.toml", "[create]\nrun = [\"sleep 43\"]\n");
    let mut child = repo
        .cmd_in(&repo.root)
        .args(["create", "mid-setup", "--approve-run"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for("the setup command", || !processes("sleep 43").is_empty());
    child.kill().unwrap(); // SIGKILL: no handler runs
    child.wait().unwrap();
    let out = repo.run(["list", "--json"]).ok();
    assert!(
        out.stderr
            .contains("rolled back the interrupted creation of session \"mid-setup\""),
        "{}",
        out.stderr
    );
    assert_eq!(out.json().as_array().unwrap().len(), 0);
    assert_nothing_left(&repo, "mid-setup");
    wait_for("the setup command to be stopped", || {
        processes("sleep 43").is_empty()
    });
}

/// `create` mid-checkout (its post-checkout hook sleeping), as every process of it would be
/// left by a machine crash: the creator and its `git worktree add` group killed at once. Returns
/// the record's text as the store held it and the worktree path.
fn crash_mid_checkout(repo: &TestRepo, label: &str) -> (String, std::path::PathBuf) {
    slow_post_checkout(repo, 30);
    let (mut child, wt) = create_in_background(repo, label);
    let record = repo.store().join(format!("sessions/{label}.toml"));
    wait_for("the worker's pid", || {
        std::fs::read_to_string(&record).is_ok_and(|t| t.contains("[worker]"))
    });
    let text = std::fs::read_to_string(&record).unwrap();
    let parsed: toml::Value = toml::from_str(&text).unwrap();
    let worker = parsed["worker"]["pid"].as_integer().unwrap();
    // All at once, as a crash does: the creator is stopped first, so it can neither react to
    // git's death (rolling back) nor, by dying, close git's pipes (git's SIGPIPE handler would
    // remove its own half-made entry).
    let signal = |args: &[&str]| {
        let ok = std::process::Command::new("kill")
            .args(args)
            .status()
            .unwrap();
        assert!(ok.success(), "kill {args:?}");
    };
    signal(&["-STOP", &child.id().to_string()]);
    signal(&["-KILL", "--", &format!("-{worker}")]);
    child.kill().unwrap();
    child.wait().unwrap();
    (text, wt)
}

#[test]
fn a_creation_whose_record_a_crash_lost_is_rolled_back_from_gits_lock() {
    // What a machine crash can leave of a record written without fsync: nothing, an empty file
    // (its data never reached the disk), or blocks of something else.
    for lost in ["missing", "empty", "garbage"] {
        let repo = TestRepo::new();
        let label = format!("crashed-{lost}");
        let (creating, wt) = crash_mid_checkout(&repo, &label);
        assert!(creating.contains("state = \"creating\""), "{creating}");
        let locks = repo.git(["worktree", "list", "--porcelain"]);
        assert!(
            locks.contains(&format!("locked git-session: creating {label} from ")),
            "{locks}"
        );
        let record = repo.store().join(format!("sessions/{label}.toml"));
        match lost {
            "missing" => std::fs::remove_file(&record).unwrap(),
            "empty" => std::fs::write(&record, "").unwrap(),
            _ => std::fs::write(&record, [0u8, 0xff, 0x13, b'[', 0, 7]).unwrap(),
        }
        assert!(wt.join("README.md").exists());

        let out = repo.run(["list", "--json"]).ok();
        assert!(
            out.stderr.contains(&format!(
                "rolled back the interrupted creation of session \"{label}\""
            )),
            "{lost}: {}",
            out.stderr
        );
        assert_eq!(out.json().as_array().unwrap().len(), 0, "{lost}");
        assert_nothing_left(&repo, &label);
        if lost != "missing" {
            // The damaged record was set aside and said so, not dropped.
            assert!(out.stderr.contains("set aside"), "{lost}: {}", out.stderr);
        }
        let audit = std::fs::read_to_string(repo.store().join("audit.log")).unwrap();
        assert!(audit.contains("creating lock, no record"), "{audit}");
        // The label is free again.
        std::fs::remove_file(repo.root.join(".git/hooks/post-checkout")).unwrap();
        repo.create(&label);
    }
}

#[test]
fn a_lock_with_our_reason_on_anything_a_creation_does_not_make_is_left_alone() {
    let repo = TestRepo::new();
    let base = repo.git(["rev-parse", "HEAD"]).trim().to_string();
    let dir = repo.sessions_dir();
    std::fs::create_dir_all(&dir).unwrap();
    // (worktree, branch, reason): a person's worktree with work on another branch; one on the
    // session branch with a commit made there; a label that is a path.
    let cases = [
        (
            "theirs",
            "feature",
            format!("git-session: creating theirs from {base}"),
        ),
        (
            "moved",
            "session/moved",
            format!("git-session: creating moved from {base}"),
        ),
        (
            "escape",
            "session/escape",
            format!("git-session: creating ../../x from {base}"),
        ),
    ];
    for (name, branch, reason) in &cases {
        let wt = dir.join(name);
        repo.git(["worktree", "add", "-q", "-b", branch, wt.to_str().unwrap()]);
        repo.git(["worktree", "lock", "--reason", reason, wt.to_str().unwrap()]);
        repo.git_in(&wt, ["commit", "-q", "--allow-empty", "-m", "work"]);
        std::fs::write(wt.join("notes.txt"), "uncommitted\n").unwrap();
    }
    let before = repo.git(["worktree", "list", "--porcelain"]);
    let out = repo.run(["list", "--json"]).ok();
    assert!(!out.stderr.contains("rolled back"), "{}", out.stderr);
    assert_eq!(repo.git(["worktree", "list", "--porcelain"]), before);
    for (name, branch, _) in &cases {
        let wt = dir.join(name);
        assert_eq!(
            std::fs::read_to_string(wt.join("notes.txt")).unwrap(),
            "uncommitted\n"
        );
        assert_eq!(
            repo.git(["log", "-1", "--format=%s", branch]).trim_end(),
            "work"
        );
    }
}

#[test]
fn a_running_creation_whose_record_was_deleted_is_not_rolled_back_under_it() {
    let repo = TestRepo::new();
    slow_post_checkout(&repo, 2);
    let label = "in-flight";
    let (child, wt) = create_in_background(&repo, label);
    std::fs::remove_file(repo.store().join(format!("sessions/{label}.toml"))).unwrap();
    // Its creating lock has no record now, but the create holds its session's op lock.
    let out = repo.run(["list", "--json"]).ok();
    assert!(!out.stderr.contains("rolled back"), "{}", out.stderr);
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(wt.join("README.md").exists());
    assert_eq!(
        repo.git_in(&wt, ["rev-parse", "--abbrev-ref", "HEAD"])
            .trim(),
        format!("session/{label}")
    );
}

/// A crash right after `git worktree add` wrote its lock, before it wrote where the worktree
/// is: the entry (and the branch `-b` made just before, while it is still at the commit the lock
/// names) is all there is, and goes; a branch with a commit of its own stays.
#[test]
fn an_entry_a_crash_left_without_its_gitdir_goes_with_its_unused_branch() {
    for moved in [false, true] {
        let repo = TestRepo::new();
        let base = repo.git(["rev-parse", "HEAD"]).trim().to_string();
        repo.git(["branch", "session/early", &base]);
        if moved {
            let wt = repo.base().join("elsewhere");
            repo.git([
                "worktree",
                "add",
                "-q",
                wt.to_str().unwrap(),
                "session/early",
            ]);
            repo.git_in(&wt, ["commit", "-q", "--allow-empty", "-m", "work"]);
            repo.git(["worktree", "remove", wt.to_str().unwrap()]);
        }
        let admin = repo.root.join(".git/worktrees/early");
        std::fs::create_dir_all(&admin).unwrap();
        std::fs::write(
            admin.join("locked"),
            format!("git-session: creating early from {base}\n"),
        )
        .unwrap();
        let out = repo.run(["list", "--json"]).ok();
        assert!(
            out.stderr
                .contains("rolled back the interrupted creation of session \"early\""),
            "{}",
            out.stderr
        );
        assert!(!admin.exists());
        let branch = repo.git(["branch", "--list", "session/early"]);
        assert_eq!(branch.trim().is_empty(), !moved, "moved: {moved}: {branch}");
    }
}

/// The worktree path of a locked entry comes from a file in git's directory. An entry that
/// names a directory rollback may not delete (here one outside the worktrees directory that is
/// no worktree of this repository) never makes recovery stop what runs there, nor remove it.
#[test]
fn a_creating_lock_naming_a_foreign_directory_stops_nothing_there() {
    let repo = TestRepo::new();
    let base = repo.git(["rev-parse", "HEAD"]).trim().to_string();
    let foreign = repo.base().join("someone-elses");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("keep.txt"), "theirs\n").unwrap();
    // A duration no other test uses, to find it below; in its own process group, as a job a
    // shell started would be.
    use std::os::unix::process::CommandExt;
    let mut sleeper = std::process::Command::new("sleep")
        .arg("47")
        .current_dir(&foreign)
        .process_group(0)
        .spawn()
        .unwrap();
    let admin = repo.root.join(".git/worktrees/forged");
    std::fs::create_dir_all(&admin).unwrap();
    std::fs::write(
        admin.join("gitdir"),
        format!("{}/.git\n", foreign.display()),
    )
    .unwrap();
    std::fs::write(admin.join("HEAD"), "ref: refs/heads/session/forged\n").unwrap();
    std::fs::write(admin.join("commondir"), "../..\n").unwrap();
    std::fs::write(
        admin.join("locked"),
        format!("git-session: creating forged from {base}\n"),
    )
    .unwrap();

    let out = repo.run(["list", "--json"]).ok();
    // The directory is someone else's: left alone, and so no part of what was rolled back.
    assert!(
        out.stderr
            .contains("rolled back the interrupted creation of session \"forged\"")
            && !out.stderr.contains("in part"),
        "{}",
        out.stderr
    );
    assert!(
        sleeper.try_wait().unwrap().is_none(),
        "recovery killed a process outside any worktree it may delete"
    );
    assert_eq!(
        std::fs::read_to_string(foreign.join("keep.txt")).unwrap(),
        "theirs\n"
    );

    // The same from a `creating` record whose creator is gone and whose path names it.
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let host = host.trim();
    std::fs::write(
        repo.store().join("sessions/forged2.toml"),
        format!(
            "version = 1\nlabel = \"forged2\"\nbranch = \"session/forged2\"\npath = \"{}\"\n\
             base = \"main\"\nbase_commit = \"{base}\"\nstate = \"creating\"\n\
             created = \"2026-01-01T00:00:00Z\"\nlast_seen = \"2026-01-01T00:00:00Z\"\n\
             [creator]\npid = 999999\nstart = 1\nhost = \"{host}\"\n",
            foreign.display()
        ),
    )
    .unwrap();
    let out = repo.run(["list", "--json"]).ok();
    assert!(out.stderr.contains("forged2"), "{}", out.stderr);
    assert!(
        sleeper.try_wait().unwrap().is_none(),
        "recovery of a record killed a process outside any worktree it may delete"
    );
    assert_eq!(
        std::fs::read_to_string(foreign.join("keep.txt")).unwrap(),
        "theirs\n"
    );
    sleeper.kill().unwrap();
    sleeper.wait().unwrap();
}
