//! Path ownership: who owns a repo-relative path, and the commands' policy for claiming and
//! releasing.
//!
//! The module is split along its seams: [`claims_file`] is the store entity (`claims/<label>.toml`,
//! the source of truth, and its migration out of old session records), [`claims_index`] the format
//! of the derived `claims.index` and its block reader, [`lookup`] the searches in it, [`refresh`]
//! keeping it up to date (when it is trusted, how it is rebuilt), [`resolve`] the answer to "who
//! owns this path", and this file the policy the commands apply.
//!
//! Invariants a reader must not break:
//! - Claims are made under the `claims.index` lock (check owners, write the claims file, rewrite
//!   the index), so two sessions claiming one path at once cannot both win: first claim wins,
//!   for the path itself, what is above it and (a directory claim) what is below it.
//! - The claims files are the truth; the index is derived from them and rebuilt whenever it is
//!   missing, damaged or stale, and is exact when it is used (see [`refresh`]).
//! - First claim wins is decided in one place, [`claim`] (every route: explicit, a commit's
//!   pre-commit, an agent's edit), under the index lock: two racing claimers never both win,
//!   whatever their speeds, and a claim of several paths is all or nothing.
//! - Whether a claim is in force is [`standing`]'s one judgement; an ended claim is removed by
//!   whoever acts on its path ([`end_claims`]) and never comes back.

pub mod claims_file;
pub mod claims_index;
pub mod escapes;
pub mod leases;
pub mod lookup;
pub mod path;
pub mod reader;
pub mod refresh;
pub mod resolve;
pub mod standing;

pub use claims_file::{Claim, ClaimHow};
pub use claims_index::{ClaimsView, DamagedIndex};
pub use path::RepoPath;
pub use resolve::{branch_merged, sessions_in_worktree, Resolver};

use crate::base::clock::{self, Time};
use crate::config::Config;
use crate::git::Repo;
use crate::session::{self, Label, SessionRecord};
use crate::store::Store;
use anyhow::Result;

/// The derived claims index, relative to the store root.
pub const INDEX: &str = "claims.index";

/// Another live session's claim on a path.
#[derive(Debug, Clone, PartialEq)]
pub struct Owner {
    pub label: String,
    pub branch: String,
    /// The claimed path (the asked path itself, or a directory above or below it).
    pub path: String,
    pub how: ClaimHow,
    pub since: Time,
    pub last_activity: Time,
}

/// The live session other than `me` that owns `path` (repo-relative, `/`-separated), if any.
/// Paths matching `[guard] shared` are owned by nobody.
pub fn owner_of(
    repo: &Repo,
    config: &Config,
    path: &str,
    me: Option<&str>,
) -> Result<Option<Owner>> {
    let store = crate::store::Store::of(repo);
    refresh::with_view(&store, None, |view| {
        Ok(Resolver::new(repo, config, &store, view)
            .resolve(path, me)?
            .owner)
    })
}

/// Whether session `label` holds a claim on exactly `path` (from the index: no claims file is
/// parsed, so the context hook can ask on every edit).
pub fn holds(store: &Store, label: &Label, path: &RepoPath) -> Result<bool> {
    refresh::with_view(store, None, |view| {
        let mut hits = Vec::new();
        view.exact(path, &mut hits)?;
        Ok(hits
            .iter()
            .any(|h| *label == view.sessions[h.session].label))
    })
}

/// The commit a pre-commit claims paths for: the git process making it, the git directory of
/// the worktree it is made in, and that worktree's HEAD (empty when unborn).
#[derive(Debug, Clone)]
pub struct CommitStart {
    pub process: Option<crate::base::process::ProcessId>,
    pub gitdir: std::path::PathBuf,
    pub head: String,
}

/// Records `paths` as claimed by session `label` with `how` (and refreshes its last_seen).
/// First claim wins, all or nothing: when another live session owns any of the paths, nothing
/// is claimed and the owners are returned.
pub fn claim(
    repo: &Repo,
    config: &Config,
    label: &Label,
    paths: &[RepoPath],
    how: ClaimHow,
) -> Result<Vec<Owner>> {
    claim_as(repo, config, label, paths, how, None)
}

/// [`claim`] for the commit a pre-commit checks: the new claims are in force at once, as the
/// commit's claims in flight, until the commit lands or is abandoned ([`standing`]).
pub fn claim_for_commit(
    repo: &Repo,
    config: &Config,
    label: &Label,
    paths: &[RepoPath],
    start: CommitStart,
) -> Result<Vec<Owner>> {
    claim_as(repo, config, label, paths, ClaimHow::Commit, Some(start))
}

fn claim_as(
    repo: &Repo,
    config: &Config,
    label: &Label,
    paths: &[RepoPath],
    how: ClaimHow,
    start: Option<CommitStart>,
) -> Result<Vec<Owner>> {
    let store = crate::store::Store::of(repo);
    let mut lock = store.lock(INDEX)?;
    // Under the index lock, the view is not written back (the lock is ours); it is rewritten
    // below with the new claims.
    let (refused, ended) = refresh::with_view(&store, None, |view| {
        let mut refused = Vec::new();
        let mut resolver = Resolver::new(repo, config, &store, view);
        for path in paths {
            // First claim wins for every path the new claim covers: the path itself and what
            // is above it (resolve), and, for a directory, everything below it.
            if let Some(owner) = resolver.resolve(path, Some(label.as_str()))?.owner {
                refused.push(owner);
                continue;
            }
            refused.extend(resolver.owners_below(path, Some(label.as_str()))?);
        }
        Ok((refused, resolver.take_ended()))
    })?;
    let (mine, others): (Vec<_>, Vec<_>) =
        ended.into_iter().partition(|(l, _)| l == label.as_str());
    remove_ended(repo, &store, &others)?;
    if !refused.is_empty() {
        // All or nothing: nothing is claimed; what was found ended is removed all the same.
        remove_ended(repo, &store, &mine)?;
        index_written(refresh::write_index(&store, &mut lock));
        return Ok(refused);
    }
    let now = clock::now();
    let ended_mine: Vec<&str> = mine.iter().map(|(_, p)| p.as_str()).collect();
    let settled = settle(repo, &store, label)?;
    let found = claims_file::modify(
        &store,
        label,
        |claims, commits| {
            settled.drop_from(claims, &ended_mine);
            settled.keep_running(commits);
            let mut added = Vec::new();
            for path in paths {
                match claims.iter_mut().find(|c| **path == c.path) {
                    Some(existing) => {
                        // Keep the first `since`; a more durable kind replaces a weaker one.
                        if durability(how) > durability(existing.how) {
                            existing.how = how;
                        }
                    }
                    None => {
                        added.push(path.to_string());
                        claims.push(Claim {
                            path: path.to_string(),
                            how,
                            since: now,
                        })
                    }
                }
            }
            if let (Some(start), false) = (start, added.is_empty()) {
                commits.push(crate::session::InFlight {
                    at: now,
                    process: start.process,
                    gitdir: start.gitdir,
                    head: start.head,
                    paths: added,
                });
            }
        },
        |record| {
            if record.last_seen < now {
                record.last_seen = now;
            }
        },
    )?;
    if !found {
        return Err(session::no_such_session(label).into());
    }
    index_written(refresh::write_index(&store, &mut lock));
    Ok(refused)
}

/// What the commits in flight of one session came to: those still running are kept, and the
/// claims of an abandoned one end.
struct Settled {
    running: Vec<crate::base::clock::Time>,
    /// Paths an abandoned commit claimed anew, with when.
    abandoned: Vec<(String, crate::base::clock::Time)>,
}

impl Settled {
    /// Removes the commit claims on `ended` paths and those of abandoned commits.
    fn drop_from(&self, claims: &mut Vec<Claim>, ended: &[&str]) {
        claims.retain(|c| {
            c.how != ClaimHow::Commit
                || !(ended.contains(&c.path.as_str())
                    || self
                        .abandoned
                        .iter()
                        .any(|(p, at)| *p == c.path && c.since >= *at))
        });
    }

    fn keep_running(&self, commits: &mut Vec<crate::session::InFlight>) {
        commits.retain(|e| self.running.contains(&e.at));
    }
}

/// How the commits in flight of session `label` stand now (see [`standing::flight`]).
fn settle(repo: &Repo, store: &Store, label: &Label) -> Result<Settled> {
    let mut settled = Settled {
        running: Vec::new(),
        abandoned: Vec::new(),
    };
    if let Some(record) = session::load(store, label)? {
        for e in &session::in_flight::of_session(store, &record)? {
            match standing::flight(repo, e) {
                standing::Flight::Running => settled.running.push(e.at),
                standing::Flight::Landed => {}
                standing::Flight::Abandoned => settled
                    .abandoned
                    .extend(e.paths.iter().map(|p| (p.clone(), e.at))),
            }
        }
    }
    Ok(settled)
}

/// Removes the claims found ended (`(label, path)`), session by session, and settles those
/// sessions' commits in flight. The caller holds the index lock and rewrites the index after.
fn remove_ended(repo: &Repo, store: &Store, ended: &[resolve::Ended]) -> Result<()> {
    let mut labels: Vec<&str> = ended.iter().map(|(l, _)| l.as_str()).collect();
    labels.dedup();
    for l in labels {
        let Ok(label) = Label::new(l) else {
            continue;
        };
        let paths: Vec<&str> = ended
            .iter()
            .filter(|(o, _)| o == l)
            .map(|(_, p)| p.as_str())
            .collect();
        let settled = settle(repo, store, &label)?;
        // Not the owner's activity: its last_seen stays.
        claims_file::modify(
            store,
            &label,
            |claims, commits| {
                settled.drop_from(claims, &paths);
                settled.keep_running(commits);
            },
            |_| {},
        )?;
        store.audit(
            "claims-ended",
            serde_json::json!({"label": l, "paths": paths}),
        );
    }
    Ok(())
}

/// Removes the claims `ended` (found ended by a reader acting on their paths: the guard), under
/// the index lock, so that none comes back. Best effort for a reader: a busy lock is skipped.
pub fn end_claims(repo: &Repo, ended: &[resolve::Ended]) -> Result<()> {
    if ended.is_empty() {
        return Ok(());
    }
    let store = crate::store::Store::of(repo);
    let mut lock = store.lock(INDEX)?;
    remove_ended(repo, &store, ended)?;
    index_written(refresh::write_index(&store, &mut lock));
    Ok(())
}

/// The commit made in the worktree whose git directory is `gitdir` landed (its post-commit
/// runs): session `label`'s claims in flight there are ordinary commit claims from now on.
pub fn landed(repo: &Repo, label: &Label, gitdir: &std::path::Path) -> Result<()> {
    let store = crate::store::Store::of(repo);
    let mut lock = store.lock(INDEX)?;
    claims_file::modify(
        &store,
        label,
        |_, commits| commits.retain(|e| e.gitdir != gitdir),
        |_| {},
    )?;
    index_written(refresh::write_index(&store, &mut lock));
    Ok(())
}

/// Removes claims of session `label`: the given paths, or all of them with `paths == None`.
/// Returns the paths actually released.
pub fn release(repo: &Repo, label: &Label, paths: Option<&[RepoPath]>) -> Result<Vec<String>> {
    let store = crate::store::Store::of(repo);
    let mut lock = store.lock(INDEX)?;
    let mut released = Vec::new();
    let now = clock::now();
    let found = claims_file::modify(
        &store,
        label,
        |claims, _| {
            claims.retain(|c| {
                let drop = paths.is_none_or(|w| w.iter().any(|p| *p == c.path));
                if drop {
                    released.push(c.path.clone());
                }
                !drop
            });
        },
        |record| {
            if record.last_seen < now {
                record.last_seen = now;
            }
        },
    )?;
    if !found {
        return Err(session::no_such_session(label).into());
    }
    index_written(refresh::write_index(&store, &mut lock));
    Ok(released)
}

/// Drops a claims file no record owns before a session of that label begins
/// ([`claims_file::drop_orphan`]); says so, and notes it in the audit log.
pub fn drop_orphan_claims(store: &Store, label: &Label) -> Result<()> {
    if claims_file::drop_orphan(store, label)? {
        store.audit("orphan-claims", serde_json::json!({"label": label}));
        crate::base::announce::emit(crate::base::announce::Announcement::OrphanClaimsDropped {
            label: label.to_string(),
        });
    }
    Ok(())
}

/// Removes a session's claims and then its record (see [`claims_file::remove_session`]), then
/// its lease ([`leases::release`]).
pub fn remove_session(store: &Store, label: &Label) -> Result<()> {
    claims_file::remove_session(store, label)?;
    // After the record: a kill between the two leaves a lease without a session, which is in
    // force for nobody and dropped by the next lease or prune (`leases`).
    leases::release(store, label)
}

/// The claims of session `record` (its claims file, or what an old-format record embeds).
pub fn claims_of(store: &Store, record: &SessionRecord) -> Result<Vec<Claim>> {
    claims_file::of_session(store, record)
}

/// Explicit claims and edits end only by release, cleanup or lapse; commit claims also when
/// their content reaches base ([`standing`]).
fn durability(how: ClaimHow) -> u8 {
    match how {
        ClaimHow::Commit => 0,
        ClaimHow::Edit => 1,
        ClaimHow::Explicit => 2,
    }
}

/// The claims file, the source of truth, is already written: a derived index that cannot be
/// written is a warning (it is rebuilt from the store next time), never a failed command.
fn index_written(result: Result<()>) {
    if let Err(e) = result {
        crate::base::announce::emit(crate::base::announce::Announcement::ClaimsIndexNotUpdated {
            error: format!("{e:#}"),
        });
    }
}

/// `claimed explicitly`, `claimed by commit`, `claimed by its agent's edit`.
pub fn how_phrase(how: ClaimHow) -> &'static str {
    match how {
        ClaimHow::Explicit => "claimed explicitly",
        ClaimHow::Commit => "claimed by commit",
        ClaimHow::Edit => "claimed by its agent's edit",
    }
}

/// Every claim of the sessions `records` with whether it is in force ([`standing`]'s
/// judgement, the one the guard makes), sorted by path, for `claims`.
pub fn claims_with_state(
    repo: &Repo,
    config: &Config,
    records: &[SessionRecord],
) -> Result<Vec<(Label, Claim, bool)>> {
    let store = crate::store::Store::of(repo);
    let now = clock::now();
    let mut out = Vec::new();
    for r in records {
        let claims = claims_of(&store, r)?;
        let facts = standing::SessionFacts::new(r.clone(), config, now);
        for c in claims {
            let in_force = facts.standing(repo, &c.path, c.how)? == standing::Standing::InForce;
            out.push((r.label.clone(), c, in_force));
        }
    }
    out.sort_by(|a, b| a.1.path.cmp(&b.1.path).then(a.0.cmp(&b.0)));
    Ok(out)
}
