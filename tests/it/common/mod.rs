//! The hermetic test harness: real temporary repositories, the real binary, no user config.
//!
//! Every command runs with a temp `HOME`/`XDG_*`, `GIT_CONFIG_GLOBAL=/dev/null`,
//! `GIT_CONFIG_NOSYSTEM=1`, fixed author/committer dates, `TZ=UTC`, and the built `git-session`
//! first on `PATH` (so installed hooks and `git session ...` find it).
//!
//! Commands run as a session, and the guard's shared scenarios, are in `sessions`; creations
//! held, failed or left by a dead process, in `creations`.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod creations;
mod needs;
mod ports;
mod sessions;
pub mod tmux;
pub use creations::{
    assert_nothing_left, create_in_background, hostname, mark_creating, pid_host_filters,
    sleeper_in, slow_post_checkout, start_of, wait_for,
};
pub use needs::installed;
pub use ports::{free_ports, Ports};
pub use sessions::{a_owns_config, b_commits_over_a, guarded, two_sessions_in_one_worktree};

/// The binary under test: the one cargo built for the tests, or `GIT_SESSION_TEST_BIN` (CI
/// points it at the static release build the README installs, to run every test on that too).
pub fn bin() -> PathBuf {
    match std::env::var_os("GIT_SESSION_TEST_BIN") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => PathBuf::from(env!("CARGO_BIN_EXE_git-session")),
    }
}

pub struct TestRepo {
    pub tmp: tempfile::TempDir,
    /// The main worktree.
    pub root: PathBuf,
    pub home: PathBuf,
}

/// What a finished command printed.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    #[track_caller]
    pub fn ok(self) -> Run {
        assert_eq!(
            self.code, 0,
            "expected success\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }
    #[track_caller]
    pub fn fails(self, code: i32) -> Run {
        assert_eq!(
            self.code, code,
            "expected exit {code}\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }
}

fn bin_dir() -> PathBuf {
    bin().parent().unwrap().to_path_buf()
}

/// Applies the hermetic environment to any command (git or git-session).
pub fn hermetic(cmd: &mut Command, home: &Path) {
    let path = format!(
        "{}:{}",
        bin_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for var in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_COMMON_DIR",
        "GIT_SESSION",
        "GIT_SESSION_GUARD",
        "GIT_SESSION_NOW",
        "GIT_SESSION_CONTEXT_WINDOW",
        "CLAUDE_CODE_MAX_CONTEXT_TOKENS",
        "CLAUDE_CODE_AUTO_COMPACT_WINDOW",
        "CLAUDE_CODE_DISABLE_1M_CONTEXT",
        "GIT_SESSION_CONTEXT_RESERVE",
        "CODEX_HOME",
        "GEMINI_SESSION_ID",
        "CLICOLOR_FORCE",
        "CLICOLOR",
        "GIT_CEILING_DIRECTORIES",
        "NO_COLOR",
        "GIT_PREFIX",
        // The hook managers' own skip switches (hooks::skips): a machine that sets one must
        // not turn the guard off under the tests.
        "HUSKY",
        "LEFTHOOK",
        "LEFTHOOK_EXCLUDE",
        "SKIP",
        "SKIP_SIMPLE_GIT_HOOKS",
        // git's own configuration variables, which move or add configuration.
        "GIT_CONFIG_SYSTEM",
        "GIT_CONFIG_COUNT",
        "GIT_CONFIG_PARAMETERS",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_STATE_HOME", home.join(".local/state"))
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Test Author")
        .env("GIT_AUTHOR_EMAIL", "author@example.com")
        .env("GIT_COMMITTER_NAME", "Test Committer")
        .env("GIT_COMMITTER_EMAIL", "committer@example.com")
        .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
        .env("TZ", "UTC")
        // The hook's 900 ms watchdog is a production budget; a test machine busy compiling must
        // not turn it into a flake (tests that need the watchdog itself set their own).
        .env("GIT_SESSION_HOOK_BUDGET", "5s")
        .env("LANG", "C")
        .env("LC_ALL", "C")
        .env("PATH", path)
        .stdin(Stdio::null());
}

impl TestRepo {
    /// A repository on `main` with one commit (`README.md`).
    pub fn new() -> TestRepo {
        let tmp = tempfile::Builder::new()
            .prefix("gs-test")
            .tempdir()
            .unwrap();
        // Canonical, so paths printed by git and by us compare equal (macOS /private, symlinks).
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let home = base.join("home");
        std::fs::create_dir_all(&home).unwrap();
        let root = base.join("repo");
        std::fs::create_dir_all(&root).unwrap();
        let repo = TestRepo { tmp, root, home };
        repo.git(["init", "-q", "-b", "main"]);
        repo.write("README.md", "hello\n");
        repo.git(["add", "README.md"]);
        repo.git(["commit", "-q", "-m", "initial"]);
        repo
    }

    /// The temp directory all paths live under (for snapshot filters).
    pub fn base(&self) -> PathBuf {
        self.root.parent().unwrap().to_path_buf()
    }

    /// Default worktrees directory: `../repo.sessions`.
    pub fn sessions_dir(&self) -> PathBuf {
        self.base().join("repo.sessions")
    }

    pub fn store(&self) -> PathBuf {
        self.root.join(".git/git-session")
    }

    pub fn git_cmd(&self, dir: &Path) -> Command {
        let mut cmd = Command::new("git");
        hermetic(&mut cmd, &self.home);
        cmd.current_dir(dir);
        cmd
    }

    /// Runs git in the main worktree and returns stdout; panics on failure.
    #[track_caller]
    pub fn git<I, S>(&self, args: I) -> String
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.git_in(&self.root.clone(), args)
    }

    #[track_caller]
    pub fn git_in<I, S>(&self, dir: &Path, args: I) -> String
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let out = self.git_cmd(dir).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "git failed in {}: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs git and returns the whole result, without asserting.
    pub fn git_try<I, S>(&self, dir: &Path, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        to_run(self.git_cmd(dir).args(args).output().unwrap())
    }

    /// The `git-session` binary, hermetic, in `dir`.
    pub fn cmd_in(&self, dir: &Path) -> Command {
        let mut cmd = Command::new(bin());
        hermetic(&mut cmd, &self.home);
        cmd.current_dir(dir);
        cmd
    }

    /// `git-session worktree-hook EVENT` run from the home directory (as an agent runs it), with
    /// `input` as its JSON payload on stdin.
    pub fn worktree_hook(&self, event: &str, input: serde_json::Value) -> Run {
        use std::io::Write;
        let mut cmd = self.cmd_in(&self.home);
        cmd.args(["worktree-hook", event])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.to_string().as_bytes())
            .unwrap();
        to_run(child.wait_with_output().unwrap())
    }

    /// The paths `git status --porcelain -z --untracked-files=all --no-renames` lists in `dir`,
    /// sorted (the answer `git_session::git::status` must equal).
    pub fn git_status_paths(&self, dir: &Path) -> Vec<String> {
        let out = self
            .git_cmd(dir)
            .args([
                "--no-optional-locks",
                "status",
                "--porcelain",
                "-z",
                "--untracked-files=all",
                "--no-renames",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut paths: Vec<String> = out
            .stdout
            .split(|&b| b == 0)
            .filter(|r| !r.is_empty())
            .map(|r| String::from_utf8_lossy(&r[3..]).into_owned())
            .collect();
        paths.sort();
        paths
    }

    /// The labels `list --json` shows, in its order.
    pub fn labels(&self) -> Vec<String> {
        labels_of(&self.run(["list", "--json"]).ok().json())
    }

    pub fn run<I, S>(&self, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.run_in(&self.root.clone(), args)
    }

    pub fn run_in<I, S>(&self, dir: &Path, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        to_run(self.cmd_in(dir).args(args).output().unwrap())
    }

    /// `git session create LABEL`, asserting success; returns the worktree path.
    #[track_caller]
    pub fn create(&self, label: &str) -> PathBuf {
        let out = self.run(["create", label]).ok();
        PathBuf::from(out.stdout.trim_end())
    }

    pub fn write(&self, rel: &str, content: &str) {
        write_in(&self.root, rel, content);
    }

    /// Writes, stages and commits one file in `dir`.
    #[track_caller]
    pub fn commit_file(&self, dir: &Path, rel: &str, content: &str, message: &str) {
        write_in(dir, rel, content);
        self.git_in(dir, ["add", "--", rel]);
        self.git_in(dir, ["commit", "-q", "-m", message]);
    }

    /// insta settings that replace this repository's temp paths with `[TMP]`.
    pub fn insta(&self) -> insta::Settings {
        let mut s = insta::Settings::clone_current();
        s.add_filter(&regex_escape(&self.base().display().to_string()), "[TMP]");
        s.add_filter(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "[TIME]");
        s.add_filter(r"\b[0-9a-f]{40}\b", "[SHA]");
        s.add_filter(r"\b[0-9a-f]{7,12}\b", "[SHORT]");
        s
    }
}

/// The labels of the sessions in `list --json` output, in its order.
pub fn labels_of(list: &serde_json::Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|s| s["label"].as_str().unwrap().to_string())
        .collect()
}

pub fn write_in(dir: &Path, rel: &str, content: &str) {
    let path = dir.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, content).unwrap();
}

pub fn to_run(out: Output) -> Run {
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn regex_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `text` without its SGR colour escapes (`ESC [ ... m`), as a terminal shows it.
#[allow(dead_code)]
pub fn strip_colour(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Runs a command, killing it after `secs` (a hang is a failure, reported as exit -9).
pub fn within(mut cmd: std::process::Command, secs: u64, stdin: &str) -> Run {
    use std::io::Write;
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    let started = std::time::Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return to_run(child.wait_with_output().unwrap());
        }
        if started.elapsed().as_secs() >= secs {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            let mut run = to_run(out);
            run.code = -9;
            return run;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
