//! Whether one claim is in force: the lifecycle every reader and the one writer judge alike.
//!
//! A claim is a record that is in force from the moment it is written until an event ends it;
//! nothing here recomputes it from a branch's state alone. The events, and how each is seen:
//! - **release, cleanup**: the record is gone (the claims file no longer holds it).
//! - **the owner stops being live** ([`session::is_live_given`]): the claim has *lapsed*; it is shown
//!   as such, and comes back in force when the owner is active again (the owner never let go).
//! - **the commit it was recorded for never landed**: a pre-commit's claims of new paths are
//!   named in the record's [`InFlight`] entry; they are in force while the committing git
//!   process runs (or while that cannot be told), and once it is gone the commit landed (the
//!   worktree's HEAD moved) or was abandoned (HEAD never moved: the claims end).
//! - **the claimed content reached base** (commit claims only, once landed): the owner's branch
//!   is merged into its base, or base holds at the path exactly what the owner's branch holds
//!   (a squash or a cherry-pick).
//!
//! Invariants a reader must not break:
//! - An ended claim is never in force again for any reader: whoever acts on a path and finds a
//!   claim on it ended removes the record under the store's lock ([`super::end_claims`]), so a
//!   later change of branch or base cannot revive it; a new claim is a new record.
//! - Explicit and edit claims end only by release, cleanup or the owner's lapse: they say "I
//!   am working on this", which no merge answers.
//! - Judging reads git objects only for the claims being asked about, each session's tip, base
//!   and merge state at most once.

use crate::base::process::Liveness;
use crate::git::{Oid, Repo};
use crate::session::{InFlight, SessionRecord};
use anyhow::Result;
use std::cell::OnceCell;

use super::ClaimHow;

/// Where a claim stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    InForce,
    /// Its session is not live: no owner now, and it would be again were the session active.
    Lapsed,
    /// An event ended it; the record only waits to be removed.
    Ended,
}

/// Where a commit in flight stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flight {
    /// Its git process runs, or whether it does cannot be told.
    Running,
    /// Its process is gone and the worktree's HEAD moved: it landed.
    Landed,
    /// Its process is gone and HEAD never moved.
    Abandoned,
}

/// How the commit `e` stands now.
pub fn flight(repo: &Repo, e: &InFlight) -> Flight {
    let gone = match &e.process {
        Some(p) => p.liveness() == Liveness::Dead,
        // Nothing to watch: only a moved HEAD tells.
        None => false,
    };
    let now = head_of(repo, &e.gitdir)
        .map(|h| h.to_string())
        .unwrap_or_default();
    match (gone, now != e.head) {
        (true, true) => Flight::Landed,
        (true, false) => Flight::Abandoned,
        (false, true) if e.process.is_none() => Flight::Landed,
        _ => Flight::Running,
    }
}

/// The commit the worktree whose git directory is `gitdir` has checked out.
pub fn head_of(repo: &Repo, gitdir: &std::path::Path) -> Option<Oid> {
    match crate::git::worktree_head::read_head(gitdir).ok()? {
        crate::git::worktree_head::Head::Detached(id) => Some(id),
        crate::git::worktree_head::Head::Branch(full) => repo.ref_target(&full).ok().flatten(),
    }
}

/// What a reader learned about one session that holds claims (each fact computed once).
pub(super) struct SessionFacts {
    pub record: SessionRecord,
    pub last_activity: crate::base::clock::Time,
    pub live: bool,
    /// Its worktree's git directory (found once: liveness, its HEAD and its tip all read there).
    admin: Option<std::path::PathBuf>,
    merged: OnceCell<bool>,
    tip: OnceCell<Option<Oid>>,
    base: OnceCell<Option<Oid>>,
    /// The commit its worktree has checked out (read once: a refusal or a merge of the
    /// owner's work asks it for every path).
    head: OnceCell<Option<Oid>>,
    /// Its commits in flight, each with how it stands.
    flights: OnceCell<Vec<(InFlight, Flight)>>,
}

impl SessionFacts {
    pub fn new(record: SessionRecord, config: &crate::config::Config, now: super::Time) -> Self {
        let admin = crate::session::admin_dir_of(&record.path);
        let last_activity = crate::session::last_activity_in(&record, admin.as_deref());
        let live = crate::session::is_live_given(&record, config, now, last_activity);
        SessionFacts {
            record,
            last_activity,
            live,
            admin,
            merged: OnceCell::new(),
            tip: OnceCell::new(),
            base: OnceCell::new(),
            head: OnceCell::new(),
            flights: OnceCell::new(),
        }
    }

    /// Where this session's claim of kind `how` on `path` stands.
    pub fn standing(&self, repo: &Repo, path: &str, how: ClaimHow) -> Result<Standing> {
        if !self.live {
            return Ok(Standing::Lapsed);
        }
        if how != ClaimHow::Commit {
            return Ok(Standing::InForce);
        }
        match self.flight_of(repo, path)? {
            Some(Flight::Running) => return Ok(Standing::InForce),
            Some(Flight::Abandoned) => return Ok(Standing::Ended),
            Some(Flight::Landed) | None => {}
        }
        Ok(if self.content_in_base(repo, path)? {
            Standing::Ended
        } else {
            Standing::InForce
        })
    }

    /// How the commit in flight that claimed `path` anew stands, if one did. The session's
    /// in-flight file is read (once) only here: for a commit claim being judged.
    fn flight_of(&self, repo: &Repo, path: &str) -> Result<Option<Flight>> {
        let flights = match self.flights.get() {
            Some(f) => f,
            None => {
                let store = crate::store::Store::of(repo);
                let commits = crate::session::in_flight::of_session(&store, &self.record)?;
                let judged = commits
                    .into_iter()
                    .map(|e| {
                        let f = flight(repo, &e);
                        (e, f)
                    })
                    .collect();
                self.flights.get_or_init(|| judged)
            }
        };
        // The newest entry that names the path decides.
        Ok(flights
            .iter()
            .rev()
            .find(|(e, _)| e.paths.iter().any(|p| p == path))
            .map(|(_, f)| *f))
    }

    /// Whether the owner's version of `path` has reached base: its branch is merged, or base
    /// holds at `path` what the branch holds.
    fn content_in_base(&self, repo: &Repo, path: &str) -> Result<bool> {
        if self.merged(repo)? {
            return Ok(true);
        }
        let (Some(tip), Some(base)) = (self.tip(repo), self.base(repo)) else {
            return Ok(false);
        };
        let objects = repo.objects();
        Ok(objects.entry_in_commit(tip, path)? == objects.entry_in_commit(base, path)?)
    }

    fn merged(&self, repo: &Repo) -> Result<bool> {
        if let Some(m) = self.merged.get() {
            return Ok(*m);
        }
        let m = super::branch_merged(repo, &self.record)?;
        Ok(*self.merged.get_or_init(|| m))
    }

    /// The owner's branch tip; for a session attached to a worktree, that worktree's HEAD.
    pub fn tip(&self, repo: &Repo) -> Option<Oid> {
        *self.tip.get_or_init(|| {
            let r = &self.record;
            if r.attached || r.branch.is_empty() {
                self.head(repo)
            } else {
                repo.branch_tip(&r.branch).ok().flatten()
            }
        })
    }

    /// The commit its worktree has checked out.
    fn head(&self, repo: &Repo) -> Option<Oid> {
        *self
            .head
            .get_or_init(|| self.admin.as_deref().and_then(|a| head_of(repo, a)))
    }

    fn base(&self, repo: &Repo) -> Option<Oid> {
        *self.base.get_or_init(|| {
            let r = &self.record;
            repo.resolve_commit(&r.base)
                .ok()
                .flatten()
                .or_else(|| Oid::from_str(&r.base_commit).ok())
        })
    }

    /// The owner's own versions of `path` (`None`: deleted): what its branch holds there, or
    /// its worktree's last commit, where that differs from its base (what the owner never
    /// changed is base's content, not its own). Empty when it has none.
    pub fn owners_versions(&self, repo: &Repo, path: &str) -> Vec<Option<Oid>> {
        let objects = repo.objects();
        let at = |commit: Option<Oid>| commit.and_then(|c| objects.entry_in_commit(c, path).ok());
        let base_commit = self.base(repo);
        let tip = self.tip(repo);
        let head = self.head(repo);
        // A side at base itself holds nothing of the owner's own (the usual case of a refusal:
        // a path claimed, not yet changed): no tree is read for it.
        let sides: Vec<Oid> = [tip, head]
            .into_iter()
            .flatten()
            .filter(|c| Some(*c) != base_commit)
            .collect();
        if sides.is_empty() {
            return Vec::new();
        }
        let base = at(base_commit);
        let mut out: Vec<Option<Oid>> = sides
            .into_iter()
            .filter_map(|c| at(Some(c)))
            .filter(|theirs| Some(*theirs) != base)
            .collect();
        out.dedup();
        out
    }
}
