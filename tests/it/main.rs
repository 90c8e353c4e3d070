//! The one integration-test binary: every suite is a module here, sharing one build and the
//! fixtures in `common` (the hermetic harness: temp repositories, the real binary) and
//! `context_support` (hook payloads and transcripts in the agents' formats).
//!
//! Run one suite with `cargo test --test it cleanup::`, one test by its name as usual.

// Fixtures state what they expect by unwrapping: a failure there is the test's failure.
#![allow(clippy::unwrap_used)]

mod common;
mod context_support;

mod across;
mod acting;
mod architecture;
mod architecture_agents;
mod architecture_files;
mod attention;
mod attention_mark;
mod attention_statusline;
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
mod context_copilot;
mod context_events;
mod context_real;
mod context_real_attention;
mod context_real_claude;
mod context_real_codex;
mod context_real_copilot;
mod context_real_gemini;
mod context_real_permission;
mod context_records;
mod context_replay;
mod create;
mod create_command;
mod create_rollback;
mod docs_blocks;
mod docs_config;
mod docs_readme;
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
mod list_watch;
mod managers;
mod managers_husky_fresh;
mod merge;
mod merge_batch;
mod merge_check;
mod merge_collisions;
mod merge_permissive;
mod merge_race;
mod merge_readonly;
mod merge_terminal;
mod merge_union;
mod process_modes;
mod properties;
mod prune;
mod recovery;
mod recovery_lost_records;
mod recovery_without_process_facts;
mod repo_paths;
mod resources;
mod resources_across;
mod resources_disk;
mod resources_disk_use;
mod resources_shell;
mod restore;
mod robust;
mod schema;
mod setup;
mod shell;
mod slash_labels;
mod status;
mod switch;
mod trace;
mod untracked_cache;
mod warnings_fit;
mod words;
mod worktree_escape;
mod worktree_escape_found;
mod worktree_half_written;
mod worktree_hook;
