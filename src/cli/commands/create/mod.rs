//! `git session create`: a new worktree on a new branch, as one transaction.
//!
//! The record is written as `creating` (with our pid, start time and host) before git runs, and
//! git's worktree lock names the label and base commit, so a creation killed at any point (or
//! cut short by a machine crash that lost the record) is recognised and rolled back by the next
//! command. On failure,
//! timeout or interrupt the whole `git worktree add` process group is killed and everything it
//! made is removed; nothing that existed before is touched.

use crate::base::clock;
use crate::base::process::ProcessId;
use crate::cli::error::UserError;
use crate::cli::helper::CommandHelper;
use crate::cli::output;
use crate::config::Config;
use crate::git::{Repo, RunError};
use crate::lifecycle;
use crate::session::{self, Label, RecordState, SessionRecord};
use crate::store::Store;
use anyhow::Result;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use worktree::{after_checkout, make_worktree, unlock_ours};

mod worktree;

/// Create a session: a worktree on a new branch session/<LABEL>; prints its path
#[derive(Debug, clap::Args)]
#[command(after_help = "Example: cd \"$(git session create fix-login)\"")]
pub struct Args {
    /// Session label (A-Z a-z 0-9 . _ -); generated when omitted
    pub label: Option<String>,
    /// Revision to start from [default: the repository's main branch, or `base` in config]
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// Worktree directory [default: <worktrees_dir>/<LABEL>]
    #[arg(long, value_name = "DIR")]
    pub path: Option<PathBuf>,
    /// Register a session in the current worktree instead of creating one
    #[arg(long, conflicts_with_all = ["path", "base"])]
    pub attach: bool,
    /// Deadline for `git worktree add`, such as 30s or 5m [default: create_timeout, 300s]
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// Approve the repository's `[create] run` commands (asked once on a terminal otherwise)
    #[arg(long)]
    pub approve_run: bool,
    /// After `LABEL --`: a command to run inside the new worktree with GIT_SESSION=<LABEL> set
    /// (it replaces this process, so its signals and exit status are the command's own). With no
    /// LABEL before `--`, the first word after it is the label.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<std::ffi::OsString>,
}

pub fn run(args: Args) -> Result<()> {
    run_in(&CommandHelper::open()?, args)
}

/// [`run`] with the helper of a command that creates a session on its behalf.
pub fn run_in(cx: &CommandHelper, mut args: Args) -> Result<()> {
    if args.label.is_none() && !args.command.is_empty() {
        // `create -- LABEL` has always named a label that may start with `-`; keep it so, and
        // let `create -- LABEL -- CMD` run a command after such a label.
        let label = args.command.remove(0);
        if args.command.first().is_some_and(|a| a == "--") {
            args.command.remove(0);
        }
        args.label = Some(label.to_string_lossy().into_owned());
    }
    let (repo, store) = (&cx.repo, &cx.store);
    let config = cx.config()?;
    let layout = cx.layout()?;
    let label = match &args.label {
        Some(l) => Label::new(l)?,
        None => generate_label(store),
    };
    if let Some(base) = &args.base {
        session::validate_rev(base)?;
    }
    let timeout = clock::timeout_arg(args.timeout.as_deref(), config.create_timeout)?;
    cx.recover()?;
    if args.attach {
        return attach(repo, config, store, &label);
    }

    let base = match args.base.clone().or_else(|| config.base.clone()) {
        Some(b) => b,
        None => repo.default_base()?,
    };
    session::validate_rev(&base)?;
    let Some(base_commit) = repo.resolve_commit(&base)? else {
        if repo.branch_commits()?.is_empty() {
            return Err(UserError::refused(
                "this repository has no commits yet, so a session has nothing to start from",
            )
            .hinted("make the first commit (git commit --allow-empty -m \"Initial commit\"), then create the session")
            .into());
        }
        return Err(UserError::refused(format!(
            "base \"{}\" does not name a commit",
            base.escape_debug()
        ))
        .hinted("pass an existing branch, tag or commit with --base REV")
        .into());
    };
    let path = match &args.path {
        Some(p) => {
            let p = if p.is_absolute() {
                p.clone()
            } else {
                std::env::current_dir()?.join(p)
            };
            session::normalize(&p)
        }
        None => layout.worktree_path(&label),
    };
    let custom_path = !layout.holds(&path);
    if let Some(existing) = session::load(store, &label)? {
        return Err(
            UserError::refused(format!("session \"{label}\" already exists"))
                .hinted(format!(
                    "enter it with: cd {}   (or choose another label)",
                    lifecycle::shell_quote(&existing.path.display().to_string())
                ))
                .into(),
        );
    }
    // git accepts an empty existing directory as the target, and so do we (a symlink is not
    // one: git would follow it somewhere else). Rollback then empties it and leaves it.
    let dir_existed = match std::fs::symlink_metadata(&path) {
        Err(_) => false,
        Ok(meta)
            if meta.is_dir() && std::fs::read_dir(&path).is_ok_and(|mut d| d.next().is_none()) =>
        {
            true
        }
        Ok(_) => {
            return Err(UserError::refused(format!(
                "{} already exists and is not an empty directory",
                path.display()
            ))
            .hinted("choose another label or --path, or remove that directory first")
            .into())
        }
    };
    if let Some(file) = crate::git::admin_blocker(&repo.common_dir) {
        return Err(UserError::refused(format!(
            "{} is not a regular file, and git reads it while it adds any worktree",
            file.display()
        ))
        .hinted("move it out of the way (git would wait on a FIFO there forever), then retry")
        .into());
    }
    let branch = layout.branch(&label);
    if repo.branch_tip(&branch)?.is_some() {
        return Err(
            UserError::refused(format!("branch {branch} already exists"))
                .hinted(format!(
                "choose another label, or `git session create --attach` in a worktree of {branch}"
            ))
                .into(),
        );
    }
    if let Some(other) = repo.branch_in_the_way(&branch)? {
        return Err(UserError::refused(format!(
            "branch {other} exists, and git cannot keep {branch} beside it"
        ))
        .hinted("choose another label (a branch cannot also be a folder of branches)")
        .into());
    }
    let record = SessionRecord {
        base_commit: base_commit.to_string(),
        state: RecordState::Creating,
        custom_path,
        creator: Some(ProcessId::current()),
        dir_existed,
        ..SessionRecord::new(label.clone(), branch.clone(), path.clone(), base.clone())
    };
    // Held until the final record is written: recovery leaves alone a creating lock whose
    // label's op lock is held (`lifecycle` orphans), and a cleanup of this label waits.
    let op = lifecycle::lock_session_op(store, &label, std::time::Duration::from_secs(2))?
        .ok_or_else(|| {
            UserError::refused(format!(
                "another git-session command is working on session \"{label}\""
            ))
            .hinted("run the create again once it is done")
        })?;
    // Without fsync, like every write of `create`: this record tells the next command that a
    // creation is under way while this process lives, and a killed process loses no write the
    // kernel has. After a machine crash it may be lost or empty; the lock `git worktree add`
    // writes with our reason is then what records the creation (RELIABILITY.md, "Durability").
    crate::ownership::drop_orphan_claims(store, &label)?;
    let step = store.clone().volatile();
    if !step.write_new(&SessionRecord::store_path(&label), &record)? {
        return Err(
            UserError::refused(format!("session \"{label}\" already exists"))
                .hinted("choose another label; `git session list` shows the sessions")
                .into(),
        );
    }

    let interrupted = Arc::new(AtomicBool::new(false));
    for signal in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        let _ = signal_hook::flag::register(signal, Arc::clone(&interrupted));
    }

    // Directories this creation makes above the worktree (the worktrees directory on a first
    // create) go too when it fails: a failed create leaves nothing behind.
    let made_dirs: Vec<PathBuf> = path
        .ancestors()
        .skip(1)
        .take_while(|d| !d.exists())
        .map(Path::to_path_buf)
        .collect();
    // Our lock on the worktree stays until everything but the final record is done: its removal
    // is what tells a later recovery that the creation finished (see `recover_interrupted`).
    let deadline = timeout.to_std()?;
    let made = make_worktree(repo, store, &record, deadline, &interrupted).and_then(|()| {
        after_checkout(
            repo,
            config,
            store,
            &record,
            base_commit,
            args.approve_run,
            deadline,
        );
        unlock_ours(repo, &record)
    });
    match made {
        Ok(()) => {}
        Err(failure) => {
            if matches!(failure, RunError::TimedOut(_) | RunError::Interrupted) {
                // The run killed git's whole process group: a ref lock a killed git held on
                // this creation's own new branch (it updates it after writing the files) is
                // stale, and would keep the rollback from deleting the branch.
                let _ = std::fs::remove_file(
                    repo.common_dir
                        .join(format!("refs/heads/{}.lock", record.branch)),
                );
            }
            let undone = lifecycle::rollback(repo, &layout, store, &record);
            for dir in &made_dirs {
                // Only while empty: anything someone put there meanwhile stays.
                let _ = std::fs::remove_dir(dir);
            }
            let rolled = undone.describe();
            let err = match failure {
                RunError::TimedOut(d) => UserError::refused(format!(
                    "creating session \"{label}\" took longer than {}s; {rolled}",
                    d.as_secs()
                ))
                .hinted(
                    "a slow post-checkout hook is the usual cause; raise the deadline with \
                     --timeout or create_timeout",
                ),
                RunError::Interrupted => UserError::refused(format!(
                    "creating session \"{label}\" was interrupted; {rolled}"
                ))
                .hinted("run the same command again to retry"),
                RunError::Failed { status, stderr } => {
                    failed_message(repo, &label, status, &stderr, &undone)
                }
            };
            return Err(err.into());
        }
    }

    // Without fsync: on a journaled file system its fsync would also commit the whole
    // checkout's metadata (the largest cost `create` added to `git worktree add`). Nothing
    // depends on it surviving a machine crash: a record left at `creating` whose worktree git
    // registered and whose lock we removed is completed by the next command
    // (`lifecycle::recover_interrupted`), never rolled back.
    step.update::<SessionRecord, _>(&SessionRecord::store_path(&label), |r| {
        Ok(r.map(|mut r| {
            r.state = RecordState::Active;
            r.creator = None;
            r.worker = None;
            r.last_seen = clock::now();
            r
        }))
    })?;
    crate::cli::commands::hooks::warn_unguarded(
        &repo.common_dir,
        &[(label.to_string(), path.clone())],
    );
    // The agents' hooks load here too (Codex needs a `.codex/` of the session's own), or the
    // user hears what to do (commit, trust).
    match crate::context::loading::prepare_worktree(repo.main_worktree.as_deref(), &path) {
        Ok(unloaded) => {
            for h in &unloaded {
                output::warn(crate::context::loading::describe(h));
            }
        }
        Err(e) => output::warn(format!(
            "the agents' hook set-up in {} failed: {e}",
            path.display()
        )),
    }
    if !args.command.is_empty() {
        // exec keeps our pid and start time: a lock still held would look alive for as long as
        // the command runs.
        drop(op);
        return exec_in(&label, &path, &args.command);
    }
    // The op lock is held until the path is handed out: a `cleanup` of this label that came
    // meanwhile has been refused (the record said `creating`) or waits until after this.
    crate::cli::shell::request_cd(&path);
    output::line(path.display().to_string())?;
    drop(op);
    Ok(())
}

/// `create LABEL -- CMD ARGS...`: replaces this process with CMD, run in the new worktree with
/// `GIT_SESSION=<label>`. Only an exec failure returns; the session stays (it was created).
fn exec_in(label: &str, path: &Path, command: &[std::ffi::OsString]) -> Result<()> {
    use std::os::unix::process::CommandExt;
    output::note(format!(
        "session \"{label}\" is at {}; running {}",
        path.display(),
        command[0].to_string_lossy()
    ));
    let err = std::process::Command::new(&command[0])
        .args(&command[1..])
        .current_dir(path)
        .env("GIT_SESSION", label)
        .exec();
    Err(UserError::refused(format!(
        "cannot run {}: {err}",
        command[0].to_string_lossy()
    ))
    .hinted(format!(
        "the session was created; enter it with: cd {}",
        lifecycle::shell_quote(&path.display().to_string())
    ))
    .into())
}

/// The error for a failed `git worktree add`: its exit status, every line git (and any hook it
/// ran) wrote to stderr, and the post-checkout hook by name when the status is the hook's own
/// (git exits 128 for its own failures and with the hook's status when the hook fails).
fn failed_message(
    repo: &Repo,
    label: &str,
    status: Option<i32>,
    stderr: &str,
    undone: &lifecycle::Undone,
) -> UserError {
    let rolled = undone.describe();
    let how = match status {
        Some(code) => format!("git worktree add exited with {code}"),
        None => "git worktree add could not run or was killed".to_string(),
    };
    let mut err = UserError::refused(format!(
        "creating session \"{label}\" failed: {how}; {rolled}"
    ));
    for line in stderr
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
    {
        // Control characters escaped so a hook cannot redraw the terminal or split lines.
        err = err.detail(format!("git: {}", session::one_line(line)));
    }
    let hook = crate::git::git_ok(
        repo.porcelain_dir(),
        ["rev-parse", "--git-path", "hooks/post-checkout"],
    )
    .ok()
    .map(|p| repo.porcelain_dir().join(p.trim()))
    .filter(|p| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    });
    match (hook, status) {
        (Some(hook), Some(code)) if code != 128 => err.hinted(format!(
            "the post-checkout hook {} failed with exit status {code}; fix it or run the \
             create again",
            hook.display()
        )),
        _ if undone.left.is_empty() => {
            err.hinted("see git's message above; nothing this create made was left behind")
        }
        _ => err.hinted("see git's message above; remove what is named as left, then retry"),
    }
}

fn attach(repo: &Repo, config: &Config, store: &Store, label: &Label) -> Result<()> {
    let Some(here) = repo.current_worktree.clone() else {
        return Err(UserError::refused(
            "--attach needs a worktree, and this repository has none here",
        )
        .hinted("run it inside the worktree the session works in")
        .into());
    };
    let branch = repo.head_branch();
    let base = match &config.base {
        Some(b) => b.clone(),
        None => repo.default_base()?,
    };
    let base_commit = repo
        .resolve_commit(&base)?
        .map(|o| o.to_string())
        .unwrap_or_default();
    let record = SessionRecord {
        base_commit,
        attached: true,
        custom_path: true,
        ..SessionRecord::new(label.clone(), branch, here.clone(), base)
    };
    crate::ownership::drop_orphan_claims(store, label)?;
    if !store.write_new(&SessionRecord::store_path(label), &record)? {
        return Err(
            UserError::refused(format!("session \"{label}\" already exists"))
                .hinted("choose another label; `git session list` shows the sessions")
                .into(),
        );
    }
    output::note(format!(
        "attached session \"{label}\" to {}; identify its commits with GIT_SESSION={label}",
        here.display()
    ));
    output::line(here.display().to_string())?;
    Ok(())
}

/// `s-<MMDD>-<4 hex>`: short, sortable by day, unique enough; checked against the store.
fn generate_label(store: &Store) -> Label {
    let day = clock::now().format("%m%d").to_string();
    let mut seed = u64::from(std::process::id())
        ^ (std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0));
    loop {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let label = Label::from_string(format!("s-{day}-{:04x}", (seed >> 48) & 0xffff))
            .expect("s-MMDD-hhhh is a label");
        if std::fs::symlink_metadata(store.path(&SessionRecord::store_path(&label))).is_err() {
            return label;
        }
    }
}
