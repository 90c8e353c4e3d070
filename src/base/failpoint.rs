//! Stop points for tests of "killed at any instant": with `GIT_SESSION_TEST_KILL_AT=<step>` (or
//! `<step>:<detail>`, such as `store-commit:claims.index`) the process kills itself with
//! SIGKILL when it reaches that step, so a test can show what a kill at exactly that instant
//! leaves behind and that the next command repairs it.
//!
//! Invariants: the variable is read once per process and nowhere else; unset, a stop point costs
//! one check of a cached value, so one may sit on the guard's and the context hook's paths. It is
//! meant for tests and reproductions only.

/// The environment variable naming the stop point.
pub const VAR: &str = "GIT_SESSION_TEST_KILL_AT";

/// Kills this process outright when [`VAR`] names `step` (with any detail) or `step:detail`.
pub fn reach(step: &str, detail: &str) {
    static AT: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let Some(at) = AT.get_or_init(|| std::env::var(VAR).ok()).as_deref() else {
        return;
    };
    let hit = match at.split_once(':') {
        Some((s, d)) => s == step && d == detail,
        None => at == step,
    };
    if hit {
        let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL);
    }
}
