//! `git session --help` on a machine where no man page was installed: git turns it into
//! `man git-session`, which alone would fail with "No manual entry" (exit 16). Under the shell
//! integration, and wherever git's man viewer is `git-session __man`, the binary shows the page
//! it carries (through `man -l`), or its long help where there is no `man` at all.
//! `git session man` says in one line where the pages went and how man finds them.

use crate::common;
use common::TestRepo;
use std::path::Path;
use std::process::Command;

/// `PATH` for these tests: the binary under test, then the system's.
fn system_path() -> String {
    format!(
        "{}:/usr/bin:/bin",
        common::bin().parent().unwrap().display()
    )
}

/// A command run in the repository with a hermetic HOME, no MANPATH, and man's pager off.
fn command(repo: &TestRepo, program: &str, path: &str) -> Command {
    let mut cmd = Command::new(program);
    common::hermetic(&mut cmd, &repo.home);
    cmd.current_dir(&repo.root)
        .env("PATH", path)
        .env_remove("MANPATH")
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .env("MANWIDTH", "100");
    cmd
}

#[track_caller]
fn shows_the_page(out: &std::process::Output) {
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(
        shown.contains("NAME") && shown.contains("git-session - One worktree, one branch"),
        "{shown}"
    );
}

#[test]
fn git_session_help_shows_the_carried_page_where_man_has_none() {
    if !common::installed("man") {
        return;
    }
    let repo = TestRepo::new();
    // Plain `man git-session` has no page here: what git alone would run.
    let out = command(&repo, "man", &system_path())
        .args(["-w", "git-session"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(16), "{out:?}");
    // The shell integration hands `git session --help` to the real git with our viewer.
    let out = command(&repo, "bash", &system_path())
        .args([
            "--noprofile",
            "--norc",
            "-c",
            "eval \"$(git session shell-init bash)\"\ngit session --help",
        ])
        .output()
        .unwrap();
    shows_the_page(&out);
    // The viewer as git configuration, for the real git without the shell integration.
    let viewer = [
        "-c",
        "man.viewer=git-session",
        "-c",
        "man.git-session.cmd=git-session __man",
    ];
    let out = command(&repo, "git", &system_path())
        .args(viewer)
        .args(["session", "--help"])
        .output()
        .unwrap();
    shows_the_page(&out);
    // A subcommand's page too, as `man git-session-create` would show it.
    let out = command(&repo, "git-session", &system_path())
        .args(["__man", "git-session-create"])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(shown.contains("git-session-create"), "{shown}");
    // Another command's page is man's as always: the viewer only steps in for ours.
    let out = command(&repo, "git", &system_path())
        .args(viewer)
        .args(["help", "no-such-thing-here"])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0), "{out:?}");
}

#[test]
fn without_man_the_viewer_prints_the_long_help() {
    let repo = TestRepo::new();
    // A PATH with git, sh and the binary, and no man.
    let bin = repo.tmp.path().join("no-man-bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in ["git", "sh"] {
        let found = ["/usr/bin", "/bin"]
            .iter()
            .map(|d| Path::new(d).join(tool))
            .find(|p| p.exists())
            .unwrap();
        std::os::unix::fs::symlink(found, bin.join(tool)).unwrap();
    }
    std::os::unix::fs::symlink(common::bin(), bin.join("git-session")).unwrap();
    let path = bin.display().to_string();
    let out = command(&repo, "git", &path)
        .args([
            "-c",
            "man.viewer=git-session",
            "-c",
            "man.git-session.cmd=git-session __man",
            "session",
            "--help",
        ])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(
        shown.starts_with("git-session gives every parallel agent session")
            && shown.contains("Usage: git-session <COMMAND>"),
        "{shown}"
    );
    // And `git session man` says so in its one line.
    let pages = repo.tmp.path().join("pages/man1");
    let mut man = command(&repo, "git-session", &path);
    let out = common::to_run(man.arg("man").arg(&pages).output().unwrap()).ok();
    let line = out
        .stderr
        .replace(&repo.base().display().to_string(), "[TMP]");
    let line = regex_free_count(&line);
    insta::assert_snapshot!(line, @"wrote [N] man pages to [TMP]/pages/man1; man is not installed, so `git session --help` prints the help");
}

#[test]
fn git_session_man_says_in_one_line_where_it_wrote_and_how_man_finds_the_pages() {
    if !common::installed("man") {
        return;
    }
    let repo = TestRepo::new();
    let pages = repo.base().join("pages/man1");
    let run = |manpath: Option<&str>| {
        let mut cmd = command(&repo, "git-session", &system_path());
        if let Some(m) = manpath {
            cmd.env("MANPATH", m);
        }
        let out = common::to_run(cmd.arg("man").arg(&pages).output().unwrap()).ok();
        assert!(out.stdout.is_empty(), "{}", out.stdout);
        regex_free_count(
            &out.stderr
                .replace(&repo.base().display().to_string(), "[TMP]"),
        )
    };
    insta::assert_snapshot!(run(None), @r#"wrote [N] man pages to [TMP]/pages/man1; man does not search there: export MANPATH="[TMP]/pages:$MANPATH""#);
    // As told: man finds them, and says so.
    let manpath = format!("{}:", repo.base().join("pages").display());
    insta::assert_snapshot!(run(Some(&manpath)), @"wrote [N] man pages to [TMP]/pages/man1; man finds them there");
}

/// The number of pages, which grows with the commands, as `[N]`.
fn regex_free_count(line: &str) -> String {
    let line = line.trim_end();
    match line.strip_prefix("wrote ").and_then(|r| r.split_once(' ')) {
        Some((n, rest)) if n.bytes().all(|b| b.is_ascii_digit()) => format!("wrote [N] {rest}"),
        _ => line.to_string(),
    }
}

// Installed into a `bin` directory on PATH (here a symlink in ~/.local/bin, as `ln -s` from a
// build directory makes it), the first command a person runs puts the pages where man looks
// beside it, so git's own `git session --help` (which never runs this binary) shows the page;
// it says so once, and a binary run from a build directory writes nothing beside it.
#[test]
fn after_the_first_command_of_an_install_git_session_help_shows_the_page() {
    if !common::installed("man") {
        eprintln!("!!!! SKIPPED: no `man` on this machine (.ci/run installs man-db) !!!!");
        return;
    }
    let repo = TestRepo::new();
    let bin = repo.home.join(".local/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(common::bin(), bin.join("git-session")).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let help = || {
        command(&repo, "git", &path)
            .args(["session", "--help"])
            .output()
            .unwrap()
    };
    assert_eq!(
        help().status.code(),
        Some(16),
        "no page before any command ran"
    );
    let first = common::to_run(
        command(&repo, "git", &path)
            .args(["session", "list"])
            .output()
            .unwrap(),
    )
    .ok();
    let pages = repo.home.join(".local/share/man/man1");
    insta::assert_snapshot!(
        first.stderr.lines().next().unwrap().replace(&repo.home.display().to_string(), "[HOME]"),
        @"installed the man pages beside this binary ([HOME]/.local/share/man/man1), for `git session --help`"
    );
    shows_the_page(&help());
    assert!(pages.join("git-session-restore.1").is_file());
    // Once: the next command finds them current and says nothing of them.
    let second = common::to_run(
        command(&repo, "git", &path)
            .args(["session", "list"])
            .output()
            .unwrap(),
    )
    .ok();
    assert!(!second.stderr.contains("man pages"), "{}", second.stderr);
    // A page from another build is replaced by the next command.
    std::fs::write(pages.join("git-session.1"), ".TH git-session 1 old\n").unwrap();
    let third = common::to_run(
        command(&repo, "git", &path)
            .args(["session", "list"])
            .output()
            .unwrap(),
    )
    .ok();
    assert!(
        third.stderr.contains("installed the man pages"),
        "{}",
        third.stderr
    );
    shows_the_page(&help());
    // From a build directory (no `bin` on the way), nothing is written beside the binary.
    let build = common::bin()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("share/man");
    common::to_run(
        command(&repo, "git-session", &system_path())
            .arg("list")
            .output()
            .unwrap(),
    )
    .ok();
    assert!(!build.exists(), "{} was written", build.display());
}
