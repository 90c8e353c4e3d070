//! README.md is a first screen, and the reference under docs/ covers what the binary has:
//! the README says what the tool is, installs it, starts an agent and shows a refusal in under
//! 80 lines before its first link out; its commands table has every subcommand the binary lists,
//! one short line each; docs/commands.md has a section for each. A subcommand added later
//! without a line in both fails here, naming it.

use crate::common;
use common::{bin, hermetic};
use std::path::Path;
use std::process::Command;

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap()
}

/// The subcommands `git-session help` lists (but `help` itself).
fn subcommands() -> Vec<String> {
    let home = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(bin());
    hermetic(&mut cmd, home.path());
    let run = common::to_run(cmd.arg("help").output().unwrap()).ok();
    let listed = run
        .stdout
        .split_once("Commands:\n")
        .expect("help lists the commands")
        .1
        .split("\n\n")
        .next()
        .unwrap();
    let names: Vec<String> = listed
        .lines()
        .filter(|l| l.starts_with("  ") && !l[2..].starts_with(' '))
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .filter(|name| name != "help")
        .collect();
    assert!(names.len() > 10, "{}", run.stdout);
    names
}

/// Whether `text` names the command as a code span's first word (`` `claim `` is not
/// `` `claims ``).
fn names(text: &str, command: &str) -> bool {
    text.match_indices(&format!("`{command}"))
        .chain(text.match_indices(&format!("`git session {command}")))
        .any(|(at, found)| {
            text[at + found.len()..]
                .chars()
                .next()
                .is_some_and(|c| !c.is_ascii_alphanumeric() && c != '-' && c != '_')
        })
}

#[test]
fn the_readme_first_screen_is_under_80_lines() {
    let readme = read("README.md");
    let before = readme
        .lines()
        .position(|l| l.contains("]("))
        .expect("the README links out");
    assert!(
        before < 80,
        "README.md has {before} lines before its first link out; the first screen is under 80"
    );
    for heading in [
        "## Install",
        "## Quick start for agents",
        "## When the guard says no",
        "## Commands",
    ] {
        let at = readme
            .find(heading)
            .unwrap_or_else(|| panic!("no {heading}"));
        assert!(
            readme[..at].lines().count() < before,
            "{heading} is not on the first screen"
        );
    }
}

#[test]
fn the_readme_table_has_every_command_in_one_short_line() {
    let readme = read("README.md");
    let table = readme
        .split_once("## Commands\n")
        .expect("README has ## Commands")
        .1;
    let rows: Vec<&str> = table
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .collect();
    for row in &rows {
        assert!(
            row.chars().count() <= 104,
            "a row of the README's commands table is longer than a line: {row}"
        );
    }
    let commands = read("docs/commands.md");
    let headings: String = commands
        .lines()
        .filter(|l| l.starts_with("## "))
        .collect::<Vec<_>>()
        .join("\n");
    let mut missing = Vec::new();
    for command in subcommands() {
        let first_cells: Vec<&str> = rows
            .iter()
            .map(|r| r.split(" | ").next().unwrap())
            .filter(|cell| names(cell, &command))
            .collect();
        if first_cells.len() != 1 {
            missing.push(format!(
                "README.md's table has {} rows for `{command}`",
                first_cells.len()
            ));
        }
        if !names(&headings, &command) {
            missing.push(format!("docs/commands.md has no section for `{command}`"));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}
