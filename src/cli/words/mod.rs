//! The words of every refusal the domain reports as a typed error: one function per error family,
//! each matching every variant, so a new variant cannot reach the user unworded.
//!
//! Invariants a reader must not break:
//! - The domain never words a refusal or names a `git session` command; it returns one of its
//!   error enums (carried in an [`anyhow::Error`]) and [`user_error`] finds the words here.
//! - Every message is one line; a hint names what to run. The texts are a user-visible interface,
//!   pinned by the snapshot tests at the end of this module.

pub mod config;
pub mod create;
pub mod hazards;
pub mod lifecycle;

use super::error::UserError;

/// The user's words for a typed domain error anywhere in `err`'s chain; `None` for an error the
/// domain did not type (an internal failure, shown with its context chain).
pub fn user_error(err: &anyhow::Error) -> Option<UserError> {
    for cause in err.chain() {
        if let Some(e) = cause.downcast_ref::<crate::config::ConfigError>() {
            return Some(config::words(e));
        }
        if let Some(e) = cause.downcast_ref::<crate::lifecycle::create::CreateError>() {
            return Some(create::words(e));
        }
        if let Some(e) = cause.downcast_ref::<crate::lifecycle::LifecycleError>() {
            return Some(lifecycle::words(e));
        }
    }
    None
}
