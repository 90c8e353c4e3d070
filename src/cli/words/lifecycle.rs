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
        LifecycleError::RemovalUnfinished {
            label,
            left,
            left_count,
            inside,
            ..
        } => {
            let mut err = err;
            if !left.is_empty() {
                let more = left_count.saturating_sub(left.len());
                let more = if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                };
                err = err.detail(format!("left: {}{more}", left.join(", ")));
            }
            for (pid, command) in inside {
                err = err.detail(format!("still working inside: pid {pid} ({command})"));
            }
            err.hinted(format!(
                "stop what writes there, then `git session cleanup {label}` finishes the removal"
            ))
        }
        LifecycleError::Unregistered {
            label,
            path,
            repairable,
            ..
        } => {
            let path = crate::base::quote::shell_quote(&path.display().to_string());
            if *repairable {
                err.hinted(format!(
                    "if it was moved, `git worktree repair {path}` registers it again; \
                     `git session cleanup --force {label}` archives what is there and removes it"
                ))
            } else {
                err.hinted(format!(
                    "look at what is left in {path}; `git session cleanup --force {label}` \
                     archives it and removes it (the branch is kept unless merged)"
                ))
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

/// An attached session's removal: only its registration goes; the worktree and branch it was
/// attached to were never its own and stay (`would`: the `--dry-run` line).
pub fn unregistered(record: &crate::session::SessionRecord, would: bool) -> String {
    let verb = if would {
        "would unregister"
    } else {
        "unregistered"
    };
    let branch = if record.branch.is_empty() {
        String::new()
    } else {
        format!(" and branch {}", record.branch)
    };
    format!(
        "{verb} session \"{}\" (attached): its worktree {}{branch} stay as they are",
        record.label,
        record.path.display()
    )
}
