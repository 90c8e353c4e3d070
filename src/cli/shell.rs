//! Moving the user's shell: the other half of `shell-init`'s shell function.
//!
//! A child process cannot change its parent shell's directory; the function `shell-init` prints
//! hands the binary a fresh file in `GIT_SESSION_CD_FILE` and `cd`s afterwards to the one
//! directory written there. `create` asks for the new worktree, `switch` for the session's
//! worktree, `cleanup` (also run by `merge`) of the worktree the shell stands in for the main
//! worktree.
//!
//! Invariant: without the variable nothing is written and output is unchanged (scripts keep
//! `cd "$(git session create x)"`).

use std::path::Path;

/// The variable the shell function sets to a file the binary writes a directory into.
pub const CD_FILE_VAR: &str = "GIT_SESSION_CD_FILE";

/// Asks the wrapping shell function, when there is one, to change directory to `dir` once this
/// command has finished. Returns whether the request was recorded.
pub fn request_cd(dir: &Path) -> bool {
    request_cd_with(dir, &[])
}

/// [`request_cd`], and the shell exports `env` (a session's `GIT_SESSION_PORT`, ...) once it
/// is there. Each is a line `NAME=value` before the directory, which is absolute (starts with
/// `/`), so the function tells them apart; only `GIT_SESSION_<A-Z 0-9 _>` names with values
/// of one line are written (what `[resources]` makes), so no line can pass for another.
pub fn request_cd_with(dir: &Path, env: &[(String, String)]) -> bool {
    let Some(file) = std::env::var_os(CD_FILE_VAR).filter(|f| !f.is_empty()) else {
        return false;
    };
    let mut text = Vec::new();
    for (key, value) in env {
        let plain_key = key.strip_prefix("GIT_SESSION_").is_some_and(|k| {
            !k.is_empty()
                && k.bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        });
        if plain_key && !value.contains(['\n', '\r']) {
            text.extend_from_slice(format!("{key}={value}\n").as_bytes());
        }
    }
    text.extend_from_slice(dir.as_os_str().as_encoded_bytes());
    text.push(b'\n');
    std::fs::write(file, text).is_ok()
}
