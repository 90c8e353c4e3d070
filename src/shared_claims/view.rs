//! The last synced view: the remote's claims held by other clones, as one small file in the
//! store, written after every fetch and read by the guard (which never reaches the network).
//! A missing or unreadable view enforces nothing shared: the local claims still hold.
//!
//! Its shape is for the guard, which reads it on every commit: JSON (a thousand claims parse
//! several times faster than TOML), times as seconds since the epoch (no date parsing), and read
//! borrowing from the file's text ([`Borrowed`]); only a claim that covers a staged path becomes
//! a [`SharedClaim`].

use super::{fetched, Settings, SharedClaim};
use crate::base::clock::{self, Time};
use crate::git::Repo;
use crate::store::Store;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

const FILE: &str = "shared-claims.json";

/// Larger than any view of a real team's claims; a bigger file is not read.
const MAX: u64 = 64 << 20;

/// One claim of another clone, as the view keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Entry<'a> {
    #[serde(borrow)]
    pub path: Cow<'a, str>,
    #[serde(borrow)]
    pub label: Cow<'a, str>,
    #[serde(borrow)]
    pub clone: Cow<'a, str>,
    #[serde(borrow)]
    pub host: Cow<'a, str>,
    pub since: i64,
    pub expires: i64,
}

/// The view, borrowing its strings from the file's text.
#[derive(Debug, Serialize, Deserialize)]
pub struct Borrowed<'a> {
    pub version: u32,
    #[serde(borrow)]
    pub remote: Cow<'a, str>,
    #[serde(borrow)]
    pub clone: Cow<'a, str>,
    pub fetched: i64,
    /// Paths this clone holds on the remote (so a later sync can tell "deleted there").
    #[serde(default, borrow)]
    pub published: Vec<Cow<'a, str>>,
    /// Claims of other clones.
    #[serde(default, borrow)]
    pub claims: Vec<Entry<'a>>,
}

/// The view file's text, if there is one.
pub fn text(store: &Store) -> Option<String> {
    crate::store::read_text(&store.path(FILE), MAX).ok()
}

/// The view in `text`; `None` when it does not parse (then nothing shared is enforced).
pub fn parse(text: &str) -> Option<Borrowed<'_>> {
    serde_json::from_str(text).ok()
}

/// The paths this clone had published, as the view of `remote` says.
pub fn published(store: &Store, remote: &str) -> Vec<String> {
    let Some(text) = text(store) else {
        return Vec::new();
    };
    parse(&text)
        .filter(|v| v.remote == remote)
        .map(|v| v.published.into_iter().map(Cow::into_owned).collect())
        .unwrap_or_default()
}

/// Rewrites the view from the tracking refs.
pub fn refresh(repo: &Repo, store: &Store, settings: &Settings, clone: &str) -> Result<()> {
    let state = fetched(repo, &settings.remote)?;
    let (mine, others): (Vec<_>, Vec<_>) = state
        .claims
        .into_values()
        .map(|(_, c)| c)
        .partition(|c| c.clone == clone);
    let view = Borrowed {
        version: 1,
        remote: Cow::Borrowed(&settings.remote),
        clone: Cow::Borrowed(clone),
        fetched: clock::now().timestamp(),
        published: mine
            .iter()
            .map(|c| Cow::Borrowed(c.path.as_str()))
            .collect(),
        claims: others
            .iter()
            .map(|c| Entry {
                path: Cow::Borrowed(&c.path),
                label: Cow::Borrowed(&c.label),
                clone: Cow::Borrowed(&c.clone),
                host: Cow::Borrowed(&c.host),
                since: c.since.timestamp(),
                expires: c.expires.timestamp(),
            })
            .collect(),
    };
    let text = serde_json::to_string(&view)?;
    store.replace_file(FILE, text.as_bytes())
}

/// The unlapsed claims of other clones in the view that cover one of `paths`, for the guard.
pub fn conflicts(view: &Borrowed<'_>, paths: &[&str], now: Time) -> Vec<(String, SharedClaim)> {
    let now = now.timestamp();
    let mut out = Vec::new();
    if view.claims.is_empty() {
        return out;
    }
    for &path in paths {
        let covering = view.claims.iter().find(|c| {
            c.clone != view.clone
                && c.expires > now
                && (path == c.path.as_ref()
                    || path
                        .strip_prefix(c.path.as_ref())
                        .is_some_and(|rest| rest.starts_with('/')))
        });
        if let Some(c) = covering {
            let at = |s: i64| chrono::DateTime::from_timestamp(s, 0).unwrap_or_default();
            out.push((
                path.to_string(),
                SharedClaim {
                    version: 1,
                    path: c.path.to_string(),
                    label: c.label.to_string(),
                    clone: c.clone.to_string(),
                    host: c.host.to_string(),
                    since: at(c.since),
                    expires: at(c.expires),
                },
            ));
        }
    }
    out
}
