//! Who acts where the hook runs, and the sweep for commits no hook saw before this one.

use crate::base::announce::{self, Announcement};
use crate::config::Config;
use crate::git::{Oid, Repo};
use crate::ownership::{self, ClaimsView};
use crate::session;
use crate::store::Store;
use anyhow::Result;
use std::time::Duration;

/// How long the guard waits for a busy index lock before skipping the (optional) index rewrite.
pub(super) const INDEX_WRITE_WAIT: Duration = Duration::from_millis(20);

/// Who is acting, reading only the records of sessions in this worktree.
pub(super) fn acting(repo: &Repo, view: &ClaimsView) -> Option<String> {
    if session::env_label().is_some() {
        return session::acting_label(repo, &[]).map(String::from);
    }
    // The rule of `session::acting_label` (the one active session whose worktree this is),
    // answered from the claims index, which lists every session's state and worktree: no
    // record is read.
    let here = repo.current_worktree.as_ref()?;
    match ownership::sessions_in_worktree(view, here)[..] {
        [label] => Some(label.to_string()),
        _ => None,
    }
}

/// The session `label` names, when it has a record (else said once, and nothing recorded).
pub(super) fn known_session(store: &Store, label: &str) -> Result<Option<session::Label>> {
    // The label came from `GIT_SESSION` (checked) or the claims index; only a `Label` reaches
    // the store, and text that is none names no session either.
    let known = match session::Label::new(label) {
        Ok(label) => session::load(store, &label)?.map(|_| label),
        Err(_) => None,
    };
    if known.is_none() {
        announce::emit(Announcement::UnknownActingSession {
            label: label.to_string(),
        });
    }
    Ok(known)
}

/// Checks what HEAD gained without the hooks in this worktree (see [`crate::guard::unguarded`]),
/// whoever acts here: a session, or nobody (the main worktree, a person's own worktree). The
/// steady state is one small file read; the session record is read only when HEAD moved.
pub(super) fn sweep_unguarded(
    repo: &Repo,
    config: &Config,
    store: &Store,
    view: &ClaimsView,
    me: Option<&str>,
    head: Option<Oid>,
) {
    let Some(head) = head else {
        return;
    };
    let gitdir = repo.gitdir();
    if crate::guard::unguarded::read_seen(gitdir) == Some(head) {
        return;
    }
    let record = me
        .and_then(|l| session::Label::new(l).ok())
        .and_then(|l| session::load(store, &l).ok().flatten());
    let (base, own_branch) = match &record {
        Some(record) => (
            repo.resolve_commit(&record.base)
                .ok()
                .flatten()
                .or_else(|| Oid::from_str(&record.base_commit).ok()),
            record.branch.as_str(),
        ),
        None => (None, ""),
    };
    // Any session attached here may have made these commits: their claims are no conflict.
    let here = repo.current_worktree.as_deref();
    let mut own: Vec<&str> = here
        .map(|h| ownership::sessions_in_worktree(view, h))
        .unwrap_or_default();
    own.extend(me);
    let actor = crate::guard::unguarded::Actor {
        label: me,
        own: &own,
    };
    let findings = crate::guard::unguarded::sweep(
        repo,
        config,
        store,
        view,
        gitdir,
        head,
        actor,
        base,
        &config.branch_prefix,
        own_branch,
    );
    crate::guard::unguarded::report(store, actor, here.unwrap_or(gitdir), &findings);
}
