//! The context-threshold hook and its companions (`git session context ...`).
//!
//! The agent cannot see how full its context window is; the model API has already recorded the
//! exact number in the transcript. [`transcript`] reads that number from the end of the file,
//! [`window`] decides the window it is measured against, [`agent`] keeps per-agent-session state
//! (thresholds fired once each, wrap-up, compactions, the linked git session), and [`hook`] turns
//! a hook call into an answer the agent reads. [`status`] and [`install`] serve people.
//!
//! Invariant shared by all of them: the hook path never fails the agent, and every number it
//! reports comes from the transcript (or is reported as unknown), never from an estimate.

pub mod agent;
pub mod budget;
pub mod hook;
pub mod install;
pub mod patch;
pub mod status;
pub mod transcript;
pub mod window;
