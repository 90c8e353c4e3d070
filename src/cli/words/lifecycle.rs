//! The words for a refused removal or merge of a session ([`LifecycleError`]).

use crate::cli::user_error::UserError;
use crate::lifecycle::LifecycleError;

pub fn words(e: &LifecycleError) -> UserError {
    let err = UserError::refused(e.to_string());
    match e {
        LifecycleError::OutsideWorktrees { .. } => {
            err.hinted("remove that worktree by hand with `git worktree remove`, then rerun")
        }
        LifecycleError::RemoveRefused { submodules, .. } => {
            if *submodules {
                err.hinted(
                    "git removes a worktree with submodules only when forced: \
                     `git session cleanup --force` archives everything first",
                )
            } else {
                err.hinted("nothing was removed; see git's reason above")
            }
        }
        LifecycleError::Conflict { base, paths, .. } => paths
            .iter()
            .fold(err, |err, p| err.detail(crate::base::quote::show_path(p)))
            .hinted(format!(
                "resolve it in the session's worktree (git rebase {base} or git merge {base}, \
                 then commit), and run the merge again"
            )),
        LifecycleError::MergeNotRolledBack { left, .. } => left
            .iter()
            .fold(err, |err, line| err.detail(line.clone()))
            .hinted("put the refs named above back with `git update-ref`, then `git session info`"),
    }
}
