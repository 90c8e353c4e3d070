//! The words for a path argument or a handoff note the domain refused ([`PathError`],
//! [`EmptyNote`]): the domain's one-line message, with the hint that says what to do.

use crate::cli::user_error::UserError;
use crate::handoff::EmptyNote;
use crate::ownership::path::PathError;

pub fn words(e: &PathError) -> UserError {
    let hint = match e {
        PathError::NeedsWorktree => "run it inside a worktree of the repository",
        PathError::Outside { .. } => {
            "name paths inside the repository, relative to the current directory"
        }
        PathError::NotUtf8 { .. } => return UserError::refused(e.to_string()),
        PathError::TooLong { .. } | PathError::NoFile { .. } => {
            "name a file or directory inside the worktree"
        }
    };
    UserError::refused(e.to_string()).hinted(hint)
}

pub fn empty_note(e: &EmptyNote) -> UserError {
    UserError::refused(e.to_string()).hinted(
        "fill in the template from `git session handoff template`, then run \
         `git session handoff write FILE` (or pipe the note to `git session handoff write -`)",
    )
}
