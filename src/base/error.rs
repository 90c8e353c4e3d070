//! The result type every fallible function of the crate returns.
//!
//! Domain modules fail with typed errors of their own (a label that is not valid, a path outside
//! the repository, a lock another process holds), carried in an [`anyhow::Error`]; they never
//! word a refusal. The command line (`crate::cli::user_error`, `crate::cli::words`) turns each into
//! the one-line message, the hint and the exit code the user sees.

pub type Result<T, E = anyhow::Error> = std::result::Result<T, E>;
