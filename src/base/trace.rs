//! `GIT_SESSION_TRACE=1`: the guard's and the context hook's decisions, a line each on stderr
//! (`git-session trace: guard: ...`), for a person asking why a commit or a tool call was let
//! through or refused.
//!
//! Invariants: unset (or `0`, or empty), a call costs one read of a cached flag and its message
//! is never formatted; a trace line never changes what is decided or what is printed on
//! stdout (hooks answer agents on stdout), and a failed write to stderr is ignored.

use std::io::Write;
use std::sync::OnceLock;

/// Whether `GIT_SESSION_TRACE` asks for trace lines (read once per process).
pub fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        std::env::var_os("GIT_SESSION_TRACE").is_some_and(|v| !v.is_empty() && v != "0")
    })
}

/// Writes `git-session trace: <topic>: <message>` to stderr when tracing is on; `message`
/// runs only then.
pub fn trace(topic: &str, message: impl FnOnce() -> String) {
    if enabled() {
        let line = format!("git-session trace: {topic}: {}\n", message());
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }
}
