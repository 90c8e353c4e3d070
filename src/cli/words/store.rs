//! The words for the store's refusals ([`StoreError`], [`WriteFailed`]).

use crate::cli::user_error::UserError;
use crate::store::{StoreError, WriteFailed};

pub fn words(e: &StoreError) -> UserError {
    match e {
        StoreError::NotAPlainName { rel } => UserError::usage(format!(
            "refusing the state path \"{}\": it is not a plain name inside the store",
            rel.escape_debug()
        ))
        .hinted("labels are 1 to 64 characters of A-Z a-z 0-9 . _ -, not starting with - or ."),
        StoreError::Unreadable { path, error } => UserError::refused(format!(
            "cannot read the session store at {}: {error}",
            path.display()
        ))
        .hinted("check the directory's permissions; nothing was changed"),
    }
}

/// A failed write, with the hint its errno calls for.
pub fn write_failed(e: &WriteFailed) -> UserError {
    let hint = match e.error.raw_os_error() {
        Some(nix::libc::ENOSPC) | Some(nix::libc::EDQUOT) => {
            "the disk is full: free some space and run the command again"
        }
        Some(nix::libc::EROFS) => "the file system is read-only",
        Some(nix::libc::EACCES) | Some(nix::libc::EPERM) => {
            "check the permissions of the repository's .git/git-session directory"
        }
        Some(nix::libc::EISDIR) => "a directory stands where the file should be: move it away",
        _ => "the previous state is unchanged; run the command again once the cause is fixed",
    };
    UserError::refused(e.to_string()).hinted(hint)
}
