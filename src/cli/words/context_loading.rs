//! The words for whether an agent's hooks load in a worktree ([`HookLoad`], [`Fix`]).

use crate::context::loading::{Fix, HookLoad};

/// One line for people: `Claude Code: hooks load (from ...)` or `Codex: hooks do not load:
/// ...; to fix: ...`.
pub fn describe(h: &HookLoad) -> String {
    let mut s = if h.loads {
        format!("{}: hooks load ({})", h.agent.name(), h.why)
    } else {
        format!("{}: hooks do not load: {}", h.agent.name(), h.why)
    };
    if let Some(c) = &h.condition {
        s.push_str(&format!(", once {c}"));
    }
    if let Some(f) = &h.fix {
        s.push_str(&format!("; to fix: {}", fix(h.agent, f)));
    }
    s
}

fn fix(agent: crate::context::agents::Agent, f: &Fix) -> String {
    match f {
        Fix::MakeDir { dir } => format!(
            "`git session context install --agent {}` makes one (or `mkdir {}`)",
            agent.id(),
            dir.display()
        ),
        Fix::CommitProjectDir { dir, user_file } => format!(
            "commit {dir}/ in the main worktree: sessions created after that have it; bring it \
             into this one with `git merge` (or install for the user with `git session context \
             install --user`{})",
            match user_file {
                Some(file) => format!(
                    ", for {}; {}'s user file is {}",
                    user_installs(),
                    agent.name(),
                    file.display()
                ),
                None => String::new(),
            }
        ),
    }
}

/// The agents `context install --user` installs for, by name.
fn user_installs() -> String {
    crate::context::agents::Agent::ALL
        .into_iter()
        .filter(|a| a.facts().user_install)
        .map(|a| a.name())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::agents::Agent;
    use std::path::PathBuf;

    /// An agent whose user file `install --user` does not write is told where that file is;
    /// one whose it writes is not.
    #[test]
    fn the_commit_fix_names_a_user_file_install_does_not_write() {
        let load = |agent, user_file: Option<&str>| HookLoad {
            agent,
            loads: false,
            why: "w".into(),
            condition: None,
            fix: Some(Fix::CommitProjectDir {
                dir: ".x".into(),
                user_file: user_file.map(PathBuf::from),
            }),
        };
        let gemini = describe(&load(Agent::Gemini, Some("/h/.gemini/settings.json")));
        assert!(
            gemini.ends_with(
                "install --user`, for Claude Code; Gemini CLI's user file is \
                 /h/.gemini/settings.json)"
            ),
            "{gemini}"
        );
        let claude = describe(&load(Agent::Claude, None));
        assert!(claude.ends_with("install --user`)"), "{claude}");
    }
}
