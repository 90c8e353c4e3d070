//! Leases of resources to sessions (`leases.toml` in the store): each session's block of ports
//! and its names (`[resources]`), decided first-claim-wins by [`lease`], the one writer.
//!
//! File format: `version = 1`, then one `[[lease]]` per session: `label`, `port_first` and
//! `port_count` (absent: no ports), `since`, and a `[lease.names]` table (key to value).
//!
//! Invariants a reader must not break:
//! - Every change goes through [`crate::store::Store::update`] of the one file: under its lock,
//!   written whole and renamed in. Choosing a block and recording it happen under that one
//!   lock, so two `create`s at once never get overlapping ports, nor one name.
//! - A lease is in force only while a record of its session exists (`sessions/<label>.toml`,
//!   in any state). `create` writes the record before it leases, and removing a session
//!   removes the record before the lease ([`super::remove_session`]), so a process killed at
//!   any instant leaves at most a lease without a record: one nobody holds, dropped by the
//!   next [`lease`] or [`prune`]. A killed `create` leaves a `creating` record, whose recovery
//!   (rollback) removes record and lease together.
//! - A block is handed out only when each of its ports could be bound on this machine just
//!   now ([`port_free`]); a block with a busy port is passed over (and stays free: another
//!   program may let it go).

use crate::base::clock::{self, Time};
use crate::config::resources::{name_for, Resources};
use crate::session::{Label, SessionRecord};
use crate::store::Store;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The leases file, relative to the store root.
pub const FILE: &str = "leases.toml";

/// What one session holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port_first: Option<u16>,
    #[serde(default)]
    pub port_count: u16,
    pub since: Time,
    #[serde(default)]
    pub names: BTreeMap<String, String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct LeaseFile {
    version: u32,
    #[serde(default)]
    lease: Vec<Lease>,
}

/// Why no lease could be had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeaseError {
    /// Every block of `ports` ports in `first..=last` is leased or has a port in use here.
    NoFreePorts {
        ports: u32,
        first: u16,
        last: u16,
        /// Blocks passed over because a port of theirs was in use on this machine.
        busy: usize,
        /// Sessions holding ports (here, and in other clones when shared).
        holders: usize,
    },
    /// `[claims] remote` shares port blocks, and the remote could not give one.
    NotShared { remote: String, why: String },
}

impl std::fmt::Display for LeaseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LeaseError::NoFreePorts {
                ports,
                first,
                last,
                busy,
                holders,
            } => write!(
                f,
                "no free block of {ports} ports in {first}-{last}: {holders} sessions hold \
                 blocks, {busy} blocks have a port in use on this machine"
            ),
            LeaseError::NotShared { remote, why } => write!(
                f,
                "no block of ports could be leased through remote {remote}: {why}"
            ),
        }
    }
}

impl std::error::Error for LeaseError {}

impl Lease {
    /// The last port of the block, when there is one.
    pub fn port_last(&self) -> Option<u16> {
        self.port_first
            .map(|p| p + self.port_count.saturating_sub(1))
    }

    /// The ports as `first-last` (`GIT_SESSION_PORTS`).
    pub fn port_span(&self) -> Option<String> {
        Some(format!("{}-{}", self.port_first?, self.port_last()?))
    }

    /// The environment a session's programs get: `GIT_SESSION_PORT` (the first port),
    /// `GIT_SESSION_PORTS` (`first-last`), `GIT_SESSION_<NAME>` per name (upper-cased key).
    pub fn env(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if let (Some(first), Some(span)) = (self.port_first, self.port_span()) {
            out.push(("GIT_SESSION_PORT".to_string(), first.to_string()));
            out.push(("GIT_SESSION_PORTS".to_string(), span));
        }
        for (key, value) in &self.names {
            out.push((
                format!("GIT_SESSION_{}", key.to_ascii_uppercase()),
                value.clone(),
            ));
        }
        out
    }

    fn overlaps(&self, first: u32, count: u32) -> bool {
        self.port_first.is_some_and(|mine| {
            let (a, b) = (
                u32::from(mine),
                u32::from(mine) + u32::from(self.port_count),
            );
            a < first + count && first < b
        })
    }
}

/// Whether a session `label` has a record (so its lease is in force).
fn session_exists(store: &Store, label: &str) -> bool {
    Label::new(label)
        .ok()
        .and_then(|l| store.checked(&SessionRecord::store_path(&l)).ok())
        .is_some_and(|p| std::fs::symlink_metadata(p).is_ok())
}

/// Leases `resources` to session `label` (whose record the caller has written): the lowest
/// free block of ports that overlaps no block of `elsewhere` (held by other clones: first port
/// and count) and whose every port `free` says can be bound, and each name, made unique with
/// `_2`, `_3`, ... when another session holds it. A lease `label` held before (an earlier
/// session of the label that did not release it) is replaced. First claim wins: see the module
/// doc.
pub fn lease(
    store: &Store,
    resources: &Resources,
    label: &Label,
    elsewhere: &[(u16, u16)],
    free: &dyn Fn(u16) -> bool,
) -> Result<Lease> {
    let mut taken = None;
    store.update::<LeaseFile, _>(FILE, |file| {
        let mut file = file.unwrap_or_default();
        file.version = 1;
        file.lease
            .retain(|l| l.label != label.as_str() && session_exists(store, &l.label));
        let port_first = match resources.ports {
            0 => None,
            n => Some(free_block(&file.lease, elsewhere, resources, n, free)?),
        };
        let mut names = BTreeMap::new();
        for (key, template) in &resources.names {
            names.insert(key.clone(), unique_name(&file.lease, key, template, label));
        }
        let lease = Lease {
            label: label.to_string(),
            port_first,
            port_count: if port_first.is_some() {
                resources.ports as u16
            } else {
                0
            },
            since: clock::now(),
            names,
        };
        file.lease.push(lease.clone());
        taken = Some(lease);
        Ok(Some(file))
    })?;
    Ok(taken.expect("update ran the closure"))
}

/// The lowest block of `n` ports in the range, aligned on `n` from its start, that no lease
/// here or `elsewhere` overlaps and whose ports are all `free`.
fn free_block(
    leases: &[Lease],
    elsewhere: &[(u16, u16)],
    resources: &Resources,
    n: u32,
    free: &dyn Fn(u16) -> bool,
) -> Result<u16, LeaseError> {
    let (lo, hi) = (
        u32::from(resources.port_range.0),
        u32::from(resources.port_range.1),
    );
    let mut busy = 0;
    let mut first = lo;
    while first + n - 1 <= hi {
        let held_elsewhere = elsewhere.iter().any(|&(f, c)| {
            let (f, c) = (u32::from(f), u32::from(c));
            f < first + n && first < f + c
        });
        if !held_elsewhere && !leases.iter().any(|l| l.overlaps(first, n)) {
            // Bounded by the range: every candidate is a u16.
            if (first..first + n).all(|p| free(p as u16)) {
                return Ok(first as u16);
            }
            busy += 1;
        }
        first += n;
    }
    Err(LeaseError::NoFreePorts {
        ports: n,
        first: resources.port_range.0,
        last: resources.port_range.1,
        busy,
        holders: leases.iter().filter(|l| l.port_first.is_some()).count() + elsewhere.len(),
    })
}

/// `template` for `label`, with the lowest suffix `_2`, `_3`, ... that no other lease's `key`
/// holds (two labels may sanitize alike, or be cut alike).
fn unique_name(leases: &[Lease], key: &str, template: &str, label: &Label) -> String {
    let held = |v: &str| {
        leases
            .iter()
            .any(|l| l.names.get(key).is_some_and(|h| h == v))
    };
    let plain = name_for(template, label.as_str(), 0);
    if !held(&plain) {
        return plain;
    }
    (2u32..)
        .map(|n| {
            let suffix = format!("_{n}");
            name_for(template, label.as_str(), suffix.len()) + &suffix
        })
        .find(|v| !held(v))
        .expect("some suffix is free")
}

/// Gives up `label`'s lease (none held: nothing to do).
pub fn release(store: &Store, label: &Label) -> Result<()> {
    if std::fs::symlink_metadata(store.path(FILE)).is_err() {
        return Ok(());
    }
    store.update::<LeaseFile, _>(FILE, |file| {
        let Some(mut file) = file else {
            return Ok(None);
        };
        file.lease.retain(|l| l.label != label.as_str());
        Ok((!file.lease.is_empty()).then_some(file))
    })?;
    Ok(())
}

/// Drops the leases whose session is gone; returns their labels.
pub fn prune(store: &Store) -> Result<Vec<String>> {
    if std::fs::symlink_metadata(store.path(FILE)).is_err() {
        return Ok(Vec::new());
    }
    let mut dropped = Vec::new();
    store.update::<LeaseFile, _>(FILE, |file| {
        let Some(mut file) = file else {
            return Ok(None);
        };
        file.lease.retain(|l| {
            let keep = session_exists(store, &l.label);
            if !keep {
                dropped.push(l.label.clone());
            }
            keep
        });
        Ok((!file.lease.is_empty()).then_some(file))
    })?;
    Ok(dropped)
}

/// The leases in force (their sessions exist), by label.
pub fn all(store: &Store) -> Result<BTreeMap<String, Lease>> {
    let file: Option<LeaseFile> = store.read(FILE)?;
    Ok(file
        .map(|f| f.lease)
        .unwrap_or_default()
        .into_iter()
        .filter(|l| session_exists(store, &l.label))
        .map(|l| (l.label.clone(), l))
        .collect())
}

/// The lease of session `label`, when it holds one.
pub fn of(store: &Store, label: &Label) -> Result<Option<Lease>> {
    Ok(all(store)?.remove(label.as_str()))
}

/// Whether TCP port `port` can be bound on this machine now: on 127.0.0.1, on 0.0.0.0 and on
/// `::` (a machine without IPv6 answers for IPv4 alone). A listener on any one address makes
/// it busy, and so does a refusal to bind it at all; any other failure (no such address
/// family: no IPv6 here) says nothing about the port.
pub fn port_free(port: u16) -> bool {
    use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener};
    [
        SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
        SocketAddr::from((Ipv4Addr::UNSPECIFIED, port)),
        SocketAddr::from((Ipv6Addr::UNSPECIFIED, port)),
    ]
    .iter()
    .all(|addr| match TcpListener::bind(addr) {
        Ok(_) => true,
        Err(e) => !matches!(
            e.kind(),
            std::io::ErrorKind::AddrInUse | std::io::ErrorKind::PermissionDenied
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store_with(labels: &[&str]) -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path());
        for l in labels {
            let path = store.path(&SessionRecord::store_path(&Label::new(l).unwrap()));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        (dir, store)
    }

    fn ports(n: u32, range: (u16, u16)) -> Resources {
        Resources {
            ports: n,
            port_range: range,
            ..Resources::default()
        }
    }

    #[test]
    fn blocks_are_disjoint_lowest_first_and_busy_ports_are_passed_over() {
        let (_d, store) = store_with(&["a", "b", "c"]);
        let r = ports(10, (20000, 20049));
        let take = |l: &str, free: &dyn Fn(u16) -> bool| {
            lease(&store, &r, &Label::new(l).unwrap(), &[], free).map(|l| l.port_first)
        };
        assert_eq!(take("a", &|_| true).unwrap(), Some(20000));
        // 20013 is in use here: the block 20010-20019 is passed over.
        assert_eq!(take("b", &|p| p != 20013).unwrap(), Some(20020));
        assert_eq!(take("c", &|_| true).unwrap(), Some(20010));
        let env = of(&store, &Label::new("b").unwrap())
            .unwrap()
            .unwrap()
            .env();
        assert_eq!(
            env,
            [
                ("GIT_SESSION_PORT".to_string(), "20020".to_string()),
                ("GIT_SESSION_PORTS".to_string(), "20020-20029".to_string()),
            ]
        );
    }

    #[test]
    fn a_lease_without_its_session_is_taken_again_and_a_full_range_is_refused() {
        let (_d, store) = store_with(&["a", "b"]);
        let r = ports(10, (20000, 20019));
        let a = Label::new("a").unwrap();
        let b = Label::new("b").unwrap();
        lease(&store, &r, &a, &[], &|_| true).unwrap();
        lease(&store, &r, &b, &[], &|_| true).unwrap();
        let c = Label::new("c").unwrap();
        std::fs::write(store.path(&SessionRecord::store_path(&c)), "").unwrap();
        let err = lease(&store, &r, &c, &[], &|_| true).unwrap_err();
        assert_eq!(
            err.downcast_ref::<LeaseError>(),
            Some(&LeaseError::NoFreePorts {
                ports: 10,
                first: 20000,
                last: 20019,
                busy: 0,
                holders: 2
            })
        );
        // a's record went without its lease (a kill in between): the block is free again.
        std::fs::remove_file(store.path(&SessionRecord::store_path(&a))).unwrap();
        assert_eq!(
            lease(&store, &r, &c, &[], &|_| true).unwrap().port_first,
            Some(20000)
        );
        assert!(of(&store, &a).unwrap().is_none());
        release(&store, &c).unwrap();
        release(&store, &b).unwrap();
        assert!(
            !store.path(FILE).exists(),
            "an empty leases file is removed"
        );
    }

    #[test]
    fn names_that_come_out_alike_are_told_apart() {
        let (_d, store) = store_with(&["a-b", "a.b", "a_b"]);
        let r = Resources {
            names: [("database".to_string(), "app_{label}".to_string())].into(),
            ..Resources::default()
        };
        let got: Vec<String> = ["a-b", "a.b", "a_b"]
            .iter()
            .map(|l| {
                let lease = lease(&store, &r, &Label::new(l).unwrap(), &[], &|_| true).unwrap();
                assert_eq!(lease.port_first, None);
                lease.names["database"].clone()
            })
            .collect();
        assert_eq!(got, ["app_a_b", "app_a_b_2", "app_a_b_3"]);
    }

    #[test]
    fn a_listening_port_is_busy() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        assert!(!port_free(port));
        drop(listener);
        assert!(port_free(port));
    }
}
