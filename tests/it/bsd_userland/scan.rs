//! The static half: every script the tool prints or ships for a shell (`shell-init` and
//! `completions` for bash, zsh and fish, the hook files in `githooks/`) and every command the
//! pinned hints and messages suggest (in backquotes, or after "with: "), read as simple commands
//! and checked against [`RULES`]. It covers what no scenario runs (a completion, a hint for a
//! rare refusal); the scenarios remain the test of what runs.

use super::{offends, RULES};
use crate::common::TestRepo;
use std::collections::BTreeSet;
use std::path::Path;

/// The line that opens our block in a hook file.
const BEGIN: &str = "# >>> git-session >>>";

/// Words that may stand before the command of a simple command.
const LEAD: &[&str] = &[
    "if", "then", "else", "elif", "do", "while", "until", "!", "command", "exec", "builtin", "and",
    "or", "not", "begin", "time", "env",
];

/// The simple commands in `text`, each as its words: split at the shell's separators (a rough
/// cut: quotes do not protect a separator), leading keywords and assignments dropped, quotes
/// taken off. Comment lines are skipped.
fn commands(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with('#') {
            continue;
        }
        for segment in line.split(|c| "|;&(){}`".contains(c)) {
            let words: Vec<String> = segment
                .split_whitespace()
                .map(|w| w.trim_matches(|c| c == '\'' || c == '"').to_string())
                .skip_while(|w| {
                    LEAD.contains(&w.as_str()) || (w.contains('=') && !w.starts_with('-'))
                })
                .collect();
            if !words.is_empty() {
                out.push(words);
            }
        }
    }
    out
}

/// The commands of `text` that use what BSD userland lacks, each with the rule's reason.
fn offences(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for words in commands(text) {
        let tool = words[0].rsplit('/').next().unwrap_or_default();
        if let Some(rule) = RULES.iter().find(|r| r.tool == tool) {
            let args: Vec<&str> = words[1..].iter().map(String::as_str).collect();
            if offends(rule, &args) {
                found.push(format!("{}: {}", words.join(" "), rule.why));
            }
        }
    }
    found
}

/// The commands a pinned snapshot suggests: its backquoted spans and what follows "with: ".
fn suggested(snapshot: &str) -> String {
    let mut out = String::new();
    for (i, span) in snapshot.split('`').enumerate() {
        if i % 2 == 1 && !span.contains('\n') {
            out.push_str(span);
            out.push('\n');
        }
    }
    for line in snapshot.lines() {
        if let Some((_, tail)) = line.split_once("with: ") {
            out.push_str(tail);
            out.push('\n');
        }
    }
    out
}

fn files_in(dir: &Path) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            (
                e.path().display().to_string(),
                std::fs::read_to_string(e.path()).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn the_scan_finds_gnu_only_calls_and_passes_portable_ones() {
    let gnu = "x=$(readlink -f \"$0\")\nsed -i 's/a/b/' f && echo ok\nfind . -printf '%p\\n' | \
               xargs -r rm\nif timeout 5 true; then :; fi\n";
    assert_eq!(offences(gnu).len(), 5, "{:?}", offences(gnu));
    let portable = "d=$(cd -P \"$(dirname \"$0\")\" && pwd -P)\nsed -E -n 's/a/b/p' f\n\
                    date +%s\nfind . -type f -name '*.rs' | sort\nf=$(mktemp \"${TMPDIR:-/tmp}/x.XXXXXX\")\n\
                    # sed -i in a comment is no call\n";
    assert_eq!(offences(portable), Vec::<String>::new());
}

#[test]
fn the_scripts_and_hints_the_tool_hands_a_shell_use_only_bsd_userland() {
    let repo = TestRepo::new();
    let mut texts: Vec<(String, String)> = Vec::new();
    for shell in ["bash", "zsh", "fish"] {
        for command in ["shell-init", "completions"] {
            let out = repo.run([command, shell]).ok();
            texts.push((format!("git session {command} {shell}"), out.stdout));
        }
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    texts.extend(files_in(&manifest.join("githooks")));
    // Our block inside hooks of the repository's own (the guard's one-line form), pre-push too.
    super::shells::shared(&repo);
    super::shells::hooks_of_its_own(&repo);
    repo.run(["hooks", "install"]).ok();
    let mut installed: Vec<(String, String)> = files_in(&repo.root.join(".git/hooks"))
        .into_iter()
        .filter(|(_, text)| text.contains(BEGIN))
        .collect();
    // A git that runs config-based hooks (2.54 and later) gets the guard's lines there instead.
    let configured = repo
        .git_try(
            &repo.root,
            ["config", "--get-regexp", r"^hook\..*\.command$"],
        )
        .stdout;
    installed.extend(
        configured
            .lines()
            .map(|l| ("git config".to_string(), l.to_string())),
    );
    assert_eq!(installed.len(), 3, "{installed:?}");
    texts.extend(installed);
    for dir in ["src/cli/words/snapshots", "tests/it/snapshots"] {
        for (name, text) in files_in(&manifest.join(dir)) {
            texts.push((name, suggested(&text)));
        }
    }
    let mut found = Vec::new();
    let mut seen = BTreeSet::new();
    for (name, text) in &texts {
        for offence in offences(text) {
            found.push(format!("{name}: {offence}"));
        }
        seen.extend(commands(text).into_iter().map(|w| w[0].clone()));
    }
    assert_eq!(found, Vec::<String>::new(), "GNU-only calls");
    // The scan read what it was meant to: the scripts' commands and the hints' suggestions.
    for expected in [
        "mktemp",
        "cat",
        "compgen",
        "complete",
        "git-session",
        "chmod",
        "cd",
    ] {
        assert!(seen.contains(expected), "{expected} never seen: {seen:?}");
    }
}
