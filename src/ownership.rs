//! Path ownership: who owns a repo-relative path, and recording claims.
//!
//! INTERIM VERSION written alongside the context hook so that it compiles and is tested; the
//! guard's own `ownership` module (same API) replaces this file at merge.
//!
//! Invariants: a path is owned only by a live session (`session::is_live`) that claimed it
//! explicitly, by editing it, or by committing it while its branch is not yet merged into base;
//! `[guard] shared` paths are owned by nobody; the first claim wins (the oldest `since`).

use crate::clock::{self, Time};
use crate::config::Config;
use crate::git::Repo;
use crate::session::{self, ClaimHow, SessionRecord};
use anyhow::Result;

#[derive(Debug, Clone, PartialEq)]
pub struct Owner {
    pub label: String,
    pub branch: String,
    pub path: String,
    pub how: ClaimHow,
    pub since: Time,
    pub last_activity: Time,
}

/// The claim path `claimed` covers `path`: equal, or a directory claim (`dir/`, `dir`) above it.
fn covers(claimed: &str, path: &str) -> bool {
    let claimed = claimed.trim_end_matches('/');
    path == claimed
        || (path.len() > claimed.len()
            && path.starts_with(claimed)
            && path.as_bytes()[claimed.len()] == b'/')
}

fn commit_claims_ended(repo: &Repo, record: &SessionRecord) -> bool {
    if record.branch.is_empty() {
        return false;
    }
    let tip = repo.branch_tip(&record.branch).ok().flatten();
    let base = repo
        .resolve_commit(&record.base)
        .ok()
        .flatten()
        .or_else(|| git2::Oid::from_str(&record.base_commit).ok());
    match (tip, base) {
        (Some(t), Some(b)) => repo.merge_state(t, b).is_ok_and(|m| m.is_merged()),
        _ => false,
    }
}

fn owner_among(
    repo: &Repo,
    config: &Config,
    records: &[SessionRecord],
    path: &str,
    me: Option<&str>,
) -> Option<Owner> {
    if config.shared_matcher().is_match(path) {
        return None;
    }
    let now = clock::now();
    let mut best: Option<Owner> = None;
    for record in records {
        if Some(record.label.as_str()) == me || !session::is_live(record, config, now) {
            continue;
        }
        let mut merged: Option<bool> = None;
        for claim in record.claims.iter().filter(|c| covers(&c.path, path)) {
            if claim.how == ClaimHow::Commit
                && *merged.get_or_insert_with(|| commit_claims_ended(repo, record))
            {
                continue;
            }
            if best.as_ref().is_none_or(|b| claim.since < b.since) {
                best = Some(Owner {
                    label: record.label.clone(),
                    branch: record.branch.clone(),
                    path: claim.path.clone(),
                    how: claim.how,
                    since: claim.since,
                    last_activity: session::last_activity(record),
                });
            }
        }
    }
    best
}

/// The live session other than `me` that owns `path` (repo-relative), if any.
pub fn owner_of(
    repo: &Repo,
    config: &Config,
    path: &str,
    me: Option<&str>,
) -> Result<Option<Owner>> {
    let records = session::load_all(&repo.store())?;
    Ok(owner_among(repo, config, &records, path, me))
}

/// Claims `paths` for `label`. Paths another live session owns are not claimed; their owners are
/// returned (empty: everything was claimed). Paths the session already holds keep their claim.
pub fn claim(
    repo: &Repo,
    config: &Config,
    label: &str,
    paths: &[String],
    how: ClaimHow,
) -> Result<Vec<Owner>> {
    let store = repo.store();
    let records = session::load_all(&store)?;
    let mut refused = Vec::new();
    let mut free = Vec::new();
    for path in paths {
        match owner_among(repo, config, &records, path, Some(label)) {
            Some(owner) => refused.push(owner),
            None => free.push(path.clone()),
        }
    }
    if !free.is_empty() {
        let now = clock::now();
        store.update::<SessionRecord, _>(&SessionRecord::store_path(label), |r| {
            Ok(r.map(|mut r| {
                for path in &free {
                    if !r.claims.iter().any(|c| &c.path == path) {
                        r.claims.push(session::Claim {
                            path: path.clone(),
                            how,
                            since: now,
                        });
                    }
                }
                if r.last_seen < now {
                    r.last_seen = now;
                }
                r
            }))
        })?;
    }
    Ok(refused)
}

#[cfg(test)]
mod tests {
    use super::covers;

    #[test]
    fn directory_claims_cover_their_files() {
        assert!(covers("src/a.rs", "src/a.rs"));
        assert!(covers("src/", "src/a.rs"));
        assert!(covers("src", "src/a.rs"));
        assert!(!covers("src", "srcx/a.rs"));
        assert!(!covers("src/a.rs", "src/a.rs.bak"));
    }
}
