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
//! - Explicit and edit claims outlive a merge of the session's branch; commit claims end with it.

pub mod claims_file;
pub mod claims_index;
pub mod lookup;
pub mod path;
pub mod reader;
pub mod refresh;
pub mod resolve;

pub use claims_file::{Claim, ClaimHow};
pub use claims_index::{ClaimCounts, ClaimsView, DamagedIndex};
pub use path::RepoPath;
pub use resolve::{branch_merged, sessions_in_worktree, Resolution, Resolver};

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

/// Records `paths` as claimed by session `label` with `how` (and refreshes its last_seen). Paths
/// another live session owns are not claimed; they are returned with their owner (first claim
/// wins).
pub fn claim(
    repo: &Repo,
    config: &Config,
    label: &Label,
    paths: &[RepoPath],
    how: ClaimHow,
) -> Result<Vec<Owner>> {
    let store = crate::store::Store::of(repo);
    let mut lock = store.lock(INDEX)?;
    // Under the index lock, the view is not written back (the lock is ours); it is rewritten
    // below with the new claims.
    let (refused, free) = refresh::with_view(&store, None, |view| {
        let mut refused = Vec::new();
        let mut free = Vec::new();
        let mut resolver = Resolver::new(repo, config, &store, view);
        for path in paths {
            // First claim wins for every path the new claim covers: the path itself and what
            // is above it (resolve), and, for a directory, everything below it.
            if let Some(owner) = resolver.resolve(path, Some(label.as_str()))?.owner {
                refused.push(owner);
                continue;
            }
            let below = resolver.owners_below(path, Some(label.as_str()))?;
            if below.is_empty() {
                free.push(path);
            } else {
                refused.extend(below);
            }
        }
        Ok((refused, free))
    })?;
    let now = clock::now();
    let found = claims_file::modify(&store, label, now, |claims| {
        for path in &free {
            match claims.iter_mut().find(|c| **path == c.path) {
                Some(existing) => {
                    // Keep the first `since`; a more durable kind replaces a weaker one.
                    if durability(how) > durability(existing.how) {
                        existing.how = how;
                    }
                }
                None => claims.push(Claim {
                    path: path.to_string(),
                    how,
                    since: now,
                }),
            }
        }
    })?;
    if !found {
        return Err(session::no_such_session(label).into());
    }
    index_written(refresh::write_index(&store, &mut lock));
    Ok(refused)
}

/// Removes claims of session `label`: the given paths, or all of them with `paths == None`.
/// Returns the paths actually released.
pub fn release(repo: &Repo, label: &Label, paths: Option<&[RepoPath]>) -> Result<Vec<String>> {
    let store = crate::store::Store::of(repo);
    let mut lock = store.lock(INDEX)?;
    let mut released = Vec::new();
    let found = claims_file::modify(&store, label, clock::now(), |claims| {
        claims.retain(|c| {
            let drop = paths.is_none_or(|w| w.iter().any(|p| *p == c.path));
            if drop {
                released.push(c.path.clone());
            }
            !drop
        });
    })?;
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

/// Removes a session's claims and then its record (see [`claims_file::remove_session`]).
pub fn remove_session(store: &Store, label: &Label) -> Result<()> {
    claims_file::remove_session(store, label)
}

/// The claims of session `record` (its claims file, or what an old-format record embeds).
pub fn claims_of(store: &Store, record: &SessionRecord) -> Result<Vec<Claim>> {
    claims_file::of_session(store, record)
}

/// Explicit claims outlive a merge; edits outlive it too; commit claims end with it.
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

/// Every claim of the sessions `records` with whether it is in force (session live; a commit
/// claim also needs an unmerged branch), sorted by path, for `claims`.
pub fn claims_with_state(
    repo: &Repo,
    config: &Config,
    records: &[SessionRecord],
) -> Result<Vec<(Label, Claim, bool)>> {
    let store = crate::store::Store::of(repo);
    let now = clock::now();
    let mut out = Vec::new();
    for r in records {
        let live = session::is_live(r, config, now);
        let mut merged: Option<bool> = None;
        for c in claims_of(&store, r)? {
            let mut in_force = live;
            if live && c.how == ClaimHow::Commit {
                let m = match merged {
                    Some(m) => m,
                    None => *merged.insert(branch_merged(repo, r)?),
                };
                in_force = !m;
            }
            out.push((r.label.clone(), c, in_force));
        }
    }
    out.sort_by(|a, b| a.1.path.cmp(&b.1.path).then(a.0.cmp(&b.0)));
    Ok(out)
}
