//! `[notify]`: a command of the user's run once each time an agent starts waiting (for a
//! permission, or for input after its turn ended). Off by default.
//!
//! Invariants: the command is the user's own text, taken only from the user's configuration
//! file, never from the repository's (a clone must not run commands on its agents' events); it
//! runs through `sh -c` with the label, the reason and the worktree as its arguments `$1`, `$2`,
//! `$3` and as `GIT_SESSION_NOTIFY_LABEL`, `..._REASON`, `..._WORKTREE`, so no text of the
//! agent's ever becomes part of a shell string.

use super::error::{bad, ConfigError};
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawNotify {
    command: Option<String>,
}

/// What `[notify]` says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Notify {
    /// The shell command line to run; `None`: nothing is run.
    pub command: Option<String>,
}

impl Notify {
    pub(super) fn apply(
        &mut self,
        file: &Path,
        raw: RawNotify,
        from_repo: bool,
    ) -> Result<(), ConfigError> {
        let Some(command) = raw.command else {
            return Ok(());
        };
        if from_repo {
            return Err(bad(
                file,
                "notify.command",
                "a value only in your own configuration file (~/.config/git-session/config.toml), not \
                 the repository's",
            ));
        }
        if command.trim().is_empty() || command.contains('\0') {
            return Err(bad(file, "notify.command", "a command line"));
        }
        self.command = Some(command);
        Ok(())
    }
}
