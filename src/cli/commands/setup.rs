//! `git session setup [LABEL]`: the worktree setup `create` does (`[create] copy` files, the
//! `[create] run` commands), run again in an existing session. It is how a list that was not
//! approved when the session was made (no terminal to ask at) gets run later, and how a failed
//! setup is retried. Files already in the worktree are never overwritten (see
//! [`crate::lifecycle::worktree_setup`]).

use crate::base::clock;
use crate::cli::helper::CommandHelper;
use crate::cli::output;
use crate::cli::user_error::UserError;
use crate::lifecycle::worktree_setup::{self, RunOutcome};
use crate::session::{self, State};
use anyhow::Result;

/// Run the worktree setup ([create] copy and run) in an existing session
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Session label [default: the session of the current worktree, or GIT_SESSION]
    pub label: Option<String>,
    /// Approve the repository's `[create] run` commands (asked once on a terminal otherwise)
    #[arg(long)]
    pub approve_run: bool,
    /// Deadline for each command, such as 30s or 5m [default: create_timeout, 300s]
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
}

pub fn run(args: Args) -> Result<()> {
    let cx = CommandHelper::open()?;
    let config = cx.config()?;
    cx.recover()?;
    let label = cx.given_or_acting(args.label, "git session setup LABEL")?;
    let (repo, store) = (&cx.repo, &cx.store);
    let deadline = clock::timeout_arg(args.timeout.as_deref(), config.create_timeout)?;
    let record = session::require(store, &label)?;
    let status = session::inspect(&repo.common_dir, record, config, clock::now())?;
    match status.state {
        State::Creating => {
            return Err(
                UserError::refused(format!("session \"{label}\" is still being created"))
                    .hinted("wait for `git session create` to finish; it runs the setup itself")
                    .into(),
            )
        }
        State::Missing => {
            return Err(UserError::refused(format!(
                "the worktree of session \"{label}\" is missing: {}",
                status.record.path.display()
            ))
            .hinted(format!(
                "nothing to set up; `git session cleanup {label}` removes what is left"
            ))
            .into())
        }
        _ => {}
    }
    let path = &status.record.path;
    let mut failed = worktree_setup::copy_files(repo, config, path);
    let env = crate::ownership::leases::of(store, &label)?
        .map(|l| l.env())
        .unwrap_or_default();
    let deadline = deadline.to_std()?;
    match worktree_setup::run_commands(config, store, path, args.approve_run, deadline, &env) {
        RunOutcome::NotApproved(commands) => {
            return Err(
                UserError::refused(worktree_setup::not_approved_message(&commands))
                    .hinted(format!(
                        "read them, then: git session setup {label} --approve-run"
                    ))
                    .into(),
            )
        }
        RunOutcome::Ran { failed: f } => failed.extend(f),
        RunOutcome::Nothing => {
            if config.create_copy.is_empty() {
                output::note("nothing to set up: [create] has no copy or run list");
            }
        }
    }
    if !failed.is_empty() {
        let mut err = UserError::refused(format!("the setup of session \"{label}\" failed"));
        for f in failed {
            err = err.detail(f);
        }
        return Err(err
            .hinted("fix the cause, then run `git session setup` again")
            .into());
    }
    output::note(format!("session \"{label}\" is set up: {}", path.display()));
    Ok(())
}
