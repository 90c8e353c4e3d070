//! `merge`, the transaction: one session integrated into its base branch, under the session's op
//! lock and the `[merge] timeout`, after every check that could make it lose or leave something.
//! How the integration itself is computed and carried out (and undone) is [`super::integrate`];
//! this module decides whether it may start, and returns what happened as data: a
//! [`MergeRefusal`] changes nothing, a [`Merged`] says what moved. The command line words both.
//!
//! Invariants a reader must not break:
//! - Nothing is changed before every check passed: the session holds no work the merge would not
//!   carry (anything `cleanup` refuses, except the commits the merge brings in and the processes
//!   inside, which hold back only the removal after it), the base's worktree has no operation in
//!   progress and no uncommitted change in a path the merge changes (git's rule for
//!   `read-tree -m -u`; others stay as they are), the session's worktree is on the session branch
//!   (the merge may move that branch under it), and every `[merge] check` command passed on the
//!   computed result.
//! - The base moves only from the tip the result was computed on (compare-and-swap); a merge
//!   that finds it moved makes its result again onto the new tip, checks that, and stops after
//!   a second loss.
//! - The deadline counts from the moment the op lock is held: waiting for another command is no
//!   part of the merge.

use super::integrate::{self, Computed, Sides, Stopped, Target, Watch};
use super::merge_check;
use super::merge_in_the_way::{in_the_way, uncommitted};
use super::merge_journal::{Journal, Move};
use super::merge_regenerate::Regeneration;
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

/// How a merge is asked for.
#[derive(Debug, Clone, Copy, Default)]
pub struct MergeOptions<'a> {
    /// Skip the `[merge] check` (audited).
    pub no_check: bool,
    /// Approve the repository's `[merge] check` list.
    pub approve_check: bool,
    /// Compute and check, move nothing: the answer is [`Merged::Planned`].
    pub dry_run: bool,
    /// With `dry_run`: integrate onto this commit (an earlier planned result) instead of the
    /// base's tip.
    pub onto: Option<Oid>,
    /// What was answered at the terminal in this command (a batch asks once per list).
    pub answers: Option<&'a merge_check::Answers>,
}

/// What a merge did.
#[derive(Debug)]
pub enum Merged {
    /// The base holds every commit of the session already; nothing moved.
    AlreadyIn { base: String },
    /// A dry run: what the merge would make; nothing moved.
    Planned(Planned),
    /// The base moved to `new_tip`, `how` (fast-forward, commits rebased, a merge commit, ...);
    /// the worktree where the base is checked out was updated too.
    Done {
        base: String,
        how: String,
        new_tip: Oid,
        base_worktree: Option<PathBuf>,
        /// The `[merge] check` commands that passed on `new_tip` (none: no check ran).
        checked: Vec<String>,
        /// Another merge moved the base first; the integration was made again onto it.
        recomputed: bool,
        /// Other processes work inside the session's worktree (or whether they do cannot be
        /// told): they held nothing back, but removing the session must wait for them.
        occupied: Vec<Hazard>,
    },
}

/// What a merge would do (`dry_run`): nothing moved.
#[derive(Debug)]
pub struct Planned {
    pub base: String,
    pub how: String,
    pub new_tip: Oid,
    pub checked: Vec<String>,
}

/// What holds a session back from being merged (and removed after).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    /// Uncommitted files or an operation in progress.
    Uncommitted,
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
    /// The base's worktree has an operation in progress, or uncommitted changes (or files git
    /// does not track) in `changed`, paths the merge changes.
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
    /// The repository's `[merge] check` list is not approved: nothing ran, nothing moved.
    CheckNotApproved {
        label: Label,
        commands: Vec<String>,
    },
    /// Generated files conflicted and the repository's `[merge] regenerate` table (`<glob>:
    /// <command>` lines) is not approved: nothing ran, nothing moved.
    RegenerateNotApproved {
        label: Label,
        paths: Vec<String>,
        commands: Vec<String>,
    },
    /// A `[merge] check` command failed on the integrated result: nothing moved.
    CheckFailed {
        label: Label,
        base: String,
        failure: merge_check::Failure,
    },
    /// Other merges moved the base first, twice: nothing moved.
    LostRace {
        label: Label,
        base: String,
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
            | MergeRefusal::TimedOut { label, .. }
            | MergeRefusal::CheckNotApproved { label, .. }
            | MergeRefusal::RegenerateNotApproved { label, .. }
            | MergeRefusal::CheckFailed { label, .. }
            | MergeRefusal::LostRace { label, .. } => label,
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
    options: MergeOptions<'_>,
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
    let mut watch = Watch {
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
    let occupied = refuse_held_work(repo, &status)?;
    let porcelain = repo.porcelain_dir().to_path_buf();
    let base_worktree = integrate::worktree_of(&porcelain, &base_ref)?;
    if let Some(wt) = &base_worktree {
        refuse_operation_in_base(&record.base, wt)?;
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
    let check = &config.merge_check;
    let checks: &[String] = if options.no_check {
        if !check.commands.is_empty() {
            store.audit(
                "merge-check-skipped",
                serde_json::json!({"label": label.to_string(), "commands": check.commands}),
            );
        }
        &[]
    } else {
        &check.commands
    };
    let approve = options.approve_check;
    if !checks.is_empty() && !merge_check::approved(store, check, approve, options.answers) {
        return refused(MergeRefusal::CheckNotApproved {
            label: label.clone(),
            commands: checks.to_vec(),
        });
    }
    let target = Target {
        repo_dir: porcelain.clone(),
        base_ref,
        base_worktree,
        base_tip,
        session_ref,
        session_worktree,
        tip,
    };
    let stopped = |e: anyhow::Error| stopped(e, label);
    let mut recomputed = false;
    let mut target = target;
    loop {
        let onto = options.onto.filter(|_| options.dry_run);
        let sides = Sides {
            dir: &porcelain,
            label,
            branch: &record.branch,
            base: &record.base,
            tip,
            base_tip: onto.unwrap_or(target.base_tip),
            files: &config.merge_files,
        };
        let Some(mut computed) =
            integrate::compute(&sides, config.merge_strategy, &watch).map_err(stopped)?
        else {
            return Ok(Merged::AlreadyIn {
                base: record.base.clone(),
            });
        };
        refuse_in_the_way(&record.base, &target, computed.new_tip)?;
        let files = &config.merge_files;
        let regenerate = Regeneration::of(files, &computed.regenerate, &record.branch);
        if regenerate.is_some()
            && !merge_check::regenerate_approved(store, files, approve, options.answers)
        {
            return refused(MergeRefusal::RegenerateNotApproved {
                label: label.clone(),
                paths: computed.regenerate.clone(),
                commands: files.regenerate_list(),
            });
        }
        if !checks.is_empty() || regenerate.is_some() {
            let outcome = merge_check::run(
                repo,
                store,
                label,
                computed.new_tip,
                regenerate.as_ref(),
                checks,
                check.timeout.to_std()?,
                &interrupted,
            )?;
            match outcome {
                merge_check::Outcome::Passed(tip) => {
                    if tip != computed.new_tip {
                        computed.new_tip = tip;
                        let paths = computed.regenerate.join(", ");
                        computed.how = format!("{}, {paths} regenerated", computed.how);
                        // The rebuilt files are changes the base's worktree must take too.
                        refuse_in_the_way(&record.base, &target, tip)?;
                    }
                }
                merge_check::Outcome::Interrupted => {
                    return refused(MergeRefusal::Interrupted {
                        label: label.clone(),
                    })
                }
                merge_check::Outcome::Failed(failure) => {
                    return refused(MergeRefusal::CheckFailed {
                        label: label.clone(),
                        base: record.base.clone(),
                        failure,
                    })
                }
            }
            // The check has a deadline of its own; the merge's counts from here.
            watch.started = Instant::now();
        }
        if options.dry_run {
            return Ok(Merged::Planned(Planned {
                base: record.base.clone(),
                how: computed.how,
                new_tip: computed.new_tip,
                checked: checks.to_vec(),
            }));
        }
        // One base and its worktree move as one step: another merge's compare-and-swap landing
        // between them, and a kill of this one there, would leave the worktree two moves behind,
        // which no recovery may bring along. A holder killed in between: its lock is broken at
        // once and its journal completed here first, so the worktree is at the base again.
        let _base_turn = base_turn(store, &target.base_ref)?;
        super::merge_journal::recover_merges(repo, store)?;
        // Compare-and-swap decides between merges; the loser makes its result again, once.
        let applied = match repo.ref_target(&target.base_ref)? {
            Some(at) if at == target.base_tip => {
                carry_out(store, label, &target, &computed, &watch)
            }
            _ => Err(MergeRefusal::LostRace {
                label: label.clone(),
                base: record.base.clone(),
            }
            .into()),
        };
        match applied {
            Ok(()) => {
                return Ok(Merged::Done {
                    base: record.base.clone(),
                    how: computed.how,
                    new_tip: computed.new_tip,
                    base_worktree: target.base_worktree,
                    checked: checks.to_vec(),
                    recomputed,
                    occupied,
                })
            }
            Err(e) => {
                let now = repo.ref_target(&target.base_ref)?;
                let lost = now.is_some_and(|at| at != target.base_tip)
                    && e.downcast_ref::<Stopped>().is_none()
                    && e.downcast_ref::<super::LifecycleError>().is_none_or(|l| {
                        !matches!(l, super::LifecycleError::MergeNotRolledBack { .. })
                    });
                match now {
                    Some(at) if lost && !recomputed => {
                        recomputed = true;
                        target.base_tip = at;
                    }
                    _ if lost => {
                        return refused(MergeRefusal::LostRace {
                            label: label.clone(),
                            base: record.base.clone(),
                        })
                    }
                    _ => return Err(stopped(e)),
                }
            }
        }
    }
}

/// The turn of the merges into `base_ref` (see the caller): a store lock named by the ref's
/// hash, waited for as long as a merge's moves may take.
fn base_turn(store: &Store, base_ref: &str) -> Result<crate::store::LockFile> {
    let name = format!(
        "merge-bases/{:016x}",
        crate::base::hash::fnv1a_64(base_ref.as_bytes())
    );
    store
        .clone()
        .with_lock_wait(super::PORCELAIN_DEADLINE)
        .lock(&name)
}

/// Journals the moves, makes them, and ends the journal (unless an undo was left unfinished: the
/// next command judges that one).
fn carry_out(
    store: &Store,
    label: &Label,
    target: &Target,
    computed: &Computed,
    watch: &Watch,
) -> Result<()> {
    // The write-ahead record: a kill from here on is completed or undone by the next command.
    let dirty = match &target.base_worktree {
        Some(wt) => uncommitted(wt)?.into_iter().collect(),
        None => Vec::new(),
    };
    let mut moves = vec![Move {
        name: target.base_ref.clone(),
        from: target.base_tip.to_string(),
        to: computed.new_tip.to_string(),
        worktree: target.base_worktree.clone(),
        dirty,
    }];
    if computed.move_session && target.tip != computed.new_tip {
        moves.push(Move {
            name: target.session_ref.clone(),
            from: target.tip.to_string(),
            to: computed.new_tip.to_string(),
            worktree: target.session_worktree.clone(),
            dirty: Vec::new(),
        });
    }
    Journal::begin(store, label, moves)?;
    crate::base::failpoint::reach("merge", "journal-written");
    let applied = integrate::apply(target, computed, label, watch);
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
    applied
}

/// Everything `cleanup` would refuse to remove, except the commits the merge brings in and the
/// processes working inside (they block only the removal after the merge): refused; those
/// processes (or that they cannot be told) are returned.
fn refuse_held_work(repo: &Repo, status: &Status) -> Result<Vec<Hazard>> {
    let found = hazards::inspect(repo, status);
    let inside = |h: &Hazard| matches!(h, Hazard::Occupied(_) | Hazard::OccupancyUnknown(_));
    let items: Vec<Hazard> = found
        .items
        .iter()
        .filter(|h| !matches!(h, Hazard::Unmerged { .. }) && !inside(h))
        .cloned()
        .collect();
    if items.is_empty() {
        return Ok(found.items.iter().filter(|h| inside(h)).cloned().collect());
    }
    let held = if items
        .iter()
        .all(|h| matches!(h, Hazard::Dirty(_) | Hazard::Operation(_)))
    {
        Held::Uncommitted
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

/// Uncommitted changes in the base's worktree in paths the move to `new_tip` changes: refused
/// (git's own rule: uncommitted changes elsewhere stay as they are).
fn refuse_in_the_way(base: &str, target: &Target, new_tip: Oid) -> Result<()> {
    let Some(wt) = &target.base_worktree else {
        return Ok(());
    };
    let changed = in_the_way(wt, target.base_tip, new_tip)?;
    if changed.is_empty() {
        return Ok(());
    }
    Err(MergeRefusal::DirtyBase {
        base: base.to_string(),
        worktree: wt.clone(),
        operations: Vec::new(),
        changed,
    }
    .into())
}

/// A rebase, merge, cherry-pick ... in progress in the base's worktree: never merged into.
fn refuse_operation_in_base(base: &str, worktree: &std::path::Path) -> Result<()> {
    let operations = session::admin_dir_of(worktree)
        .map(|admin| crate::git::operations(&admin))
        .unwrap_or_default();
    if operations.is_empty() {
        return Ok(());
    }
    Err(MergeRefusal::DirtyBase {
        base: base.to_string(),
        worktree: worktree.to_path_buf(),
        operations,
        changed: Vec::new(),
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
