//! `git session context install`: picks the settings file (the project's, the user's, the
//! machine-local one, Codex's or Gemini CLI's), lets the domain merge the hooks into it
//! (`crate::context::hook_config`), says what it installed, and makes the hooks load in the
//! session worktrees where it can.
//!
//! Invariant: the command lines written into the file are fixed here and in the domain
//! (`hook_config::COMMAND`, [`WORKTREE_HOOKS`]): a changed line is a hook installed twice.

use crate::cli::output;
use crate::cli::user_error::UserError;
use crate::context::agents::Agent;
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
    /// The agent whose hook file to install into: Claude Code's .claude/settings.json, Codex's
    /// .codex/hooks.json, Gemini CLI's .gemini/settings.json, GitHub Copilot CLI's
    /// .github/hooks/git-session.json
    #[arg(long, value_name = "AGENT", value_parser = clap::builder::PossibleValuesParser::new(Agent::ids()))]
    pub agent: Option<String>,
    /// Install into the user's ~/.claude/settings.json instead of the project's
    #[arg(long, conflicts_with = "local")]
    pub user: bool,
    /// Install into the project's git-ignored .claude/settings.local.json (this machine only)
    #[arg(long)]
    pub local: bool,
    /// Same as --agent codex
    #[arg(long, hide = true, conflicts_with_all = ["local", "user", "agent"])]
    pub codex: bool,
    /// Same as --agent gemini
    #[arg(long, hide = true, conflicts_with_all = ["local", "user", "codex", "agent"])]
    pub gemini: bool,
    /// Print the resulting settings file and change nothing
    #[arg(long)]
    pub dry_run: bool,
}

impl InstallArgs {
    fn agent(&self) -> Agent {
        // The old flags, kept as hidden aliases of `--agent` (issue 33): the one place outside
        // the agent table that names agents (tests/it/architecture_agents.rs allows it).
        let old = if self.codex {
            Some(Agent::Codex)
        } else if self.gemini {
            Some(Agent::Gemini)
        } else {
            None
        };
        self.agent
            .as_deref()
            .and_then(Agent::from_id)
            .or(old)
            .unwrap_or_else(Agent::default_agent)
    }
}

pub(super) fn run(args: InstallArgs) -> Result<()> {
    let agent = args.agent();
    let facts = agent.facts();
    let refused = (args.user && !facts.user_install) || (args.local && facts.local_hooks.is_none());
    if refused {
        let flag = if args.user { "--user" } else { "--local" };
        let takes = |a: &Agent| {
            let f = a.facts();
            if args.user {
                f.user_install
            } else {
                f.local_hooks.is_some()
            }
        };
        let names: Vec<&str> = Agent::ALL
            .iter()
            .filter(|a| takes(a))
            .map(|a| a.name())
            .collect();
        return Err(UserError::usage(format!(
            "{flag} is for {}'s settings; {} reads its hooks from {}",
            names.join(", "),
            facts.name,
            facts.project_hooks.join(", ")
        ))
        .hinted("install into the repository's file: drop the flag")
        .into());
    }
    let mut project: Option<(crate::git::Repo, std::path::PathBuf)> = None;
    let path = if args.user {
        hook_config::user_file(agent)?
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
        let rel = match facts.local_hooks.filter(|_| args.local) {
            Some(local) => local,
            None => facts.project_hooks[0],
        };
        let path = root.join(rel);
        project = Some((repo, root));
        path
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
        if let Some(note) = agent.facts().install_note {
            output::note(note);
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
    agent: Agent,
    file: &std::path::Path,
    local: bool,
) -> Result<()> {
    use crate::context::loading;
    let rel = file.strip_prefix(root).unwrap_or(file).to_path_buf();
    // A project file Claude Code and Gemini CLI read from the worktree they run in: sessions
    // branch from what is committed, so an uncommitted file reaches none of them.
    if agent.facts().linked_needs_dir.is_none() && !local {
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
        if let Some(needed) = agent.facts().linked_needs_dir {
            if !wt.join(needed).exists() {
                // An empty directory: git tracks none, so the session stays clean.
                std::fs::create_dir(wt.join(needed))
                    .with_context(|| format!("creating {}", wt.join(needed).display()))?;
                made.push(record.label.to_string());
            }
        }
        if let Some(h) = loading::hook_load(agent, Some(root), wt).filter(|h| !h.loads) {
            silent.push(format!(
                "{}: {}",
                record.label,
                crate::cli::words::context_loading::describe(&h)
            ));
        }
    }
    if let Some(needed) = agent.facts().linked_needs_dir.filter(|_| !made.is_empty()) {
        output::note(format!(
            "made {needed}/ in the worktree of {}: {} reads the main worktree's hooks for a \
             session only when its worktree has one",
            made.join(", "),
            agent.name()
        ));
    }
    if let Some(how) = agent.facts().needs_trust {
        output::note(format!(
            "{name} skips project hooks that are not trusted, without a word: trust them once \
             with {how} in {name}",
            name = agent.name()
        ));
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
