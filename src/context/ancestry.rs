//! A budget given on the agent's own command line (`claude --autocompact N`), read from the
//! hook's process ancestry: neither the hook's environment nor its payload carries it.
//!
//! Invariants a reader must not break:
//! - Linux only (`/proc/<pid>/stat` and `/proc/<pid>/cmdline`); elsewhere the source is absent,
//!   never an error. At most [`MAX_DEPTH`] ancestors are read, each two small files, and no
//!   process is started: this runs in the hook's hot path.
//! - Only the nearest ancestor that is Claude Code (its executable's name is `claude` or
//!   `claude.exe`, or an argument names Claude Code's `cli.js`) is read, so a wrapper's own
//!   arguments never count; `--autocompact auto` (the default) or an unparsable value is no
//!   budget.

use super::window;
use std::path::Path;

/// How many ancestors are looked at, nearest first.
pub const MAX_DEPTH: usize = 16;

/// The window `--autocompact` gives among Claude Code's arguments (`--autocompact N` or
/// `--autocompact=N`, `N` as `150000`, `150k` or `1m`); the last one wins, as in its parser.
pub fn autocompact_arg(args: &[String]) -> Option<u64> {
    let mut found = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let value = match a.strip_prefix("--autocompact") {
            Some("") => it.next().map(String::as_str),
            Some(rest) => rest.strip_prefix('='),
            None => continue,
        };
        if let Some(v) = value {
            found = window::parse_size(v);
        }
    }
    found
}

/// Whether these arguments start Claude Code.
pub fn is_claude(args: &[String]) -> bool {
    let name = |a: &String| {
        Path::new(a)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
    };
    let first = args.first().and_then(name);
    matches!(first.as_deref(), Some("claude" | "claude.exe"))
        || args
            .iter()
            .take(3)
            .any(|a| a.contains("claude-code") && a.ends_with("cli.js"))
}

/// The `--autocompact` window of the nearest Claude Code process above `pid` (this process's
/// parent chain when `None`), with the source's name.
pub fn autocompact_from(pid: Option<u32>) -> Option<(u64, String)> {
    let mut pid = match pid {
        Some(p) => p,
        None => std::os::unix::process::parent_id(),
    };
    for _ in 0..MAX_DEPTH {
        if pid <= 1 {
            return None;
        }
        let dir = Path::new("/proc").join(pid.to_string());
        let args = cmdline(&dir.join("cmdline"))?;
        if is_claude(&args) {
            return autocompact_arg(&args)
                .map(|v| (v, format!("--autocompact (claude command line, pid {pid})")));
        }
        pid = parent_of(&dir.join("stat"))?;
    }
    None
}

fn cmdline(path: &Path) -> Option<Vec<String>> {
    let bytes = std::fs::read(path).ok()?;
    Some(
        bytes
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect(),
    )
}

/// The parent pid from `/proc/<pid>/stat`: the field after the state, after the last `)` (the
/// command name in parentheses may itself hold spaces and parentheses).
fn parent_of(stat: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(stat).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_flag_in_its_spellings() {
        let cases: [(&[&str], Option<u64>); 7] = [
            (&["claude", "--autocompact", "150000"], Some(150_000)),
            (&["claude", "--autocompact=150k", "-p", "x"], Some(150_000)),
            (&["claude", "--autocompact", "auto"], None),
            (&["claude", "-p", "--autocompact"], None),
            (&["claude", "--autocompactx", "9"], None),
            (
                &["claude", "--autocompact", "1m", "--autocompact", "120000"],
                Some(120_000),
            ),
            (&["claude", "-p", "hi"], None),
        ];
        for (a, want) in cases {
            assert_eq!(autocompact_arg(&args(a)), want, "{a:?}");
        }
    }

    #[test]
    fn which_processes_are_claude() {
        assert!(is_claude(&args(&["/usr/bin/claude", "-p"])));
        assert!(is_claude(&args(&[
            "/x/node_modules/@anthropic-ai/claude-code/bin/claude.exe"
        ])));
        assert!(is_claude(&args(&[
            "node",
            "/x/node_modules/@anthropic-ai/claude-code/cli.js"
        ])));
        assert!(!is_claude(&args(&["sh", "-c", "claude --autocompact 1"])));
        assert!(!is_claude(&args(&[])));
    }

    #[test]
    fn this_process_has_no_claude_above_it_or_ends_cleanly() {
        // The test runner's ancestry: whatever it is, the walk ends without a panic.
        let _ = autocompact_from(None);
        assert_eq!(autocompact_from(Some(1)), None);
        assert!(parent_of(Path::new("/proc/self/stat")).is_some());
    }
}
