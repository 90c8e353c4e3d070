//! The context-threshold hook and its companions (`git session context ...`).
//!
//! The agent cannot see how full its context window is; the model API has already recorded the
//! exact number in the transcript. [`transcript`] reads that number from the end of the file,
//! [`window`] decides the window it is measured against, [`agent`] keeps per-agent-session state
//! (thresholds fired once each, wrap-up, compactions, the linked git session), [`budget`] finds
//! where the agent compacts (from its own [`settings`] files among other sources), and [`hook`]
//! turns a hook call ([`payload`]: one of the [`agents`], whose facts are one table there) into an answer the agent
//! reads ([`answer`]), claiming and refusing paths through [`agent_claims`] ([`patch`] reads
//! Codex's patches) and keeping a session's agent in its own worktree ([`escape`]). [`agent_status`] and [`hook_config`] serve people; [`loading`] says whether
//! the hooks load in a worktree.
//!
//! Invariant shared by all of them: the hook path never fails the agent, and every number it
//! reports comes from the transcript (or is reported as unknown), never from an estimate.
//!
//! The line with the command line (`cli::commands::context`): this module reads no stdin,
//! prints nothing and uses no clap. It returns typed values (the hook's [`answer::Answer`], a
//! [`agent_status::Report`], a [`hook_config::Outcome`]) and typed errors
//! ([`agent_status::StatusError`], [`hook_config::InstallError`]); the command line words them,
//! so the words the agent and the user read, and every `git session` command they name, live
//! there.

pub mod agent;
pub mod agent_claims;
pub mod agent_status;
pub mod agents;
pub mod ancestry;
pub mod answer;
pub mod attention;
pub mod budget;
pub mod escape;
pub mod hook;
pub mod hook_config;
pub mod loading;
pub mod patch;
pub mod payload;
pub mod settings;
pub mod transcript;
pub mod window;
