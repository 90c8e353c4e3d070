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
    if let Some(program) = what.command.first() {
        refuse_unrunnable(program)?;
    }
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
        let env = crate::ownership::leases::of(store, &label)?
            .map(|l| l.env())
            .unwrap_or_default();
        if !env.is_empty() {
            let shown: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
            output::note(format!(
                "it holds {}; `eval \"$(git session env {label})\"` exports them here",
                shown.join(" ")
            ));
        }
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
        start: None,
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
        let generated = what.label.is_none();
        let env = crate::ownership::leases::of(store, &label)?
            .map(|l| l.env())
            .unwrap_or_default();
        let err = exec_in(&label, generated, &path, &env, &what.command);
        return Err(roll_back_unstarted(cx, &layout, &label, &path, &what.command[0], err).into());
    }
    // The op lock is held until the path is handed out.
    let env = crate::ownership::leases::of(store, &label)?
        .map(|l| l.env())
        .unwrap_or_default();
    crate::cli::shell::request_cd_with(&path, &env);
    output::line(path.display().to_string())?;
    drop(op);
    Ok(())
}

/// Gives back the session `label` from its archive (`which`: a stamp or ref; the newest by
/// default) and reports it as a creation is reported: the agents' hooks prepared, one line of
/// what came back, the path printed (and entered under the shell integration).
pub fn restore(
    cx: &CommandHelper,
    label: &Label,
    which: Option<&str>,
    timeout: Option<&str>,
    approve_run: bool,
) -> Result<()> {
    let (repo, store) = (&cx.repo, &cx.store);
    let config = cx.config()?;
    let layout = cx.layout()?;
    let timeout = clock::timeout_arg(timeout, config.create_timeout)?;
    cx.recover()?;
    let what = lifecycle::restore::Restore {
        label,
        which,
        approve_run,
        deadline: timeout.to_std()?,
    };
    let restored =
        lifecycle::restore::restore(repo, config, &layout, store, &what, &Spinner::default())?;
    let path = restored.created.path.clone();
    crate::cli::in_force::warn_unguarded(&repo.common_dir, &[(label.to_string(), path.clone())]);
    if let Ok(unloaded) =
        crate::context::loading::prepare_worktree(repo.main_worktree.as_deref(), &path)
    {
        for h in &unloaded {
            output::warn(crate::cli::words::context_loading::describe(h));
        }
    }
    match &restored.files_failed {
        None => {
            let ahead = lifecycle::restore::ahead_of_base(repo, label, &layout, &restored.base)
                .unwrap_or(0);
            output::note(crate::cli::words::creation::restored(
                label,
                &restored.archive,
                &restored.base,
                ahead,
            ));
        }
        Some(why) => output::warn(crate::cli::words::creation::restore_files_failed(
            label,
            &restored.archive,
            why,
        )),
    }
    crate::cli::shell::request_cd(&path);
    output::line(path.display().to_string())?;
    drop(restored.created.op);
    Ok(())
}

/// `create [LABEL] -- CMD ARGS...`: replaces this process with CMD, run in the new worktree with
/// `GIT_SESSION=<label>` and the session's leased resources (`GIT_SESSION_PORT`, ...), after one line saying what was done (and that the label was generated,
/// so a first word after `--` is never taken for a label unsaid). Returns only when exec failed.
fn exec_in(
    label: &Label,
    generated: bool,
    path: &Path,
    env: &[(String, String)],
    command: &[std::ffi::OsString],
) -> std::io::Error {
    use std::os::unix::process::CommandExt;
    output::note(crate::cli::words::creation::running(
        label,
        generated,
        path,
        &command[0].to_string_lossy(),
    ));
    std::process::Command::new(&command[0])
        .args(&command[1..])
        .current_dir(path)
        .env("GIT_SESSION", label.as_str())
        .envs(env.iter().map(|(k, v)| (k, v)))
        .exec()
}

/// A command that could not start leaves no session: the creation is undone
/// ([`lifecycle::create::undo`]) and the refusal says so, or says what stayed.
fn roll_back_unstarted(
    cx: &CommandHelper,
    layout: &session::Layout,
    label: &Label,
    path: &Path,
    program: &std::ffi::OsStr,
    err: std::io::Error,
) -> UserError {
    // exec changed our directory before it failed; the rollback removes that directory.
    if let Some(main) = cx.repo.main_worktree.as_deref() {
        let _ = std::env::set_current_dir(main);
    }
    let undone = lifecycle::create::undo(&cx.repo, layout, &cx.store, label);
    crate::cli::words::creation::not_started(label, path, &program.to_string_lossy(), &err, undone)
}

/// Refuses, before anything is made, a command named without a `/` that no directory of `PATH`
/// holds as an executable file. A name with a `/`, or a `PATH` with relative entries, resolves
/// in the new worktree: exec decides, and a failure there is rolled back.
fn refuse_unrunnable(program: &std::ffi::OsStr) -> Result<()> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::PermissionsExt;
    if program.as_bytes().contains(&b'/') || program.is_empty() {
        return Ok(());
    }
    let Some(dirs) = std::env::var_os("PATH") else {
        return Ok(());
    };
    let dirs: Vec<PathBuf> = std::env::split_paths(&dirs).collect();
    if dirs.iter().any(|d| !d.is_absolute()) {
        return Ok(());
    }
    let found = dirs.iter().any(|d| {
        std::fs::metadata(d.join(program))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    });
    if found {
        return Ok(());
    }
    Err(crate::cli::words::creation::not_on_path(&program.to_string_lossy()).into())
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
