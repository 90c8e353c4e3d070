//! Commits in flight: `in-flight/<label>.toml`, one file per session, naming the commits whose
//! pre-commit claimed new paths for it and whose landing is not yet known
//! ([`crate::ownership`] judges them). Their path lists live here, not in the session record,
//! so that every reader of a record (the guard naming an owner, `list`, the hooks) parses a few
//! hundred bytes however many paths a commit, or a commit that never landed, claimed.
//!
//! Invariants a reader must not break:
//! - A session's commits in flight are those of its file when the file exists; otherwise (a
//!   store written before they had their own file) those its record embeds. Never the union: an
//!   entry settled after the file was written must not come back from a stale embedded copy.
//! - The file is written first and the embedded copy stripped second
//!   ([`crate::ownership::claims_file::modify`]), under the `claims.index` lock like every write
//!   of claims; a session is removed in-flight file and claims first, record last.
//! - A file that does not parse is set aside and reported by the store, like any state file.

use super::{Label, SessionRecord};
use crate::base::clock::Time;
use crate::base::process::ProcessId;
use crate::store::Store;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The version written into every in-flight file.
pub const IN_FLIGHT_VERSION: u32 = 1;

/// A commit whose pre-commit claimed `paths` for the session, not yet known to have landed.
/// Its claims are in force from that moment: while the committing git process runs, and after,
/// when the commit landed; when the process is gone and HEAD never moved, the commit was
/// abandoned and those claims end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InFlight {
    pub at: Time,
    /// The git process making the commit (the nearest `git` above the pre-commit hook), when
    /// the process facts could name it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<ProcessId>,
    /// The git directory of the worktree the commit is made in, and its HEAD commit then
    /// (empty on an unborn branch).
    pub gitdir: PathBuf,
    #[serde(default)]
    pub head: String,
    /// The paths its pre-commit claimed anew.
    pub paths: Vec<String>,
}

/// `in-flight/<label>.toml`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InFlightFile {
    pub version: u32,
    pub label: Label,
    #[serde(default)]
    pub commits: Vec<InFlight>,
}

/// The store path of a session's in-flight file.
pub fn store_path(label: &Label) -> String {
    format!("in-flight/{}.toml", label.file_name())
}

/// The session's in-flight file; `None` when absent, set aside or naming another session.
pub fn read_file(store: &Store, label: &Label) -> Result<Option<Vec<InFlight>>> {
    Ok(store
        .read::<InFlightFile>(&store_path(label))?
        .filter(|file| file.label == *label)
        .map(|file| file.commits))
}

/// The commits in flight of the session `record` describes: its file, else what the record
/// still embeds.
pub fn of_session(store: &Store, record: &SessionRecord) -> Result<Vec<InFlight>> {
    Ok(match read_file(store, &record.label)? {
        Some(commits) => commits,
        None => record.legacy_in_flight.clone(),
    })
}

/// Writes the session's in-flight file (the caller holds the `claims.index` lock).
pub fn write(store: &Store, label: &Label, commits: Vec<InFlight>) -> Result<()> {
    let text = toml::to_string(&InFlightFile {
        version: IN_FLIGHT_VERSION,
        label: label.clone(),
        commits,
    })
    .map_err(|e| anyhow::anyhow!("serialising commits in flight: {e}"))?;
    store.replace_file(&store_path(label), text.as_bytes())
}
