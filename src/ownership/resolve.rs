//! Resolution: who owns a path, from one loaded [`ClaimsView`].
//!
//! Invariants a reader must not break:
//! - A claim is in force while its session is live (`session::is_live`); a claim made by commit
//!   also ends when the session's branch is merged into its base. Paths matching `[guard] shared`
//!   are owned by nobody. A claim of a directory covers everything below it.
//! - When claims of two sessions cover one path, the earliest claim wins.
//! - The claims themselves (path, kind, since) come from the index alone. Records are read, and
//!   liveness (index and reflog mtimes) and merge state computed, only for sessions that hold a
//!   candidate claim on a path being asked about; claims files are never read here.

use super::claims_index::{ClaimsView, Hit};
use super::refresh::read_record;
use super::{ClaimHow, Owner};
use crate::base::clock::{self, Time};
use crate::config::Config;
use crate::git::Repo;
use crate::session::{self, SessionRecord};
use crate::store::Store;
use anyhow::Result;
use std::collections::HashMap;
use std::path::Path;

/// What asking about one path found.
#[derive(Debug, Default)]
pub struct Resolution {
    /// The live owner, if any.
    pub owner: Option<Owner>,
    /// Claims that would own the path had their session not stopped being live.
    pub lapsed: Vec<Owner>,
    /// Whether the asking session itself holds a claim covering the path.
    pub held: bool,
}

/// What the resolver learned about one session (each computed at most once).
struct SessionFacts {
    record: SessionRecord,
    last_activity: Time,
    live: bool,
    merged: Option<bool>,
}

/// Answers ownership questions against one loaded view, caching per-session facts.
pub struct Resolver<'a> {
    repo: &'a Repo,
    config: &'a Config,
    store: &'a Store,
    view: &'a ClaimsView,
    /// Built on first use: most guard runs never ask.
    shared: std::cell::OnceCell<globset::GlobSet>,
    now: Time,
    facts: HashMap<String, Option<SessionFacts>>,
    /// The directories above the last path asked about, shallowest first, with the claims on
    /// each: paths come sorted, so the next path mostly shares them.
    dirs: Vec<(String, Vec<Hit>)>,
    /// The hits of the path being resolved, kept between paths so that none allocates.
    scratch: Vec<Hit>,
    /// Where the last path asked about begins in the claims index: paths come sorted.
    next_line: usize,
    /// Branch tips being merged in (MERGE_HEAD): their sessions' claims do not block the merge.
    merging: Vec<crate::git::Oid>,
}

impl<'a> Resolver<'a> {
    pub fn new(
        repo: &'a Repo,
        config: &'a Config,
        store: &'a Store,
        view: &'a ClaimsView,
    ) -> Resolver<'a> {
        Resolver {
            repo,
            config,
            store,
            view,
            shared: std::cell::OnceCell::new(),
            now: clock::now(),
            facts: HashMap::new(),
            dirs: Vec::new(),
            scratch: Vec::new(),
            next_line: 0,
            merging: Vec::new(),
        }
    }

    pub fn merging(mut self, tips: Vec<crate::git::Oid>) -> Self {
        self.merging = tips;
        self
    }

    pub fn is_shared(&self, path: &str) -> bool {
        !self.config.guard_shared.is_empty()
            && self
                .shared
                .get_or_init(|| self.config.shared_matcher())
                .is_match(path)
    }

    /// The owner of `path` other than `me`, and claims on it that lapsed with their session.
    pub fn resolve(&mut self, path: &str, me: Option<&str>) -> Result<Resolution> {
        let res = Resolution::default();
        if self.view.is_empty() || self.is_shared(path) {
            return Ok(res);
        }
        let mut hits = std::mem::take(&mut self.scratch);
        let found = self.covering(path, &mut hits);
        let res = found.and_then(|()| self.judge(path, me, &hits, res));
        hits.clear();
        self.scratch = hits;
        res
    }

    /// [`Self::resolve`] for the claims `hits` found on `path` and above it.
    fn judge(
        &mut self,
        path: &str,
        me: Option<&str>,
        hits: &[Hit],
        mut res: Resolution,
    ) -> Result<Resolution> {
        let mut candidates: Vec<(Owner, bool)> = Vec::new();
        let view = self.view;
        // When claims of two sessions cover one path (a directory claim over a file claim, made
        // before first-claim-wins covered both directions, or edited in by hand), the earliest
        // claim wins: mine, when it came first, is not overridden by a later one.
        for c in hits {
            let label = view.sessions[c.session].label.as_str();
            if Some(label) == me {
                res.held = true;
                continue;
            }
            let Some(facts) = self.facts_for(label)? else {
                continue;
            };
            let owner = Owner {
                label: facts.record.label.to_string(),
                branch: facts.record.branch.clone(),
                path: path[..c.len].to_string(),
                how: c.how,
                since: view.since(c.line)?,
                last_activity: facts.last_activity,
            };
            let live = facts.live;
            if live && c.how == ClaimHow::Commit && self.merged(label)? {
                continue;
            }
            if self.being_merged(label) {
                continue;
            }
            candidates.push((owner, live));
        }
        candidates.sort_by(|a, b| a.0.since.cmp(&b.0.since).then(a.0.label.cmp(&b.0.label)));
        // My own claim's time matters only against another's (most paths have none).
        if !candidates.is_empty() && res.held {
            let mut mine: Option<Time> = None;
            for c in hits
                .iter()
                .filter(|c| Some(view.sessions[c.session].label.as_str()) == me)
            {
                let since = view.since(c.line)?;
                mine = Some(mine.map_or(since, |m| m.min(since)));
            }
            if let Some(mine) = mine {
                candidates.retain(|(owner, _)| owner.since < mine);
            }
        }
        for (owner, live) in candidates {
            if live {
                if res.owner.is_none() {
                    res.owner = Some(owner);
                }
            } else {
                res.lapsed.push(owner);
            }
        }
        Ok(res)
    }

    /// Live owners other than `me` of paths strictly below `dir`: a claim of `dir` would cover
    /// them, and first claim wins in that direction too.
    pub fn owners_below(&mut self, dir: &str, me: Option<&str>) -> Result<Vec<Owner>> {
        let mut out = Vec::new();
        if self.view.is_empty() || self.is_shared(dir) {
            return Ok(out);
        }
        let view = self.view;
        for (session, path, how, since) in view.below(dir)? {
            let label = view.sessions[session].label.as_str();
            if Some(label) == me || self.is_shared(&path) {
                continue;
            }
            let Some(facts) = self.facts_for(label)? else {
                continue;
            };
            if !facts.live {
                continue;
            }
            let (branch, last_activity) = (facts.record.branch.clone(), facts.last_activity);
            if self.being_merged(label) || (how == ClaimHow::Commit && self.merged(label)?) {
                continue;
            }
            out.push(Owner {
                label: label.to_string(),
                branch,
                path,
                how,
                since,
                last_activity,
            });
        }
        Ok(out)
    }

    /// [`ClaimsView::covering`] into `out`, remembering what each directory above the path
    /// holds.
    fn covering(&mut self, path: &str, out: &mut Vec<Hit>) -> Result<()> {
        if self.view.is_empty() {
            return Ok(());
        }
        self.next_line = self.view.exact_from(path, self.next_line, out)?;
        // The directories above `path`, shallowest first; the ones the last path shared are kept.
        let mut depth = 0;
        for (slash, _) in path.bytes().enumerate().filter(|&(_, b)| b == b'/') {
            let dir = &path[..slash];
            if self.dirs.get(depth).is_some_and(|(d, _)| d == dir) {
                depth += 1;
                continue;
            }
            self.dirs.truncate(depth);
            let mut hits = Vec::new();
            self.view.exact(dir, &mut hits)?;
            self.dirs.push((dir.to_string(), hits));
            depth += 1;
        }
        self.dirs.truncate(depth);
        // Deepest first, as a lookup from the path upwards finds them.
        for (_, hits) in self.dirs.iter().rev() {
            out.extend_from_slice(hits);
        }
        Ok(())
    }

    fn facts_for(&mut self, label: &str) -> Result<Option<&SessionFacts>> {
        if !self.facts.contains_key(label) {
            // A label from the derived index; one that is not a label has no record to read.
            let record = match session::Label::new(label) {
                Ok(label) => read_record(self.store, &label)?,
                Err(_) => None,
            };
            let facts = match record {
                Some((record, _)) => {
                    let last_activity = session::last_activity(&record);
                    let live = session::is_live(&record, self.config, self.now);
                    Some(SessionFacts {
                        record,
                        last_activity,
                        live,
                        merged: None,
                    })
                }
                None => None,
            };
            self.facts.insert(label.to_string(), facts);
        }
        Ok(self.facts.get(label).and_then(Option::as_ref))
    }

    /// Whether the session's branch is merged into its base (never for attached sessions,
    /// which own no branch of their own).
    fn merged(&mut self, label: &str) -> Result<bool> {
        let repo = self.repo;
        let Some(Some(facts)) = self.facts.get_mut(label) else {
            return Ok(false);
        };
        if let Some(m) = facts.merged {
            return Ok(m);
        }
        let merged = branch_merged(repo, &facts.record)?;
        facts.merged = Some(merged);
        Ok(merged)
    }

    fn being_merged(&self, label: &str) -> bool {
        if self.merging.is_empty() {
            return false;
        }
        let Some(Some(facts)) = self.facts.get(label) else {
            return false;
        };
        if facts.record.attached || facts.record.branch.is_empty() {
            return false;
        }
        match self.repo.branch_tip(&facts.record.branch) {
            Ok(Some(tip)) => self
                .merging
                .iter()
                .any(|m| *m == tip || self.repo.is_descendant_of(*m, tip).unwrap_or(false)),
            _ => false,
        }
    }
}

/// The labels of the active sessions whose worktree is `dir` (canonical), from the index alone.
pub fn sessions_in_worktree<'v>(view: &'v ClaimsView, dir: &Path) -> Vec<&'v str> {
    view.sessions
        .iter()
        .filter(|s| {
            // Records hold canonical paths; canonicalise only a near miss (same final component).
            let near = s.path == dir || s.path.file_name() == dir.file_name();
            s.active && near && (s.path == dir || session::normalize(&s.path) == dir)
        })
        .map(|s| s.label.as_str())
        .collect()
}

/// Whether the session's branch is merged into its base (never for attached sessions, which
/// own no branch of their own).
pub fn branch_merged(repo: &Repo, r: &SessionRecord) -> Result<bool> {
    if r.attached || r.branch.is_empty() {
        return Ok(false);
    }
    let tip = repo.branch_tip(&r.branch)?;
    let base = repo
        .resolve_commit(&r.base)?
        .or_else(|| crate::git::Oid::from_str(&r.base_commit).ok());
    Ok(match (tip, base) {
        (Some(t), Some(b)) => repo.merge_state(t, b)?.is_merged(),
        _ => false,
    })
}
