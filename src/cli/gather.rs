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

/// Inspects every session in parallel; a session that cannot be read is reported and skipped.
/// `untracked` says whether the dirty files may come from git's untracked cache (display) or
/// must come from reading every directory (anything that removes).
pub fn gather(
    repo: &Repo,
    config: &Config,
    now: clock::Time,
    untracked: crate::git::status::Untracked,
) -> Result<Vec<Status>> {
    let records = session::load_all(&crate::store::Store::of(repo))?;
    // Commits made in the main worktree with both hooks skipped are reported too.
    crate::guard::unguarded::sweep_main(repo, config, &records);
    let mut out = Vec::new();
    // Sessions attached to one worktree share one walk of it.
    let inspected = crate::git::status::one_walk_per_worktree(untracked, || {
        session::inspect_all(&repo.common_dir, records, config, now)
    });
    let main = shared_with_main(repo);
    for (label, status) in inspected {
        match status {
            Ok(mut s) => {
                crate::hazards::without_shared_warnings(&mut s.warnings, &main);
                // Commits made with both hooks skipped are reported here too.
                crate::guard::unguarded::sweep_session(repo, config, &s);
                out.push(s)
            }
            Err(e) => output::warn(format!("session \"{label}\": {e:#}")),
        }
    }
    Ok(out)
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
