//! One file per subcommand: its clap `Args` and its `run`.

pub mod claim;
pub mod claims;
pub mod cleanup;
pub mod completions;
pub mod context;
pub mod create;
pub mod guard;
pub mod handoff;
pub mod helper;
pub mod hooks;
pub mod info;
pub mod list;
pub mod man;
pub mod prune;
pub mod release;
pub mod setup;
pub mod shell_init;
pub mod worktree_hook;
