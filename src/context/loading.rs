//! Whether an agent's hooks will load in a worktree, and if not, why and what to do.
//!
//! Each agent finds its hooks in its own places (their hooks documentation, and what Claude Code
//! 2.1.328, Codex 0.169.0 and Gemini CLI 0.61.0 were seen to do):
//! - Claude Code: the user's `~/.claude/settings.json` (or `CLAUDE_CONFIG_DIR`), and the
//!   worktree it runs in: `.claude/settings.json` (committed) and `.claude/settings.local.json`.
//!   A session worktree made before `.claude/settings.json` was committed has no hooks.
//! - Codex: the user's `$CODEX_HOME/hooks.json` (`~/.codex/hooks.json`), and the project's
//!   `.codex/hooks.json`. For a linked worktree Codex reads the main worktree's file, and only
//!   when the linked worktree has a `.codex/` directory of its own. Project hooks run only once
//!   the user trusted them (`/hooks` in Codex); untrusted ones are skipped without a word.
//! - Gemini CLI: the user's `~/.gemini/settings.json`, and the worktree's `.gemini/settings.json`
//!   (it asks before it first runs a new or changed project hook).
//!
//! Invariant: this reads a few small files and runs no process; a file that cannot be read or
//! parsed counts as having no hook.

use super::agents::Agent;
use super::hook_config;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What makes an agent's hooks load in a worktree where they do not; the command line words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fix {
    /// The agent needs this directory in the worktree (Codex: `.codex/`; installing for it
    /// makes it).
    MakeDir { dir: PathBuf },
    /// The project's hooks directory `dir` exists only in the main worktree: commit it (or
    /// install for the user: `user_file` is the agent's user hook file when `context install
    /// --user` does not write it, [`Facts::user_install`](super::agents::Facts::user_install)).
    CommitProjectDir {
        dir: String,
        user_file: Option<PathBuf>,
    },
}

/// One agent's answer for one worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookLoad {
    pub agent: Agent,
    /// The agent will run our hook in this worktree (subject to `condition`).
    pub loads: bool,
    /// Where the hook comes from, or why it does not load.
    pub why: String,
    /// What must still hold for it to run (Codex: trusted).
    pub condition: Option<String>,
    /// What the user can do to make it load.
    pub fix: Option<Fix>,
}

/// Whether the JSON file at `path` configures our context hook for any event.
pub fn file_has_hook(path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    let Ok(v) = serde_json::from_str::<Value>(&text) else {
        return false;
    };
    v.get("hooks")
        .and_then(Value::as_object)
        .is_some_and(|events| {
            events.values().any(|groups| {
                groups
                    .as_array()
                    .is_some_and(|g| g.iter().any(hook_config::group_has_ours))
            })
        })
}

/// The user-level file of each agent.
pub fn user_file(agent: Agent) -> Option<PathBuf> {
    (agent.facts().user_hooks)()
}

/// The project files of an agent, relative to a worktree's root.
pub fn project_files(agent: Agent) -> &'static [&'static str] {
    agent.facts().project_hooks
}

fn first_with_hook(root: &Path, agent: Agent) -> Option<&'static str> {
    project_files(agent)
        .iter()
        .copied()
        .find(|rel| file_has_hook(&root.join(rel)))
}

fn same(a: &Path, b: &Path) -> bool {
    let c = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    c(a) == c(b)
}

/// Whether `agent`'s hooks load in `worktree`, whose repository's main worktree is `main`.
/// `None` when the hook is installed nowhere this agent would look, nor in the main worktree:
/// there is nothing to say about an agent the user does not use.
pub fn hook_load(agent: Agent, main: Option<&Path>, worktree: &Path) -> Option<HookLoad> {
    hook_load_with(agent, user_file(agent).as_deref(), main, worktree)
}

/// [`hook_load`] with the agent's user-level file given.
pub fn hook_load_with(
    agent: Agent,
    user: Option<&Path>,
    main: Option<&Path>,
    worktree: &Path,
) -> Option<HookLoad> {
    let linked = main.is_some_and(|m| !same(m, worktree));
    let found = |why: String, condition: Option<&str>| HookLoad {
        agent,
        loads: true,
        why,
        condition: condition.map(str::to_string),
        fix: None,
    };
    let trust = agent.facts().needs_trust.map(|how| {
        format!(
            "trusted in {} (`{how}`; a changed hook needs trusting again)",
            agent.name()
        )
    });
    if let Some(file) = user.filter(|f| file_has_hook(f)) {
        let condition = trust.as_deref();
        return Some(found(format!("from {}", file.display()), condition));
    }
    let in_main = main.and_then(|m| first_with_hook(m, agent).map(|rel| (m, rel)));
    match agent.facts().linked_needs_dir {
        Some(needed) => {
            // Read from the main worktree's file, also for a linked worktree.
            let (m, rel) = match (in_main, linked) {
                (Some(x), _) => x,
                (None, false) => (worktree, first_with_hook(worktree, agent)?),
                (None, true) => return None,
            };
            let source = m.join(rel);
            if linked && !worktree.join(needed).is_dir() {
                return Some(HookLoad {
                    agent,
                    loads: false,
                    why: format!(
                        "{} reads {} for this worktree only when it has a {needed}/ \
                         directory of its own, and it has none",
                        agent.name(),
                        source.display()
                    ),
                    condition: None,
                    fix: Some(Fix::MakeDir {
                        dir: worktree.join(needed),
                    }),
                });
            }
            let condition = trust.as_deref();
            Some(found(format!("from {}", source.display()), condition))
        }
        None => {
            if let Some(rel) = first_with_hook(worktree, agent) {
                return Some(found(
                    format!("from {}", worktree.join(rel).display()),
                    None,
                ));
            }
            let (_, rel) = in_main.filter(|_| linked)?;
            let dir = rel.split('/').next().unwrap_or(rel);
            Some(HookLoad {
                agent,
                loads: false,
                why: format!(
                    "{} reads its project hooks from the worktree it runs in, and this \
                     worktree has no {rel} with the hook (only the main worktree has)",
                    agent.name()
                ),
                condition: None,
                fix: Some(Fix::CommitProjectDir {
                    dir: dir.to_string(),
                    user_file: user
                        .filter(|_| !agent.facts().user_install)
                        .map(Path::to_path_buf),
                }),
            })
        }
    }
}

/// [`hook_load`] for every agent, the ones with something to say.
pub fn hooks_load(main: Option<&Path>, worktree: &Path) -> Vec<HookLoad> {
    Agent::ALL
        .into_iter()
        .filter_map(|a| hook_load(a, main, worktree))
        .collect()
}

/// Makes the hooks load in a new session worktree where that takes no more than a directory:
/// Codex reads the main worktree's `.codex/hooks.json` for a linked worktree only when it has a
/// `.codex/` of its own (an empty one; git tracks none, so the session stays clean). Returns
/// what still does not load there (for the caller to print:
/// `cli::words::context_loading::describe`). For `create`: `for h in
/// loading::prepare_worktree(repo.main_worktree.as_deref(), &path)? { warn(describe(&h)) }`.
pub fn prepare_worktree(main: Option<&Path>, worktree: &Path) -> std::io::Result<Vec<HookLoad>> {
    for agent in Agent::ALL {
        let Some(needed) = agent.facts().linked_needs_dir else {
            continue;
        };
        let in_main = main.is_some_and(|m| {
            project_files(agent)
                .iter()
                .any(|rel| file_has_hook(&m.join(rel)))
        });
        let needs_dir = in_main && hook_load(agent, main, worktree).is_some_and(|h| !h.loads);
        if needs_dir && !worktree.join(needed).exists() {
            std::fs::create_dir(worktree.join(needed))?;
        }
    }
    Ok(hooks_load(main, worktree)
        .into_iter()
        .filter(|h| !h.loads)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn hooks_file(dir: &Path, rel: &str, agent: Agent) {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut v = serde_json::json!({});
        let worktree = hook_config::WorktreeHooks {
            create: "git session worktree-hook create",
            remove: "git session worktree-hook remove",
        };
        hook_config::merge_for(agent, &mut v, &path, &worktree).unwrap();
        std::fs::write(&path, v.to_string()).unwrap();
    }

    #[test]
    fn where_each_agent_looks() {
        let tmp = tempfile::tempdir().unwrap();
        let main = tmp.path().join("main");
        let wt = tmp.path().join("wt");
        std::fs::create_dir_all(&main).unwrap();
        std::fs::create_dir_all(&wt).unwrap();
        let load = |a, w: &Path| hook_load_with(a, None, Some(&main), w);
        for a in Agent::ALL {
            assert_eq!(load(a, &wt), None, "installed nowhere: nothing to say");
        }
        for a in Agent::ALL {
            hooks_file(&main, a.facts().project_hooks[0], a);
        }
        for a in Agent::ALL {
            let h = load(a, &wt).unwrap();
            assert!(!h.loads && h.fix.is_some(), "{a:?}: {h:?}");
        }
        // Committing the directory is the fix; the user file is named where `install --user`
        // does not write it.
        let user = tmp.path().join("user.json");
        let mut seen = BTreeSet::new();
        for a in Agent::ALL {
            let h = hook_load_with(a, Some(&user), Some(&main), &wt).unwrap();
            if let Some(Fix::CommitProjectDir { user_file, .. }) = h.fix {
                let want = (!a.facts().user_install).then(|| user.clone());
                assert_eq!(user_file, want, "{a:?}");
                seen.insert(a.facts().user_install);
            }
        }
        assert_eq!(
            seen.len(),
            2,
            "both kinds of agent asked to commit: {seen:?}"
        );
        std::fs::create_dir_all(wt.join(".codex")).unwrap();
        let codex = load(Agent::Codex, &wt).unwrap();
        assert!(codex.loads && codex.condition.is_some(), "{codex:?}");
        hooks_file(&wt, ".claude/settings.json", Agent::Claude);
        let claude = load(Agent::Claude, &wt).unwrap();
        assert!(claude.loads, "{claude:?}");
        assert!(claude.why.starts_with("from "), "{claude:?}");
        // A new worktree gets its .codex/ directory; what still does not load is returned.
        let fresh = tmp.path().join("fresh");
        std::fs::create_dir_all(&fresh).unwrap();
        let missing: Vec<Agent> = prepare_worktree(Some(&main), &fresh)
            .unwrap()
            .iter()
            .map(|h| h.agent)
            .collect();
        assert!(fresh.join(".codex").is_dir());
        assert!(!missing.contains(&Agent::Codex), "{missing:?}");
        // The main worktree itself.
        assert!(load(Agent::Gemini, &main).unwrap().loads);
        // A user-level file wins everywhere.
        let user = tmp.path().join("user.json");
        hooks_file(tmp.path(), "user.json", Agent::Gemini);
        let h = hook_load_with(Agent::Gemini, Some(&user), Some(&main), &wt).unwrap();
        assert!(h.loads && h.why.contains("user.json"), "{h:?}");
        // GitHub Copilot CLI's flat handlers are recognised, in its project file and its own.
        hooks_file(&wt, ".github/hooks/git-session.json", Agent::Copilot);
        assert!(load(Agent::Copilot, &wt).unwrap().loads);
        hooks_file(tmp.path(), "copilot.json", Agent::Copilot);
        let copilot = tmp.path().join("copilot.json");
        let h = hook_load_with(Agent::Copilot, Some(&copilot), None, &fresh).unwrap();
        assert!(h.loads && h.why.contains("copilot.json"), "{h:?}");
    }
}
