//! Sessions: labels, the state record, who is acting, liveness, and what a session holds.
//!
//! Invariants a reader must not break:
//! - A label is a [`Label`], checked once where it enters, before it reaches git, the filesystem or
//!   the store; `sessions/<label>.toml` is therefore always a plain file name inside the store.
//! - Last activity is ground truth git keeps (the worktree's index and HEAD reflog mtimes) or the
//!   record's `last_seen`; nothing depends on a process remembering to send a heartbeat.
//! - Liveness decides ownership and pruning; it never by itself blocks a cleanup.
//! - Paths from a record are never trusted to delete: [`Layout::may_delete`] checks them first.
//! - A record holds no claims (they are `claims/<label>.toml`, [`crate::ownership::claims_file`]),
//!   so reading one costs the same whatever the session claimed; a record written before that
//!   keeps its embedded claims in `legacy_claims` until the session's first claims write. Nor
//!   the paths of its commits in flight (`in-flight/<label>.toml`, [`in_flight`]), for the same
//!   reason, with `legacy_in_flight` for a record written before.
//! - `list` and `info` count claims from the claims index ([`Status::owned`]); only `info`, which
//!   shows them, reads a session's claims file.

use crate::base::clock::{self, Time};
use crate::base::process::ProcessId;
use crate::config::Config;
use crate::git::Repo;
use crate::store::Store;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const RECORD_VERSION: u32 = 1;

/// The lock reason `create` puts on a worktree while it is being made; only a lock with this
/// reason may be removed by rollback.
pub const CREATING_LOCK_PREFIX: &str = "git-session: creating";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecordState {
    /// `create` is running (or was interrupted: see `creator`).
    Creating,
    /// Created (or attached) and usable.
    Active,
}

pub use claim::{Claim, ClaimHow};
pub use in_flight::InFlight;

/// Why a session could not be named or found; the command line words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionError {
    /// Text that breaks the label rule ([`label::RULE`]).
    InvalidLabel { text: String },
    /// A store file name that is no label's file name.
    InvalidLabelFileName { name: String },
    /// A base revision git could read as an option, or that is no name at all.
    InvalidBase { rev: String },
    /// No session has this label. `others`: the labels there are, when they were read (the
    /// refusal then names the closest).
    NoSuchSession {
        label: String,
        others: Option<Vec<String>>,
    },
    /// No label was given and no session acts here; `usage` says how to name one.
    NoneHere { usage: String },
}

use crate::base::quote::shortened;

impl std::fmt::Display for SessionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            // Also the reason a record with such a label does not parse: escaped and shortened.
            SessionError::InvalidLabel { text } => {
                write!(f, "invalid label \"{}\"", shortened(text))
            }
            SessionError::InvalidLabelFileName { name } => {
                write!(f, "invalid label file name \"{}\"", shortened(name))
            }
            SessionError::InvalidBase { rev } => write!(f, "invalid base revision {rev:?}"),
            SessionError::NoSuchSession { label, .. } => write!(f, "no session named {label:?}"),
            SessionError::NoneHere { .. } => f.write_str("no session here"),
        }
    }
}

impl std::error::Error for SessionError {}

pub mod claim;
pub mod disk;
pub mod in_flight;
mod inspect;
pub mod label;
pub mod removal;
pub use inspect::{inspect, inspect_all, one_line, owned_claims, State, Status};
pub use label::Label;

/// The last context fill the hook saw for one of the session's agent sessions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextFill {
    pub agent_session: String,
    pub tokens: Option<u64>,
    pub window: u64,
    pub percent: Option<f64>,
    pub at: Time,
}

/// `sessions/<label>.toml`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SessionRecord {
    /// The record's format version.
    pub version: u32,
    /// The session's name, as its branch and worktree carry it.
    pub label: Label,
    /// Short branch name (`session/<label>`); for an attached session, the branch its worktree
    /// had checked out when it attached (may be empty for a detached HEAD).
    pub branch: String,
    /// The worktree's root directory.
    pub path: PathBuf,
    /// The base as named (`main`, `origin/main`, a commit id).
    pub base: String,
    /// The commit the branch was created at: what `base` resolved to then (for a session given
    /// back by `restore`, the archived tip); the fallback when the name no longer resolves.
    pub base_commit: String,
    /// Where the session is in its life: creating, active, archived.
    pub state: RecordState,
    /// Registered in an existing worktree by `create --attach`; owns no worktree or branch.
    #[serde(default)]
    pub attached: bool,
    /// Created with `--path` outside the worktrees directory.
    #[serde(default)]
    pub custom_path: bool,
    /// When it was created.
    pub created: Time,
    /// When a command of it was last seen (liveness reads git's own mtimes too).
    pub last_seen: Time,
    /// The `create` process, while `state` is `creating`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creator: Option<ProcessId>,
    /// The `git worktree add` process (and group leader) while `state` is `creating`, so a
    /// rollback after the creator was killed can stop what it left running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<ProcessId>,
    /// The target directory existed (empty) before `create`: rollback empties it and leaves it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dir_existed: bool,
    /// The agent sessions that work for it, oldest first.
    #[serde(default)]
    pub agent_sessions: Vec<String>,
    /// Claims as records written before claims had their own file (`claims/<label>.toml`) hold
    /// them. Read only until the session's first claims write moves them out
    /// ([`crate::ownership::claims_file`]); kept through every other update, and never written
    /// anew.
    #[serde(default, rename = "claims", skip_serializing_if = "Vec::is_empty")]
    pub legacy_claims: Vec<Claim>,
    /// How full its agent's context window was at the last report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<ContextFill>,
    /// The agent that made this worktree ended its session (Claude Code's `WorktreeRemove`) and
    /// the worktree was kept, because removing it would have lost work: when, and why. `list`
    /// and `info` show it until the session is cleaned up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept: Option<Kept>,
    /// Commits in flight as a store from before they had their own file holds them
    /// ([`in_flight`]); kept through every other update, and never written anew.
    #[serde(default, rename = "in_flight", skip_serializing_if = "Vec::is_empty")]
    pub legacy_in_flight: Vec<InFlight>,
}

/// Why an agent's worktree outlived the agent session that made it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Kept {
    pub at: Time,
    /// One line per reason, as `cleanup` would refuse.
    pub reasons: Vec<String>,
}

impl SessionRecord {
    /// `sessions/<label>.toml`: where the record of `label` is in the store.
    pub fn store_path(label: &Label) -> String {
        format!("sessions/{}.toml", label.file_name())
    }

    /// A new `active` record of a created (not attached) session, made now, with nothing else
    /// known yet; callers set what they know with struct update syntax.
    pub fn new(label: Label, branch: String, path: PathBuf, base: String) -> SessionRecord {
        let now = crate::base::clock::now();
        SessionRecord {
            version: RECORD_VERSION,
            label,
            branch,
            path,
            base,
            base_commit: String::new(),
            state: RecordState::Active,
            attached: false,
            custom_path: false,
            created: now,
            last_seen: now,
            creator: None,
            worker: None,
            dir_existed: false,
            agent_sessions: Vec::new(),
            legacy_claims: Vec::new(),
            context: None,
            kept: None,
            legacy_in_flight: Vec::new(),
        }
    }
}

/// Checks a base revision before git sees it: it can never be read as an option.
pub fn validate_rev(rev: &str) -> Result<(), SessionError> {
    if rev.is_empty()
        || rev.starts_with('-')
        || rev.chars().any(|c| c.is_control() || c == ' ')
        || rev.len() > 256
    {
        return Err(SessionError::InvalidBase {
            rev: rev.to_string(),
        });
    }
    Ok(())
}

/// Where things live for one repository and configuration.
pub struct Layout {
    pub worktrees_dir: PathBuf,
    pub common_dir: PathBuf,
    pub prefix: String,
}

impl Layout {
    pub fn new(repo: &Repo, config: &Config) -> Layout {
        let anchor = repo.anchor_dir().to_path_buf();
        let worktrees_dir = match &config.worktrees_dir {
            Some(dir) if dir.is_absolute() => dir.clone(),
            Some(dir) => anchor.join(dir),
            None => {
                let name = anchor
                    .file_name()
                    .map(|n| n.to_string_lossy().trim_end_matches(".git").to_string())
                    .filter(|n| !n.is_empty())
                    .unwrap_or_else(|| "repo".to_string());
                anchor
                    .parent()
                    .unwrap_or(&anchor)
                    .join(format!("{name}.sessions"))
            }
        };
        Layout {
            worktrees_dir: normalize(&worktrees_dir),
            common_dir: repo.common_dir.clone(),
            prefix: config.branch_prefix.clone(),
        }
    }

    /// `<prefix><label>`: a valid branch name for every [`Label`] (see its module doc).
    pub fn branch(&self, label: &Label) -> String {
        format!("{}{label}", self.prefix)
    }

    /// Where a session's worktree goes by default: `<worktrees dir>/<label's file name>`, one
    /// component below the worktrees directory (`fix/login` is `fix+login`), so it can neither
    /// leave that directory nor nest in another session's worktree.
    pub fn worktree_path(&self, label: &Label) -> PathBuf {
        self.worktrees_dir.join(label.file_name())
    }

    /// Whether `path` lies inside the worktrees directory (not the directory itself): a session
    /// made elsewhere (`create --path`) is a custom-path one.
    pub fn holds(&self, path: &Path) -> bool {
        let path = normalize(path);
        path.starts_with(&self.worktrees_dir) && path != self.worktrees_dir
    }

    /// Whether rollback or cleanup may delete the directory a record names. A record is a claim,
    /// not proof: the record, its branch `<prefix><label>` and the worktree itself must agree.
    /// The record must name the session branch; the directory must lie inside the worktrees
    /// directory, or (`--path` sessions) be a worktree of this repository; and when the
    /// worktree's own HEAD is on a branch, that branch must be the session's. A directory outside
    /// the worktrees directory must be on the session branch (a detached or unreadable HEAD there
    /// proves nothing).
    pub fn may_delete(&self, record: &SessionRecord) -> bool {
        if record.attached || record.branch != self.branch(&record.label) {
            return false;
        }
        let path = normalize(&record.path);
        let inside = path.starts_with(&self.worktrees_dir) && path != self.worktrees_dir;
        let registered = points_into(&path, &self.common_dir);
        let head = admin_dir_of(&path).and_then(|a| crate::git::read_head(&a).ok());
        let on_session_branch = matches!(&head,
            Some(crate::git::Head::Branch(r)) if *r == format!("refs/heads/{}", record.branch));
        match head {
            Some(crate::git::Head::Branch(_)) => {
                on_session_branch && (inside || (record.custom_path && registered))
            }
            Some(crate::git::Head::Detached(_)) | None => inside,
        }
    }
}

/// Lexically normalises `.` and `..` (the path may not exist yet, so no canonicalize).
pub fn normalize(path: &Path) -> PathBuf {
    let base = std::fs::canonicalize(path).ok();
    if let Some(b) = base {
        return b;
    }
    // Canonicalise the longest existing ancestor, then append the rest lexically.
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    let mut existing = out.clone();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (
            existing.file_name().map(|n| n.to_os_string()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return out,
        }
    }
    let mut result = std::fs::canonicalize(&existing).unwrap_or(existing);
    for name in rest.into_iter().rev() {
        result.push(name);
    }
    result
}

/// The directory's `.git` file points at an admin entry under `common_dir/worktrees/`.
pub fn points_into(dir: &Path, common_dir: &Path) -> bool {
    admin_dir_of(dir).is_some_and(|admin| admin.starts_with(common_dir.join("worktrees")))
}

/// The git admin directory of the worktree rooted at `dir`: `<common>/worktrees/<name>` for a
/// linked worktree (from its `.git` file), the `.git` directory itself for a main worktree.
pub fn admin_dir_of(dir: &Path) -> Option<PathBuf> {
    let dotgit = dir.join(".git");
    let meta = std::fs::symlink_metadata(&dotgit).ok()?;
    if meta.is_dir() {
        return std::fs::canonicalize(&dotgit).ok();
    }
    let text = crate::git::read_admin_file(&dotgit)?;
    let target = text.strip_prefix("gitdir:")?.trim();
    let target = if Path::new(target).is_absolute() {
        PathBuf::from(target)
    } else {
        dir.join(target)
    };
    Some(std::fs::canonicalize(&target).unwrap_or(target))
}

/// Every session record, sorted by label. Bad files are set aside (and reported) by the store;
/// a record that cannot be read at all is reported and skipped, so one bad record never hides
/// the others. Only a store that cannot be listed is an error.
pub fn load_all(store: &Store) -> Result<Vec<SessionRecord>> {
    let mut out = Vec::new();
    for name in store.list("sessions")? {
        // Not a label: not a record (the store lists every `*.toml` it finds).
        let Ok(name) = Label::from_file_name(&name) else {
            continue;
        };
        match store.read::<SessionRecord>(&SessionRecord::store_path(&name)) {
            Ok(Some(record)) if record.label == name => out.push(record),
            Ok(_) => {}
            Err(e) => {
                crate::base::announce::emit(crate::base::announce::Announcement::SessionSkipped {
                    name: name.to_string(),
                    error: format!("{e:#}"),
                })
            }
        }
    }
    // By label, not by file name (`a+b` sorts before `a-b`, `a/b` after it).
    out.sort_by(|a, b| a.label.cmp(&b.label));
    Ok(out)
}

/// The record of `label`, only when the record is that label's: on a case-insensitive file
/// system `sessions/Fix.toml` opens `fix`'s file, and `Fix` is then no session (as
/// [`load_all`] has it), not `fix` under another name.
pub fn load(store: &Store, label: &Label) -> Result<Option<SessionRecord>> {
    Ok(store
        .read::<SessionRecord>(&SessionRecord::store_path(label))?
        .filter(|r| r.label == *label))
}

/// The refusal every command gives for a label with no record.
pub fn no_such_session(label: &str) -> SessionError {
    SessionError::NoSuchSession {
        label: label.to_string(),
        others: None,
    }
}

/// The refusal of a label no session has, among the sessions there are (`records`): the words
/// name the closest labels, as every command that takes a label does.
pub fn no_such_session_among(label: &str, records: &[SessionRecord]) -> SessionError {
    let mut others: Vec<String> = records.iter().map(|r| r.label.to_string()).collect();
    others.sort();
    SessionError::NoSuchSession {
        label: label.to_string(),
        others: Some(others),
    }
}

/// Loads one session or refuses naming the closest labels there are.
pub fn require(store: &Store, label: &Label) -> Result<SessionRecord> {
    match load(store, label)? {
        Some(r) => Ok(r),
        None => Err(no_such_session_among(label, &load_all(store)?).into()),
    }
}

/// Refreshes `last_seen` (every command that acts for a session calls this).
pub fn touch(store: &Store, label: &Label) -> Result<()> {
    let now = clock::now();
    store.update::<SessionRecord, _>(&SessionRecord::store_path(label), |r| {
        Ok(r.map(|mut r| {
            if r.last_seen < now {
                r.last_seen = now;
            }
            r
        }))
    })?;
    Ok(())
}

/// `GIT_SESSION`, when it is set to a valid label. An invalid one is ignored with a warning (once
/// per process): it comes from the environment, and must never become a path or a ref.
pub fn env_label() -> Option<Label> {
    let raw = std::env::var_os("GIT_SESSION")?;
    let text = raw.to_string_lossy();
    let label = text.trim();
    if label.is_empty() {
        return None;
    }
    match Label::new(label) {
        Ok(label) => Some(label),
        Err(_) => {
            static WARNED: std::sync::Once = std::sync::Once::new();
            WARNED.call_once(|| {
                crate::base::announce::emit(
                    crate::base::announce::Announcement::GitSessionIgnored {
                        value: label.to_string(),
                    },
                );
            });
            None
        }
    }
}

/// The session a command is about: the label given (checked), else the one acting here; else
/// the one refusal every command gives, naming `usage` (how to name one) in its hint.
pub fn given_or_acting(
    repo: &Repo,
    store: &Store,
    given: Option<String>,
    usage: &str,
) -> Result<Label> {
    match given {
        Some(label) => Ok(Label::from_string(label)?),
        None => acting_label(repo, &load_all(store)?).ok_or_else(|| {
            SessionError::NoneHere {
                usage: usage.to_string(),
            }
            .into()
        }),
    }
}

/// Who is acting: `GIT_SESSION` (when valid), else the one session owning or attached to the
/// current worktree, else nobody.
pub fn acting_label(repo: &Repo, records: &[SessionRecord]) -> Option<Label> {
    if let Some(label) = env_label() {
        return Some(label);
    }
    let here = repo.current_worktree.as_ref()?;
    let mut matching = records
        .iter()
        .filter(|r| r.state == RecordState::Active && normalize(&r.path) == *here);
    let first = matching.next()?;
    if matching.next().is_some() {
        return None;
    }
    Some(first.label.clone())
}

/// Newest of `last_seen`, the worktree's index mtime and its HEAD reflog mtime.
pub fn last_activity(record: &SessionRecord) -> Time {
    last_activity_in(record, admin_dir_of(&record.path).as_deref())
}

/// [`last_activity`], the worktree's git directory `admin` already found ([`admin_dir_of`]).
pub fn last_activity_in(record: &SessionRecord, admin: Option<&Path>) -> Time {
    let mut newest = record.last_seen;
    if let Some(admin) = admin {
        for file in ["index", "logs/HEAD"] {
            if let Some(t) = clock::mtime(&admin.join(file)) {
                newest = newest.max(t);
            }
        }
    }
    newest
}

/// Whether the session's claims are live at `now`, its [`last_activity`] already read (what
/// claims are judged by; `list` and `info` derive their own state in `inspect`, from the same
/// activity and `live_for`).
pub fn is_live_given(record: &SessionRecord, config: &Config, now: Time, last: Time) -> bool {
    record.state == RecordState::Active && record.path.exists() && now - last <= config.live_for
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revs() {
        assert!(validate_rev("main").is_ok());
        assert!(validate_rev("origin/main~2").is_ok());
        assert!(validate_rev("--orphan").is_err());
        assert!(validate_rev("").is_err());
    }
}
