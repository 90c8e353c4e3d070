//! The words for the repository and the clock's refusals ([`RepoError`], [`BadTimeout`]).

use crate::base::clock::{self, BadTimeout};
use crate::cli::user_error::UserError;
use crate::git::RepoError;

pub fn words(e: &RepoError) -> UserError {
    match e {
        RepoError::NotOwned { path } => UserError::refused(format!(
            "the repository at {path} is owned by another user"
        ))
        .hinted(format!(
            "if you trust it, mark it safe as git says: git config --global --add \
                     safe.directory {path}"
        )),
        RepoError::NotARepository => UserError::refused("not inside a git repository")
            .hinted("run git session from a repository or one of its worktrees"),
        RepoError::NoMainBranch => {
            UserError::refused("cannot tell which branch is the main branch")
                .hinted("name it with --base REV or set `base` in .git-session.toml")
        }
    }
}

pub fn timeout(e: &BadTimeout) -> UserError {
    UserError::usage(format!("invalid --timeout \"{}\"", e.given.escape_debug()))
        .hinted(clock::duration_hint(&e.given))
}
