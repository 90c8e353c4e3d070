//! `git session context install`: picks the settings file (the project's, the user's, the
//! machine-local one, Codex's or Gemini CLI's), lets the domain merge the hooks into it
//! (`crate::context::hook_config`), says what it installed, and makes the hooks load in the
//! session worktrees where it can.
//!
//! Invariant: the command lines written into the file are fixed here and in the domain
//! (`hook_config::COMMAND`, [`WORKTREE_HOOKS`]): a changed line is a hook installed twice.

use crate::cli::output;
use crate::cli::user_error::UserError;
use crate::context::hook_config;
use anyhow::{Context, Result};

/// What Claude Code's `WorktreeCreate` and `WorktreeRemove` hooks run: `git session
/// worktree-hook` (src/cli/commands/worktree_hook.rs).
pub const WORKTREE_HOOKS: hook_config::WorktreeHooks = hook_config::WorktreeHooks {
    create: "git session worktree-hook create",
    remove: "git session worktree-hook remove",
};

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// Install into the user's ~/.claude/settings.json instead of the project's
    #[arg(long, conflicts_with = "local")]
    pub user: bool,
    /// Install into the project's git-ignored .claude/settings.local.json (this machine only)
    #[arg(long)]
    pub local: bool,
    /// Install Codex's hooks into the repository's .codex/hooks.json instead
    #[arg(long, conflicts_with_all = ["local", "user"])]
    pub codex: bool,
    /// Install Gemini CLI's hooks into the repository's .gemini/settings.json instead
    #[arg(long, conflicts_with_all = ["local", "user", "codex"])]
    pub gemini: bool,
    /// Print the resulting settings file and change nothing
    #[arg(long)]
    pub dry_run: bool,
}

pub(super) fn run(args: InstallArgs) -> Result<()> {
    let mut project: Option<(crate::git::Repo, std::path::PathBuf)> = None;
    let path = if args.user {
        hook_config::user_settings()?
    } else {
        let repo = crate::cli::helper::CommandHelper::open()?.repo;
        // The main worktree's file, also when run inside a session's worktree: installing must
        // not make that session dirty, and sessions created later branch from what is
        // committed there.
        let root = repo
            .main_worktree
            .clone()
            .or_else(|| repo.current_worktree.clone())
            .ok_or_else(|| {
                UserError::refused("this repository has no working tree")
                    .hinted("install into the user's settings with --user")
            })?;
        let path = if args.codex {
            root.join(".codex").join("hooks.json")
        } else if args.gemini {
            root.join(".gemini").join("settings.json")
        } else if args.local {
            root.join(".claude").join("settings.local.json")
        } else {
            root.join(".claude").join("settings.json")
        };
        project = Some((repo, root));
        path
    };
    let agent = if args.codex {
        hook_config::Agent::Codex
    } else if args.gemini {
        hook_config::Agent::Gemini
    } else {
        hook_config::Agent::Claude
    };
    let outcome = hook_config::install_for(agent, &path, args.dry_run, &WORKTREE_HOOKS)?;
    if args.dry_run {
        output::line(outcome.text.trim_end())?;
        if !outcome.added.is_empty() {
            output::note(format!(
                "dry run: would add the hook for {} to {}",
                outcome.added.join(", "),
                outcome.path.display()
            ));
        }
        return Ok(());
    }
    if outcome.added.is_empty() {
        output::note(format!(
            "the context hook is already installed in {}",
            outcome.path.display()
        ));
    } else {
        output::note(format!(
            "installed the context hook for {} into {}",
            outcome.added.join(", "),
            outcome.path.display()
        ));
        if args.codex {
            output::note(
                "Codex runs project hooks only once trusted: review and trust them with /hooks in \
                 Codex (a changed hook needs trusting again)",
            );
        }
        if args.gemini {
            output::note(
                "Gemini CLI warns before it first runs a new or changed project hook; \
                 `/hooks panel` in Gemini CLI lists them",
            );
        }
    }
    if let Some((repo, root)) = project {
        make_hooks_load(&repo, &root, agent, &outcome.path, args.local)?;
    }
    Ok(())
}

/// After a project install: makes the hooks load in every session worktree where this command
/// can (Codex: the `.codex/` directory it needs), and says plainly what the user must do where
/// it cannot (commit the file; a session created before that needs it merged in).
fn make_hooks_load(
    repo: &crate::git::Repo,
    root: &std::path::Path,
    agent: hook_config::Agent,
    file: &std::path::Path,
    local: bool,
) -> Result<()> {
    use crate::context::loading;
    let rel = file.strip_prefix(root).unwrap_or(file).to_path_buf();
    // A project file Claude Code and Gemini CLI read from the worktree they run in: sessions
    // branch from what is committed, so an uncommitted file reaches none of them.
    if agent != hook_config::Agent::Codex && !local {
        let changed = crate::git::git_ok(
            root,
            [
                std::ffi::OsStr::new("status"),
                "--porcelain".as_ref(),
                "--".as_ref(),
                rel.as_os_str(),
            ],
        )
        .map(|s| !s.trim().is_empty())
        .unwrap_or(true);
        if changed {
            output::note(format!(
                "commit {} in {}: {} reads its hooks from the worktree it runs in, and a \
                 session's worktree has what was committed when it was created",
                rel.display(),
                root.display(),
                agent.name()
            ));
        }
    }
    let store = crate::store::Store::of(repo);
    let mut made = Vec::new();
    let mut silent = Vec::new();
    for record in crate::session::load_all(&store)? {
        let wt = &record.path;
        if !wt.is_dir() || loading_same(wt, root) {
            continue;
        }
        if agent == hook_config::Agent::Codex && !wt.join(".codex").exists() {
            // An empty directory: git tracks none, so the session stays clean.
            std::fs::create_dir(wt.join(".codex"))
                .with_context(|| format!("creating {}", wt.join(".codex").display()))?;
            made.push(record.label.to_string());
        }
        if let Some(h) = loading::hook_load(agent, Some(root), wt).filter(|h| !h.loads) {
            silent.push(format!(
                "{}: {}",
                record.label,
                crate::cli::words::context_loading::describe(&h)
            ));
        }
    }
    if !made.is_empty() {
        output::note(format!(
            "made .codex/ in the worktree of {}: Codex reads the main worktree's hooks for a \
             session only when its worktree has one",
            made.join(", ")
        ));
    }
    if agent == hook_config::Agent::Codex {
        output::note(
            "Codex skips project hooks that are not trusted, without a word: trust them once with \
             /hooks in Codex",
        );
    }
    for line in silent {
        output::warn(format!("hooks will not load in session {line}"));
    }
    Ok(())
}

fn loading_same(a: &std::path::Path, b: &std::path::Path) -> bool {
    let c = |p: &std::path::Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    c(a) == c(b)
}
