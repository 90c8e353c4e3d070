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
//! - A start time is compared only with one read the same way ([`Clock`]): `/proc`'s clock ticks
//!   since boot with `/proc`'s, `ps`'s wall-clock seconds with `ps`'s. A record read another way
//!   (a lock written in another mode) is [`Liveness::Unknown`] while its pid runs.
//! - The guard and the context hook never start a program here on their usual path: recording
//!   this process ([`ProcessId::current`]) starts none in any mode; only judging a recorded
//!   process that still runs (a busy lock, a removal) may ask `ps`.
//!
//! Where the facts come from ([`Facts`]): on Linux, `/proc` (start times, current directories,
//! process groups); on every Unix without it, the tools it ships ([`tools`]: `ps` for parents,
//! start times and commands, `lsof` for current directories and pipes); where those are missing
//! or fail, only what POSIX gives, `kill(pid, 0)` and `killpg(pgid, 0)` for existence and
//! `getpgid`/`getsid`, and every answer that needed more says which tool failed and how.
//! Test knob: `GIT_SESSION_PROCESS_FACTS=tools` makes Linux read the tools as macOS does, and
//! `existence-only` makes it answer as a platform with neither, so the tests exercise every
//! answer through the same interface; the variable is read here and nowhere else, and is meant
//! for tests and reproductions only.

mod occupants;
pub mod tools;

#[cfg(test)]
use occupants::occupants_with;
pub use occupants::{occupants, Occupancy, Occupant};

use serde::{Deserialize, Serialize};

/// What this platform lets us know about processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Facts {
    /// `/proc`: start times, current directories, parents and process groups of every process.
    Proc,
    /// The tools a Unix without `/proc` ships (`ps`, `lsof`): the same facts, at the cost of a
    /// program run, read once per command. Where a tool is missing or fails, its answers are
    /// those of [`Facts::ExistenceOnly`], saying why.
    Tools,
    /// Only whether a pid or a process group exists (`kill(pid, 0)`), and a process's group and
    /// session: no start time, no current directory.
    ExistenceOnly,
}

/// The environment variable that makes Linux answer as another platform does (tests only):
/// `tools` (macOS), `existence-only` (neither `/proc` nor the tools).
pub const FACTS_VAR: &str = "GIT_SESSION_PROCESS_FACTS";

impl Facts {
    /// The facts this process can get: `/proc` on Linux, the tools on every other Unix, unless
    /// [`FACTS_VAR`] says `tools` or `existence-only`.
    pub fn here() -> Facts {
        static FACTS: std::sync::OnceLock<Facts> = std::sync::OnceLock::new();
        *FACTS.get_or_init(|| {
            match std::env::var_os(FACTS_VAR)
                .as_deref()
                .and_then(|v| v.to_str())
            {
                Some("existence-only") => Facts::ExistenceOnly,
                Some("tools") => Facts::Tools,
                _ if cfg!(target_os = "linux") => Facts::Proc,
                _ => Facts::Tools,
            }
        })
    }

    /// Why a fact is missing, for messages: what the platform does not show, and, where the
    /// tools should have shown it, why they did not.
    pub fn missing(self, what: &str) -> String {
        match self {
            Facts::ExistenceOnly => format!("this platform does not show {what} (no /proc)"),
            Facts::Proc | Facts::Tools => format!("{what} cannot be read here"),
        }
    }

    /// How this mode reads start times, so a record is only compared with its own kind.
    fn clock(self) -> Clock {
        match self {
            Facts::Proc => Clock::Ticks,
            Facts::Tools | Facts::ExistenceOnly => Clock::Wall,
        }
    }
}

/// How a recorded start time was read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Clock {
    /// Exactly: clock ticks since boot (`/proc/<pid>/stat` field 22).
    #[default]
    Ticks,
    /// As a bound: wall-clock seconds since the epoch, at or after the process started (taken
    /// when it was recorded, so recording starts no program). `ps`'s `lstart` for that pid,
    /// truncated to the second, is never later for the same process; a later one is a reuse.
    Wall,
}

impl Clock {
    fn is_ticks(&self) -> bool {
        *self == Clock::Ticks
    }
}

/// How far `ps`'s start of a process may lie after a recorded [`Clock::Wall`] bound and still be
/// taken for the same process: the clock may be stepped back a little between the two readings.
/// A reuse of the pid within that margin is kept as alive (the safe side).
const WALL_SLACK: u64 = 2;

/// Enough to recognise one process again, even after its pid is reused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessId {
    pub pid: u32,
    /// When it started, read as [`ProcessId::clock`] says; 0 where unknown.
    pub start: u64,
    pub host: String,
    /// How `start` was read; records from before there was a choice are [`Clock::Ticks`].
    #[serde(default, skip_serializing_if = "Clock::is_ticks")]
    pub clock: Clock,
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
    /// This process, read once (it does not change while we run).
    pub fn current() -> ProcessId {
        static ME: std::sync::OnceLock<ProcessId> = std::sync::OnceLock::new();
        ME.get_or_init(|| ProcessId::of(std::process::id())).clone()
    }

    /// The process running now with pid `pid` on this host: its start time where `/proc` shows
    /// it (0 where not), or, without `/proc`, the time now, a bound at or after its start that
    /// costs no program run ([`Clock::Wall`]).
    pub fn of(pid: u32) -> ProcessId {
        let facts = Facts::here();
        let start = match facts {
            Facts::Proc => proc_start_time(pid).unwrap_or(0),
            Facts::Tools | Facts::ExistenceOnly => wall_now(),
        };
        ProcessId {
            pid,
            start,
            host: hostname(),
            clock: facts.clock(),
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
        // Whatever else the mode reads, a pid the kernel has no process for is gone.
        if pid_exists(self.pid) == Some(false) {
            return Liveness::Dead;
        }
        match self.started_as_recorded(facts) {
            Ok(true) => Liveness::Alive,
            Ok(false) => Liveness::Dead,
            Err(_) => Liveness::Unknown,
        }
    }

    /// Whether the process running with this pid is the recorded one, judged by its start time;
    /// `Ok(false)` too when no process has the pid. The error says why it cannot be told.
    fn started_as_recorded(&self, facts: Facts) -> Result<bool, String> {
        if facts == Facts::ExistenceOnly {
            return Err(facts.missing("when a process started"));
        }
        if self.start == 0 {
            // It could not be read when the record was written, so the pid alone cannot tell
            // this process from a later one with the same pid.
            return Err(
                "no start time was recorded for it, so a later process with its pid \
                        cannot be told from it"
                    .to_string(),
            );
        }
        if self.clock != facts.clock() {
            return Err(
                "its start time was recorded where start times are read another way \
                        (/proc against ps)"
                    .to_string(),
            );
        }
        if facts == Facts::Proc {
            return Ok(proc_start_time(self.pid) == Some(self.start));
        }
        match tools::start_of(self.pid) {
            Ok(Some(start)) => Ok(start <= self.start + WALL_SLACK),
            // `ps` no longer lists it: it ended while we looked, unless the kernel still has a
            // process with its pid that `ps` cannot show.
            Ok(None) => match pid_exists(self.pid) {
                Some(false) => Ok(false),
                _ => Err("ps does not list it, though its pid runs".to_string()),
            },
            Err(why) => Err(format!("when a process started cannot be read: {why}")),
        }
    }

    /// Why [`Liveness::Unknown`] is the answer for this process, for messages.
    pub fn unknown_because(&self) -> String {
        self.started_as_recorded(Facts::here())
            .err()
            .unwrap_or_else(|| "it could not be told when it started".to_string())
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
        match pid_exists(self.pid) {
            Some(false) => true,
            None => false,
            Some(true) => self.started_as_recorded(Facts::here()) == Ok(true),
        }
    }
}

/// Seconds since the epoch now, by this machine's clock.
fn wall_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
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
        Facts::Tools | Facts::ExistenceOnly => {
            let p = nix::unistd::Pid::from_raw(i32::try_from(pid).ok()?);
            let group = nix::unistd::getpgid(Some(p)).ok()?.as_raw();
            let session = nix::unistd::getsid(Some(p)).ok()?.as_raw();
            Some((u32::try_from(group).ok()?, u32::try_from(session).ok()?))
        }
    }
}

/// Whether any process still belongs to process group `pgid`. With `/proc` zombies do not count
/// (they have exited); elsewhere `killpg(pgid, 0)` counts them, which only makes a wait longer.
/// Asked in a loop while a group stops, so it never runs a tool.
pub fn group_has_members(pgid: u32) -> bool {
    if Facts::here() != Facts::Proc {
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

/// A process's parent, from `/proc` or from `ps`'s table (`None` where neither shows it).
fn parent_pid(pid: u32, facts: Facts) -> Option<u32> {
    match facts {
        Facts::Proc => proc_stat_fields(pid)?.get(1)?.parse().ok(),
        Facts::Tools => tools::table(false)
            .as_ref()
            .as_ref()
            .ok()?
            .get(&pid)
            .map(|row| row.ppid),
        Facts::ExistenceOnly => None,
    }
}

/// A process's command line for messages, shortened to 60 characters.
fn command_name(pid: u32, facts: Facts) -> String {
    let text = match facts {
        Facts::Proc => {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let parts: Vec<String> = cmdline
                .split(|b| *b == 0)
                .filter(|part| !part.is_empty())
                .map(|part| String::from_utf8_lossy(part).into_owned())
                .collect();
            if parts.is_empty() {
                std::fs::read_to_string(format!("/proc/{pid}/comm"))
                    .map(|s| s.trim().to_string())
                    .unwrap_or_default()
            } else {
                parts.join(" ")
            }
        }
        Facts::Tools => tools::table(false)
            .as_ref()
            .as_ref()
            .ok()
            .and_then(|t| t.get(&pid))
            .map(|row| row.command.clone())
            .unwrap_or_default(),
        Facts::ExistenceOnly => String::new(),
    };
    if text.is_empty() {
        "?".to_string()
    } else if text.chars().count() > 60 {
        format!("{}...", text.chars().take(57).collect::<String>())
    } else {
        text
    }
}

fn ancestry_with(pid: u32, facts: Facts) -> Vec<u32> {
    let mut chain = vec![pid];
    let mut at = pid;
    while chain.len() < 4096 {
        match parent_pid(at, facts) {
            Some(parent) if parent != 0 && !chain.contains(&parent) => {
                chain.push(parent);
                at = parent;
            }
            _ => break,
        }
    }
    chain
}

/// The command lines of `pid` and the processes above it, nearest first, at most `depth` of
/// them, each split at spaces where only `ps` shows it (an argument holding a space is then two).
/// Costs one `ps` run where there is no `/proc`: callers on a hot path read it once and keep it.
pub fn ancestors_commands(pid: u32, depth: usize) -> Vec<(u32, Vec<String>)> {
    let facts = Facts::here();
    let mut out = Vec::new();
    for at in ancestry_with(pid, facts).into_iter().take(depth) {
        let args: Vec<String> = match facts {
            Facts::Proc => std::fs::read(format!("/proc/{at}/cmdline"))
                .unwrap_or_default()
                .split(|b| *b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect(),
            Facts::Tools => tools::table(false)
                .as_ref()
                .as_ref()
                .ok()
                .and_then(|t| t.get(&at))
                .map(|row| row.command.split(' ').map(str::to_string).collect())
                .unwrap_or_default(),
            Facts::ExistenceOnly => Vec::new(),
        };
        out.push((at, args));
    }
    out
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
mod tests;
