//! Why a configuration file was refused, and where in it: [`ConfigError`] with its [`Position`].
//!
//! Invariant: every error found in a file's text names the line and column of what is wrong
//! (the key or the value, as the TOML parser's spans give them); only a file that cannot be read
//! at all has no position.

use std::ops::Range;
use std::path::{Path, PathBuf};

/// A place in a configuration file: 1-based line, 1-based column counted in characters (ordered
/// as places in the text are).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

impl Position {
    /// The position of byte `offset` of `text` (clamped to the text, and to a character start).
    pub fn of(text: &str, offset: usize) -> Position {
        let mut end = offset.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let before = &text[..end];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        Position {
            line: before.matches('\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
        }
    }

    /// The position of the first byte of `span`, when there is one.
    pub fn of_span(text: &str, span: Option<Range<usize>>) -> Option<Position> {
        span.map(|s| Position::of(text, s.start))
    }
}

/// Why a `.git-session.toml` (or the user's `config.toml`) was refused; the command line words
/// it. `at` is where in the file; `None` only where the file could not be read at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// A key's value is not one it takes.
    BadValue {
        file: PathBuf,
        at: Option<Position>,
        key: String,
        expected: String,
    },
    /// A duration key holds something that is no positive duration (a bare number included).
    NotADuration {
        file: PathBuf,
        at: Option<Position>,
        key: String,
        text: String,
    },
    /// The file is no TOML this tool reads (a syntax error, an unknown key, a value of the wrong
    /// type); `why` is the TOML reader's own account, `key` the key it is about where `why`
    /// does not name it.
    Unreadable {
        file: PathBuf,
        at: Option<Position>,
        key: Option<String>,
        why: String,
    },
    /// The file is not UTF-8 text (binary garbage, another encoding); `at` is the first bad byte.
    NotText { file: PathBuf, at: Position },
    /// The file exists but could not be read (permissions, an I/O error).
    NotRead { file: PathBuf, why: String },
}

impl ConfigError {
    /// The file the error is about.
    pub fn file(&self) -> &Path {
        match self {
            ConfigError::BadValue { file, .. }
            | ConfigError::NotADuration { file, .. }
            | ConfigError::Unreadable { file, .. }
            | ConfigError::NotText { file, .. }
            | ConfigError::NotRead { file, .. } => file,
        }
    }

    /// Where in the file, when known.
    pub fn at(&self) -> Option<Position> {
        match self {
            ConfigError::BadValue { at, .. }
            | ConfigError::NotADuration { at, .. }
            | ConfigError::Unreadable { at, .. } => *at,
            ConfigError::NotText { at, .. } => Some(*at),
            ConfigError::NotRead { .. } => None,
        }
    }

    /// `file:line:column`, or the file alone when the position is unknown.
    pub fn location(&self) -> String {
        match self.at() {
            Some(at) => format!("{}:{}:{}", self.file().display(), at.line, at.column),
            None => self.file().display().to_string(),
        }
    }

    /// The key the error is about, for the errors that know it.
    pub fn key(&self) -> Option<&str> {
        match self {
            ConfigError::BadValue { key, .. } | ConfigError::NotADuration { key, .. } => Some(key),
            ConfigError::Unreadable { key, .. } => key.as_deref(),
            _ => None,
        }
    }

    /// The same error with its position set, if it had none.
    pub(super) fn located(mut self, position: Option<Position>) -> ConfigError {
        if let ConfigError::BadValue { at, .. }
        | ConfigError::NotADuration { at, .. }
        | ConfigError::Unreadable { at, .. } = &mut self
        {
            if at.is_none() {
                *at = position;
            }
        }
        self
    }
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let location = self.location();
        match self {
            ConfigError::BadValue { key, .. } | ConfigError::NotADuration { key, .. } => {
                write!(f, "{location}: bad value for `{key}`")
            }
            ConfigError::Unreadable {
                key: Some(key),
                why,
                ..
            } => write!(f, "{location}: `{key}`: {why}"),
            ConfigError::Unreadable { why, .. } | ConfigError::NotRead { why, .. } => {
                write!(f, "{location}: {why}")
            }
            ConfigError::NotText { .. } => write!(f, "{location}: not UTF-8 text"),
        }
    }
}

impl std::error::Error for ConfigError {}

/// A `BadValue` without its position yet (the caller locates it in the text).
pub(super) fn bad(file: &Path, key: &str, allowed: &str) -> ConfigError {
    ConfigError::BadValue {
        file: file.to_path_buf(),
        at: None,
        key: key.to_string(),
        expected: allowed.to_string(),
    }
}

/// The file's text, or why it is none: unreadable, or not UTF-8 (positioned at the first bad
/// byte).
pub(super) fn read_text(file: &Path) -> Result<String, ConfigError> {
    let bytes = std::fs::read(file).map_err(|e| ConfigError::NotRead {
        file: file.to_path_buf(),
        why: e.to_string(),
    })?;
    String::from_utf8(bytes).map_err(|e| {
        let good = e.utf8_error().valid_up_to();
        let bytes = e.into_bytes();
        let text = std::str::from_utf8(&bytes[..good]).unwrap_or_default();
        ConfigError::NotText {
            file: file.to_path_buf(),
            at: Position::of(text, good),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_lines_and_characters() {
        let text = "a = 1\nbé = \"x\"\n";
        assert_eq!(Position::of(text, 0), Position { line: 1, column: 1 });
        assert_eq!(Position::of(text, 6), Position { line: 2, column: 1 });
        // `=` after a two-byte character is the fourth character of its line.
        assert_eq!(Position::of(text, 10), Position { line: 2, column: 4 });
        assert_eq!(Position::of(text, 999).line, 3);
    }

    #[test]
    fn binary_garbage_is_located_at_its_first_bad_byte() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("c.toml");
        std::fs::write(&file, b"base = \"main\"\nx = \xff\xfe\n").unwrap();
        let err = read_text(&file).unwrap_err();
        assert_eq!(err.at(), Some(Position { line: 2, column: 5 }));
        assert!(
            err.to_string().ends_with("c.toml:2:5: not UTF-8 text"),
            "{err}"
        );
    }
}
