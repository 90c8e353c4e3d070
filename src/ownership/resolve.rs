//! Resolution: who owns a path, from one loaded [`ClaimsView`].
//!
//! Invariants a reader must not break:
//! - Whether a claim is in force is [`super::standing`]'s one judgement. Paths matching
//!   `[guard] shared` are owned by nobody. A claim of a directory covers everything below it.
//! - The asking session's own claims are judged only when another session's claim covers the
//!   same path (most paths have none): alone, a claim of its own can only let it through.
//! - Claims found ended are collected ([`Resolver::take_ended`]) for the writer to remove.
//! - When claims of two sessions cover one path, the earliest claim wins.
//! - The claims themselves (path, kind, since) come from the index alone. Records are read, and
//!   liveness (index and reflog mtimes) and merge state computed, only for sessions that hold a
//!   candidate claim on a path being asked about; claims files are never read here.

use super::claims_index::{ClaimsView, Hit};
use super::refresh::read_record;
use super::standing::{SessionFacts, Standing};
use super::Owner;
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

/// A claim found ended: its session's label and the claimed path.
pub type Ended = (String, String);

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
    /// Claims found ended so far.
    ended: Vec<Ended>,
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
            ended: Vec::new(),
        }
    }

    /// The claims found ended so far (each once), for the writer to remove.
    pub fn take_ended(&mut self) -> Vec<Ended> {
        let mut out = std::mem::take(&mut self.ended);
        out.sort();
        out.dedup();
        out
    }

    /// Whether what a commit takes at `path` (`staged()`, asked only when the owner has a
    /// version of its own; `None`: a deletion) is session `label`'s own version of it
    /// ([`SessionFacts::owners_versions`]).
    pub fn is_owners_content(
        &mut self,
        label: &str,
        path: &str,
        staged: impl FnOnce() -> Option<Option<crate::git::Oid>>,
    ) -> Result<bool> {
        let repo = self.repo;
        let Some(facts) = self.facts_for(label)? else {
            return Ok(false);
        };
        let theirs = facts.owners_versions(repo, path);
        Ok(!theirs.is_empty() && staged().is_some_and(|s| theirs.contains(&s)))
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
        // Whether I hold a claim covering the path; mine are judged below only when needed, so
        // the usual path (mine alone) allocates nothing.
        let mut mine = false;
        let view = self.view;
        let repo = self.repo;
        // When claims of two sessions cover one path (a directory claim over a file claim, made
        // before first-claim-wins covered both directions, or edited in by hand), the earliest
        // claim in force wins: mine, when it came first, is not overridden by a later one.
        for c in hits {
            let label = view.sessions[c.session].label.as_str();
            if Some(label) == me {
                mine = true;
                continue;
            }
            if self.being_merged(label)? {
                continue;
            }
            let claimed = &path[..c.len];
            let Some(facts) = self.facts_for(label)? else {
                continue;
            };
            let standing = facts.standing(repo, claimed, c.how)?;
            let owner = Owner {
                label: facts.record.label.to_string(),
                branch: facts.record.branch.clone(),
                path: claimed.to_string(),
                how: c.how,
                since: view.since(c.line)?,
                last_activity: facts.last_activity,
            };
            match standing {
                Standing::InForce => candidates.push((owner, true)),
                Standing::Lapsed => candidates.push((owner, false)),
                Standing::Ended => self.ended.push((label.to_string(), claimed.to_string())),
            }
        }
        candidates.sort_by(|a, b| a.0.since.cmp(&b.0.since).then(a.0.label.cmp(&b.0.label)));
        if candidates.is_empty() {
            // Nobody else: a claim of my own can only let me through, so it is not judged.
            res.held = mine;
        } else if let Some(me) = me.filter(|_| mine) {
            // Against another's claim, mine counts only while in force, with its own time.
            let mut since: Option<Time> = None;
            for c in hits
                .iter()
                .filter(|c| view.sessions[c.session].label.as_str() == me)
            {
                let claimed = &path[..c.len];
                let standing = match self.facts_for(me)? {
                    // The acting session is here now: its own lapse does not count.
                    Some(facts) => facts.standing(repo, claimed, c.how)?,
                    None => Standing::Ended,
                };
                if standing == Standing::Ended {
                    self.ended.push((me.to_string(), claimed.to_string()));
                    continue;
                }
                let s = view.since(c.line)?;
                since = Some(since.map_or(s, |m| m.min(s)));
            }
            if let Some(mine) = since {
                res.held = true;
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
        let repo = self.repo;
        for (session, path, how, since) in view.below(dir)? {
            let label = view.sessions[session].label.as_str();
            if Some(label) == me || self.is_shared(&path) || self.being_merged(label)? {
                continue;
            }
            let Some(facts) = self.facts_for(label)? else {
                continue;
            };
            match facts.standing(repo, &path, how)? {
                Standing::InForce => out.push(Owner {
                    label: label.to_string(),
                    branch: facts.record.branch.clone(),
                    path,
                    how,
                    since,
                    last_activity: facts.last_activity,
                }),
                Standing::Lapsed => {}
                Standing::Ended => self.ended.push((label.to_string(), path)),
            }
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
            let facts = record.map(|(record, _)| SessionFacts::new(record, self.config, self.now));
            self.facts.insert(label.to_string(), facts);
        }
        Ok(self.facts.get(label).and_then(Option::as_ref))
    }

    /// Whether `label`'s branch is being merged here (MERGE_HEAD names its tip or a commit on
    /// top of it): concluding that merge is not stealing its paths.
    fn being_merged(&mut self, label: &str) -> Result<bool> {
        if self.merging.is_empty() {
            return Ok(false);
        }
        let repo = self.repo;
        let Some(facts) = self.facts_for(label)? else {
            return Ok(false);
        };
        if facts.record.attached || facts.record.branch.is_empty() {
            return Ok(false);
        }
        let Some(tip) = facts.tip(repo) else {
            return Ok(false);
        };
        Ok(self
            .merging
            .iter()
            .any(|m| *m == tip || repo.is_descendant_of(*m, tip).unwrap_or(false)))
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
