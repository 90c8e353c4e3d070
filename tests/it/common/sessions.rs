//! Sessions acting in a test repository: the binary and git run as a session (`GIT_SESSION`
//! set, the way an agent's shell runs them), sessions attached to the main worktree, and the
//! guard's standard contest (session A owns `src/config.rs`, session B commits over it).
//!
//! Every command here still goes through `hermetic`, which clears any `GIT_SESSION` the test
//! process inherited: a command is run as a session only when a helper here says so.
use super::{to_run, write_in, Run, TestRepo};
use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

impl TestRepo {
    /// The `git-session` binary in the main worktree, run as session `who`.
    pub fn as_session(&self, who: &str) -> Command {
        self.as_session_in(&self.root, who)
    }

    /// The `git-session` binary in `dir`, run as session `who`.
    pub fn as_session_in(&self, dir: &Path, who: &str) -> Command {
        let mut cmd = self.cmd_in(dir);
        cmd.env("GIT_SESSION", who);
        cmd
    }

    /// Runs `git-session ARGS` in the main worktree as session `who`, without asserting.
    pub fn run_as<I, S>(&self, who: &str, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.run_as_in(&self.root, who, args)
    }

    /// Runs `git-session ARGS` in `dir` as session `who`, without asserting.
    pub fn run_as_in<I, S>(&self, dir: &Path, who: &str, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        to_run(self.as_session_in(dir, who).args(args).output().unwrap())
    }

    /// git in `dir` run as session `who` (so the guard's hooks judge it as that session).
    pub fn git_cmd_as(&self, dir: &Path, who: &str) -> Command {
        let mut cmd = self.git_cmd(dir);
        cmd.env("GIT_SESSION", who);
        cmd
    }

    /// Runs git in `dir` as session `who`, without asserting. Without a session, `git_try`.
    pub fn git_as<I, S>(&self, dir: &Path, who: &str, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        to_run(self.git_cmd_as(dir, who).args(args).output().unwrap())
    }

    /// `git session create --attach LABEL`: a session in the main worktree, asserting success.
    #[track_caller]
    pub fn attach(&self, label: &str) {
        self.run(["create", "--attach", label]).ok();
    }

    /// The claims `claims --json` lists (one object per claimed path), in its order.
    pub fn claims(&self) -> Vec<serde_json::Value> {
        match self.run(["claims", "--json"]).ok().json() {
            serde_json::Value::Array(claims) => claims,
            other => panic!("claims --json is not an array: {other}"),
        }
    }

    /// The subject of `HEAD` in `dir`: which commit went through.
    pub fn head_subject(&self, dir: &Path) -> String {
        self.git_in(dir, ["log", "-1", "--format=%s"])
            .trim()
            .to_string()
    }
}

/// A repository with `src/config.rs`, `src/lib.rs` committed and the guard's hooks installed.
pub fn guarded() -> TestRepo {
    let repo = TestRepo::new();
    repo.commit_file(&repo.root.clone(), "src/config.rs", "config\n", "config");
    repo.commit_file(&repo.root.clone(), "src/lib.rs", "lib\n", "lib");
    repo.run(["hooks", "install"]).ok();
    repo
}

/// A `guarded()` repository with sessions A and B attached to its main worktree: one worktree,
/// one index, and only `GIT_SESSION` tells the two sessions apart.
pub fn two_sessions_in_one_worktree() -> TestRepo {
    let repo = guarded();
    repo.attach("A");
    repo.attach("B");
    repo
}

/// The guard's standard contest: `two_sessions_in_one_worktree()` with A claiming
/// `src/config.rs`.
pub fn a_owns_config() -> TestRepo {
    let repo = two_sessions_in_one_worktree();
    repo.run_as("A", ["claim", "src/config.rs"]).ok();
    repo
}

/// Session B's commit over A's path: `src/config.rs` rewritten to `content`, everything staged
/// (`git add -A`) in the main worktree, then `git commit -q -m MESSAGE` as B; not asserted.
pub fn b_commits_over_a(repo: &TestRepo, content: &str, message: &str) -> Run {
    write_in(&repo.root, "src/config.rs", content);
    repo.git(["add", "-A"]);
    repo.git_as(&repo.root, "B", ["commit", "-q", "-m", message])
}
