//! `git session switch LABEL`: the worktree of an existing session, to enter.
//!
//! It prints the worktree's path alone on stdout (so `cd "$(git session switch x)"` works) and,
//! under the shell integration (`shell-init`), asks the shell to enter it. It changes nothing.
//! An unknown label is refused (exit 1) with the closest labels there are.

use crate::cli::helper::CommandHelper;
use crate::cli::output;
use crate::cli::user_error::UserError;
use crate::session::{self, Label, RecordState};
use anyhow::Result;

/// Print the worktree path of a session (the shell integration enters it)
#[derive(Debug, clap::Args)]
#[command(after_help = "Example: cd \"$(git session switch fix-login)\"")]
pub struct Args {
    /// Session label
    pub label: String,
}

pub fn run(args: Args) -> Result<()> {
    let label = Label::new(&args.label)?;
    let cx = CommandHelper::open()?;
    cx.config()?;
    cx.recover()?;
    let records = session::load_all(&cx.store)?;
    let Some(record) = records.iter().find(|r| r.label == label) else {
        return Err(session::no_such_session_among(&label, &records).into());
    };
    if record.state == RecordState::Creating {
        return Err(
            UserError::refused(format!("session \"{label}\" is still being created"))
                .hinted("wait for `git session create` to finish, then switch again")
                .into(),
        );
    }
    if !record.path.is_dir() {
        return Err(UserError::refused(format!(
            "the worktree of \"{label}\" is gone: {}",
            record.path.display()
        ))
        .hinted(format!(
            "`git session info {label}` shows what it held; `git session cleanup {label}` removes \
             what is left"
        ))
        .into());
    }
    output::line(record.path.display().to_string())?;
    let env = crate::ownership::leases::of(&cx.store, &label)?
        .map(|l| l.env())
        .unwrap_or_default();
    crate::cli::shell::request_cd_with(&record.path, &env);
    Ok(())
}
