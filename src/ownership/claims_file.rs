//! The claims entity: `claims/<label>.toml`, one file per session, the source of truth for the
//! paths a session claimed. The session record (`sessions/<label>.toml`) holds none of them, so
//! reading who is acting costs the same with 10 claims or 10,000.
//!
//! Invariants a reader must not break:
//! - A session's claims are those of `claims/<label>.toml` when that file exists. Otherwise
//!   (a store written before claims had their own file) they are the `claims` embedded in the
//!   session record. Never the union of both: a claim released after the file was written must
//!   not come back from a stale embedded copy.
//! - Migration writes the file first (lockfile, fsync, rename) and strips the embedded copy
//!   second ([`modify`]). A crash between the two leaves both, and the file wins: nothing is lost
//!   or counted twice, and the next write strips the stale copy. A reader that sees the stripped
//!   record therefore always finds the file.
//! - Every write of a claims file, and the removal of a session's claims, happens under the
//!   `claims.index` lock (held by the caller of [`modify`]; taken by [`remove_session`]). That lock
//!   serialises them, so a read-modify-write of a claims file cannot lose another one, and a claim
//!   cannot race a removal into a claims file with no session (which a later session of the same
//!   label would inherit).
//! - A session is removed claims first, record second: a claims file never outlives its record.
//! - A claims file that does not parse is set aside and reported by the store, like any state file.

pub use crate::session::claim::{Claim, ClaimHow};
use crate::session::in_flight::{self, InFlight};
use crate::session::{Label, SessionRecord};
use crate::store::Store;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// The version written into every claims file.
pub const CLAIMS_VERSION: u32 = 1;

/// `claims/<label>.toml`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClaimsFile {
    pub version: u32,
    pub label: Label,
    /// In the order they were made.
    #[serde(default)]
    pub claims: Vec<Claim>,
}

/// The store path of a session's claims file.
pub fn store_path(label: &Label) -> String {
    format!("claims/{}.toml", label.file_name())
}

/// The session's claims file, with the metadata of the file that was read; `None` when absent,
/// set aside (it did not parse) or naming another session.
pub fn read_file(store: &Store, label: &Label) -> Result<Option<(Vec<Claim>, std::fs::Metadata)>> {
    Ok(store
        .read_with_meta::<ClaimsFile>(&store_path(label))?
        .filter(|(file, _)| file.label == *label)
        .map(|(file, meta)| (file.claims, meta)))
}

/// The claims of the session `record` describes: its claims file, else what the record still
/// embeds (a store from before claims had their own file).
pub fn of_session(store: &Store, record: &SessionRecord) -> Result<Vec<Claim>> {
    Ok(match read_file(store, &record.label)? {
        Some((claims, _)) => claims,
        None => record.legacy_claims.clone(),
    })
}

/// Read-modify-write of session `label`'s claims and commits in flight
/// ([`crate::session::in_flight`]), migrating an old-format record on the way, then of its
/// record (`change_record`: its activity). The caller holds the `claims.index` lock. Returns
/// false (and writes nothing) when there is no such session.
pub fn modify(
    store: &Store,
    label: &Label,
    change: impl FnOnce(&mut Vec<Claim>, &mut Vec<InFlight>),
    change_record: impl FnOnce(&mut SessionRecord),
) -> Result<bool> {
    let Some(record) = crate::session::load(store, label)? else {
        return Ok(false);
    };
    let file = read_file(store, label)?;
    let had_file = file.is_some();
    let mut claims = match file {
        Some((claims, _)) => claims,
        None => record.legacy_claims.clone(),
    };
    let flights = in_flight::read_file(store, label)?;
    let had_flights_file = flights.is_some();
    let mut commits = flights.unwrap_or_else(|| record.legacy_in_flight.clone());
    let before = (claims.clone(), commits.clone());
    change(&mut claims, &mut commits);
    // First the files: from here on they are what readers take, whatever the record embeds.
    if claims != before.0 || (!had_file && !record.legacy_claims.is_empty()) {
        let text = toml::to_string(&ClaimsFile {
            version: CLAIMS_VERSION,
            label: label.clone(),
            claims,
        })
        .context("serialising claims")?;
        // No read under the file's own lock: every writer of claims files holds the index lock.
        store.replace_file(&store_path(label), text.as_bytes())?;
    }
    if commits != before.1 || (!had_flights_file && !record.legacy_in_flight.is_empty()) {
        in_flight::write(store, label, commits)?;
    }
    // Then the record: strip the embedded copies (now stale), and what the caller changes.
    let updated = store.update::<SessionRecord, _>(&SessionRecord::store_path(label), |r| {
        Ok(r.map(|mut r| {
            r.legacy_claims.clear();
            r.legacy_in_flight.clear();
            change_record(&mut r);
            r
        }))
    })?;
    if updated.is_none() {
        // Removed behind our back (not by this tool, which takes the index lock to remove):
        // neither file may outlive its record.
        store.remove(&in_flight::store_path(label))?;
        store.remove(&store_path(label))?;
        return Ok(false);
    }
    Ok(true)
}

/// Removes the claims and in-flight files of `label` when no record of that label exists: ones a person left by
/// deleting the record by hand, which a new session of the same label must not inherit. Returns
/// whether there was one. Under the index lock, like every claims write.
pub fn drop_orphan(store: &Store, label: &Label) -> Result<bool> {
    let files = [store_path(label), in_flight::store_path(label)];
    if !files.iter().any(|f| store.path(f).exists()) {
        return Ok(false);
    }
    let _index = store.lock(super::INDEX)?;
    if store
        .read::<SessionRecord>(&SessionRecord::store_path(label))?
        .is_some()
    {
        return Ok(false);
    }
    for f in &files {
        store.remove(f)?;
    }
    Ok(true)
}

/// Removes session `label`'s commits in flight and claims, then its record, under the index
/// lock (see the module doc).
pub fn remove_session(store: &Store, label: &Label) -> Result<()> {
    let _index = store.lock(super::INDEX)?;
    store.remove(&in_flight::store_path(label))?;
    store.remove(&store_path(label))?;
    store.remove(&SessionRecord::store_path(label))
}
