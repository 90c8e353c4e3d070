//! The words of every [`Announcement`] the domain emits: one line each, behind its kind's prefix.
//!
//! Invariants a reader must not break: each variant renders to exactly one line (given one-line
//! field values), starting with its [`Kind`]'s prefix; the texts are a user-visible interface,
//! pinned by the tests below and by the snapshots of the commands that show them.

#[cfg(test)]
use crate::base::announce::Kind;
use crate::base::announce::{Announcement, Unseen};
use crate::base::clock;
use crate::base::quote::show_path;

/// The message, without the `warning:` prefix a [`Kind::Warning`] is shown behind.
pub fn text(a: &Announcement) -> String {
    use Announcement::*;
    match a {
        PanicFailOpen { name, what } => {
            format!("git-session {name}: internal error ({what}); failing open (nothing refused)")
        }
        PanicNotAudited { name } => {
            format!("git-session {name}: the internal error above is not in the audit log")
        }
        GuardFailOpen { hook, error } => {
            format!("git-session guard {hook}: internal error, letting the commit through: {error}")
        }
        LapsedOwner {
            path,
            owner,
            last_activity,
            now,
        } => format!(
            "{} was claimed by session \"{owner}\", which is no longer live (last activity {}, \
             {}); letting it through",
            show_path(path),
            clock::rfc3339(*last_activity),
            crate::cli::output::ago(*last_activity, *now)
        ),
        UnknownActingSession { label } => format!(
            "GIT_SESSION names \"{}\", which is no session of this repository; its commit \
             claims are not recorded",
            label.escape_debug()
        ),
        ClaimLostRace { path, owner } => format!(
            "{} was claimed by session \"{owner}\" a moment ago; not recorded as yours",
            show_path(path)
        ),
        PostCommitUnguarded { commit, why } => format!(
            "WARNING: git-session: commit {commit} was made without the ownership guard \
             ({}) and changes paths other live sessions own:",
            unseen(why)
        ),
        PostCommitPath {
            path,
            owner,
            how,
            since,
        } => format!(
            "WARNING:   {}: owned by session \"{owner}\" ({how} since {})",
            show_path(path),
            clock::rfc3339(*since)
        ),
        ForeignWorktreeCommit { label, here } => format!(
            "session \"{label}\" commits in {here}, a worktree not its own; let through, as \
             this repository's `[guard] escape` is \"warn\""
        ),
        PostCommitAdvice => {
            "WARNING: tell the owners, or undo it with `git reset --soft HEAD^` and coordinate"
                .to_string()
        }
        UnguardedCommit {
            commit,
            summary,
            label: Some(label),
            ..
        } => format!(
            "commit {commit} ({summary}) of session \"{label}\" was made without the ownership \
             hooks and changes paths other live sessions own:"
        ),
        UnguardedCommit {
            commit,
            summary,
            label: None,
            worktree,
        } => format!(
            "commit {commit} ({summary}), made in {worktree} without the ownership hooks, \
             changes paths live sessions own:"
        ),
        UnguardedPath {
            path,
            owner,
            how,
            since,
        } => format!(
            "  {}: owned by session \"{owner}\" ({how} since {})",
            show_path(path),
            clock::rfc3339(*since)
        ),
        UnguardedCheckFailed { label, error } => format!(
            "could not check the commits made without the hooks in session \"{label}\": {error}"
        ),
        SessionSkipped { name, error } => format!("session \"{name}\" skipped: {error}"),
        GitSessionIgnored { value } => format!(
            "GIT_SESSION is ignored: invalid label \"{}\"",
            crate::base::quote::shortened(value)
        ),
        ClaimsIndexNotUpdated { error } => format!(
            "the claims index was not updated ({error}); it is rebuilt from the store when read"
        ),
        FileSkipped { path, why } => format!("{} skipped: {why}", path.display()),
        NotALockFile { lock, moved_to } => format!(
            "{} was not a lock file; moved to {}",
            lock.display(),
            moved_to.display()
        ),
        SetAside { path, why, aside } => format!(
            "{} does not parse ({why}); set aside as {}",
            path.display(),
            aside.display()
        ),
        CannotSetAside { path, why, error } => format!(
            "{} does not parse ({why}) and cannot be set aside ({error}); skipped",
            path.display()
        ),
        RolledForward { label } => format!(
            "completed the interrupted creation of session \"{label}\": git had made its worktree"
        ),
        RolledBack { label } => {
            format!("rolled back the interrupted creation of session \"{label}\"")
        }
        Readopted { label, path } => format!(
            "registered session \"{label}\" again from its worktree {}: its record was lost",
            path.display()
        ),
        OrphanClaimsDropped { label } => format!(
            "dropped the claims an earlier session \"{label}\" left without its record; \
             the new session starts with none"
        ),
        RolledBackInPart { label, left } => {
            format!("rolled back the interrupted creation of \"{label}\" only in part: {left}")
        }
        MergeUndone { label, base } => format!(
            "rolled back the interrupted merge of session \"{label}\": {base} had not moved"
        ),
        MergeCompleted {
            label,
            base,
            tip,
            worktrees,
        } => {
            let updated: Vec<String> = worktrees.iter().map(|w| w.display().to_string()).collect();
            let updated = if updated.is_empty() {
                String::new()
            } else {
                format!("; updated the worktree {}", updated.join(" and "))
            };
            format!(
                "completed the interrupted merge of session \"{label}\": {base} is at {tip}{updated}"
            )
        }
        MergeLeft {
            label,
            branch,
            worktree,
            from,
            to,
            why,
        } => format!(
            "the interrupted merge of session \"{label}\" moved {branch}, but the worktree {} \
             {why}, so it was left as it is; finish it with: git -C {} read-tree -m -u {from} {to}",
            worktree.display(),
            crate::base::quote::shell_quote(&worktree.display().to_string())
        ),
        MergeOvertaken { label, branch, at } if at.bytes().all(|b| b == b'0') => format!(
            "the interrupted merge of session \"{label}\" is left as it is: {branch} was deleted \
             since"
        ),
        MergeOvertaken { label, branch, at } => format!(
            "the interrupted merge of session \"{label}\" is left as it is: {branch} has moved \
             to {at} since"
        ),
        CheckApprovalAsked => "This repository's .git-session.toml asks to run, on every merge \
                               before the base moves:"
            .to_string(),
        MergeCheckCleared { label, path } => format!(
            "removed the scratch worktree {} of an interrupted merge check of session \"{label}\"",
            path.display()
        ),
        GitLockRemoved { path, age } => format!(
            "removed git's lock {} ({age} old): no git process works in this repository, so a \
             killed one left it",
            path.display()
        ),
        GitLockKept { path, age, why } => format!(
            "git's lock {} ({age} old) is kept: {why}; git commands that need it fail until it \
             goes",
            path.display()
        ),
        Running { command } => format!("running: {command}"),
        CommittedEscape { path, writer } => format!(
            "this commit holds {}, which an agent of session \"{writer}\" wrote from outside \
             its own worktree; make sure it belongs here",
            show_path(path)
        ),
        SetUpFiles {
            reflinked,
            copied,
            copied_bytes,
            linked,
        } => {
            let mut parts = Vec::new();
            if *reflinked > 0 {
                parts.push(format!(
                    "{} cloned copy-on-write (reflink: no disk used until changed)",
                    crate::cli::output::count(*reflinked, "file")
                ));
            }
            if *copied > 0 {
                parts.push(format!(
                    "{} copied in full ({copied_bytes} bytes; the file system offers no reflink)",
                    crate::cli::output::count(*copied, "file")
                ));
            }
            if !linked.is_empty() {
                parts.push(format!(
                    "linked to the main worktree's: {}",
                    linked.join(", ")
                ));
            }
            format!("[create] copy and link: {}", parts.join("; "))
        }
        ApprovalAsked => {
            "This repository's .git-session.toml asks to run, in each new worktree:".to_string()
        }
        ApprovalCommand { command } => format!("  {command}"),
        ApprovalNotSaved { error } => error.clone(),
        PushNotChecked { remote, error } => format!(
            "the claims on {remote} could not be checked before this push ({error}); it goes on"
        ),
        SharedClaimLost {
            label,
            path,
            remote,
            why,
        } => format!(
            "the claim of session \"{label}\" on {} is lost on {remote}: {why}",
            show_path(path)
        ),
        ClaimsNotPublished { error } => format!("claims not published with this push: {error}"),
    }
}

/// The whole line as shown without colour: `warning: <text>` or the note's text.
/// Why the pre-commit never saw a commit, as the post-commit warning says it.
fn unseen(why: &Unseen) -> String {
    match why {
        Unseen::NotInForce {
            why,
            install_repairs: true,
        } => format!(
            "the pre-commit guard is not in force here: {why}; `git session hooks install` puts it \
             back"
        ),
        Unseen::NotInForce {
            why,
            install_repairs: false,
        } => format!(
            "the pre-commit guard is not in force here: {why}; `git session hooks status` says what \
             puts it back"
        ),
        Unseen::Skipped => "its pre-commit hook was skipped: --no-verify".to_string(),
        Unseen::ByCommand { command } => {
            format!("`git {command}` made it, and git runs no pre-commit hook for that")
        }
        Unseen::NoPreCommit => "no pre-commit ran".to_string(),
        Unseen::StagedDuringCheck { paths } => format!(
            "{} staged while its pre-commit hook ran, after the guard had checked the index: {}",
            match paths.len() {
                1 => "1 path was".to_string(),
                n => format!("{n} paths were"),
            },
            paths
                .iter()
                .take(5)
                .map(|p| show_path(p))
                .collect::<Vec<_>>()
                .join(", ")
                + if paths.len() > 5 { ", ..." } else { "" }
        ),
    }
}

#[cfg(test)]
pub fn line(a: &Announcement) -> String {
    match a.kind() {
        Kind::Note => text(a),
        Kind::Warning => format!("warning: {}", text(a)),
    }
}

#[cfg(test)]
#[path = "announcements_tests.rs"]
mod tests;
