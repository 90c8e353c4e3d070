//! Creating a session, as one transaction: a new worktree on a new branch, or a session attached
//! to the worktree a command runs in.
//!
//! The record is written as `creating` (with our pid, start time and host) before git runs, and
//! git's worktree lock names the label and base commit ([`super::CreatingLock`]), so a creation
//! killed at any point (or cut short by a machine crash that lost the record) is recognised and
//! rolled back by the next command ([`super::recover_interrupted`]). On failure, timeout or
//! interrupt the whole `git worktree add` process group is killed and everything it made is removed
//! ([`super::rollback`]); nothing that existed before is touched.
//!
//! Invariants a reader must not break:
//! - The session's op lock is taken before the record is written and handed to the caller with
//!   the result ([`Created::op`]): recovery leaves alone a creating lock whose label's op lock is
//!   held, and a cleanup of the label waits until the caller has handed the path out.
//! - Our lock on the worktree stays until everything but the final record is done (see
//!   [`super::create_git`]); its removal is what tells a later recovery that the creation
//!   finished.
//! - A label that is an existing session's in another ASCII case only (or whose branch is an
//!   existing branch in another case) is refused before anything is made, on every platform:
//!   a case-insensitive file system would give both one worktree, one record and one branch.
//! - Refusals are [`CreateError`]s, worded by the command line; progress and the setup's
//!   failures reach the caller through its [`Observer`] while the transaction runs.

use super::create_git::{after_checkout, make_worktree, relock_ours, unlock_ours};
use crate::base::clock;
use crate::base::process::ProcessId;
use crate::config::Config;
use crate::git::{Repo, RunError};
use crate::session::{self, Label, Layout, RecordState, SessionRecord};
use crate::store::{LockFile, Store};
use anyhow::Result;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What to create.
#[derive(Debug, Clone)]
pub struct Request {
    pub label: Label,
    /// `--base`: the revision to start from [default: `base` in config, else the main branch].
    pub base: Option<String>,
    /// `--path`, absolute and normalised (default: `<worktrees_dir>/<label>`).
    pub path: Option<PathBuf>,
    /// The user approved the repository's `[create] run` commands (`--approve-run`).
    pub approve_run: bool,
    /// The deadline of `git worktree add`, and of each setup command.
    pub deadline: Duration,
    /// Where the branch starts when not at the base (a restore: the archived tip). The record's
    /// `base_commit` is then this commit: rollback deletes the branch only while it is there.
    pub start: Option<crate::git::Oid>,
}

/// A session made: its path, and the op lock the caller holds until it has handed the path out.
pub struct Created {
    pub path: PathBuf,
    pub op: LockFile,
}

/// What went wrong in the setup after the checkout: reported, never fatal (`setup` completes it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetupNotice {
    /// A `[create] copy` file could not be copied (the line says which and why).
    CopyFailed(String),
    /// The generated hooks directory could not be copied into the worktree.
    HooksDirNotCopied { path: PathBuf, error: String },
    /// The repository's `[create] run` list is not approved: nothing of it ran.
    NotApproved { label: Label, commands: Vec<String> },
    /// A setup command failed (the line names it and why).
    CommandFailed(String),
}

/// Who watches a creation: `git worktree add`'s progress, and the setup's notices, as they come.
pub trait Observer {
    /// `git worktree add` is about to run for `label`.
    fn started(&self, label: &Label);
    /// A line of git's progress.
    fn progress(&self, line: &str);
    /// `git worktree add` has ended (well or not).
    fn finished(&self);
    fn setup(&self, notice: SetupNotice);
}

/// Why a creation was refused, or failed and was rolled back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreateError {
    /// The repository has no commits to start from.
    NoCommits,
    BaseNotACommit {
        base: String,
    },
    /// A session of that label exists, at `path`.
    Exists {
        label: Label,
        path: PathBuf,
    },
    /// A session whose label is the new one in another ASCII case only (`fix` for `Fix`): on a
    /// case-insensitive file system the two would share one worktree directory, one record and
    /// one branch file, so it is refused on every platform.
    CaseTwin {
        label: Label,
        existing: Label,
    },
    PathNotEmpty {
        path: PathBuf,
    },
    /// A file git reads while adding any worktree is not a regular file (a FIFO would hang git).
    AdminBlocker {
        file: PathBuf,
    },
    BranchExists {
        branch: String,
    },
    /// A branch (with no session) whose name is the new branch in another ASCII case only
    /// (`session/fix` for `session/Fix`): one loose ref file on a case-insensitive file system.
    BranchCaseTwin {
        branch: String,
        existing: String,
    },
    /// A branch that is a prefix folder of the new one (or inside it) exists.
    BranchInTheWay {
        other: String,
        branch: String,
    },
    /// Another command holds the label's op lock.
    Busy {
        label: Label,
    },
    /// The record appeared meanwhile (another creation of the same label won).
    RecordExists {
        label: Label,
    },
    /// `--attach` outside any worktree.
    NoWorktreeToAttach,
    /// The creation was stopped and rolled back; `rolled` says how completely.
    TimedOut {
        label: Label,
        after: Duration,
        rolled: String,
    },
    Interrupted {
        label: Label,
        rolled: String,
    },
    /// `git worktree add` failed; rolled back. `hook` is the post-checkout hook when one runs.
    Failed {
        label: Label,
        status: Option<i32>,
        stderr: String,
        rolled: String,
        left_nothing: bool,
        hook: Option<PathBuf>,
    },
}

impl fmt::Display for CreateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CreateError::NoCommits => f.write_str(
                "this repository has no commits yet, so a session has nothing to start from",
            ),
            CreateError::BaseNotACommit { base } => {
                write!(f, "base \"{}\" does not name a commit", base.escape_debug())
            }
            CreateError::Exists { label, .. } | CreateError::RecordExists { label } => {
                write!(f, "session \"{label}\" already exists")
            }
            CreateError::CaseTwin { label, existing } => write!(
                f,
                "session \"{existing}\" already exists; \"{label}\" differs only in case"
            ),
            CreateError::PathNotEmpty { path } => write!(
                f,
                "{} already exists and is not an empty directory",
                path.display()
            ),
            CreateError::AdminBlocker { file } => write!(
                f,
                "{} is not a regular file, and git reads it while it adds any worktree",
                file.display()
            ),
            CreateError::BranchExists { branch } => write!(f, "branch {branch} already exists"),
            CreateError::BranchCaseTwin { branch, existing } => write!(
                f,
                "branch {existing} already exists; {branch} differs only in case"
            ),
            CreateError::BranchInTheWay { other, branch } => write!(
                f,
                "branch {other} exists, and git cannot keep {branch} beside it"
            ),
            CreateError::Busy { label } => write!(
                f,
                "another git-session command is working on session \"{label}\""
            ),
            CreateError::NoWorktreeToAttach => {
                f.write_str("--attach needs a worktree, and this repository has none here")
            }
            CreateError::TimedOut {
                label,
                after,
                rolled,
            } => write!(
                f,
                "creating session \"{label}\" took longer than {}s; {rolled}",
                after.as_secs()
            ),
            CreateError::Interrupted { label, rolled } => {
                write!(f, "creating session \"{label}\" was interrupted; {rolled}")
            }
            CreateError::Failed {
                label,
                status,
                rolled,
                ..
            } => {
                let how = match status {
                    Some(code) => format!("git worktree add exited with {code}"),
                    None => "git worktree add could not run or was killed".to_string(),
                };
                write!(f, "creating session \"{label}\" failed: {how}; {rolled}")
            }
        }
    }
}

impl std::error::Error for CreateError {}

/// Creates the session `request` names (see the module doc). The caller has recovered
/// interrupted creations first.
pub fn create(
    repo: &Repo,
    config: &Config,
    layout: &Layout,
    store: &Store,
    request: &Request,
    observer: &dyn Observer,
) -> Result<Created> {
    let label = &request.label;
    let base = match request.base.clone().or_else(|| config.base.clone()) {
        Some(b) => b,
        None => repo.default_base()?,
    };
    session::validate_rev(&base)?;
    let Some(base_commit) = repo.resolve_commit(&base)? else {
        if repo.branch_commits()?.is_empty() {
            return Err(CreateError::NoCommits.into());
        }
        return Err(CreateError::BaseNotACommit { base }.into());
    };
    let base_commit = request.start.unwrap_or(base_commit);
    let path = match &request.path {
        Some(p) => p.clone(),
        None => layout.worktree_path(label),
    };
    let custom_path = !layout.holds(&path);
    let branch = layout.branch(label);
    refuse_case_twin(store, label, Some((repo, &branch)))?;
    if let Some(existing) = session::load(store, label)? {
        return Err(CreateError::Exists {
            label: label.clone(),
            path: existing.path,
        }
        .into());
    }
    let dir_existed = empty_dir_there(&path)?;
    if let Some(file) = crate::git::admin_blocker(&repo.common_dir) {
        return Err(CreateError::AdminBlocker { file }.into());
    }
    if repo.branch_tip(&branch)?.is_some() {
        return Err(CreateError::BranchExists { branch }.into());
    }
    if let Some(other) = repo.branch_in_the_way(&branch)? {
        return Err(CreateError::BranchInTheWay { other, branch }.into());
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
    let op = super::lock_session_op(store, label, Duration::from_secs(2))?.ok_or_else(|| {
        CreateError::Busy {
            label: label.clone(),
        }
    })?;
    // Without fsync, like every write of `create`: this record tells the next command that a
    // creation is under way while this process lives, and a killed process loses no write the
    // kernel has. After a machine crash it may be lost or empty; the lock `git worktree add`
    // writes with our reason is then what records the creation (RELIABILITY.md, "Durability").
    crate::ownership::drop_orphan_claims(store, label)?;
    let step = store.clone().volatile();
    if !step.write_new(&SessionRecord::store_path(label), &record)? {
        return Err(CreateError::RecordExists {
            label: label.clone(),
        }
        .into());
    }
    let env = match take_lease(repo, store, config, label) {
        Ok(env) => env,
        Err(e) => {
            // Nothing but the record is made yet: it goes (and any lease with it).
            crate::ownership::remove_session(store, label)?;
            return Err(e);
        }
    };
    crate::base::failpoint::reach("create", "leased");
    make_and_set_up(
        repo,
        config,
        layout,
        store,
        request,
        &record,
        base_commit,
        &env,
        observer,
    )?;
    // Without fsync: on a journaled file system its fsync would also commit the whole
    // checkout's metadata (the largest cost `create` added to `git worktree add`). Nothing
    // depends on it surviving a machine crash: a record left at `creating` whose worktree git
    // registered and whose lock we removed is completed by the next command
    // (`lifecycle::recover_interrupted`), never rolled back.
    step.update::<SessionRecord, _>(&SessionRecord::store_path(label), |r| {
        Ok(r.map(|mut r| {
            r.state = RecordState::Active;
            r.creator = None;
            r.worker = None;
            r.last_seen = clock::now();
            r
        }))
    })?;
    Ok(Created { path, op })
}

/// Leases the session's `[resources]` (after its record is written: see `ownership::leases`),
/// its port block shared with the other clones where `[claims] remote` is set
/// (`shared_claims::leases`); returns the environment its programs get. Nothing configured:
/// nothing leased.
fn take_lease(
    repo: &Repo,
    store: &Store,
    config: &Config,
    label: &Label,
) -> Result<Vec<(String, String)>> {
    use crate::ownership::leases;
    if !config.resources.any() {
        return Ok(Vec::new());
    }
    let lease = match config.shared_claims() {
        Some(settings) if config.resources.ports > 0 => {
            // Its fetch and push read every worktree entry: the registration's turn (take_turn).
            let _turn = store
                .clone()
                .with_lock_wait(Duration::from_secs(30))
                .lock("worktree-add")
                .ok();
            crate::shared_claims::leases::lease(repo, store, &settings, &config.resources, label)?
                .map_err(|e| leases::LeaseError::NotShared {
                remote: settings.remote.clone(),
                why: match e {
                    crate::shared_claims::SharedError::Remote { why, .. } => why,
                    other => other.to_string(),
                },
            })?
        }
        _ => leases::lease(store, &config.resources, label, &[], &leases::port_free)?,
    };
    Ok(lease.env())
}

/// Undoes a creation that finished but whose first use could not start (`create -- CMD` whose
/// CMD could not be run): nothing of it may stay. The record goes back to `creating` with this
/// process as its creator, our lock goes back on the worktree, and [`super::rollback`] removes
/// what the creation made, as after a failed `git worktree add`; a crash between the steps is
/// what [`super::recover_interrupted`] already handles (completed without the lock, rolled back
/// with it). Only what rollback would remove goes: a branch that moved since stays, and is named.
pub fn undo(repo: &Repo, layout: &Layout, store: &Store, label: &Label) -> Result<super::Undone> {
    let _op = super::lock_session_op(store, label, Duration::from_secs(2))?.ok_or_else(|| {
        CreateError::Busy {
            label: label.clone(),
        }
    })?;
    let Some(record) = session::load(store, label)?.filter(|r| !r.attached) else {
        return Ok(super::Undone::default());
    };
    store.clone().volatile().update::<SessionRecord, _>(
        &SessionRecord::store_path(label),
        |r| {
            Ok(r.map(|mut r| {
                r.state = RecordState::Creating;
                r.creator = Some(ProcessId::current());
                r
            }))
        },
    )?;
    relock_ours(repo, &record)?;
    Ok(super::rollback(repo, layout, store, &record))
}

/// Refuses `label` when an existing session's label is it in another ASCII case only, and (given
/// the repository and the new branch) when a branch is the new branch in another case only.
/// First among the checks: on a case-insensitive file system the twin's record, worktree
/// directory and branch file answer to the new names too, and would be taken for this label's.
fn refuse_case_twin(store: &Store, label: &Label, branch: Option<(&Repo, &str)>) -> Result<()> {
    if let Some(twin) = session::load_all(store)?
        .into_iter()
        .find(|r| label.is_case_twin_of(&r.label))
    {
        return Err(CreateError::CaseTwin {
            label: label.clone(),
            existing: twin.label,
        }
        .into());
    }
    if let Some((repo, branch)) = branch {
        if let Some(existing) = repo.branch_in_other_case(branch)? {
            return Err(CreateError::BranchCaseTwin {
                branch: branch.to_string(),
                existing,
            }
            .into());
        }
    }
    Ok(())
}

/// Whether `path` is an empty directory already (`Ok(false)`: nothing is there). git accepts an
/// empty existing directory as the target, and so do we (a symlink is not one: git would follow
/// it somewhere else). Rollback then empties it and leaves it.
fn empty_dir_there(path: &Path) -> Result<bool> {
    match std::fs::symlink_metadata(path) {
        Err(_) => Ok(false),
        Ok(meta)
            if meta.is_dir() && std::fs::read_dir(path).is_ok_and(|mut d| d.next().is_none()) =>
        {
            Ok(true)
        }
        Ok(_) => Err(CreateError::PathNotEmpty {
            path: path.to_path_buf(),
        }
        .into()),
    }
}

/// The worktree, its setup and the removal of our lock; on failure, timeout or interrupt, the
/// rollback of all of it (and of the directories this creation made above the worktree).
#[allow(clippy::too_many_arguments)]
fn make_and_set_up(
    repo: &Repo,
    config: &Config,
    layout: &Layout,
    store: &Store,
    request: &Request,
    record: &SessionRecord,
    base_commit: crate::git::Oid,
    env: &[(String, String)],
    observer: &dyn Observer,
) -> Result<()> {
    let interrupted = crate::base::process::interrupt_flag();
    // Directories this creation makes above the worktree (the worktrees directory on a first
    // create) go too when it fails: a failed create leaves nothing behind.
    let made_dirs: Vec<PathBuf> = record
        .path
        .ancestors()
        .skip(1)
        .take_while(|d| !d.exists())
        .map(Path::to_path_buf)
        .collect();
    // Our lock on the worktree stays until everything but the final record is done: its removal
    // is what tells a later recovery that the creation finished (see `recover_interrupted`).
    let deadline = request.deadline;
    let made =
        make_worktree(repo, store, record, deadline, &interrupted, observer).and_then(|()| {
            after_checkout(
                repo,
                config,
                store,
                record,
                base_commit,
                request.approve_run,
                deadline,
                env,
                observer,
            );
            unlock_ours(repo, record)
        });
    let Err(failure) = made else {
        return Ok(());
    };
    if matches!(failure, RunError::TimedOut(_) | RunError::Interrupted) {
        // The run killed git's whole process group: a ref lock a killed git held on this
        // creation's own new branch (it updates it after writing the files) is stale, and
        // would keep the rollback from deleting the branch.
        let _ = std::fs::remove_file(
            repo.common_dir
                .join(format!("refs/heads/{}.lock", record.branch)),
        );
    }
    let undone = super::rollback(repo, layout, store, record);
    for dir in &made_dirs {
        // Only while empty: anything someone put there meanwhile stays.
        let _ = std::fs::remove_dir(dir);
    }
    let label = record.label.clone();
    let rolled = undone.describe();
    Err(match failure {
        RunError::TimedOut(after) => CreateError::TimedOut {
            label,
            after,
            rolled,
        },
        RunError::Interrupted => CreateError::Interrupted { label, rolled },
        RunError::Failed { status, stderr } => CreateError::Failed {
            label,
            status,
            stderr,
            rolled,
            left_nothing: undone.left.is_empty(),
            hook: post_checkout_hook(repo),
        },
    }
    .into())
}

/// The post-checkout hook git runs in a new worktree, when there is an executable one: a failed
/// `git worktree add` whose status is not git's own (128) is the hook's.
fn post_checkout_hook(repo: &Repo) -> Option<PathBuf> {
    crate::git::git_ok(
        repo.porcelain_dir(),
        ["rev-parse", "--git-path", "hooks/post-checkout"],
    )
    .ok()
    .map(|p| repo.porcelain_dir().join(p.trim()))
    .filter(|p| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// `create --attach`: a session registered in the worktree the command runs in (no worktree or
/// branch of its own), holding its `[resources]` like any other. Returns the worktree's root.
pub fn attach(repo: &Repo, config: &Config, store: &Store, label: &Label) -> Result<PathBuf> {
    let Some(here) = repo.current_worktree.clone() else {
        return Err(CreateError::NoWorktreeToAttach.into());
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
    // No branch of its own: only the record would be shared with a case twin.
    refuse_case_twin(store, label, None)?;
    crate::ownership::drop_orphan_claims(store, label)?;
    if !store.write_new(&SessionRecord::store_path(label), &record)? {
        return Err(CreateError::RecordExists {
            label: label.clone(),
        }
        .into());
    }
    // Leased like any session's, after its record (see `ownership::leases`), and given back
    // by its removal; a refusal leaves nothing: the record goes with it.
    if let Err(e) = take_lease(repo, store, config, label) {
        crate::ownership::remove_session(store, label)?;
        return Err(e);
    }
    Ok(here)
}

/// `s-<MMDD>-<4 hex>`: short, sortable by day, unique enough; checked against the store.
pub fn generate_label(store: &Store) -> Label {
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
