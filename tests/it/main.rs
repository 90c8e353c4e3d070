//! The one integration-test binary: every suite is a module here, sharing one build and the
//! fixtures in `common` (the hermetic harness: temp repositories, the real binary) and
//! `context_support` (hook payloads and transcripts in the agents' formats).
//!
//! Run one suite with `cargo test --test it cleanup::`, one test by its name as usual.

mod common;
mod context_support;

mod across;
mod acting;
mod architecture;
mod bsd_userland;
mod claims;
mod claims_lifecycle;
mod cleanup;
mod cleanup_races;
mod cleanup_refusals;
mod completion_labels;
mod completions;
mod config_hooks;
mod context;
mod context_agents;
mod context_events;
mod context_real;
mod context_real_claude;
mod context_real_codex;
mod context_real_gemini;
mod context_records;
mod context_replay;
mod create;
mod create_command;
mod create_rollback;
mod everyday_words;
mod first_hour_words;
mod generated;
mod git_locks;
mod guard;
mod guard_config;
mod guard_force;
mod guard_hostile;
mod guard_index;
mod handoff;
mod help_page;
mod hooks;
mod killed_removals;
mod killed_stress;
mod killed_transactions;
mod killed_writers;
mod label_case;
mod labels;
mod list_fit;
mod list_info;
mod managers;
mod managers_husky_fresh;
mod merge;
mod process_modes;
mod properties;
mod prune;
mod recovery;
mod recovery_lost_records;
mod recovery_without_process_facts;
mod repo_paths;
mod restore;
mod robust;
mod schema;
mod setup;
mod shell;
mod slash_labels;
mod status;
mod switch;
mod untracked_cache;
mod warnings_fit;
mod words;
mod worktree_escape;
mod worktree_hook;
