//! The write-ahead record of a session's removal (`removals/<label>.toml` in the store), and what
//! a removal that did not finish left ([`Damage`]).
//!
//! `git worktree remove` deletes the worktree's files first and its admin entry
//! (`.git/worktrees/<name>`) after; killed between, or stopped by a directory it cannot empty (a
//! process writing into it), it leaves a directory that lost its tracked files, or one git no
//! longer knows. The removal records itself before git runs ([`Removal::begin`]) and removes the
//! record after the session's own record is gone ([`Removal::end`]); a record whose owner is dead
//! while the session is still there is a removal that did not finish, and the session is shown
//! as damaged until `cleanup` finishes it.
//!
//! Invariants: a removal record never makes anything be deleted by itself; it only tells the
//! next `cleanup` that the files missing from the directory were deleted by a removal the user
//! asked for (so they are no work that would be lost), and which branch tip the removal was
//! going to delete (the branch goes only when still at that tip).

use super::Label;
use crate::base::process::{Liveness, ProcessId};
use crate::store::Store;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A removal under way (or one that did not finish).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Removal {
    pub label: String,
    pub owner: ProcessId,
    pub path: PathBuf,
    /// The branch tip the removal deletes the branch at (merged, or archived); none: kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch_tip: Option<String>,
    /// Why git could not finish it, when the removal's owner lived to hear (one line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
}

fn store_path(label: &Label) -> String {
    format!("removals/{}.toml", label.file_name())
}

impl Removal {
    /// Records a removal before the first thing goes.
    pub fn begin(
        store: &Store,
        label: &Label,
        path: &Path,
        branch_tip: Option<String>,
    ) -> Result<()> {
        let removal = Removal {
            label: label.to_string(),
            owner: ProcessId::current(),
            path: path.to_path_buf(),
            branch_tip,
            failed: None,
        };
        store.update::<Removal, _>(&store_path(label), |_| Ok(Some(removal)))?;
        Ok(())
    }

    /// Git could not finish the removal: said in the record for the next `list` and `cleanup`.
    pub fn failed(store: &Store, label: &Label, why: &str) -> Result<()> {
        store.update::<Removal, _>(&store_path(label), |r| {
            Ok(r.map(|mut r| {
                r.failed = Some(why.to_string());
                r
            }))
        })?;
        Ok(())
    }

    /// The removal is over: the session is gone, or nothing was removed.
    pub fn end(store: &Store, label: &Label) -> Result<()> {
        store.remove(&store_path(label))
    }

    /// The record of `label`'s removal, if one is there.
    pub fn load(store: &Store, label: &Label) -> Result<Option<Removal>> {
        store.read(&store_path(label))
    }

    /// Whether the removal is over for good: its owner is dead (a removal still running, or
    /// whose owner cannot be judged, is not).
    pub fn abandoned(&self) -> bool {
        self.owner.liveness() == Liveness::Dead
    }
}

/// What is wrong with a session's worktree that no ordinary state says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Damage {
    /// A removal began and did not finish: killed (`failed: None`), or git could not finish it
    /// (`failed`: git's reason). `left`: the directory's entries still there (first few), of
    /// `left_count`.
    RemovalUnfinished {
        failed: Option<String>,
        left: Vec<String>,
        left_count: usize,
    },
    /// The directory is there, but git knows no worktree at it, so `git status` there fails:
    /// its admin entry is gone, or (`repairable`) it is there but names another directory.
    Unregistered {
        repairable: bool,
        left: Vec<String>,
        left_count: usize,
    },
}

/// The first few entries of `dir` (sorted) and how many there are.
pub fn entries_left(dir: &Path) -> (Vec<String>, usize) {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let count = names.len();
    names.truncate(5);
    (names, count)
}

/// Whether tracked files are missing from the worktree at `path` (`git ls-files --deleted`);
/// a worktree git cannot read counts as having lost them.
pub fn lost_tracked_files(path: &Path) -> bool {
    crate::git::Run::new(path, ["ls-files", "--deleted", "-z"])
        .deadline(std::time::Duration::from_secs(60))
        .run()
        .map_or(true, |out| !out.stdout.is_empty())
}
