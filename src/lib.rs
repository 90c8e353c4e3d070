//! git-session: one worktree, one branch and one owner per AI coding-agent session.
//!
//! `main.rs` only calls [`cli::main`]. The modules stand on floors, each using only its own floor
//! and those below it (ARCHITECTURE.md draws them; `tests/it/architecture.rs` holds them), from the
//! bottom: [`base`]; [`git`]; [`store`] and [`config`]; [`session`] and [`ownership`];
//! [`lifecycle`], [`hazards`], [`shared_claims`], [`hooks`] and [`handoff`]; [`guard`] and
//! [`context`]; and on top [`cli`], the only module that knows clap, prints, or words a message,
//! with one file per subcommand under [`cli::commands`], each holding its `Args` and its `run`.
//!
//! Public: [`cli::main`], [`cli::command`] (the clap tree the generated completions and man pages
//! come from) and [`internals`]; every other module is private to the crate, and `missing_docs`
//! holds each public item to a doc comment.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub(crate) mod base;
pub mod cli;
pub(crate) mod config;
pub(crate) mod context;
pub(crate) mod git;
pub(crate) mod guard;
pub(crate) mod handoff;
pub(crate) mod hazards;
pub(crate) mod hooks;
pub(crate) mod lifecycle;
pub(crate) mod ownership;
pub(crate) mod session;
pub(crate) mod shared_claims;
pub(crate) mod store;

/// What the integration tests, the property tests and the micro benchmarks call directly, and
/// nothing more: every other module is private to the crate. Not a stable interface.
pub mod internals {
    pub use crate::cli::command;
    pub use crate::config::{Config, DEFAULT_WINDOW};
    pub use crate::context::agents::Agent;
    pub use crate::context::budget::DEFAULT_RESERVE;
    pub use crate::context::hook::Payload;
    pub use crate::context::transcript;
    pub use crate::git::index::Index;
    pub use crate::git::staged::staged_paths;
    pub use crate::git::status::{dirty_files, dirty_files_libgit2, dirty_files_with, Untracked};
    pub use crate::git::Checkout;
    pub use crate::guard::fingerprint;
    pub use crate::ownership::leases::port_free;
    pub use crate::session::SessionRecord;
    pub use crate::store::Store;
}
