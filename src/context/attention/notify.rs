//! `[notify] command`, run once when an agent starts waiting ([`crate::config::notify`]).
//!
//! Invariants: run only by the hook call whose write recorded the change into waiting (so once
//! per wait, however many hooks of that agent run at once); never waited for, with no stdin and
//! its output discarded, so the hook's cost and its answer to the agent stay as they were; the
//! agent's text is never passed on, only the label, the reason (`permission` or `input`) and the
//! worktree.

use std::path::Path;
use std::process::{Command, Stdio};

/// Starts the user's command; the error says why it could not start.
pub fn run(command: &str, label: &str, reason: &str, worktree: &Path) -> std::io::Result<()> {
    Command::new("sh")
        .arg("-c")
        .arg(command)
        .arg("git-session-notify")
        .arg(label)
        .arg(reason)
        .arg(worktree)
        .env("GIT_SESSION_NOTIFY_LABEL", label)
        .env("GIT_SESSION_NOTIFY_REASON", reason)
        .env("GIT_SESSION_NOTIFY_WORKTREE", worktree)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map(drop)
}
