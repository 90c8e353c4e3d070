//! Session labels at TAB time: which arguments take one, and `git-session __complete-labels`.
//!
//! An argument takes an existing session's label when clap shows its value as `LABEL` or
//! `LABELS` (its explicit value name, or a positional's id in capitals), except `create`'s,
//! which names a new session. The completion scripts are generated from that set
//! ([`label_args`]), and at TAB time they run the hidden command [`HIDDEN_COMMAND`]:
//! - `git-session __complete-labels` prints every session label of the repository the current
//!   directory is in, one per line, sorted (zsh and fish know the position themselves);
//! - `git-session __complete-labels -- WORDS...` (the words from the command name to the one
//!   being completed, that one last) decides first: it exits 1 and prints nothing unless that
//!   word is where a label goes, so bash (which knows nothing of the command's grammar) and
//!   fish's positional arguments ask it;
//! - `-C DIR` before either (repeatable, each relative to the one before, an empty one ignored,
//!   `~/` for the home directory) answers for the repository there, as `git -C DIR session ...`
//!   will run: the scripts pass on the `-C` options typed before `session`.
//!
//! Invariants: the command reads only the names of the store's `sessions/*.toml` files (a
//! label's file name, `/` written as `+`; no record is parsed, nothing is written, nothing is
//! set aside), prints nothing on stderr, and
//! outside a repository prints nothing and succeeds. It is recognised before clap parses
//! anything and is no clap subcommand, so it appears in no help, completion or man page.

use clap::{Arg, ArgAction, Command};

/// The hidden first argument the scripts pass.
pub const HIDDEN_COMMAND: &str = "__complete-labels";

/// How the value of a label-taking argument is shown (one label, or several).
const LABEL: [&str; 2] = ["LABEL", "LABELS"];

/// One argument that takes an existing session's label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelArg {
    /// Subcommand names from the top, e.g. `["handoff", "show"]`.
    pub path: Vec<String>,
    /// The clap id of the argument.
    pub id: String,
    /// A positional argument (else an option, completed after its flag).
    pub positional: bool,
}

/// Every label-taking argument of `cmd`'s tree, in tree order.
pub fn label_args(cmd: &Command) -> Vec<LabelArg> {
    let mut out = Vec::new();
    collect(cmd, &mut Vec::new(), &mut out);
    out
}

fn collect(cmd: &Command, path: &mut Vec<String>, out: &mut Vec<LabelArg>) {
    for arg in cmd.get_arguments() {
        if takes_label(path, arg) {
            out.push(LabelArg {
                path: path.clone(),
                id: arg.get_id().to_string(),
                positional: arg.is_positional(),
            });
        }
    }
    for sub in cmd.get_subcommands() {
        path.push(sub.get_name().to_string());
        collect(sub, path, out);
        path.pop();
    }
}

/// Whether `arg`, reached through the subcommands `path`, takes an existing session's label.
pub fn takes_label<S: AsRef<str>>(path: &[S], arg: &Arg) -> bool {
    if path.first().is_some_and(|p| p.as_ref() == "create") {
        return false;
    }
    let shown = match arg.get_value_names().and_then(|names| names.first()) {
        Some(name) => name.to_string(),
        None if arg.is_positional() => arg.get_id().as_str().to_uppercase(),
        None => return false,
    };
    LABEL.contains(&shown.as_str()) && arg.get_action().takes_values()
}

/// Whether the last of `words` (the command name first, the word being completed last) stands
/// where a session label goes. Options are skipped together with their values (also bash's
/// `--opt = value`, which it splits at `=`); after `--` every word is positional.
pub fn wants_label(root: &Command, words: &[String]) -> bool {
    let Some((current, before)) = words.split_last() else {
        return false;
    };
    let mut cmd = root;
    let mut path: Vec<&str> = Vec::new();
    let mut positionals = 0usize;
    let mut pending: Option<&Arg> = None;
    let mut only_positionals = false;
    for word in before.iter().skip(1) {
        if let Some(opt) = pending {
            // `=` is bash's split of `--opt=value`: the value is still to come.
            if word != "=" {
                pending = None;
            } else {
                pending = Some(opt);
            }
            continue;
        }
        if only_positionals {
            positionals += 1;
        } else if word == "--" {
            only_positionals = true;
        } else if let Some(long) = word.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, _)) => (n, true),
                None => (long, false),
            };
            pending = find(cmd, |a| a.get_long() == Some(name))
                .filter(|a| a.get_action().takes_values() && !inline);
        } else if word.len() > 1 && word.starts_with('-') {
            // A cluster of short flags: the first that takes a value eats the rest of the word,
            // or the next word when nothing follows it.
            let shorts: Vec<char> = word.chars().skip(1).collect();
            for (i, c) in shorts.iter().enumerate() {
                let Some(arg) = find(cmd, |a| a.get_short() == Some(*c)) else {
                    continue;
                };
                if arg.get_action().takes_values() {
                    if i + 1 == shorts.len() {
                        pending = Some(arg);
                    }
                    break;
                }
            }
        } else if let Some(sub) = (positionals == 0)
            .then(|| cmd.find_subcommand(word))
            .flatten()
        {
            cmd = sub;
            path.push(sub.get_name());
        } else {
            positionals += 1;
        }
    }
    if let Some(opt) = pending {
        return takes_label(&path, opt);
    }
    if current.starts_with('-') && !only_positionals {
        return false;
    }
    positional_at(cmd, positionals).is_some_and(|arg| takes_label(&path, arg))
}

fn find(cmd: &Command, pred: impl Fn(&Arg) -> bool) -> Option<&Arg> {
    cmd.get_arguments().find(|a| pred(a))
}

/// The positional argument that receives the `n`th positional word (from 0): the one at that
/// index, or the last one when it takes any number of values.
fn positional_at(cmd: &Command, n: usize) -> Option<&Arg> {
    let positionals: Vec<&Arg> = cmd.get_positionals().collect();
    if let Some(arg) = positionals.get(n) {
        return Some(arg);
    }
    positionals.last().copied().filter(|a| {
        matches!(a.get_action(), ArgAction::Append)
            || a.get_num_args().is_some_and(|r| r.max_values() > 1)
    })
}

/// The labels of the sessions in the repository the current directory (or `GIT_DIR`) is in,
/// sorted; empty outside a repository or when the store cannot be read.
pub fn labels_here() -> Vec<String> {
    let Ok(Some(repo)) = crate::git::Repo::discover() else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(crate::store::Store::of(&repo).path("sessions")) else {
        return Vec::new();
    };
    let mut labels: Vec<String> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let label = name.strip_suffix(".toml")?;
            Some(crate::session::Label::from_file_name(label).ok()?.into())
        })
        .collect();
    labels.sort();
    labels
}

/// Runs `__complete-labels [-C DIR]... [-- WORDS...]` (see the module doc); returns the exit
/// code.
pub fn run(mut args: &[String]) -> i32 {
    while let [flag, dir, rest @ ..] = args {
        if flag != "-C" {
            break;
        }
        args = rest;
        if dir.is_empty() {
            continue; // git: `-C ""` leaves the directory as it is
        }
        let dir = match (dir.strip_prefix("~"), std::env::var_os("HOME")) {
            (Some(tail), Some(home)) if tail.is_empty() || tail.starts_with('/') => {
                let mut home = std::path::PathBuf::from(home).into_os_string();
                home.push(tail);
                home
            }
            _ => dir.into(),
        };
        if std::env::set_current_dir(&dir).is_err() {
            // No repository there: nothing to offer (the shell falls back to its default).
            return if args.first().is_some_and(|a| a == "--") {
                1
            } else {
                0
            };
        }
    }
    let words = match args {
        [] => None,
        [dashes, words @ ..] if dashes == "--" => Some(words),
        _ => return 2,
    };
    if let Some(words) = words {
        let mut root = crate::cli::command();
        root.build();
        if !wants_label(&root, words) {
            return 1;
        }
    }
    let mut text = labels_here().join("\n");
    if !text.is_empty() {
        text.push('\n');
    }
    use std::io::Write;
    // A closed pipe is the shell's business; completion stays silent.
    let _ = std::io::stdout().write_all(text.as_bytes());
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> Command {
        let mut cmd = crate::cli::command();
        cmd.build();
        cmd
    }

    fn wants(line: &str) -> bool {
        let mut words: Vec<String> = line.split(' ').map(str::to_string).collect();
        if line.ends_with(' ') {
            words.pop();
            words.push(String::new());
        }
        wants_label(&root(), &words)
    }

    #[test]
    fn the_label_taking_arguments_are_found_and_create_is_not_among_them() {
        let found: Vec<String> = label_args(&crate::cli::command())
            .iter()
            .map(|a| format!("{} {}", a.path.join(" "), a.id))
            .collect();
        for expected in [
            "info label",
            "cleanup labels",
            "handoff write session",
            "handoff show label",
            "handoff list label",
            "setup label",
        ] {
            assert!(found.iter().any(|f| f == expected), "{expected}: {found:?}");
        }
        assert!(!found.iter().any(|f| f.starts_with("create")), "{found:?}");
    }

    #[test]
    fn labels_go_where_the_grammar_puts_them() {
        for yes in [
            "git-session info ",
            "git-session info ab",
            "git-session info --json ",
            "git-session cleanup ",
            "git-session cleanup a b ",
            "git-session cleanup --force -y a ",
            "git-session handoff show ",
            "git-session handoff show --version 2 ",
            "git-session handoff list ",
            "git-session setup --approve-run ",
            "git-session handoff write --session ",
            "git-session handoff write -s ",
            "git-session handoff write --session = ",
            "git-session handoff write -F note.md --session x",
        ] {
            assert!(wants(yes), "{yes:?} should take a label");
        }
        for no in [
            "git-session ",
            "git-session in",
            "git-session info -",
            "git-session info a ",
            "git-session create ",
            "git-session handoff ",
            "git-session handoff show --version ",
            "git-session handoff write ",
            "git-session handoff write --file ",
            "git-session handoff write --session=a ",
            "git-session list ",
            "git-session claim ",
            "git-session context status --agent-session ",
        ] {
            assert!(!wants(no), "{no:?} should not take a label");
        }
    }
}
