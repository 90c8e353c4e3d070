//! Where git looks for a worktree's hooks, read as git reads it.
//!
//! - `core.hooksPath` when set: absolute as given, relative against the root of the worktree the
//!   commit is made in (so `.husky/_` names a different directory in every worktree, and one
//!   that git ignores may exist in the main worktree only); otherwise `<common dir>/hooks`,
//!   shared by every worktree.
//! - Config-based hooks (`hook.<name>.event` and `hook.<name>.command`) run from git 2.54 on,
//!   beside the hooks directory; `hook.<event>.enabled=false` and `hook.<name>.enabled=false`
//!   switch them off.

use super::Event;
use crate::git::{Checkout, ConfigView};
use anyhow::Context as _;
use std::path::{Path, PathBuf};

/// The first git release that runs config-based hooks.
pub const CONFIG_HOOKS_SINCE: (u32, u32) = (2, 54);

/// The friendly name of our config-based hook for `event` (never an event's own name: git
/// refuses those).
pub fn config_hook_name(event: Event) -> &'static str {
    match event {
        Event::PreCommit => "git-session-guard-pre-commit",
        Event::PostCommit => "git-session-guard-post-commit",
        Event::PrePush => "git-session-guard-pre-push",
    }
}

/// What git's configuration says about hooks for one worktree.
pub struct HookConfig {
    /// `core.hooksPath` as written (not resolved), if set.
    pub hooks_path: Option<PathBuf>,
    /// Config-based hooks: `(name, events, command, enabled)`.
    pub configured: Vec<ConfiguredHook>,
    /// `hook.<event>.enabled=false` for these events.
    pub events_off: Vec<String>,
    /// `extensions.worktreeConfig`: each worktree may have settings of its own.
    pub worktree_config: bool,
}

#[derive(Debug, Clone)]
pub struct ConfiguredHook {
    pub name: String,
    pub events: Vec<String>,
    pub command: Option<String>,
    pub enabled: bool,
}

impl HookConfig {
    /// Reads the configuration the worktree at `worktree` sees (its own `config.worktree`
    /// included where git has one).
    pub fn read(worktree: &Path) -> anyhow::Result<HookConfig> {
        let config = Checkout::open(worktree)?.config()?;
        Ok(HookConfig::from_view(&config))
    }

    pub fn from_view(config: &ConfigView) -> HookConfig {
        let hooks_path = config.get_path("core.hooksPath");
        let mut configured: Vec<ConfiguredHook> = Vec::new();
        let mut events_off = Vec::new();
        for (key, value) in config.entries(r"^hook\..*\.(event|command|enabled)$") {
            // hook.<name>.<var>: the name may itself hold dots.
            let Some(rest) = key.strip_prefix("hook.") else {
                continue;
            };
            let Some((name, var)) = rest.rsplit_once('.') else {
                continue;
            };
            let var = var.to_ascii_lowercase();
            if var == "enabled" && is_event_name(name) {
                if is_false(&value) {
                    events_off.push(name.to_string());
                } else {
                    events_off.retain(|e| e != name);
                }
                continue;
            }
            let hook = match configured.iter_mut().find(|h| h.name == name) {
                Some(h) => h,
                None => {
                    configured.push(ConfiguredHook {
                        name: name.to_string(),
                        events: Vec::new(),
                        command: None,
                        enabled: true,
                    });
                    configured.last_mut().expect("just pushed")
                }
            };
            match var.as_str() {
                // An empty value resets the list, as git documents.
                "event" if value.is_empty() => hook.events.clear(),
                "event" => hook.events.push(value),
                // The last value wins.
                "command" => hook.command = Some(value),
                "enabled" => hook.enabled = !is_false(&value),
                _ => {}
            }
        }
        HookConfig {
            hooks_path,
            configured,
            events_off,
            worktree_config: config.get_bool("extensions.worktreeConfig") == Some(true),
        }
    }

    /// The enabled config-based hooks that run the guard for `event`, by name.
    pub fn guard_hooks(&self, event: Event) -> Vec<&ConfiguredHook> {
        if self.events_off.iter().any(|e| e == event.name()) {
            return Vec::new();
        }
        self.configured
            .iter()
            .filter(|h| {
                h.enabled
                    && h.events.iter().any(|e| e == event.name())
                    && h.command
                        .as_deref()
                        .is_some_and(|c| super::runs_guard(c, event))
            })
            .collect()
    }

    /// The hooks directory for a commit made in `worktree` (`None`: a bare repository's
    /// `core.hooksPath` is relative and there is no worktree to anchor it).
    pub fn hooks_dir(&self, common_dir: &Path, worktree: Option<&Path>) -> Option<PathBuf> {
        match &self.hooks_path {
            Some(p) if p.is_absolute() => Some(p.clone()),
            Some(p) => worktree.map(|w| w.join(p)),
            None => Some(common_dir.join("hooks")),
        }
    }

    /// `core.hooksPath` when it is relative: it names a directory per worktree.
    pub fn relative_hooks_path(&self) -> Option<&Path> {
        self.hooks_path.as_deref().filter(|p| p.is_relative())
    }
}

fn is_false(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "false" | "no" | "off" | "0" | ""
    )
}

/// The events git knows (githooks(5)); a name among them in `hook.<name>.enabled` switches the
/// whole event.
fn is_event_name(name: &str) -> bool {
    matches!(
        name,
        "applypatch-msg"
            | "pre-applypatch"
            | "post-applypatch"
            | "pre-commit"
            | "pre-merge-commit"
            | "prepare-commit-msg"
            | "commit-msg"
            | "post-commit"
            | "pre-rebase"
            | "post-checkout"
            | "post-merge"
            | "pre-push"
            | "pre-receive"
            | "update"
            | "proc-receive"
            | "post-receive"
            | "post-update"
            | "reference-transaction"
            | "push-to-checkout"
            | "pre-auto-gc"
            | "post-rewrite"
            | "sendemail-validate"
            | "fsmonitor-watchman"
            | "p4-changelist"
            | "p4-prepare-changelist"
            | "p4-post-changelist"
            | "p4-pre-submit"
            | "post-index-change"
    )
}

/// The version of the `git` on `PATH`, as `(major, minor)`; `None` when it cannot be run or
/// says something else.
pub fn git_version(cwd: &Path) -> Option<(u32, u32)> {
    let out = crate::git::Run::new(cwd, ["--version"])
        .deadline(std::time::Duration::from_secs(10))
        .run()
        .ok()?;
    parse_version(&out.stdout)
}

fn parse_version(text: &str) -> Option<(u32, u32)> {
    let v = text.trim().strip_prefix("git version ")?;
    let mut parts = v.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// Whether the git on `PATH` runs config-based hooks.
pub fn git_runs_config_hooks(cwd: &Path) -> Option<bool> {
    git_version(cwd).map(|v| v >= CONFIG_HOOKS_SINCE)
}

/// Copies the directory a relative `core.hooksPath` names from the worktree at `main` (the main
/// worktree, or a session that has it when the main one does not) into the worktree at `target`,
/// where it does not exist yet (an ignored, generated directory such as husky's `.husky/_`).
/// Regular files only, modes kept; returns the directory made.
pub fn materialize(main: &Path, target: &Path) -> anyhow::Result<Option<std::path::PathBuf>> {
    if main == target || !target.is_dir() {
        return Ok(None);
    }
    let config = HookConfig::read(target)?;
    let Some(rel) = config.relative_hooks_path() else {
        return Ok(None);
    };
    // Never outside the worktree: `..` in the setting names a shared place, not a per-worktree
    // one.
    if rel
        .components()
        .any(|c| !matches!(c, std::path::Component::Normal(_)))
    {
        return Ok(None);
    }
    let (from, to) = (main.join(rel), target.join(rel));
    if !from.is_dir() || std::fs::symlink_metadata(&to).is_ok() {
        return Ok(None);
    }
    std::fs::create_dir_all(&to).with_context(|| format!("creating {}", to.display()))?;
    const MAX_FILES: usize = 256;
    for entry in std::fs::read_dir(&from)?.take(MAX_FILES) {
        let entry = entry?;
        let meta = std::fs::symlink_metadata(entry.path())?;
        if !meta.is_file() || meta.len() > 1 << 20 {
            continue;
        }
        let dest = to.join(entry.file_name());
        std::fs::copy(entry.path(), &dest)
            .with_context(|| format!("copying {} into {}", entry.path().display(), to.display()))?;
        std::fs::set_permissions(
            &dest,
            <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(
                std::os::unix::fs::PermissionsExt::mode(&meta.permissions()),
            ),
        )?;
    }
    Ok(Some(to))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_as_git_prints_them() {
        assert_eq!(parse_version("git version 2.47.3\n"), Some((2, 47)));
        assert_eq!(parse_version("git version 2.55.0.rc1"), Some((2, 55)));
        assert_eq!(
            parse_version("git version 2.39.5 (Apple Git-154)"),
            Some((2, 39))
        );
        assert_eq!(parse_version("hub version 2"), None);
    }
}
