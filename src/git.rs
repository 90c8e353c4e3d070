//! Every git call goes through this module.
//!
//! Why one wrapper: reads go through libgit2 (git2), which never runs a program named by the
//! repository's configuration (`core.fsmonitor`, `core.pager`, `diff.external`, filter drivers),
//! so `list`, `info`, the guard and the context hook are safe in a hostile repository. Errors get
//! context here, and "not found" becomes `Option`, so callers never match on libgit2 error codes.
//!
//! Porcelain that must run hooks and honour the user's configuration (`worktree add/remove`, the
//! archive commit) shells out through [`run`], the one helper that spawns `git`: it puts the child
//! in its own process group, enforces a deadline, kills the whole group on timeout or interrupt,
//! and puts git's stderr into the error.
//!
//! Invariant: arguments that come from users (labels, revisions, paths) reach `git` only after
//! `--end-of-options` or `--`, so they can never be read as options.

use crate::error::UserError;
use anyhow::{anyhow, Context, Result};
use git2::{ErrorCode, Oid, Repository};
use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use wait_timeout::ChildExt;

/// An opened repository plus the paths every command needs.
pub struct Repo {
    pub git: Repository,
    /// `<common dir>`, absolute and canonical: the store lives below it.
    pub common_dir: PathBuf,
    /// The main worktree's root; `None` for a bare repository.
    pub main_worktree: Option<PathBuf>,
    /// The root of the worktree the command runs in, if any.
    pub current_worktree: Option<PathBuf>,
}

/// Process-wide libgit2 settings, applied before the first repository is opened.
///
/// Strict hash verification is off: libgit2 otherwise re-hashes every object it reads (SHA-1
/// with collision detection) to check it against its name, a check git itself makes only in
/// `fsck` and transfers. The guard reads HEAD's trees on every commit, and there the re-hashing
/// was the largest single cost after reading the index. Reads here never create objects, so
/// nothing unchecked is ever written.
pub fn configure_libgit2() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| git2::opts::strict_hash_verification(false));
}

/// git's colour setting for this tool: `color.session`, else `color.ui`, from the configuration
/// of the repository the environment points at (or the user's and system's outside one). Read
/// through libgit2 like every other read here, so no configured program can run.
pub fn colour_setting() -> Option<String> {
    configure_libgit2();
    let mut config = match git2::Repository::open_from_env() {
        Ok(repo) => repo.config().ok()?,
        Err(_) => git2::Config::open_default().ok()?,
    };
    let config = config.snapshot().ok()?;
    ["color.session", "color.ui"]
        .iter()
        .find_map(|key| config.get_string(key).ok())
}

/// git's own answer to a repository owned by someone else: the `safe.directory` hint. The tool
/// never sets it: trusting a repository is the user's decision.
fn not_owned(e: &git2::Error) -> UserError {
    let path = e
        .message()
        .split('\'')
        .nth(1)
        .unwrap_or("this repository")
        .to_string();
    UserError::refused(format!("the repository at {path} is owned by another user"))
        .hinted(format!(
            "if you trust it, mark it safe as git says: git config --global --add safe.directory {path}"
        ))
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

impl Repo {
    /// Opens the repository the environment points at (`GIT_DIR`, as in a hook) or the one
    /// containing the current directory. `None` outside any repository.
    pub fn discover() -> Result<Option<Repo>> {
        configure_libgit2();
        let git = match Repository::open_from_env() {
            Ok(r) => r,
            Err(e) if e.code() == ErrorCode::NotFound => return Ok(None),
            Err(e) if e.code() == ErrorCode::Owner => return Err(not_owned(&e).into()),
            Err(e) => return Err(e).context("opening the repository"),
        };
        Ok(Some(Repo::from_git(git)?))
    }

    pub fn open(path: &Path) -> Result<Repo> {
        configure_libgit2();
        let git = match Repository::open(path) {
            Ok(g) => g,
            Err(e) if e.code() == ErrorCode::Owner => return Err(not_owned(&e).into()),
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("opening the repository at {}", path.display()))
            }
        };
        Repo::from_git(git)
    }

    fn from_git(git: Repository) -> Result<Repo> {
        let common_dir = canonical(git.commondir());
        let current_worktree = git.workdir().map(canonical);
        let main_worktree = if git.is_worktree() {
            Repository::open(&common_dir)
                .ok()
                .and_then(|main| main.workdir().map(canonical))
        } else {
            current_worktree.clone()
        };
        Ok(Repo {
            git,
            common_dir,
            main_worktree,
            current_worktree,
        })
    }

    /// Like [`Repo::discover`], but refuses outside a repository.
    pub fn require() -> Result<Repo> {
        Repo::discover()?.ok_or_else(|| {
            UserError::refused("not inside a git repository")
                .hinted("run git session from a repository or one of its worktrees")
                .into()
        })
    }

    pub fn store(&self) -> crate::store::Store {
        crate::store::Store::for_common_dir(&self.common_dir)
    }

    /// Where repository-wide porcelain runs: a directory in which `git` finds this repository by
    /// itself. The main worktree, when its `.git` is there; otherwise (a bare repository, or
    /// `core.worktree` naming a directory with no `.git` in it) the common directory, where git
    /// finds itself as it does in a bare repository.
    pub fn porcelain_dir(&self) -> &Path {
        match &self.main_worktree {
            Some(main) if main.join(".git").exists() => main,
            _ => &self.common_dir,
        }
    }

    /// The main worktree's root, or the common dir when bare: where relative configured paths
    /// (the worktrees directory) are anchored.
    pub fn anchor_dir(&self) -> &Path {
        self.main_worktree.as_deref().unwrap_or(&self.common_dir)
    }

    /// The directory holding `.git-session.toml`: the main worktree (the team's shared file).
    pub fn config_root(&self) -> Option<&Path> {
        self.main_worktree.as_deref()
    }

    /// `<rev>^{commit}`, or `None` when it names nothing.
    pub fn resolve_commit(&self, rev: &str) -> Result<Option<Oid>> {
        match self.git.revparse_single(rev) {
            Ok(obj) => match obj.peel_to_commit() {
                Ok(c) => Ok(Some(c.id())),
                Err(_) => Ok(None),
            },
            Err(e) if matches!(e.code(), ErrorCode::NotFound | ErrorCode::InvalidSpec) => Ok(None),
            Err(e) if e.class() == git2::ErrorClass::Reference => Ok(None),
            Err(e) => Err(e).with_context(|| format!("resolving {rev}")),
        }
    }

    /// Tip of `refs/heads/<name>`, or `None`.
    pub fn branch_tip(&self, name: &str) -> Result<Option<Oid>> {
        self.ref_target(&format!("refs/heads/{name}"))
    }

    pub fn ref_target(&self, full: &str) -> Result<Option<Oid>> {
        match self.git.find_reference(full) {
            Ok(r) => Ok(r.resolve().ok().and_then(|r| r.target())),
            Err(e) if e.code() == ErrorCode::NotFound || e.code() == ErrorCode::InvalidSpec => {
                Ok(None)
            }
            Err(e) => Err(e).with_context(|| format!("reading {full}")),
        }
    }

    /// The repository's main branch: the local branch `origin/HEAD` names, else `main`, else
    /// `master`, else whatever the main worktree has checked out.
    pub fn default_base(&self) -> Result<String> {
        if let Ok(r) = self.git.find_reference("refs/remotes/origin/HEAD") {
            if let Some(target) = r.symbolic_target() {
                if let Some(short) = target.strip_prefix("refs/remotes/origin/") {
                    if self.branch_tip(short)?.is_some() {
                        return Ok(short.to_string());
                    }
                    return Ok(format!("origin/{short}"));
                }
            }
        }
        for name in ["main", "master"] {
            if self.branch_tip(name)?.is_some() {
                return Ok(name.to_string());
            }
        }
        let main = match &self.main_worktree {
            Some(dir) => Repository::open(dir).ok(),
            None => Repository::open(&self.common_dir).ok(),
        };
        if let Some(main) = main {
            if let Ok(head) = main.find_reference("HEAD") {
                if let Some(t) = head.symbolic_target() {
                    if let Some(short) = t.strip_prefix("refs/heads/") {
                        return Ok(short.to_string());
                    }
                }
            }
        }
        Err(
            UserError::refused("cannot tell which branch is the main branch")
                .hinted("name it with --base REV or set `base` in .git-session.toml")
                .into(),
        )
    }

    /// Commits on `tip` that are not on `base`, newest first (at most `limit`).
    pub fn unmerged_commits(
        &self,
        tip: Oid,
        base: Oid,
        limit: usize,
    ) -> Result<Vec<(Oid, String)>> {
        let mut walk = self.git.revwalk()?;
        walk.push(tip)?;
        walk.hide(base)?;
        summarize(&self.git, walk, limit)
    }

    pub fn ahead_behind(&self, tip: Oid, base: Oid) -> Result<(usize, usize)> {
        self.git
            .graph_ahead_behind(tip, base)
            .context("counting commits ahead of and behind base")
    }

    /// Whether `tip`'s work is already in `base`, checked against base explicitly.
    pub fn merge_state(&self, tip: Oid, base: Oid) -> Result<Merged> {
        if tip == base || self.git.graph_descendant_of(base, tip)? {
            return Ok(Merged::Ancestor);
        }
        if self.patches_in_base(tip, base)? || self.merge_changes_nothing(tip, base)? {
            return Ok(Merged::Integrated);
        }
        Ok(Merged::No)
    }

    /// Every non-merge commit of `tip` not in `base` has a patch-id equal to one in `base` since
    /// their merge base (a rebase merge, or a cherry-pick of each).
    fn patches_in_base(&self, tip: Oid, base: Oid) -> Result<bool> {
        const LIMIT: usize = 2000;
        let ids = |from: Oid, hide: Oid| -> Result<Option<Vec<Oid>>> {
            let mut walk = self.git.revwalk()?;
            walk.push(from)?;
            walk.hide(hide)?;
            let ids: Vec<Oid> = walk.take(LIMIT + 1).collect::<Result<_, _>>()?;
            Ok((ids.len() <= LIMIT).then_some(ids))
        };
        let (Some(mine), Some(theirs)) = (ids(tip, base)?, ids(base, tip)?) else {
            return Ok(false);
        };
        let mut base_patches = std::collections::HashSet::new();
        for id in theirs {
            if let Some(p) = self.patch_id(id)? {
                base_patches.insert(p);
            }
        }
        for id in mine {
            match self.patch_id(id)? {
                Some(p) if base_patches.contains(&p) => {}
                Some(_) => return Ok(false),
                // A merge commit or an empty commit carries no patch of its own.
                None => {}
            }
        }
        Ok(true)
    }

    fn patch_id(&self, id: Oid) -> Result<Option<Oid>> {
        let commit = self.git.find_commit(id)?;
        if commit.parent_count() != 1 {
            return Ok(None);
        }
        let parent = commit.parent(0)?.tree()?;
        let diff = self
            .git
            .diff_tree_to_tree(Some(&parent), Some(&commit.tree()?), None)?;
        if diff.deltas().len() == 0 {
            return Ok(None);
        }
        Ok(Some(diff.patchid(None)?))
    }

    /// Merging `tip` into `base` would leave base's tree as it is (a squash merge).
    fn merge_changes_nothing(&self, tip: Oid, base: Oid) -> Result<bool> {
        let ours = self.git.find_commit(base)?;
        let theirs = self.git.find_commit(tip)?;
        let mut index = match self.git.merge_commits(&ours, &theirs, None) {
            Ok(i) => i,
            Err(_) => return Ok(false),
        };
        if index.has_conflicts() {
            return Ok(false);
        }
        let tree = index.write_tree_to(&self.git)?;
        Ok(tree == ours.tree_id())
    }

    /// Short names of `refs/session-archive/<label>/*`, oldest first.
    pub fn archive_refs(&self, label: &str) -> Result<Vec<(String, Oid)>> {
        let glob = format!("refs/session-archive/{label}/*");
        let mut out = Vec::new();
        for r in self.git.references_glob(&glob)? {
            let r = r?;
            if let (Some(name), Some(target)) = (r.name(), r.target()) {
                out.push((name.to_string(), target));
            }
        }
        out.sort();
        Ok(out)
    }

    /// Every archive ref, any label.
    pub fn all_archive_refs(&self) -> Result<Vec<(String, Oid)>> {
        let mut out = Vec::new();
        for r in self.git.references_glob("refs/session-archive/*")? {
            let r = r?;
            if let (Some(name), Some(target)) = (r.name(), r.target()) {
                out.push((name.to_string(), target));
            }
        }
        out.sort();
        Ok(out)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Merged {
    No,
    Ancestor,
    Integrated,
}

impl Merged {
    pub fn is_merged(self) -> bool {
        self != Merged::No
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Merged::No => "no",
            Merged::Ancestor => "ancestor",
            Merged::Integrated => "integrated",
        }
    }
}

/// One worktree as git registers it in `<common>/worktrees/<name>/`.
#[derive(Debug, Clone)]
pub struct WorktreeEntry {
    /// The admin directory `<common>/worktrees/<name>`.
    pub admin: PathBuf,
    /// The worktree's root directory (from the `gitdir` file).
    pub path: PathBuf,
    pub locked: Option<String>,
}

/// Linked worktrees registered in `common_dir`, read straight from disk (no git process).
pub fn linked_worktrees(common_dir: &Path) -> Vec<WorktreeEntry> {
    let Ok(entries) = std::fs::read_dir(common_dir.join("worktrees")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let admin = entry.path();
        let Ok(gitdir) = std::fs::read_to_string(admin.join("gitdir")) else {
            continue;
        };
        let dotgit = PathBuf::from(gitdir.trim_end_matches(['\n', '\r']));
        // git 2.48's `worktree.useRelativePaths` writes it relative to the entry itself.
        let dotgit = if dotgit.is_relative() {
            admin.join(dotgit)
        } else {
            dotgit
        };
        let path = dotgit.parent().map(Path::to_path_buf).unwrap_or(dotgit);
        let locked = std::fs::read_to_string(admin.join("locked")).ok();
        out.push(WorktreeEntry {
            admin,
            path,
            locked,
        });
    }
    out
}

/// The admin entry of the worktree at `path`, if git has one.
pub fn worktree_entry(common_dir: &Path, path: &Path) -> Option<WorktreeEntry> {
    let want = canonical(path);
    linked_worktrees(common_dir)
        .into_iter()
        .find(|w| w.path == path || canonical(&w.path) == want)
}

/// The commits a prepared walk yields (at most `limit`), each with its summary line.
pub fn summarize(
    repo: &Repository,
    walk: git2::Revwalk,
    limit: usize,
) -> Result<Vec<(Oid, String)>> {
    let mut out = Vec::new();
    for id in walk.take(limit) {
        let id = id?;
        let summary = repo
            .find_commit(id)
            .ok()
            .and_then(|c| c.summary().map(str::to_string))
            .unwrap_or_default();
        out.push((id, summary));
    }
    Ok(out)
}

/// What a finished `git` process said.
#[derive(Debug)]
pub struct Output {
    pub stdout: String,
    pub stderr: String,
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
        }
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

    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Runs git to completion, within the deadline.
    pub fn run(self) -> Result<Output, RunError> {
        use std::os::unix::process::CommandExt;
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args)
            .current_dir(self.cwd)
            .stdin(Stdio::null())
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
        let mut out = child.stdout.take().expect("piped");
        let mut err = child.stderr.take().expect("piped");
        let out_thread = std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = out.read_to_end(&mut buf);
            buf
        });
        let (tx, rx) = mpsc::channel::<String>();
        let err_thread = std::thread::spawn(move || {
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
            let left = self.deadline.saturating_sub(started.elapsed());
            if left.is_zero() {
                break Err(RunError::TimedOut(self.deadline));
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
        let stdout = join_within(out_thread, Duration::from_secs(2));
        let stderr = join_within(err_thread, Duration::from_secs(2));
        let status = outcome?;
        let output = Output {
            stdout: String::from_utf8_lossy(&stdout).into_owned(),
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
        };
        if status.success() {
            Ok(output)
        } else {
            Err(RunError::Failed {
                status: status.code(),
                stderr: output.stderr,
            })
        }
    }
}

fn join_within(handle: std::thread::JoinHandle<Vec<u8>>, limit: Duration) -> Vec<u8> {
    let started = Instant::now();
    while !handle.is_finished() && started.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(5));
    }
    if handle.is_finished() {
        handle.join().unwrap_or_default()
    } else {
        Vec::new()
    }
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
