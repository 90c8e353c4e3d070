//! The last synced view: the remote's claims held by other clones, as one small file in the
//! store, written after every fetch and read by the guard (which never reaches the network).
//! A missing or unreadable view enforces nothing shared: the local claims still hold. JSON, not
//! TOML like the store's records: the guard parses it on every commit, and a thousand claims
//! parse several times faster as JSON.

use super::{fetched, Settings, SharedClaim};
use crate::clock::{self, Time};
use crate::git::Repo;
use crate::store::Store;
use anyhow::Result;
use serde::{Deserialize, Serialize};

const FILE: &str = "shared-claims.json";

/// Larger than any view of a real team's claims; a bigger file is not read.
const MAX: u64 = 64 << 20;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct View {
    pub version: u32,
    pub remote: String,
    pub clone: String,
    pub fetched: Time,
    /// Paths this clone holds on the remote (so a later sync can tell "deleted there").
    #[serde(default)]
    pub published: Vec<String>,
    /// Claims of other clones.
    #[serde(default)]
    pub claims: Vec<SharedClaim>,
}

pub fn read(store: &Store) -> Option<View> {
    let text = crate::store::read_text(&store.path(FILE), MAX).ok()?;
    serde_json::from_str(&text).ok()
}

/// Rewrites the view from the tracking refs.
pub fn refresh(repo: &Repo, store: &Store, settings: &Settings, clone: &str) -> Result<()> {
    let state = fetched(repo, &settings.remote)?;
    let (mine, others): (Vec<_>, Vec<_>) = state
        .claims
        .into_values()
        .map(|(_, c)| c)
        .partition(|c| c.clone == clone);
    let view = View {
        version: 1,
        remote: settings.remote.clone(),
        clone: clone.to_string(),
        fetched: clock::now(),
        published: mine.into_iter().map(|c| c.path).collect(),
        claims: others,
    };
    let text = serde_json::to_string(&view)?;
    store.replace_file(FILE, text.as_bytes())
}

/// The unlapsed claims of other clones in the view that cover one of `paths`, for the guard.
pub fn conflicts<'v>(
    view: &'v View,
    paths: &[String],
    now: Time,
) -> Vec<(String, &'v SharedClaim)> {
    if view.claims.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for path in paths {
        if let Some(c) = view
            .claims
            .iter()
            .find(|c| c.clone != view.clone && !c.lapsed(now) && c.covers(path))
        {
            out.push((path.clone(), c));
        }
    }
    out
}
