//! `[merge] check` and `[merge] check_timeout`: the commands `merge` runs on the integrated
//! result before the base moves, and the deadline they share.
//!
//! Invariants: nothing here runs a program; a list from the repository's own file is returned
//! with its origin ([`MergeCheck::from_repo`]) so that `merge` asks for approval, as `[create]
//! run` does. A later file's `check` replaces the list whole (an empty list turns checks off).

use super::checks::duration;
use super::error::{bad, ConfigError};
use super::DurationValue;
use chrono::Duration;
use std::path::Path;

/// What `merge` runs on the integrated result (each through `sh -c`, in a scratch worktree).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeCheck {
    pub commands: Vec<String>,
    /// The list came from the repository's `.git-session.toml` (it needs the user's approval).
    pub from_repo: bool,
    /// How long all the commands together may take.
    pub timeout: Duration,
}

impl Default for MergeCheck {
    fn default() -> Self {
        MergeCheck {
            commands: Vec::new(),
            from_repo: false,
            timeout: Duration::minutes(30),
        }
    }
}

impl MergeCheck {
    /// Applies `check` and `check_timeout` of one file's `[merge]` section.
    pub(super) fn apply(
        &mut self,
        file: &Path,
        check: Option<Vec<String>>,
        timeout: Option<DurationValue>,
        from_repo: bool,
    ) -> Result<(), ConfigError> {
        if let Some(commands) = check {
            if commands
                .iter()
                .any(|c| c.trim().is_empty() || c.contains('\0'))
            {
                return Err(bad(
                    file,
                    "merge.check",
                    "a list of shell commands, such as [\"cargo test --locked\"]",
                ));
            }
            self.commands = commands;
            self.from_repo = from_repo;
        }
        if let Some(v) = timeout {
            let d = duration(file, "merge.check_timeout", v)?;
            if d <= Duration::zero() {
                return Err(bad(
                    file,
                    "merge.check_timeout",
                    "a duration such as \"20m\"",
                ));
            }
            self.timeout = d;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_is_kept_with_its_origin_and_an_empty_command_is_refused() {
        let file = Path::new(".git-session.toml");
        let mut c = MergeCheck::default();
        c.apply(file, Some(vec!["make test".into()]), None, true)
            .unwrap();
        assert_eq!(c.commands, vec!["make test".to_string()]);
        assert!(c.from_repo);
        c.apply(
            file,
            Some(vec![]),
            Some(DurationValue::Text("5m".into())),
            false,
        )
        .unwrap();
        assert!(c.commands.is_empty() && !c.from_repo);
        assert_eq!(c.timeout, Duration::minutes(5));
        let err = c
            .apply(file, Some(vec!["  ".into()]), None, true)
            .unwrap_err();
        assert!(err.to_string().contains("merge.check"), "{err}");
    }
}
