//! Process facts from the tools every Unix without `/proc` ships: `ps` (parent, start time and
//! command of every process) and `lsof` (every process's current directory and its standard
//! input and output). macOS keeps them in `/bin` and `/usr/sbin`, both on its default `PATH`;
//! the same field forms come from procps `ps` and Debian's `lsof`, so this path runs on Linux
//! too (`GIT_SESSION_PROCESS_FACTS=tools`) and is tested there with the real tools.
//!
//! Invariants a reader must not break:
//! - One reader per tool and format: [`parse_ps`] for `ps -o pid= -o ppid= -o lstart= -o
//!   command=`, [`parse_lsof`] for `lsof -F pftidn`. Both skip what they cannot read rather than
//!   guess, and a row that cannot be read is no process (callers fall back to "cannot tell").
//! - Every run of a tool is bounded by a deadline ([`deadline`]) and killed with its whole
//!   process group when it passes (lsof forks a helper of its own); `lsof -b` avoids the kernel
//!   calls that block on a stale network mount, `-n -P -l` every name lookup, so nothing here
//!   reaches the network.
//! - Each tool runs at most once per [`MAX_AGE`] in one process, and a failure is remembered for
//!   the whole process: a command that judges many sessions pays one call, and a hanging tool one
//!   deadline. These tools are only ever run where a removal or a lock is being judged, never on
//!   the guard's or the context hook's usual path.
//! - Start times are read in UTC (`TZ=UTC0`) and the C locale, so `lstart` reads the same on BSD
//!   and procps: `Fri Nov 27 03:15:28 2026`, seconds since the epoch once parsed.

use std::collections::HashMap;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long one reading of a tool serves further questions in the same process.
pub const MAX_AGE: Duration = Duration::from_secs(5);

/// The deadline of one tool run unless [`DEADLINE_VAR`] sets another (in milliseconds).
const DEFAULT_DEADLINE: Duration = Duration::from_secs(10);

/// Test knob: a tool run's deadline in milliseconds, so a test of a hanging `lsof` need not wait
/// the whole default.
pub const DEADLINE_VAR: &str = "GIT_SESSION_PROCESS_TOOLS_DEADLINE_MS";

pub fn deadline() -> Duration {
    std::env::var(DEADLINE_VAR)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map(Duration::from_millis)
        .unwrap_or(DEFAULT_DEADLINE)
}

/// One process as `ps` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub ppid: u32,
    /// Start time in seconds since the epoch (`lstart`, read in UTC).
    pub start: u64,
    /// Its command line, arguments joined by spaces (as `ps` shows them).
    pub command: String,
}

/// Every process `ps -A` shows, by pid.
pub type Table = HashMap<u32, Row>;

/// One end of a pipe or other open file as lsof names it: its inode where lsof gives one (Linux),
/// else its device and name (macOS names a pipe by its kernel address, and the other end's
/// address as `->0x...`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileId {
    pub kind: String,
    pub inode: Option<String>,
    pub device: Option<String>,
    pub name: String,
}

impl FileId {
    /// Whether `self` and `other` are the two ends (or the same end) of one pipe.
    pub fn same_pipe(&self, other: &FileId) -> bool {
        let pipe = |f: &FileId| matches!(f.kind.as_str(), "FIFO" | "PIPE");
        if !pipe(self) || !pipe(other) {
            return false;
        }
        if let (Some(a), Some(b)) = (&self.inode, &other.inode) {
            return a == b;
        }
        let points_at = |from: &FileId, to: &FileId| {
            to.device
                .as_deref()
                .is_some_and(|d| from.name.strip_prefix("->") == Some(d))
        };
        points_at(self, other) || points_at(other, self)
    }
}

/// What lsof shows of one process: its current directory, standard input and output.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Opened {
    pub pid: u32,
    pub cwd: Option<PathBuf>,
    pub stdin: Option<FileId>,
    pub stdout: Option<FileId>,
}

/// `lstart` as ps prints it in the C locale (`Fri Nov 27 03:15:28 2026`, the day of the month
/// padded with a space), read as UTC: seconds since the epoch.
pub fn parse_lstart(words: &[&str]) -> Option<u64> {
    let [_, month, day, time, year] = words else {
        return None;
    };
    let text = format!("{month} {day} {time} {year}");
    let at = chrono::NaiveDateTime::parse_from_str(&text, "%b %d %H:%M:%S %Y").ok()?;
    u64::try_from(at.and_utc().timestamp()).ok()
}

/// The table from `ps -A -ww -o pid= -o ppid= -o lstart= -o command=`: pid, parent, the five
/// words of `lstart`, then the command to the end of the line.
pub fn parse_ps(text: &str) -> Table {
    let mut table = Table::new();
    for line in text.lines() {
        let mut rest = line.trim_start();
        let mut words = Vec::with_capacity(7);
        while words.len() < 7 {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            if end == 0 {
                break;
            }
            words.push(&rest[..end]);
            rest = rest[end..].trim_start();
        }
        let [pid, ppid, lstart @ ..] = words.as_slice() else {
            continue;
        };
        let (Ok(pid), Ok(ppid), Some(start)) = (pid.parse(), ppid.parse(), parse_lstart(lstart))
        else {
            continue;
        };
        table.insert(
            pid,
            Row {
                ppid,
                start,
                command: rest.trim_end().to_string(),
            },
        );
    }
    table
}

/// The processes from `lsof -F pftidn -d cwd,0,1`: a `p` line starts a process, an `f` line one
/// of its files, and the `t`, `i`, `d` and `n` lines that follow describe that file.
pub fn parse_lsof(text: &str) -> Vec<Opened> {
    let mut out: Vec<Opened> = Vec::new();
    let mut fd: Option<String> = None;
    let mut file = FileId::default();
    let flush = |out: &mut Vec<Opened>, fd: &mut Option<String>, file: &mut FileId| {
        let (Some(fd), Some(process)) = (fd.take(), out.last_mut()) else {
            *file = FileId::default();
            return;
        };
        let file = std::mem::take(file);
        match fd.as_str() {
            // A name lsof could not read comes with its reason in parentheses after it
            // (`/proc/1/cwd (readlink: Permission denied)`); only an absolute path is a place.
            "cwd" if file.name.starts_with('/') && !file.name.contains(" (readlink:") => {
                process.cwd = Some(PathBuf::from(file.name))
            }
            "0" => process.stdin = Some(file),
            "1" => process.stdout = Some(file),
            _ => {}
        }
    };
    for line in text.lines() {
        let Some(tag) = line.chars().next() else {
            continue;
        };
        let value = &line[tag.len_utf8()..];
        match tag {
            'p' => {
                flush(&mut out, &mut fd, &mut file);
                match value.parse() {
                    Ok(pid) => out.push(Opened {
                        pid,
                        ..Opened::default()
                    }),
                    // A process that cannot be named takes none of the lines after it.
                    Err(_) => fd = None,
                }
            }
            'f' => {
                flush(&mut out, &mut fd, &mut file);
                fd = Some(value.to_string());
            }
            't' => file.kind = value.to_string(),
            'i' => file.inode = Some(value.to_string()),
            'd' => file.device = Some(value.to_string()),
            'n' => file.name = value.to_string(),
            _ => {}
        }
    }
    flush(&mut out, &mut fd, &mut file);
    out
}

/// Runs a tool found through `PATH` in the C locale and UTC, and returns its standard output,
/// or why it gave none within [`deadline`].
fn run(tool: &str, args: &[&str]) -> Result<String, String> {
    use std::os::unix::process::CommandExt;
    let deadline = deadline();
    let mut child = Command::new(tool)
        .args(args)
        .env("LC_ALL", "C")
        .env("TZ", "UTC0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => format!("{tool} is not installed (not on PATH)"),
            _ => format!("{tool} cannot be run: {e}"),
        })?;
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let (send, receive) = std::sync::mpsc::channel();
    // A reader of its own, so a large output never fills the pipe while we wait.
    std::thread::spawn(move || {
        let mut text = Vec::new();
        let read = stdout.read_to_end(&mut text).map(|_| text);
        let _ = send.send(read);
    });
    let started = Instant::now();
    let waited = wait_timeout::ChildExt::wait_timeout(&mut child, deadline);
    let status = match waited {
        Ok(Some(status)) => status,
        Ok(None) | Err(_) => {
            kill_group(&child);
            // Reaped by a thread of its own: a tool stuck in the kernel (a stale network
            // mount) does not die at once, and this command must not wait for it.
            std::thread::spawn(move || {
                let _ = child.wait();
            });
            return Err(format!(
                "{tool} did not answer within {}",
                humantime::format_duration(deadline)
            ));
        }
    };
    // A helper the tool forked may hold its output open a moment longer; never past the deadline.
    let left = deadline.saturating_sub(started.elapsed()) + Duration::from_millis(100);
    let text = match receive.recv_timeout(left) {
        Ok(Ok(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
        Ok(Err(e)) => return Err(format!("{tool}'s output cannot be read: {e}")),
        Err(_) => {
            kill_group(&child);
            return Err(format!(
                "{tool} did not answer within {}",
                humantime::format_duration(deadline)
            ));
        }
    };
    // lsof exits 1 when some process could not be read (another user's): the rest still counts.
    if text.trim().is_empty() && !status.success() {
        return Err(match status.code() {
            Some(code) => format!("{tool} failed (exit {code})"),
            None => format!("{tool} was stopped by a signal"),
        });
    }
    Ok(text)
}

fn kill_group(child: &std::process::Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

/// A tool's reading, or why there is none.
pub type Reading<T> = Arc<Result<T, String>>;

/// A reading cached for [`MAX_AGE`] (a failure for the life of the process).
struct Cached<T> {
    slot: Mutex<Option<(Instant, Reading<T>)>>,
}

impl<T> Cached<T> {
    const fn new() -> Self {
        Cached {
            slot: Mutex::new(None),
        }
    }

    fn get(&self, fresh: bool, read: impl FnOnce() -> Result<T, String>) -> Reading<T> {
        let mut slot = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((at, value)) = slot.as_ref() {
            if value.is_err() || (!fresh && at.elapsed() < MAX_AGE) {
                return Arc::clone(value);
            }
        }
        let value = Arc::new(read());
        *slot = Some((Instant::now(), Arc::clone(&value)));
        value
    }
}

static PS: Cached<Table> = Cached::new();
static LSOF: Cached<Vec<Opened>> = Cached::new();

/// Drops every reading, failures too (tests that start processes between readings).
#[cfg(test)]
pub fn forget() {
    *PS.slot.lock().unwrap_or_else(|e| e.into_inner()) = None;
    *LSOF.slot.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

/// Every process `ps` shows (all users'); `fresh` reads again even within [`MAX_AGE`].
pub fn table(fresh: bool) -> Reading<Table> {
    PS.get(fresh, || {
        let text = run(
            "ps",
            &[
                "-A", "-ww", "-o", "pid=", "-o", "ppid=", "-o", "lstart=", "-o", "command=",
            ],
        )?;
        let table = parse_ps(&text);
        if table.is_empty() {
            return Err("ps listed no process it could read".to_string());
        }
        Ok(table)
    })
}

/// Every process's current directory, standard input and output, as lsof shows them (another
/// user's current directory is not shown to us: such processes have none here).
pub fn opened() -> Reading<Vec<Opened>> {
    LSOF.get(false, || {
        let text = run(
            "lsof",
            &[
                "-w", "-b", "-n", "-P", "-l", "-d", "cwd,0,1", "-F", "pftidn",
            ],
        )?;
        let opened = parse_lsof(&text);
        if opened.is_empty() {
            return Err("lsof listed no process it could read".to_string());
        }
        Ok(opened)
    })
}

/// The start time `ps` shows for `pid` (seconds since the epoch, UTC), `Ok(None)` when it lists
/// no such process. A pid missing from a cached reading is read again: it may have started since.
pub fn start_of(pid: u32) -> Result<Option<u64>, String> {
    for fresh in [false, true] {
        match table(fresh).as_ref() {
            Ok(t) => {
                if let Some(row) = t.get(&pid) {
                    return Ok(Some(row.start));
                }
            }
            Err(e) => return Err(e.clone()),
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ps_rows_in_both_userlands_forms() {
        let text = "    1     0 Thu Nov 26 22:01:03 2026 /sbin/launchd\n\
                    4242     1 Fri Nov  6 03:15:28 2026 /usr/bin/claude --autocompact 150000 -p hi\n\
                    77 1 Fri Nov 27 03:15:28 2026\n\
                    junk line\n\
                    9 1 Fri Nov 27 25:99:00 2026 bad time\n";
        let t = parse_ps(text);
        assert_eq!(t.len(), 3, "{t:?}");
        assert_eq!(t[&1].ppid, 0);
        assert_eq!(t[&1].start, 1_795_730_463);
        assert_eq!(t[&4242].start, 1_793_934_928);
        assert_eq!(
            t[&4242].command,
            "/usr/bin/claude --autocompact 150000 -p hi"
        );
        assert_eq!(t[&77].command, "");
    }

    #[test]
    fn lsof_fields_of_linux_and_macos() {
        let linux = "p10\nfcwd\ntDIR\ni2\nn/w/a\nf0\ntFIFO\ni3778\nnpipe\nf1\ntREG\ni9\nn/tmp/o\n\
                     p11\nfcwd\ntunknown\nn/proc/11/cwd (readlink: Permission denied)\n\
                     p12\nf0\ntFIFO\ni3778\nnpipe\n";
        let o = parse_lsof(linux);
        assert_eq!(o.len(), 3);
        assert_eq!(o[0].cwd.as_deref(), Some(std::path::Path::new("/w/a")));
        assert_eq!(o[1].cwd, None);
        assert!(o[0]
            .stdin
            .as_ref()
            .unwrap()
            .same_pipe(o[2].stdin.as_ref().unwrap()));
        assert!(!o[0]
            .stdout
            .as_ref()
            .unwrap()
            .same_pipe(o[2].stdin.as_ref().unwrap()));
        let mac = "p20\nfcwd\ntDIR\nd0x1000004\nn/Users/me/w\nf1\ntPIPE\nd0xaaa\nn->0xbbb\n\
                   p21\nf0\ntPIPE\nd0xbbb\nn->0xaaa\nf1\ntPIPE\nd0xccc\nn->0xddd\n";
        let o = parse_lsof(mac);
        let ours = o[0].stdout.as_ref().unwrap();
        assert!(ours.same_pipe(o[1].stdin.as_ref().unwrap()));
        assert!(!ours.same_pipe(o[1].stdout.as_ref().unwrap()));
    }

    #[test]
    fn the_real_tools_answer_when_installed() {
        if Command::new("ps").arg("-A").output().is_err() {
            eprintln!("SKIPPED: ps is not installed");
            return;
        }
        let me = std::process::id();
        let t = table(true);
        let row = t.as_ref().as_ref().unwrap().get(&me).cloned().unwrap();
        assert_eq!(row.ppid, std::os::unix::process::parent_id());
        let now = chrono::Utc::now().timestamp() as u64;
        assert!(row.start <= now && row.start + 3600 > now, "{row:?}");
        if Command::new("lsof").arg("-v").output().is_err() {
            eprintln!("SKIPPED: lsof is not installed");
            return;
        }
        let o = opened();
        let mine = o
            .as_ref()
            .as_ref()
            .unwrap()
            .iter()
            .find(|p| p.pid == me)
            .cloned();
        let cwd = std::env::current_dir().unwrap().canonicalize().unwrap();
        assert_eq!(mine.and_then(|p| p.cwd), Some(cwd));
    }
}
