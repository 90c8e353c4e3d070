//! Who works inside a directory: every mode's reading of current directories, and the processes
//! that never count (the asker, its ancestors, and the pipeline it writes into or reads from).
//!
//! Invariant: an answer is [`Occupancy::Known`] only when every process whose directory this
//! user may see was looked at; anything less is [`Occupancy::Unknown`] with its reason.

use super::{ancestry_with, command_name, parent_pid, pid_exists, tools, Facts};
use std::path::{Path, PathBuf};

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

/// [`occupants`] from the given facts (unit tests pass every kind).
pub fn occupants_with(dir: &Path, facts: Facts) -> Occupancy {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let me = std::process::id();
    let (inside, pipes): (Vec<(u32, PathBuf)>, Pipes) = match facts {
        Facts::ExistenceOnly => {
            return Occupancy::Unknown(facts.missing("the current directory of a process"))
        }
        Facts::Proc => {
            let entries = match std::fs::read_dir("/proc") {
                Ok(entries) => entries,
                Err(e) => return Occupancy::Unknown(format!("/proc cannot be read: {e}")),
            };
            let inside = entries
                .flatten()
                .filter_map(|entry| {
                    let pid = entry.file_name().to_str()?.parse::<u32>().ok()?;
                    let cwd = std::fs::read_link(entry.path().join("cwd")).ok()?;
                    cwd.starts_with(&dir).then_some((pid, cwd))
                })
                .collect();
            (inside, Pipes::Proc)
        }
        Facts::Tools => {
            let cannot = |why: &String| Occupancy::Unknown(why.clone());
            // The table first: without parents the asking shell cannot be told from others.
            if let Err(why) = tools::table(false).as_ref() {
                return cannot(why);
            }
            let opened = tools::opened();
            let opened = match opened.as_ref() {
                Ok(list) => list,
                Err(why) => return cannot(why),
            };
            let inside = opened
                .iter()
                // A reading up to a few seconds old: who has ended since is no occupant.
                .filter(|o| o.pid == me || pid_exists(o.pid) != Some(false))
                .filter_map(|o| {
                    let cwd = o.cwd.as_ref()?;
                    cwd.starts_with(&dir).then(|| (o.pid, cwd.clone()))
                })
                .collect();
            (inside, Pipes::Listed(opened.clone()))
        }
    };
    let exempt = ancestry_with(me, facts);
    let mut found: Vec<Occupant> = inside
        .into_iter()
        .filter(|(pid, _)| !exempt.contains(pid))
        .map(|(pid, cwd)| Occupant {
            pid,
            command: command_name(pid, facts),
            cwd,
        })
        .collect();
    leave_out_our_pipeline(&mut found, &exempt, &pipes, facts);
    found.sort_by_key(|o| o.pid);
    Occupancy::Known(found)
}

/// Where the standard input and output of processes are read from.
enum Pipes {
    /// `/proc/<pid>/fd/0` and `1`.
    Proc,
    /// lsof's reading of every process.
    Listed(Vec<tools::Opened>),
}

/// What sits on a process's standard input (`fd` 0) or output (1), as a pipe's identity.
#[derive(Debug, Clone, PartialEq, Eq)]
enum PipeEnd {
    /// `pipe:[inode]`: one name for both ends.
    Proc(PathBuf),
    Listed(tools::FileId),
}

impl PipeEnd {
    fn joins(&self, other: &PipeEnd) -> bool {
        match (self, other) {
            (PipeEnd::Proc(a), PipeEnd::Proc(b)) => a == b,
            (PipeEnd::Listed(a), PipeEnd::Listed(b)) => a.same_pipe(b),
            _ => false,
        }
    }
}

impl Pipes {
    fn end(&self, pid: u32, fd: u8) -> Option<PipeEnd> {
        match self {
            Pipes::Proc => std::fs::read_link(format!("/proc/{pid}/fd/{fd}"))
                .ok()
                .filter(|target| target.to_string_lossy().starts_with("pipe:"))
                .map(PipeEnd::Proc),
            Pipes::Listed(opened) => {
                let o = opened.iter().find(|o| o.pid == pid)?;
                let file = if fd == 0 { &o.stdin } else { &o.stdout };
                file.clone()
                    .filter(|f| matches!(f.kind.as_str(), "FIFO" | "PIPE"))
                    .map(PipeEnd::Listed)
            }
        }
    }
}

/// `git session cleanup | head` run from inside the worktree: `head` is a child of the same
/// shell, started with us, and no one else working there. Left out: the processes a shell or
/// git above us started that read what we write (our stdout is their stdin, and so on down the
/// pipeline) or write what we read (upstream, the same way). Anything else that merely shares
/// the shell's terminal or output stays an occupant.
fn leave_out_our_pipeline(
    found: &mut Vec<Occupant>,
    ancestry: &[u32],
    pipes: &Pipes,
    facts: Facts,
) {
    for (ours, theirs) in [(1, 0), (0, 1)] {
        let mut at = pipes.end(std::process::id(), ours);
        while let Some(pipe) = at.take() {
            let next = found.iter().position(|o| {
                parent_pid(o.pid, facts).is_some_and(|p| ancestry.contains(&p))
                    && pipes.end(o.pid, theirs).is_some_and(|end| end.joins(&pipe))
            });
            if let Some(i) = next {
                at = pipes.end(found.remove(i).pid, ours);
            }
        }
    }
}
