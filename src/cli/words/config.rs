//! The words for a refused `.git-session.toml` ([`ConfigError`]).

use crate::base::clock;
use crate::cli::user_error::UserError;
use crate::config::ConfigError;

pub fn words(e: &ConfigError) -> UserError {
    match e {
        ConfigError::BadValue {
            file,
            key,
            expected,
        } => UserError::refused(format!(
            "{}: bad value for `{key}`: expected {expected}",
            file.display()
        ))
        .hinted(format!("fix or remove `{key}` in {}", file.display())),
        ConfigError::NotADuration { file, key, text } => UserError::refused(format!(
            "{}: bad value for `{key}`: {text:?} is not a duration",
            file.display()
        ))
        .hinted(format!(
            "{} (as a string: {key} = \"300s\")",
            clock::duration_hint(text)
        )),
        ConfigError::Unreadable { file, why } => {
            UserError::refused(format!("{}: {why}", file.display())).hinted(
                "allowed keys: base, branch_prefix, worktrees_dir, create_timeout, live_for, \
                 stale_after, archive_keep, [create] copy/run, [guard] shared, [context] \
                 window/thresholds/messages, [merge] strategy/timeout, [claims] \
                 remote/ttl/timeout",
            )
        }
    }
}
