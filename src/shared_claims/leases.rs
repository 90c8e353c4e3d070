//! Port blocks shared across machines, through the claims' remote and refs: with `[claims]
//! remote` set, each leased block of ports has one ref on the remote,
//! `refs/git-session/claims/ports/<first port>`, pointing at a record commit that says who
//! holds it ([`SharedBlock`]: first, count, label, clone id, host, since). It is fetched and
//! pushed with the claims (the same fetch, the same leases on pushes), and kept apart from
//! them when read ([`super::fetched`] leaves `ports/` to this module).
//!
//! Invariants a reader must not break:
//! - A block is handed out only once the remote took the creation of its ref
//!   (`--force-with-lease=<ref>:`, "only if absent"): two clones choosing one block at once
//!   cannot both win; the loser gives its local lease back and chooses again with what it
//!   fetched.
//! - The local lease is taken first ([`crate::ownership::leases::lease`], avoiding every block
//!   the last fetch showed held by another clone), the remote ref after. A process killed
//!   between the two leaves either a local lease nothing published (the block may then be taken
//!   elsewhere; the session's programs meet a busy port, never a silent double lease) or a ref
//!   of this clone whose local lease is gone: [`tidy`], run by every shared lease and by
//!   `cleanup` and `prune`, withdraws those.
//! - A block lapses as a path claim does (the same `[claims] ttl`): its record says until when
//!   it holds (`expires`; a record written without one holds until `since` + ttl), `sync`
//!   (and the pre-push hook's sync) renews this clone's blocks in force once past half their
//!   time, and a lapsed block of another clone counts as free: the clone that chooses it takes
//!   its ref over by compare-and-swap from the value it fetched, so of two clones taking one
//!   lapsed block only one wins. A clone that vanished thus holds its blocks for one ttl at
//!   most; one that lives but never syncs loses them after one ttl, as it loses its claims.
//! - Blocks are aligned on the configured size from the range's start, which the clones share
//!   through `.git-session.toml`; a block overlapping another clone's (a different size
//!   configured) is avoided when seen, but only blocks of one first port race on one ref.

use super::{clone_id, tracking_prefix, transport, Settings, SharedError};
use crate::base::clock::{self, Time};
use crate::config::resources::Resources;
use crate::git::{Oid, Repo};
use crate::ownership::leases::{self, Lease};
use crate::session::Label;
use crate::store::Store;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// Where port blocks live, under the claims' prefix (on the remote and in the tracking refs).
pub const PORTS: &str = "ports/";

/// How often a clone chooses again after losing a block to another clone, before giving up.
const ATTEMPTS: usize = 16;

/// One shared block, as the file in its commit holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedBlock {
    pub version: u32,
    pub first: u16,
    pub count: u16,
    pub label: String,
    pub clone: String,
    pub host: String,
    pub since: Time,
    /// Until when the block holds unless renewed (absent in records written before blocks
    /// lapsed: `since` + ttl).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<Time>,
}

impl SharedBlock {
    /// Until when the block holds.
    pub fn expiry(&self, settings: &Settings) -> Time {
        self.expires.unwrap_or_else(|| self.since + ttl(settings))
    }

    /// Whether the block has lapsed at `now` (anyone may take it over).
    pub fn lapsed(&self, settings: &Settings, now: Time) -> bool {
        self.expiry(settings) <= now
    }
}

fn ttl(settings: &Settings) -> chrono::Duration {
    chrono::Duration::from_std(settings.ttl).unwrap_or(chrono::Duration::hours(8))
}

/// A block's ref as fetched: its name under `ports/`, its commit, and its block when readable.
type Seen = (String, Option<Oid>, Option<SharedBlock>);

/// The blocks the last fetch saw: `ports/<first>` name, commit, block. A ref whose record does
/// not parse, or names another first port, holds its name's port for nobody's lease but is
/// kept out of every choice (read as a block of one port) and never deleted.
fn seen(repo: &Repo, remote: &str) -> Result<Vec<Seen>> {
    let prefix = format!("{}{PORTS}", tracking_prefix(remote));
    let mut out = Vec::new();
    for (name, found) in repo.records_under(&prefix)? {
        let short = name[prefix.len()..].to_string();
        let (oid, block) = match found {
            crate::git::ref_records::Found::Record { commit, text } => {
                let block = toml::from_str::<SharedBlock>(&text)
                    .ok()
                    .filter(|b| b.version == 1 && b.first.to_string() == short && b.count > 0);
                (Some(commit), block)
            }
            crate::git::ref_records::Found::Garbage { target, .. } => (target, None),
        };
        out.push((short, oid, block));
    }
    Ok(out)
}

/// Leases `resources` to `label` here and its port block on the remote (see the module doc).
/// `Ok(Err)`: the remote could not be asked or kept refusing; nothing is leased then.
pub fn lease(
    repo: &Repo,
    store: &Store,
    settings: &Settings,
    resources: &Resources,
    label: &Label,
) -> Result<Result<Lease, SharedError>> {
    let clone = clone_id(store)?;
    let mut last = None;
    for _ in 0..ATTEMPTS {
        if let Err(e) = transport::fetch(repo, settings) {
            return Ok(Err(e));
        }
        let blocks = seen(repo, &settings.remote)?;
        tidy_seen(repo, store, settings, &clone, &blocks, Some(label))?;
        let now = clock::now();
        let elsewhere: Vec<(u16, u16)> = blocks
            .iter()
            .filter_map(|(short, _, b)| match b {
                Some(b) if b.clone == clone || b.lapsed(settings, now) => None,
                Some(b) => Some((b.first, b.count)),
                None => short.parse().ok().map(|p| (p, 1)),
            })
            .collect();
        let lease = leases::lease(store, resources, label, &elsewhere, &leases::port_free)?;
        let (Some(first), count) = (lease.port_first, lease.port_count) else {
            return Ok(Ok(lease));
        };
        let block = SharedBlock {
            version: 1,
            first,
            count,
            label: label.to_string(),
            clone: clone.clone(),
            host: crate::base::process::hostname(),
            since: lease.since,
            expires: Some(now + ttl(settings)),
        };
        let name = format!("{PORTS}{first}");
        // A ref of this clone for this very block (an earlier session of the label whose
        // release did not reach the remote), or a lapsed one of any clone, is taken over from
        // the value seen: if its holder renewed it meanwhile, the push fails and we choose again.
        let expect = blocks
            .iter()
            .find(|(s, _, b)| {
                format!("{PORTS}{s}") == name
                    && b.as_ref()
                        .is_some_and(|b| b.clone == clone || b.lapsed(settings, now))
            })
            .and_then(|(_, oid, _)| *oid);
        let text = toml::to_string(&block).context("writing a shared block")?;
        let commit = repo.write_record(
            &text,
            &format!("git-session ports {first}+{count} by {label}"),
            clock::now().timestamp(),
        )?;
        let update = transport::Update {
            name,
            new: Some(commit),
            expect,
        };
        match transport::push(repo, settings, &[update], false)? {
            Ok(()) => return Ok(Ok(lease)),
            Err(e) => {
                // Another clone took the block first (or the remote refused): the local lease
                // goes back, and the next round chooses again from a fresh fetch.
                leases::release(store, label)?;
                last = Some(e);
            }
        }
    }
    Ok(Err(last.unwrap_or(SharedError::Remote {
        remote: settings.remote.clone(),
        why: "no block could be had".to_string(),
    })))
}

/// Withdraws this clone's blocks on the remote whose local lease is gone (its session was
/// removed, or its creation rolled back); returns how many went. One fetch, one push.
pub fn tidy(repo: &Repo, store: &Store, settings: &Settings) -> Result<Result<usize, SharedError>> {
    let clone = clone_id(store)?;
    if let Err(e) = transport::fetch(repo, settings) {
        return Ok(Err(e));
    }
    let blocks = seen(repo, &settings.remote)?;
    Ok(Ok(tidy_seen(repo, store, settings, &clone, &blocks, None)?))
}

/// [`tidy`] from blocks already fetched; `leasing`: the label a lease is being taken for (its
/// old block is taken over, not withdrawn). Refusals of single deletes are left for next time.
fn tidy_seen(
    repo: &Repo,
    store: &Store,
    settings: &Settings,
    clone: &str,
    blocks: &[Seen],
    leasing: Option<&Label>,
) -> Result<usize> {
    let here = leases::all(store)?;
    let updates: Vec<transport::Update> = blocks
        .iter()
        .filter_map(|(short, oid, b)| {
            let b = b.as_ref().filter(|b| b.clone == clone)?;
            let in_force = here
                .get(&b.label)
                .is_some_and(|l| l.port_first == Some(b.first));
            let being_leased = leasing.is_some_and(|l| l.as_str() == b.label);
            (!in_force && !being_leased).then(|| transport::Update {
                name: format!("{PORTS}{short}"),
                new: None,
                expect: *oid,
            })
        })
        .collect();
    if updates.is_empty() {
        return Ok(0);
    }
    Ok(match transport::push_each(repo, settings, &updates)? {
        Ok(results) => results.iter().filter(|r| r.is_ok()).count(),
        Err(_) => 0,
    })
}

/// Whether a name under the claims' prefix is a port block's (not a path claim's).
pub fn is_block(short: &str) -> bool {
    short.starts_with(PORTS)
}

/// What [`renew`] did with this clone's blocks.
#[derive(Debug, Default)]
pub struct Renewal {
    /// In force here, more than half their time left: not pushed again.
    pub held: usize,
    pub renewed: usize,
    /// Blocks of sessions here that the remote no longer holds for this clone (taken over by
    /// another clone after they lapsed, or deleted there): the first port, the count, the
    /// label, and why.
    pub lost: Vec<(u16, u16, String, String)>,
}

/// Renews this clone's blocks whose local lease is in force and which are past half their
/// time, each a compare-and-swap from the value the last fetch saw (the caller has just
/// fetched: `sync`); and says which blocks of sessions here the remote no longer holds.
pub fn renew(
    repo: &Repo,
    store: &Store,
    settings: &Settings,
) -> Result<Result<Renewal, SharedError>> {
    let clone = clone_id(store)?;
    let blocks = seen(repo, &settings.remote)?;
    let now = clock::now();
    let half = ttl(settings) / 2;
    let mut report = Renewal::default();
    let mut updates = Vec::new();
    for lease in leases::all(store)?.into_values() {
        let Some(first) = lease.port_first else {
            continue;
        };
        let found = blocks.iter().find(|(s, _, _)| *s == first.to_string());
        let ours = found.and_then(|(_, oid, b)| {
            b.as_ref()
                .filter(|b| b.clone == clone && b.label == lease.label)
                .map(|b| (oid, b))
        });
        let Some((oid, block)) = ours else {
            let why = match found {
                Some((_, _, Some(b))) => format!(
                    "held by session \"{}\" on {} (clone {})",
                    b.label, b.host, b.clone
                ),
                Some((_, _, None)) => "its ref holds no readable block".to_string(),
                None => "not on the remote".to_string(),
            };
            report
                .lost
                .push((first, lease.port_count, lease.label.clone(), why));
            continue;
        };
        if block.expiry(settings) - now > half {
            report.held += 1;
            continue;
        }
        let renewed = SharedBlock {
            expires: Some(now + ttl(settings)),
            ..block.clone()
        };
        let text = toml::to_string(&renewed).context("writing a shared block")?;
        let commit = repo.write_record(
            &text,
            &format!(
                "git-session ports {}+{} by {}",
                block.first, block.count, block.label
            ),
            now.timestamp(),
        )?;
        updates.push(transport::Update {
            name: format!("{PORTS}{first}"),
            new: Some(commit),
            expect: *oid,
        });
    }
    if updates.is_empty() {
        return Ok(Ok(report));
    }
    match transport::push_each(repo, settings, &updates)? {
        Err(e) => return Ok(Err(e)),
        Ok(results) => {
            for (u, result) in updates.iter().zip(results) {
                match result {
                    Ok(()) => report.renewed += 1,
                    Err(why) => {
                        let first: u16 = u.name[PORTS.len()..].parse().unwrap_or(0);
                        let (count, label) = leases::all(store)?
                            .into_values()
                            .find(|l| l.port_first == Some(first))
                            .map(|l| (l.port_count, l.label))
                            .unwrap_or_default();
                        report.lost.push((first, count, label, why));
                    }
                }
            }
        }
    }
    Ok(Ok(report))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(hours: u64) -> Settings {
        Settings {
            remote: "origin".into(),
            ttl: std::time::Duration::from_secs(hours * 3600),
            timeout: std::time::Duration::from_secs(20),
        }
    }

    #[test]
    fn a_block_written_before_blocks_lapsed_holds_one_ttl_from_its_start() {
        let text = "version = 1\nfirst = 20000\ncount = 10\nlabel = \"a\"\nclone = \"c\"\n\
                    host = \"h\"\nsince = \"2026-01-01T00:00:00Z\"\n";
        let block: SharedBlock = toml::from_str(text).unwrap();
        assert_eq!(block.expires, None);
        let at = |s: &str| {
            chrono::DateTime::parse_from_rfc3339(s)
                .unwrap()
                .with_timezone(&chrono::Utc)
        };
        assert!(!block.lapsed(&settings(8), at("2026-01-01T07:59:59Z")));
        assert!(block.lapsed(&settings(8), at("2026-01-01T08:00:00Z")));
        // A recorded expiry wins over the ttl.
        let renewed = SharedBlock {
            expires: Some(at("2026-01-02T00:00:00Z")),
            ..block
        };
        assert!(!renewed.lapsed(&settings(8), at("2026-01-01T23:00:00Z")));
        assert!(renewed.lapsed(&settings(8), at("2026-01-02T00:00:00Z")));
    }
}
