//! The parts of a raw commit object (`git cat-file commit`) a rebase must carry over: the
//! author (name, email, date with its zone) and the message, byte for byte.

use anyhow::{Context, Result};

/// The author line and the exact message of a raw commit object.
pub(super) fn author_and_message(raw: &str) -> Result<(Vec<(String, String)>, String)> {
    let (header, message) = raw.split_once("\n\n").unwrap_or((raw, ""));
    let line = header
        .lines()
        .find_map(|l| l.strip_prefix("author "))
        .context("a commit without an author line")?;
    let close = line.rfind('>').context("an author line without an email")?;
    let open = line[..close]
        .rfind('<')
        .context("an author line without an email")?;
    let name = line[..open].trim_end().to_string();
    let email = line[open + 1..close].to_string();
    let date = format!("@{}", line[close + 1..].trim());
    Ok((
        vec![
            ("GIT_AUTHOR_NAME".to_string(), name),
            ("GIT_AUTHOR_EMAIL".to_string(), email),
            ("GIT_AUTHOR_DATE".to_string(), date),
        ],
        message.to_string(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_author_and_the_exact_message_come_out_of_a_raw_commit() {
        let raw = "tree 1234\nparent 5678\nauthor A. Person <a@example.com> 1767225600 +0100\n\
                   committer C <c@example.com> 1767225600 +0000\n\nSubject\n\nBody line\n";
        let (author, message) = author_and_message(raw).unwrap();
        assert_eq!(
            author,
            vec![
                ("GIT_AUTHOR_NAME".to_string(), "A. Person".to_string()),
                ("GIT_AUTHOR_EMAIL".to_string(), "a@example.com".to_string()),
                (
                    "GIT_AUTHOR_DATE".to_string(),
                    "@1767225600 +0100".to_string()
                ),
            ]
        );
        assert_eq!(message, "Subject\n\nBody line\n");
        assert!(author_and_message("tree 1\n\nno author\n").is_err());
    }
}
