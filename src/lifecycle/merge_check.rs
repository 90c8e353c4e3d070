//! The `[merge] check`: the configured commands run on the integrated result, before the base
//! moves, in a scratch worktree of their own.
//!
//! The scratch worktree is a detached `git worktree add` of the computed commit under the store
//! (`merge-check-worktrees/<label>`), made with hooks off (no `post-checkout` of the repository
//! runs, and nothing registers it as a session). Each command runs there through `sh -c`, its
//! standard output and error together into one log (`merge-check-logs/<label>.log`, kept until the
//! next check of that label), all of them within the check's own deadline.
//!
//! Invariants a reader must not break:
//! - Nothing of the user's is touched: no ref moves, no file of the base's or the session's
//!   worktree is read or written; the check sees the commit the base would move to, whole.
//! - The scratch worktree goes in every outcome: passed, failed, timed out, interrupted, and
//!   killed. Its write-ahead record (`merge-checks/<label>.toml`: the owner, the path, and the
//!   command's process once it runs) is written before `git worktree add` and removed only after
//!   the worktree is gone; a record whose owner is dead is cleared by the next command
//!   ([`recover`]): the command's process group is killed while it still runs, then the
//!   worktree, its directory and git's admin entry for it are removed.
//! - Only a path under the store's own `merge-check-worktrees/` is ever deleted, whatever a
//!   record says.

use super::merge_regenerate::Regeneration;
use crate::base::announce::{self, Announcement};
use crate::base::failpoint::reach;
use crate::base::process::{Liveness, ProcessId};
use crate::git::{Oid, Repo, Run, RunError};
use crate::session::Label;
use crate::store::Store;
use anyhow::{anyhow, Context, Result};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// How many lines of a failing command's output the refusal shows.
pub const TAIL_LINES: usize = 20;

/// Why a check command did not pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// It exited with this code.
    Exit(i32),
    /// A signal ended it.
    Killed,
    /// The check's deadline passed while it ran; it was stopped.
    TimedOut(Duration),
    /// It could not be started (no `sh`, or the scratch worktree could not be made).
    NotStarted(String),
}

/// A check that did not pass: which command, why, the end of its output and where all of it is.
#[derive(Debug, Clone)]
pub struct Failure {
    pub command: String,
    pub why: Why,
    pub tail: Vec<String>,
    pub log: PathBuf,
}

/// What running the check came to.
#[derive(Debug)]
pub enum Outcome {
    /// Every command passed on this commit: the one asked for, or the commit that holds the
    /// regenerated files on top of it.
    Passed(Oid),
    Failed(Failure),
    /// Ctrl-C (or SIGTERM, SIGHUP) arrived; the scratch worktree is gone, nothing changed.
    Interrupted,
}

/// The write-ahead record of one check.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Scratch {
    label: String,
    owner: ProcessId,
    path: PathBuf,
    /// The running command (its own process group), so a killed owner's command can be stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    child: Option<ProcessId>,
}

const RECORDS: &str = "merge-checks";
const WORKTREES: &str = "merge-check-worktrees";
const LOGS: &str = "merge-check-logs";

fn record_path(label: &Label) -> String {
    format!("{RECORDS}/{}.toml", label.file_name())
}

/// The store file of the approved `[merge] check` lists.
const APPROVALS: &str = "approved-check.toml";

/// The store file of the approved `[merge] regenerate` tables.
const REGENERATE_APPROVALS: &str = "approved-regenerate.toml";

/// What was answered at the terminal during one command, list by list: a batch asks for each
/// list at most once, whatever it is answered, however many sessions it merges.
#[derive(Debug, Default)]
pub struct Answers(std::cell::RefCell<Vec<(&'static str, Vec<String>, bool)>>);

impl Answers {
    /// The answer for `list` in `file`: the one given before in this command, else `ask()`'s.
    fn once(&self, file: &'static str, list: &[String], ask: impl FnOnce() -> bool) -> bool {
        let known = self
            .0
            .borrow()
            .iter()
            .find(|(f, l, _)| *f == file && l.as_slice() == list)
            .map(|(_, _, yes)| *yes);
        known.unwrap_or_else(|| {
            let yes = ask();
            self.0.borrow_mut().push((file, list.to_vec(), yes));
            yes
        })
    }
}

fn approved_in(
    store: &Store,
    file: &'static str,
    list: &[String],
    approve_flag: bool,
    answers: Option<&Answers>,
    question: &str,
) -> bool {
    let ask = || {
        super::worktree_setup::approved_list(
            store,
            file,
            list,
            approve_flag,
            Announcement::CheckApprovalAsked,
            question,
        )
    };
    match answers {
        Some(answers) => answers.once(file, list, ask),
        None => ask(),
    }
}

/// Whether the check list may run: the user's own, or the repository's once approved (see
/// `[create] run`: `approve_flag`, a yes at a terminal, or approved before; within one command
/// sharing `answers`, asked once).
pub fn approved(
    store: &Store,
    check: &crate::config::MergeCheck,
    approve_flag: bool,
    answers: Option<&Answers>,
) -> bool {
    !check.from_repo
        || approved_in(
            store,
            APPROVALS,
            &check.commands,
            approve_flag,
            answers,
            "Run these checks now and on future merges?",
        )
}

/// Whether the `[merge] regenerate` commands may run: as [`approved`], for the table as
/// [`crate::config::MergeFiles::regenerate_list`] shows it.
pub fn regenerate_approved(
    store: &Store,
    files: &crate::config::MergeFiles,
    approve_flag: bool,
    answers: Option<&Answers>,
) -> bool {
    !files.regenerate_from_repo
        || approved_in(
            store,
            REGENERATE_APPROVALS,
            &files.regenerate_list(),
            approve_flag,
            answers,
            "Run these commands to rebuild generated files now and on future merges?",
        )
}

/// Where the full output of `label`'s last check is.
pub fn log_path(store: &Store, label: &Label) -> PathBuf {
    store
        .root()
        .join(LOGS)
        .join(format!("{}.log", label.file_name()))
}

/// Runs `commands` on `commit` in a scratch worktree (see the module doc), within `deadline`;
/// first, with `regenerate`, rebuilds those generated files there and commits them on `commit`
/// ([`super::merge_regenerate`]), so the commands run on that commit. The caller holds the
/// session's op lock, so no other check of `label` runs.
#[allow(clippy::too_many_arguments)]
pub fn run(
    repo: &Repo,
    store: &Store,
    label: &Label,
    commit: Oid,
    regenerate: Option<&Regeneration>,
    commands: &[String],
    deadline: Duration,
    interrupted: &AtomicBool,
) -> Result<Outcome> {
    // A leftover of this label is a dead owner's (we hold the op lock): cleared first.
    if let Some(old) = store.read::<Scratch>(&record_path(label))? {
        clear(repo, store, label, &old)?;
    }
    let path = store.root().join(WORKTREES).join(label.file_name());
    let record = Scratch {
        label: label.to_string(),
        owner: ProcessId::current(),
        path: path.clone(),
        child: None,
    };
    store.update::<Scratch, _>(&record_path(label), |_| Ok(Some(record.clone())))?;
    reach("merge-check", "journal-written");
    let outcome = checked(
        repo,
        store,
        label,
        &record,
        commit,
        regenerate,
        commands,
        deadline,
        interrupted,
    );
    let cleared = clear(repo, store, label, &record);
    let outcome = outcome?;
    cleared?;
    Ok(outcome)
}

#[allow(clippy::too_many_arguments)]
fn checked(
    repo: &Repo,
    store: &Store,
    label: &Label,
    record: &Scratch,
    commit: Oid,
    regenerate: Option<&Regeneration>,
    commands: &[String],
    deadline: Duration,
    interrupted: &AtomicBool,
) -> Result<Outcome> {
    let log = log_path(store, label);
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::File::create(&log).with_context(|| format!("creating {}", log.display()))?;
    // Appending, as the commands do: each header goes after the output before it.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&log)
        .with_context(|| format!("opening {}", log.display()))?;
    let started = Instant::now();
    let tip = commit;
    let commit = commit.to_string();
    let path = record.path.as_os_str().to_owned();
    let added = Run::new(
        repo.porcelain_dir(),
        [
            "-c".into(),
            "core.hooksPath=/dev/null".into(),
            "worktree".into(),
            "add".into(),
            "--detach".into(),
            "--quiet".into(),
            path,
            commit.clone().into(),
        ],
    )
    .deadline(deadline)
    .interrupt(interrupted)
    .run();
    match added {
        Ok(_) => {}
        Err(RunError::Interrupted) => return Ok(Outcome::Interrupted),
        Err(e) => {
            return Ok(Outcome::Failed(Failure {
                command: format!(
                    "git worktree add --detach {} {commit}",
                    record.path.display()
                ),
                why: Why::NotStarted(e.to_string()),
                tail: Vec::new(),
                log,
            }))
        }
    }
    reach("merge-check", "worktree-added");
    let shell = Shell {
        store,
        label,
        record,
        log: &log,
        started,
        deadline,
        interrupted,
    };
    let mut tip = tip;
    if let Some(regen) = regenerate {
        for command in &regen.commands {
            if let Some(outcome) = shell.run(&mut file, command)? {
                return Ok(outcome);
            }
        }
        let left = deadline.saturating_sub(started.elapsed());
        tip = super::merge_regenerate::commit(&record.path, regen, tip, left)?;
    }
    for command in commands {
        if let Some(outcome) = shell.run(&mut file, command)? {
            return Ok(outcome);
        }
    }
    Ok(Outcome::Passed(tip))
}

/// How the commands of one check run: in its scratch worktree, into its log, within its
/// deadline.
struct Shell<'a> {
    store: &'a Store,
    label: &'a Label,
    record: &'a Scratch,
    log: &'a Path,
    started: Instant,
    deadline: Duration,
    interrupted: &'a AtomicBool,
}

impl Shell<'_> {
    /// Runs `command` through `sh -c`; `None` when it passed, else the check's outcome.
    fn run(&self, file: &mut std::fs::File, command: &str) -> Result<Option<Outcome>> {
        let (store, label, log) = (self.store, self.label, self.log);
        announce::emit(Announcement::Running {
            command: command.to_string(),
        });
        let _ = writeln!(file, "$ {command}");
        let _ = file.flush();
        let from = file.metadata().map(|m| m.len()).unwrap_or(0);
        let on_spawn = |pid: u32| {
            let child = ProcessId::of(pid);
            let _ = store.update::<Scratch, _>(&record_path(label), |r| {
                Ok(r.map(|mut r| {
                    r.child = Some(child.clone());
                    r
                }))
            });
            reach("merge-check", "running");
        };
        let left = self.deadline.saturating_sub(self.started.elapsed());
        // Both streams straight into the log, in the order they came, however long.
        let script = format!("exec >>\"$GIT_SESSION_CHECK_LOG\" 2>&1\n{command}");
        let ran = Run::new(&self.record.path, ["-c", &script])
            .program("sh")
            .env("GIT_SESSION_CHECK_LOG", log)
            .env("GIT_SESSION_MERGE_CHECK", label.to_string())
            .deadline(left)
            .interrupt(self.interrupted)
            .on_spawn(&on_spawn)
            .run();
        let why = match ran {
            Ok(_) => return Ok(None),
            Err(RunError::Failed { status, stderr }) => match status {
                Some(code) => Why::Exit(code),
                None if stderr.starts_with("cannot run") => Why::NotStarted(stderr),
                None => Why::Killed,
            },
            Err(RunError::TimedOut(_)) => Why::TimedOut(self.deadline),
            Err(RunError::Interrupted) => return Ok(Some(Outcome::Interrupted)),
        };
        Ok(Some(Outcome::Failed(Failure {
            command: command.to_string(),
            why,
            tail: tail(&read_from(log, from)),
            log: log.to_path_buf(),
        })))
    }
}

/// What `log` holds from byte `from` on (the output of the last command), lossily as text.
fn read_from(log: &Path, from: u64) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let mut bytes = Vec::new();
    if let Ok(mut f) = std::fs::File::open(log) {
        // Only the end is shown: a command that printed gigabytes is not read whole.
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        let _ = f.seek(SeekFrom::Start(from.max(len.saturating_sub(64 * 1024))));
        let _ = f.read_to_end(&mut bytes);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The last [`TAIL_LINES`] non-empty lines of `output`.
fn tail(output: &str) -> Vec<String> {
    let lines: Vec<&str> = output
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .collect();
    let from = lines.len().saturating_sub(TAIL_LINES);
    lines[from..].iter().map(|l| l.to_string()).collect()
}

/// Removes the scratch worktree `record` names (its command's process group first, while it
/// runs), then the record.
fn clear(repo: &Repo, store: &Store, label: &Label, record: &Scratch) -> Result<()> {
    if let Some(child) = &record.child {
        if child.liveness() == Liveness::Alive {
            crate::git::kill_group(child.pid);
        }
    }
    let ours = store.root().join(WORKTREES);
    let path = &record.path;
    if path.starts_with(&ours) && !path.components().any(|c| c.as_os_str() == "..") {
        let admin = admin_entry_of(&repo.common_dir, path);
        if path.exists() {
            let _ = Run::new(
                repo.porcelain_dir(),
                [
                    "worktree".as_ref(),
                    "remove".as_ref(),
                    "--force".as_ref(),
                    "--force".as_ref(),
                    path.as_os_str(),
                ],
            )
            .deadline(super::PORCELAIN_DEADLINE)
            .run();
        }
        if std::fs::symlink_metadata(path).is_ok() {
            std::fs::remove_dir_all(path)
                .with_context(|| format!("removing the scratch worktree {}", path.display()))?;
        }
        if let Some(admin) = admin.filter(|a| a.exists()) {
            std::fs::remove_dir_all(&admin)
                .with_context(|| format!("removing git's entry {}", admin.display()))?;
        }
    }
    store.remove(&record_path(label))
}

/// git's admin entry (`<common>/worktrees/<name>`) whose `gitdir` names `path/.git`.
fn admin_entry_of(common_dir: &Path, path: &Path) -> Option<PathBuf> {
    let want = path.join(".git");
    for entry in std::fs::read_dir(common_dir.join("worktrees"))
        .ok()?
        .flatten()
    {
        let Ok(text) = std::fs::read_to_string(entry.path().join("gitdir")) else {
            continue;
        };
        if Path::new(text.trim_end()) == want {
            return Some(entry.path());
        }
    }
    None
}

/// Clears every check whose owner died (see the module doc), saying so in one line each.
pub fn recover(repo: &Repo, store: &Store) -> Result<()> {
    for name in store.list(RECORDS)? {
        let Ok(label) = Label::from_file_name(&name) else {
            continue;
        };
        let Some(record) = store.read::<Scratch>(&record_path(&label))? else {
            continue;
        };
        if record.owner.liveness() != Liveness::Dead {
            continue;
        }
        let Some(_op) = super::lock_session_op(store, &label, Duration::from_secs(2))? else {
            continue;
        };
        let Some(record) = store.read::<Scratch>(&record_path(&label))? else {
            continue;
        };
        if record.owner.liveness() != Liveness::Dead {
            continue;
        }
        clear(repo, store, &label, &record)
            .map_err(|e| anyhow!("clearing the merge check of session {label}: {e:#}"))?;
        store.audit(
            "merge-check-cleared",
            serde_json::json!({"label": label.to_string(), "path": record.path}),
        );
        announce::emit(Announcement::MergeCheckCleared {
            label: label.to_string(),
            path: record.path,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_is_the_last_lines_that_say_something() {
        let text: String = (1..=30).map(|i| format!("line {i}\n\n")).collect();
        let t = tail(&text);
        assert_eq!(t.len(), TAIL_LINES);
        assert_eq!(t.first().map(String::as_str), Some("line 11"));
        assert_eq!(t.last().map(String::as_str), Some("line 30"));
        assert!(tail("").is_empty());
    }
}
