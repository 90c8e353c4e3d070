//! The hook managers' documented switches for skipping hooks, read from an environment: with
//! one of them set, the manager skips the guard it carries, and a commit made in that
//! environment is not checked.
//!
//! - husky 9: `HUSKY=0`, in the environment or set by `${XDG_CONFIG_HOME:-$HOME/.config}/husky/
//!   init.sh`, which its dispatcher sources first; it skips every hook.
//! - lefthook: `LEFTHOOK=0` or `LEFTHOOK=false` (every hook), `LEFTHOOK_EXCLUDE` naming our
//!   command `git-session-guard`.
//! - pre-commit: `SKIP` naming our hook id `git-session-guard` (a comma-separated list); a guard
//!   in the `<hook>.legacy` file pre-commit runs first is not skipped by it.
//! - simple-git-hooks: `SKIP_SIMPLE_GIT_HOOKS=1`, checked at the top of its generated hook
//!   files, so it skips the guard where the guard's line comes after that check.
//!
//! Invariant: only a value the manager itself acts on counts (`HUSKY=1`, `LEFTHOOK=1`, a `SKIP`
//! of other ids skip nothing), so a status is never "off" for a variable that changes nothing.

use super::managers::Manager;
use super::text::runs_guard;
use super::Event;
use std::path::{Path, PathBuf};

/// The name our guard goes by in lefthook's and pre-commit's configuration.
pub const GUARD_NAME: &str = "git-session-guard";

/// A switch that makes a manager skip the guard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skip {
    pub manager: Manager,
    pub variable: &'static str,
    pub value: String,
    /// The file that sets it, when it is not set in the environment itself (husky's init.sh).
    pub set_in: Option<PathBuf>,
}

/// The environment variables, as a function (the process's own, or a test's).
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// This process's environment.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The switch set in `env` that makes `manager` skip the guard it runs from `carrier`.
pub fn by_manager(manager: Manager, carrier: &Path, env: Env) -> Option<Skip> {
    let skip = |variable: &'static str, value: String| Skip {
        manager,
        variable,
        value,
        set_in: None,
    };
    match manager {
        Manager::Husky => match env("HUSKY") {
            Some(v) if v == "0" => Some(skip("HUSKY", v)),
            // A value in the environment wins over nothing; init.sh, sourced by the
            // dispatcher, can still set it.
            _ => husky_init(env).map(|set_in| Skip {
                set_in: Some(set_in),
                ..skip("HUSKY", "0".to_string())
            }),
        },
        Manager::Lefthook => {
            if let Some(v) = env("LEFTHOOK").filter(|v| v == "0" || v == "false") {
                return Some(skip("LEFTHOOK", v));
            }
            env("LEFTHOOK_EXCLUDE")
                .filter(|v| names_guard(v))
                .map(|v| skip("LEFTHOOK_EXCLUDE", v))
        }
        Manager::PreCommit => {
            let legacy = carrier
                .file_name()
                .is_some_and(|n| n.to_string_lossy().ends_with(".legacy"));
            env("SKIP")
                .filter(|v| !legacy && names_guard(v))
                .map(|v| skip("SKIP", v))
        }
        Manager::SimpleGitHooks => env("SKIP_SIMPLE_GIT_HOOKS")
            .filter(|v| v == "1")
            .map(|v| skip("SKIP_SIMPLE_GIT_HOOKS", v)),
    }
}

/// The switch set in `env` that makes the hook file `text` skip its own guard line: a file
/// simple-git-hooks generated checks `SKIP_SIMPLE_GIT_HOOKS` at its top, before the guard's
/// line once the manager wrote it from its configuration (our block put first stays first).
pub fn by_hook_file(text: &str, event: Event, path: &Path, env: Env) -> Option<Skip> {
    let check = text.find("SKIP_SIMPLE_GIT_HOOKS")?;
    let guard_line = text
        .lines()
        .scan(0usize, |at, line| {
            let start = *at;
            *at += line.len() + 1;
            Some((start, line))
        })
        .find(|(_, line)| runs_guard(line, event))
        .map(|(start, _)| start)?;
    (check < guard_line)
        .then(|| by_manager(Manager::SimpleGitHooks, path, env))
        .flatten()
}

fn names_guard(list: &str) -> bool {
    list.split(',').any(|n| n.trim() == GUARD_NAME)
}

/// husky's init.sh when a line of it sets `HUSKY=0`.
fn husky_init(env: Env) -> Option<PathBuf> {
    let config = env("XDG_CONFIG_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| Path::new(&h).join(".config")))?;
    let init = config.join("husky/init.sh");
    let text = crate::store::read_text(&init, 1 << 20).ok()?;
    text.lines()
        .map(|l| l.trim().trim_start_matches("export ").trim())
        .any(|l| matches!(l, "HUSKY=0" | "HUSKY='0'" | "HUSKY=\"0\""))
        .then_some(init)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    /// A manager, its carrier, the environment, and the switch expected to count.
    type Case = (
        Manager,
        &'static Path,
        &'static [(&'static str, &'static str)],
        Option<&'static str>,
    );

    #[test]
    fn only_values_the_manager_acts_on_count() {
        let yaml = Path::new("/w/.pre-commit-config.yaml");
        let legacy = Path::new("/w/.git/hooks/pre-commit.legacy");
        let cases: [Case; 12] = [
            (Manager::Husky, yaml, &[("HUSKY", "0")], Some("HUSKY")),
            (Manager::Husky, yaml, &[("HUSKY", "1")], None),
            (
                Manager::Lefthook,
                yaml,
                &[("LEFTHOOK", "false")],
                Some("LEFTHOOK"),
            ),
            (Manager::Lefthook, yaml, &[("LEFTHOOK", "1")], None),
            (
                Manager::Lefthook,
                yaml,
                &[("LEFTHOOK_EXCLUDE", "lint, git-session-guard")],
                Some("LEFTHOOK_EXCLUDE"),
            ),
            (
                Manager::Lefthook,
                yaml,
                &[("LEFTHOOK_EXCLUDE", "lint")],
                None,
            ),
            (
                Manager::PreCommit,
                yaml,
                &[("SKIP", "flake8,git-session-guard")],
                Some("SKIP"),
            ),
            (
                Manager::PreCommit,
                legacy,
                &[("SKIP", "git-session-guard")],
                None,
            ),
            (Manager::PreCommit, yaml, &[("SKIP", "git-session")], None),
            (
                Manager::SimpleGitHooks,
                yaml,
                &[("SKIP_SIMPLE_GIT_HOOKS", "1")],
                Some("SKIP_SIMPLE_GIT_HOOKS"),
            ),
            (
                Manager::SimpleGitHooks,
                yaml,
                &[("SKIP_SIMPLE_GIT_HOOKS", "0")],
                None,
            ),
            (Manager::Husky, yaml, &[], None),
        ];
        for (manager, carrier, pairs, want) in cases {
            let got = by_manager(manager, carrier, &env(pairs)).map(|s| s.variable);
            assert_eq!(got, want, "{manager:?} {pairs:?}");
        }
    }

    #[test]
    fn husky_init_sh_setting_husky_0_counts() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("husky")).unwrap();
        std::fs::write(dir.path().join("husky/init.sh"), "# mine\nexport HUSKY=0\n").unwrap();
        let config = dir.path().to_str().unwrap().to_string();
        let env = move |k: &str| (k == "XDG_CONFIG_HOME").then(|| config.clone());
        let skip = by_manager(Manager::Husky, Path::new("/w/.husky/pre-commit"), &env).unwrap();
        assert_eq!(skip.set_in, Some(dir.path().join("husky/init.sh")));
    }

    #[test]
    fn a_simple_git_hooks_file_skips_only_a_guard_after_its_check() {
        let check = "if [ \"$SKIP_SIMPLE_GIT_HOOKS\" = \"1\" ]; then\n    exit 0\nfi\n";
        let guard = "git-session guard pre-commit\n";
        let set = env(&[("SKIP_SIMPLE_GIT_HOOKS", "1")]);
        let p = Path::new("/w/.git/hooks/pre-commit");
        let after = format!("#!/bin/sh\n{check}{guard}");
        let before = format!("#!/bin/sh\n{guard}{check}");
        assert!(by_hook_file(&after, Event::PreCommit, p, &set).is_some());
        assert!(by_hook_file(&before, Event::PreCommit, p, &set).is_none());
        assert!(by_hook_file(&after, Event::PreCommit, p, &env(&[])).is_none());
    }
}
