//! The checks a key's value must pass that both readers apply: the strict one
//! ([`super::Config::load`]) and the guard's ([`super::Config::load_for_guard`]), so the two
//! cannot disagree about what is good.

use super::error::{bad, ConfigError};
use super::{DurationValue, Escape};
use crate::base::clock::parse_duration;
use chrono::Duration;
use std::path::Path;

pub(super) fn duration(file: &Path, key: &str, v: DurationValue) -> Result<Duration, ConfigError> {
    // A bare number (TOML integer or digits in a string) is refused: its unit is a guess.
    let text = match v {
        DurationValue::Seconds(n) => n.to_string(),
        DurationValue::Text(t) => t,
    };
    parse_duration(&text).ok_or_else(|| ConfigError::NotADuration {
        file: file.to_path_buf(),
        at: None,
        key: key.to_string(),
        text,
    })
}

/// What `branch_prefix` takes.
pub(super) const PREFIX_ALLOWED: &str = "a ref prefix ending in `/`, such as \"session/\"";
/// What `[guard] shared` takes.
pub(super) const SHARED_ALLOWED: &str = "glob patterns such as \"*.lock\"";
/// What `[claims] remote` takes.
pub(super) const REMOTE_ALLOWED: &str = "the name of a git remote, such as \"origin\"";

pub(super) fn check_prefix(file: &Path, prefix: String) -> Result<String, ConfigError> {
    let ok = !prefix.is_empty()
        && prefix.ends_with('/')
        && !prefix.starts_with('-')
        && !prefix.starts_with('/')
        && crate::git::is_valid_ref_name(&format!("refs/heads/{prefix}x"));
    if ok {
        Ok(prefix)
    } else {
        Err(bad(file, "branch_prefix", PREFIX_ALLOWED))
    }
}

pub(super) fn check_shared(file: &Path, shared: Vec<String>) -> Result<Vec<String>, ConfigError> {
    if shared.iter().any(|glob| globset::Glob::new(glob).is_err()) {
        return Err(bad(file, "guard.shared", SHARED_ALLOWED));
    }
    Ok(shared)
}

pub(super) fn check_remote(file: &Path, remote: String) -> Result<String, ConfigError> {
    let ok = !remote.is_empty()
        && !remote.starts_with('-')
        && crate::git::is_valid_ref_name(&format!("refs/remotes/{remote}/x"));
    if ok {
        Ok(remote)
    } else {
        Err(bad(file, "claims.remote", REMOTE_ALLOWED))
    }
}

/// What `[guard] escape` takes.
pub(super) const ESCAPE_ALLOWED: &str = "\"deny\", \"warn\" or \"allow\"";

pub(super) fn check_escape(file: &Path, escape: &str) -> Result<Escape, ConfigError> {
    match escape {
        "deny" => Ok(Escape::Deny),
        "warn" => Ok(Escape::Warn),
        "allow" => Ok(Escape::Allow),
        _ => Err(bad(file, "guard.escape", ESCAPE_ALLOWED)),
    }
}

/// `[create] link`: repository-relative directories, none of whose parts is empty, `.`, `..`
/// or `.git` (a link must not lead out of the worktree, nor into git's own files).
pub(super) fn check_link(file: &Path, link: Vec<String>) -> Result<Vec<String>, ConfigError> {
    let bad_path = |p: &String| {
        p.starts_with('/')
            || p.split('/')
                .any(|c| c.is_empty() || c == "." || c == ".." || c == ".git")
    };
    if link.iter().any(bad_path) {
        return Err(bad(
            file,
            "create.link",
            "repository-relative directories without `..` or `.git`",
        ));
    }
    Ok(link)
}
