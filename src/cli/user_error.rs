//! What the user sees when a command fails.
//!
//! Every refusal a user can see is a [`UserError`]: a one-line message, an optional hint, and a
//! [`Kind`] that picks the exit code. Domain errors are typed; [`super::words`] turns each into a
//! [`UserError`]. Anything else that bubbles up as an [`anyhow::Error`] is an internal failure and
//! exits 1 with its context chain on one line ([`super::report`] prints both).
//!
//! Invariant: messages are one line (no trailing period, no newline); detail that needs more room
//! (a list of offending commits, files, processes) goes in `details`, printed before the hint.

use std::fmt;

/// What kind of failure this is; decides the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The command was understood but refused or failed (exit 1).
    Refused,
    /// The command line itself is wrong (exit 2).
    Usage,
    /// Others changed what the command works on while it ran; running it again may succeed
    /// (exit 75, `EX_TEMPFAIL`).
    Retry,
}

#[derive(Debug, Clone)]
pub struct UserError {
    pub kind: Kind,
    pub message: String,
    pub details: Vec<String>,
    pub hint: Option<String>,
}

impl UserError {
    pub fn refused(message: impl Into<String>) -> Self {
        UserError {
            kind: Kind::Refused,
            message: message.into(),
            details: Vec::new(),
            hint: None,
        }
    }

    pub fn usage(message: impl Into<String>) -> Self {
        UserError {
            kind: Kind::Usage,
            ..UserError::refused(message)
        }
    }

    pub fn retry(message: impl Into<String>) -> Self {
        UserError {
            kind: Kind::Retry,
            ..UserError::refused(message)
        }
    }

    pub fn hinted(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub fn detail(mut self, line: impl Into<String>) -> Self {
        self.details.push(line.into());
        self
    }

    pub fn exit_code(&self) -> i32 {
        match self.kind {
            Kind::Refused => 1,
            Kind::Usage => 2,
            Kind::Retry => 75,
        }
    }
}

impl fmt::Display for UserError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for UserError {}
