//! What a hazard ([`crate::hazards`]) says to people: the lines of a refusal, the one-line
//! summary `prune` prints, and the remedy for each reason (every hint speaks to the reasons it
//! follows, and no others). The domain finds the hazards; only these words name them.

use crate::cli::output::count;
use crate::git::Oid;
use crate::hazards::{Hazard, Hazards, LIST_LIMIT};
use std::path::Path;

/// [`Hazard::DirtyUnknown`], in a refusal and in a summary alike.
const DIRTY_UNKNOWN: &str =
    "cannot inspect the worktree's uncommitted files (see `git session info`)";

/// Every line of every hazard, in the order found: what a refusal lists.
pub fn all_lines(hazards: &Hazards) -> Vec<String> {
    hazards.items.iter().flat_map(lines).collect()
}

/// The lines a refusal shows: a summary, then indented detail.
pub fn lines(hazard: &Hazard) -> Vec<String> {
    let mut out = Vec::new();
    match hazard {
        Hazard::Unmerged {
            branch,
            base,
            total,
            commits,
            ..
        } => {
            out.push(format!(
                "branch {branch} has {} not in {base}:",
                count(*total, "commit")
            ));
            push_commits(&mut out, commits, *total);
        }
        Hazard::Head { head, commits } => {
            let n = count(commits.len(), "commit");
            out.push(match head {
                Some(h) => format!(
                    "HEAD is detached at {} with {n} that no branch, tag or base holds:",
                    &h.to_string()[..10]
                ),
                None => format!(
                    "the worktree's HEAD reflog holds {n} that no branch, tag or base \
                     holds (made on a detached HEAD, then left):"
                ),
            });
            push_commits(&mut out, commits, commits.len());
        }
        Hazard::Operation(op) => out.push(format!(
            "a {} is in progress (finish or abandon it: {})",
            op.as_str(),
            op.way_out()
        )),
        Hazard::Dirty(files) => {
            out.push(format!(
                "worktree has {} uncommitted or untracked file{}:",
                files.len(),
                if files.len() == 1 { "" } else { "s" }
            ));
            push_list(&mut out, files);
        }
        Hazard::Submodule(s) => {
            if !s.commits.is_empty() {
                out.push(format!(
                    "submodule {} has {} on no remote-tracking ref, tag or recorded commit:",
                    s.path,
                    count(s.commits.len(), "commit")
                ));
                push_commits(&mut out, &s.commits, s.commits.len());
            }
            if !s.dirty.is_empty() {
                out.push(format!(
                    "submodule {} has {} uncommitted or untracked file{}:",
                    s.path,
                    s.dirty.len(),
                    if s.dirty.len() == 1 { "" } else { "s" }
                ));
                push_list(&mut out, &s.dirty);
            }
        }
        Hazard::BrokenLink(what) => out.push(format!(
            "the worktree's .git link is broken ({what}); repair it with `git worktree repair`"
        )),
        Hazard::Uninspectable(what) => out.push(format!("cannot inspect {what}")),
        Hazard::DirtyUnknown => out.push(DIRTY_UNKNOWN.to_string()),
        Hazard::Occupied(list) => {
            out.push(format!(
                "{} working inside the worktree:",
                if list.len() == 1 {
                    "1 process is".to_string()
                } else {
                    format!("{} processes are", list.len())
                }
            ));
            for o in list {
                out.push(format!("    pid {}: {}", o.pid, o.command));
            }
        }
        Hazard::OccupancyUnknown(why) => out.push(format!(
            "cannot tell whether another process works inside the worktree: {why}"
        )),
    }
    out
}

/// What keeps this work without `--force`: a command or step for this hazard alone, with the
/// worktree's path (shell-quoted) where the step runs there. `None` for what `--force` cannot
/// pass either (the refusal then says how to repair).
pub fn remedy(hazard: &Hazard, worktree: &str) -> Option<String> {
    Some(match hazard {
        Hazard::Unmerged { label, base, .. } => {
            format!("merge it into {base} (git session merge {label}) or rebase it there")
        }
        Hazard::Head {
            head: Some(h),
            commits,
        } if !commits.is_empty() => format!(
            "put the detached commits on a branch (git -C {worktree} switch -c NAME {})",
            &h.to_string()[..10]
        ),
        Hazard::Head { commits, .. } => format!(
            "keep the listed commits on a branch (git branch NAME {})",
            commits
                .first()
                .map(|(id, _)| id.to_string()[..10].to_string())
                .unwrap_or_else(|| "COMMIT".to_string())
        ),
        Hazard::Operation(op) => {
            format!("finish or abandon the {} ({})", op.as_str(), op.way_out())
        }
        Hazard::Dirty(_) => format!(
            "commit the files (git -C {worktree} add -A && git -C {worktree} commit) or \
             remove them"
        ),
        Hazard::Submodule(s) if !s.commits.is_empty() => format!(
            "push submodule {}'s commits (git -C {worktree}/{} push)",
            s.path, s.path
        ),
        Hazard::Submodule(s) => format!(
            "commit or remove the files in submodule {} (git -C {worktree}/{} status)",
            s.path, s.path
        ),
        Hazard::Occupied(_) => "stop those processes or move them out of the worktree".to_string(),
        Hazard::OccupancyUnknown(_) => {
            "make sure no shell, editor or agent works inside the worktree".to_string()
        }
        Hazard::BrokenLink(_) | Hazard::Uninspectable(_) | Hazard::DirtyUnknown => return None,
    })
}

/// A short phrase for one-line reports (`prune`'s "kept X: ...").
pub fn summary(hazard: &Hazard) -> String {
    match hazard {
        Hazard::Unmerged { total, base, .. } => {
            format!("{} not in {base}", count(*total, "commit"))
        }
        Hazard::Head { commits, .. } => format!(
            "its HEAD or HEAD reflog holds {} that no ref holds",
            count(commits.len(), "commit")
        ),
        Hazard::Operation(op) => format!("{} in progress", op.as_str()),
        Hazard::Dirty(files) => format!("{} uncommitted or untracked", count(files.len(), "file")),
        Hazard::Submodule(s) => format!("submodule {} holds unpushed work", s.path),
        Hazard::BrokenLink(_) => "its .git link is broken".to_string(),
        Hazard::Uninspectable(what) => format!("cannot inspect {what}"),
        Hazard::DirtyUnknown => DIRTY_UNKNOWN.to_string(),
        Hazard::Occupied(list) => match list.first() {
            Some(o) => format!("process {} ({}) works inside it", o.pid, o.command),
            None => "processes work inside it".to_string(),
        },
        Hazard::OccupancyUnknown(why) => {
            format!("cannot tell whether a process works inside it ({why})")
        }
    }
}

/// One hint for a refusal: each hazard's own remedy, once, in the order found, then what
/// `--force` does instead.
pub fn hint(hazards: &Hazards, worktree: &Path) -> String {
    let path = crate::base::quote::shell_quote(&worktree.display().to_string());
    let mut steps: Vec<String> = Vec::new();
    for step in hazards.items.iter().filter_map(|h| remedy(h, &path)) {
        if !steps.contains(&step) {
            steps.push(step);
        }
    }
    steps.push(
        "or pass --force to archive everything under refs/session-archive/ and remove it"
            .to_string(),
    );
    steps.join("; ")
}

fn push_commits(out: &mut Vec<String>, commits: &[(Oid, String)], total: usize) {
    for (id, summary) in commits.iter().take(LIST_LIMIT) {
        out.push(format!("    {} {summary}", &id.to_string()[..10]));
    }
    let shown = commits.len().min(LIST_LIMIT);
    if total > shown {
        out.push(format!("    ... and {} more", total - shown));
    }
}

fn push_list(out: &mut Vec<String>, items: &[String]) {
    for f in items.iter().take(LIST_LIMIT) {
        out.push(format!("    {f}"));
    }
    if items.len() > LIST_LIMIT {
        out.push(format!("    ... and {} more", items.len() - LIST_LIMIT));
    }
}
