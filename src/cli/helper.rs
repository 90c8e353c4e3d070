//! [`CommandHelper`]: what a command that works on a repository's sessions needs, set up once.
//!
//! Invariants a reader must not break:
//! - A command builds one helper and passes it down (also to the commands it runs on behalf of
//!   another, such as the WorktreeCreate hook running `create`), so the repository is opened and
//!   the configuration read once per process.
//! - The configuration is read on first use, not when the helper is built: commands that never
//!   needed it (`release`, `hooks`) still work under a configuration file that does not parse,
//!   and the order of the checks a command makes (and so which refusal a user sees first) is the
//!   command's own.
//! - Rolling back interrupted creations is an explicit step ([`CommandHelper::recover`]) that each
//!   command takes where it always did: before it reads the sessions it lists, inspects or
//!   changes, after its own argument checks.
//! - The guard and the context hook do not use it: they run on every commit and every tool call,
//!   open the repository their own way (the guard fails open, the hook works outside
//!   repositories too) and must never pay for recovery.

use crate::cli::user_error::UserError;
use crate::config::Config;
use crate::git::Repo;
use crate::lifecycle;
use crate::session::{self, Label, Layout};
use crate::store::Store;
use anyhow::Result;
use std::cell::OnceCell;

pub struct CommandHelper {
    pub repo: Repo,
    pub store: Store,
    config: OnceCell<Config>,
}

impl CommandHelper {
    /// The repository the current directory (or `GIT_DIR`) is in, and its store; refuses outside
    /// a repository.
    pub fn open() -> Result<CommandHelper> {
        let repo = Repo::require()?;
        let store = crate::store::Store::of(&repo);
        Ok(CommandHelper {
            repo,
            store,
            config: OnceCell::new(),
        })
    }

    /// The configuration (the repository's file and the user's), read on first use.
    pub fn config(&self) -> Result<&Config> {
        if let Some(config) = self.config.get() {
            return Ok(config);
        }
        let config = Config::load(self.repo.config_root())?;
        Ok(self.config.get_or_init(|| config))
    }

    /// Where worktrees and branches of sessions go under this configuration.
    pub fn layout(&self) -> Result<Layout> {
        Ok(Layout::new(&self.repo, self.config()?))
    }

    /// Rolls back creations that were interrupted (see [`lifecycle::recover_interrupted`]).
    pub fn recover(&self) -> Result<()> {
        lifecycle::recover_interrupted(&self.repo, self.config()?, &self.store)
    }

    /// Who is acting here ([`session::acting_label`]), from every record of the store.
    pub fn acting(&self) -> Result<Option<Label>> {
        Ok(session::acting_label(
            &self.repo,
            &session::load_all(&self.store)?,
        ))
    }

    /// The label given (checked), else the acting session's, else a refusal naming `usage`
    /// ([`session::given_or_acting`]).
    pub fn given_or_acting(&self, given: Option<String>, usage: &str) -> Result<Label> {
        session::given_or_acting(&self.repo, &self.store, given, usage)
    }

    /// The acting session, which must have a record; else a refusal saying how to name one.
    /// `what` is the verb of the command (`claim`, `release`).
    pub fn require_acting(&self, what: &str) -> Result<Label> {
        let Some(label) = self.acting()? else {
            return Err(UserError::refused(format!(
                "no session is acting here, so there is nothing to {what} for"
            ))
            .hinted(
                "set GIT_SESSION=<label>, or run it inside a session's worktree (`git session list`)",
            )
            .into());
        };
        session::require(&self.store, &label)?;
        Ok(label)
    }
}
