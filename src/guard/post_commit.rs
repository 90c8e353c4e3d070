//! The post-commit: lands the claims the pre-commit put in flight, and checks after the fact
//! what the pre-commit never saw (the whole commit after `--no-verify` or a command that runs
//! no pre-commit; the paths staged while the pre-commit ran). Never fails the commit.

use super::here::{acting, known_session, sweep_unguarded, INDEX_WRITE_WAIT};
use super::marker::{fingerprint, parse_marker, MARKER, MAX_MARKER};
use crate::base::announce::{self, Announcement, Unseen};
use crate::config::Config;
use crate::git::staged;
use crate::git::{Oid, Repo};
use crate::ownership::refresh::with_view;
use crate::ownership::{self, Owner, Resolver};
use crate::session::{self, ClaimHow};
use crate::store::Store;
use anyhow::Result;
use serde_json::json;

/// Runs the post-commit check: a commit the pre-commit never saw (`--no-verify`) is checked
/// after the fact; a conflict is warned about loudly and recorded. Never fails the commit.
pub fn post_commit(repo: &Repo, config: &Config) -> Result<()> {
    let store = crate::store::Store::of(repo);
    let commit = repo.objects().head_commit()?;
    let paths = staged::commit_paths(repo.objects(), &commit)?;
    committed_escapes(repo, &store, &commit, &paths);
    let marker_path = repo.gitdir().join(MARKER);
    let marker = crate::base::files::read_text(&marker_path, MAX_MARKER)
        .ok()
        .as_deref()
        .and_then(parse_marker);
    let _ = std::fs::remove_file(&marker_path);
    let gitdir = repo.gitdir().to_path_buf();
    let parent = commit
        .parent_id(0)
        .map(|o| o.to_string())
        .unwrap_or_default();
    // The pre-commit checked this very commit's parent: what it checked is known.
    let checked = marker.filter(|m| m.parent == parent);
    if let Some(label) = checked.as_ref().and_then(|m| m.claimed.as_deref()) {
        // The commit its claims were in flight for landed.
        if let Ok(label) = session::Label::new(label) {
            ownership::landed(repo, &label, &gitdir)?;
        }
    }
    // The paths the guard never saw: all of them, or (its pre-commit ran) those staged after
    // it had read the index.
    let unchecked: Vec<String> = match &checked {
        Some(m) if m.fingerprint == fingerprint(&paths) => {
            // The pre-commit saw this commit (and swept what came before it).
            crate::guard::unguarded::mark_seen(&gitdir, commit.id());
            return Ok(());
        }
        Some(m) => {
            let seen: std::collections::HashSet<&str> =
                m.paths.iter().map(String::as_str).collect();
            paths
                .iter()
                .filter(|p| !seen.contains(p.as_str()))
                .cloned()
                .collect()
        }
        None => paths.clone(),
    };
    let raced = checked.is_some();
    let (me, conflicts, mine) = with_view(&store, Some(INDEX_WRITE_WAIT), |view| {
        let me = acting(repo, view);
        if let (Some(parent), false) = (commit.parent_id(0), raced) {
            // Commits before this one that no hook saw either.
            sweep_unguarded(repo, config, &store, view, me.as_deref(), Some(parent));
        }
        let merged_in: Vec<Oid> = commit.parent_ids().skip(1).collect();
        let mut conflicts: Vec<(String, Owner)> = Vec::new();
        let mut mine: Vec<&str> = Vec::new();
        let mut resolver = Resolver::new(repo, config, &store, view).merging(merged_in);
        for path in &unchecked {
            if resolver.is_shared(path) {
                continue;
            }
            match resolver.resolve(path, me.as_deref())?.owner {
                Some(owner) => {
                    // The owner's own content taken in is no collision.
                    let taken = || repo.objects().entry_in_commit(commit.id(), path).ok();
                    if !resolver.is_owners_content(&owner.label, path, taken)? {
                        conflicts.push((path.clone(), owner));
                    }
                }
                None => mine.push(path),
            }
        }
        Ok((me, conflicts, mine))
    })?;
    crate::guard::unguarded::mark_seen(&gitdir, commit.id());
    if !conflicts.is_empty() {
        let id = commit.id().to_string();
        announce::emit(Announcement::PostCommitUnguarded {
            commit: id[..12].to_string(),
            why: match raced {
                true => Unseen::StagedDuringCheck {
                    paths: unchecked.clone(),
                },
                false => why_unseen(repo, &gitdir, commit.id()),
            },
        });
        for (path, owner) in &conflicts {
            announce::emit(Announcement::PostCommitPath {
                path: path.clone(),
                owner: owner.label.clone(),
                how: ownership::how_phrase(owner.how),
                since: owner.since,
            });
        }
        announce::emit(Announcement::PostCommitAdvice);
        store.audit(
            "guard-unguarded-commit",
            json!({
                "commit": id,
                "session": me,
                "paths": conflicts.iter().map(|(p, o)| json!({"path": p, "owner": o.label})).collect::<Vec<_>>(),
            }),
        );
    }
    if let Some(label) = &me {
        record_commit_claims(repo, config, &store, label, &mine)?;
    }
    Ok(())
}

/// Names the files of this commit that an agent of another session wrote into this worktree
/// from outside its own, and takes them out of the record of such writes (a warning, never a
/// failure: the commit is made).
fn committed_escapes(repo: &Repo, store: &Store, commit: &crate::git::Commit, paths: &[String]) {
    let Some(here) = repo.current_worktree.as_deref() else {
        return;
    };
    let taken = match ownership::escapes::take_committed(store, here, paths) {
        Ok(t) => t,
        Err(e) => {
            store.audit("escape-record-failed", json!({"error": format!("{e:#}")}));
            return;
        }
    };
    for w in taken {
        store.audit(
            "escape-committed",
            json!({"commit": commit.id().to_string(), "path": w.path, "writer": w.writer,
                   "worktree": w.root}),
        );
        announce::emit(Announcement::CommittedEscape {
            path: w.path,
            writer: w.writer,
        });
    }
}

/// Records the acting session's committed paths as `commit` claims after the fact (a commit
/// the pre-commit did not see). A claim lost to another session is reported, not fatal: the
/// commit is made.
fn record_commit_claims(
    repo: &Repo,
    config: &Config,
    store: &Store,
    label: &str,
    paths: &[&str],
) -> Result<()> {
    let Some(label) = known_session(store, label)? else {
        return Ok(());
    };
    if paths.is_empty() {
        return session::touch(store, &label);
    }
    // Paths from git's index; one that is no repository path (git would not have staged it)
    // is not claimed.
    let paths: Vec<_> = paths
        .iter()
        .filter_map(|p| ownership::RepoPath::new(p).ok())
        .collect();
    // One by one: after the fact, a path someone else holds must not keep the others unclaimed.
    for path in paths {
        for owner in ownership::claim(repo, config, &label, &[path], ClaimHow::Commit)? {
            announce::emit(Announcement::ClaimLostRace {
                path: owner.path,
                owner: owner.label,
            });
        }
    }
    Ok(())
}

/// Why the pre-commit never saw the commit `made` here: a git command that runs no pre-commit
/// made it (HEAD's reflog names the command), the guard is not in force (named), or its hook
/// was skipped (`git commit --no-verify`, or a hook before ours that let the commit through
/// without running the rest).
fn why_unseen(repo: &Repo, gitdir: &std::path::Path, made: Oid) -> Unseen {
    if let Some(command) = command_without_pre_commit(gitdir, made) {
        return Unseen::ByCommand { command };
    }
    let Some(here) = repo.current_worktree.as_deref() else {
        return Unseen::NoPreCommit;
    };
    let e = crate::hooks::check(&repo.common_dir, here, &|| {
        crate::hooks::place::git_runs_config_hooks(here)
    });
    match e.pre_commit {
        crate::hooks::Check::Off(off) => Unseen::NotInForce {
            why: off.to_string(),
            install_repairs: off.install_repairs(),
        },
        crate::hooks::Check::InForce(_) => Unseen::Skipped,
    }
}

/// The git command that made `made`, from the newest entry of HEAD's reflog, when it is one
/// git runs no pre-commit hook for (it runs post-commit after each of them).
fn command_without_pre_commit(gitdir: &std::path::Path, made: Oid) -> Option<String> {
    let newest = crate::git::reflog::read(&gitdir.join("logs/HEAD"), 1).pop()?;
    if newest.new != made {
        return None;
    }
    let m = newest.message.as_str();
    ["cherry-pick", "revert", "rebase", "merge", "pull", "am"]
        .into_iter()
        .find(|c| {
            m.strip_prefix(c)
                .is_some_and(|rest| rest.starts_with(':') || rest.starts_with(' '))
        })
        .map(str::to_string)
}
