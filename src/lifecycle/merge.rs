//! `merge`, the transaction: one session integrated into its base branch, under the session's op
//! lock and the `[merge] timeout`, after every check that could make it lose or leave something.
//! How the integration itself is computed and carried out (and undone) is [`super::integrate`];
//! this module decides whether it may start, and returns what happened as data: a
//! [`MergeRefusal`] changes nothing, a [`Merged`] says what moved. The command line words both.
//!
//! Invariants a reader must not break:
//! - Nothing is changed before every check passed: the session holds no work the merge would not
//!   carry (anything `cleanup` refuses, except the commits the merge brings in and, with `keep`,
//!   the processes inside), the base's worktree is clean with no operation in progress, and the
//!   session's worktree is on the session branch (the merge may move that branch under it).
//! - The deadline counts from the moment the op lock is held: waiting for another command is no
//!   part of the merge.

use super::integrate::{self, Sides, Stopped, Target, Watch};
use super::merge_journal::{Journal, Move};
use crate::config::Config;
use crate::git::{Oid, Operation, Repo};
use crate::hazards::{self, Hazard, Hazards};
use crate::session::{self, Label, State, Status};
use crate::store::Store;
use anyhow::Result;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How long a merge waits for another command removing the same session.
const OP_WAIT: Duration = Duration::from_secs(60);

/// What a merge did.
#[derive(Debug)]
pub enum Merged {
    /// The base holds every commit of the session already; nothing moved.
    AlreadyIn { base: String },
    /// The base moved to `new_tip`, `how` (fast-forward, commits rebased, a merge commit, ...);
    /// the worktree where the base is checked out was updated too.
    Done {
        base: String,
        how: String,
        new_tip: Oid,
        base_worktree: Option<PathBuf>,
    },
}

/// What holds a session back from being merged (and removed after).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    /// Uncommitted files or an operation in progress.
    Uncommitted,
    /// Other processes work inside its worktree.
    Occupied,
    /// Anything else `cleanup` would refuse.
    Other,
}

/// Why a merge did not start or did not finish; nothing was changed.
#[derive(Debug)]
pub enum MergeRefusal {
    /// Another git-session command is changing the session.
    Busy {
        label: Label,
    },
    /// Attached to a worktree it shares: no branch of its own.
    Attached {
        label: Label,
    },
    Creating {
        label: Label,
    },
    NoBranch {
        label: Label,
        branch: String,
    },
    /// The base is no local branch to merge into.
    BaseNotLocal {
        label: Label,
        base: String,
        branch: String,
    },
    /// Work the merge would not carry: `held` out of everything `found`.
    HeldWork {
        label: Label,
        held: Held,
        items: Vec<Hazard>,
        found: Box<Hazards>,
        worktree: PathBuf,
    },
    /// The base's worktree has uncommitted changes or an operation in progress.
    DirtyBase {
        base: String,
        worktree: PathBuf,
        operations: Vec<Operation>,
        changed: Vec<String>,
    },
    /// The session's worktree is not on the session branch.
    NotOnBranch {
        label: Label,
        branch: String,
        worktree: PathBuf,
    },
    /// Its worktree is damaged (a removal that did not finish, a directory git does not know).
    Damaged {
        label: Label,
        path: PathBuf,
        damage: crate::session::removal::Damage,
    },
    Interrupted {
        label: Label,
    },
    TimedOut {
        label: Label,
        after: Duration,
    },
}

impl std::fmt::Display for MergeRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let label = match self {
            MergeRefusal::DirtyBase { base, .. } => return write!(f, "{base}: dirty worktree"),
            MergeRefusal::Busy { label }
            | MergeRefusal::Attached { label }
            | MergeRefusal::Creating { label }
            | MergeRefusal::NoBranch { label, .. }
            | MergeRefusal::BaseNotLocal { label, .. }
            | MergeRefusal::HeldWork { label, .. }
            | MergeRefusal::NotOnBranch { label, .. }
            | MergeRefusal::Damaged { label, .. }
            | MergeRefusal::Interrupted { label }
            | MergeRefusal::TimedOut { label, .. } => label,
        };
        write!(f, "merge of session {label} refused")
    }
}

impl std::error::Error for MergeRefusal {}

/// Merges session `label` into its base: takes its op lock, checks, computes, applies. Ctrl-C
/// (or a kill, the terminal closed) during the integration rolls it back.
pub fn merge(
    repo: &Repo,
    store: &Store,
    config: &Config,
    label: &Label,
    keep: bool,
) -> Result<Merged> {
    let interrupted = crate::base::process::interrupt_flag();
    session::require(store, label)?;
    // One change of a session at a time: a cleanup or prune of it waits for the merge.
    let Some(_op) = super::lock_session_op(store, label, OP_WAIT)? else {
        return Err(MergeRefusal::Busy {
            label: label.clone(),
        }
        .into());
    };
    let watch = Watch {
        interrupted: &interrupted,
        started: Instant::now(),
        deadline: config.merge_timeout.to_std()?,
    };
    let record = session::require(store, label)?;
    let status = session::inspect(&repo.common_dir, record, config, crate::base::clock::now())?;
    let record = &status.record;
    let refused = |r: MergeRefusal| -> Result<Merged> { Err(r.into()) };
    if record.attached {
        return refused(MergeRefusal::Attached {
            label: label.clone(),
        });
    }
    if status.state == State::Creating {
        return refused(MergeRefusal::Creating {
            label: label.clone(),
        });
    }
    let Some(tip) = status.tip else {
        return refused(MergeRefusal::NoBranch {
            label: label.clone(),
            branch: record.branch.clone(),
        });
    };
    let base_ref = format!("refs/heads/{}", record.base);
    let base_tip = match repo.ref_target(&base_ref)? {
        Some(oid) if crate::git::is_valid_ref_name(&base_ref) => oid,
        _ => {
            return refused(MergeRefusal::BaseNotLocal {
                label: label.clone(),
                base: record.base.clone(),
                branch: record.branch.clone(),
            })
        }
    };
    if let Some(damage) = &status.damage {
        return refused(MergeRefusal::Damaged {
            label: label.clone(),
            path: record.path.clone(),
            damage: damage.clone(),
        });
    }
    refuse_held_work(repo, &status, keep)?;
    let porcelain = repo.porcelain_dir().to_path_buf();
    let base_worktree = integrate::worktree_of(&porcelain, &base_ref)?;
    if let Some(wt) = &base_worktree {
        refuse_dirty_base(&record.base, wt)?;
    }
    let session_worktree =
        (status.state != State::Missing && record.path.is_dir()).then(|| record.path.clone());
    let session_ref = format!("refs/heads/{}", record.branch);
    if let Some(wt) = &session_worktree {
        // The merge may move the branch and bring the worktree along: its HEAD must be on it.
        let head = session::admin_dir_of(wt).and_then(|a| crate::git::read_head(&a).ok());
        if head != Some(crate::git::Head::Branch(session_ref.clone())) {
            return refused(MergeRefusal::NotOnBranch {
                label: label.clone(),
                branch: record.branch.clone(),
                worktree: wt.clone(),
            });
        }
    }
    let sides = Sides {
        dir: &porcelain,
        label,
        branch: &record.branch,
        base: &record.base,
        tip,
        base_tip,
    };
    let stopped = |e: anyhow::Error| stopped(e, label);
    let Some(computed) =
        integrate::compute(&sides, config.merge_strategy, &watch).map_err(stopped)?
    else {
        return Ok(Merged::AlreadyIn {
            base: record.base.clone(),
        });
    };
    let target = Target {
        repo_dir: porcelain.clone(),
        base_ref,
        base_worktree: base_worktree.clone(),
        base_tip,
        session_ref,
        session_worktree,
        tip,
    };
    // The write-ahead record: a kill from here on is completed or undone by the next command.
    let mut moves = vec![Move {
        name: target.base_ref.clone(),
        from: base_tip.to_string(),
        to: computed.new_tip.to_string(),
        worktree: base_worktree.clone(),
    }];
    if computed.move_session && tip != computed.new_tip {
        moves.push(Move {
            name: target.session_ref.clone(),
            from: tip.to_string(),
            to: computed.new_tip.to_string(),
            worktree: target.session_worktree.clone(),
        });
    }
    Journal::begin(store, label, moves)?;
    crate::base::failpoint::reach("merge", "journal-written");
    let applied = integrate::apply(&target, &computed, label, &watch);
    crate::base::failpoint::reach("merge", "applied");
    // A rollback that could not undo every step keeps the record: the next command judges it.
    let undone_in_part = applied.as_ref().is_err_and(|e| {
        matches!(
            e.downcast_ref::<super::LifecycleError>(),
            Some(super::LifecycleError::MergeNotRolledBack { .. })
        )
    });
    if !undone_in_part {
        Journal::end(store, label)?;
    }
    applied.map_err(stopped)?;
    Ok(Merged::Done {
        base: record.base.clone(),
        how: computed.how,
        new_tip: computed.new_tip,
        base_worktree,
    })
}

/// Everything `cleanup` would refuse to remove, except the commits the merge brings in (and,
/// with `keep`, the processes working inside, which may go on).
fn refuse_held_work(repo: &Repo, status: &Status, keep: bool) -> Result<()> {
    let found = hazards::inspect(repo, status);
    let items: Vec<Hazard> = found
        .items
        .iter()
        .filter(|h| !matches!(h, Hazard::Unmerged { .. }))
        .filter(|h| !(keep && matches!(h, Hazard::Occupied(_))))
        .cloned()
        .collect();
    if items.is_empty() {
        return Ok(());
    }
    let held = if items
        .iter()
        .all(|h| matches!(h, Hazard::Dirty(_) | Hazard::Operation(_)))
    {
        Held::Uncommitted
    } else if items.iter().all(|h| matches!(h, Hazard::Occupied(_))) {
        Held::Occupied
    } else {
        Held::Other
    };
    Err(MergeRefusal::HeldWork {
        label: status.record.label.clone(),
        held,
        items,
        found: Box::new(found),
        worktree: status.record.path.clone(),
    }
    .into())
}

fn refuse_dirty_base(base: &str, worktree: &std::path::Path) -> Result<()> {
    let changed = integrate::changed_files(worktree)?;
    let operations = session::admin_dir_of(worktree)
        .map(|admin| crate::git::operations(&admin))
        .unwrap_or_default();
    if changed.is_empty() && operations.is_empty() {
        return Ok(());
    }
    Err(MergeRefusal::DirtyBase {
        base: base.to_string(),
        worktree: worktree.to_path_buf(),
        operations,
        changed,
    }
    .into())
}

/// Ctrl-C and the deadline, as refusals: the integration rolled back, nothing was changed.
fn stopped(e: anyhow::Error, label: &Label) -> anyhow::Error {
    match e.downcast_ref::<Stopped>() {
        Some(Stopped::Interrupted) => MergeRefusal::Interrupted {
            label: label.clone(),
        }
        .into(),
        Some(Stopped::TimedOut(d)) => MergeRefusal::TimedOut {
            label: label.clone(),
            after: *d,
        }
        .into(),
        None => e,
    }
}
