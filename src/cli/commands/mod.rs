//! One file per subcommand: its clap `Args` and its `run`. A command that works on a
//! repository's sessions sets up once through [`crate::cli::helper::CommandHelper`] (the guard and
//! the context hook excepted: see that module's doc).

pub mod claim;
pub mod claims;
pub mod cleanup;
pub mod completions;
pub mod context;
pub mod create;
pub mod env;
pub mod guard;
pub mod handoff;
pub mod hooks;
pub mod info;
pub mod list;
pub mod man;
pub mod merge;
pub mod prune;
pub mod release;
pub mod restore;
pub mod setup;
pub mod shell_init;
pub mod switch;
pub mod sync;
pub mod worktree_hook;
