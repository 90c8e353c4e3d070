//! The words of every refusal the domain reports as a typed error: one function per error family,
//! each matching every variant, so a new variant cannot reach the user unworded.
//!
//! Invariants a reader must not break:
//! - The domain never words a refusal or names a `git session` command; it returns one of its
//!   error enums (carried in an [`anyhow::Error`]) and [`user_error`] finds the words here.
//! - Every message is one line; a hint names what to run. The texts are a user-visible interface,
//!   pinned by the snapshot tests at the end of this module.

pub mod announcements;
pub mod config;
pub mod context_install;
pub mod context_loading;
pub mod context_status;
pub mod creation;
pub mod damage;
pub mod guard_refusals;
pub mod hazards;
pub mod hooks_off;
pub mod lifecycle;
pub mod merging;
pub mod paths;
#[cfg(test)]
mod pinned;
pub mod repo;
pub mod session;
pub mod store;

use super::user_error::UserError;

/// The user's words for a typed domain error anywhere in `err`'s chain; `None` for an error the
/// domain did not type (an internal failure, shown with its context chain).
pub fn user_error(err: &anyhow::Error) -> Option<UserError> {
    for cause in err.chain() {
        if let Some(e) = cause.downcast_ref::<crate::config::ConfigError>() {
            return Some(config::words(e));
        }
        if let Some(e) = cause.downcast_ref::<crate::git::RepoError>() {
            return Some(repo::words(e));
        }
        if let Some(e) = cause.downcast_ref::<crate::session::SessionError>() {
            return Some(session::words(e));
        }
        if let Some(e) = cause.downcast_ref::<crate::ownership::path::PathError>() {
            return Some(paths::words(e));
        }
        if let Some(e) = cause.downcast_ref::<crate::handoff::EmptyNote>() {
            return Some(paths::empty_note(e));
        }
        if let Some(e) = cause.downcast_ref::<crate::store::StoreError>() {
            return Some(store::words(e));
        }
        if let Some(e) = cause.downcast_ref::<crate::store::WriteFailed>() {
            return Some(store::write_failed(e));
        }
        if let Some(e) = cause.downcast_ref::<crate::hooks::wire::BothExist>() {
            return Some(guard_refusals::both_exist(e));
        }
        if let Some(e) = cause.downcast_ref::<crate::base::clock::BadTimeout>() {
            return Some(repo::timeout(e));
        }
        if let Some(e) = cause.downcast_ref::<crate::context::agent_status::StatusError>() {
            return Some(context_status::words(e));
        }
        if let Some(e) = cause.downcast_ref::<crate::context::hook_config::InstallError>() {
            return Some(context_install::words(e));
        }
        if let Some(e) = cause.downcast_ref::<crate::ownership::leases::LeaseError>() {
            return Some(creation::lease_words(e));
        }
        if let Some(e) = cause.downcast_ref::<crate::lifecycle::create::CreateError>() {
            return Some(creation::words(e));
        }
        if let Some(e) = cause.downcast_ref::<crate::lifecycle::restore::RestoreError>() {
            return Some(creation::restore_refused(e));
        }
        if let Some(e) = cause.downcast_ref::<crate::lifecycle::merge::MergeRefusal>() {
            return Some(merging::words(e));
        }
        if let Some(e) = cause.downcast_ref::<crate::lifecycle::merge_batch::NotReady>() {
            return Some(merging::not_ready(e));
        }
        if let Some(e) = cause.downcast_ref::<crate::lifecycle::LifecycleError>() {
            return Some(lifecycle::words(e));
        }
    }
    None
}
