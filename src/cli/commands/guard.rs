//! `git session guard pre-commit|post-commit`: what the installed hooks run.
//!
//! Exit codes: 0 lets the commit through (also after an internal error, which is reported
//! loudly: the guard fails open), 1 refuses it (pre-commit only; a post-commit cannot). A damaged
//! configuration file is no internal error: the guard warns (file, line, column) and enforces.

use crate::cli::output;
use crate::cli::user_error::UserError;
use crate::config::{Config, Damage, Fallback};
use crate::git::Repo;
use crate::guard::{self, Verdict};
use serde_json::json;

/// Run the ownership checks the git hooks call (installed by `git session hooks install`)
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub hook: Hook,
}

#[derive(Debug, clap::Subcommand)]
pub enum Hook {
    /// Refuse a commit whose staged paths another live session owns (exit 1)
    PreCommit,
    /// Check a commit the pre-commit never saw (--no-verify); warns, never fails
    PostCommit,
    /// Refuse a push whose new commits change a path a session of another clone holds (with
    /// `[claims] remote`; reads git's pre-push lines on stdin)
    PrePush {
        /// The remote's name, as git hands it to the hook
        remote: Option<String>,
        /// The remote's URL, as git hands it to the hook
        url: Option<String>,
    },
}

/// Runs the hook and returns the process's exit code. A refusal is the hook's answer, not an
/// error: it is worded and printed here, never made an error value, which would capture a
/// backtrace where `RUST_BACKTRACE` is set (a walk of the stack on every refused commit, and
/// in the fixed-address static binary the first walk sorts the unwind tables: 22M
/// instructions).
pub fn run(args: Args) -> i32 {
    // A panic (damaged bytes on disk) must not refuse commits: it fails open like an error.
    let store = || {
        Repo::discover()
            .ok()
            .flatten()
            .map(|repo| crate::store::Store::of(&repo))
    };
    match crate::cli::failsafe::fail_open("guard", store, || checked(args)) {
        Some(Some(refusal)) => crate::cli::report::report_user(&refusal),
        Some(None) | None => 0,
    }
}

/// The refusal's words, or `None` to let the commit (or push) through.
fn checked(args: Args) -> Option<UserError> {
    let name = match args.hook {
        Hook::PreCommit => "pre-commit",
        Hook::PostCommit => "post-commit",
        Hook::PrePush { .. } => "pre-push",
    };
    let repo = match Repo::discover() {
        Ok(Some(repo)) => repo,
        Ok(None) => {
            // No repository for libgit2, yet git is committing somewhere: a worktree libgit2
            // cannot read (a symbolic-link HEAD, say). Never a silent pass.
            if let Some(common) = crate::git::cli_common_dir() {
                let err = anyhow::anyhow!(
                    "git-session cannot open the repository this commit is made in (git can); \
                     the commit is not checked for other sessions' paths"
                );
                guard::fail_open_in(
                    Some(crate::store::Store::for_common_dir(&common)),
                    name,
                    &err,
                );
            }
            return None;
        }
        Err(e) => {
            guard::fail_open(None, name, &e);
            return None;
        }
    };
    if guard::guard_off() {
        if matches!(args.hook, Hook::PostCommit) {
            // The bypass is recorded (pre-commit's audit line); this commit is no unguarded
            // one for a later sweep to report again.
            if let Some(head) = repo.head_id() {
                crate::guard::unguarded::mark_seen(repo.gitdir(), head);
            }
        }
        if matches!(args.hook, Hook::PreCommit | Hook::PrePush { .. }) {
            output::warn(format!(
                "GIT_SESSION_GUARD=off: the ownership guard is bypassed for this {}",
                if name == "pre-push" { "push" } else { "commit" }
            ));
            let store = crate::store::Store::of(&repo);
            let acting = crate::session::load_all(&store)
                .ok()
                .and_then(|records| crate::session::acting_label(&repo, &records));
            let recorded = store.audit(
                "guard-bypass",
                json!({
                    "hook": name,
                    "session": acting,
                    "worktree": repo.current_worktree.as_ref().map(|p| p.display().to_string()),
                }),
            );
            if !recorded {
                // The audit line is the only trace a bypass leaves: say loudly that it is missing.
                output::warn(format!(
                    "THIS BYPASS IS NOT RECORDED: {} could not be written; the commit goes \
                     through with no audit line",
                    store.path("audit.log").display()
                ));
            }
        }
        return None;
    }
    // A damaged configuration never switches the guard off: it reads the keys it needs where
    // they are good and enforces with the defaults elsewhere.
    let (config, damage) = Config::load_for_guard(repo.config_root());
    if !matches!(args.hook, Hook::PostCommit) {
        // Once per commit (or push): the post-commit of the same commit stays quiet.
        report_damage(&repo, name, &damage);
    }
    let outcome = match args.hook {
        Hook::PreCommit => guard::pre_commit(&repo, &config),
        Hook::PostCommit => guard::post_commit(&repo, &config).map(|()| Verdict::Pass),
        Hook::PrePush { .. } => {
            let mut input = String::new();
            use std::io::Read;
            std::io::stdin()
                .take(1 << 20)
                .read_to_string(&mut input)
                .map_err(anyhow::Error::from)
                .and_then(|_| guard::pre_push(&repo, &config, &input))
        }
    };
    let result = match outcome {
        Ok(Verdict::Pass) => None,
        Ok(Verdict::Refuse(refusal)) => {
            // The refusal is worded in colour as git's configuration asks: read it from the
            // repository already open (the report would otherwise open it a second time, a
            // noticeable share of a hook that must cost about a process start).
            output::settle_colour_from(|| repo.colour_setting());
            Some(crate::cli::words::guard_refusals::words(&refusal))
        }
        Err(e) => {
            guard::fail_open(Some(&repo), name, &e);
            None
        }
    };
    // The process ends with this hook: libgit2's teardown of the repository (its object and
    // reference caches, pack maps, configuration) is work the exit does for nothing: 1.4 % of
    // the check's instructions (its time moved within the noise). Nothing is written on drop.
    std::mem::forget(repo);
    result
}

/// Warns about each problem of the configuration files (file, line, column, and what the guard
/// fell back to) and records it in the audit log, as the guard's other warnings are.
fn report_damage(repo: &Repo, hook: &str, damage: &[Damage]) {
    if damage.is_empty() {
        return;
    }
    output::settle_colour_from(|| repo.colour_setting());
    let store = crate::store::Store::of(repo);
    for d in damage {
        output::warn(crate::cli::words::config::guard_warning(d));
        let at = d.error.at();
        store.audit(
            "guard-config-damaged",
            json!({
                "hook": hook,
                "file": d.error.file().display().to_string(),
                "line": at.map(|a| a.line),
                "column": at.map(|a| a.column),
                "error": d.error.to_string(),
                "fallback": match &d.fallback {
                    Fallback::Unused => "unused".to_string(),
                    Fallback::KeyDefault { key } => format!("default {key}"),
                    Fallback::FileDefaults => "defaults".to_string(),
                },
            }),
        );
    }
}
