//! Claims across machines, through the git remote and nothing else.
//!
//! With `[claims] remote` set, every claimed path has one ref on that remote,
//! `refs/git-session/claims/<id of the path>`, pointing at a small commit whose one file says who
//! holds it ([`SharedClaim`]: label, clone id, host, since, expiry). Contenders race on that one
//! ref, and the remote decides: acquiring is creating the ref with an empty lease
//! (`--force-with-lease=<ref>:`), renewing, releasing or taking a lapsed claim is a
//! compare-and-swap from the value last fetched. A claim of several paths is one `--atomic` push:
//! all or nothing, and a host that cannot push atomically refuses it whole.
//!
//! Invariants a reader must not break:
//! - The network is reached only by [`transport`], through the one process helper, with a
//!   deadline and no prompt; the guard never calls it: it reads the last synced view
//!   ([`view`]), a file in the store.
//! - What the remote holds is data, never trusted: a ref that does not hold a readable claim is
//!   reported with its name and enforced for nobody; a claim is compared by path, label and
//!   clone id only.
//! - A clone's own claims are the local store's (the guard enforces them already); the view
//!   holds the others.

pub mod leases;
pub mod transport;
pub mod view;

use crate::base::clock::{self, Time};
use crate::git::{Oid, Repo};
use crate::store::Store;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// Where claims live on the remote.
pub const REMOTE_PREFIX: &str = "refs/git-session/claims/";

/// Where a clone keeps what it last fetched of `remote`'s claims.
pub fn tracking_prefix(remote: &str) -> String {
    format!("refs/git-session/remotes/{remote}/claims/")
}

/// How this clone shares its claims: `[claims]` in the configuration, read by [`crate::config`].
pub use crate::config::ClaimsSharing as Settings;

/// One shared claim, as the file in its commit holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedClaim {
    pub version: u32,
    pub path: String,
    pub label: String,
    pub clone: String,
    pub host: String,
    pub since: Time,
    pub expires: Time,
}

impl SharedClaim {
    pub fn lapsed(&self, now: Time) -> bool {
        self.expires <= now
    }

    /// Whether this claim is held by `label` in the clone `clone`.
    pub fn is_held_by(&self, clone: &str, label: &str) -> bool {
        self.clone == clone && self.label == label
    }

    /// Whether it covers `path`: the path itself, or a directory above it.
    pub fn covers(&self, path: &str) -> bool {
        path == self.path
            || path
                .strip_prefix(self.path.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
    }

    fn parse(text: &str) -> Option<SharedClaim> {
        let c: SharedClaim = toml::from_str(text).ok()?;
        (c.version == 1
            && crate::session::Label::new(&c.label).is_ok()
            && crate::ownership::RepoPath::new(&c.path).is_ok()
            && c.clone.len() <= 64
            && c.host.len() <= 255
            && !c.host.chars().any(char::is_control))
        .then_some(c)
    }
}

/// The ref name (under a prefix) for `path`: the id git would give it as a blob, so two paths
/// never share a ref and any path makes a valid name.
pub fn ref_name(path: &str) -> String {
    crate::git::hash_blob(path.as_bytes())
        .map(|o| o.to_string())
        .unwrap_or_else(|| "0".repeat(40))
}

/// This clone's id: made once, kept in the store. Two clones on one machine, or one label in
/// two clones, are different claimants.
pub fn clone_id(store: &Store) -> Result<String> {
    const FILE: &str = "clone-id";
    if let Ok(text) = crate::store::read_text(&store.path(FILE), 128) {
        let id = text.trim();
        if !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(id.to_string());
        }
    }
    let seed = format!(
        "{}\0{}\0{}\0{:?}",
        crate::base::process::hostname(),
        store.root().display(),
        std::process::id(),
        std::time::SystemTime::now()
    );
    let id = crate::git::hash_blob(seed.as_bytes())
        .map(|o| o.to_string()[..16].to_string())
        .context("making a clone id")?;
    // First writer wins: a racing command reads the winner's id.
    store.create_file(FILE, format!("{id}\n").as_bytes())?;
    let text = crate::store::read_text(&store.path(FILE), 128)?;
    Ok(text.trim().to_string())
}

/// What the clone last fetched of the remote's claims: by ref name, the commit and the claim;
/// and the refs that hold no readable claim.
#[derive(Debug, Default)]
pub struct Fetched {
    pub claims: std::collections::BTreeMap<String, (Oid, SharedClaim)>,
    pub garbage: Vec<(String, Option<Oid>, String)>,
}

/// Reads the tracking refs of `remote` (no network).
pub fn fetched(repo: &Repo, remote: &str) -> Result<Fetched> {
    let prefix = tracking_prefix(remote);
    let mut out = Fetched::default();
    for (name, found) in repo.records_under(&prefix)? {
        let short = name[prefix.len()..].to_string();
        if leases::is_block(&short) {
            // Port blocks share the namespace and are read by `leases` alone.
            continue;
        }
        match found {
            crate::git::ref_records::Found::Record { commit, text } => {
                match SharedClaim::parse(&text) {
                    Some(c) if ref_name(&c.path) == short => {
                        out.claims.insert(short, (commit, c));
                    }
                    Some(_) => out.garbage.push((
                        format!("{REMOTE_PREFIX}{short}"),
                        Some(commit),
                        "its claim names another path".into(),
                    )),
                    None => out.garbage.push((
                        format!("{REMOTE_PREFIX}{short}"),
                        Some(commit),
                        "its claim cannot be read".into(),
                    )),
                }
            }
            crate::git::ref_records::Found::Garbage { target, why } => {
                out.garbage
                    .push((format!("{REMOTE_PREFIX}{short}"), target, why))
            }
        }
    }
    Ok(out)
}

/// Why a shared operation did not happen.
#[derive(Debug)]
pub enum SharedError {
    /// The remote could not be reached, or refused our namespace; nothing was recorded as
    /// shared.
    Remote { remote: String, why: String },
    /// Other claimants hold these paths.
    Held(Vec<SharedClaim>),
}

impl std::fmt::Display for SharedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SharedError::Remote { remote, why } => write!(f, "remote {remote}: {why}"),
            SharedError::Held(h) => write!(f, "{} paths are held elsewhere", h.len()),
        }
    }
}

impl std::error::Error for SharedError {}

/// Whether this clone's claim `c` is past half its time to live: a sync renews only those, so a
/// sync that runs often pushes nothing most of the time.
fn renewal_due(c: &SharedClaim, settings: &Settings, now: Time) -> bool {
    let half = chrono::Duration::from_std(settings.ttl / 2).unwrap_or(chrono::Duration::hours(4));
    c.expires - now <= half
}

/// A claim this clone makes now for `label` on `path`.
fn new_claim(
    settings: &Settings,
    clone: &str,
    label: &str,
    path: &str,
    since: Time,
) -> SharedClaim {
    let now = clock::now();
    let ttl = chrono::Duration::from_std(settings.ttl).unwrap_or(chrono::Duration::hours(8));
    SharedClaim {
        version: 1,
        path: path.to_string(),
        label: label.to_string(),
        clone: clone.to_string(),
        host: crate::base::process::hostname(),
        since,
        expires: now + ttl,
    }
}

fn write_claim(repo: &Repo, c: &SharedClaim) -> Result<Oid> {
    let text = toml::to_string(c).context("writing a claim")?;
    repo.write_record(
        &text,
        &format!("git-session claim: {} by {}", c.path, c.label),
        c.since.timestamp(),
    )
}

/// Acquires (or renews) `paths` for `label` on the remote, all or nothing: one fetch, one
/// atomic push. `Held` names every other live holder; nothing is pushed then.
pub fn claim(
    repo: &Repo,
    store: &Store,
    settings: &Settings,
    label: &str,
    paths: &[String],
) -> Result<Result<(), SharedError>> {
    let clone = clone_id(store)?;
    if let Err(e) = transport::fetch(repo, settings) {
        return Ok(Err(e));
    }
    let state = fetched(repo, &settings.remote)?;
    let now = clock::now();
    let mut held = Vec::new();
    let mut updates = Vec::new();
    for path in paths {
        let name = ref_name(path);
        let (expect, since) = match state.claims.get(&name) {
            None => (None, now),
            Some((oid, c)) if c.is_held_by(&clone, label) => (Some(*oid), c.since),
            Some((oid, c)) if c.lapsed(now) => (Some(*oid), now),
            Some((_, c)) => {
                held.push(c.clone());
                continue;
            }
        };
        // A ref that held garbage is taken over from the value seen.
        let expect = expect.or_else(|| {
            state
                .garbage
                .iter()
                .find(|(r, _, _)| r.ends_with(&name))
                .and_then(|(_, t, _)| *t)
        });
        let claim = new_claim(settings, &clone, label, path, since);
        updates.push(transport::Update {
            name,
            new: Some(write_claim(repo, &claim)?),
            expect,
        });
    }
    if !held.is_empty() {
        return Ok(Err(SharedError::Held(held)));
    }
    let pushed = transport::push(repo, settings, &updates, true)?;
    if let Err(e) = pushed {
        // Lost a race: say who won, from a fresh look.
        let lost_race = matches!(&e, SharedError::Remote { why, .. }
            if why.contains("stale info") || why.contains("failed to update") || why.contains("atomic push failed"));
        if lost_race && transport::fetch(repo, settings).is_ok() {
            let state = fetched(repo, &settings.remote)?;
            let held: Vec<SharedClaim> = paths
                .iter()
                .filter_map(|p| state.claims.get(&ref_name(p)))
                .map(|(_, c)| c.clone())
                .filter(|c| !c.is_held_by(&clone, label))
                .collect();
            if !held.is_empty() {
                return Ok(Err(SharedError::Held(held)));
            }
        }
        return Ok(Err(e));
    }
    view::refresh(repo, store, settings, &clone)?;
    Ok(Ok(()))
}

/// Releases `label`'s shared claims on `paths` (all of its claims with `None`): a delete with a
/// lease for each ref this clone holds; a ref someone else holds now is left alone.
pub fn release(
    repo: &Repo,
    store: &Store,
    settings: &Settings,
    label: &str,
    paths: Option<&[String]>,
) -> Result<Result<usize, SharedError>> {
    let clone = clone_id(store)?;
    if let Err(e) = transport::fetch(repo, settings) {
        return Ok(Err(e));
    }
    let state = fetched(repo, &settings.remote)?;
    let updates: Vec<transport::Update> = state
        .claims
        .iter()
        .filter(|(_, (_, c))| c.is_held_by(&clone, label))
        .filter(|(_, (_, c))| paths.is_none_or(|ps| ps.contains(&c.path)))
        .map(|(name, (oid, _))| transport::Update {
            name: name.clone(),
            new: None,
            expect: Some(*oid),
        })
        .collect();
    if updates.is_empty() {
        return Ok(Ok(0));
    }
    let n = updates.len();
    if let Err(e) = transport::push(repo, settings, &updates, false)? {
        return Ok(Err(e));
    }
    view::refresh(repo, store, settings, &clone)?;
    Ok(Ok(n))
}

/// What `sync` did.
#[derive(Debug, Default)]
pub struct SyncReport {
    /// Held here and on the remote, with more than half their time left: not pushed again.
    pub held: usize,
    pub renewed: usize,
    pub published: usize,
    pub withdrawn: usize,
    /// Claims this clone held or meant to publish that someone else holds, or that were deleted
    /// on the remote: the path, the session, and why.
    pub lost: Vec<(String, String, String)>,
    pub garbage: Vec<(String, String)>,
}

/// One fetch, one push: renews this clone's live claims (`mine`: label and path), publishes
/// the ones made locally since (by commit, by edit), withdraws the ones that ended here, and
/// reports what was lost.
pub fn sync(
    repo: &Repo,
    store: &Store,
    settings: &Settings,
    mine: &[(String, String, Time)],
) -> Result<Result<SyncReport, SharedError>> {
    let clone = clone_id(store)?;
    let published_before: std::collections::BTreeSet<String> =
        view::published(store, &settings.remote)
            .into_iter()
            .collect();
    if let Err(e) = transport::fetch(repo, settings) {
        return Ok(Err(e));
    }
    let state = fetched(repo, &settings.remote)?;
    let now = clock::now();
    let mut report = SyncReport {
        garbage: state
            .garbage
            .iter()
            .map(|(r, _, why)| (r.clone(), why.clone()))
            .collect(),
        ..SyncReport::default()
    };
    let mut updates = Vec::new();
    let mut kinds = Vec::new();
    for (label, path, since) in mine {
        let name = ref_name(path);
        // (what the remote holds now, since when ours, renewal or first publication)
        let (expect, since, kind) = match state.claims.get(&name) {
            Some((_, c)) if c.is_held_by(&clone, label) && !renewal_due(c, settings, now) => {
                report.held += 1;
                continue;
            }
            Some((oid, c)) if c.is_held_by(&clone, label) => (Some(*oid), c.since, 0),
            Some((oid, c)) if c.lapsed(now) => (Some(*oid), *since, 1),
            Some((_, c)) => {
                report.lost.push((
                    path.clone(),
                    label.clone(),
                    format!(
                        "held by session \"{}\" on {} (clone {}) until {}",
                        c.label,
                        c.host,
                        c.clone,
                        clock::rfc3339(c.expires)
                    ),
                ));
                continue;
            }
            None if published_before.contains(path) => {
                report.lost.push((
                    path.clone(),
                    label.clone(),
                    "deleted on the remote".to_string(),
                ));
                continue;
            }
            None => (None, *since, 1),
        };
        let claim = new_claim(settings, &clone, label, path, since);
        updates.push(transport::Update {
            name,
            new: Some(write_claim(repo, &claim)?),
            expect,
        });
        kinds.push(kind);
    }
    // Ours on the remote, no longer held here: withdrawn.
    for (name, (oid, c)) in &state.claims {
        if c.clone == clone && !mine.iter().any(|(l, p, _)| *l == c.label && *p == c.path) {
            updates.push(transport::Update {
                name: name.clone(),
                new: None,
                expect: Some(*oid),
            });
            kinds.push(2);
        }
    }
    if !updates.is_empty() {
        match transport::push_each(repo, settings, &updates)? {
            Err(e) => return Ok(Err(e)),
            Ok(results) => {
                for ((u, kind), result) in updates.iter().zip(&kinds).zip(results) {
                    match (result, kind) {
                        (Ok(()), 0) => report.renewed += 1,
                        (Ok(()), 1) => report.published += 1,
                        (Ok(()), _) => report.withdrawn += 1,
                        (Err(why), 2) => report
                            .garbage
                            .push((format!("{REMOTE_PREFIX}{}", u.name), why)),
                        (Err(why), _) => {
                            let (label, path) = mine
                                .iter()
                                .find(|(_, p, _)| ref_name(p) == u.name)
                                .map(|(l, p, _)| (l.clone(), p.clone()))
                                .unwrap_or_default();
                            report.lost.push((path, label, why));
                        }
                    }
                }
            }
        }
    }
    view::refresh(repo, store, settings, &clone)?;
    Ok(Ok(report))
}

/// A commit about to be pushed that changes a path a session of another clone holds.
#[derive(Debug)]
pub struct PushConflict {
    pub commit: Oid,
    pub path: String,
    pub holder: SharedClaim,
}

/// Commits at most looked at by one pre-push check.
const PUSH_WALK_LIMIT: usize = 1000;

/// The pre-push gate: one fetch of the claims (with the deadline), then every commit the push
/// gives the remote (`input`: git's pre-push lines, `<local ref> <local oid> <remote ref>
/// <remote oid>`) judged against the unlapsed claims of other clones. `Err` when the remote
/// could not be asked: the caller warns and lets the push go.
pub fn gate(
    repo: &Repo,
    store: &Store,
    settings: &Settings,
    input: &str,
) -> Result<Result<Vec<PushConflict>, SharedError>> {
    let clone = clone_id(store)?;
    if let Err(e) = transport::fetch(repo, settings) {
        return Ok(Err(e));
    }
    let state = fetched(repo, &settings.remote)?;
    let now = clock::now();
    let others: Vec<&SharedClaim> = state
        .claims
        .values()
        .map(|(_, c)| c)
        .filter(|c| c.clone != clone && !c.lapsed(now))
        .collect();
    let mut out = Vec::new();
    if others.is_empty() {
        return Ok(Ok(out));
    }
    let remote_refs = format!("refs/remotes/{}/", settings.remote);
    for line in input.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [_, local, _, remote] = fields[..] else {
            continue;
        };
        let (Ok(local), Ok(remote)) = (Oid::from_str(local), Oid::from_str(remote)) else {
            continue;
        };
        if local.is_zero() || !repo.objects().has_commit(local) {
            continue;
        }
        let mut walk = repo.history()?;
        walk.push(local)?;
        if !remote.is_zero() && repo.objects().has_commit(remote) {
            walk.hide(remote)?;
        }
        // What the remote already has is not this push's.
        walk.hide_refs(&|name| name.starts_with(&remote_refs));
        for id in walk.ids(PUSH_WALK_LIMIT)? {
            let commit = repo.objects().find_commit(id)?;
            if commit.parent_count() > 1 {
                continue;
            }
            for path in crate::git::staged::commit_paths(repo.objects(), &commit)? {
                if let Some(c) = others.iter().find(|c| c.covers(&path)) {
                    out.push(PushConflict {
                        commit: id,
                        path,
                        holder: (*c).clone(),
                    });
                }
            }
        }
    }
    Ok(Ok(out))
}
