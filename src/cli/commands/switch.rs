//! `git session switch LABEL`: the worktree of an existing session, to enter.
//!
//! It prints the worktree's path alone on stdout (so `cd "$(git session switch x)"` works) and,
//! under the shell integration (`shell-init`), asks the shell to enter it. It changes nothing.
//! An unknown label is refused (exit 1) with the closest labels there are.

use crate::cli::helper::CommandHelper;
use crate::cli::output;
use crate::cli::user_error::UserError;
use crate::session::{self, Label, RecordState, SessionRecord};
use anyhow::Result;

/// Print the worktree path of a session (the shell integration enters it)
#[derive(Debug, clap::Args)]
#[command(after_help = "Example: cd \"$(git session switch fix-login)\"")]
pub struct Args {
    /// Session label
    pub label: String,
}

pub fn run(args: Args) -> Result<()> {
    let label = Label::new(&args.label)?;
    let cx = CommandHelper::open()?;
    cx.config()?;
    cx.recover()?;
    let records = session::load_all(&cx.store)?;
    let Some(record) = records.iter().find(|r| r.label == label) else {
        return Err(unknown(&label, &records).into());
    };
    if record.state == RecordState::Creating {
        return Err(
            UserError::refused(format!("session \"{label}\" is still being created"))
                .hinted("wait for `git session create` to finish, then switch again")
                .into(),
        );
    }
    if !record.path.is_dir() {
        return Err(UserError::refused(format!(
            "the worktree of \"{label}\" is gone: {}",
            record.path.display()
        ))
        .hinted(format!(
            "`git session info {label}` shows what it held; `git session cleanup {label}` removes \
             what is left"
        ))
        .into());
    }
    output::line(record.path.display().to_string())?;
    crate::cli::shell::request_cd(&record.path);
    Ok(())
}

/// The refusal of a label no session has: the closest labels, else all of them when few.
fn unknown(label: &Label, records: &[SessionRecord]) -> UserError {
    let labels: Vec<&str> = records.iter().map(|r| r.label.as_str()).collect();
    let err = UserError::refused(format!("no session named \"{label}\""));
    let near = closest(label, &labels);
    if !near.is_empty() {
        return err.hinted(format!(
            "did you mean {}? (`git session list` shows them all)",
            near.join(", ")
        ));
    }
    match labels.len() {
        0 => err.hinted("this repository has no sessions; make one with `git session create`"),
        1..=5 => err.hinted(format!("the sessions here: {}", labels.join(", "))),
        _ => err.hinted("`git session list` shows the sessions of this repository"),
    }
}

/// Up to three labels within a small edit distance of `wanted` (or that contain it, or that it
/// contains), nearest first.
pub fn closest<'a>(wanted: &str, labels: &[&'a str]) -> Vec<&'a str> {
    let limit = (wanted.chars().count() / 3).max(2);
    let lower = wanted.to_lowercase();
    let mut scored: Vec<(usize, &str)> = labels
        .iter()
        .filter_map(|&l| {
            let d = distance(&lower, &l.to_lowercase());
            let contains = l.len() >= 3
                && lower.len() >= 3
                && (l.to_lowercase().contains(&lower) || lower.contains(&l.to_lowercase()));
            (d <= limit || contains).then_some((d, l))
        })
        .collect();
    scored.sort();
    scored.into_iter().take(3).map(|(_, l)| l).collect()
}

/// Levenshtein distance, over characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_counts_edits() {
        assert_eq!(distance("", ""), 0);
        assert_eq!(distance("fix-login", "fix-login"), 0);
        assert_eq!(distance("fix-lgoin", "fix-login"), 2);
        assert_eq!(distance("fix", "fix-login"), 6);
        assert_eq!(distance("kitten", "sitting"), 3);
    }

    #[test]
    fn closest_labels_come_nearest_first_and_far_ones_not_at_all() {
        let labels = ["fix-login", "fix-logout", "docs", "refactor-db"];
        assert_eq!(closest("fix-logn", &labels), vec!["fix-login"]);
        assert_eq!(closest("fix-log", &labels), vec!["fix-login", "fix-logout"]);
        assert_eq!(closest("login", &labels), vec!["fix-login"]);
        assert_eq!(closest("doc", &labels), vec!["docs"]);
        assert!(closest("zzzzzzzz", &labels).is_empty());
    }
}
