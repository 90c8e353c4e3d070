//! A budget given on the agent's own command line (`claude --autocompact N`), read from the
//! hook's process ancestry: neither the hook's environment nor its payload carries it.
//!
//! Invariants a reader must not break:
//! - The ancestors' command lines come from the process facts ([`crate::base::process`]): two
//!   small files each under `/proc`, one `ps` run without it; where neither answers the source
//!   is absent, never an error. At most [`MAX_DEPTH`] ancestors are read.
//! - Without `/proc` this costs a program run, so the hook reads it once per agent process and
//!   keeps the answer in the agent state ([`remembered`]): Claude Code's arguments do not change
//!   while it runs, and a new process (a resume) begins with a SessionStart, which reads again.
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
    let pid = pid.unwrap_or_else(std::os::unix::process::parent_id);
    if pid <= 1 {
        return None;
    }
    let chain = crate::base::process::ancestors_commands(pid, MAX_DEPTH);
    let (pid, args) = chain
        .iter()
        .take_while(|(pid, _)| *pid > 1)
        .find(|(_, args)| is_claude(args))?;
    autocompact_arg(args).map(|v| (v, format!("--autocompact (claude command line, pid {pid})")))
}

/// Programs that stand between an agent and its hook without being the agent: the shell it
/// runs the hook command through, `env`, git's dispatch (`git session ...`).
const BETWEEN: &[&str] = &[
    "sh",
    "bash",
    "dash",
    "zsh",
    "ksh",
    "mksh",
    "fish",
    "busybox",
    "env",
    "git",
    "git-session",
];

/// Whether these arguments run one of [`BETWEEN`] (a login shell's `-bash` too).
fn is_between(args: &[String]) -> bool {
    args.first()
        .and_then(|a| Path::new(a.trim_start_matches('-')).file_name())
        .and_then(|n| n.to_str())
        .is_some_and(|n| BETWEEN.contains(&n))
}

/// The agent's process: the nearest ancestor of this hook process that is not a shell, `env`
/// or git's dispatch. `None` where ancestors' command lines cannot be read (then a shell could
/// not be told from the agent, and a shell that ends with the hook would be taken for an agent
/// that is gone). Read once per hook process.
pub fn agent_process() -> Option<crate::base::process::ProcessId> {
    static FOUND: std::sync::OnceLock<Option<crate::base::process::ProcessId>> =
        std::sync::OnceLock::new();
    FOUND
        .get_or_init(|| {
            let parent = std::os::unix::process::parent_id();
            if parent <= 1 {
                return None;
            }
            let chain = crate::base::process::ancestors_commands(parent, MAX_DEPTH);
            let (pid, _) = chain
                .iter()
                .take_while(|(pid, args)| *pid > 1 && !args.is_empty())
                .find(|(_, args)| !is_between(args))?;
            Some(crate::base::process::ProcessId::of(*pid))
        })
        .clone()
}

/// What the agent state remembers of the command line, once read (both `None`: it gave none).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Remembered {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// The command line's budget for this hook call: read at a SessionStart (a new agent process
/// may carry other arguments) and when nothing is remembered yet, else what was remembered.
pub fn remembered(kept: &mut Option<Remembered>, session_start: bool) -> Option<(u64, String)> {
    if session_start || kept.is_none() {
        let read = autocompact_from(None);
        *kept = Some(Remembered {
            budget: read.as_ref().map(|(b, _)| *b),
            source: read.map(|(_, s)| s),
        });
    }
    let kept = kept.as_ref()?;
    Some((kept.budget?, kept.source.clone()?))
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
    fn shells_and_dispatchers_stand_between() {
        for a in [
            &["/bin/sh", "-c", "git-session context hook"][..],
            &["-bash"],
            &["env", "X=1"],
            &["/usr/bin/git", "session"],
            &["git-session", "context", "hook"],
        ] {
            assert!(is_between(&args(a)), "{a:?}");
        }
        for a in [
            &["claude"][..],
            &["node", "/x/gemini.js"],
            &["/x/codex", "exec"],
            &[],
        ] {
            assert!(!is_between(&args(a)), "{a:?}");
        }
        // The test runner is above this process: an agent process is found, and it is not this.
        if let Some(p) = agent_process() {
            assert_ne!(p.pid, std::process::id());
        }
    }

    #[test]
    fn this_process_has_no_claude_above_it_or_ends_cleanly() {
        // The test runner's ancestry: whatever it is, the walk ends without a panic.
        let _ = autocompact_from(None);
        assert_eq!(autocompact_from(Some(1)), None);
    }
}
