//! Every session's status, read for display or for a removal (`list`, `info`, `prune`), with the
//! commits made without the hooks swept on the way.
//!
//! Invariant: a session whose record cannot be read is reported and skipped, never fatal to the
//! others; what decides a removal reads the files on disk (`Untracked::FullWalk`), never a cache.

use crate::base::clock;
use crate::cli::output;
use crate::config::Config;
use crate::git::Repo;
use crate::session::{self, Status};
use anyhow::Result;
use std::path::Path;

/// Every session's status, and the writes agents left outside their worktrees (read once: `list`
/// also warns of those in the main worktree).
pub struct Gathered {
    pub statuses: Vec<Status>,
    pub escaped: Vec<crate::ownership::escapes::Write>,
}

/// Inspects every session in parallel; a session that cannot be read is reported and skipped.
/// `untracked` says whether the dirty files may come from git's untracked cache (display) or
/// must come from reading every directory (anything that removes).
pub fn gather(
    repo: &Repo,
    config: &Config,
    now: clock::Time,
    untracked: crate::git::status::Untracked,
) -> Result<Gathered> {
    let records = session::load_all(&crate::store::Store::of(repo))?;
    // Commits made in the main worktree with both hooks skipped are reported too.
    crate::guard::unguarded::sweep_main(repo, config, &records);
    let mut out = Vec::new();
    // Sessions attached to one worktree share one walk of it.
    let inspected = crate::git::status::one_walk_per_worktree(untracked, || {
        session::inspect_all(&repo.common_dir, records, config, now)
    });
    let main = shared_with_main(repo);
    let escaped = escaped_changes(repo);
    for (label, status) in inspected {
        match status {
            Ok(mut s) => {
                crate::hazards::without_shared_warnings(&mut s.warnings, &main);
                s.warnings.extend(escaped_into(&escaped, &s.record.path));
                // Commits made with both hooks skipped are reported here too.
                crate::guard::unguarded::sweep_session(repo, config, &s);
                out.push(s)
            }
            Err(e) => output::warn(format!("session \"{label}\": {e:#}")),
        }
    }
    Ok(Gathered {
        statuses: out,
        escaped,
    })
}

/// What the main worktree shares with every session and so is no per-session warning: the
/// submodules not initialised there ([`crate::hazards::without_shared_warnings`]).
pub fn shared_with_main(repo: &Repo) -> std::collections::BTreeSet<String> {
    repo.main_worktree
        .as_deref()
        .map(crate::hazards::uninitialised_submodules)
        .unwrap_or_default()
}

/// No commits of its own since it was made: `new`, not "merged" (`list` and `info` alike).
pub fn is_new(s: &Status) -> bool {
    s.ahead == 0 && s.tip.is_some_and(|t| t.to_string() == s.record.base_commit)
}

/// The writes agents made outside their own session's worktree that are still uncommitted
/// changes where they landed ([`crate::ownership::escapes::changes`]); none when that record
/// cannot be read (warned: never fatal to a listing).
pub fn escaped_changes(repo: &Repo) -> Vec<crate::ownership::escapes::Write> {
    crate::ownership::escapes::changes(&crate::store::Store::of(repo)).unwrap_or_else(|e| {
        output::warn(format!(
            "the record of writes outside their worktrees: {e:#}"
        ));
        Vec::new()
    })
}

/// The warnings of the worktree at `root` for the `escaped` writes that landed in it.
pub fn escaped_into(escaped: &[crate::ownership::escapes::Write], root: &Path) -> Vec<String> {
    let root = crate::session::normalize(root);
    let here: Vec<_> = escaped
        .iter()
        .filter(|w| crate::session::normalize(&w.root) == root)
        .collect();
    crate::cli::words::guard_refusals::escaped_into(&here)
}
