//! Processes: who we are, whether a recorded process still runs, who works inside a directory.
//! Every process fact the tool acts on comes from this module, and every answer it gives has an
//! explicit "cannot tell" form, so that no caller can mistake a missing fact for "dead" or
//! "nobody".
//!
//! Invariants:
//! - A process is judged dead only by pid, start time and host together, or by the kernel saying
//!   no process has that pid (`kill(pid, 0)` failing with `ESRCH`). A pid alone is reused by the
//!   kernel; a record written on another host (a repository on a shared disk) can never be judged
//!   from here, so it is reported as [`Liveness::OtherHost`] and never broken.
//! - Where the platform shows a pid but not its start time, a running pid is
//!   [`Liveness::Unknown`]: it may be the recorded process or a reuse of its pid. Unknown keeps
//!   locks and `creating` records (only [`Liveness::Dead`] breaks them) and is never a reason to
//!   kill anything.
//! - Where the platform shows no process's current directory, [`occupants`] answers
//!   [`Occupancy::Unknown`], never an empty list: removals refuse on it.
//!
//! Where the facts come from ([`Facts`]): on Linux, `/proc` (start times, current directories,
//! process groups); everywhere else only what POSIX gives, `kill(pid, 0)` and `killpg(pgid, 0)`
//! for existence and `getpgid`/`getsid`. Test knob: `GIT_SESSION_PROCESS_FACTS=existence-only`
//! makes Linux answer as a platform without `/proc` does, so the tests exercise the answers macOS
//! gets through the same interface; the variable is read here and nowhere else, and is meant for
//! tests and reproductions only.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What this platform lets us know about processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Facts {
    /// `/proc`: start times, current directories, parents and process groups of every process.
    Proc,
    /// Only whether a pid or a process group exists (`kill(pid, 0)`), and a process's group and
    /// session: no start time, no current directory.
    ExistenceOnly,
}

/// The environment variable that makes Linux answer as a platform without `/proc` (tests only).
pub const FACTS_VAR: &str = "GIT_SESSION_PROCESS_FACTS";

impl Facts {
    /// The facts this process can get: `/proc` on Linux unless [`FACTS_VAR`] is
    /// `existence-only`; existence only on every other platform.
    pub fn here() -> Facts {
        static FACTS: std::sync::OnceLock<Facts> = std::sync::OnceLock::new();
        *FACTS.get_or_init(|| {
            let forced = std::env::var_os(FACTS_VAR).is_some_and(|v| v == "existence-only");
            if cfg!(target_os = "linux") && !forced {
                Facts::Proc
            } else {
                Facts::ExistenceOnly
            }
        })
    }

    /// Why a fact is missing, for messages: what the platform does not show.
    pub fn missing(self, what: &str) -> String {
        format!("this platform does not show {what} (no /proc)")
    }
}

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
    /// That very process (pid and start time) runs on this host.
    Alive,
    /// No process with that pid runs on this host, or the one that does started at another time.
    Dead,
    /// Recorded on another host: never judged from here.
    OtherHost,
    /// A process with that pid runs, but whether it is the recorded one cannot be told (the
    /// platform shows no start time, or none was recorded). Treated as alive by every caller.
    Unknown,
}

pub fn hostname() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_else(|| "localhost".to_string())
}

impl ProcessId {
    pub fn current() -> ProcessId {
        ProcessId::of(std::process::id())
    }

    /// The process running now with pid `pid` on this host (start time 0 where unknown).
    pub fn of(pid: u32) -> ProcessId {
        ProcessId {
            pid,
            start: start_time(pid).unwrap_or(0),
            host: hostname(),
        }
    }

    pub fn liveness(&self) -> Liveness {
        self.liveness_with(Facts::here())
    }

    /// [`ProcessId::liveness`] from the given facts (unit tests pass both kinds).
    pub fn liveness_with(&self, facts: Facts) -> Liveness {
        if self.host != hostname() {
            return Liveness::OtherHost;
        }
        match facts {
            Facts::Proc => match proc_start_time(self.pid) {
                None => Liveness::Dead,
                // A recorded start of 0: it could not be read when the record was written, so
                // the pid alone cannot tell this process from a later one with the same pid.
                Some(_) if self.start == 0 => Liveness::Unknown,
                Some(start) if start == self.start => Liveness::Alive,
                Some(_) => Liveness::Dead,
            },
            Facts::ExistenceOnly => match pid_exists(self.pid) {
                Some(false) => Liveness::Dead,
                Some(true) | None => Liveness::Unknown,
            },
        }
    }

    /// Why [`Liveness::Unknown`] is the answer for this process, for messages.
    pub fn unknown_because(&self) -> String {
        match Facts::here() {
            Facts::ExistenceOnly => Facts::ExistenceOnly.missing("when a process started"),
            Facts::Proc => "no start time was recorded for it, so a later process with its pid \
                            cannot be told from it"
                .to_string(),
        }
    }

    /// Whether the process group this process leads holds only what it started, so that killing
    /// the group stops its work and nobody else's: the leader is still that very process, or no
    /// process has its pid any more (a pid is not handed out again while a process group of that
    /// id has members, so the members left are its own children). `false` whenever that cannot
    /// be told.
    pub fn owns_its_group(&self) -> bool {
        if self.host != hostname() || self.pid <= 1 {
            return false;
        }
        match Facts::here() {
            Facts::Proc => match proc_start_time(self.pid) {
                None => true,
                Some(start) => self.start != 0 && start == self.start,
            },
            Facts::ExistenceOnly => pid_exists(self.pid) == Some(false),
        }
    }
}

/// Whether a process with this pid exists, as `kill(pid, 0)` says (a zombie counts: it has not
/// been reaped). `None` when the answer is neither "exists" nor "no such process".
fn pid_exists(pid: u32) -> Option<bool> {
    use nix::errno::Errno;
    // Pid 0 and negative values would address process groups, not a process.
    let Ok(raw) = i32::try_from(pid) else {
        return Some(false);
    };
    if raw <= 0 {
        return Some(false);
    }
    match nix::sys::signal::kill(nix::unistd::Pid::from_raw(raw), None) {
        Ok(()) | Err(Errno::EPERM) => Some(true),
        Err(Errno::ESRCH) => Some(false),
        Err(_) => None,
    }
}

/// Process start time in clock ticks since boot, or `None` when no such process exists or the
/// platform does not show start times.
pub fn start_time(pid: u32) -> Option<u64> {
    match Facts::here() {
        Facts::Proc => proc_start_time(pid),
        Facts::ExistenceOnly => None,
    }
}

fn proc_stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may itself hold spaces or parentheses.
    let rest = &stat[stat.rfind(')')? + 1..];
    Some(rest.split_whitespace().map(str::to_string).collect())
}

fn proc_start_time(pid: u32) -> Option<u64> {
    let fields = proc_stat_fields(pid)?;
    // The fields start at field 3 (state); field 22 is index 19. A zombie has exited: gone.
    if fields.first().map(String::as_str) == Some("Z") {
        return None;
    }
    fields.get(19)?.parse().ok()
}

/// The process group and session of a process.
pub fn group_and_session(pid: u32) -> Option<(u32, u32)> {
    match Facts::here() {
        Facts::Proc => {
            // Fields 5 and 6 of `/proc/<pid>/stat`.
            let fields = proc_stat_fields(pid)?;
            Some((fields.get(2)?.parse().ok()?, fields.get(3)?.parse().ok()?))
        }
        Facts::ExistenceOnly => {
            let p = nix::unistd::Pid::from_raw(i32::try_from(pid).ok()?);
            let group = nix::unistd::getpgid(Some(p)).ok()?.as_raw();
            let session = nix::unistd::getsid(Some(p)).ok()?.as_raw();
            Some((u32::try_from(group).ok()?, u32::try_from(session).ok()?))
        }
    }
}

/// Whether any process still belongs to process group `pgid`. With `/proc` zombies do not count
/// (they have exited); elsewhere `killpg(pgid, 0)` counts them, which only makes a wait longer.
pub fn group_has_members(pgid: u32) -> bool {
    if Facts::here() == Facts::ExistenceOnly {
        let Ok(raw) = i32::try_from(pgid) else {
            return false;
        };
        if raw <= 1 {
            return false;
        }
        return matches!(
            nix::sys::signal::killpg(nix::unistd::Pid::from_raw(raw), None),
            Ok(()) | Err(nix::errno::Errno::EPERM)
        );
    }
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|e| {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            return false;
        };
        let Some(fields) = proc_stat_fields(pid) else {
            return false;
        };
        // After the command name: state, ppid, pgrp.
        fields.first().map(String::as_str) != Some("Z")
            && fields.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(pgid)
    })
}

fn parent_pid(pid: u32) -> Option<u32> {
    if Facts::here() != Facts::Proc {
        return None;
    }
    proc_stat_fields(pid)?.get(1)?.parse().ok()
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
/// link that loops (a pid reused while we read) cannot hang the walk. Without `/proc`, only
/// `pid` itself.
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

/// Who works inside a directory, or why that cannot be told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Occupancy {
    /// Every process whose current directory could be read was looked at (another user's
    /// processes, whose directory the kernel does not show us, are not among them).
    Known(Vec<Occupant>),
    /// The platform shows no process's current directory: the reason, for messages.
    Unknown(String),
}

/// Processes whose current directory is `dir` or below it, other than this one and its
/// ancestors, or [`Occupancy::Unknown`] where the platform does not show current directories.
///
/// The ancestors are whoever asked for this command: the `git` that runs `git session ...`, the
/// user's shell standing in the worktree (`cd "$(git session create x)"` and later
/// `git session cleanup` from there), a script or an agent's hook runner. Leaving the directory
/// is theirs to do once we are done; they are never "another process working inside it".
pub fn occupants(dir: &Path) -> Occupancy {
    occupants_with(dir, Facts::here())
}

/// [`occupants`] from the given facts (unit tests pass both kinds).
pub fn occupants_with(dir: &Path, facts: Facts) -> Occupancy {
    if facts == Facts::ExistenceOnly {
        return Occupancy::Unknown(facts.missing("the current directory of a process"));
    }
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let exempt = ancestry(std::process::id());
    let entries = match std::fs::read_dir("/proc") {
        Ok(entries) => entries,
        Err(e) => return Occupancy::Unknown(format!("/proc cannot be read: {e}")),
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
    Occupancy::Known(found)
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

/// A flag set when this process is asked to stop (Ctrl-C, its terminal closed, a kill): the
/// long transactions (`create`, `merge`) watch it and roll back, instead of dying half done.
pub fn interrupt_flag() -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    for signal in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        let _ = signal_hook::flag::register(signal, std::sync::Arc::clone(&flag));
    }
    flag
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A child that has exited and been reaped: its pid names no process (until reused).
    fn reaped_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

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
    fn a_recorded_start_of_zero_cannot_tell_a_running_pid() {
        let mut me = ProcessId::current();
        me.start = 0;
        assert_eq!(me.liveness_with(Facts::Proc), Liveness::Unknown);
    }

    #[test]
    fn without_start_times_a_running_pid_is_unknown_and_a_gone_one_dead() {
        let me = ProcessId::current();
        assert_eq!(me.liveness_with(Facts::ExistenceOnly), Liveness::Unknown);
        let gone = ProcessId {
            pid: reaped_pid(),
            start: 0,
            host: hostname(),
        };
        assert_eq!(gone.liveness_with(Facts::ExistenceOnly), Liveness::Dead);
        assert_eq!(gone.liveness_with(Facts::Proc), Liveness::Dead);
        // Pid 0 would address our own process group through kill(2): never "exists".
        let zero = ProcessId {
            pid: 0,
            start: 0,
            host: hostname(),
        };
        assert_eq!(zero.liveness_with(Facts::ExistenceOnly), Liveness::Dead);
    }

    #[test]
    fn ancestry_reaches_the_parent_and_stops() {
        let chain = ancestry(std::process::id());
        assert_eq!(chain[0], std::process::id());
        assert_eq!(chain.get(1).copied(), parent_pid(std::process::id()));
        assert!(chain.len() >= 2, "a test process has a parent: {chain:?}");
    }

    #[test]
    fn a_child_in_the_directory_is_an_occupant_and_without_proc_nobody_is_claimed_absent() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .current_dir(dir.path())
            .spawn()
            .unwrap();
        // Wait until the child has started (its cwd is set before exec).
        let mut found = Vec::new();
        for _ in 0..200 {
            if let Occupancy::Known(list) = occupants_with(dir.path(), Facts::Proc) {
                found = list;
            }
            if found.iter().any(|o| o.pid == child.id()) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let unknown = occupants_with(dir.path(), Facts::ExistenceOnly);
        let _ = child.kill();
        let _ = child.wait();
        let pids: Vec<u32> = found.iter().map(|o| o.pid).collect();
        assert!(pids.contains(&child.id()), "{pids:?}");
        assert!(
            matches!(&unknown, Occupancy::Unknown(why) if why.contains("current directory")),
            "{unknown:?}"
        );
    }

    #[test]
    fn other_host_is_never_judged() {
        let mut me = ProcessId::current();
        me.host = "elsewhere.invalid".into();
        assert_eq!(me.liveness(), Liveness::OtherHost);
        assert_eq!(me.liveness_with(Facts::ExistenceOnly), Liveness::OtherHost);
        assert!(!me.owns_its_group());
    }
}
