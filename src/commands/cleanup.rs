//! `git session cleanup`: remove sessions whose work is safe elsewhere.
//!
//! Refuses, naming each offending commit, file or process, while the branch has commits not in
//! base, the worktree has uncommitted or untracked files, or another process works inside it.
//! `--force` overrides those, but only after [`lifecycle::archive`] has written an archive ref.
//! A locked worktree is never removed, not even with `--force`.

use crate::clock;
use crate::config::Config;
use crate::error::{self, UserError};
use crate::git::{Merged, Repo};
use crate::lifecycle;
use crate::output;
use crate::process;
use crate::session::{self, Layout, State, Status};
use anyhow::Result;

/// Remove sessions: worktree, branch and state (refuses while work would be lost)
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Sessions to remove [default: the session of the current worktree]
    pub labels: Vec<String>,
    /// Remove even with unmerged commits, uncommitted files or processes inside, after writing
    /// an archive ref that holds all of it
    #[arg(long)]
    pub force: bool,
    /// Do not ask for confirmation (with --force on a terminal)
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Say what would be removed, remove nothing
    #[arg(long, short = 'n')]
    pub dry_run: bool,
}

pub fn run(args: Args) -> Result<()> {
    let repo = Repo::require()?;
    let config = Config::load(repo.config_root())?;
    let store = repo.store();
    lifecycle::recover_interrupted(&repo, &config, &store)?;
    let layout = Layout::new(&repo, &config);
    let labels = if args.labels.is_empty() {
        let records = session::load_all(&store)?;
        vec![session::acting_label(&repo, &records).ok_or_else(|| {
            UserError::usage("which session? none is active here")
                .hinted("name it: git session cleanup LABEL (see git session list)")
        })?]
    } else {
        args.labels.clone()
    };
    for label in &labels {
        session::validate_label(label, &config.branch_prefix)?;
    }
    let now = clock::now();
    let mut failures = Vec::new();
    for label in &labels {
        if let Err(e) = cleanup_one(&repo, &config, &layout, label, &args, now) {
            if labels.len() == 1 {
                return Err(e);
            }
            error::report(&e);
            failures.push(label.clone());
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(UserError::refused(format!(
            "{} of {} sessions were not cleaned up: {}",
            failures.len(),
            labels.len(),
            failures.join(", ")
        ))
        .into())
    }
}

/// Why a session may not be removed without `--force`.
pub fn blockers(repo: &Repo, status: &Status) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let record = &status.record;
    if record.attached {
        return Ok(out);
    }
    // A missing worktree's unmerged branch is kept, not removed, so it blocks nothing.
    if status.merged == Merged::No && status.state != State::Missing {
        if let (Some(tip), Some(base)) = (status.tip, status.base_tip) {
            let commits = repo.unmerged_commits(tip, base, 20)?;
            if !commits.is_empty() {
                let n = status.ahead.max(commits.len());
                out.push(format!(
                    "branch {} has {n} commit{} not in {}:",
                    record.branch,
                    plural(n),
                    record.base
                ));
                for (id, summary) in commits {
                    out.push(format!("    {} {summary}", &id.to_string()[..10]));
                }
            }
        }
    }
    if status.state != State::Missing {
        if !status.dirty.is_empty() {
            let n = status.dirty.len();
            out.push(format!(
                "worktree has {n} uncommitted or untracked file{}:",
                plural(n)
            ));
            for f in status.dirty.iter().take(20) {
                out.push(format!("    {f}"));
            }
            if n > 20 {
                out.push(format!("    ... and {} more", n - 20));
            }
        }
        let occupants = process::occupants(&record.path);
        if !occupants.is_empty() {
            out.push(format!(
                "{} process{} working inside the worktree:",
                occupants.len(),
                if occupants.len() == 1 {
                    " is"
                } else {
                    "es are"
                }
            ));
            for o in occupants {
                out.push(format!("    pid {}: {}", o.pid, o.command));
            }
        }
    }
    Ok(out)
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn cleanup_one(
    repo: &Repo,
    config: &Config,
    layout: &Layout,
    label: &str,
    args: &Args,
    now: clock::Time,
) -> Result<()> {
    let store = repo.store();
    let record = session::require(&store, label)?;
    let status = session::inspect(&repo.common_dir, record, config, now)?;
    let record = &status.record;
    if status.state == State::Creating {
        return Err(
            UserError::refused(format!("session \"{label}\" is still being created"))
                .hinted(
                    "wait for `git session create` to finish; an interrupted one is rolled back",
                )
                .into(),
        );
    }
    if let Some(reason) = &status.locked {
        return Err(
            UserError::refused(format!("the worktree of \"{label}\" is locked: {reason}"))
                .hinted(format!(
                    "unlock it first if that is over: git worktree unlock {}",
                    lifecycle::shell_quote(&record.path.display().to_string())
                ))
                .into(),
        );
    }
    if !record.attached && record.path.exists() && !layout.may_delete(record) {
        return Err(UserError::refused(format!(
            "the record of \"{label}\" points at {}, outside {}; not followed",
            record.path.display(),
            layout.worktrees_dir.display()
        ))
        .hinted("remove that worktree with `git worktree remove` if it is really this session's")
        .into());
    }
    let blockers = blockers(repo, &status)?;
    let missing = status.state == State::Missing;
    // A missing worktree holds no files; an unmerged branch of it is kept, not archived away.
    let keep_branch = missing && status.merged == Merged::No;
    if !blockers.is_empty() && !args.force {
        let mut err =
            UserError::refused(format!("session \"{label}\" holds work that would be lost"));
        for b in &blockers {
            err = err.detail(b.clone());
        }
        return Err(err
            .hinted(format!(
                "merge it (git merge {}), commit or remove the files, stop the processes, or \
                 pass --force to archive everything and remove it",
                record.branch
            ))
            .into());
    }
    if args.dry_run {
        if !blockers.is_empty() {
            output::line(format!("would archive session \"{label}\" (forced):"))?;
            for b in &blockers {
                output::line(format!("  {b}"))?;
            }
        }
        let mut parts = Vec::new();
        if !record.attached && record.path.exists() {
            parts.push(format!("worktree {}", record.path.display()));
        }
        if !record.attached && status.tip.is_some() && !keep_branch {
            parts.push(format!("branch {}", record.branch));
        }
        parts.push("state".to_string());
        output::line(format!(
            "would remove session \"{label}\": {}",
            parts.join(", ")
        ))?;
        return Ok(());
    }
    if !blockers.is_empty() && args.force {
        if !args.yes
            && output::stderr_is_terminal()
            && std::io::IsTerminal::is_terminal(&std::io::stdin())
        {
            output::note(format!("session \"{label}\":"));
            for b in &blockers {
                output::note(format!("  {b}"));
            }
            let go = dialoguer::Confirm::new()
                .with_prompt("Archive all of this and remove the session?")
                .default(false)
                .interact()
                .unwrap_or(false);
            if !go {
                return Err(UserError::refused("cleanup cancelled; nothing was changed").into());
            }
        }
        if status.tip.is_some() {
            let (refname, restore) = lifecycle::archive(repo, &status)?;
            output::note(format!("archived session \"{label}\" as {refname}"));
            output::note(format!("restore with: {restore}"));
            store.audit(
                "forced-cleanup",
                serde_json::json!({"label": label, "archive": refname, "reasons": blockers}),
            );
        } else {
            store.audit(
                "forced-cleanup",
                serde_json::json!({"label": label, "archive": null, "reasons": blockers}),
            );
        }
    }
    lifecycle::remove(repo, layout, &store, &status, keep_branch)?;
    let mut what = Vec::new();
    if !record.attached && !missing {
        what.push(format!("worktree {}", record.path.display()));
    }
    if !record.attached && status.tip.is_some() && !keep_branch {
        what.push(format!("branch {}", record.branch));
    }
    what.push("state".to_string());
    output::note(format!("removed session \"{label}\": {}", what.join(", ")));
    if keep_branch && status.tip.is_some() {
        output::note(format!(
            "kept branch {}: it has commits not in {}",
            record.branch, record.base
        ));
    }
    Ok(())
}
