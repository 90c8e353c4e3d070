//! Processes: who we are, whether a recorded process still runs, who works inside a directory.
//!
//! Invariant: a process is judged dead only by pid, start time and host together. A pid alone is
//! reused by the kernel; a record written on another host (a repository on a shared disk) can never
//! be judged from here, so it is reported as [`Liveness::OtherHost`] and never broken.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Enough to recognise one process again, even after its pid is reused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessId {
    pub pid: u32,
    /// Start time in clock ticks since boot (`/proc/<pid>/stat` field 22); 0 where unknown.
    pub start: u64,
    pub host: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    Alive,
    Dead,
    OtherHost,
}

pub fn hostname() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_else(|| "localhost".to_string())
}

impl ProcessId {
    pub fn current() -> ProcessId {
        let pid = std::process::id();
        ProcessId {
            pid,
            start: start_time(pid).unwrap_or(0),
            host: hostname(),
        }
    }

    pub fn liveness(&self) -> Liveness {
        if self.host != hostname() {
            return Liveness::OtherHost;
        }
        match start_time(self.pid) {
            None => Liveness::Dead,
            // A recorded start of 0 means we could not read it then; trust the pid alone.
            Some(start) if self.start == 0 || start == self.start => Liveness::Alive,
            Some(_) => Liveness::Dead,
        }
    }
}

/// Process start time in clock ticks since boot, or `None` when no such process exists.
pub fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may itself hold spaces or parentheses.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3 (state); field 22 is index 19. A zombie has exited: treat as gone.
    if fields.first() == Some(&"Z") {
        return None;
    }
    fields.get(19)?.parse().ok()
}

/// The process group and session of a process (fields 5 and 6 of `/proc/<pid>/stat`).
pub fn group_and_session(pid: u32) -> Option<(u32, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    Some((fields.get(2)?.parse().ok()?, fields.get(3)?.parse().ok()?))
}

/// Whether any live (not zombie) process belongs to process group `pgid`.
pub fn group_has_members(pgid: u32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|e| {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            return false;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        let Some(close) = stat.rfind(')') else {
            return false;
        };
        // After the command name: state, ppid, pgrp.
        let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        fields.first() != Some(&"Z")
            && fields.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(pgid)
    })
}

fn parent_pid(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

fn command_name(pid: u32) -> String {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let text: Vec<String> = cmdline
        .split(|b| *b == 0)
        .filter(|part| !part.is_empty())
        .map(|part| String::from_utf8_lossy(part).into_owned())
        .collect();
    if text.is_empty() {
        std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "?".to_string())
    } else {
        let joined = text.join(" ");
        if joined.chars().count() > 60 {
            format!("{}...", joined.chars().take(57).collect::<String>())
        } else {
            joined
        }
    }
}

/// `pid` and every process above it, up to the root of the process tree. Bounded, so a parent
/// link that loops (a pid reused while we read) cannot hang the walk.
pub fn ancestry(pid: u32) -> Vec<u32> {
    let mut chain = vec![pid];
    let mut at = pid;
    while chain.len() < 4096 {
        match parent_pid(at) {
            Some(parent) if parent != 0 && !chain.contains(&parent) => {
                chain.push(parent);
                at = parent;
            }
            _ => break,
        }
    }
    chain
}

/// A process whose current directory lies inside some directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Occupant {
    pub pid: u32,
    pub command: String,
    pub cwd: PathBuf,
}

/// Processes whose current directory is `dir` or below it, other than this one and its
/// ancestors. Reads `/proc`; elsewhere returns an empty list.
///
/// The ancestors are whoever asked for this command: the `git` that runs `git session ...`, the
/// user's shell standing in the worktree (`cd "$(git session create x)"` and later
/// `git session cleanup` from there), a script or an agent's hook runner. Leaving the directory
/// is theirs to do once we are done; they are never "another process working inside it".
pub fn occupants(dir: &Path) -> Vec<Occupant> {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let exempt = ancestry(std::process::id());
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if exempt.contains(&pid) {
            continue;
        }
        let Ok(cwd) = std::fs::read_link(entry.path().join("cwd")) else {
            continue;
        };
        if cwd.starts_with(&dir) {
            found.push(Occupant {
                pid,
                command: command_name(pid),
                cwd,
            });
        }
    }
    leave_out_our_pipeline(&mut found, &exempt);
    found.sort_by_key(|o| o.pid);
    found
}

/// The pipe (`pipe:[inode]`) on a process's file descriptor `fd`, if that is one.
fn std_pipe(pid: u32, fd: u8) -> Option<PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/fd/{fd}"))
        .ok()
        .filter(|target| target.to_string_lossy().starts_with("pipe:"))
}

/// `git session cleanup | head` run from inside the worktree: `head` is a child of the same
/// shell, started with us, and no one else working there. Left out: the processes a shell or
/// git above us started that read what we write (our stdout is their stdin, and so on down the
/// pipeline) or write what we read (upstream, the same way). Anything else that merely shares
/// the shell's terminal or output stays an occupant.
fn leave_out_our_pipeline(found: &mut Vec<Occupant>, ancestry: &[u32]) {
    for (ours, theirs) in [(1, 0), (0, 1)] {
        let mut at = std_pipe(std::process::id(), ours);
        while let Some(pipe) = at.take() {
            let next = found.iter().position(|o| {
                parent_pid(o.pid).is_some_and(|p| ancestry.contains(&p))
                    && std_pipe(o.pid, theirs).as_ref() == Some(&pipe)
            });
            if let Some(i) = next {
                at = std_pipe(found.remove(i).pid, ours);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn current_process_is_alive() {
        assert_eq!(ProcessId::current().liveness(), Liveness::Alive);
    }

    #[test]
    fn reused_pid_is_dead() {
        let mut me = ProcessId::current();
        me.start += 1;
        assert_eq!(me.liveness(), Liveness::Dead);
    }

    #[test]
    fn ancestry_reaches_the_parent_and_stops() {
        let chain = ancestry(std::process::id());
        assert_eq!(chain[0], std::process::id());
        assert_eq!(chain.get(1).copied(), parent_pid(std::process::id()));
        assert!(chain.len() >= 2, "a test process has a parent: {chain:?}");
    }

    #[test]
    fn a_child_in_the_directory_is_an_occupant() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .current_dir(dir.path())
            .spawn()
            .unwrap();
        // Wait until the child has started (its cwd is set before exec).
        let mut found = Vec::new();
        for _ in 0..200 {
            found = occupants(dir.path());
            if found.iter().any(|o| o.pid == child.id()) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let _ = child.kill();
        let _ = child.wait();
        let pids: Vec<u32> = found.iter().map(|o| o.pid).collect();
        assert!(pids.contains(&child.id()), "{pids:?}");
    }

    #[test]
    fn other_host_is_never_judged() {
        let mut me = ProcessId::current();
        me.host = "elsewhere.invalid".into();
        assert_eq!(me.liveness(), Liveness::OtherHost);
    }
}
