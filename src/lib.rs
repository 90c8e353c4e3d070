//! git-session: one worktree, one branch and one owner per AI coding-agent session.
//!
//! `main.rs` only calls [`cli::main`]. The modules stand on floors, each using only its own floor
//! and those below it (ARCHITECTURE.md draws them; `tests/it/architecture.rs` holds them), from the
//! bottom: [`base`]; [`git`]; [`store`] and [`config`]; [`session`] and [`ownership`];
//! [`lifecycle`], [`hazards`], [`shared_claims`], [`hooks`] and [`handoff`]; [`guard`] and
//! [`context`]; and on top [`cli`], the only module that knows clap, prints, or words a message,
//! with one file per subcommand under [`cli::commands`], each holding its `Args` and its `run`.

#![forbid(unsafe_code)]

pub mod base;
pub mod cli;
pub mod config;
pub mod context;
pub mod git;
pub mod guard;
pub mod handoff;
pub mod hazards;
pub mod hooks;
pub mod lifecycle;
pub mod ownership;
pub mod session;
pub mod shared_claims;
pub mod store;
