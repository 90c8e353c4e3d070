//! A budget given on the agent's own command line (`claude --autocompact N`), read from the
//! hook's process ancestry: neither the hook's environment nor its payload carries it. Which
//! agents have one, what starts them and the option's name are facts of the agent table
//! ([`Facts::command_line`](super::agents::Facts::command_line)).
//!
//! Invariants a reader must not break:
//! - The ancestors' command lines come from the process facts ([`crate::base::process`]): two
//!   small files each under `/proc`, one `ps` run without it; where neither answers the source
//!   is absent, never an error. At most [`MAX_DEPTH`] ancestors are read, and none for an agent
//!   whose command line says nothing of its budget.
//! - Without `/proc` this costs a program run, so the hook reads it once per agent process and
//!   keeps the answer in the agent state ([`remembered`]): the agent's arguments do not change
//!   while it runs, and a new process (a resume) begins with a SessionStart, which reads again.
//! - Only the nearest ancestor that is the agent (its executable's name is one of
//!   [`CommandLine::programs`], or an argument is its [`CommandLine::script`]) is read, so a
//!   wrapper's own arguments never count; a value that does not parse as a size (Claude Code's
//!   `--autocompact auto`, the default) is no budget.

use super::agents::{Agent, CommandLine};
use super::window;
use std::path::Path;

/// How many ancestors are looked at, nearest first.
pub const MAX_DEPTH: usize = 16;

/// The window `cl`'s option gives among the agent's arguments (`--option N` or `--option=N`,
/// `N` as `150000`, `150k` or `1m`); the last one wins, as in Claude Code's parser.
pub fn budget_arg(cl: &CommandLine, args: &[String]) -> Option<u64> {
    let mut found = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let value = match a.strip_prefix(cl.option) {
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

/// Whether these arguments start the agent `cl` describes.
pub fn starts(cl: &CommandLine, args: &[String]) -> bool {
    let name = |a: &String| {
        Path::new(a)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
    };
    let first = args.first().and_then(name);
    first.is_some_and(|f| cl.programs.contains(&f.as_str()))
        || args
            .iter()
            .take(3)
            .any(|a| a.contains(cl.script.0) && a.ends_with(cl.script.1))
}

/// The window `agent`'s command line gives, read from the nearest process above `pid` (this
/// process's parent chain when `None`) that is that agent, with the source's name. `None`, and
/// nothing read, for an agent without a [`CommandLine`].
pub fn budget_from(agent: Agent, pid: Option<u32>) -> Option<(u64, String)> {
    let cl = agent.facts().command_line.as_ref()?;
    let pid = pid.unwrap_or_else(std::os::unix::process::parent_id);
    if pid <= 1 {
        return None;
    }
    let chain = crate::base::process::ancestors_commands(pid, MAX_DEPTH);
    let (pid, args) = chain
        .iter()
        .take_while(|(pid, _)| *pid > 1)
        .find(|(_, args)| starts(cl, args))?;
    budget_arg(cl, args).map(|v| {
        (
            v,
            format!("{} ({} command line, pid {pid})", cl.option, agent.id()),
        )
    })
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
/// For an agent without a [`CommandLine`], `None`, and `kept` stays as it was.
pub fn remembered(
    agent: Agent,
    kept: &mut Option<Remembered>,
    session_start: bool,
) -> Option<(u64, String)> {
    agent.facts().command_line.as_ref()?;
    if session_start || kept.is_none() {
        let read = budget_from(agent, None);
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

    fn claude() -> &'static CommandLine {
        Agent::Claude.facts().command_line.as_ref().unwrap()
    }

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
            assert_eq!(budget_arg(claude(), &args(a)), want, "{a:?}");
        }
    }

    #[test]
    fn which_processes_are_claude() {
        assert!(starts(claude(), &args(&["/usr/bin/claude", "-p"])));
        assert!(starts(
            claude(),
            &args(&["/x/node_modules/@anthropic-ai/claude-code/bin/claude.exe"])
        ));
        assert!(starts(
            claude(),
            &args(&["node", "/x/node_modules/@anthropic-ai/claude-code/cli.js"])
        ));
        assert!(!starts(
            claude(),
            &args(&["sh", "-c", "claude --autocompact 1"])
        ));
        assert!(!starts(claude(), &args(&[])));
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

    /// An agent whose command line says nothing of its budget is never looked up, and its
    /// state keeps nothing (a hook call of it runs no `ps`).
    #[test]
    fn an_agent_without_a_command_line_budget_is_not_read() {
        let mut kept = None;
        assert_eq!(remembered(Agent::Gemini, &mut kept, true), None);
        assert_eq!(kept, None);
        let mut kept = Some(Remembered {
            budget: Some(1),
            source: Some("s".into()),
        });
        assert_eq!(
            remembered(Agent::Claude, &mut kept, false),
            Some((1, "s".into()))
        );
    }

    #[test]
    fn this_process_has_no_claude_above_it_or_ends_cleanly() {
        // The test runner's ancestry: whatever it is, the walk ends without a panic.
        let _ = budget_from(Agent::Claude, None);
        // An agent whose command line says nothing is not looked for.
        assert_eq!(budget_from(Agent::Codex, None), None);
        assert_eq!(budget_from(Agent::Claude, Some(1)), None);
    }
}
