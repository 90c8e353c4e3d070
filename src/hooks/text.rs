//! Our marked block inside a text file: find it, insert it, remove it.
//!
//! The block is the lines from [`BEGIN`] to [`END`] inclusive, each prefixed by the indentation
//! of the line that holds [`BEGIN`]; a file holds at most one. Removing it gives back the bytes
//! that were there before it was inserted.

use super::Event;

pub const BEGIN: &str = "# >>> git-session >>>";
pub const END: &str = "# <<< git-session <<<";

/// Whether `text` runs the guard for `event`: some line that is not a comment names
/// `git-session guard <event>`.
pub fn runs_guard(text: &str, event: Event) -> bool {
    let call = format!("git-session guard {}", event.name());
    text.lines().any(|line| {
        let line = line.trim_start();
        !line.starts_with('#') && line.contains(&call)
    })
}

/// Whether `text` is our hook file alone: our block, a shebang, blank lines, nothing else.
pub fn is_ours_alone(text: &str) -> bool {
    let Some(rest) = without_block(text) else {
        return false;
    };
    rest.lines()
        .all(|l| l.trim().is_empty() || l.starts_with("#!"))
}

/// The byte range of our block: from the start of the line holding [`BEGIN`] to just after the
/// newline that ends the line holding [`END`].
pub fn block_range(text: &str) -> Option<(usize, usize)> {
    let begin = text.find(BEGIN)?;
    let start = text[..begin].rfind('\n').map_or(0, |i| i + 1);
    let end_marker = begin + text[begin..].find(END)?;
    let end = text[end_marker..]
        .find('\n')
        .map_or(text.len(), |i| end_marker + i + 1);
    Some((start, end))
}

/// The block itself, or `""`.
pub fn block_of(text: &str) -> &str {
    block_range(text).map_or("", |(s, e)| &text[s..e])
}

/// `text` without our block.
pub fn without_block(text: &str) -> Option<String> {
    let (s, e) = block_range(text)?;
    Some(format!("{}{}", &text[..s], &text[e..]))
}

/// The block for `lines`, each indented by `indent`, ending in a newline.
pub fn block(indent: &str, lines: &[&str]) -> String {
    let mut out = format!("{indent}{BEGIN}\n");
    for line in lines {
        out.push_str(indent);
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(&format!("{indent}{END}\n"));
    out
}

/// The block that goes into someone else's shell hook for `event`.
pub fn shell_block(event: Event) -> String {
    block(
        "",
        &[
            "# The path-ownership guard, added by `git session hooks install`; `git session hooks uninstall` removes it.",
            event.guard_line(),
        ],
    )
}

/// Whether `text` is a shell script we can put a line into: no `#!` line (git runs it with
/// `sh`), or a `#!` line naming a POSIX-compatible shell.
pub fn is_shell(text: &str) -> bool {
    let Some(first) = text.lines().next() else {
        return true;
    };
    let Some(interp) = first.strip_prefix("#!") else {
        return !text.contains('\0');
    };
    let mut words = interp.split_whitespace();
    let mut program = words.next().unwrap_or("");
    if program.ends_with("/env") {
        program = words.find(|w| !w.starts_with('-')).unwrap_or("");
    }
    let name = program.rsplit('/').next().unwrap_or(program);
    matches!(
        name,
        "sh" | "bash" | "dash" | "ash" | "ksh" | "zsh" | "busybox"
    )
}

/// `text` with `block` inserted right after its `#!` line (or at its top when there is none),
/// so it runs before anything the script does, `exec` and `exit` included.
pub fn insert_after_shebang(text: &str, block: &str) -> String {
    let at = if text.starts_with("#!") {
        text.find('\n').map_or(text.len(), |i| i + 1)
    } else {
        0
    };
    let (head, tail) = text.split_at(at);
    let head = if head.is_empty() || head.ends_with('\n') {
        head.to_string()
    } else {
        format!("{head}\n")
    };
    format!("{head}{block}{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_then_remove_gives_back_the_bytes() {
        for original in [
            "#!/bin/sh\nnpm test\n",
            "#!/usr/bin/env sh\n. \"$(dirname \"$0\")/h\"",
            "npx lint-staged\n",
            "",
            "#!/bin/sh",
        ] {
            let with = insert_after_shebang(original, &shell_block(Event::PreCommit));
            assert!(runs_guard(&with, Event::PreCommit), "{with}");
            assert!(!runs_guard(&with, Event::PostCommit));
            let back = without_block(&with).unwrap();
            // A file whose shebang line had no newline gains one, which sh reads the same.
            let expected = if original == "#!/bin/sh" {
                "#!/bin/sh\n"
            } else {
                original
            };
            assert_eq!(back, expected);
        }
    }

    #[test]
    fn a_commented_call_does_not_run_the_guard() {
        assert!(!runs_guard(
            "#!/bin/sh\n# git-session guard pre-commit\n",
            Event::PreCommit
        ));
        assert!(runs_guard(
            "      run: git-session guard pre-commit\n",
            Event::PreCommit
        ));
    }

    #[test]
    fn shells_are_told_from_other_interpreters() {
        assert!(is_shell("#!/bin/sh\n"));
        assert!(is_shell("#!/usr/bin/env bash\n"));
        assert!(is_shell("#!/usr/bin/env -S sh -e\n"));
        assert!(is_shell("npm test\n"));
        assert!(!is_shell("#!/usr/bin/env python3\n"));
        assert!(!is_shell("#!/usr/bin/env node\n"));
        assert!(!is_shell("\x7fELF\0\0"));
    }
}
