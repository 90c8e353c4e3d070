//! Path ownership: who owns a repo-relative path, and recording claims.
//!
//! Invariants a reader must not break:
//! - The session records (`sessions/<label>.toml`, field `claims`) are the source of truth. The
//!   derived `claims.index` only narrows the search: every candidate it yields is confirmed
//!   against the owner's record before it counts, so an index that still lists a released claim
//!   is harmless.
//! - The index can never *miss* a claim: it stores each record's file identity (inode, mtime,
//!   ctime, size, taken with `fstat` on the very descriptor it read), and every load compares it
//!   with a fresh `stat` of every record. Store writes replace files by rename, so any rewrite
//!   changes the identity; a changed, new or vanished record is re-read before anything is
//!   decided. This costs one `readdir` and one `stat` per session, never a TOML parse per
//!   session, so the guard's work grows with staged and owned paths, not with session count.
//! - Claims are made under the `claims.index` lock (check owners, write the record, rewrite the
//!   index), so two sessions claiming one path at once cannot both win: first claim wins.
//! - A claim is in force while its session is live (`session::is_live`); a claim made by commit
//!   also ends when the session's branch is merged into its base. Paths matching `[guard] shared`
//!   are owned by nobody. A claim of a directory covers everything below it.
//! - Liveness (index and reflog mtimes) and merge state are computed only for sessions that hold
//!   a candidate claim on a path being asked about.

use crate::clock::{self, Time};
use crate::config::Config;
use crate::error::UserError;
use crate::git::Repo;
use crate::session::{self, Claim, ClaimHow, RecordState, SessionRecord};
use crate::store::{LockFile, Store};
use anyhow::{anyhow, Context, Result};
use std::collections::HashMap;
use std::io::{ErrorKind, Read};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The derived claims index, relative to the store root.
pub const INDEX: &str = "claims.index";
const HEADER: &str = "git-session claims index v1";

/// Another live session's claim on a path.
#[derive(Debug, Clone, PartialEq)]
pub struct Owner {
    pub label: String,
    pub branch: String,
    /// The claimed path (the asked path itself, or a directory above it).
    pub path: String,
    pub how: ClaimHow,
    pub since: Time,
    pub last_activity: Time,
}

/// The live session other than `me` that owns `path` (repo-relative, `/`-separated), if any.
/// Paths matching `[guard] shared` are owned by nobody.
pub fn owner_of(
    repo: &Repo,
    config: &Config,
    path: &str,
    me: Option<&str>,
) -> Result<Option<Owner>> {
    let store = repo.store();
    let view = ClaimsView::load(&store, None)?;
    let mut resolver = Resolver::new(repo, config, &store, &view);
    Ok(resolver.resolve(path, me)?.owner)
}

/// Records `paths` as claimed by session `label` with `how` (and refreshes its last_seen). Paths
/// another live session owns are not claimed; they are returned with their owner (first claim
/// wins).
pub fn claim(
    repo: &Repo,
    config: &Config,
    label: &str,
    paths: &[String],
    how: ClaimHow,
) -> Result<Vec<Owner>> {
    let store = repo.store();
    let mut lock = store.lock(INDEX)?;
    let view = ClaimsView::load(&store, None)?;
    let mut refused = Vec::new();
    let mut free = Vec::new();
    {
        let mut resolver = Resolver::new(repo, config, &store, &view);
        for path in paths {
            let path = normalize_rel(path);
            if path.is_empty() {
                continue;
            }
            match resolver.resolve(&path, Some(label))?.owner {
                Some(owner) => refused.push(owner),
                None => free.push(path),
            }
        }
    }
    let now = clock::now();
    let updated = store.update::<SessionRecord, _>(&SessionRecord::store_path(label), |r| {
        let Some(mut r) = r else {
            return Ok(None);
        };
        for path in &free {
            match r.claims.iter_mut().find(|c| &c.path == path) {
                Some(existing) => {
                    // Keep the first `since`; a more durable kind replaces a weaker one.
                    if durability(how) > durability(existing.how) {
                        existing.how = how;
                    }
                }
                None => r.claims.push(Claim {
                    path: path.clone(),
                    how,
                    since: now,
                }),
            }
        }
        if r.last_seen < now {
            r.last_seen = now;
        }
        Ok(Some(r))
    })?;
    if updated.is_none() {
        return Err(no_session(label));
    }
    write_index(&store, &mut lock)?;
    Ok(refused)
}

/// Removes claims of session `label`: the given paths, or all of them with `paths == None`.
/// Returns the paths actually released.
pub fn release(repo: &Repo, label: &str, paths: Option<&[String]>) -> Result<Vec<String>> {
    let store = repo.store();
    let mut lock = store.lock(INDEX)?;
    let now = clock::now();
    let mut released = Vec::new();
    let updated = store.update::<SessionRecord, _>(&SessionRecord::store_path(label), |r| {
        let Some(mut r) = r else {
            return Ok(None);
        };
        let wanted: Option<Vec<String>> =
            paths.map(|p| p.iter().map(|p| normalize_rel(p)).collect());
        r.claims.retain(|c| {
            let drop = wanted.as_ref().is_none_or(|w| w.contains(&c.path));
            if drop {
                released.push(c.path.clone());
            }
            !drop
        });
        if r.last_seen < now {
            r.last_seen = now;
        }
        Ok(Some(r))
    })?;
    if updated.is_none() {
        return Err(no_session(label));
    }
    write_index(&store, &mut lock)?;
    Ok(released)
}

fn no_session(label: &str) -> anyhow::Error {
    UserError::refused(format!("no session named \"{}\"", label.escape_debug()))
        .hinted("`git session list` shows the sessions of this repository")
        .into()
}

/// Explicit claims outlive a merge; edits outlive it too; commit claims end with it.
fn durability(how: ClaimHow) -> u8 {
    match how {
        ClaimHow::Commit => 0,
        ClaimHow::Edit => 1,
        ClaimHow::Explicit => 2,
    }
}

/// Collapses `.`/empty components and leading `./`; never produces a leading `/`.
pub fn normalize_rel(path: &str) -> String {
    path.split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect::<Vec<_>>()
        .join("/")
}

/// Rewrites the index from the current records, under the held index lock.
fn write_index(store: &Store, lock: &mut LockFile) -> Result<()> {
    let view = ClaimsView::load(store, None)?;
    lock.commit(view.serialize().as_bytes())
}

/// The identity of one record file as it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileId {
    ino: u64,
    mtime_ns: i128,
    ctime_ns: i128,
    size: u64,
}

impl FileId {
    fn of(meta: &std::fs::Metadata) -> FileId {
        FileId {
            ino: meta.ino(),
            mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
            ctime_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
            size: meta.size(),
        }
    }
}

/// One session as the index knows it.
#[derive(Debug, Clone)]
pub struct IndexedSession {
    pub label: String,
    pub active: bool,
    pub path: PathBuf,
    id: FileId,
}

/// All claims of all sessions: one line per claim, sorted by path, plus one line per session.
///
/// Lines are kept as text and parsed only when a lookup lands on them.
pub struct ClaimsView {
    pub sessions: Vec<IndexedSession>,
    /// `C\t<escaped path>\t<label>\t<how>\t<since>`, sorted bytewise (so by path).
    lines: Vec<String>,
}

/// One claim line, parsed.
#[derive(Debug, Clone)]
pub struct IndexedClaim {
    pub path: String,
    pub label: String,
    pub how: ClaimHow,
}

impl ClaimsView {
    /// Loads the index and brings it up to date with the records. When it was stale and
    /// `write_back` allows, rewrites it (best effort: a busy lock just skips the write).
    pub fn load(store: &Store, write_back: Option<Duration>) -> Result<ClaimsView> {
        let sessions_dir = store.path("sessions");
        let mut on_disk: Vec<(String, FileId)> = Vec::new();
        match std::fs::read_dir(&sessions_dir) {
            Ok(entries) => {
                for entry in entries {
                    let entry =
                        entry.with_context(|| format!("reading {}", sessions_dir.display()))?;
                    let name = entry.file_name();
                    let Some(label) = name.to_str().and_then(|n| n.strip_suffix(".toml")) else {
                        continue;
                    };
                    if session::validate_label(label, "x/").is_err() {
                        continue;
                    }
                    let meta = std::fs::metadata(entry.path())
                        .with_context(|| format!("reading {}", entry.path().display()))?;
                    on_disk.push((label.to_string(), FileId::of(&meta)));
                }
            }
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("reading {}", sessions_dir.display())),
        }
        let (mut view, parsed) = match std::fs::read_to_string(store.path(INDEX)) {
            Ok(text) => match ClaimsView::parse(&text) {
                Some(v) => (v, true),
                None => (ClaimsView::empty(), false),
            },
            // Missing or unreadable: the index is only derived, so rebuild it from the records.
            Err(_) => (ClaimsView::empty(), false),
        };
        let known: HashMap<&str, FileId> = view
            .sessions
            .iter()
            .map(|s| (s.label.as_str(), s.id))
            .collect();
        let stale: Vec<&(String, FileId)> = on_disk
            .iter()
            .filter(|(label, id)| known.get(label.as_str()) != Some(id))
            .collect();
        let gone: Vec<String> = view
            .sessions
            .iter()
            .filter(|s| !on_disk.iter().any(|(l, _)| *l == s.label))
            .map(|s| s.label.clone())
            .collect();
        if stale.is_empty() && gone.is_empty() && parsed {
            return Ok(view);
        }
        let mut drop: Vec<String> = gone;
        drop.extend(stale.iter().map(|(l, _)| l.clone()));
        view.remove_sessions(&drop);
        for (label, _) in stale {
            if let Some((record, id)) = read_record(store, label)? {
                view.add_record(&record, id);
            }
        }
        sort_lines(&mut view.lines);
        view.sessions.sort_by(|a, b| a.label.cmp(&b.label));
        if let Some(wait) = write_back {
            if let Ok(mut lock) = store.clone().with_lock_wait(wait).lock(INDEX) {
                let _ = lock.commit(view.serialize().as_bytes());
            }
        }
        Ok(view)
    }

    fn empty() -> ClaimsView {
        ClaimsView {
            sessions: Vec::new(),
            lines: Vec::new(),
        }
    }

    fn remove_sessions(&mut self, labels: &[String]) {
        if labels.is_empty() {
            return;
        }
        self.sessions.retain(|s| !labels.contains(&s.label));
        self.lines.retain(|line| {
            let label = line.split('\t').nth(2).unwrap_or("");
            !labels.iter().any(|l| l == label)
        });
    }

    fn add_record(&mut self, record: &SessionRecord, id: FileId) {
        self.sessions.push(IndexedSession {
            label: record.label.clone(),
            active: record.state == RecordState::Active,
            path: record.path.clone(),
            id,
        });
        for c in &record.claims {
            self.lines.push(format!(
                "C\t{}\t{}\t{}\t{}",
                escape(&c.path),
                record.label,
                c.how.as_str(),
                clock::rfc3339(c.since)
            ));
        }
    }

    fn parse(text: &str) -> Option<ClaimsView> {
        let mut lines = text.split('\n');
        if lines.next()? != HEADER {
            return None;
        }
        let mut view = ClaimsView::empty();
        for line in lines {
            if line.is_empty() {
                continue;
            }
            if line.starts_with("C\t") {
                view.lines.push(line.to_string());
                continue;
            }
            let mut f = line.split('\t');
            if f.next()? != "S" {
                return None;
            }
            let label = f.next()?.to_string();
            let id = FileId {
                ino: f.next()?.parse().ok()?,
                mtime_ns: f.next()?.parse().ok()?,
                ctime_ns: f.next()?.parse().ok()?,
                size: f.next()?.parse().ok()?,
            };
            let active = f.next()? == "active";
            let path = PathBuf::from(unescape(f.next()?));
            view.sessions.push(IndexedSession {
                label,
                active,
                path,
                id,
            });
        }
        // A hand-edited or torn order would break the binary search; re-sorting is cheap.
        if view
            .lines
            .windows(2)
            .any(|w| line_key(&w[0]) > line_key(&w[1]))
        {
            sort_lines(&mut view.lines);
        }
        Some(view)
    }

    fn serialize(&self) -> String {
        let mut out = String::with_capacity(64 * (self.lines.len() + self.sessions.len()) + 64);
        out.push_str(HEADER);
        out.push('\n');
        for s in &self.sessions {
            out.push_str(&format!(
                "S\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
                s.label,
                s.id.ino,
                s.id.mtime_ns,
                s.id.ctime_ns,
                s.id.size,
                if s.active { "active" } else { "creating" },
                escape(&s.path.to_string_lossy())
            ));
        }
        for line in &self.lines {
            out.push_str(line);
            out.push('\n');
        }
        out
    }

    /// Claims on exactly `path` (any session).
    fn exact(&self, path: &str) -> impl Iterator<Item = IndexedClaim> + '_ {
        let key = escape(path);
        let start = self.lines.partition_point(|l| line_key(l) < key.as_str());
        self.lines[start..]
            .iter()
            .take_while(move |l| line_key(l) == key)
            .filter_map(|l| {
                let mut f = l.split('\t').skip(1);
                let path = unescape(f.next()?);
                let label = f.next()?.to_string();
                let how = parse_how(f.next()?)?;
                Some(IndexedClaim { path, label, how })
            })
    }

    /// Claims on `path` or on any directory above it.
    pub fn covering(&self, path: &str) -> Vec<IndexedClaim> {
        let mut out: Vec<IndexedClaim> = self.exact(path).collect();
        let mut end = path.len();
        while let Some(slash) = path[..end].rfind('/') {
            out.extend(self.exact(&path[..slash]));
            end = slash;
        }
        out
    }

    /// Whether session `label` already holds a claim covering `path` at least as durable as `how`.
    pub fn holds(&self, label: &str, path: &str, how: ClaimHow) -> bool {
        self.covering(path)
            .iter()
            .any(|c| c.label == label && durability(c.how) >= durability(how))
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }
}

/// The escaped path of a claim line: the sort key.
fn line_key(line: &str) -> &str {
    let rest = line.get(2..).unwrap_or("");
    &rest[..rest.find('\t').unwrap_or(rest.len())]
}

fn sort_lines(lines: &mut [String]) {
    lines.sort_unstable_by(|a, b| line_key(a).cmp(line_key(b)).then_with(|| a.cmp(b)));
}

/// `claimed explicitly`, `claimed by commit`, `claimed by its agent's edit`.
pub fn how_phrase(how: ClaimHow) -> &'static str {
    match how {
        ClaimHow::Explicit => "claimed explicitly",
        ClaimHow::Commit => "claimed by commit",
        ClaimHow::Edit => "claimed by its agent's edit",
    }
}

fn parse_how(text: &str) -> Option<ClaimHow> {
    match text {
        "explicit" => Some(ClaimHow::Explicit),
        "commit" => Some(ClaimHow::Commit),
        "edit" => Some(ClaimHow::Edit),
        _ => None,
    }
}

/// Tabs, newlines and backslashes would break the line format.
fn escape(s: &str) -> String {
    if !s.contains(['\\', '\t', '\n', '\r']) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out
}

fn unescape(s: &str) -> String {
    if !s.contains('\\') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// Reads one record together with the identity of the file it came from. A record that does
/// not parse goes through the store, which sets it aside and reports it.
fn read_record(store: &Store, label: &str) -> Result<Option<(SessionRecord, FileId)>> {
    let rel = SessionRecord::store_path(label);
    let path = store.path(&rel);
    let mut file = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let meta = file
        .metadata()
        .with_context(|| format!("reading {}", path.display()))?;
    let mut text = String::new();
    file.read_to_string(&mut text)
        .with_context(|| format!("reading {}", path.display()))?;
    match toml::from_str::<SessionRecord>(&text) {
        Ok(r) if r.label == label => Ok(Some((r, FileId::of(&meta)))),
        Ok(_) => Ok(None),
        Err(_) => {
            // Set aside (or re-read, if a writer fixed it meanwhile) through the store.
            let _ = store.read::<SessionRecord>(&rel)?;
            Ok(None)
        }
    }
}

/// What asking about one path found.
#[derive(Debug, Default)]
pub struct Resolution {
    /// The live owner, if any.
    pub owner: Option<Owner>,
    /// Claims that would own the path had their session not stopped being live.
    pub lapsed: Vec<Owner>,
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
    shared: globset::GlobSet,
    now: Time,
    facts: HashMap<String, Option<SessionFacts>>,
    /// Branch tips being merged in (MERGE_HEAD): their sessions' claims do not block the merge.
    merging: Vec<git2::Oid>,
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
            shared: config.shared_matcher(),
            now: clock::now(),
            facts: HashMap::new(),
            merging: Vec::new(),
        }
    }

    pub fn merging(mut self, tips: Vec<git2::Oid>) -> Self {
        self.merging = tips;
        self
    }

    pub fn is_shared(&self, path: &str) -> bool {
        !self.config.guard_shared.is_empty() && self.shared.is_match(path)
    }

    /// The owner of `path` other than `me`, and claims on it that lapsed with their session.
    pub fn resolve(&mut self, path: &str, me: Option<&str>) -> Result<Resolution> {
        let mut res = Resolution::default();
        if self.view.is_empty() || self.is_shared(path) {
            return Ok(res);
        }
        let mut candidates: Vec<(Owner, bool)> = Vec::new();
        for c in self.view.covering(path) {
            if Some(c.label.as_str()) == me {
                continue;
            }
            let Some(facts) = self.facts_for(&c.label)? else {
                continue;
            };
            // Confirm against the record: the index may still list a released claim.
            let Some(claim) = facts
                .record
                .claims
                .iter()
                .find(|k| k.path == c.path)
                .cloned()
            else {
                continue;
            };
            let owner = Owner {
                label: facts.record.label.clone(),
                branch: facts.record.branch.clone(),
                path: claim.path.clone(),
                how: claim.how,
                since: claim.since,
                last_activity: facts.last_activity,
            };
            let live = facts.live;
            if live && claim.how == ClaimHow::Commit && self.merged(&c.label)? {
                continue;
            }
            if self.being_merged(&c.label) {
                continue;
            }
            candidates.push((owner, live));
        }
        candidates.sort_by(|a, b| a.0.since.cmp(&b.0.since).then(a.0.label.cmp(&b.0.label)));
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

    fn facts_for(&mut self, label: &str) -> Result<Option<&SessionFacts>> {
        if !self.facts.contains_key(label) {
            let facts = match read_record(self.store, label)? {
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
                .any(|m| *m == tip || self.repo.git.graph_descendant_of(*m, tip).unwrap_or(false)),
            _ => false,
        }
    }
}

/// Records whose worktree is `dir` (for working out who is acting without parsing every record).
pub fn records_in_worktree(
    store: &Store,
    view: &ClaimsView,
    dir: &Path,
) -> Result<Vec<SessionRecord>> {
    let mut out = Vec::new();
    for s in &view.sessions {
        // Records hold canonical paths; canonicalise only a near miss (same final component).
        let near = s.path == dir || s.path.file_name() == dir.file_name();
        if s.active && near && (s.path == dir || session::normalize(&s.path) == dir) {
            if let Some((r, _)) = read_record(store, &s.label)? {
                out.push(r);
            }
        }
    }
    Ok(out)
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
        .or_else(|| git2::Oid::from_str(&r.base_commit).ok());
    Ok(match (tip, base) {
        (Some(t), Some(b)) => repo.merge_state(t, b)?.is_merged(),
        _ => false,
    })
}

/// Every claim of `records` with whether it is in force (session live; a commit claim also
/// needs an unmerged branch), sorted by path, for `claims`.
pub fn claims_with_state(
    repo: &Repo,
    config: &Config,
    records: &[SessionRecord],
) -> Result<Vec<(String, Claim, bool)>> {
    let now = clock::now();
    let mut out = Vec::new();
    for r in records {
        let live = session::is_live(r, config, now);
        let mut merged: Option<bool> = None;
        for c in &r.claims {
            let mut in_force = live;
            if live && c.how == ClaimHow::Commit {
                let m = match merged {
                    Some(m) => m,
                    None => *merged.insert(branch_merged(repo, r)?),
                };
                in_force = !m;
            }
            out.push((r.label.clone(), c.clone(), in_force));
        }
    }
    out.sort_by(|a, b| a.1.path.cmp(&b.1.path).then(a.0.cmp(&b.0)));
    Ok(out)
}

/// A path from the command line (relative to the current directory, like a git pathspec) as a
/// repo-relative, `/`-separated path. Refuses paths outside the worktree.
pub fn repo_relative(repo: &Repo, arg: &std::ffi::OsStr) -> Result<String> {
    let root = repo.current_worktree.as_ref().ok_or_else(|| {
        anyhow!(UserError::refused("this command needs a worktree")
            .hinted("run it inside a worktree of the repository"))
    })?;
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let cwd = std::fs::canonicalize(&cwd).unwrap_or(cwd);
    let arg_path = Path::new(arg);
    let joined = if arg_path.is_absolute() {
        arg_path.to_path_buf()
    } else {
        cwd.join(arg_path)
    };
    // Lexical, so paths that do not exist (yet, or any more) can be claimed and released.
    let mut parts: Vec<std::ffi::OsString> = Vec::new();
    for comp in joined.components() {
        match comp {
            std::path::Component::ParentDir => {
                parts.pop();
            }
            std::path::Component::CurDir | std::path::Component::RootDir => {}
            std::path::Component::Normal(n) => parts.push(n.to_os_string()),
            std::path::Component::Prefix(_) => {}
        }
    }
    let mut abs = PathBuf::from("/");
    for p in &parts {
        abs.push(p);
    }
    let rel = abs.strip_prefix(root).map_err(|_| {
        anyhow!(UserError::refused(format!(
            "{} is outside the worktree {}",
            Path::new(arg).display(),
            root.display()
        ))
        .hinted("name paths inside the repository, relative to the current directory"))
    })?;
    let text = rel
        .to_str()
        .ok_or_else(|| {
            anyhow!(UserError::refused(format!(
                "{} is not valid UTF-8",
                rel.display()
            )))
        })?
        .to_string();
    if text.is_empty() || text == ".git" || text.starts_with(".git/") {
        return Err(UserError::refused(format!(
            "\"{}\" names no file of the repository",
            Path::new(arg).display()
        ))
        .hinted("name a file or directory inside the worktree")
        .into());
    }
    Ok(text)
}

/// How a path is shown in messages: bare when harmless, quoted and escaped otherwise.
pub fn show_path(path: &str) -> String {
    if path
        .chars()
        .any(|c| c.is_control() || c == '"' || c == '\\' || c == ' ' || c == '\'')
        || path.starts_with('-')
    {
        format!("\"{}\"", path.escape_debug())
    } else {
        path.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_round_trips() {
        for s in ["plain", "a\tb", "new\nline", "back\\slash\\n", "\r"] {
            assert_eq!(unescape(&escape(s)), s);
            assert!(!escape(s).contains(['\t', '\n']));
        }
    }

    #[test]
    fn normalize_rel_paths() {
        assert_eq!(normalize_rel("./src//lib.rs"), "src/lib.rs");
        assert_eq!(normalize_rel("src/"), "src");
    }
}
