//! Tests that drive a program the machine may lack (fish, zsh, tmux, man, util-linux `script`)
//! skip when it is missing, the same way everywhere: [`installed`] answers, and says so once.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::Mutex;

/// Whether `program` runs here. When it does not, the calling test returns at once (it is
/// skipped) and the reason is printed once per program per test run, written to stderr past the
/// harness's capture so that it shows for passing tests too. CI (`.ci/run`) installs every such
/// program, so nothing is skipped there.
pub fn installed(program: &str) -> bool {
    static SEEN: Mutex<BTreeMap<String, bool>> = Mutex::new(BTreeMap::new());
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&found) = seen.get(program) {
        return found;
    }
    let flag = if program == "tmux" { "-V" } else { "--version" };
    let found = Command::new(program)
        .arg(flag)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: the tests that need `{program}` (it is not installed here; .ci/run installs \
             it)"
        );
    }
    seen.insert(program.to_string(), found);
    found
}
