//! git-session: one worktree, one branch and one owner per AI coding-agent session.
//!
//! `main.rs` only calls [`cli::main`]. The library has one module per domain concept and one file
//! per subcommand under [`cli::commands`], each holding its clap `Args` and its `run`.

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
