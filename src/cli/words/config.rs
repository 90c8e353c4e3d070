//! The words for a refused `.git-session.toml` ([`ConfigError`]), and the guard's warning about a
//! damaged one ([`Damage`]).

use crate::base::clock;
use crate::cli::user_error::UserError;
use crate::config::{ConfigError, Damage, Fallback};

/// Every key there is, for the hint of a file the reader refused.
const ALLOWED_KEYS: &str = "allowed keys: base, branch_prefix, worktrees_dir, create_timeout, \
     live_for, stale_after, archive_keep, [create] copy/link/run, [guard] shared/escape, \
     [context] window/reserve/thresholds/messages, \
     [merge] strategy/timeout/check/check_timeout/union/regenerate, [claims] remote/ttl/timeout, \
     [resources] ports/port_range/names, [notify] command, [list] sort";

/// What is wrong, where: `file:line:column: ...`, one line.
fn problem(e: &ConfigError) -> String {
    let at = e.location();
    match e {
        ConfigError::BadValue { key, expected, .. } => {
            format!("{at}: bad value for `{key}`: expected {expected}")
        }
        ConfigError::NotADuration { key, text, .. } => {
            format!("{at}: bad value for `{key}`: {text:?} is not a duration")
        }
        ConfigError::Unreadable {
            key: Some(key),
            why,
            ..
        } => format!("{at}: `{key}`: {why}"),
        ConfigError::Unreadable { why, .. } => format!("{at}: {why}"),
        ConfigError::NotText { .. } => format!("{at}: not UTF-8 text, so no TOML"),
        ConfigError::NotRead { why, .. } => format!("{at}: cannot be read: {why}"),
    }
}

pub fn words(e: &ConfigError) -> UserError {
    let refused = UserError::refused(problem(e));
    let file = e.file().display();
    match e {
        ConfigError::BadValue { key, .. } => {
            refused.hinted(format!("fix or remove `{key}` in {file}"))
        }
        ConfigError::NotADuration { key, text, .. } => refused.hinted(format!(
            "{} (as a string: {key} = \"300s\")",
            clock::duration_hint(text)
        )),
        ConfigError::Unreadable { .. } => refused.hinted(ALLOWED_KEYS),
        ConfigError::NotText { .. } => {
            refused.hinted(format!("write {file} as UTF-8 TOML, or remove it"))
        }
        ConfigError::NotRead { .. } => {
            refused.hinted(format!("make {file} readable, or remove it"))
        }
    }
}

/// The guard's warning about one problem in a configuration file: what and where, and that the
/// guard goes on enforcing (with which defaults). One line.
pub fn guard_warning(d: &Damage) -> String {
    let problem = problem(&d.error);
    match &d.fallback {
        Fallback::Unused => format!(
            "{problem}; the guard still enforces (it reads only branch_prefix, live_for, [guard] \
             shared and escape, [claims]), other commands refuse the file until it is fixed"
        ),
        Fallback::KeyDefault { key } => format!(
            "{problem}; the guard still enforces, with the default for `{key}`{}",
            match key.as_str() {
                "guard" => " (no path shared, escapes denied)",
                "guard.shared" => " (no path shared)",
                "guard.escape" => " (escapes denied)",
                _ => "",
            }
        ),
        Fallback::FileDefaults => format!(
            "{problem}; the guard still enforces, with the defaults for every key this file sets"
        ),
    }
}
