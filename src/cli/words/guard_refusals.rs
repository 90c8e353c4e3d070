//! The words of the guard's refusals ([`Refusal`]): the commit or push refused, each path with
//! its owner, and what to do.
//!
//! Invariant: a refusal names every owner once, shows at most 20 paths, and its hint says how to
//! commit as the owner; a session of another clone is always shown the same way ([`holder`]).

use crate::base::clock::{self, Time};
use crate::base::quote::show_path;
use crate::cli::output::ago;
use crate::cli::user_error::UserError;
use crate::guard::Refusal;
use crate::ownership::{self, Owner};
use crate::shared_claims::{PushConflict, SharedClaim};

pub fn words(r: &Refusal) -> UserError {
    match r {
        Refusal::Owned { conflicts, me, now } => owned(conflicts, me.as_deref(), *now),
        Refusal::ForeignWorktree {
            label,
            own,
            here,
            main,
        } => foreign_worktree(label, own, here, *main),
        Refusal::MergeUnfinished { label, worktree } => UserError::refused(format!(
            "commit refused: the merge of session \"{label}\" moved the branch checked out in {} \
             and has not brought this worktree up to it yet; a commit now would undo the merge",
            worktree.display()
        ))
        .hinted(
            "run any git-session command here (`git session list`) to finish the merge, then \
             commit; or bypass once, audited, with GIT_SESSION_GUARD=off",
        ),
        Refusal::HeldElsewhere { held, remote } => held_elsewhere(held, remote),
        Refusal::PushHeld { conflicts, remote } => push_held(conflicts, remote),
    }
}

/// A session's commit in a worktree not its own.
fn foreign_worktree(
    label: &str,
    own: &std::path::Path,
    here: &std::path::Path,
    main: bool,
) -> UserError {
    let place = if main {
        "the main worktree"
    } else {
        "another session's worktree"
    };
    UserError::refused(format!(
        "commit refused: session \"{label}\" (GIT_SESSION) commits in {place}, {}; its own \
         worktree is {}",
        here.display(),
        own.display()
    ))
    .detail(
        "a session commits in its own worktree: the commits of another worktree land on the \
         branch of whoever works there",
    )
    .hinted(format!(
        "commit from {} instead; or, if this commit is not session \"{label}\"'s, unset \
         GIT_SESSION; or bypass once, audited, with GIT_SESSION_GUARD=off",
        own.display()
    ))
}

/// A session of another clone, as every message about shared claims shows it.
pub fn holder(label: &str, host: &str, clone: &str) -> String {
    format!("session \"{label}\" on {host} (clone {clone})")
}

fn owned(conflicts: &[(String, Owner)], me: Option<&str>, now: Time) -> UserError {
    let message = if conflicts.len() == 1 {
        format!(
            "commit refused: {} is owned by another live session",
            show_path(&conflicts[0].0)
        )
    } else {
        format!(
            "commit refused: {} staged paths are owned by other live sessions",
            conflicts.len()
        )
    };
    let mut err = UserError::refused(message);
    let mut owners: Vec<&Owner> = Vec::new();
    const SHOWN: usize = 20;
    for (i, (path, owner)) in conflicts.iter().enumerate() {
        if !owners.iter().any(|o| o.label == owner.label) {
            owners.push(owner);
        }
        if i == SHOWN {
            err = err.detail(format!("... and {} more", conflicts.len() - SHOWN));
        }
        if i >= SHOWN {
            continue;
        }
        let via = if owner.path == *path {
            String::new()
        } else {
            format!(" (through its claim on {})", show_path(&owner.path))
        };
        let branch = if owner.branch.is_empty() {
            "detached HEAD".to_string()
        } else {
            format!("branch {}", owner.branch)
        };
        err = err.detail(format!(
            "{}: owned by session \"{}\" ({branch}){via}, {} since {}, last activity \
             {} ({})",
            show_path(path),
            owner.label,
            ownership::how_phrase(owner.how),
            clock::rfc3339(owner.since),
            clock::rfc3339(owner.last_activity),
            ago(owner.last_activity, now),
        ));
    }
    let who = match me {
        Some(label) => format!("you are committing as session \"{label}\""),
        None => "no session is acting here (GIT_SESSION is unset)".to_string(),
    };
    err = err.detail(format!("{who}; to proceed:"));
    for owner in &owners {
        let paths: Vec<String> = conflicts
            .iter()
            .filter(|(_, o)| o.label == owner.label)
            .map(|(_, o)| show_path(&o.path))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .take(SHOWN)
            .collect();
        err = err.detail(format!(
            "- coordinate with session \"{}\", or ask it to run `git session release {}`",
            owner.label,
            paths.join(" ")
        ));
    }
    if me.is_none() {
        // A person, not a session: the deliberate bypass is theirs to choose, and it is audited.
        err = err.detail(
            "- or, deliberately (recorded in the audit log): GIT_SESSION_GUARD=off git commit ...",
        );
    }
    let labels: Vec<&str> = owners.iter().map(|o| o.label.as_str()).collect();
    err.hinted(format!(
        "if you are session \"{}\", commit as it: GIT_SESSION={} git commit ...",
        labels.join("\" or \""),
        labels[0]
    ))
}

/// The refusal for staged paths that claims of other clones hold (as last synced).
fn held_elsewhere(held: &[(String, SharedClaim)], remote: &str) -> UserError {
    let mut err = UserError::refused(if held.len() == 1 {
        format!(
            "commit refused: {} is claimed by session \"{}\" on {} (shared through {remote})",
            show_path(&held[0].0),
            held[0].1.label,
            held[0].1.host
        )
    } else {
        format!(
            "commit refused: {} staged paths are claimed by sessions on other machines (shared through {remote})",
            held.len()
        )
    });
    for (path, c) in held.iter().take(20) {
        err = err.detail(format!(
            "{}: {}, since {}, until {}",
            show_path(path),
            holder(&c.label, &c.host, &c.clone),
            clock::rfc3339(c.since),
            clock::rfc3339(c.expires)
        ));
    }
    err.hinted(format!(
        "coordinate with session \"{}\"; `git session sync` brings the latest claims",
        held[0].1.label
    ))
}

fn push_held(conflicts: &[PushConflict], remote: &str) -> UserError {
    let first = &conflicts[0];
    let mut err = UserError::refused(format!(
        "push refused: commit {} changes {}, which session \"{}\" on {} holds (shared through {})",
        &first.commit.to_string()[..12],
        show_path(&first.path),
        first.holder.label,
        first.holder.host,
        remote
    ));
    for c in conflicts.iter().take(20) {
        err = err.detail(format!(
            "{} in commit {}: {}, until {}",
            show_path(&c.path),
            &c.commit.to_string()[..12],
            holder(&c.holder.label, &c.holder.host, &c.holder.clone),
            clock::rfc3339(c.holder.expires)
        ));
    }
    err.hinted(format!(
        "coordinate with session \"{}\"; its claim lapses at its expiry unless renewed",
        first.holder.label
    ))
}

/// Install found a moved-aside hook beside the hook it would move aside again.
pub fn both_exist(e: &crate::hooks::wire::BothExist) -> UserError {
    UserError::refused(format!(
        "{} and {} both exist; not overwriting either",
        e.hook.display(),
        e.aside.display()
    ))
    .hinted("merge them by hand, or remove the one you no longer need")
}

/// The one-line answer for a shared-claims failure.
pub fn shared(e: &crate::shared_claims::SharedError) -> UserError {
    match e {
        crate::shared_claims::SharedError::Remote { remote, why } => UserError::refused(format!(
            "the claims could not be shared through remote {remote}: {why}"
        ))
        .hinted("nothing was recorded as shared; try again when the remote answers"),
        crate::shared_claims::SharedError::Held(holders) => {
            let first = &holders[0];
            let mut err = UserError::refused(if holders.len() == 1 {
                format!(
                    "{} is held by session \"{}\" on {}",
                    show_path(&first.path),
                    first.label,
                    first.host
                )
            } else {
                format!("{} paths are held by other sessions", holders.len())
            });
            for h in holders {
                err = err.detail(format!(
                    "{}: {}, since {}, until {}",
                    show_path(&h.path),
                    holder(&h.label, &h.host, &h.clone),
                    clock::rfc3339(h.since),
                    clock::rfc3339(h.expires)
                ));
            }
            err.hinted(format!(
                "coordinate with session \"{}\"; its claim lapses at its expiry unless renewed",
                first.label
            ))
        }
    }
}

/// The warnings of a worktree holding uncommitted changes that agents of other sessions wrote
/// from outside their own worktrees (`[guard] escape = "warn"` let them through): one line per
/// writing session, its files named (the first three).
pub fn escaped_into(writes: &[&crate::ownership::escapes::Write]) -> Vec<String> {
    let mut by_writer: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for w in writes {
        by_writer.entry(&w.writer).or_default().push(&w.path);
    }
    by_writer
        .into_iter()
        .map(|(writer, paths)| {
            let shown: Vec<String> = paths.iter().take(3).map(|p| show_path(p)).collect();
            let more = match paths.len() {
                n if n > 3 => format!(" and {} more", n - 3),
                _ => String::new(),
            };
            format!(
                "an agent of session \"{writer}\" wrote {}{more} here from outside its own \
                 worktree, not committed; review it before a commit takes it (git diff)",
                shown.join(", ")
            )
        })
        .collect()
}

/// The warning of the session whose agent wrote `w` outside its own worktree, still there.
pub fn escaped_from(w: &crate::ownership::escapes::Write) -> String {
    format!(
        "its agent wrote {} outside its own worktree, not committed there",
        show_path(&w.root.join(&w.path).to_string_lossy())
    )
}
