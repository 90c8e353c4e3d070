//! The words for a refused or failed creation ([`CreateError`]) and for what the setup after the
//! checkout reports ([`SetupNotice`]).

use crate::base::quote::shell_quote;
use crate::cli::output;
use crate::cli::user_error::UserError;
use crate::lifecycle::create::{CreateError, SetupNotice};

pub fn words(e: &CreateError) -> UserError {
    let err = UserError::refused(e.to_string());
    match e {
        CreateError::NoCommits => err.hinted(
            "make the first commit (git commit --allow-empty -m \"Initial commit\"), then create \
             the session",
        ),
        CreateError::BaseNotACommit { .. } => {
            err.hinted("pass an existing branch, tag or commit with --base REV")
        }
        CreateError::Exists { path, .. } => err.hinted(format!(
            "enter it with: cd {}   (or choose another label)",
            shell_quote(&path.display().to_string())
        )),
        CreateError::CaseTwin { existing, .. } => err.hinted(format!(
            "on a case-insensitive file system (macOS's, Windows') the two would share one \
             worktree directory and one branch file: choose another label, or use \
             \"{existing}\" (git session switch {existing})"
        )),
        CreateError::PathNotEmpty { .. } => {
            err.hinted("choose another label or --path, or remove that directory first")
        }
        CreateError::AdminBlocker { .. } => err
            .hinted("move it out of the way (git would wait on a FIFO there forever), then retry"),
        CreateError::BranchExists { branch } => err.hinted(format!(
            "choose another label, or `git session create --attach` in a worktree of {branch}"
        )),
        CreateError::BranchCaseTwin { existing, .. } => err.hinted(format!(
            "on a case-insensitive file system (macOS's, Windows') the two would be one branch \
             file: choose another label, or `git session create --attach` in a worktree of \
             {existing}"
        )),
        CreateError::BranchInTheWay { .. } => {
            err.hinted("choose another label (a branch cannot also be a folder of branches)")
        }
        CreateError::Busy { .. } => err.hinted("run the create again once it is done"),
        CreateError::RecordExists { .. } => {
            err.hinted("choose another label; `git session list` shows the sessions")
        }
        CreateError::NoWorktreeToAttach => {
            err.hinted("run it inside the worktree the session works in")
        }
        CreateError::TimedOut { .. } => err.hinted(
            "a slow post-checkout hook is the usual cause; raise the deadline with --timeout or \
             create_timeout",
        ),
        CreateError::Interrupted { .. } => err.hinted("run the same command again to retry"),
        CreateError::Failed {
            status,
            stderr,
            left_nothing,
            hook,
            ..
        } => {
            let mut err = err;
            for line in stderr
                .lines()
                .map(str::trim_end)
                .filter(|l| !l.trim().is_empty())
            {
                // Control characters escaped so a hook cannot redraw the terminal or split lines.
                err = err.detail(format!("git: {}", crate::session::one_line(line)));
            }
            match (hook, status) {
                (Some(hook), Some(code)) if *code != 128 => err.hinted(format!(
                    "the post-checkout hook {} failed with exit status {code}; fix it or run the \
                     create again",
                    hook.display()
                )),
                _ if *left_nothing => {
                    err.hinted("see git's message above; nothing this create made was left behind")
                }
                _ => {
                    err.hinted("see git's message above; remove what is named as left, then retry")
                }
            }
        }
    }
}

/// Says what the setup after the checkout reports, as it comes (a warning, and for an unapproved
/// list the way to run it).
pub fn say_setup(notice: &SetupNotice) {
    match notice {
        SetupNotice::CopyFailed(line) => output::warn(line.clone()),
        SetupNotice::HooksDirNotCopied { path, error } => output::warn(format!(
            "the hooks directory could not be copied into {}: {error}",
            path.display()
        )),
        SetupNotice::NotApproved { label, commands } => {
            output::warn(crate::lifecycle::worktree_setup::not_approved_message(
                commands,
            ));
            output::hint(format!(
                "read them, then run them in this session with: git session setup {label} \
                 --approve-run"
            ));
        }
        SetupNotice::CommandFailed(line) => output::warn(format!("setup command {line}")),
    }
}
