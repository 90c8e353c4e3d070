//! Commits made with both hooks skipped (`git -c core.hooksPath=/dev/null commit`), found after
//! the fact.
//!
//! Each worktree's git directory holds `git-session-seen`: the HEAD the hooks (or `create`) last
//! saw there. The post-commit hook moves it to the new commit. Anything HEAD gained beyond it
//! came without the hooks; [`sweep`] checks those commits against other live sessions' claims,
//! warns and records each conflicting commit in the audit log once, then moves the mark to HEAD.
//! It runs from the next guard run in that worktree, and from `list`, `info` and `cleanup`, for
//! session worktrees and the main worktree alike.
//!
//! Invariants a reader must not break:
//! - Only commits made in that worktree are judged, and that is read from ground truth git
//!   keeps: the worktree's HEAD reflog, whose `commit`, `cherry-pick`, `revert` and rebase-pick
//!   entries name the commits made there. Commits HEAD gained by checkout, reset or a
//!   fast-forward were made elsewhere; merge commits carry no change of their own. Where a
//!   change reached base later (merged, fast-forwarded) it is still judged: what base holds now
//!   does not launder what was made here before. Only a worktree without a HEAD reflog
//!   (`core.logAllRefUpdates=false`) falls back to "not in base, not on another session's
//!   branch", and the main worktree, with no base to compare with, is then not swept.
//! - The steady state costs one small file read: the walk runs only when HEAD moved without a
//!   hook, and is bounded.
//! - Never fails its caller: an error is a warning at most.

use crate::base::announce::{self, Announcement};
use crate::config::Config;
use crate::git::{Oid, Repo};
use crate::ownership::{self, ClaimsView, Owner, Resolver};
use crate::store::Store;
use anyhow::Result;
use serde_json::json;
use std::path::Path;

pub use crate::lifecycle::seen::{mark_seen, read_seen};

/// How many reflog entries one sweep reads, at most (the newest).
const REFLOG_LIMIT: usize = 10_000;

/// How many commits one sweep looks at, at most.
const WALK_LIMIT: usize = 500;

/// Who made the commits of one worktree, as far as the sweep can tell.
#[derive(Debug, Clone, Copy)]
pub struct Actor<'a> {
    /// The session acting there (`None`: nobody, or several sessions attached to it).
    pub label: Option<&'a str>,
    /// Sessions whose claims are no conflict for these commits (the acting one, or the
    /// sessions attached to a shared worktree, any of which may have made them).
    pub own: &'a [&'a str],
}

/// One commit made without the hooks that changes paths other live sessions own.
pub struct Finding {
    pub commit: Oid,
    pub summary: String,
    pub conflicts: Vec<(String, Owner)>,
}

/// The session `me`'s commits between the mark in `gitdir` and `head` that no hook saw, judged
/// against the claims in `view`. Moves the mark to `head`. `repo` is the worktree's repository;
/// `base` its session's base commit; `own_branch` its branch (short name).
#[allow(clippy::too_many_arguments)]
pub fn sweep(
    repo: &Repo,
    config: &Config,
    store: &Store,
    view: &ClaimsView,
    gitdir: &Path,
    head: Oid,
    me: Actor<'_>,
    base: Option<Oid>,
    branch_prefix: &str,
    own_branch: &str,
) -> Vec<Finding> {
    let seen = read_seen(gitdir);
    if seen == Some(head) {
        return Vec::new();
    }
    let Some(seen) = seen else {
        // Never marked (a worktree made before this existed): nothing to compare with yet.
        mark_seen(gitdir, head);
        return Vec::new();
    };
    let found = match judge(
        repo,
        config,
        store,
        view,
        seen,
        head,
        gitdir,
        me,
        base,
        branch_prefix,
        own_branch,
    ) {
        Ok(found) => found,
        // The caller rebuilds the claims index and sweeps again: the mark stays where it is.
        Err(e) if e.downcast_ref::<ownership::DamagedIndex>().is_some() => return Vec::new(),
        Err(e) => {
            announce::emit(Announcement::UnguardedCheckFailed {
                label: me.label.unwrap_or("").to_string(),
                error: format!("{e:#}"),
            });
            Vec::new()
        }
    };
    mark_seen(gitdir, head);
    found
}

#[allow(clippy::too_many_arguments)]
fn judge(
    repo: &Repo,
    config: &Config,
    store: &Store,
    view: &ClaimsView,
    seen: Oid,
    head: Oid,
    gitdir: &Path,
    me: Actor<'_>,
    base: Option<Oid>,
    branch_prefix: &str,
    own_branch: &str,
) -> Result<Vec<Finding>> {
    let mut walk = repo.history()?;
    walk.push(head)?;
    // What the hooks saw is not new.
    if repo.objects().has_commit(seen) {
        walk.hide(seen)?;
    }
    let log = gitdir.join("logs/HEAD");
    let made_here: Option<std::collections::HashSet<Oid>> = log.is_file().then(|| {
        crate::git::reflog::read(&log, REFLOG_LIMIT)
            .into_iter()
            .filter(|e| e.makes_commit())
            .map(|e| e.new)
            .collect()
    });
    if made_here.is_none() {
        // No reflog: what base holds and what other sessions' branches hold is taken for
        // theirs.
        match base {
            Some(b) => walk.hide(b)?,
            None if me.label.is_none() => return Ok(Vec::new()),
            None => {}
        }
        walk.hide_branches(branch_prefix, own_branch)?;
    }
    let mut resolver = Resolver::new(repo, config, store, view);
    let mut out = Vec::new();
    for id in walk.ids(WALK_LIMIT)? {
        if made_here.as_ref().is_some_and(|m| !m.contains(&id)) {
            continue;
        }
        let commit = repo.objects().find_commit(id)?;
        if commit.parent_count() != 1 {
            continue;
        }
        let mut conflicts = Vec::new();
        for path in crate::git::staged::commit_paths(repo.objects(), &commit)? {
            if resolver.is_shared(&path) {
                continue;
            }
            if let Some(owner) = resolver.resolve(&path, me.label)?.owner {
                if !me.own.contains(&owner.label.as_str()) {
                    conflicts.push((path, owner));
                }
            }
        }
        if !conflicts.is_empty() {
            out.push(Finding {
                commit: commit.id(),
                summary: commit.summary().to_string(),
                conflicts,
            });
        }
    }
    Ok(out)
}

/// Warns about each finding and records it in the audit log.
pub fn report(store: &Store, me: Actor<'_>, worktree: &Path, findings: &[Finding]) {
    for f in findings {
        let id = f.commit.to_string();
        announce::emit(Announcement::UnguardedCommit {
            commit: id[..12].to_string(),
            summary: f.summary.clone(),
            label: me.label.map(str::to_string),
            worktree: worktree.display().to_string(),
        });
        for (path, owner) in &f.conflicts {
            announce::emit(Announcement::UnguardedPath {
                path: path.clone(),
                owner: owner.label.clone(),
                how: ownership::how_phrase(owner.how),
                since: owner.since,
            });
        }
        store.audit(
            "guard-unguarded-commit",
            json!({
                "commit": id,
                "session": me.label,
                "worktree": worktree.display().to_string(),
                "found": "after the fact",
                "paths": f.conflicts.iter().map(|(p, o)| json!({"path": p, "owner": o.label})).collect::<Vec<_>>(),
            }),
        );
    }
}

/// The sweep for one session's worktree, as `list`, `info` and `cleanup` run it.
pub fn sweep_session(repo: &Repo, config: &Config, status: &crate::session::Status) {
    let record = &status.record;
    if record.attached || !record.path.is_dir() {
        return;
    }
    let Some(gitdir) = crate::session::admin_dir_of(&record.path) else {
        return;
    };
    let label = record.label.as_str();
    let me = Actor {
        label: Some(label),
        own: &[label],
    };
    sweep_at(
        repo,
        config,
        &gitdir,
        &record.path,
        me,
        status.base_tip,
        &record.branch,
    );
}

/// The sweep for the main worktree (commits a person, or a session attached there, made with
/// the hooks off), as `list` runs it.
pub fn sweep_main(repo: &Repo, config: &Config, records: &[crate::session::SessionRecord]) {
    let Some(main) = repo.main_worktree.as_deref() else {
        return;
    };
    if !main.join(".git").is_dir() {
        return;
    }
    let attached: Vec<&str> = records
        .iter()
        .filter(|r| r.attached && r.path == main)
        .map(|r| r.label.as_str())
        .collect();
    let me = Actor {
        label: match attached[..] {
            [one] => Some(one),
            _ => None,
        },
        own: &attached,
    };
    sweep_at(repo, config, &repo.common_dir, main, me, None, "");
}

fn sweep_at(
    repo: &Repo,
    config: &Config,
    gitdir: &Path,
    worktree: &Path,
    me: Actor<'_>,
    base: Option<Oid>,
    own_branch: &str,
) {
    // Cheap first: nothing to do while the mark is HEAD.
    let Ok(crate::git::Head::Branch(name)) = crate::git::read_head(gitdir) else {
        return;
    };
    let Ok(Some(head)) = repo.ref_target(&name) else {
        return;
    };
    if read_seen(gitdir) == Some(head) {
        return;
    }
    let store = crate::store::Store::of(repo);
    let prefix = config.branch_prefix.as_str();
    let findings = ownership::refresh::with_view(&store, None, |view| {
        let findings = sweep(
            repo, config, &store, view, gitdir, head, me, base, prefix, own_branch,
        );
        // Swept with a damaged index: nothing was marked; once more on the rebuilt one.
        match read_seen(gitdir) == Some(head) {
            true => Ok(findings),
            false => Err(ownership::DamagedIndex("the sweep could not finish".into()).into()),
        }
    })
    .unwrap_or_default();
    report(&store, me, worktree, &findings);
}
