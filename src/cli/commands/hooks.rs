//! `git session hooks install|uninstall|status`: the guard's git hooks, wherever this
//! repository's commits look for hooks (see [`crate::hooks`], which decides; this file parses,
//! calls and puts the outcome into words).

use crate::cli::helper::CommandHelper;
use crate::cli::output;
use crate::cli::words::hooks_off;
use crate::hooks::wire::{self, Change};
use crate::hooks::{self, Check, Enforcement, Event, Route};
use anyhow::Result;
use serde_json::json;
use std::path::{Path, PathBuf};

/// Install, remove or inspect the pre-commit and post-commit hooks of the ownership guard
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Install the guard where commits made here look for hooks: git's config-based hooks (git
    /// 2.54+), else a hook manager's own configuration (husky, lefthook, pre-commit,
    /// simple-git-hooks), else the hooks directory; idempotent, existing hooks keep running
    Install,
    /// Remove exactly what install added, and put back any hook it had moved aside
    Uninstall,
    /// Show whether a commit made here runs the guard (exit 1 when the pre-commit guard would
    /// not run)
    Status {
        /// Print JSON
        #[arg(long)]
        json: bool,
    },
}

pub fn run(args: Args) -> Result<()> {
    let cx = CommandHelper::open()?;
    let repo = &cx.repo;
    let here = repo
        .current_worktree
        .clone()
        .or_else(|| repo.main_worktree.clone())
        .ok_or_else(|| {
            crate::cli::user_error::UserError::refused(
                "this repository has no worktree to commit in",
            )
            .hinted("run git session hooks from a worktree of the repository")
        })?;
    match args.action {
        Action::Install => {
            let sessions: Vec<PathBuf> = crate::session::load_all(&cx.store)
                .unwrap_or_default()
                .into_iter()
                .map(|r| r.path)
                .collect();
            // The pre-push gate only where claims are shared across machines.
            let mut events = Event::ALL.to_vec();
            if cx.config()?.claims_remote.is_some() {
                events.push(Event::PrePush);
            }
            let changes = wire::install(
                &repo.common_dir,
                &here,
                &sessions,
                repo.main_worktree.as_deref(),
                &events,
            )?;
            report_changes(&changes);
            let e = enforcement(&repo.common_dir, &here);
            // A hook file in a directory outside the repository (a core.hooksPath in the user's
            // or the system's configuration) runs for every repository that reads it.
            if let Check::InForce(Route::HookFile { path }) = &e.pre_commit {
                let dir = path.parent().unwrap_or(path);
                if !dir.starts_with(&repo.common_dir) && !dir.starts_with(&here) {
                    output::note(format!(
                        "{} is a hooks directory outside this repository (core.hooksPath): \
                         every repository that reads that setting runs the guard now, which \
                         passes every commit where git-session has no sessions",
                        shown(dir)
                    ));
                }
            }
            if !e.pre_commit.in_force() {
                return Err(not_in_force(&e, true).into());
            }
            Ok(())
        }
        Action::Uninstall => {
            let changes = crate::hooks::unwire::uninstall(&repo.common_dir, &here)?;
            report_changes(&changes);
            Ok(())
        }
        Action::Status { json } => {
            let shared = cx.config()?.claims_remote.is_some();
            status(&repo.common_dir, &here, json, shared)
        }
    }
}

/// The guard's state for the worktree at `worktree`, asking the git on `PATH` only when a
/// config-based hook of ours is configured.
pub fn enforcement(common_dir: &Path, worktree: &Path) -> Enforcement {
    hooks::check(common_dir, worktree, &|| {
        hooks::place::git_runs_config_hooks(worktree)
    })
}

fn shown(path: &Path) -> String {
    path.display().to_string()
}

fn report_changes(changes: &[Change]) {
    for change in changes {
        let text = match change {
            Change::ConfigHookSet { name, event } => format!(
                "{}: set git's config-based hook hook.{name} (git 2.54+ runs it in every worktree)",
                event.name()
            ),
            Change::ConfigHookRemoved { name } => {
                format!("removed git's config-based hook hook.{name}")
            }
            Change::FileWritten { path } => format!("installed {}", shown(path)),
            Change::BlockAdded { path } => format!(
                "added the guard to {}; what it ran before still runs after it",
                shown(path)
            ),
            Change::BlockUpdated { path } => format!("updated the guard in {}", shown(path)),
            Change::Present { path } => format!("{}: already in place", shown(path)),
            Change::Chained { path, aside } => format!(
                "installed {}; your hook is kept as {} and still runs first",
                shown(path),
                shown(aside)
            ),
            Change::ManagerConfig { manager, path } => format!(
                "added the guard to {}'s configuration {}, so `{}` keeps it",
                manager.name(),
                shown(path),
                manager.reinstall_command()
            ),
            Change::ManagerConfigRefused {
                manager,
                path,
                why,
                add_by_hand,
            } => {
                output::warn(format!(
                    "{}'s configuration {} was not changed: {why}; add this to it by hand:",
                    manager.name(),
                    shown(path)
                ));
                eprintln!("{add_by_hand}");
                continue;
            }
            Change::StaleRemoved { path } => format!(
                "removed {}: an old copy that would no longer run, or would run the guard twice",
                shown(path)
            ),
            Change::Materialized { dir } => format!(
                "copied the generated hooks directory into {} (core.hooksPath is relative)",
                shown(dir)
            ),
            Change::CommitToShare { path } => {
                output::hint(format!(
                    "commit {}: session worktrees made from a commit without it do not run the guard",
                    shown(path)
                ));
                continue;
            }
            Change::BlockRemoved { path } => {
                format!("removed the guard from {}; the rest stays", shown(path))
            }
            Change::FileRemoved { path } => format!("removed {}", shown(path)),
            Change::MadeExecutable { path } => {
                format!("{}: made executable again (git skipped it)", shown(path))
            }
            Change::Restored { path } => {
                format!("removed the guard; your hook is back as {}", shown(path))
            }
            Change::Absent { path } => format!("{}: nothing of ours there", shown(path)),
        };
        output::note(text);
    }
}

fn route_words(route: &Route) -> (String, &'static str) {
    match route {
        Route::ConfigHook { name } => (format!("hook.{name}"), "config"),
        Route::HookFile { path } => (shown(path), "hook file"),
        Route::Manager { manager, config } => (shown(config), manager.name()),
    }
}

/// The refusal `hooks install` (`after_install`) and `hooks status` end with when the
/// pre-commit guard is off.
pub fn not_in_force(e: &Enforcement, after_install: bool) -> crate::cli::user_error::UserError {
    let (why, hint) = match &e.pre_commit {
        Check::Off(off) => (
            off.to_string(),
            hooks_off::fix(off, &e.worktree, after_install),
        ),
        Check::InForce(_) => (String::new(), String::new()),
    };
    crate::cli::user_error::UserError::refused(format!(
        "the ownership guard would not run for a commit made in {}: {why}",
        shown(&e.worktree)
    ))
    .hinted(hint)
}

fn status(common_dir: &Path, here: &Path, as_json: bool, shared: bool) -> Result<()> {
    let on_path = std::env::var_os("PATH").is_some_and(|p| {
        std::env::split_paths(&p).any(|d| {
            use std::os::unix::fs::PermissionsExt;
            std::fs::metadata(d.join("git-session"))
                .is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
        })
    });
    let e = enforcement(common_dir, here);
    let hooks_dir = e.hooks_dir.clone().unwrap_or_default();
    if as_json {
        let rows: Vec<_> = Event::ALL
            .iter()
            .map(|event| {
                let check = e.of(*event);
                let file = hooks_dir.join(event.name());
                let aside = {
                    let mut s = file.as_os_str().to_owned();
                    s.push(wire::ASIDE);
                    PathBuf::from(s)
                };
                let user_hook = std::fs::symlink_metadata(&aside)
                    .is_ok()
                    .then(|| shown(&aside));
                let (path, route, state, why, fix) = match check {
                    Check::InForce(route) => {
                        let (p, r) = route_words(route);
                        (p, Some(r), "installed", None, None)
                    }
                    Check::Off(off) => (
                        shown(&file),
                        None,
                        "not installed",
                        Some(off.to_string()),
                        Some(hooks_off::fix(off, &e.worktree, false)),
                    ),
                };
                json!({"version": output::JSON_VERSION, "hook": event.name(),
                       "path": path, "state": state, "user_hook": user_hook,
                       "git_session_on_path": on_path,
                       "in_force": check.in_force(), "route": route,
                       "manager": e.manager.map(|m| m.name()), "why": why, "fix": fix})
            })
            .collect();
        output::json(&serde_json::Value::Array(rows))?;
    } else {
        let events: &[Event] = if shared { &Event::EVERY } else { &Event::ALL };
        for &event in events {
            let line = match e.of(event) {
                Check::InForce(route) => {
                    let (p, r) = route_words(route);
                    format!("{}: in force ({r}: {p})", event.name())
                }
                Check::Off(off) => format!("{}: NOT in force: {off}", event.name()),
            };
            output::line(line)?;
        }
        if let Some(m) = e.manager {
            output::note(format!(
                "hook manager: {} (the guard lives in its configuration, so `{}` keeps it)",
                m.name(),
                m.reinstall_command()
            ));
        }
        if !on_path {
            output::warn("git-session is not on PATH, so the installed hooks warn and allow");
        }
    }
    if !e.pre_commit.in_force() {
        return Err(not_in_force(&e, false).into());
    }
    if !e.post_commit.in_force() && !as_json {
        output::hint(
            "without the post-commit check, a commit made with --no-verify is found only later, by list, info or the next guard run",
        );
    }
    Ok(())
}
