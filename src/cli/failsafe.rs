//! Panic containment for the entry points that must never stop an agent's work: the git hooks'
//! guard and the context hook.
//!
//! Invariant: whatever a damaged file on disk makes the code under [`fail_open`] do (a panic
//! included; the release profile unwinds so it can be caught), the caller gets `None` and goes
//! on to exit 0, after a warning on stderr and, where a store is known, an audit line. Derived
//! files (claims.index) are rebuilt by their readers, so the next run does not panic again.

use crate::base::announce::{self, Announcement};
use crate::store::Store;
use serde_json::json;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `f`; if it panics, reports the panic loudly (stderr, and an `<name>-panic` audit line in
/// the store `store` names, itself guarded) and returns `None`, so the caller fails open.
pub fn fail_open<T>(
    name: &str,
    store: impl FnOnce() -> Option<Store>,
    f: impl FnOnce() -> T,
) -> Option<T> {
    // The state a panic may leave behind is dropped with the closure; nothing reads it after.
    let payload = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(value) => return Some(value),
        Err(payload) => payload,
    };
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_string());
    announce::emit(Announcement::PanicFailOpen {
        name: name.to_string(),
        what: what.clone(),
    });
    let audited = catch_unwind(AssertUnwindSafe(|| {
        store().map(|s| s.audit(&format!("{name}-panic"), json!({ "error": what })))
    }));
    if !matches!(audited, Ok(Some(true))) {
        announce::emit(Announcement::PanicNotAudited {
            name: name.to_string(),
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_contained_reported_and_audited() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path());
        let (caught, said) = crate::base::announce::capture(|| {
            fail_open(
                "guard",
                || Some(store.clone()),
                || -> u32 { panic!("boom") },
            )
        });
        assert_eq!(caught, None);
        assert_eq!(
            said,
            vec![Announcement::PanicFailOpen {
                name: "guard".into(),
                what: "boom".into()
            }],
            "reported once, and audited (so no second warning)"
        );
        let audit = std::fs::read_to_string(dir.path().join("audit.log")).unwrap();
        let line: serde_json::Value = serde_json::from_str(audit.trim()).unwrap();
        assert_eq!(line["event"], "guard-panic");
        assert_eq!(line["error"], "boom");
    }

    #[test]
    fn a_result_passes_through_and_a_panicking_store_lookup_is_survived() {
        assert_eq!(fail_open("hook", || None, || 7), Some(7));
        let (caught, said) = crate::base::announce::capture(|| {
            fail_open(
                "hook",
                || -> Option<Store> { panic!("no store either") },
                || -> () { panic!("{}", String::from("owned message")) },
            )
        });
        assert_eq!(caught, None);
        let name = || "hook".to_string();
        assert_eq!(
            said,
            vec![
                Announcement::PanicFailOpen {
                    name: name(),
                    what: "owned message".into()
                },
                Announcement::PanicNotAudited { name: name() },
            ]
        );
    }
}
