//! Inspecting a session: the state `list` shows and everything `list`, `info`, `cleanup` and
//! `prune` need to know about one session ([`Status`]), from ground truth git keeps.
//!
//! Invariants a reader must not break:
//! - Only a directory that really is a worktree of this repository is read; a record pointing
//!   elsewhere is reported by the commands, never followed.
//! - A worktree whose files cannot be read is shown with the reason and marked `dirty_unknown`,
//!   so every removal refuses it; it is never dropped.
//! - Owned paths are counted from the claims index (no claims file is parsed for `list`);
//!   [`owned_claims`] reads them for `info`, which shows them.

use super::removal::{entries_left, lost_tracked_files, Damage, Removal};
use super::{admin_dir_of, last_activity, Claim, ClaimHow, RecordState, SessionRecord};
use crate::base::clock::{self, Time};
use crate::config::Config;
use crate::git::{self, Merged, Repo};
use crate::store::Store;
use anyhow::Result;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The state `list` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    Creating,
    Active,
    Idle,
    Missing,
    /// The worktree directory is there, but a removal did not finish in it, or git no longer
    /// knows it as a worktree: [`Status::damage`] says which.
    Damaged,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Creating => "creating",
            State::Active => "active",
            State::Idle => "idle",
            State::Missing => "missing",
            State::Damaged => "damaged",
        }
    }
}

/// Everything `list`, `info`, `cleanup` and `prune` need to know about one session.
#[derive(Debug, Clone)]
pub struct Status {
    pub record: SessionRecord,
    pub state: State,
    pub live: bool,
    pub merged: Merged,
    pub ahead: usize,
    pub behind: usize,
    pub tip: Option<crate::git::Oid>,
    pub base_tip: Option<crate::git::Oid>,
    /// Uncommitted and untracked (not ignored) files, repo-relative.
    pub dirty: Vec<String>,
    /// How many of its claims are in force (the claims index's counts: no claims file is
    /// parsed for it; [`owned_claims`] reads them when they are shown).
    pub owned: usize,
    pub last_activity: Time,
    /// The worktree's lock reason, control characters escaped so it stays on one line.
    pub locked: Option<String>,
    /// What the worktree's ground truth says beyond the record, one line each.
    pub warnings: Vec<String>,
    /// The worktree's files could not be read: `dirty` is not known to be empty.
    pub dirty_unknown: bool,
    /// What is wrong with the worktree beyond any state (set when `state` is `Damaged`).
    pub damage: Option<Damage>,
    /// The record of a removal that did not finish, if one is there.
    pub removal: Option<Removal>,
}

/// Inspects one session. Opens its own repository handles, so it may run on any thread.
pub fn inspect(
    common_dir: &Path,
    record: SessionRecord,
    config: &Config,
    now: Time,
) -> Result<Status> {
    let worktrees = Worktrees::read(common_dir);
    let view = claims_view(common_dir)?;
    inspect_with(common_dir, record, config, now, &worktrees, &view)
}

/// How long `list`, `info` and the removals wait for the claims index lock before answering
/// without writing a refreshed index back.
const INDEX_WRITE_WAIT: std::time::Duration = std::time::Duration::from_millis(50);

/// The claims index, for the per-session counts of claims.
fn claims_view(common_dir: &Path) -> Result<crate::ownership::ClaimsView> {
    crate::ownership::ClaimsView::load(&Store::for_common_dir(common_dir), Some(INDEX_WRITE_WAIT))
}

/// Whether the session has no commit in flight (unreadable counts as some: its claims stay in
/// force).
fn no_commits_in_flight(common_dir: &Path, record: &SessionRecord) -> bool {
    super::in_flight::of_session(&Store::for_common_dir(common_dir), record)
        .is_ok_and(|c| c.is_empty())
}

/// The claims in force of an inspected session, as `info` shows them: none unless it is live;
/// commit claims end with a merge of its branch.
pub fn owned_claims(store: &Store, status: &Status) -> Result<Vec<Claim>> {
    if !status.live {
        return Ok(Vec::new());
    }
    let merged = status.merged.is_merged();
    Ok(crate::ownership::claims_of(store, &status.record)?
        .into_iter()
        .filter(|c| !(c.how == ClaimHow::Commit && merged))
        .collect())
}

/// The linked worktrees git has registered, with canonical paths, read once for many
/// [`inspect`]s (reading them per session made `list` quadratic in the number of sessions).
pub struct Worktrees(Vec<(PathBuf, git::WorktreeEntry)>);

impl Worktrees {
    pub fn read(common_dir: &Path) -> Worktrees {
        Worktrees(
            git::linked_worktrees(common_dir)
                .into_iter()
                .map(|w| {
                    (
                        std::fs::canonicalize(&w.path).unwrap_or_else(|_| w.path.clone()),
                        w,
                    )
                })
                .collect(),
        )
    }

    /// The entry of the worktree at `path`, as [`git::worktree_entry`] finds it.
    fn find(&self, path: &Path) -> Option<&git::WorktreeEntry> {
        let want = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        self.0
            .iter()
            .find(|(canonical, w)| w.path == path || *canonical == want)
            .map(|(_, w)| w)
    }
}

fn inspect_with(
    common_dir: &Path,
    record: SessionRecord,
    config: &Config,
    now: Time,
    worktrees: &Worktrees,
    view: &crate::ownership::ClaimsView,
) -> Result<Status> {
    let repo = Repo::open(common_dir)?;
    let exists = record.path.is_dir();
    let last = last_activity(&record);
    let removal = if record.attached {
        None
    } else {
        Removal::load(&Store::for_common_dir(common_dir), &record.label)?.filter(Removal::abandoned)
    };
    let damage = (exists && !record.attached && record.state != RecordState::Creating)
        .then(|| damage_of(&record, worktrees, removal.as_ref()))
        .flatten();
    let recent = now - last <= config.live_for;
    let state = if record.state == RecordState::Creating {
        State::Creating
    } else if !exists {
        State::Missing
    } else if damage.is_some() {
        State::Damaged
    } else if recent {
        State::Active
    } else {
        State::Idle
    };
    // A damaged session still owns what it claimed while it is recent: it may hold work.
    let live = state == State::Active || (state == State::Damaged && recent);
    let tip = if record.branch.is_empty() {
        None
    } else {
        repo.branch_tip(&record.branch)?
    };
    let base_tip = repo
        .resolve_commit(&record.base)?
        .or_else(|| crate::git::Oid::from_str(&record.base_commit).ok());
    // An attached session's branch is not its own (it may be base itself): it is never called
    // merged, since nothing of it is removed when it is; how far it is from base is still true.
    let (merged, ahead, behind) = match (tip, base_tip) {
        (Some(t), Some(b)) => {
            let (ahead, behind) = repo.ahead_behind(t, b)?;
            let merged = if record.attached {
                Merged::No
            } else {
                repo.merge_state(t, b)?
            };
            (merged, ahead, behind)
        }
        _ => (Merged::No, 0, 0),
    };
    // Only read the status of a directory that really is a worktree of this repository: a
    // record pointing elsewhere is reported by the commands, never followed.
    let ours = admin_dir_of(&record.path).is_some_and(|a| a.starts_with(common_dir));
    let mut warnings = Vec::new();
    // A worktree whose files cannot be read (a HEAD libgit2 refuses, say) is shown with the
    // reason, never dropped; `dirty_unknown` makes every removal refuse it.
    // A damaged worktree's files are not judged here: every removal but the one that finishes
    // it refuses it.
    let mut dirty_unknown = damage.is_some();
    let dirty = if exists && ours && state != State::Creating && damage.is_none() {
        match dirty_files(&record.path) {
            Ok(d) => d,
            Err(e) => {
                dirty_unknown = true;
                warnings.push(format!(
                    "its files cannot be read: {}",
                    one_line(&format!("{e:#}"))
                ));
                Vec::new()
            }
        }
    } else {
        Vec::new()
    };
    let locked = worktrees
        .find(&record.path)
        .and_then(|w| w.locked.as_deref())
        .map(|reason| one_line(reason.trim()));
    if state != State::Creating {
        warnings.extend(ground_truth_warnings(
            &record,
            tip,
            last,
            now,
            damage.is_some(),
        ));
    }
    let owned = view
        .session(&record.label)
        // Commit claims in flight are in force whatever the branch's state.
        .map_or(0, |s| {
            s.counts.in_force(
                live,
                merged.is_merged() && no_commits_in_flight(common_dir, &record),
            )
        });
    Ok(Status {
        record,
        state,
        live,
        merged,
        ahead,
        behind,
        tip,
        base_tip,
        dirty,
        owned,
        last_activity: last,
        locked,
        warnings,
        dirty_unknown,
        damage,
        removal,
    })
}

/// What is wrong with the worktree at an existing directory of a created session (see
/// [`Damage`]): a removal whose owner died or that git could not finish, unless it never
/// started (git still knows the worktree and no tracked file is missing); or a directory no admin
/// entry of git names.
fn damage_of(
    record: &SessionRecord,
    worktrees: &Worktrees,
    removal: Option<&Removal>,
) -> Option<Damage> {
    // An admin entry that names the directory: git knows it (a broken `.git` link there is
    // repaired by `git worktree repair`, and warned about as such).
    let registered = worktrees.find(&record.path).is_some();
    if let Some(removal) = removal {
        if registered && removal.failed.is_none() && !lost_tracked_files(&record.path) {
            return None;
        }
        let (left, left_count) = entries_left(&record.path);
        return Some(Damage::RemovalUnfinished {
            failed: removal.failed.clone(),
            left,
            left_count,
        });
    }
    if registered {
        return None;
    }
    // The `.git` link leads to an admin entry that names another directory: a moved worktree,
    // which `git worktree repair` registers again.
    let repairable = admin_dir_of(&record.path).is_some_and(|a| a.is_dir());
    let (left, left_count) = entries_left(&record.path);
    Some(Damage::Unregistered {
        repairable,
        left,
        left_count,
    })
}

/// `text` with control characters (newlines included) escaped, so it stays on one line.
pub fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// What the worktree's ground truth says beyond the record, one line each, read from files
/// only (`list` runs this for every session): a missing branch, activity dated in the future, a
/// broken `.git` link, a HEAD that is a symlink, detached or on another branch, an operation in
/// progress, a submodule not initialised.
fn ground_truth_warnings(
    record: &SessionRecord,
    tip: Option<crate::git::Oid>,
    last: Time,
    now: Time,
    damaged: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    if !record.attached && !record.branch.is_empty() && tip.is_none() {
        out.push(format!(
            "branch {} missing (deleted outside git-session)",
            record.branch
        ));
    }
    if last > now + chrono::Duration::minutes(1) {
        out.push(format!(
            "last activity {} is in the future (clock skew or a hand-edited record)",
            clock::rfc3339(last)
        ));
    }
    if !record.path.is_dir() || damaged {
        return out;
    }
    let Some(admin) = admin_dir_of(&record.path).filter(|a| a.is_dir()) else {
        out.push("its .git link is broken; repair it with `git worktree repair`".to_string());
        return out;
    };
    let head = admin.join("HEAD");
    if std::fs::symlink_metadata(&head).is_ok_and(|m| m.file_type().is_symlink()) {
        out.push(format!(
            "HEAD ({}) is a symbolic link, which git refuses in a worktree; replace it with the file it points to",
            head.display()
        ));
    }
    match crate::git::read_head(&admin) {
        Ok(crate::git::Head::Branch(r)) => {
            let short = r.strip_prefix("refs/heads/").unwrap_or(&r);
            if !record.attached && short != record.branch {
                out.push(format!(
                    "HEAD is on branch {}, not {}",
                    one_line(short),
                    record.branch
                ));
            }
        }
        Ok(crate::git::Head::Detached(id)) => {
            out.push(format!("HEAD detached at {}", &id.to_string()[..10]))
        }
        Err(e) => out.push(format!(
            "HEAD cannot be read: {}",
            one_line(&format!("{e:#}"))
        )),
    }
    for op in crate::git::operations(&admin) {
        out.push(format!("a {} is in progress", op.as_str()));
    }
    if let Ok(modules) = crate::store::read_text(&record.path.join(".gitmodules"), 1 << 20) {
        for line in modules.lines() {
            let Some(sub) = line
                .trim()
                .strip_prefix("path")
                .and_then(|r| r.trim_start().strip_prefix('='))
                .map(str::trim)
            else {
                continue;
            };
            if !sub.is_empty()
                && std::fs::symlink_metadata(record.path.join(sub).join(".git")).is_err()
            {
                out.push(format!("submodule {} not initialized", one_line(sub)));
            }
        }
    }
    out
}

/// Uncommitted (staged or not) and untracked, not ignored, files of the worktree at `path`:
/// the path set `git status --porcelain --untracked-files=all` lists, computed in-process by
/// [`crate::git::status`], so no fsmonitor or filter program named by the repository runs.
pub fn dirty_files(path: &Path) -> Result<Vec<String>> {
    crate::git::status::dirty_files(path)
}

/// Inspects many sessions in parallel (each on its own repository handle).
pub fn inspect_all(
    common_dir: &Path,
    records: Vec<SessionRecord>,
    config: &Config,
    now: Time,
) -> Vec<(super::Label, Result<Status>)> {
    use rayon::prelude::*;
    let worktrees = Worktrees::read(common_dir);
    let view = match claims_view(common_dir) {
        Ok(view) => view,
        Err(e) => {
            let e = format!("{e:#}");
            return records
                .into_iter()
                .map(|r| (r.label, Err(anyhow::anyhow!("reading the claims: {e}"))))
                .collect();
        }
    };
    records
        .into_par_iter()
        .map(|r| {
            let label = r.label.clone();
            (
                label,
                inspect_with(common_dir, r, config, now, &worktrees, &view),
            )
        })
        .collect()
}
