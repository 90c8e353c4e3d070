//! The commit guard: what the installed pre-commit and post-commit hooks run.
//!
//! Invariants a reader must not break:
//! - Fails closed only on a confirmed conflict: a staged path owned by another live session.
//!   Every internal error (unreadable store, odd index, broken repository) lets the commit
//!   through, loudly: a warning on stderr and an `guard-error` line in the audit log.
//! - Reads only: the index file git hands the hook (`GIT_INDEX_FILE`, which differs for
//!   `commit -a`, `commit <path>` and `--only`), HEAD's trees through [`crate::git`], the store. It
//!   never runs a program, so a hostile repository configuration cannot make it execute anything.
//! - The verdict on the paths no session holds yet is the one claims writer's
//!   ([`ownership::claim_for_commit`], under the store's lock): losing that race refuses the
//!   commit, so two commits of one new path can never both pass.
//! - Writes only what the check decided: the acting session's commit claims (in flight until the
//!   post-commit says the commit landed), the removal of claims found ended on the staged
//!   paths, and a marker in the worktree's own git directory that tells the post-commit hook
//!   what the pre-commit checked ([`marker`]).
//! - Paths are data: they are compared and printed (escaped), never handed to a shell.

mod here;
pub mod marker;
mod post_commit;
mod push;
pub mod unguarded;
mod verdict;

pub use marker::fingerprint;
pub use post_commit::post_commit;
pub use push::pre_push;
pub use verdict::{Refusal, Verdict};

use crate::base::announce::{self, Announcement};
use crate::base::clock;
use crate::base::trace::trace;
use crate::config::Config;
use crate::git::staged;
use crate::git::{Oid, Repo};
use crate::ownership::refresh::with_view;
use crate::ownership::{self, Owner, Resolver};
use crate::session;
use crate::store::Store;
use anyhow::Result;
use here::{acting, known_session, sweep_unguarded, INDEX_WRITE_WAIT};
use marker::write_marker;
use serde_json::json;
use std::path::PathBuf;

/// `GIT_SESSION_GUARD=off`: the deliberate, audited bypass.
pub fn guard_off() -> bool {
    std::env::var("GIT_SESSION_GUARD").is_ok_and(|v| v.trim().eq_ignore_ascii_case("off"))
}

/// The index the commit will be made from.
fn index_path(repo: &Repo) -> PathBuf {
    match std::env::var_os("GIT_INDEX_FILE") {
        Some(p) if !p.is_empty() => {
            let p = PathBuf::from(p);
            if p.is_absolute() {
                p
            } else {
                std::env::current_dir().map(|d| d.join(&p)).unwrap_or(p)
            }
        }
        _ => repo.gitdir().join("index"),
    }
}

/// Oids named in MERGE_HEAD: concluding a merge of a session's branch is not stealing its paths.
fn merge_heads(repo: &Repo) -> Vec<Oid> {
    crate::git::read_admin_file(&repo.gitdir().join("MERGE_HEAD"))
        .map(|t| {
            t.lines()
                .filter_map(|l| Oid::from_str(l.trim()).ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Runs the pre-commit check. `Err` is an internal error: the caller fails open.
pub fn pre_commit(repo: &Repo, config: &Config) -> Result<Verdict> {
    let store = crate::store::Store::of(repo);
    if let Some(refusal) = merge_unfinished_here(repo, &store) {
        trace("guard", || format!("refuse: {refusal:?}"));
        return Ok(Verdict::Refuse(refusal));
    }
    let index = index_path(repo);
    // HEAD is read once and handed on: the comparison, the sweep and the marker all need it.
    let head = repo.objects().head()?;
    // One thread: with the index read as two trees (see `staged`), a second thread for the
    // claims cost more to start and join than it overlapped.
    let staged = staged::staged_paths_against(repo.objects(), head, &index)?;
    // A damaged block of the claims index makes this run again on an index rebuilt from the
    // store: a damaged derived file is never a reason to refuse or to fail open.
    // With claims shared across machines, the synced view is asked about the staged paths
    // `[guard] shared` leaves owned by someone: those are the ones the resolver asks about
    // here, so its matcher (compiled once) sorts them, not a second compilation per path.
    let shared_claims = config.claims_remote.is_some();
    // `mine` and `unshared` borrow the staged paths: most runs record none of them, and a
    // copy of each would be an allocation per staged path.
    let (me, away, conflicts, lapsed, mine, unshared, ended) =
        with_view(&store, Some(INDEX_WRITE_WAIT), |view| {
            let me = acting(repo, view);
            trace("guard", || {
                let who = match (&me, crate::session::env_label()) {
                    (Some(l), Some(_)) => format!("session {l:?} (GIT_SESSION)"),
                    (Some(l), None) => format!("session {l:?} (the one in this worktree)"),
                    (None, _) => "nobody's session".to_string(),
                };
                format!("{} staged path(s), committed by {who}", staged.len())
            });
            let away = away_from_home(repo, view, me.as_deref());
            sweep_unguarded(repo, config, &store, view, me.as_deref(), head);
            let mut conflicts: Vec<(String, Owner)> = Vec::new();
            let mut lapsed: Vec<(String, Owner)> = Vec::new();
            let mut mine: Vec<&str> = Vec::new();
            let mut unshared: Vec<&str> = Vec::new();
            let mut resolver = Resolver::new(repo, config, &store, view).merging(merge_heads(repo));
            for path in &staged {
                if resolver.is_shared(path) {
                    continue;
                }
                if shared_claims {
                    unshared.push(path);
                }
                let res = resolver.resolve(path, me.as_deref())?;
                match res.owner {
                    // Taking the owner's own content (a merge, squash or cherry-pick of its
                    // work) is no collision, and moves no ownership.
                    Some(owner) => {
                        let staged = || repo.objects().entry_in_index(&index, path).ok();
                        if resolver.is_owners_content(&owner.label, path, staged)? {
                            trace("guard", || {
                                format!("{path}: {:?}'s own content, no collision", owner.label)
                            });
                        } else {
                            trace("guard", || {
                                format!(
                                    "{path}: owned by {:?}, {} as {}, in force",
                                    owner.label,
                                    ownership::how_phrase(owner.how),
                                    owner.path
                                )
                            });
                            conflicts.push((path.clone(), owner));
                        }
                    }
                    None => {
                        for o in &res.lapsed {
                            trace("guard", || format!("{path}: {:?}'s claim lapsed", o.label));
                        }
                        lapsed.extend(res.lapsed.into_iter().map(|o| (path.clone(), o)));
                        // Already held (any claim kind is at least as durable as a commit
                        // claim): nothing to record.
                        if !res.held {
                            mine.push(path);
                        }
                    }
                }
            }
            let ended = resolver.take_ended();
            for (label, path) in &ended {
                trace("guard", || format!("{path}: {label:?}'s claim has ended"));
            }
            Ok((me, away, conflicts, lapsed, mine, unshared, ended))
        })?;
    if let (Some(label), Some((own, here))) = (me.as_deref(), away) {
        if let Some(refusal) = foreign_worktree(repo, config, &store, label, own, here) {
            trace("guard", || {
                format!("refuse: {label:?} commits outside its worktree")
            });
            return Ok(refusal);
        }
    }
    if !conflicts.is_empty() {
        trace("guard", || {
            format!("refuse: {} path(s) another session owns", conflicts.len())
        });
        return Ok(refuse_owned(&store, me, conflicts));
    }
    // Claims found ended on the staged paths are removed now, so none comes back later.
    if let Err(e) = ownership::end_claims(repo, &ended) {
        announce::emit(Announcement::ClaimsIndexNotUpdated {
            error: format!("{e:#}"),
        });
    }
    let now = clock::now();
    if config.claims_remote.is_some() {
        // Claims of other clones, as the last sync saw them: never the network.
        let text = crate::shared_claims::view::text(&store);
        if let Some(view) = text.as_deref().and_then(crate::shared_claims::view::parse) {
            let held = crate::shared_claims::view::conflicts(&view, &unshared, now);
            if !held.is_empty() {
                trace("guard", || {
                    format!("refuse: {} path(s) held by other clones", held.len())
                });
                store.audit(
                    "guard-refused",
                    json!({
                        "session": me,
                        "shared": true,
                        "paths": held.iter().map(|(p, c)| json!({"path": p, "owner": c.label, "host": c.host, "clone": c.clone})).collect::<Vec<_>>(),
                    }),
                );
                return Ok(Verdict::Refuse(Refusal::HeldElsewhere {
                    held,
                    remote: view.remote.to_string(),
                }));
            }
        }
    }
    for (path, owner) in &lapsed {
        announce::emit(Announcement::LapsedOwner {
            path: path.clone(),
            owner: owner.label.clone(),
            last_activity: owner.last_activity,
            now,
        });
    }
    if !lapsed.is_empty() {
        store.audit(
            "guard-lapsed-owner",
            json!({"session": me, "paths": lapsed.iter().map(|(p, o)| json!({"path": p, "owner": o.label})).collect::<Vec<_>>()}),
        );
    }
    let mut claimed = None;
    if let Some(label) = &me {
        // Paths already held were left out of `mine`; the commit itself (index and reflog
        // mtimes) is the activity liveness reads, so the steady state writes nothing. The new
        // ones are claimed by the one writer, which decides the race: losing it refuses.
        if !mine.is_empty() {
            match claim_for_commit(repo, config, &store, label, &mine, head)? {
                Claimed::Lost(lost) => {
                    trace("guard", || {
                        format!("refuse: lost the race for {} path(s)", lost.len())
                    });
                    return Ok(refuse_owned(&store, me, lost));
                }
                Claimed::As(label) => claimed = Some(label),
                Claimed::Nothing => {}
            }
        }
    }
    write_marker(repo, head, &staged, claimed.as_deref());
    trace("guard", || match &claimed {
        Some(label) => format!("pass: {} new path(s) claimed for {label:?}", mine.len()),
        None => "pass: nothing to claim".to_string(),
    });
    Ok(Verdict::Pass)
}

/// Where the session named by `GIT_SESSION` works, when that is not the worktree this commit is
/// made in: `(its own worktree, this one)`, from the claims index (no record is read). A
/// session found by the worktree is always at home; a label the index does not know is said
/// elsewhere.
fn away_from_home(
    repo: &Repo,
    view: &ownership::ClaimsView,
    me: Option<&str>,
) -> Option<(PathBuf, PathBuf)> {
    let label = session::env_label()?;
    let here = repo.current_worktree.as_deref()?;
    if me != Some(label.as_str()) {
        return None;
    }
    let own = &view.session(label.as_str())?.path;
    if own == here {
        return None;
    }
    let (own, here) = (session::normalize(own), session::normalize(here));
    (own != here).then_some((own, here))
}

/// The refusal of a commit made in `here` by session `label`, whose own worktree is `own`,
/// unless `[guard] escape` lets it through (warned, or only audited).
fn foreign_worktree(
    repo: &Repo,
    config: &Config,
    store: &Store,
    label: &str,
    own: PathBuf,
    here: PathBuf,
) -> Option<Verdict> {
    let main = repo.main_worktree.as_deref().map(session::normalize) == Some(here.clone());
    store.audit(
        "guard-foreign-worktree",
        json!({"session": label, "own": own, "here": here,
               "mode": format!("{:?}", config.guard_escape).to_lowercase()}),
    );
    match config.guard_escape {
        crate::config::Escape::Deny => Some(Verdict::Refuse(Refusal::ForeignWorktree {
            label: label.to_string(),
            own,
            here,
            main,
        })),
        crate::config::Escape::Warn => {
            announce::emit(Announcement::ForeignWorktreeCommit {
                label: label.to_string(),
                here: here.display().to_string(),
            });
            None
        }
        crate::config::Escape::Allow => None,
    }
}

/// A merge recorded as moving the base this worktree has checked out, and not finished
/// (`merges/` in the store: a merge running, or one killed before it brought this worktree up to
/// the base; the next git-session command finishes the latter). Committing now would commit
/// the merge reversed. The usual case is one failed directory read.
fn merge_unfinished_here(repo: &Repo, store: &Store) -> Option<Refusal> {
    let entries = std::fs::read_dir(store.path("merges")).ok()?;
    let here = session::normalize(repo.current_worktree.as_deref()?);
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rel) = name.to_str().filter(|n| n.ends_with(".toml")) else {
            continue;
        };
        let Ok(Some(journal)) =
            store.read::<crate::lifecycle::merge_journal::Journal>(&format!("merges/{rel}"))
        else {
            continue;
        };
        let ours = journal.moves.iter().any(|m| {
            m.worktree
                .as_deref()
                .is_some_and(|w| session::normalize(w) == here)
        });
        if ours {
            store.audit(
                "guard-merge-unfinished",
                json!({"label": journal.label, "worktree": here}),
            );
            return Some(Refusal::MergeUnfinished {
                label: journal.label,
                worktree: here,
            });
        }
    }
    None
}

/// The refusal of a commit over paths other live sessions own, audited.
fn refuse_owned(store: &Store, me: Option<String>, conflicts: Vec<(String, Owner)>) -> Verdict {
    store.audit(
        "guard-refused",
        json!({
            "session": me,
            "paths": conflicts.iter().map(|(p, o)| json!({"path": p, "owner": o.label})).collect::<Vec<_>>(),
        }),
    );
    Verdict::Refuse(Refusal::Owned {
        conflicts,
        me,
        now: clock::now(),
    })
}

/// What claiming a commit's new paths came to.
enum Claimed {
    /// Recorded, in flight, for this session.
    As(String),
    /// Another session's claim won the race for these paths; nothing was recorded.
    Lost(Vec<(String, Owner)>),
    /// Nothing to record (the acting session has no record).
    Nothing,
}

/// Claims the commit's new paths for the acting session, as a commit in flight.
fn claim_for_commit(
    repo: &Repo,
    config: &Config,
    store: &Store,
    label: &str,
    paths: &[&str],
    head: Option<Oid>,
) -> Result<Claimed> {
    let Some(label) = known_session(store, label)? else {
        return Ok(Claimed::Nothing);
    };
    let paths: Vec<_> = paths
        .iter()
        .filter_map(|p| ownership::RepoPath::new(p).ok())
        .collect();
    let start = ownership::CommitStart {
        process: committing_git(),
        gitdir: repo.gitdir().to_path_buf(),
        head: head.map(|o| o.to_string()).unwrap_or_default(),
    };
    let lost = ownership::claim_for_commit(repo, config, &label, &paths, start)?;
    if lost.is_empty() {
        return Ok(Claimed::As(label.to_string()));
    }
    Ok(Claimed::Lost(
        lost.into_iter().map(|o| (o.path.clone(), o)).collect(),
    ))
}

/// The git process this hook runs for: the nearest `git` above it (hook managers and shells
/// may stand between), read from `/proc`. `None` where that would take a program run (the guard
/// runs none) or the facts cannot name it: the claims in flight then stay in force until the
/// worktree's HEAD moves.
fn committing_git() -> Option<crate::base::process::ProcessId> {
    if crate::base::process::Facts::here() != crate::base::process::Facts::Proc {
        return None;
    }
    crate::base::process::ancestors_commands(std::process::id(), 16)
        .into_iter()
        .skip(1)
        .find(|(_, args)| {
            let name = args
                .first()
                .map(|a| a.rsplit('/').next().unwrap_or(a))
                .unwrap_or("");
            name == "git" || (name.starts_with("git-") && name != "git-session")
        })
        .map(|(pid, _)| crate::base::process::ProcessId::of(pid))
}

/// Turns an internal error into the loud fail-open the guard promises.
pub fn fail_open(repo: Option<&Repo>, hook: &str, err: &anyhow::Error) {
    fail_open_in(repo.map(Store::of), hook, err)
}

/// [`fail_open`] with the store found some other way (the git CLI's common directory, when
/// libgit2 could not open the repository).
pub fn fail_open_in(store: Option<Store>, hook: &str, err: &anyhow::Error) {
    announce::emit(Announcement::GuardFailOpen {
        hook: hook.to_string(),
        error: format!("{err:#}"),
    });
    let Some(store) = store else {
        return;
    };
    store.audit(
        "guard-error",
        json!({"hook": hook, "error": format!("{err:#}")}),
    );
}
