//! Real shells driving the real binary: the README's quick start as written (every other block
//! of the README and docs/ runs in `docs_blocks`), the shell integration in bash, zsh and fish, and cleanup of the worktree the shell stands in.
//!
//! A test whose shell is missing here is skipped ([`common::installed`]); CI (.ci/run) installs
//! them all.

use crate::common;

use common::{hermetic, TestRepo};
use std::path::Path;
use std::process::Command;

/// Runs `script` in `shell` (`-c`), hermetic, from `dir`; returns (exit code, stdout, stderr),
/// or `None` when the shell is not installed (the test is skipped: [`common::installed`]).
fn shell(repo: &TestRepo, shell: &str, dir: &Path, script: &str) -> Option<(i32, String, String)> {
    if !common::installed(shell) {
        return None;
    }
    let mut cmd = Command::new(shell);
    hermetic(&mut cmd, &repo.home);
    cmd.current_dir(dir).arg("-c").arg(script);
    let out = cmd.output().unwrap();
    Some((
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

/// The first ```sh block after a heading in README.md.
fn readme_block(heading: &str) -> String {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let at = readme
        .find(heading)
        .unwrap_or_else(|| panic!("README has no {heading:?}"));
    let rest = &readme[at..];
    let start = rest.find("```sh\n").expect("a sh block") + "```sh\n".len();
    let len = rest[start..].find("```").unwrap();
    rest[start..start + len].to_string()
}

/// The Quick start as written, in bash, with a stand-in for `claude` (it records how it was
/// started, then commits `login.txt` as an agent's small task would: docs_blocks::stub_agents).
#[test]
fn readme_quick_start_runs_as_written_in_bash() {
    let repo = TestRepo::new();
    if !common::installed("bash") {
        return;
    }
    let script = format!(
        "set -eu\n{}\nprintf 'PWD=%s\\n' \"$PWD\"\n",
        readme_block("## Quick start")
    );
    let run = crate::docs_blocks::bash(&repo, &script);
    let (code, stdout, stderr) = (run.code, run.stdout, run.stderr);
    assert_eq!(
        code, 0,
        "quick start failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    // The agent ran once, inside the new session's worktree, knowing its session.
    let worktree = repo.sessions_dir().join("fix-login");
    assert_eq!(
        std::fs::read_to_string(repo.home.join("agents.log")).unwrap(),
        format!("claude  | {} | fix-login\n", worktree.display())
    );
    // `list` showed the session with the agent's commit, and `create` said what it ran.
    assert!(
        stdout.contains("fix-login") && stderr.contains("running claude"),
        "{stdout}\n{stderr}"
    );
    // It ends where it began, in the main worktree, with the work merged and the session gone.
    assert!(
        stdout.ends_with(&format!("PWD={}\n", repo.root.display())),
        "{stdout}\n{stderr}"
    );
    assert_eq!(repo.git(["show", "main:login.txt"]), "fixed\n");
    assert!(!worktree.exists());
    assert_eq!(
        repo.run(["list", "--json"]).ok().json(),
        serde_json::json!([])
    );
    // The context hook's settings are committed, so a session made now has them in its worktree.
    let later = repo.create("later");
    assert!(later.join(".claude/settings.json").is_file());
    // The Quick start turned the guard on: in force in a session made afterwards.
    repo.run_in(&later, ["hooks", "status"]).ok();
}

/// The integration in each shell: create enters the worktree, a failing command moves nothing,
/// cleanup of the current worktree goes back to the main one, other git commands pass through.
fn integration_round_trip(name: &str, init: &str) {
    let repo = TestRepo::new();
    let script = format!(
        "{init}\n\
         git session create one\n\
         echo \"IN=$PWD\"\n\
         git session create one\n\
         echo \"AFTER_FAIL=$PWD\"\n\
         git-session create two\n\
         echo \"TWO=$PWD\"\n\
         git-session cleanup\n\
         echo \"BACK=$PWD\"\n\
         git session cleanup one\n\
         echo \"STILL=$PWD\"\n\
         git rev-parse --show-toplevel\n\
         git status --porcelain && echo STATUS=0\n"
    );
    let Some((code, stdout, stderr)) = shell(&repo, name, &repo.root, &script) else {
        return;
    };
    let root = repo.root.display().to_string();
    let one = repo.sessions_dir().join("one").display().to_string();
    let two = repo.sessions_dir().join("two").display().to_string();
    // `create` still prints the path (scripts read it); the shell is moved as well.
    let expected = format!(
        "{one}\nIN={one}\nAFTER_FAIL={one}\n{two}\nTWO={two}\nBACK={root}\nSTILL={root}\n\
         {root}\nSTATUS=0\n"
    );
    assert_eq!(stdout, expected, "{name}: stderr:\n{stderr}");
    assert_eq!(code, 0, "{name}: stderr:\n{stderr}");
    assert!(
        stderr.contains("session \"one\" already exists"),
        "{name}: {stderr}"
    );
    assert!(!repo.sessions_dir().join("one").exists());
    assert!(!repo.sessions_dir().join("two").exists());
}

#[test]
fn bash_integration_enters_and_leaves() {
    integration_round_trip("bash", "eval \"$(git session shell-init bash)\"");
}

#[test]
fn zsh_integration_enters_and_leaves() {
    integration_round_trip("zsh", "eval \"$(git session shell-init zsh)\"");
}

#[test]
fn fish_integration_enters_and_leaves() {
    integration_round_trip("fish", "git session shell-init fish | source");
}

#[test]
fn cleanup_from_inside_without_integration_says_where_to_go() {
    let repo = TestRepo::new();
    let script = "cd \"$(git session create x)\" && git session cleanup x; echo \"code=$?\"";
    let Some((code, stdout, stderr)) = shell(&repo, "bash", &repo.root, script) else {
        return;
    };
    assert_eq!((code, stdout.as_str()), (0, "code=0\n"), "{stderr}");
    assert!(
        stderr.contains(&format!("go back with: cd {}", repo.root.display())),
        "{stderr}"
    );
    assert!(!repo.sessions_dir().join("x").exists());
}

#[test]
fn another_process_inside_is_named_as_a_process_not_as_work() {
    let repo = TestRepo::new();
    let path = repo.run(["create", "busy"]).ok().stdout.trim().to_string();
    let mut sleeper = Command::new("sleep")
        .arg("60")
        .current_dir(&path)
        .spawn()
        .unwrap();
    // The shell running cleanup stands inside too; only the sleeper is someone else.
    let script = format!("cd '{path}' && git session cleanup busy");
    let result = shell(&repo, "bash", &repo.root, &script);
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    let Some((code, _stdout, stderr)) = result else {
        return;
    };
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("is in use: other processes work inside"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("pid {}: sleep 60", sleeper.id())),
        "{stderr}"
    );
    assert!(!stderr.contains("work that would be lost"), "{stderr}");
    assert!(
        !stderr.contains("bash"),
        "the invoking shell is not an occupant: {stderr}"
    );
    assert!(Path::new(&path).exists());
}

#[test]
fn create_then_command_runs_it_inside_with_its_status_and_signals() {
    use std::os::unix::process::ExitStatusExt;
    let repo = TestRepo::new();
    let out = repo.run([
        "create",
        "agent",
        "--",
        "sh",
        "-c",
        "echo \"$GIT_SESSION $PWD $1\"; exit 7",
        "sh",
        "--not-ours",
    ]);
    let path = repo.sessions_dir().join("agent");
    assert_eq!(out.code, 7, "{}", out.stderr);
    assert_eq!(out.stdout, format!("agent {} --not-ours\n", path.display()));
    // exec: the command is the process, so a signal that kills it is what the caller sees.
    let status = repo
        .cmd_in(&repo.root)
        .args(["create", "sig", "--", "sh", "-c", "kill -TERM $$"])
        .status()
        .unwrap();
    assert_eq!(status.signal(), Some(15), "{status:?}");
    assert_eq!(repo.labels(), ["agent", "sig"]);
}

/// `switch` enters a session's worktree under the integration, and without it the documented
/// `cd "$(git session switch x)"` does; `merge` of the session the shell stands in returns it
/// to the main worktree with the work merged.
#[test]
fn switch_enters_and_merge_from_inside_returns_to_the_main_worktree() {
    let repo = TestRepo::new();
    repo.create("one");
    let script = "eval \"$(git session shell-init bash)\"\n\
                  git session switch one >/dev/null\n\
                  echo \"IN=$PWD\"\n\
                  git session switch nope 2>/dev/null\n\
                  echo \"AFTER_FAIL=$PWD code=$?\"\n\
                  echo work > work.txt && git add work.txt && git commit -q -m work\n\
                  git session merge\n\
                  echo \"BACK=$PWD\"\n";
    let Some((code, stdout, stderr)) = shell(&repo, "bash", &repo.root, script) else {
        return;
    };
    let root = repo.root.display().to_string();
    let one = repo.sessions_dir().join("one").display().to_string();
    assert_eq!(
        stdout,
        format!("IN={one}\nAFTER_FAIL={one} code=1\nBACK={root}\n"),
        "{stderr}"
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(repo.git(["show", "main:work.txt"]), "work\n");
    assert!(!repo.sessions_dir().join("one").exists());

    // Without the integration: the documented form.
    repo.create("two");
    let script = "cd \"$(git session switch two)\" && pwd";
    let Some((code, stdout, stderr)) = shell(&repo, "bash", &repo.root, script) else {
        return;
    };
    assert_eq!(
        (code, stdout.trim()),
        (0, repo.sessions_dir().join("two").to_str().unwrap()),
        "{stderr}"
    );
}

/// `git session cleanup | head` from inside the worktree: `head`, which the same shell started
/// to read cleanup's output, is no process working there; a job of that shell running beside
/// it still is.
#[test]
fn the_pipeline_that_runs_cleanup_is_not_an_occupant() {
    let repo = TestRepo::new();
    repo.create("piped");
    repo.create("busy");
    let script = "cd \"$(git session switch piped)\" && git session cleanup | head -n 5; \
                  echo \"code=${PIPESTATUS[0]}\"\n\
                  cd \"$ROOT\"\n\
                  (cd \"$(git session switch busy)\" && exec sleep 30) & sleeper=$!\n\
                  sleep 0.5\n\
                  cd \"$(git session switch busy)\" && git session cleanup 2>&1 | cat; \
                  echo \"code=${PIPESTATUS[0]}\"\n\
                  kill $sleeper\n";
    let script = format!("ROOT='{}'\n{script}", repo.root.display());
    let Some((code, stdout, stderr)) = shell(&repo, "bash", &repo.root, &script) else {
        return;
    };
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("code=0\n"), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("removed session \"piped\""),
        "{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("is in use: other processes work inside")
            && stdout.contains("sleep 30")
            && stdout.ends_with("code=1\n"),
        "{stdout}\n{stderr}"
    );
    assert!(!stdout.contains(": cat"), "{stdout}");
    assert!(!repo.sessions_dir().join("piped").exists());
    assert!(repo.sessions_dir().join("busy").exists());
}
