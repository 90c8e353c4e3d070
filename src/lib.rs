//! git-session: one worktree, one branch and one owner per AI coding-agent session.
//!
//! `main.rs` only calls [`cli::main`]. The library has one module per domain concept and one file
//! per subcommand under [`commands`], each holding its clap `Args` and its `run`.

#![forbid(unsafe_code)]

pub mod announce;
pub mod cli;
pub mod clock;
pub mod commands;
pub mod config;
pub mod context;
pub mod error;
pub mod failsafe;
pub mod git;
pub mod guard;
pub mod handoff;
pub mod hazards;
pub mod hooks;
pub mod index;
pub mod integrate;
pub mod lifecycle;
pub mod output;
pub mod ownership;
pub mod process;
pub mod session;
pub mod setup;
pub mod shared_claims;
pub mod staged;
pub mod status;
pub mod store;
pub mod unguarded;
