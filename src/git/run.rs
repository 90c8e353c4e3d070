//! [`Run`], the one helper that spawns `git` (and, for setup commands, `sh`): its own process
//! group, a deadline, the whole group killed on timeout or interrupt, stderr kept for the error.
//!
//! Invariant: a git run that died only because another process's `git worktree add` had half
//! written its admin entry ([`half_written_entry`]) is run again, within the same deadline; no
//! caller sees that failure unless it outlasts [`RETRY_PAUSES`]. Git writes an entry's files one
//! by one, and every command that looks at all worktrees (`worktree add`, `branch -D`, `fetch`,
//! `rev-list --all`, `worktree remove`) dies on an empty `commondir` or a placeholder `HEAD`; no
//! lock of ours can order a user's own `git worktree add`, so the reader waits it out. A run that
//! changed something before git died says how to undo it ([`Run::before_retry`]), or is not
//! repeated ([`Run::once`]).

use anyhow::{anyhow, Result};
use std::ffi::OsString;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use wait_timeout::ChildExt;

/// What a finished `git` process said.
#[derive(Debug)]
pub struct Output {
    pub stdout: String,
    pub stderr: String,
    /// The exit code: 0, or the one [`Run::also_ok`] accepted.
    pub code: i32,
}

/// Why a `git` run did not succeed.
#[derive(Debug)]
pub enum RunError {
    Failed { status: Option<i32>, stderr: String },
    TimedOut(Duration),
    Interrupted,
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Failed { status, stderr } => {
                let last = stderr
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("")
                    .trim();
                match status {
                    Some(code) => write!(f, "git exited with {code}: {last}"),
                    None => write!(f, "git was killed by a signal: {last}"),
                }
            }
            RunError::TimedOut(d) => write!(f, "git did not finish within {}s", d.as_secs()),
            RunError::Interrupted => write!(f, "interrupted"),
        }
    }
}

impl std::error::Error for RunError {}

/// How to run one `git` process.
pub struct Run<'a> {
    pub program: OsString,
    pub cwd: &'a Path,
    pub args: Vec<OsString>,
    pub deadline: Duration,
    /// Set by a signal handler; the run kills its process group when it turns true.
    pub interrupt: Option<&'a AtomicBool>,
    /// Called with each line (or `\r`-terminated progress update) git writes to stderr.
    pub progress: Option<&'a dyn Fn(&str)>,
    /// Called with the child's pid (= its process group id) right after it starts.
    pub on_spawn: Option<&'a dyn Fn(u32)>,
    /// Called every few milliseconds while the child runs.
    pub tick: Option<&'a dyn Fn()>,
    pub env: Vec<(OsString, OsString)>,
    /// An exit code besides 0 that is an answer, not a failure (`git merge-tree`'s 1: conflicts).
    pub also_ok: Option<i32>,
    /// What the child reads on stdin (`None`: nothing, stdin is closed).
    pub input: Option<Vec<u8>>,
    /// Whether a run that died on a half-written worktree entry is run again (module doc).
    pub repeat: bool,
    /// Called before a run is repeated: undoes what the failed attempt left.
    pub before_retry: Option<&'a dyn Fn()>,
}

/// The pauses before each new attempt of a run that died on a half-written worktree entry: git
/// writes an entry's files within milliseconds, so 3 s in all outlasts any live writer on a
/// loaded machine and bounds what a truly damaged entry costs each command.
pub const RETRY_PAUSES: [u64; 9] = [10, 20, 40, 80, 160, 320, 640, 800, 1000];

/// Whether git's `stderr` says it died reading another worktree's admin entry that was not
/// whole yet: an empty `commondir` ("failed to read .git/worktrees/x/commondir: Success"),
/// `gitdir`, or the placeholder `HEAD` git writes first ("bad object worktrees/x/HEAD").
pub fn half_written_entry(stderr: &str) -> bool {
    stderr.lines().any(|line| {
        let Some(rest) = line.strip_prefix("fatal: ") else {
            return false;
        };
        let Some(at) = rest.rfind("worktrees/") else {
            return false;
        };
        let Some((id, file)) = rest[at + "worktrees/".len()..].split_once('/') else {
            return false;
        };
        let file = file.split(':').next().unwrap_or("").trim_end();
        !id.is_empty() && ["commondir", "gitdir", "HEAD"].contains(&file)
    })
}

impl<'a> Run<'a> {
    pub fn new<I, S>(cwd: &'a Path, args: I) -> Run<'a>
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        Run {
            program: "git".into(),
            cwd,
            args: args.into_iter().map(Into::into).collect(),
            deadline: Duration::from_secs(120),
            interrupt: None,
            progress: None,
            on_spawn: None,
            tick: None,
            env: Vec::new(),
            also_ok: None,
            input: None,
            repeat: true,
            before_retry: None,
        }
    }

    /// Never runs again: for a command that may have changed something before git died and
    /// has no [`Run::before_retry`].
    pub fn once(mut self) -> Self {
        self.repeat = false;
        self
    }

    /// Calls `f` before running again after a death on a half-written worktree entry.
    pub fn before_retry(mut self, f: &'a dyn Fn()) -> Self {
        self.before_retry = Some(f);
        self
    }

    /// Gives the child `bytes` on its stdin (written from a thread of its own, so a child that
    /// writes before it reads cannot deadlock us).
    pub fn stdin(mut self, bytes: Vec<u8>) -> Self {
        self.input = Some(bytes);
        self
    }

    /// Runs `program` instead of git (the `[create] run` setup commands, through `sh -c`).
    pub fn program(mut self, program: impl Into<OsString>) -> Self {
        self.program = program.into();
        self
    }

    pub fn deadline(mut self, d: Duration) -> Self {
        self.deadline = d;
        self
    }

    pub fn interrupt(mut self, flag: &'a AtomicBool) -> Self {
        self.interrupt = Some(flag);
        self
    }

    pub fn progress(mut self, f: &'a dyn Fn(&str)) -> Self {
        self.progress = Some(f);
        self
    }

    pub fn on_spawn(mut self, f: &'a dyn Fn(u32)) -> Self {
        self.on_spawn = Some(f);
        self
    }

    pub fn tick(mut self, f: &'a dyn Fn()) -> Self {
        self.tick = Some(f);
        self
    }

    /// Treats exit code `code` as an answer too: the run returns its output with that code.
    pub fn also_ok(mut self, code: i32) -> Self {
        self.also_ok = Some(code);
        self
    }

    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Runs git to completion, within the deadline; again after a death on a half-written
    /// worktree entry (module doc).
    pub fn run(self) -> Result<Output, RunError> {
        let started = Instant::now();
        let mut pauses = RETRY_PAUSES.iter();
        loop {
            let left = self.deadline.saturating_sub(started.elapsed());
            let result = self.attempt(left);
            let pause = match &result {
                Err(RunError::Failed {
                    status: Some(128),
                    stderr,
                }) if self.repeat && half_written_entry(stderr) => pauses.next(),
                _ => None,
            };
            let Some(&pause) = pause else {
                return result.map_err(|e| match e {
                    RunError::TimedOut(_) => RunError::TimedOut(self.deadline),
                    other => other,
                });
            };
            let pause = Duration::from_millis(pause);
            if started.elapsed() + pause >= self.deadline
                || self.interrupt.is_some_and(|f| f.load(Ordering::SeqCst))
            {
                return result;
            }
            std::thread::sleep(pause);
            if let Some(undo) = self.before_retry {
                undo();
            }
        }
    }

    /// One run of the child, within `deadline`.
    fn attempt(&self, deadline: Duration) -> Result<Output, RunError> {
        use std::os::unix::process::CommandExt;
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args)
            .current_dir(self.cwd)
            .stdin(if self.input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Our own children must see this repository as their cwd does, not whatever a hook
            // environment (GIT_DIR, GIT_INDEX_FILE) pointed us at.
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE")
            .env_remove("GIT_COMMON_DIR")
            .env_remove("GIT_PREFIX")
            .env("GIT_TERMINAL_PROMPT", "0")
            // Its own group, so a timeout or Ctrl-C can kill git *and* every hook it started.
            .process_group(0);
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().map_err(|e| RunError::Failed {
            status: None,
            stderr: format!("cannot run {}: {e}", self.program.to_string_lossy()),
        })?;
        let pgid = child.id();
        if let Some(f) = self.on_spawn {
            f(pgid);
        }
        if let (Some(bytes), Some(mut pipe)) = (self.input.clone(), child.stdin.take()) {
            std::thread::spawn(move || {
                use std::io::Write;
                let _ = pipe.write_all(&bytes);
            });
        }
        let mut out = child.stdout.take().expect("piped");
        let mut err = child.stderr.take().expect("piped");
        let out_thread = collect(move || {
            let mut buf = Vec::new();
            let _ = out.read_to_end(&mut buf);
            buf
        });
        let (tx, rx) = mpsc::channel::<String>();
        let err_thread = collect(move || {
            let mut all = Vec::new();
            let mut chunk = [0u8; 4096];
            let mut line = Vec::new();
            while let Ok(n) = err.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                for &b in &chunk[..n] {
                    all.push(b);
                    if b == b'\n' || b == b'\r' {
                        let _ = tx.send(String::from_utf8_lossy(&line).into_owned());
                        line.clear();
                    } else {
                        line.push(b);
                    }
                }
            }
            all
        });
        let started = Instant::now();
        let outcome = loop {
            while let Ok(line) = rx.try_recv() {
                if let Some(p) = self.progress {
                    p(&line);
                }
            }
            if let Some(tick) = self.tick {
                tick();
            }
            if self.interrupt.is_some_and(|f| f.load(Ordering::SeqCst)) {
                break Err(RunError::Interrupted);
            }
            let left = deadline.saturating_sub(started.elapsed());
            if left.is_zero() {
                break Err(RunError::TimedOut(deadline));
            }
            let slice = if self.tick.is_some() { 5 } else { 50 };
            match child.wait_timeout(left.min(Duration::from_millis(slice))) {
                Ok(Some(status)) => break Ok(status),
                Ok(None) => continue,
                Err(e) => {
                    break Err(RunError::Failed {
                        status: None,
                        stderr: e.to_string(),
                    })
                }
            }
        };
        if outcome.is_err() {
            kill_group(pgid);
            let _ = child.wait();
        }
        // A hook that git started may outlive git and keep our pipes open; after a kill the
        // group is gone, after a normal exit we still must not hang on a straggler.
        let until = Instant::now() + Duration::from_secs(2);
        let stdout = received_by(&out_thread, until);
        let stderr = received_by(&err_thread, until);
        let status = outcome?;
        let output = Output {
            stdout: String::from_utf8_lossy(&stdout).into_owned(),
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
            code: status.code().unwrap_or(-1),
        };
        if status.success() || (self.also_ok.is_some() && status.code() == self.also_ok) {
            Ok(output)
        } else {
            Err(RunError::Failed {
                status: status.code(),
                stderr: output.stderr,
            })
        }
    }
}

/// Runs `read` on a thread of its own; its result arrives on the returned channel. A channel
/// rather than a join: waiting on it ends the moment the result is sent (a polled
/// `is_finished` cost up to one polling interval after every git process, on `create`'s
/// measured path), and a straggler that never finishes is simply not waited for.
fn collect(read: impl FnOnce() -> Vec<u8> + Send + 'static) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::sync_channel(1);
    std::thread::spawn(move || {
        let _ = tx.send(read());
    });
    rx
}

/// What `rx` delivers before `until`; nothing if it does not.
fn received_by(rx: &mpsc::Receiver<Vec<u8>>, until: Instant) -> Vec<u8> {
    rx.recv_timeout(until.saturating_duration_since(Instant::now()))
        .unwrap_or_default()
}

/// SIGKILL to a whole process group (git and every hook it started).
pub fn kill_group(pgid: u32) {
    use nix::sys::signal::{killpg, Signal};
    use nix::unistd::Pid;
    if let Ok(raw) = i32::try_from(pgid) {
        let _ = killpg(Pid::from_raw(raw), Signal::SIGKILL);
    }
}

/// Runs git and returns stdout; failures become errors carrying git's stderr.
pub fn git_ok<I, S>(cwd: &Path, args: I) -> Result<String>
where
    I: IntoIterator<Item = S>,
    S: Into<OsString>,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let shown = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    Run::new(cwd, args)
        .run()
        .map(|o| o.stdout)
        .map_err(|e| anyhow!("git {shown}: {e}"))
}

/// The common directory that `git` itself finds from the current directory and environment
/// (`GIT_DIR` and friends kept, as a hook's git set them): the second opinion the guard asks for
/// when libgit2 finds no repository, so that a repository git can use and libgit2 cannot (a
/// linked worktree whose HEAD is a symbolic link) never turns the guard into a silent pass.
/// `rev-parse` runs no program named by the configuration.
pub fn cli_common_dir() -> Option<std::path::PathBuf> {
    let out = Command::new("git")
        .args(["rev-parse", "--path-format=absolute", "--git-common-dir"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    (out.status.success() && !text.is_empty()).then(|| std::path::PathBuf::from(text))
}

#[cfg(test)]
mod tests {
    use super::half_written_entry;

    #[test]
    fn a_half_written_entry_is_told_from_other_deaths() {
        for said in [
            "fatal: failed to read .git/worktrees/one1/commondir: Success\n",
            "Preparing worktree (new branch 'x')\nfatal: failed to read /r/.git/worktrees/b/gitdir: Success",
            "fatal: bad object worktrees/ghost/HEAD\n",
        ] {
            assert!(half_written_entry(said), "{said}");
        }
        for said in [
            "fatal: a branch named 'session/a' already exists\n",
            "fatal: '/tmp/worktrees/x' already exists\n",
            "fatal: bad object worktrees//HEAD\n",
            "error: failed to read .git/worktrees/one1/commondir: Success\n",
            "fatal: invalid reference: worktrees/x/HEADS\n",
        ] {
            assert!(!half_written_entry(said), "{said}");
        }
    }
}
