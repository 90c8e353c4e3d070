//! Installing and removing the guard: one transaction per route, each undone by
//! [`super::unwire::uninstall`].
//!
//! Routes, in the order install tries them:
//! 1. Config-based hooks, when the git on `PATH` runs them (2.54 and later): two entries in the
//!    repository's own config, which every worktree reads and no hooks-directory manager
//!    rewrites. Our hook files, if an earlier install left them, are taken out (they would run
//!    the guard twice).
//! 2. A hook manager's own configuration (see [`super::managers`]), so its re-installs keep the
//!    guard; plus our own `post-commit` where the manager does not run one.
//! 3. The hooks directory: our file where there is none; our block inside a shell hook someone
//!    else wrote (its name and `$0` unchanged); a hook that is not a shell script moved aside to
//!    `<hook>.before-git-session` and run first by ours.
//!
//! Where husky is configured but not yet installed ([`super::husky`]: `.husky/<hook>` scripts and
//! a `package.json` naming husky, `core.hooksPath` not yet `.husky/_`), our block also goes into
//! husky's scripts, so husky's install finds the guard where its hooks will run it.
//!
//! And, for every route: a relative `core.hooksPath` that exists in the main worktree only (an
//! ignored, generated directory such as husky's `.husky/_`) is copied into each session
//! worktree that lacks it ([`materialize`]), so the manager's hooks run there too; one that
//! exists in a session only (the manager installed there) is copied into the main worktree
//! first.

use super::hook_file::{aside_path, mode_of, read_hook, write_file};
use super::managers::{self, Manager, NotEdited};
use super::place::{self, config_hook_name, HookConfig};
use super::text::{self, block_of, block_range, is_ours_alone, runs_guard, shell_block};
use super::Event;
use anyhow::{Context, Result};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

pub use super::change::Change;
pub use super::hook_file::ASIDE;

/// A hook that is no shell script, and its moved-aside copy from an earlier install, both
/// exist: install overwrites neither; the command line words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BothExist {
    pub hook: PathBuf,
    pub aside: PathBuf,
}

impl std::fmt::Display for BothExist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} and {} both exist",
            self.hook.display(),
            self.aside.display()
        )
    }
}

impl std::error::Error for BothExist {}

/// Installs the guard for commits made in the worktree at `worktree` (and, through shared
/// places, in every worktree that reads them).
pub fn install(
    common_dir: &Path,
    worktree: &Path,
    sessions: &[PathBuf],
    main_worktree: Option<&Path>,
    events: &[Event],
) -> Result<Vec<Change>> {
    let config = HookConfig::read(worktree)?;
    let dir = config
        .hooks_dir(common_dir, Some(worktree))
        .context("finding the hooks directory")?;
    let mut changes = Vec::new();
    if place::git_runs_config_hooks(worktree) == Some(true) {
        for event in events {
            set_config_hook(worktree, *event, &config, &mut changes)?;
        }
        // Our files from an earlier install would run the guard a second time.
        for event in events {
            remove_own_file(&dir, *event, &mut changes)?;
        }
    } else if dir == Path::new("/dev/null") {
        // The user told git to run no hook files: nothing written anywhere would run, and that
        // choice is theirs to undo. The caller's check says so.
    } else {
        let manager = read_hook(&dir.join("pre-commit"))
            .ok()
            .and_then(|t| managers::owner_of_hook(&t, &dir))
            .or_else(|| managers::configured_in(worktree, &dir));
        match manager {
            Some(m) => via_manager(m, worktree, &dir, &mut changes)?,
            None => {
                for event in Event::ALL {
                    install_file(&dir, event, &mut changes)?;
                }
            }
        }
        if events.contains(&Event::PrePush) {
            // husky runs `.husky/pre-push` with the hook's stdin; elsewhere the hooks
            // directory's own file (ours, or our block inside the one there).
            if manager == Some(Manager::Husky) {
                let carrier =
                    &managers::carriers(Manager::Husky, worktree, &dir, Event::PrePush)[0];
                add_block_to_script(carrier, Event::PrePush, &mut changes)?;
                note_tracked(worktree, carrier, &mut changes);
            } else {
                install_file(&dir, Event::PrePush, &mut changes)?;
            }
        }
        if manager != Some(Manager::Husky) && super::husky::husky_awaiting_install(worktree, &dir) {
            // husky is configured but not installed yet (a fresh clone before `npm install`):
            // the guard runs from the hooks directory now, and from husky's scripts once
            // husky's install points `core.hooksPath` at `.husky/_`.
            for event in Event::EVERY {
                if event != Event::PrePush || events.contains(&event) {
                    let script = super::husky::husky_script(worktree, event);
                    add_block_to_script(&script, event, &mut changes)?;
                    note_tracked(worktree, &script, &mut changes);
                }
            }
        }
    }
    if let Some(main) = main_worktree {
        // Made in a session only (its agent ran `npm install`, and with it husky's install,
        // there): the main worktree gets it from the first session that has it, and the other
        // sessions from the main worktree.
        if let Some(dir) = sessions
            .iter()
            .find_map(|session| materialize(session, main).ok().flatten())
        {
            changes.push(Change::Materialized { dir });
        }
        for session in sessions {
            if let Some(dir) = materialize(main, session)? {
                changes.push(Change::Materialized { dir });
            }
        }
    }
    Ok(changes)
}

fn set_config_hook(
    worktree: &Path,
    event: Event,
    config: &HookConfig,
    changes: &mut Vec<Change>,
) -> Result<()> {
    let name = config_hook_name(event);
    let present = config.configured.iter().any(|h| {
        h.name == name
            && h.enabled
            && h.events == [event.name()]
            && h.command.as_deref() == Some(event.guard_line())
    });
    if !present {
        let key = |var: &str| format!("hook.{name}.{var}");
        crate::git::git_ok(
            worktree,
            [
                "config",
                "--local",
                "--replace-all",
                &key("event"),
                event.name(),
            ],
        )?;
        crate::git::git_ok(
            worktree,
            [
                "config",
                "--local",
                "--replace-all",
                &key("command"),
                event.guard_line(),
            ],
        )?;
        let _ = crate::git::git_ok(
            worktree,
            ["config", "--local", "--unset-all", &key("enabled")],
        );
    }
    changes.push(if present {
        Change::Present {
            path: PathBuf::from(format!("hook.{name}")),
        }
    } else {
        Change::ConfigHookSet {
            name: name.to_string(),
            event,
        }
    });
    Ok(())
}

fn via_manager(
    manager: Manager,
    worktree: &Path,
    dir: &Path,
    changes: &mut Vec<Change>,
) -> Result<()> {
    match manager {
        Manager::Husky => {
            for event in Event::ALL {
                let carrier = &managers::carriers(manager, worktree, dir, event)[0];
                add_block_to_script(carrier, event, changes)?;
                note_tracked(worktree, carrier, changes);
                drop_stale_copies(dir, event, changes)?;
            }
        }
        Manager::Lefthook => {
            let carrier = managers::carriers(manager, worktree, dir, Event::PreCommit)
                .into_iter()
                .next()
                .expect("one at least");
            let yaml = carrier
                .extension()
                .is_some_and(|e| e == "yml" || e == "yaml");
            if !yaml {
                changes.push(Change::ManagerConfigRefused {
                    manager,
                    path: carrier.clone(),
                    why: "only its YAML configuration is edited".into(),
                    add_by_hand: Event::ALL
                        .iter()
                        .map(|e| {
                            format!(
                                "{}: commands: git-session-guard: run: {}",
                                e.name(),
                                e.guard_line()
                            )
                        })
                        .collect::<Vec<_>>()
                        .join("\n"),
                });
            } else {
                let mut edit = |t: &str| -> Result<Option<String>, NotEdited> {
                    let mut text = t.to_string();
                    let mut changed = false;
                    for event in Event::ALL {
                        if let Some(next) = managers::lefthook_with_guard(&text, event)? {
                            text = next;
                            changed = true;
                        }
                    }
                    Ok(changed.then_some(text))
                };
                edit_config(manager, &carrier, &mut edit, changes)?;
                note_tracked(worktree, &carrier, changes);
            }
            for event in Event::ALL {
                drop_stale_copies(dir, event, changes)?;
            }
        }
        Manager::PreCommit => {
            let carrier = managers::carriers(manager, worktree, dir, Event::PreCommit)
                .into_iter()
                .next()
                .expect("one at least");
            edit_config(
                manager,
                &carrier,
                &mut managers::pre_commit_with_guard,
                changes,
            )?;
            note_tracked(worktree, &carrier, changes);
            // Our hook kept by `pre-commit install` as `pre-commit.legacy` would run it twice.
            remove_own_file_at(&dir.join("pre-commit.legacy"), changes)?;
            drop_stale_copies(dir, Event::PreCommit, changes)?;
            // pre-commit installs no post-commit hook by default: ours.
            install_file(dir, Event::PostCommit, changes)?;
        }
        Manager::SimpleGitHooks => {
            if let Some((carrier, in_package)) = managers::simple_git_hooks_config(worktree) {
                edit_config(
                    manager,
                    &carrier,
                    &mut |t| managers::simple_git_hooks_with_guard(t, in_package, &Event::ALL),
                    changes,
                )?;
                note_tracked(worktree, &carrier, changes);
            }
            // In force now, before the next `npx simple-git-hooks` writes the files from the
            // configuration above.
            for event in Event::ALL {
                install_file(dir, event, changes)?;
            }
        }
    }
    Ok(())
}

fn edit_config(
    manager: Manager,
    path: &Path,
    edit: &mut dyn FnMut(&str) -> Result<Option<String>, NotEdited>,
    changes: &mut Vec<Change>,
) -> Result<()> {
    let before = match read_hook(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    match edit(&before) {
        Ok(None) => changes.push(Change::Present {
            path: path.to_path_buf(),
        }),
        Ok(Some(after)) => {
            let mode = std::fs::metadata(path)
                .map(|m| m.permissions().mode() & 0o7777)
                .unwrap_or(0o644);
            write_file(path, &after, mode)?;
            changes.push(Change::ManagerConfig {
                manager,
                path: path.to_path_buf(),
            });
        }
        Err(NotEdited { why, add_by_hand }) => changes.push(Change::ManagerConfigRefused {
            manager,
            path: path.to_path_buf(),
            why,
            add_by_hand,
        }),
    }
    Ok(())
}

/// Our block in the script at `path` (husky's `.husky/<hook>`), which is made when absent.
fn add_block_to_script(path: &Path, event: Event, changes: &mut Vec<Change>) -> Result<()> {
    match read_hook(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            write_file(path, &shell_block(event), 0o755)?;
            changes.push(Change::FileWritten {
                path: path.to_path_buf(),
            });
        }
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        Ok(text) if runs_guard(&text, event) && block_of(&text) == shell_block(event) => changes
            .push(Change::Present {
                path: path.to_path_buf(),
            }),
        Ok(text) => {
            let base = text::without_block(&text).unwrap_or(text);
            let updated = text::insert_after_shebang(&base, &shell_block(event));
            write_file(path, &updated, mode_of(path))?;
            changes.push(Change::BlockAdded {
                path: path.to_path_buf(),
            });
        }
    }
    Ok(())
}

/// Our hook in the hooks directory for `event`, beside whatever is there.
fn install_file(dir: &Path, event: Event, changes: &mut Vec<Change>) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let target = dir.join(event.name());
    let aside = aside_path(&target);
    let text = match read_hook(&target) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            write_file(&target, event.shipped(), 0o755)?;
            changes.push(Change::FileWritten { path: target });
            return Ok(());
        }
        Ok(t) => Some(t),
        // A binary program: not a script we can read, so it is chained.
        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => None,
        Err(e) => return Err(e).with_context(|| format!("reading {}", target.display())),
    };
    if let Some(text) = &text {
        if block_range(text).is_some() {
            let wanted = if is_ours_alone(text) {
                block_of(event.shipped()).to_string()
            } else {
                shell_block(event)
            };
            if block_of(text) == wanted && is_ours_alone(text) && mode_of(&target) & 0o111 == 0 {
                // Our own file that lost its executable bit: git skips it without a word.
                write_file(&target, text, mode_of(&target) | 0o755)?;
                changes.push(Change::MadeExecutable { path: target });
            } else if block_of(text) == wanted {
                changes.push(Change::Present { path: target });
            } else {
                let (s, e) = block_range(text).expect("checked");
                let updated = format!("{}{}{}", &text[..s], wanted, &text[e..]);
                // Someone's hook keeps its mode: one they made not executable stays off.
                let mode = if is_ours_alone(text) {
                    mode_of(&target) | 0o755
                } else {
                    mode_of(&target)
                };
                write_file(&target, &updated, mode)?;
                changes.push(Change::BlockUpdated { path: target });
            }
            return Ok(());
        }
        if runs_guard(text, event) {
            // Someone's own hook already calls the guard.
            changes.push(Change::Present { path: target });
            return Ok(());
        }
        if text::is_shell(text) {
            let updated = text::insert_after_shebang(text, &shell_block(event));
            write_file(&target, &updated, mode_of(&target))?;
            changes.push(Change::BlockAdded { path: target });
            return Ok(());
        }
    }
    // Not a shell script: moved aside (bytes and mode intact) and run first by ours.
    if std::fs::symlink_metadata(&aside).is_ok() {
        if is_stale_copy(&aside, text.as_deref()) {
            std::fs::remove_file(&aside)?;
            changes.push(Change::StaleRemoved {
                path: aside.clone(),
            });
        } else {
            return Err(BothExist {
                hook: target.clone(),
                aside,
            }
            .into());
        }
    }
    std::fs::rename(&target, &aside)
        .with_context(|| format!("moving {} to {}", target.display(), aside.display()))?;
    if let Err(e) = write_file(&target, event.shipped(), 0o755) {
        let _ = std::fs::rename(&aside, &target);
        return Err(e);
    }
    changes.push(Change::Chained {
        path: target,
        aside,
    });
    Ok(())
}

/// Whether the set-aside file at `aside` is a copy nothing needs: identical to the hook now in
/// place, or a manager's generated dispatcher (the manager writes it again on re-install), or
/// a copy of our own hook.
fn is_stale_copy(aside: &Path, current: Option<&str>) -> bool {
    let Ok(old) = read_hook(aside) else {
        return false;
    };
    let dir = aside.parent().unwrap_or(Path::new("."));
    current == Some(old.as_str())
        || managers::owner_of_hook(&old, dir).is_some()
        || is_ours_alone(&old)
}

/// The copies a manager's install left of our hook (`<hook>.old` by lefthook), or a stale
/// `<hook>.before-git-session`: nothing runs them once the guard lives in the manager's
/// configuration.
fn drop_stale_copies(dir: &Path, event: Event, changes: &mut Vec<Change>) -> Result<()> {
    for suffix in [".old", ASIDE] {
        let path = dir.join(format!("{}{suffix}", event.name()));
        if read_hook(&path)
            .is_ok_and(|t| is_ours_alone(&t) || managers::owner_of_hook(&t, dir).is_some())
        {
            std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
            changes.push(Change::StaleRemoved { path });
        }
    }
    Ok(())
}

/// Takes out our hook file (or our block in another) for `event` in `dir`.
fn remove_own_file(dir: &Path, event: Event, changes: &mut Vec<Change>) -> Result<()> {
    let target = dir.join(event.name());
    if read_hook(&target).is_ok_and(|t| block_range(&t).is_some()) {
        super::unwire::remove_from_hook_file(&target, &mut Vec::new())?;
        changes.push(Change::StaleRemoved { path: target });
    }
    Ok(())
}

fn remove_own_file_at(path: &Path, changes: &mut Vec<Change>) -> Result<()> {
    if read_hook(path).is_ok_and(|t| is_ours_alone(&t)) {
        std::fs::remove_file(path).with_context(|| format!("removing {}", path.display()))?;
        changes.push(Change::StaleRemoved {
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

/// Whether the script is only our block (and a `#!` line): a file we wrote.
pub use super::place::materialize;

fn note_tracked(worktree: &Path, path: &Path, changes: &mut Vec<Change>) {
    let Ok(rel) = path.strip_prefix(worktree) else {
        return;
    };
    let tracked = crate::git::git_ok(
        worktree,
        [
            std::ffi::OsStr::new("ls-files"),
            std::ffi::OsStr::new("--error-unmatch"),
            std::ffi::OsStr::new("--"),
            rel.as_os_str(),
        ],
    )
    .is_ok();
    let changed = changes.iter().any(|c| {
        matches!(c, Change::ManagerConfig { path: p, .. } | Change::BlockAdded { path: p } | Change::FileWritten { path: p } if p == path)
    });
    if changed && (tracked || !is_ignored(worktree, rel)) {
        changes.push(Change::CommitToShare {
            path: path.to_path_buf(),
        });
    }
}

fn is_ignored(worktree: &Path, rel: &Path) -> bool {
    crate::git::Checkout::open(worktree)
        .and_then(|c| c.is_ignored(rel))
        .unwrap_or(false)
}
