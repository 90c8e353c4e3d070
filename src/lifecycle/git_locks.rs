//! git's own lock files left behind by a git that was killed (`packed-refs.lock`,
//! `refs/heads/<branch>.lock`, `index.lock` of a worktree, `HEAD.lock`): a killed `git
//! update-ref` or `git reset --hard` leaves them, and every later git command that needs the same
//! lock fails ("cannot lock ref", "Unable to create '.../index.lock': File exists") until someone
//! removes the file. [`clear_stale`], run by every command that runs
//! [`super::recover_interrupted`], names each one and removes those it can show no live git
//! holds.
//!
//! The rule, conservative on purpose: a lock file is removed only when
//! - it is older than [`GRACE`], judged again just before it is removed (a git holds a ref lock
//!   for milliseconds, and one that writes for longer is alive and found below), and
//! - the process facts can tell who works in the repository (every worktree's directory and the
//!   common directory; [`crate::base::process::occupants`]), and no live git process (a command
//!   named `git` or `git-<something>`, other than git-session and the processes that started
//!   this command) has its current directory in any of them.
//!
//! Anything else is named and kept: a lock a live git process may hold (the process is named,
//! once the lock is older than [`NAMED_AFTER`]), or one where the facts cannot tell (why is
//! said). What the rule cannot see, and so may take a lock from under: a git process of another
//! user (whose directories the kernel does not show), and a git run with `GIT_DIR` from a
//! directory outside the repository; such a git is taken for dead. Only files git names `*.lock`
//! in the common directory, its `refs/` and each worktree's admin directory are looked at; the
//! store's own locks (`git-session/`) follow their own protocol and are never touched here.

use crate::base::announce::{self, Announcement};
use crate::base::process::{occupants, Occupancy};
use crate::git::{self, Repo};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How old a lock file must be before it may be judged stale.
pub const GRACE: Duration = Duration::from_secs(2);

/// A lock kept because a live git may hold it is named only from this age on: a long checkout
/// holds the index lock for seconds, and is no news.
pub const NAMED_AFTER: Duration = Duration::from_secs(30);

/// git's lock files under the common directory: its own, those in `refs/` (any depth), and each
/// worktree admin directory's.
fn lock_files(common_dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let in_dir = |dir: &Path, out: &mut Vec<PathBuf>| {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let is_file = entry.file_type().is_ok_and(|t| t.is_file());
            if is_file && path.extension().is_some_and(|e| e == "lock") {
                out.push(path);
            }
        }
    };
    in_dir(common_dir, &mut out);
    for entry in std::fs::read_dir(common_dir.join("worktrees"))
        .into_iter()
        .flatten()
        .flatten()
    {
        in_dir(&entry.path(), &mut out);
    }
    let mut dirs = vec![common_dir.join("refs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => dirs.push(path),
                Ok(t) if t.is_file() && path.extension().is_some_and(|e| e == "lock") => {
                    out.push(path)
                }
                _ => {}
            }
        }
    }
    out.sort();
    out
}

/// Whether a command line is a git process (not git-session).
fn is_git(command: &str) -> bool {
    let first = command.split_whitespace().next().unwrap_or_default();
    let name = Path::new(first)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name == "git" || (name.starts_with("git-") && !name.starts_with("git-session"))
}

/// The live git processes working in the repository (pid and command), or why that cannot be
/// told.
fn live_gits(repo: &Repo) -> Result<Vec<(u32, String)>, String> {
    let mut dirs = vec![repo.common_dir.clone()];
    dirs.extend(repo.main_worktree.clone());
    dirs.extend(
        git::admin_entries(&repo.common_dir)
            .into_iter()
            .filter_map(|e| e.path),
    );
    let mut out: Vec<(u32, String)> = Vec::new();
    for dir in dirs.iter().filter(|d| d.is_dir()) {
        match occupants(dir) {
            Occupancy::Known(list) => {
                for o in list.into_iter().filter(|o| is_git(&o.command)) {
                    if !out.iter().any(|(p, _)| *p == o.pid) {
                        out.push((o.pid, o.command));
                    }
                }
            }
            Occupancy::Unknown(why) => return Err(why),
        }
    }
    Ok(out)
}

fn age_of(path: &Path) -> Option<Duration> {
    let modified = std::fs::symlink_metadata(path).ok()?.modified().ok()?;
    Some(
        SystemTime::now()
            .duration_since(modified)
            .unwrap_or_default(),
    )
}

/// Names git's stale lock files and removes those no live git can hold (see the module doc).
pub fn clear_stale(repo: &Repo) {
    let locks: Vec<(PathBuf, Duration)> = lock_files(&repo.common_dir)
        .into_iter()
        .filter_map(|p| age_of(&p).map(|a| (p, a)))
        .filter(|(_, age)| *age >= GRACE)
        .collect();
    if locks.is_empty() {
        return;
    }
    let gits = live_gits(repo);
    for (path, age_held) in locks {
        let age = format!("{}s", age_held.as_secs());
        let why = match &gits {
            // Judged again just before: a lock made meanwhile is young, and some git's.
            Ok(_) if age_of(&path).is_none_or(|a| a < GRACE) => continue,
            Ok(gits) if gits.is_empty() => match std::fs::remove_file(&path) {
                Ok(()) => {
                    announce::emit(Announcement::GitLockRemoved { path, age });
                    continue;
                }
                Err(e) => format!("it could not be removed: {e}"),
            },
            Ok(_) if age_held < NAMED_AFTER => continue,
            Ok(gits) => {
                let named: Vec<String> = gits
                    .iter()
                    .map(|(pid, command)| format!("pid {pid} ({command})"))
                    .collect();
                format!(
                    "a git process works in this repository: {}",
                    named.join(", ")
                )
            }
            Err(why) => format!("whether a git process holds it cannot be told: {why}"),
        };
        announce::emit(Announcement::GitLockKept { path, age, why });
    }
}

#[cfg(test)]
mod tests {
    use super::is_git;

    #[test]
    fn git_and_its_helpers_are_git_processes_and_git_session_is_not() {
        for yes in [
            "git update-ref -d refs/heads/x",
            "/usr/lib/git-core/git read-tree -m -u a b",
            "/usr/lib/git-core/git-remote-https origin",
            "git",
        ] {
            assert!(is_git(yes), "{yes}");
        }
        for no in [
            "git-session list",
            "/usr/local/bin/git-session cleanup x",
            "sh -c git status",
            "cargo build",
            "",
        ] {
            assert!(!is_git(no), "{no}");
        }
    }
}
