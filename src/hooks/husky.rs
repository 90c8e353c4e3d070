//! husky configured in a worktree but not installed there: a fresh clone before `npm install`
//! runs husky's `prepare` script, so `core.hooksPath` does not yet name `.husky/_`.
//!
//! Install puts the guard's block into husky's scripts (`.husky/<hook>`) then as well as into the
//! hooks directory git runs now, so the guard is in force before husky installs and after.

use super::Event;
use std::path::{Path, PathBuf};

/// git's client-side hook names: the files of husky's script directory it turns into hooks.
const GIT_HOOKS: [&str; 14] = [
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "post-rewrite",
    "pre-auto-gc",
];

/// husky's script for `event` in the worktree at `root` (`.husky/<hook>`), whatever the hooks
/// directory is.
pub fn husky_script(root: &Path, event: Event) -> PathBuf {
    root.join(".husky").join(event.name())
}

/// Whether husky is configured in the worktree at `root` but its hooks are not installed there
/// (`hooks_dir` is not husky's): a fresh clone before `npm install` runs husky's `prepare`.
/// Configured means `.husky/` holds a script named as a git hook and `package.json` names husky
/// (a dependency, or a script that runs it). Once husky installs, `.husky/<hook>` is what runs.
pub fn husky_awaiting_install(root: &Path, hooks_dir: &Path) -> bool {
    if super::managers::is_husky_dir(hooks_dir) || hooks_dir.join("h").is_file() {
        return false;
    }
    let scripts = root.join(".husky");
    if !GIT_HOOKS.iter().any(|h| scripts.join(h).is_file()) {
        return false;
    }
    let Ok(text) = crate::store::read_text(&root.join("package.json"), 4 << 20) else {
        return false;
    };
    let Ok(package) = serde_json::from_str::<serde_json::Value>(&text) else {
        return false;
    };
    let depends = ["dependencies", "devDependencies", "optionalDependencies"]
        .iter()
        .any(|k| package.get(k).and_then(|d| d.get("husky")).is_some());
    let runs = package
        .get("scripts")
        .and_then(serde_json::Value::as_object)
        .is_some_and(|scripts| {
            scripts
                .values()
                .filter_map(serde_json::Value::as_str)
                .any(|s| {
                    s.split(|c: char| !c.is_ascii_alphanumeric() && c != '-')
                        .any(|w| w == "husky")
                })
        });
    depends || runs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn worktree(package: Option<&str>, script: bool) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        if let Some(package) = package {
            std::fs::write(dir.path().join("package.json"), package).unwrap();
        }
        std::fs::create_dir_all(dir.path().join(".husky")).unwrap();
        if script {
            std::fs::write(dir.path().join(".husky/pre-commit"), "npm test\n").unwrap();
        }
        dir
    }

    #[test]
    fn configured_means_a_hook_script_and_a_package_naming_husky() {
        for (package, script, awaiting) in [
            (Some(r#"{"devDependencies": {"husky": "^9"}}"#), true, true),
            (Some(r#"{"dependencies": {"husky": "9.1.7"}}"#), true, true),
            (
                Some(r#"{"scripts": {"prepare": "husky || true"}}"#),
                true,
                true,
            ),
            (
                Some(r#"{"scripts": {"prepare": "npx husky .config/husky"}}"#),
                true,
                true,
            ),
            (
                Some(r#"{"scripts": {"prepare": "husky-like"}}"#),
                true,
                false,
            ),
            (Some(r#"{"name": "demo"}"#), true, false),
            (
                Some(r#"{"devDependencies": {"husky": "^9"}}"#),
                false,
                false,
            ),
            (Some("not json"), true, false),
            (None, true, false),
        ] {
            let dir = worktree(package, script);
            let hooks = dir.path().join(".git/hooks");
            assert_eq!(
                husky_awaiting_install(dir.path(), &hooks),
                awaiting,
                "{package:?}, script: {script}"
            );
        }
    }

    #[test]
    fn installed_husky_is_not_awaiting() {
        let dir = worktree(Some(r#"{"devDependencies": {"husky": "^9"}}"#), true);
        assert!(!husky_awaiting_install(
            dir.path(),
            &dir.path().join(".husky/_")
        ));
        let custom = dir.path().join(".config/husky/_");
        std::fs::create_dir_all(&custom).unwrap();
        std::fs::write(custom.join("h"), "#!/usr/bin/env sh\n").unwrap();
        assert!(!husky_awaiting_install(dir.path(), &custom));
        assert_eq!(
            husky_script(dir.path(), Event::PostCommit),
            dir.path().join(".husky/post-commit")
        );
    }
}
