//! Configuration: `.git-session.toml` at the repository root (the team's), then
//! `$XDG_CONFIG_HOME/git-session/config.toml` (the user's; it wins, key by key).
//!
//! Invariants: every key has a default, so no file is needed; an unknown key, a bad value or a
//! syntax error is an error naming the file, the line and column, the key and what is allowed,
//! never silently ignored ([`Config::load`]). The guard alone reads leniently
//! ([`Config::load_for_guard`], in `lenient.rs`): damage is reported, never fatal, and never
//! loosens what the guard enforces. Nothing here runs a program; `[create] run` from the
//! repository's own file is only *returned* with its origin so that `create` can ask for
//! approval.

use anyhow::Result;
use chrono::Duration;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod checks;
mod error;
pub mod lenient;
pub mod list;
mod merge_check;
mod merge_union;
pub mod notify;
pub mod resources;

use checks::{check_escape, check_prefix, check_remote, check_shared, duration};
use error::{bad, read_text};
pub use error::{ConfigError, Position};
pub use lenient::{Damage, Fallback};
pub use merge_check::MergeCheck;
pub use merge_union::MergeFiles;

/// One threshold of the context hook: fires once when fill reaches `percent`.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    pub percent: f64,
    /// The configured message (`[context] messages`); `None`: the built-in words for it.
    pub message: Option<String>,
}

/// The configuration in force: the repository's `.git-session.toml` over the user's file over
/// the defaults, each key checked when read.
#[derive(Debug, Clone)]
pub struct Config {
    /// Base revision for new sessions; `None` means the repository's main branch.
    pub base: Option<String>,
    /// What session branches are named with, before the label (`branch_prefix`, `session/`).
    pub branch_prefix: String,
    /// Where worktrees go; relative paths resolve from the main worktree. `None`: the default
    /// sibling `../<repo-name>.sessions`.
    pub worktrees_dir: Option<PathBuf>,
    /// The deadline of `create`, after which it rolls back whole (`create_timeout`, 300 s).
    pub create_timeout: Duration,
    /// How long a session with no activity stays live, holding its claims (`live_for`).
    pub live_for: Duration,
    /// After how long without activity a session is called stale (`stale_after`).
    pub stale_after: Duration,
    /// How long an archived session's record is kept (`archive_keep`).
    pub archive_keep: Duration,
    /// `[create] copy`: files of the main worktree copied into each new session.
    pub create_copy: Vec<String>,
    /// `[create] link`: directories of the main worktree each session links to, not copies.
    pub create_link: Vec<String>,
    /// `[create] run`: commands run in each new session's worktree.
    pub create_run: Vec<String>,
    /// True when `create_run` came from the repository's own file (needs the user's approval).
    pub create_run_from_repo: bool,
    /// `[guard] shared`: patterns of paths no session owns (lock files, generated files).
    pub guard_shared: Vec<String>,
    /// What an agent's write into another worktree of the repository, or a session's commit in
    /// a worktree not its own, meets (`[guard] escape`).
    pub guard_escape: Escape,
    /// `[context] window`: the agent's context window, where it does not say it.
    pub context_window: Option<u64>,
    /// Tokens kept free below the window where Claude Code compacts (`[context] reserve`).
    pub context_reserve: Option<u64>,
    /// `[context] thresholds`: the shares of the budget at which the agent is told.
    pub thresholds: Vec<Threshold>,
    /// How `merge` integrates a session into its base (`[merge] strategy`).
    pub merge_strategy: MergeStrategy,
    /// How long `merge` may take before it rolls back (`[merge] timeout`).
    pub merge_timeout: Duration,
    /// `[merge] check`: what runs on the integrated result before the base moves.
    pub merge_check: MergeCheck,
    /// `[merge] union` and `regenerate`: shared files that merge instead of colliding.
    pub merge_files: MergeFiles,
    /// `[claims] remote`: share claims through this git remote (`None`: this clone only).
    pub claims_remote: Option<String>,
    /// `[claims] ttl`: a shared claim not renewed within this lapses.
    pub claims_ttl: Duration,
    /// `[claims] timeout`: every network call's deadline.
    pub claims_timeout: Duration,
    /// `[resources]`: ports and names leased to each session.
    pub resources: resources::Resources,
    /// `[notify]`: a command run when an agent starts waiting.
    pub notify: notify::Notify,
    /// `[list]`: the order of `list` without `--sort`.
    pub list: list::List,
}

/// How `git session merge` integrates a session into its base branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeStrategy {
    /// Replay the session's commits onto the base, then fast-forward the base (the default).
    Rebase,
    /// A merge commit with the base and the session as parents.
    Merge,
    /// One new commit on the base holding all of the session's changes.
    Squash,
}

impl MergeStrategy {
    pub fn as_str(self) -> &'static str {
        match self {
            MergeStrategy::Rebase => "rebase",
            MergeStrategy::Merge => "merge",
            MergeStrategy::Squash => "squash",
        }
    }
}

/// `[guard] escape`: what a session's write or commit outside its own worktree meets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Escape {
    /// Refused before it happens (the default).
    Deny,
    /// Let through, with a warning and an audit line.
    Warn,
    /// Let through, recorded in the audit log only.
    Allow,
}

/// The context window assumed where neither the agent nor the configuration gives one.
pub const DEFAULT_WINDOW: u64 = 200_000;

/// The thresholds of the context hook when none are configured: 70, 90 and 95 %, each with the
/// built-in words (`message: None`, worded by the command line).
pub fn default_thresholds() -> Vec<Threshold> {
    [70.0, 90.0, 95.0]
        .into_iter()
        .map(|percent| Threshold {
            percent,
            message: None,
        })
        .collect()
}

impl Default for Config {
    fn default() -> Self {
        Config {
            base: None,
            branch_prefix: "session/".to_string(),
            worktrees_dir: None,
            create_timeout: Duration::seconds(300),
            live_for: Duration::hours(24),
            stale_after: Duration::days(7),
            archive_keep: Duration::days(30),
            create_copy: Vec::new(),
            create_link: Vec::new(),
            create_run: Vec::new(),
            create_run_from_repo: false,
            guard_shared: Vec::new(),
            guard_escape: Escape::Deny,
            context_window: None,
            context_reserve: None,
            thresholds: default_thresholds(),
            merge_strategy: MergeStrategy::Rebase,
            merge_timeout: Duration::seconds(300),
            merge_check: MergeCheck::default(),
            merge_files: MergeFiles::default(),
            claims_remote: None,
            claims_ttl: Duration::hours(8),
            claims_timeout: Duration::seconds(20),
            resources: resources::Resources::default(),
            notify: notify::Notify::default(),
            list: list::List::default(),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    base: Option<String>,
    branch_prefix: Option<String>,
    worktrees_dir: Option<String>,
    create_timeout: Option<DurationValue>,
    live_for: Option<DurationValue>,
    stale_after: Option<DurationValue>,
    archive_keep: Option<DurationValue>,
    create: Option<RawCreate>,
    guard: Option<RawGuard>,
    context: Option<RawContext>,
    merge: Option<RawMerge>,
    claims: Option<RawClaims>,
    resources: Option<resources::RawResources>,
    notify: Option<notify::RawNotify>,
    list: Option<list::RawList>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawClaims {
    remote: Option<String>,
    ttl: Option<DurationValue>,
    timeout: Option<DurationValue>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMerge {
    strategy: Option<String>,
    timeout: Option<DurationValue>,
    check: Option<Vec<String>>,
    check_timeout: Option<DurationValue>,
    union: Option<Vec<String>>,
    regenerate: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCreate {
    copy: Option<Vec<String>>,
    link: Option<Vec<String>>,
    run: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGuard {
    shared: Option<Vec<String>>,
    escape: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawContext {
    window: Option<u64>,
    reserve: Option<u64>,
    thresholds: Option<Vec<f64>>,
    /// Message per threshold, keyed by its percent (`"90" = "..."`).
    messages: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum DurationValue {
    Seconds(i64),
    Text(String),
}

/// How this clone shares its claims across machines (`[claims]`), when a remote is set.
#[derive(Debug, Clone)]
pub struct ClaimsSharing {
    pub remote: String,
    /// A shared claim not renewed within this lapses and may be taken.
    pub ttl: std::time::Duration,
    /// Every network call's deadline.
    pub timeout: std::time::Duration,
}

impl Config {
    /// How claims are shared across machines, when `[claims] remote` is set.
    pub fn shared_claims(&self) -> Option<ClaimsSharing> {
        let remote = self.claims_remote.clone()?;
        Some(ClaimsSharing {
            remote,
            ttl: self
                .claims_ttl
                .to_std()
                .unwrap_or(std::time::Duration::from_secs(8 * 3600)),
            timeout: self
                .claims_timeout
                .to_std()
                .unwrap_or(std::time::Duration::from_secs(20)),
        })
    }

    /// Loads the repository's file (if any) and then the user's (if any) over the defaults.
    /// The first error refuses the whole configuration, naming file, line and column.
    pub fn load(repo_root: Option<&Path>) -> Result<Config> {
        let mut config = Config::default();
        for (file, from_repo) in files(repo_root) {
            let text = read_text(&file)?;
            config.apply(&file, &text, from_repo)?;
        }
        Ok(config)
    }

    /// Applies one file's text over `self`, all or nothing; the error says where in `text`.
    fn apply(&mut self, file: &Path, text: &str, from_repo: bool) -> Result<(), ConfigError> {
        let raw: RawConfig = toml::from_str(text).map_err(|e| {
            let why = e.message().trim().replace('\n', "; ");
            // The key, where the reader's own words do not name it (a value of the wrong type).
            let key = e
                .span()
                .and_then(|s| lenient::key_at(text, s.start))
                .filter(|k| !why.contains(&format!("`{k}`")));
            ConfigError::Unreadable {
                file: file.to_path_buf(),
                at: Position::of_span(text, e.span()),
                key,
                why,
            }
        })?;
        let mut next = self.clone();
        next.apply_raw(file, raw, from_repo)
            .map_err(|e| lenient::locate(e, text))?;
        *self = next;
        Ok(())
    }

    fn apply_raw(
        &mut self,
        file: &Path,
        raw: RawConfig,
        from_repo: bool,
    ) -> Result<(), ConfigError> {
        if let Some(base) = raw.base {
            if base.is_empty() || base.starts_with('-') || base.chars().any(char::is_control) {
                return Err(bad(file, "base", "a revision name not starting with `-`"));
            }
            self.base = Some(base);
        }
        if let Some(prefix) = raw.branch_prefix {
            self.branch_prefix = check_prefix(file, prefix)?;
        }
        if let Some(dir) = raw.worktrees_dir {
            if dir.is_empty() || dir.chars().any(char::is_control) {
                return Err(bad(file, "worktrees_dir", "a directory path"));
            }
            self.worktrees_dir = Some(PathBuf::from(dir));
        }
        if let Some(v) = raw.create_timeout {
            self.create_timeout = duration(file, "create_timeout", v)?;
        }
        if let Some(v) = raw.live_for {
            self.live_for = duration(file, "live_for", v)?;
        }
        if let Some(v) = raw.stale_after {
            self.stale_after = duration(file, "stale_after", v)?;
        }
        if let Some(v) = raw.archive_keep {
            self.archive_keep = duration(file, "archive_keep", v)?;
        }
        if let Some(create) = raw.create {
            self.apply_create(file, create, from_repo)?;
        }
        if let Some(guard) = raw.guard {
            self.apply_guard(file, guard)?;
        }
        if let Some(merge) = raw.merge {
            self.apply_merge(file, merge, from_repo)?;
        }
        if let Some(claims) = raw.claims {
            self.apply_claims(file, claims)?;
        }
        if let Some(context) = raw.context {
            self.apply_context(file, context)?;
        }
        if let Some(r) = raw.resources {
            self.resources.apply(file, r)?;
        }
        if let Some(n) = raw.notify {
            self.notify.apply(file, n, from_repo)?;
        }
        if let Some(l) = raw.list {
            self.list.apply(file, l)?;
        }
        Ok(())
    }

    /// `[create]`: files to copy and commands to run in each new worktree.
    fn apply_create(
        &mut self,
        file: &Path,
        create: RawCreate,
        from_repo: bool,
    ) -> Result<(), ConfigError> {
        if let Some(copy) = create.copy {
            if copy
                .iter()
                .any(|p| p.is_empty() || p.starts_with('/') || p.split('/').any(|c| c == ".."))
            {
                return Err(bad(
                    file,
                    "create.copy",
                    "repository-relative paths without `..`",
                ));
            }
            self.create_copy = copy;
        }
        if let Some(link) = create.link {
            self.create_link = checks::check_link(file, link)?;
        }
        if let Some(run) = create.run {
            self.create_run = run;
            self.create_run_from_repo = from_repo;
        }
        Ok(())
    }

    /// `[guard]`: paths nobody owns.
    fn apply_guard(&mut self, file: &Path, guard: RawGuard) -> Result<(), ConfigError> {
        if let Some(shared) = guard.shared {
            self.guard_shared = check_shared(file, shared)?;
        }
        if let Some(escape) = guard.escape {
            self.guard_escape = check_escape(file, &escape)?;
        }
        Ok(())
    }

    /// `[merge]`: how `merge` integrates, and its deadline.
    fn apply_merge(
        &mut self,
        file: &Path,
        merge: RawMerge,
        from_repo: bool,
    ) -> Result<(), ConfigError> {
        self.merge_check
            .apply(file, merge.check, merge.check_timeout, from_repo)?;
        self.merge_files
            .apply(file, merge.union, merge.regenerate, from_repo)?;
        if let Some(strategy) = merge.strategy {
            self.merge_strategy = match strategy.as_str() {
                "rebase" => MergeStrategy::Rebase,
                "merge" => MergeStrategy::Merge,
                "squash" => MergeStrategy::Squash,
                _ => {
                    return Err(bad(
                        file,
                        "merge.strategy",
                        "\"rebase\", \"merge\" or \"squash\"",
                    ))
                }
            };
        }
        if let Some(v) = merge.timeout {
            self.merge_timeout = duration(file, "merge.timeout", v)?;
        }
        Ok(())
    }

    /// `[claims]`: sharing claims across machines.
    fn apply_claims(&mut self, file: &Path, claims: RawClaims) -> Result<(), ConfigError> {
        if let Some(remote) = claims.remote {
            self.claims_remote = Some(check_remote(file, remote)?);
        }
        if let Some(v) = claims.ttl {
            self.claims_ttl = duration(file, "claims.ttl", v)?;
        }
        if let Some(v) = claims.timeout {
            self.claims_timeout = duration(file, "claims.timeout", v)?;
        }
        Ok(())
    }

    /// `[context]`: the window, the thresholds and their messages.
    fn apply_context(&mut self, file: &Path, context: RawContext) -> Result<(), ConfigError> {
        if let Some(window) = context.window {
            if window < 1000 {
                return Err(bad(
                    file,
                    "context.window",
                    "a token count of at least 1000",
                ));
            }
            self.context_window = Some(window);
        }
        if let Some(reserve) = context.reserve {
            self.context_reserve = Some(reserve);
        }
        if let Some(mut percents) = context.thresholds {
            if percents.is_empty() || percents.iter().any(|p| !(*p > 0.0 && *p <= 100.0)) {
                return Err(bad(
                    file,
                    "context.thresholds",
                    "percentages between 0 and 100, such as [70, 90, 95]",
                ));
            }
            percents.sort_by(|a, b| a.total_cmp(b));
            percents.dedup();
            self.thresholds = percents
                .into_iter()
                .map(|percent| Threshold {
                    percent,
                    message: None,
                })
                .collect();
        }
        if let Some(messages) = context.messages {
            for (key, message) in messages {
                let percent: Option<f64> = key.trim_end_matches('%').parse().ok();
                let slot =
                    percent.and_then(|p| self.thresholds.iter_mut().find(|t| t.percent == p));
                match slot {
                    Some(t) => t.message = Some(message),
                    None => {
                        return Err(bad(
                            file,
                            &format!("context.messages.{key}"),
                            "a key naming one of the configured thresholds, such as \"90\"",
                        ))
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether a repo-relative path matches `[guard] shared`.
    pub fn shared_matcher(&self) -> globset::GlobSet {
        let mut builder = globset::GlobSetBuilder::new();
        for glob in &self.guard_shared {
            if let Ok(g) = globset::GlobBuilder::new(glob)
                .literal_separator(false)
                .build()
            {
                builder.add(g);
            }
        }
        builder
            .build()
            .unwrap_or_else(|_| globset::GlobSet::empty())
    }
}

/// The files that configure a repository, in the order they apply (the user's last: it wins),
/// each with whether it is the repository's own; only those that exist.
fn files(repo_root: Option<&Path>) -> Vec<(PathBuf, bool)> {
    let repo = repo_root.map(|root| (root.join(".git-session.toml"), true));
    let user = user_config_path().map(|file| (file, false));
    repo.into_iter()
        .chain(user)
        .filter(|(file, _)| file.is_file())
        .collect()
}

pub fn user_config_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("git-session").join("config.toml"))
}

#[cfg(test)]
mod tests;
