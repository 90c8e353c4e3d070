//! Removing the guard: the undo of every route [`super::wire`] installs by, for one worktree.
//!
//! Invariant: only what install added goes (our config hooks, our marked blocks, files that hold
//! nothing but our block); a hook install moved aside comes back under its own name, bytes and
//! mode intact.

use super::change::Change;
use super::hook_file::{aside_path, mode_of, read_hook, write_file};
use super::managers::{self, Manager};
use super::place::{config_hook_name, HookConfig};
use super::text::is_ours_alone;
use super::text::{self, block_range};
use super::Event;
use anyhow::{Context, Result};
use std::path::Path;

/// Removes the guard from every place install may have put it for the worktree at `worktree`.
pub fn uninstall(common_dir: &Path, worktree: &Path) -> Result<Vec<Change>> {
    let config = HookConfig::read(worktree)?;
    let mut changes = Vec::new();
    for event in Event::EVERY {
        let name = config_hook_name(event);
        if config.configured.iter().any(|h| h.name == name) {
            crate::git::git_ok(
                worktree,
                [
                    "config",
                    "--local",
                    "--remove-section",
                    &format!("hook.{name}"),
                ],
            )?;
            changes.push(Change::ConfigHookRemoved {
                name: name.to_string(),
            });
        }
    }
    let dir = config
        .hooks_dir(common_dir, Some(worktree))
        .context("finding the hooks directory")?;
    for event in Event::EVERY {
        remove_from_hook_file(&dir.join(event.name()), &mut changes)?;
        if managers::is_husky_dir(&dir) {
            let carrier = &managers::carriers(Manager::Husky, worktree, &dir, event)[0];
            remove_block_from(carrier, &mut changes)?;
        } else {
            // Put there while husky was configured but not installed.
            remove_block_from(&super::husky::husky_script(worktree, event), &mut changes)?;
        }
        remove_block_from(&dir.join(format!("{}.legacy", event.name())), &mut changes)?;
    }
    for manager in [Manager::Lefthook, Manager::PreCommit] {
        for carrier in managers::carriers(manager, worktree, &dir, Event::PreCommit) {
            if carrier
                .extension()
                .is_some_and(|e| e == "yml" || e == "yaml")
            {
                remove_block_from(&carrier, &mut changes)?;
            }
        }
    }
    if let Some((carrier, in_package)) = managers::simple_git_hooks_config(worktree) {
        if let Ok(text) = read_hook(&carrier) {
            if let Ok(Some(after)) = managers::simple_git_hooks_without_guard(&text, in_package) {
                write_file(&carrier, &after, mode_of(&carrier))?;
                changes.push(Change::BlockRemoved { path: carrier });
            }
        }
    }
    Ok(changes)
}

/// Takes our block out of the hook file at `target`: the whole file goes when nothing else is
/// left (and the hook it replaced comes back), else the rest stays.
pub(super) fn remove_from_hook_file(target: &Path, changes: &mut Vec<Change>) -> Result<()> {
    let aside = aside_path(target);
    let Some(text) = read_hook(target).ok().filter(|t| block_range(t).is_some()) else {
        changes.push(Change::Absent {
            path: target.to_path_buf(),
        });
        return Ok(());
    };
    if is_ours_alone(&text) {
        std::fs::remove_file(target).with_context(|| format!("removing {}", target.display()))?;
        if std::fs::symlink_metadata(&aside).is_ok() {
            std::fs::rename(&aside, target).with_context(|| {
                format!("restoring {} to {}", aside.display(), target.display())
            })?;
            changes.push(Change::Restored {
                path: target.to_path_buf(),
            });
        } else {
            changes.push(Change::FileRemoved {
                path: target.to_path_buf(),
            });
        }
    } else {
        let rest = text::without_block(&text).expect("checked");
        write_file(target, &rest, mode_of(target))?;
        changes.push(Change::BlockRemoved {
            path: target.to_path_buf(),
        });
    }
    Ok(())
}

/// Takes our block out of a configuration file or script we added it to; a file that held
/// nothing else (we made it) goes.
fn remove_block_from(path: &Path, changes: &mut Vec<Change>) -> Result<()> {
    let Some(text) = read_hook(path).ok().filter(|t| block_range(t).is_some()) else {
        return Ok(());
    };
    let rest = text::without_block(&text).expect("checked");
    if rest.trim().is_empty() {
        std::fs::remove_file(path).with_context(|| format!("removing {}", path.display()))?;
        changes.push(Change::FileRemoved {
            path: path.to_path_buf(),
        });
    } else {
        write_file(path, &rest, mode_of(path))?;
        changes.push(Change::BlockRemoved {
            path: path.to_path_buf(),
        });
    }
    Ok(())
}
