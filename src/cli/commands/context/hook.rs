//! `git session context hook`: reads one hook payload from stdin, lets the domain answer it
//! (`crate::context::hook`), prints the answer in the calling agent's shape, and exits 0.
//!
//! Invariants a reader must not break:
//! - Always exit 0: a watchdog thread ends the process silently once the hook's budget is
//!   spent (auditing that to the store when it is known), and a panic fails open
//!   (`cli::failsafe::fail_open`).
//! - The answer is written whole or not at all: the watchdog waits for [`OUTPUT`].
//! - This is the hot path of every tool call: the answer is rendered once, nothing else is
//!   added here.

use super::{render, MAX_INPUT};
use crate::cli::output;
use crate::context::hook;
use crate::store::Store;
use anyhow::Result;
use std::io::Read;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// The whole hook call, stdin included, finishes within this or exits 0 silently (see
/// [`crate::context::hook::budget`]).
fn hook_budget() -> Duration {
    crate::context::hook::budget()
}

/// Held while the answer is written, so the watchdog never cuts a JSON answer in half.
static OUTPUT: Mutex<()> = Mutex::new(());
static HOOK_STORE: OnceLock<Store> = OnceLock::new();

pub(super) fn run() -> Result<()> {
    let budget = hook_budget();
    std::thread::spawn(move || {
        std::thread::sleep(budget);
        let _held = OUTPUT.lock();
        if let Some(store) = HOOK_STORE.get() {
            store.audit(
                "context-hook-failed",
                serde_json::json!({"error": format!(
                    "did not finish within {} ms; gave up", budget.as_millis())}),
            );
        }
        std::process::exit(0);
    });
    let mut input = Vec::new();
    let _ = std::io::stdin().take(MAX_INPUT).read_to_end(&mut input);
    let answer = crate::cli::failsafe::fail_open(
        "context-hook",
        || HOOK_STORE.get().cloned(),
        || {
            hook::run(&input, &|store| {
                let _ = HOOK_STORE.set(store.clone());
            })
            .map(|a| render::render(&a).to_string())
        },
    )
    .flatten();
    if let Some(text) = answer {
        let _held = OUTPUT.lock();
        // A closed stdout is the agent's business; the hook still exits 0.
        let _ = output::line(text);
    }
    Ok(())
}
