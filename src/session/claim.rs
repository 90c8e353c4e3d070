//! What a claim is: a path, how it was made, and since when. The value type lives with the
//! session (whose old records embed claims); who may claim what, and where claims are kept, is
//! [`crate::ownership`]'s.

use crate::base::clock::Time;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClaimHow {
    /// `git session claim`.
    Explicit,
    /// Staged in a commit the session made (recorded by its pre-commit).
    Commit,
    /// Written by the session's agent (recorded by the context hook).
    Edit,
}

impl ClaimHow {
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimHow::Explicit => "explicit",
            ClaimHow::Commit => "commit",
            ClaimHow::Edit => "edit",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    /// Repository-relative, `/`-separated.
    pub path: String,
    pub how: ClaimHow,
    pub since: Time,
}
