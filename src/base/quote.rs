//! How names are shown to people and to shells: a repository path in a message, a word on a
//! command line the user may paste.
//!
//! Invariant: both are pure functions of their input, and the round trip holds: a path shown by
//! [`show_path`] reads back as itself in a Rust or JSON string, a word quoted by [`shell_quote`]
//! is one word to a POSIX shell whatever it holds.

/// How a path is shown in messages: bare when harmless, quoted and escaped otherwise.
pub fn show_path(path: &str) -> String {
    if path
        .chars()
        .any(|c| c.is_control() || c == '"' || c == '\\' || c == ' ' || c == '\'')
        || path.starts_with('-')
    {
        format!("\"{}\"", path.escape_debug())
    } else {
        path.to_string()
    }
}

/// Text as a refusal shows it: escaped, at most 80 characters and `...`.
pub fn shortened(text: &str) -> String {
    let head: String = text.chars().take(80).collect::<String>();
    let head = head.escape_debug().to_string();
    if text.chars().count() > 80 {
        format!("{head}...")
    } else {
        head
    }
}

/// Quotes for a POSIX shell when needed.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:@,".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn harmless_names_stay_bare_and_the_rest_is_quoted() {
        assert_eq!(show_path("src/a.rs"), "src/a.rs");
        assert_eq!(show_path("a b"), "\"a b\"");
        assert_eq!(show_path("-x"), "\"-x\"");
        assert_eq!(show_path("a\nb"), "\"a\\nb\"");
        assert_eq!(shell_quote("/tmp/wt-1"), "/tmp/wt-1");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
