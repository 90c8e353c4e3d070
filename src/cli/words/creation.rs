//! The words for a refused or failed creation ([`CreateError`]) and for what the setup after the
//! checkout reports ([`SetupNotice`]).

use crate::base::quote::shell_quote;
use crate::cli::output;
use crate::cli::user_error::UserError;
use crate::lifecycle::create::{CreateError, SetupNotice};
use crate::lifecycle::restore::RestoreError;
use crate::lifecycle::Undone;
use crate::session::Label;
use std::path::Path;

/// A session's `[resources]` that could not be leased (nothing was created).
pub fn lease_words(e: &crate::ownership::leases::LeaseError) -> UserError {
    use crate::ownership::leases::LeaseError;
    let err = UserError::refused(format!("cannot create the session: {e}"));
    match e {
        LeaseError::NoFreePorts { .. } => err.hinted(
            "remove sessions you are done with (git session cleanup), or widen \
             [resources] port_range or lower ports in .git-session.toml",
        ),
        LeaseError::NotShared { .. } => err.hinted(
            "run the create again once the remote answers; clones share port blocks through \
             [claims] remote, so none is handed out unshared",
        ),
    }
}

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

/// The one line `create [LABEL] -- CMD` says before CMD takes over: where the session is, that
/// its label was generated when none came before `--`, and what runs.
pub fn running(label: &Label, generated: bool, path: &Path, program: &str) -> String {
    let how = if generated { " (label generated)" } else { "" };
    format!(
        "session \"{label}\"{how} is at {}; running {}",
        path.display(),
        crate::session::one_line(program)
    )
}

/// `create -- CMD` whose CMD is a bare name no directory of `PATH` holds: refused before
/// anything is made.
pub fn not_on_path(program: &str) -> UserError {
    UserError::refused(format!(
        "cannot run {}: no such command on PATH",
        crate::session::one_line(program)
    ))
    .hinted("nothing was created; a label goes before --: git session create LABEL -- CMD")
}

/// `create -- CMD` whose CMD did not start (exec failed): the session was undone, in full or in
/// part, or could not be.
pub fn not_started(
    label: &Label,
    path: &Path,
    program: &str,
    err: &std::io::Error,
    undone: anyhow::Result<Undone>,
) -> UserError {
    let refused = UserError::refused(format!(
        "cannot run {}: {err}",
        crate::session::one_line(program)
    ));
    match undone {
        Ok(u) if u.left.is_empty() => refused.hinted(format!(
            "session \"{label}\" was rolled back: no worktree, branch or record is left"
        )),
        Ok(u) => refused.hinted(format!("session \"{label}\" was {}", u.describe())),
        Err(e) => refused.hinted(format!(
            "session \"{label}\" stays at {} ({e:#}); remove it with: git session cleanup {label}",
            path.display()
        )),
    }
}

/// A restore refused before anything was made ([`RestoreError`]).
pub fn restore_refused(e: &RestoreError) -> UserError {
    let err = UserError::refused(e.to_string());
    match e {
        RestoreError::NoArchive { others, .. } if others.is_empty() => err.hinted(
            "archives are written by `git session cleanup --force` and `prune`; \
             `git for-each-ref refs/session-archive/` lists them",
        ),
        RestoreError::NoArchive { others, .. } => {
            err.hinted(format!("archives there are of: {}", others.join(", ")))
        }
        RestoreError::NoSuchArchive { label, have, .. } => err.hinted(format!(
            "its archives, oldest first: {}; `git session restore {label}` takes the newest",
            have.join(", ")
        )),
    }
}

/// What a restore gave back, one line (the path follows on stdout).
pub fn restored(label: &Label, archive: &str, base: &str, ahead: usize) -> String {
    let commits = match ahead {
        1 => "1 commit".to_string(),
        n => format!("{n} commits"),
    };
    format!(
        "restored session \"{label}\" from {archive}: {commits} ahead of {base}, its files as \
         they were (the archive stays until prune expires it)"
    )
}

/// The files of the archive could not be laid over the restored worktree.
pub fn restore_files_failed(label: &Label, archive: &str, why: &str) -> String {
    format!(
        "session \"{label}\" is back with its commits, but its uncommitted files are not: {why}; \
         they are in {archive}: git -C <worktree> restore --source={archive} --worktree -- ."
    )
}

/// The one command that gives a session back from the archive `refname` (its stamp named, so the
/// line restores this archive even after later ones).
pub fn restore_with(label: &Label, refname: &str) -> String {
    let stamp = refname.rsplit('/').next().unwrap_or(refname);
    format!(
        "restore with: git session restore {} {}",
        crate::base::quote::shell_quote(label.as_str()),
        crate::base::quote::shell_quote(stamp)
    )
}
