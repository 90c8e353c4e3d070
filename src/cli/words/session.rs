//! The words for a session that cannot be named or found ([`SessionError`]).

use crate::base::quote::shortened;
use crate::cli::user_error::UserError;
use crate::session::label::RULE;
use crate::session::SessionError;

pub fn words(e: &SessionError) -> UserError {
    match e {
        SessionError::InvalidLabel { text } => {
            UserError::usage(format!("invalid label \"{}\"", shortened(text))).hinted(RULE)
        }
        SessionError::InvalidLabelFileName { name } => {
            UserError::usage(format!("invalid label file name \"{}\"", shortened(name)))
                .hinted(RULE)
        }
        SessionError::InvalidBase { rev } => {
            UserError::usage(format!("invalid base revision \"{}\"", rev.escape_debug()))
                .hinted("name a branch, tag or commit, such as --base main")
        }
        SessionError::NoSuchSession { label, others } => {
            let err = UserError::refused(format!("no session named \"{}\"", label.escape_debug()));
            match others {
                Some(others) => unknown_hint(err, label, others),
                None => err.hinted("`git session list` shows the sessions of this repository"),
            }
        }
        SessionError::NoneHere { usage } => UserError::refused("no session here")
            .hinted(format!("name one: {usage} (see git session list)")),
    }
}

/// The hint for a label no session has: the closest labels, else all of them when few.
fn unknown_hint(err: UserError, label: &str, others: &[String]) -> UserError {
    let labels: Vec<&str> = others.iter().map(String::as_str).collect();
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
    use crate::session::Label;

    #[test]
    fn a_refused_label_is_one_short_escaped_line_with_the_rule() {
        let long = "a".repeat(65);
        let huge = "x".repeat(5000);
        for bad in [
            "",
            "-x",
            "a b",
            "a\nb",
            "a\u{1b}[31mb",
            "../x",
            &long,
            &huge,
        ] {
            let err = words(&Label::new(bad).expect_err(bad));
            assert!(err.message.starts_with("invalid label \""), "{bad:?}");
            assert!(
                !err.message.contains('\n') && !err.message.contains('\0'),
                "{bad:?}"
            );
            assert_eq!(err.hint.as_deref(), Some(RULE));
            assert!(err.message.chars().count() < 100, "{bad:?} shown shortened");
        }
    }
}
