//! The files a Codex `apply_patch` call writes.
//!
//! Codex sends the patch text in `tool_input.command`; every file it touches is named on a
//! header line: `*** Add File: P`, `*** Update File: P`, `*** Delete File: P`, and a rename adds
//! `*** Move to: P` after its Update header. Both ends of a move are written (one is removed,
//! one created), so both are returned.
//!
//! Invariant: only header lines at the start of a line count; a `***` inside a hunk's content
//! starts with `+`, `-` or a space and is never read as a header.

const HEADERS: &[&str] = &[
    "*** Add File: ",
    "*** Update File: ",
    "*** Delete File: ",
    "*** Move to: ",
];

/// The paths named by the patch's headers, in order, without duplicates.
pub fn files(patch: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in patch.lines() {
        let line = line.trim_end_matches('\r');
        for h in HEADERS {
            if let Some(path) = line.strip_prefix(h) {
                let path = path.trim();
                if !path.is_empty() && !out.iter().any(|p| p == path) {
                    out.push(path.to_string());
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_only() {
        let patch = "*** Begin Patch\n*** Add File: a/new.txt\n+*** Update File: not/this\n\
                     *** Update File: src/old.rs\n*** Move to: src/new.rs\n@@\n-x\n+y\n\
                     *** Delete File: gone.md\r\n*** Update File: src/old.rs\n*** End Patch\n";
        assert_eq!(
            files(patch),
            ["a/new.txt", "src/old.rs", "src/new.rs", "gone.md"]
        );
        assert!(files("").is_empty());
    }
}
