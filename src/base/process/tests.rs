//! The process facts in every mode this machine can run.

use super::*;
use std::path::Path;

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
        clock: Clock::Ticks,
    };
    assert_eq!(gone.liveness_with(Facts::ExistenceOnly), Liveness::Dead);
    assert_eq!(gone.liveness_with(Facts::Proc), Liveness::Dead);
    // Pid 0 would address our own process group through kill(2): never "exists".
    let zero = ProcessId {
        pid: 0,
        start: 0,
        host: hostname(),
        clock: Clock::Ticks,
    };
    assert_eq!(zero.liveness_with(Facts::ExistenceOnly), Liveness::Dead);
}

#[test]
fn ancestry_reaches_the_parent_and_stops() {
    let chain = ancestry_with(std::process::id(), Facts::Proc);
    assert_eq!(chain[0], std::process::id());
    assert_eq!(
        chain.get(1).copied(),
        parent_pid(std::process::id(), Facts::Proc)
    );
    assert!(chain.len() >= 2, "a test process has a parent: {chain:?}");
}

/// A `sleep 30` started in a new temporary directory.
fn sleep_in_a_new_directory() -> (tempfile::TempDir, std::process::Child) {
    let dir = tempfile::tempdir().unwrap();
    let child = std::process::Command::new("sleep")
        .arg("30")
        .current_dir(dir.path())
        .spawn()
        .unwrap();
    (dir, child)
}

/// The occupants of `dir` once `pid` is among them as `sleep 30` (it shows the test binary's
/// argv until its exec), or the last reading after two seconds.
fn occupants_once_seen(dir: &Path, facts: Facts, pid: u32) -> Vec<Occupant> {
    let mut found = Vec::new();
    for _ in 0..100 {
        // Readings are kept for a few seconds within one process; each try wants a new one.
        tools::forget();
        if let Occupancy::Known(list) = occupants_with(dir, facts) {
            found = list;
        }
        if found
            .iter()
            .any(|o| o.pid == pid && o.command == "sleep 30")
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    found
}

#[test]
fn a_child_in_the_directory_is_an_occupant_and_without_proc_nobody_is_claimed_absent() {
    let (dir, mut child) = sleep_in_a_new_directory();
    let found = occupants_once_seen(dir.path(), Facts::Proc, child.id());
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

/// This process as the tools mode records it: a wall-clock bound taken now.
fn me_by_the_tools() -> ProcessId {
    ProcessId {
        pid: std::process::id(),
        start: wall_now(),
        host: hostname(),
        clock: Clock::Wall,
    }
}

fn tools_installed() -> bool {
    let ok = |t: &str, a: &str| std::process::Command::new(t).arg(a).output().is_ok();
    let yes = ok("ps", "-A") && ok("lsof", "-v");
    if !yes {
        eprintln!("SKIPPED: ps or lsof is not installed (CI installs lsof)");
    }
    yes
}

#[test]
fn by_the_tools_a_running_pid_started_later_is_a_reuse_and_another_clock_cannot_tell() {
    if !tools_installed() {
        return;
    }
    let me = me_by_the_tools();
    assert_eq!(me.liveness_with(Facts::Tools), Liveness::Alive);
    // Recorded an hour before `ps` says this pid started: a later process with its pid.
    let mut earlier = me.clone();
    earlier.start -= 3600;
    assert_eq!(earlier.liveness_with(Facts::Tools), Liveness::Dead);
    // A bound a second short of the start is within the slack: kept, the safe side.
    let started = tools::start_of(me.pid).unwrap().unwrap();
    let mut close = me.clone();
    close.start = started - 1;
    assert_eq!(close.liveness_with(Facts::Tools), Liveness::Alive);
    // `/proc`'s ticks are never compared with `ps`'s seconds, nor the other way round.
    let ticks = ProcessId {
        clock: Clock::Ticks,
        start: proc_start_time(me.pid).unwrap_or(1),
        ..me.clone()
    };
    assert_eq!(ticks.liveness_with(Facts::Tools), Liveness::Unknown);
    assert_eq!(me.liveness_with(Facts::Proc), Liveness::Unknown);
    let gone = ProcessId {
        pid: reaped_pid(),
        ..me
    };
    assert_eq!(gone.liveness_with(Facts::Tools), Liveness::Dead);
}

#[test]
fn by_the_tools_a_child_in_the_directory_is_an_occupant_named_by_its_command() {
    if !tools_installed() {
        return;
    }
    let (dir, mut child) = sleep_in_a_new_directory();
    let found = occupants_once_seen(dir.path(), Facts::Tools, child.id());
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        found
            .iter()
            .any(|o| o.pid == child.id() && o.command == "sleep 30"),
        "{found:?}"
    );
    // This process stands in no such directory, and its ancestors are never occupants.
    let here = std::env::current_dir().unwrap();
    tools::forget();
    let Occupancy::Known(list) = occupants_with(&here, Facts::Tools) else {
        panic!("the tools answered above");
    };
    assert!(list.iter().all(|o| o.pid != std::process::id()), "{list:?}");
}

#[test]
fn other_host_is_never_judged() {
    let mut me = ProcessId::current();
    me.host = "elsewhere.invalid".into();
    assert_eq!(me.liveness(), Liveness::OtherHost);
    assert_eq!(me.liveness_with(Facts::ExistenceOnly), Liveness::OtherHost);
    assert!(!me.owns_its_group());
}
