//! `restore`: a session given back from an archive `cleanup --force` or `prune` wrote
//! (`refs/session-archive/<label>/<stamp>`, see [`super::archive`]).
//!
//! A restore is a creation ([`super::create::create`]) whose branch starts at the archived tip
//! rather than at the base, followed by the archived files laid over the new worktree. So it
//! inherits the creation's guarantees: it is refused before anything is made when the label, its
//! branch or its directory is taken, and a restore killed or failed anywhere in the creation is
//! rolled back by the same code (the branch is deleted only while it is still at the archived
//! tip, the record's `base_commit`).
//!
//! Invariants: the archive ref is never moved or deleted here (it still holds everything when the
//! restore fails, and `prune` expires it as before); the restored session measures ahead/behind
//! against the base it had (the archive names it), never against the archived tip.

use super::create::{self, Created, Observer, Request};
use crate::config::Config;
use crate::git::{Oid, Repo, Run};
use crate::session::{Label, Layout};
use crate::store::Store;
use anyhow::{Context, Result};
use std::path::PathBuf;
use std::time::Duration;

/// Why nothing was restored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RestoreError {
    /// No archive of this label; `others` are the labels that have one.
    NoArchive { label: Label, others: Vec<String> },
    /// The archive asked for is not one of this label's; `have` names its archives, oldest first.
    NoSuchArchive {
        label: Label,
        asked: String,
        have: Vec<String>,
    },
}

impl std::fmt::Display for RestoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RestoreError::NoArchive { label, .. } => {
                write!(f, "no archive of session \"{label}\"")
            }
            RestoreError::NoSuchArchive { label, asked, .. } => {
                write!(f, "session \"{label}\" has no archive {asked}")
            }
        }
    }
}

impl std::error::Error for RestoreError {}

/// What the archive's message says about the session it holds (the lines `archive` writes).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Archive {
    path: Option<PathBuf>,
    base: Option<String>,
    base_commit: Option<Oid>,
    /// The archived branch's tip: the parent the message names `branch ...`, else the first.
    tip: Option<Oid>,
}

fn parse(message: &str, parents: &[Oid]) -> Archive {
    let mut out = Archive::default();
    let mut branch_parent = None;
    for line in message.lines() {
        if let Some(p) = line.strip_prefix("path: ") {
            out.path = Some(PathBuf::from(p));
        } else if let Some(b) = line.strip_prefix("base: ") {
            out.base = Some(b.to_string()).filter(|b| !b.is_empty());
        } else if let Some(c) = line.strip_prefix("base commit: ") {
            out.base_commit = c.parse().ok();
        } else if let Some(rest) = line.strip_prefix("parent ") {
            // `parent N: <oid> branch session/x`
            let mut words = rest.splitn(3, ' ');
            let (_, oid, what) = (words.next(), words.next(), words.next());
            if what.is_some_and(|w| w.starts_with("branch ")) {
                branch_parent = oid.and_then(|o| o.parse::<Oid>().ok());
            }
        }
    }
    out.tip = branch_parent
        .filter(|p| parents.contains(p))
        .or_else(|| parents.first().copied());
    out
}

/// The label's archive refs, oldest first (their last component is a UTC stamp).
pub fn archives_of(repo: &Repo, label: &Label) -> Result<Vec<(String, Oid)>> {
    let prefix = format!("refs/session-archive/{}/", label.file_name());
    Ok(repo
        .all_archive_refs()?
        .into_iter()
        .filter(|(name, _)| {
            name.strip_prefix(&prefix)
                .is_some_and(|rest| !rest.is_empty() && !rest.contains('/'))
        })
        .collect())
}

/// A session restored: the creation's result, and what was laid over its files.
pub struct Restored {
    pub created: Created,
    /// The archive restored from.
    pub archive: String,
    pub base: String,
    /// The archived files could not be laid over the worktree: why (the session stands, with its
    /// commits; the archive still holds the files).
    pub files_failed: Option<String>,
}

/// What a restore needs beside the repository (the creation's own knobs).
pub struct Restore<'a> {
    pub label: &'a Label,
    /// The archive's stamp or full ref name; `None`: the newest.
    pub which: Option<&'a str>,
    pub approve_run: bool,
    pub deadline: Duration,
}

/// Gives the session back from its archive (see the module doc).
pub fn restore(
    repo: &Repo,
    config: &Config,
    layout: &Layout,
    store: &Store,
    what: &Restore,
    observer: &dyn Observer,
) -> Result<Restored> {
    let label = what.label;
    let archives = archives_of(repo, label)?;
    if archives.is_empty() {
        let mut others: Vec<String> = repo
            .all_archive_refs()?
            .into_iter()
            .filter_map(|(name, _)| {
                let rest = name.strip_prefix("refs/session-archive/")?;
                Some(rest.rsplit_once('/')?.0.to_string())
            })
            .collect();
        others.dedup();
        return Err(RestoreError::NoArchive {
            label: label.clone(),
            others,
        }
        .into());
    }
    let (refname, oid) = match what.which {
        None => archives.last().cloned().expect("not empty"),
        Some(asked) => archives
            .iter()
            .find(|(name, _)| name == asked || name.rsplit('/').next() == Some(asked))
            .cloned()
            .ok_or_else(|| RestoreError::NoSuchArchive {
                label: label.clone(),
                asked: asked.to_string(),
                have: archives
                    .iter()
                    .filter_map(|(n, _)| n.rsplit('/').next().map(str::to_string))
                    .collect(),
            })?,
    };
    let commit = repo.objects().find_commit(oid)?;
    let parents: Vec<Oid> = commit.parent_ids().collect();
    let archive = parse(&commit.message(), &parents);
    // The base as the session had it, while that name still resolves; else the commit it was.
    let base = archive
        .base
        .clone()
        .filter(|b| repo.resolve_commit(b).ok().flatten().is_some())
        .or_else(|| archive.base_commit.map(|c| c.to_string()));
    let path = archive.path.filter(|p| !p.exists() && layout.holds(p));
    let request = Request {
        label: label.clone(),
        base: base.clone(),
        path,
        approve_run: what.approve_run,
        deadline: what.deadline,
        start: archive.tip,
    };
    let created = create::create(repo, config, layout, store, &request, observer)?;
    let base = base.or_else(|| config.base.clone()).unwrap_or_default();
    // The worktree's files as they were: modified, deleted and untracked ones alike (no-overlay
    // mode: a tracked file the archive does not hold is deleted, as it was).
    let source = format!("--source={oid}");
    let files_failed = Run::new(
        &created.path,
        ["restore", source.as_str(), "--worktree", "--", "."],
    )
    .deadline(what.deadline)
    .run()
    .err()
    .map(|e| format!("{e:#}"));
    Ok(Restored {
        created,
        archive: refname,
        base,
        files_failed,
    })
}

/// The commits of the restored branch beyond its base, for the report.
pub fn ahead_of_base(repo: &Repo, label: &Label, layout: &Layout, base: &str) -> Result<usize> {
    let Some(tip) = repo.branch_tip(&layout.branch(label))? else {
        return Ok(0);
    };
    let Some(base) = repo.resolve_commit(base)? else {
        return Ok(0);
    };
    Ok(repo
        .ahead_behind(tip, base)
        .context("counting the restored commits")?
        .0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_archived_branch_tip_is_the_parent_named_branch() {
        let a: Oid = "1111111111111111111111111111111111111111".parse().unwrap();
        let b: Oid = "2222222222222222222222222222222222222222".parse().unwrap();
        let message = format!(
            "git-session archive of x (s)\n\nbranch: session/x\npath: /w/x\nbase: main\n\
             base commit: {a}\nparent 1: {b} the worktree's HEAD (detached)\nparent 2: {a} branch session/x\n"
        );
        let got = parse(&message, &[b, a]);
        assert_eq!(got.tip, Some(a));
        assert_eq!(got.base.as_deref(), Some("main"));
        assert_eq!(got.base_commit, Some(a));
        assert_eq!(got.path, Some(PathBuf::from("/w/x")));
        // An archive written before the base was recorded, and one whose branch had no tip.
        let old = format!("git-session archive of x (s)\n\nbranch: session/x\npath: /w/x\nparent 1: {b} the worktree's HEAD (detached)\n");
        let got = parse(&old, &[b]);
        assert_eq!((got.tip, got.base, got.base_commit), (Some(b), None, None));
        // A message naming a parent the commit does not have is not believed.
        let lying = format!("parent 1: {a} branch session/x\n");
        assert_eq!(parse(&lying, &[b]).tip, Some(b));
    }
}
