//! The command line: parse, dispatch, turn errors into exit codes.

pub(crate) mod attention;
pub(crate) mod cleaning;
pub(crate) mod commands;
pub(crate) mod creating;
pub(crate) mod failsafe;
pub(crate) mod gather;
pub(crate) mod helper;
pub(crate) mod in_force;
pub(crate) mod merge_progress;
pub(crate) mod output;
pub(crate) mod report;
pub(crate) mod shell;
pub(crate) mod user_error;
pub(crate) mod watch;
pub(crate) mod words;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "git-session",
    bin_name = "git-session",
    version,
    about = "One worktree, one branch and one owner per AI coding-agent session",
    long_about = "git-session gives every parallel agent session its own worktree on a branch \
                  session/<label>, guards commits against paths another live session owns, and \
                  tells agents how full their context window is. Run it as `git session ...`.",
    after_long_help = "Environment:\n  \
        GIT_SESSION=<label>     act as that session: its commits and claims\n  \
        GIT_SESSION_GUARD=off   let one commit or push past the guard, recorded in the audit log\n  \
        GIT_SESSION_TRACE=1     write each decision of the guard and the context hook to stderr"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    Create(commands::create::Args),
    List(commands::list::Args),
    Info(commands::info::Args),
    Switch(commands::switch::Args),
    Env(commands::env::Args),
    Merge(commands::merge::Args),
    Cleanup(commands::cleanup::Args),
    Setup(commands::setup::Args),
    Prune(commands::prune::Args),
    Restore(commands::restore::Args),
    Claim(commands::claim::Args),
    Release(commands::release::Args),
    Claims(commands::claims::Args),
    Sync(commands::sync::Args),
    Guard(commands::guard::Args),
    Hooks(commands::hooks::Args),
    Context(commands::context::Args),
    Handoff(commands::handoff::Args),
    Completions(commands::completions::Args),
    Man(commands::man::Args),
    ShellInit(commands::shell_init::Args),
    WorktreeHook(commands::worktree_hook::Args),
}

/// Parses the process arguments, runs the command, and returns the exit code.
pub fn main() -> i32 {
    // What domain code announces is printed here, at once (see `announce`).
    crate::base::announce::set_sink(crate::cli::output::announce);
    if let Some(code) = complete_labels() {
        return code;
    }
    if let Some(code) = man_viewer() {
        return code;
    }
    if let Some(hook) = guard_hook() {
        return run(Command::Guard(commands::guard::Args { hook }));
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(mut e) => {
            no_dash_dash_tip_for_labels(&mut e);
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    if cli.command.shows_help_later() {
        commands::man::ensure_installed();
    }
    run(cli.command)
}

/// Whether subcommand `sub` takes session labels as positional arguments (clap shows them as
/// `LABEL` or `LABELS`): read from the command tree, so a new command needs no list kept.
fn takes_labels(sub: &str) -> bool {
    use clap::CommandFactory;
    Cli::command().find_subcommand(sub).is_some_and(|c| {
        c.get_positionals().any(|a| {
            let shown = a
                .get_value_names()
                .and_then(|names| names.first())
                .map_or_else(|| a.get_id().as_str().to_uppercase(), |n| n.to_string());
            matches!(shown.as_str(), "LABEL" | "LABELS")
        })
    })
}

/// clap answers an unknown option with the tip "to pass '-x' as a value, use '-- -x'". Where
/// the value would be a label, that only leads to a second refusal (no label starts with `-`):
/// the tip says so instead, and where to find the command's options.
fn no_dash_dash_tip_for_labels(e: &mut clap::Error) {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument {
        return;
    }
    let sub = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let Some(sub) = sub.filter(|s| takes_labels(s)) else {
        return;
    };
    let tip_is_dash_dash = matches!(e.get(ContextKind::Suggested),
        Some(ContextValue::StyledStrs(tips)) if tips.iter().any(|t| t.to_string().contains("use '-- ")));
    if tip_is_dash_dash {
        let tip = format!(
            "a session label never starts with '-'; `git session {sub} --help` lists the options"
        );
        e.insert(
            ContextKind::Suggested,
            ContextValue::StyledStrs(vec![tip.into()]),
        );
    }
}

fn finish(outcome: anyhow::Result<()>) -> i32 {
    match outcome {
        Ok(()) => 0,
        Err(e) => report::report(&e),
    }
}

/// `__complete-labels ...`: what the completion scripts run at TAB time. Recognised before clap,
/// so it stays out of help, completions and man pages, and costs no parse of the command tree
/// when it only lists labels.
fn complete_labels() -> Option<i32> {
    let mut args = std::env::args_os().skip(1);
    if args.next()? != commands::completions::labels::HIDDEN_COMMAND {
        return None;
    }
    // Words being typed: one that is not UTF-8 matches no subcommand or option either way.
    let rest: Vec<String> = args.map(|a| a.to_string_lossy().into_owned()).collect();
    Some(commands::completions::labels::run(&rest))
}

/// `__man PAGE`: git's man viewer for our pages ([`commands::man::view`]). Recognised before
/// clap, so it stays out of help, completions and man pages.
fn man_viewer() -> Option<i32> {
    let mut args = std::env::args_os().skip(1);
    if args.next()? != commands::man::VIEWER_COMMAND {
        return None;
    }
    let page = args
        .next()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|| "git-session".to_string());
    Some(commands::man::view(&page))
}

/// `guard pre-commit` or `guard post-commit`, exactly: what the installed hooks run on every
/// commit. Building clap's command tree for every subcommand costs about a tenth of a
/// millisecond, a noticeable share of a hook that must cost about a process start, so these
/// two fixed forms are recognised first. Anything else (`guard --help`, a typo) goes to clap.
fn guard_hook() -> Option<commands::guard::Hook> {
    let mut args = std::env::args_os().skip(1);
    let (Some(first), Some(second), None) = (args.next(), args.next(), args.next()) else {
        return None;
    };
    if first != "guard" {
        return None;
    }
    match second.to_str()? {
        "pre-commit" => Some(commands::guard::Hook::PreCommit),
        "post-commit" => Some(commands::guard::Hook::PostCommit),
        _ => None,
    }
}

impl Command {
    /// Whether this is a command a person runs, after which `git session --help` should work
    /// (see [`commands::man::ensure_installed`]): not the hooks agents and git run on every
    /// event, nor what a shell runs at every start or TAB.
    fn shows_help_later(&self) -> bool {
        !matches!(
            self,
            Command::Guard(_)
                | Command::Context(_)
                | Command::Completions(_)
                | Command::Man(_)
                | Command::ShellInit(_)
                | Command::WorktreeHook(_)
        )
    }
}

/// Runs the command and returns the process's exit code.
pub(crate) fn run(command: Command) -> i32 {
    match command {
        Command::Create(args) => finish(commands::create::run(args)),
        Command::List(args) => finish(commands::list::run(args)),
        Command::Info(args) => finish(commands::info::run(args)),
        Command::Switch(args) => finish(commands::switch::run(args)),
        Command::Env(args) => finish(commands::env::run(args)),
        Command::Merge(args) => finish(commands::merge::run(args)),
        Command::Cleanup(args) => finish(commands::cleanup::run(args)),
        Command::Setup(args) => finish(commands::setup::run(args)),
        Command::Prune(args) => finish(commands::prune::run(args)),
        Command::Restore(args) => finish(commands::restore::run(args)),
        Command::Claim(args) => finish(commands::claim::run(args)),
        Command::Release(args) => finish(commands::release::run(args)),
        Command::Claims(args) => finish(commands::claims::run(args)),
        Command::Sync(args) => finish(commands::sync::run(args)),
        // The guard picks its own exit code: a refusal is its answer, not an error.
        Command::Guard(args) => commands::guard::run(args),
        Command::Hooks(args) => finish(commands::hooks::run(args)),
        Command::Context(args) => finish(commands::context::run(args)),
        Command::Handoff(args) => finish(commands::handoff::run(args)),
        Command::Completions(args) => finish(commands::completions::run(args)),
        Command::Man(args) => finish(commands::man::run(args)),
        Command::ShellInit(args) => finish(commands::shell_init::run(args)),
        Command::WorktreeHook(args) => finish(commands::worktree_hook::run(args)),
    }
}

/// The clap command tree, for completions and man pages.
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_commands_that_take_labels_are_read_from_clap() {
        let all: Vec<String> = {
            use clap::CommandFactory;
            super::Cli::command()
                .get_subcommands()
                .map(|c| c.get_name().to_string())
                .filter(|c| super::takes_labels(c))
                .collect()
        };
        // Those of the list this replaced, each still found.
        for c in [
            "create", "switch", "merge", "info", "cleanup", "setup", "restore", "env",
        ] {
            assert!(all.iter().any(|a| a == c), "{c} not in {all:?}");
        }
        assert!(!all.iter().any(|a| a == "list" || a == "guard"), "{all:?}");
    }
}
