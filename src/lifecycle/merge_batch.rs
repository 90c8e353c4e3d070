//! `merge --all` and `merge LABEL LABEL ...`: many sessions merged one after another, each onto
//! the result of the one before (it is the base by then) and checked there, in creation order
//! (oldest first; the label breaks a tie).
//!
//! Invariants a reader must not break:
//! - Each session is one ordinary [`super::merge::merge`], under its own op lock, with its own
//!   journal and compare-and-swap: a session that is not ready, conflicts or fails its check is
//!   skipped exactly as a single merge refuses (nothing of it or of the base changed), and the
//!   batch goes on. Two batches, or a batch and a single merge, at once: the op lock orders them
//!   per session, the compare-and-swap per base; nothing merged is ever undone by the other.
//! - Ready means: not attached, ahead of its base, and no process working inside (whether one
//!   does cannot be told counts as one); uncommitted work, an operation in progress and the rest
//!   are the merge's own refusals.
//! - A list of commands that needs the user's approval is asked for once in a batch, at the
//!   first session that needs it; the answer holds for every session after it.
//! - A dry run moves nothing: each session is computed (and checked) onto the previous planned
//!   result instead of the base's tip.

use super::merge::{self, MergeOptions, Merged};
use crate::config::Config;
use crate::git::{Oid, Repo};
use crate::hazards::{self, Hazard};
use crate::session::{self, Label, SessionRecord};
use crate::store::Store;
use anyhow::Result;

/// Why a session of the batch was not merged before it was tried.
#[derive(Debug)]
pub enum NotReady {
    /// Attached to a worktree it shares: no branch of its own.
    Attached { label: Label },
    /// Nothing of it is missing from its base.
    NothingToMerge { label: Label, base: String },
    /// Processes work inside its worktree (or whether they do cannot be told).
    Occupied { label: Label, items: Vec<Hazard> },
}

impl std::fmt::Display for NotReady {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (NotReady::Attached { label }
        | NotReady::NothingToMerge { label, .. }
        | NotReady::Occupied { label, .. }) = self;
        write!(f, "session {label} is not ready to merge")
    }
}

impl std::error::Error for NotReady {}

/// Told as the batch goes (the command line shows it on a terminal); tells nothing by default.
pub trait Observer {
    /// Session `label`, number `at` (from 1) of `of`, is being worked on.
    fn started(&self, _label: &Label, _at: usize, _of: usize) {}
    /// It is done: merged (or planned, or nothing to merge) when `merged`, else skipped.
    fn finished(&self, _label: &Label, _merged: bool) {}
}

/// The observer that tells nothing.
pub struct Quiet;

impl Observer for Quiet {}

/// One session of the batch and what became of it: merged (or planned), or why not.
#[derive(Debug)]
pub struct Item {
    pub label: Label,
    pub outcome: Result<Merged>,
}

/// The sessions `labels` names (every session when `None`), oldest first.
fn in_order(store: &Store, labels: Option<&[Label]>) -> Result<(Vec<SessionRecord>, Vec<Label>)> {
    let mut records = session::load_all(store)?;
    records.sort_by(|a, b| a.created.cmp(&b.created).then(a.label.cmp(&b.label)));
    let Some(labels) = labels else {
        return Ok((records, Vec::new()));
    };
    let unknown = labels
        .iter()
        .filter(|l| !records.iter().any(|r| &r.label == *l))
        .cloned()
        .collect();
    records.retain(|r| labels.contains(&r.label));
    Ok((records, unknown))
}

/// Merges every session of `labels` (every session when `None`) in creation order, skipping
/// those that are not ready or refused; see the module doc. A label that names no session is
/// an item of its own, refused as a single merge would.
pub fn merge_all(
    repo: &Repo,
    store: &Store,
    config: &Config,
    labels: Option<&[Label]>,
    options: MergeOptions<'_>,
    observer: &dyn Observer,
) -> Result<Vec<Item>> {
    let (records, unknown) = in_order(store, labels)?;
    // One question per list for the whole batch, whatever the answer.
    let answers = super::merge_check::Answers::default();
    let keep = MergeOptions {
        answers: options.answers.or(Some(&answers)),
        ..options
    };
    // Refused as a single merge refuses a label that names no session.
    let mut items: Vec<Item> = unknown
        .into_iter()
        .map(|label| Item {
            outcome: merge::merge(repo, store, config, &label, keep),
            label,
        })
        .collect();
    let mut onto: Option<Oid> = None;
    let of = records.len();
    for (at, record) in records.into_iter().enumerate() {
        let label = record.label.clone();
        observer.started(&label, at + 1, of);
        let outcome = ready(repo, config, record).and_then(|()| {
            merge::merge(repo, store, config, &label, MergeOptions { onto, ..keep })
        });
        if let Ok(Merged::Planned(p)) = &outcome {
            onto = Some(p.new_tip);
        }
        observer.finished(&label, outcome.is_ok());
        items.push(Item { label, outcome });
    }
    Ok(items)
}

/// The batch's own conditions (see the module doc), before the merge's.
fn ready(repo: &Repo, config: &Config, record: SessionRecord) -> Result<()> {
    let label = record.label.clone();
    if record.attached {
        return Err(NotReady::Attached { label }.into());
    }
    let status = session::inspect(&repo.common_dir, record, config, crate::base::clock::now())?;
    if status.tip.is_some() && (status.ahead == 0 || status.merged != crate::git::Merged::No) {
        return Err(NotReady::NothingToMerge {
            label,
            base: status.record.base.clone(),
        }
        .into());
    }
    let items: Vec<Hazard> = hazards::inspect(repo, &status)
        .items
        .into_iter()
        .filter(|h| matches!(h, Hazard::Occupied(_) | Hazard::OccupancyUnknown(_)))
        .collect();
    if !items.is_empty() {
        return Err(NotReady::Occupied { label, items }.into());
    }
    Ok(())
}
