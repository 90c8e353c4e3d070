//! `git session hooks install|uninstall|status`: the guard's git hooks.
//!
//! Invariants: our part of a hook file lies between the marker lines of `githooks/*` (embedded
//! in the binary), so install is idempotent and uninstall removes exactly that. A hook the user
//! already had is moved, by rename (bytes and mode intact), to `<hook>.before-git-session`; our
//! hook runs it first with the same arguments, and its failure still rejects the commit.
//! Uninstall renames it back. The hooks directory is `core.hooksPath` when set, else the common
//! directory's `hooks/`, so every worktree shares one installation.

use crate::error::UserError;
use crate::git::Repo;
use crate::output;
use anyhow::{Context, Result};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

pub const BEGIN: &str = "# >>> git-session >>>";
pub const END: &str = "# <<< git-session <<<";
const ASIDE: &str = ".before-git-session";

/// The hooks this tool installs, as shipped in `githooks/`.
pub const HOOKS: [(&str, &str); 2] = [
    ("pre-commit", include_str!("../../githooks/pre-commit")),
    ("post-commit", include_str!("../../githooks/post-commit")),
];

/// Install, remove or inspect the pre-commit and post-commit hooks of the ownership guard
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Install the hooks (idempotent; an existing hook is kept and still runs first)
    Install,
    /// Remove the hooks and restore whatever hook was there before, byte for byte
    Uninstall,
    /// Show whether the hooks are installed and current
    Status {
        /// Print JSON
        #[arg(long)]
        json: bool,
    },
}

/// Where hooks live for this repository: `core.hooksPath` (relative to the worktree root, as
/// git resolves it) or `<common dir>/hooks`.
pub fn hooks_dir(repo: &Repo) -> Result<PathBuf> {
    let config = repo.config()?;
    if let Some(path) = config.get_path("core.hooksPath") {
        if path.is_absolute() {
            return Ok(path);
        }
        let anchor = repo
            .current_worktree
            .clone()
            .unwrap_or_else(|| repo.common_dir.clone());
        return Ok(anchor.join(path));
    }
    Ok(repo.common_dir.join("hooks"))
}

fn aside_path(target: &Path) -> PathBuf {
    let mut s = target.as_os_str().to_owned();
    s.push(ASIDE);
    PathBuf::from(s)
}

/// The byte range of our block (marker lines included, with the newline after the end marker).
fn block_range(text: &str) -> Option<(usize, usize)> {
    let start = text.find(BEGIN)?;
    let start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let end_marker = start + text[start..].find(END)?;
    let end = text[end_marker..]
        .find('\n')
        .map_or(text.len(), |i| end_marker + i + 1);
    Some((start, end))
}

fn block_of(text: &str) -> &str {
    block_range(text).map_or("", |(s, e)| &text[s..e])
}

/// Writes a hook file atomically with the execute bit set.
fn write_hook(target: &Path, text: &str) -> Result<()> {
    let dir = target.parent().context("hook path has no directory")?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".git-session-hook")
        .tempfile_in(dir)
        .with_context(|| format!("writing into {}", dir.display()))?;
    use std::io::Write;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(0o755))?;
    tmp.persist(target)
        .with_context(|| format!("installing {}", target.display()))?;
    Ok(())
}

#[derive(Debug, PartialEq)]
enum HookState {
    Current,
    Outdated,
    Absent,
    Foreign,
}

/// A hook file as text, without blocking on a FIFO or reading a directory, a device or a large
/// binary ([`crate::store::read_text`]).
fn read_hook(target: &Path) -> std::io::Result<String> {
    crate::store::read_text(target, 1 << 20)
}

fn state(target: &Path, shipped: &str) -> HookState {
    match read_hook(target) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => HookState::Absent,
        // A FIFO, a directory or a binary program: not ours, and never read in full.
        Err(_) => HookState::Foreign,
        Ok(text) => {
            if block_range(&text).is_none() {
                HookState::Foreign
            } else if block_of(&text) == block_of(shipped) && is_executable(target) {
                HookState::Current
            } else {
                HookState::Outdated
            }
        }
    }
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

pub fn run(args: Args) -> Result<()> {
    let cx = super::helper::CommandHelper::open()?;
    let dir = hooks_dir(&cx.repo)?;
    match args.action {
        Action::Install => install(&dir),
        Action::Uninstall => uninstall(&dir),
        Action::Status { json } => status(&dir, json),
    }
}

fn install(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for (name, shipped) in HOOKS {
        let target = dir.join(name);
        let aside = aside_path(&target);
        match state(&target, shipped) {
            HookState::Current => {
                output::note(format!("{name}: already installed in {}", dir.display()));
            }
            HookState::Outdated => {
                let text =
                    read_hook(&target).with_context(|| format!("reading {}", target.display()))?;
                let (s, e) = block_range(&text).expect("outdated means marked");
                let updated = format!("{}{}{}", &text[..s], block_of(shipped), &text[e..]);
                write_hook(&target, &updated)?;
                output::note(format!("{name}: updated in {}", dir.display()));
            }
            HookState::Absent => {
                write_hook(&target, shipped)?;
                output::note(format!("{name}: installed in {}", dir.display()));
            }
            HookState::Foreign => {
                if std::fs::symlink_metadata(&aside).is_ok() {
                    return Err(UserError::refused(format!(
                        "{} and {} both exist; not overwriting either",
                        target.display(),
                        aside.display()
                    ))
                    .hinted("merge them by hand, or remove the one you no longer need")
                    .into());
                }
                std::fs::rename(&target, &aside).with_context(|| {
                    format!("moving {} to {}", target.display(), aside.display())
                })?;
                if let Err(e) = write_hook(&target, shipped) {
                    // Put the user's hook back rather than leave them with none.
                    let _ = std::fs::rename(&aside, &target);
                    return Err(e);
                }
                output::note(format!(
                    "{name}: installed in {}; your hook is kept as {} and still runs first",
                    dir.display(),
                    aside.display()
                ));
            }
        }
    }
    Ok(())
}

fn uninstall(dir: &Path) -> Result<()> {
    for (name, _) in HOOKS {
        let target = dir.join(name);
        let aside = aside_path(&target);
        let text = read_hook(&target).ok();
        let Some((s, e)) = text.as_deref().and_then(block_range) else {
            output::note(format!("{name}: not installed"));
            continue;
        };
        let text = text.expect("checked");
        let rest = format!("{}{}", &text[..s], &text[e..]);
        let only_shebang = rest
            .lines()
            .all(|l| l.trim().is_empty() || (l.starts_with("#!") && !l.contains('\n')));
        if only_shebang {
            std::fs::remove_file(&target)
                .with_context(|| format!("removing {}", target.display()))?;
            if std::fs::symlink_metadata(&aside).is_ok() {
                std::fs::rename(&aside, &target).with_context(|| {
                    format!("restoring {} to {}", aside.display(), target.display())
                })?;
                output::note(format!("{name}: removed; your hook is back in place"));
            } else {
                output::note(format!("{name}: removed"));
            }
        } else {
            // Someone added lines of their own around ours: keep them.
            write_hook(&target, &rest)?;
            output::note(format!(
                "{name}: removed our part; the rest of the file stays"
            ));
            if std::fs::symlink_metadata(&aside).is_ok() {
                output::warn(format!(
                    "{} is left where it is, since {} still has other content",
                    aside.display(),
                    target.display()
                ));
            }
        }
    }
    Ok(())
}

fn status(dir: &Path, as_json: bool) -> Result<()> {
    let on_path = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| is_executable(&d.join("git-session"))));
    let mut rows = Vec::new();
    for (name, shipped) in HOOKS {
        let target = dir.join(name);
        let st = match state(&target, shipped) {
            HookState::Current => "installed",
            HookState::Outdated => "outdated",
            HookState::Absent => "not installed",
            HookState::Foreign => "not installed (another hook is there)",
        };
        let kept = std::fs::symlink_metadata(aside_path(&target))
            .is_ok()
            .then(|| aside_path(&target).display().to_string());
        rows.push((name, target, st, kept));
    }
    if as_json {
        let v: Vec<_> = rows
            .iter()
            .map(|(name, target, st, kept)| {
                json!({"version": output::JSON_VERSION, "hook": name,
                       "path": target.display().to_string(), "state": st,
                       "user_hook": kept, "git_session_on_path": on_path})
            })
            .collect();
        return Ok(output::json(&serde_json::Value::Array(v))?);
    }
    for (name, target, st, kept) in &rows {
        let mut line = format!("{name}: {st} ({})", target.display());
        if let Some(k) = kept {
            line.push_str(&format!("; runs your hook {k} first"));
        }
        output::line(line)?;
    }
    if !on_path {
        output::warn("git-session is not on PATH, so the installed hooks warn and allow");
    }
    Ok(())
}
