//! Creating a session from the command line, for `create` and for Claude Code's
//! `worktree-hook create` alike: the arguments checked, the transaction
//! ([`crate::lifecycle::create`]) called with a spinner on a terminal and the setup's notices said
//! as they come, then the report: the agents' hooks prepared, the path printed (and entered under
//! the shell integration), or a command run inside.
//!
//! Invariant: the session's op lock ([`Created::op`]) is held until the path is handed out (or
//! the command is about to replace this process): a `cleanup` of this label that came meanwhile
//! has been refused (the record said `creating`) or waits until after this.

use crate::base::clock;
use crate::cli::helper::CommandHelper;
use crate::cli::output;
use crate::cli::user_error::UserError;
use crate::lifecycle;
use crate::lifecycle::create::{Created, Observer, Request, SetupNotice};
use crate::session::{self, Label};
use anyhow::Result;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What the user asked for (the `create` arguments, the label already taken out of `--`).
#[derive(Debug, Default)]
pub struct Creation {
    pub label: Option<String>,
    pub base: Option<String>,
    pub path: Option<PathBuf>,
    pub attach: bool,
    pub timeout: Option<String>,
    pub approve_run: bool,
    pub command: Vec<std::ffi::OsString>,
}

/// Creates the session `what` asks for and reports it (see the module doc).
pub fn create(cx: &CommandHelper, what: Creation) -> Result<()> {
    let (repo, store) = (&cx.repo, &cx.store);
    let config = cx.config()?;
    let layout = cx.layout()?;
    let label = match &what.label {
        Some(l) => Label::new(l)?,
        None => lifecycle::create::generate_label(store),
    };
    if let Some(base) = &what.base {
        session::validate_rev(base)?;
    }
    let timeout = clock::timeout_arg(what.timeout.as_deref(), config.create_timeout)?;
    cx.recover()?;
    if what.attach {
        let here = lifecycle::create::attach(repo, config, store, &label)?;
        output::note(format!(
            "attached session \"{label}\" to {}; identify its commits with GIT_SESSION={label}",
            here.display()
        ));
        output::line(here.display().to_string())?;
        return Ok(());
    }
    let path = match &what.path {
        Some(p) => {
            let p = if p.is_absolute() {
                p.clone()
            } else {
                std::env::current_dir()?.join(p)
            };
            Some(session::normalize(&p))
        }
        None => None,
    };
    let request = Request {
        label: label.clone(),
        base: what.base.clone(),
        path,
        approve_run: what.approve_run,
        deadline: timeout.to_std()?,
    };
    let Created { path, op } =
        lifecycle::create::create(repo, config, &layout, store, &request, &Spinner::default())?;
    crate::cli::in_force::warn_unguarded(&repo.common_dir, &[(label.to_string(), path.clone())]);
    // The agents' hooks load here too (Codex needs a `.codex/` of the session's own), or the
    // user hears what to do (commit, trust).
    match crate::context::loading::prepare_worktree(repo.main_worktree.as_deref(), &path) {
        Ok(unloaded) => {
            for h in &unloaded {
                output::warn(crate::cli::words::context_loading::describe(h));
            }
        }
        Err(e) => output::warn(format!(
            "the agents' hook set-up in {} failed: {e}",
            path.display()
        )),
    }
    if !what.command.is_empty() {
        // exec keeps our pid and start time: a lock still held would look alive for as long as
        // the command runs.
        drop(op);
        return exec_in(&label, &path, &what.command);
    }
    // The op lock is held until the path is handed out.
    crate::cli::shell::request_cd(&path);
    output::line(path.display().to_string())?;
    drop(op);
    Ok(())
}

/// `create LABEL -- CMD ARGS...`: replaces this process with CMD, run in the new worktree with
/// `GIT_SESSION=<label>`. Only an exec failure returns; the session stays (it was created).
fn exec_in(label: &str, path: &Path, command: &[std::ffi::OsString]) -> Result<()> {
    use std::os::unix::process::CommandExt;
    output::note(format!(
        "session \"{label}\" is at {}; running {}",
        path.display(),
        command[0].to_string_lossy()
    ));
    let err = std::process::Command::new(&command[0])
        .args(&command[1..])
        .current_dir(path)
        .env("GIT_SESSION", label)
        .exec();
    Err(UserError::refused(format!(
        "cannot run {}: {err}",
        command[0].to_string_lossy()
    ))
    .hinted(format!(
        "the session was created; enter it with: cd {}",
        crate::base::quote::shell_quote(&path.display().to_string())
    ))
    .into())
}

/// The creation's progress on a terminal (`git worktree add`'s lines beside a spinner), and the
/// setup's notices on stderr.
#[derive(Default)]
struct Spinner {
    bar: RefCell<Option<indicatif::ProgressBar>>,
}

impl Observer for Spinner {
    fn started(&self, label: &Label) {
        if !output::stderr_is_terminal() {
            return;
        }
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} creating {prefix} {elapsed} {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        bar.set_prefix(label.to_string());
        bar.enable_steady_tick(Duration::from_millis(100));
        *self.bar.borrow_mut() = Some(bar);
    }

    fn progress(&self, line: &str) {
        if let Some(bar) = &*self.bar.borrow() {
            bar.set_message(line.trim().to_string());
        }
    }

    fn finished(&self) {
        if let Some(bar) = self.bar.borrow_mut().take() {
            bar.finish_and_clear();
        }
    }

    fn setup(&self, notice: SetupNotice) {
        crate::cli::words::creation::say_setup(&notice);
    }
}
