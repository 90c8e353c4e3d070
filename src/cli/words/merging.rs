//! The words for a merge that did not happen ([`MergeRefusal`]) and for one that did
//! ([`Merged`]).

use crate::base::quote::{shell_quote, show_path};
use crate::cli::user_error::UserError;
use crate::cli::words::hazards;
use crate::lifecycle::merge::{Held, MergeRefusal, Merged};
use crate::lifecycle::merge_batch::{Item, NotReady};
use crate::lifecycle::merge_check::Why;

pub fn words(e: &MergeRefusal) -> UserError {
    match e {
        MergeRefusal::Busy { label } => UserError::refused(format!(
            "session \"{label}\" is busy: another git-session command is changing it"
        ))
        .hinted("run the merge again once that one has finished"),
        MergeRefusal::Attached { label } => UserError::refused(format!(
            "session \"{label}\" is attached to a worktree it shares; it has no branch of its own \
             to merge"
        ))
        .hinted("merge that worktree's branch with git itself"),
        MergeRefusal::Damaged {
            label,
            path,
            damage,
        } => UserError::refused(format!(
            "session \"{label}\" is damaged: {}; nothing was merged",
            crate::cli::words::damage::why(damage)
        ))
        .hinted(format!(
            "repair it first: {}",
            crate::cli::words::damage::repair_of(label, path, damage)
        )),
        MergeRefusal::Creating { label } => {
            UserError::refused(format!("session \"{label}\" is still being created"))
                .hinted("wait for `git session create` to finish, then merge")
        }
        MergeRefusal::NoBranch { label, branch } => UserError::refused(format!(
            "session \"{label}\" has no branch {branch} to merge"
        ))
        .hinted(format!(
            "`git session cleanup {label}` removes what is left of it"
        )),
        MergeRefusal::BaseNotLocal {
            label,
            base,
            branch,
        } => UserError::refused(format!(
            "the base of \"{label}\" is {base}, which is not a local branch to merge into"
        ))
        .hinted(format!(
            "merge it where you want it with git (git merge {branch}), then `git session cleanup \
             {label}`"
        )),
        MergeRefusal::HeldWork {
            label,
            held,
            items,
            found,
            worktree,
        } => {
            let mut err = UserError::refused(match held {
                Held::Uncommitted => {
                    format!("session \"{label}\" holds uncommitted work; nothing was merged")
                }
                Held::Other => format!(
                    "session \"{label}\" holds work the merge would not carry; nothing was merged"
                ),
            });
            for h in items {
                for line in hazards::lines(h) {
                    err = err.detail(line);
                }
            }
            err.hinted(match held {
                Held::Uncommitted => format!(
                    "commit it (or stash it) in {}, then merge again",
                    shell_quote(&worktree.display().to_string())
                ),
                Held::Other => hazards::hint(found, worktree),
            })
        }
        MergeRefusal::DirtyBase {
            base,
            worktree,
            operations,
            changed,
        } => {
            let mut err = UserError::refused(if changed.is_empty() {
                format!("the worktree of {base} has an operation in progress; nothing was merged")
            } else {
                format!(
                    "the worktree of {base} has uncommitted changes in files the merge changes; \
                     nothing was merged"
                )
            })
            .detail(format!("in {}:", worktree.display()));
            for op in operations {
                err = err.detail(format!("a {} is in progress", op.as_str()));
            }
            for file in changed.iter().take(10) {
                err = err.detail(show_path(file));
            }
            if changed.len() > 10 {
                err = err.detail(format!("... and {} more", changed.len() - 10));
            }
            let quoted = shell_quote(&worktree.display().to_string());
            err.hinted(if changed.is_empty() {
                format!("finish or abort it there first (git -C {quoted} status), then merge again")
            } else {
                format!(
                    "commit, stash or move them there first (git -C {quoted} stash -u), then \
                     merge again"
                )
            })
        }
        MergeRefusal::NotOnBranch {
            label,
            branch,
            worktree,
        } => UserError::refused(format!(
            "the worktree of \"{label}\" is not on its branch {branch}; nothing was merged"
        ))
        .hinted(format!(
            "check the branch out there (git -C {} switch {branch}), then merge again",
            shell_quote(&worktree.display().to_string()),
        )),
        MergeRefusal::Interrupted { label } => UserError::refused(format!(
            "merging session \"{label}\" was interrupted; rolled back, nothing was changed"
        )),
        MergeRefusal::TimedOut { label, after } => UserError::refused(format!(
            "merging session \"{label}\" did not finish within {}s; rolled back, nothing was \
             changed",
            after.as_secs()
        ))
        .hinted("raise `[merge] timeout` in .git-session.toml if the repository needs longer"),
        MergeRefusal::CheckNotApproved { label, commands } => UserError::refused(format!(
            "the [merge] check commands of .git-session.toml are not approved, so session \
             \"{label}\" was not merged: {}",
            commands
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .hinted(format!(
            "read them, then: git session merge {label} --approve-check (or skip them: \
             --no-check)"
        )),
        MergeRefusal::RegenerateNotApproved {
            label,
            paths,
            commands,
        } => UserError::refused(format!(
            "session \"{label}\" conflicts in generated files ({}) and the [merge] regenerate \
             commands of .git-session.toml that rebuild them are not approved, so it was not \
             merged: {}",
            paths.join(", "),
            commands
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .hinted(format!(
            "read them, then: git session merge {label} --approve-check"
        )),
        MergeRefusal::CheckFailed {
            label,
            base,
            failure,
        } => {
            let why = match &failure.why {
                Why::Exit(code) => format!("exited with {code}"),
                Why::Killed => "was killed by a signal".to_string(),
                Why::TimedOut(d) => format!("did not finish within {}s", d.as_secs()),
                Why::NotStarted(e) => format!("could not start ({e})"),
            };
            let mut err = UserError::refused(format!(
                "the merge check `{}` {why} on session \"{label}\" integrated into {base}; \
                 nothing was merged",
                failure.command
            ));
            for line in &failure.tail {
                err = err.detail(line.clone());
            }
            err.hinted(format!(
                "all of its output: {}; the session is as it was",
                shell_quote(&failure.log.display().to_string())
            ))
        }
        MergeRefusal::LostRace { label, base } => UserError::retry(format!(
            "other merges moved {base} twice while session \"{label}\" was being merged; \
             nothing was merged"
        ))
        .hinted(format!("run `git session merge {label}` again")),
    }
}

/// Why a merged session is kept rather than removed (the processes working inside, each on a
/// line of its own), and the hint that removes it later.
pub fn kept_occupied(label: &str, occupied: &[crate::hazards::Hazard]) -> (Vec<String>, String) {
    let unknown = occupied
        .iter()
        .all(|h| matches!(h, crate::hazards::Hazard::OccupancyUnknown(_)));
    let mut lines = vec![if unknown {
        format!(
            "kept session \"{label}\": whether other processes work inside its worktree cannot be \
             told here, so it was not removed"
        )
    } else {
        format!(
            "kept session \"{label}\": other processes work inside its worktree, so it was not \
             removed"
        )
    }];
    for h in occupied {
        lines.extend(hazards::lines(h).into_iter().map(|l| format!("  {l}")));
    }
    (
        lines,
        if unknown {
            format!("check that nobody works there, then: git session cleanup {label} --force")
        } else {
            format!("`git session cleanup {label}` removes it once they have left")
        },
    )
}

/// The line a merge says before [`merged`] when it did more than integrate, if any.
pub fn checked_and_recomputed(m: &Merged) -> Vec<String> {
    let Merged::Done {
        base,
        checked,
        recomputed,
        ..
    } = m
    else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    if *recomputed {
        lines.push(format!(
            "another merge moved {base} first; integrated again onto it"
        ));
    }
    if !checked.is_empty() {
        lines.push(format!(
            "the merge check passed on the result: {}",
            checked
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    lines
}

/// The one line a merge says about what it did.
pub fn merged(label: &str, m: &Merged) -> String {
    match m {
        Merged::AlreadyIn { base } => {
            format!("{base} holds all of session \"{label}\" already; nothing to merge")
        }
        Merged::Planned(p) => format!(
            "would merge session \"{label}\" into {} ({}): {} would be at {}",
            p.base,
            p.how,
            p.base,
            &p.new_tip.to_string()[..12]
        ),
        Merged::Done {
            base,
            how,
            new_tip,
            base_worktree,
            ..
        } => {
            let short = &new_tip.to_string()[..12];
            let mut line =
                format!("merged session \"{label}\" into {base} ({how}): {base} is at {short}");
            if let Some(wt) = base_worktree {
                line.push_str(&format!("; updated the worktree {}", wt.display()));
            }
            line
        }
    }
}

/// Why a session of `merge --all` was not tried.
pub fn not_ready(e: &NotReady) -> UserError {
    match e {
        NotReady::Attached { label } => UserError::refused(format!(
            "session \"{label}\" is attached to a worktree it shares; it has no branch of its own \
             to merge"
        )),
        NotReady::NothingToMerge { label, base } => UserError::refused(format!(
            "{base} holds all of session \"{label}\" already; nothing to merge"
        )),
        NotReady::Occupied { label, items } => {
            let mut err = UserError::refused(format!(
                "session \"{label}\" is in use: other processes work inside its worktree"
            ));
            for h in items {
                for line in hazards::lines(h) {
                    err = err.detail(line);
                }
            }
            err.hinted(format!(
                "merge it alone once they have left (git session merge {label}), or with --keep"
            ))
        }
    }
}

/// One line per session of a batch: merged (or would be, in a dry run), or skipped and why.
pub fn batch_line(item: &Item) -> String {
    let label = &item.label;
    match &item.outcome {
        Ok(Merged::Done {
            base, how, new_tip, ..
        }) => format!(
            "merged  {label}: {how}; {base} is at {}",
            &new_tip.to_string()[..12]
        ),
        Ok(Merged::Planned(p)) => format!(
            "would merge {label}: {}; {} would be at {}",
            p.how,
            p.base,
            &p.new_tip.to_string()[..12]
        ),
        Ok(Merged::AlreadyIn { base }) => {
            format!("skipped {label}: {base} holds all of it already; nothing to merge")
        }
        Err(e) => format!("skipped {label}: {}", reason(e)),
    }
}

/// A refusal's one line, for a summary.
fn reason(e: &anyhow::Error) -> String {
    match super::user_error(e) {
        Some(words) => words.message,
        None => format!("{e:#}"),
    }
}

/// One session of a batch, as `merge --json` prints it.
pub fn batch_json(item: &Item) -> serde_json::Value {
    use serde_json::json;
    let label = item.label.to_string();
    let value = match &item.outcome {
        Ok(Merged::Done {
            base,
            how,
            new_tip,
            checked,
            recomputed,
            ..
        }) => json!({"label": label, "outcome": "merged", "base": base, "how": how,
                     "tip": new_tip.to_string(), "checked": checked, "recomputed": recomputed}),
        Ok(Merged::Planned(p)) => json!({"label": label, "outcome": "would-merge",
                     "base": p.base, "how": p.how, "tip": p.new_tip.to_string(),
                     "checked": p.checked}),
        Ok(Merged::AlreadyIn { base }) => json!({"label": label, "outcome": "skipped",
                     "base": base, "why": "nothing to merge"}),
        Err(e) => json!({"label": label, "outcome": "skipped", "why": reason(e)}),
    };
    crate::cli::output::versioned(value)
}

/// `collisions` in `list --json` and `info --json`: whether merging into base now would
/// conflict, and which other sessions changed the same paths.
pub fn collisions_json(c: &crate::lifecycle::collisions::Collisions) -> serde_json::Value {
    serde_json::json!({
        "conflicts": c.conflicts,
        "overlaps": c.overlaps.iter().map(|(label, paths)| {
            serde_json::json!({"label": label, "paths": paths})
        }).collect::<Vec<_>>(),
    })
}

/// `paths` after `head`, as many as fit in `width` (at most three), the rest counted; where not
/// even one fits, `short` (which names how many and where to see them).
fn with_paths(head: &str, paths: &[String], width: Option<usize>, short: String) -> String {
    let line = |n: usize| {
        let rest = paths.len() - n;
        let more = if rest > 0 {
            format!(" and {rest} more")
        } else {
            String::new()
        };
        format!("{head}{}{more}", paths[..n].join(", "))
    };
    (1..=paths.len().min(3))
        .rev()
        .map(line)
        .find(|l| width.is_none_or(|w| l.chars().count() <= w))
        .unwrap_or(short)
}

/// The lines under `list`'s table: each session that would conflict with its base now (in
/// which paths), then each pair of sessions that changed the same paths, once, in the table's
/// order. `rows` are the table's sessions: label, base and collisions.
pub fn collision_lines(
    rows: &[(&str, &str, &crate::lifecycle::collisions::Collisions)],
    width: Option<usize>,
) -> Vec<String> {
    let mut lines = Vec::new();
    for (label, base, c) in rows {
        if let Some(paths) = c.conflicts.as_ref().filter(|p| !p.is_empty()) {
            let head = format!("{label} would conflict with {base} in ");
            let short = format!(
                "{label} would conflict with {base} in {} (git session info {label})",
                crate::cli::output::count(paths.len(), "file")
            );
            lines.push(with_paths(&head, paths, width, short));
        }
    }
    for (at, (label, _, c)) in rows.iter().enumerate() {
        for (other, paths) in &c.overlaps {
            // Each pair once: at the first of the two in the table.
            let later = rows[at + 1..].iter().any(|(l, _, _)| l == other);
            if later && !paths.is_empty() {
                let head = format!("{label} and {other} both changed ");
                let short = format!(
                    "{label} and {other} both changed {} (git session info {label})",
                    crate::cli::output::count(paths.len(), "file")
                );
                lines.push(with_paths(&head, paths, width, short));
            }
        }
    }
    lines
}

/// `info`'s lines about its collisions: the paths merging into `base` now would conflict in,
/// and each other session that changed the same paths (nothing where there is neither).
pub fn collision_info(base: &str, c: &crate::lifecycle::collisions::Collisions) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(paths) = c.conflicts.as_ref().filter(|p| !p.is_empty()) {
        lines.push(format!(
            "conflicts {} (merging into {base} now)",
            paths.join(", ")
        ));
    }
    for (other, paths) in &c.overlaps {
        lines.push(format!(
            "overlaps  {other} changed {} too",
            paths.join(", ")
        ));
    }
    lines
}
