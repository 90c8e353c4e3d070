//! Would a commit made in this worktree run the guard? Answered from git's own rules and the
//! files on disk, for one worktree at a time (a relative `core.hooksPath` and every manager's
//! configuration differ per worktree).

use super::managers::{self, Manager};
use super::place::{self, HookConfig};
use super::skips::{self, Skip};
use super::{text, Event};
use std::path::{Path, PathBuf};

/// How the guard runs for one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// A config-based hook (`hook.<name>.command`), run by git 2.54 and later.
    ConfigHook { name: String },
    /// The hook file itself runs it (ours, or someone's that calls it).
    HookFile { path: PathBuf },
    /// A manager's dispatcher runs the manager, whose configuration runs it.
    Manager { manager: Manager, config: PathBuf },
}

/// The answer for one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    InForce(Route),
    /// Not in force, and why; its `Display` names the file or setting, and the command line
    /// says what fixes each.
    Off(Off),
}

/// Why git would not run the guard for an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Off {
    /// The worktree's git configuration cannot be read.
    ConfigUnreadable {
        worktree: PathBuf,
        error: String,
    },
    /// `core.hooksPath` is relative and there is no worktree to resolve it in.
    RelativeWithoutWorktree,
    /// `core.hooksPath` is `/dev/null`: git runs no hook files.
    HooksDisabled,
    /// A relative `core.hooksPath` that does not exist in this worktree.
    MissingDir {
        rel: PathBuf,
        dir: PathBuf,
    },
    /// No hook file for the event.
    NoHook {
        file: PathBuf,
    },
    Unreadable {
        file: PathBuf,
        error: String,
    },
    /// The hook file is there and git skips it; `ours`: it is our file alone.
    NotExecutable {
        file: PathBuf,
        ours: bool,
    },
    /// Someone's hook that does not run the guard.
    Foreign {
        file: PathBuf,
    },
    /// A manager's dispatcher whose configuration files do not run the guard.
    ManagerSkips {
        file: PathBuf,
        manager: Manager,
        carriers: Vec<PathBuf>,
    },
    /// The guard is where the manager runs it, and a switch in this environment makes the
    /// manager skip it.
    Switched(Skip),
}

impl Off {
    /// Whether `hooks install` alone puts the guard back: the reason is a file of ours, not a
    /// file or setting of the user's.
    pub fn install_repairs(&self) -> bool {
        matches!(
            self,
            Off::MissingDir { .. }
                | Off::NoHook { .. }
                | Off::NotExecutable { ours: true, .. }
                | Off::Foreign { .. }
                | Off::ManagerSkips { .. }
        )
    }
}

impl std::fmt::Display for Off {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Off::ConfigUnreadable { worktree, error } => write!(
                f,
                "the configuration of {} cannot be read: {error}",
                worktree.display()
            ),
            Off::RelativeWithoutWorktree => {
                f.write_str("core.hooksPath is relative and there is no worktree to resolve it in")
            }
            Off::HooksDisabled => f.write_str("core.hooksPath is /dev/null: git runs no hooks"),
            Off::MissingDir { rel, dir } => write!(
                f,
                "core.hooksPath is {} (relative), and {} does not exist in this worktree",
                rel.display(),
                dir.display()
            ),
            Off::NoHook { file } => write!(
                f,
                "there is no {} hook: {} does not exist",
                file.file_name().unwrap_or_default().to_string_lossy(),
                file.display()
            ),
            Off::Unreadable { file, error } => write!(
                f,
                "{} cannot be read as a hook script: {error}",
                file.display()
            ),
            Off::NotExecutable { file, .. } => write!(
                f,
                "{} is not executable, so git does not run it",
                file.display()
            ),
            Off::Foreign { file } => write!(
                f,
                "{} is another hook that does not run the guard",
                file.display()
            ),
            Off::ManagerSkips {
                file,
                manager,
                carriers,
            } => {
                let files = carriers
                    .iter()
                    .map(|c| c.display().to_string())
                    .collect::<Vec<_>>()
                    .join(" or ");
                write!(
                    f,
                    "{} is {}'s, and {files} does not run the guard",
                    file.display(),
                    manager.name()
                )
            }
            Off::Switched(skip) => {
                write!(f, "{}={}", skip.variable, skip.value)?;
                match &skip.set_in {
                    Some(file) => write!(f, " (set by {})", file.display())?,
                    None => f.write_str(" in this environment")?,
                }
                write!(f, " makes {} skip the guard", skip.manager.name())
            }
        }
    }
}

impl Check {
    pub fn in_force(&self) -> bool {
        matches!(self, Check::InForce(_))
    }
}

/// The answer for a worktree.
#[derive(Debug, Clone)]
pub struct Enforcement {
    pub worktree: PathBuf,
    pub hooks_dir: Option<PathBuf>,
    /// The manager that dispatches this worktree's hooks, or is configured in it.
    pub manager: Option<Manager>,
    pub pre_commit: Check,
    pub post_commit: Check,
    /// Only where claims are shared across machines does the guard need a pre-push hook.
    pub pre_push: Check,
}

impl Enforcement {
    pub fn of(&self, event: Event) -> &Check {
        match event {
            Event::PreCommit => &self.pre_commit,
            Event::PostCommit => &self.post_commit,
            Event::PrePush => &self.pre_push,
        }
    }
}

/// Checks the worktree whose root is `worktree`, of the repository whose common directory is
/// `common_dir`. `git_runs_config_hooks` is asked only when one of our config-based hooks is
/// configured, so the usual case spawns nothing.
pub fn check(
    common_dir: &Path,
    worktree: &Path,
    git_runs_config_hooks: &dyn Fn() -> Option<bool>,
) -> Enforcement {
    let config = match HookConfig::read(worktree) {
        Ok(c) => c,
        Err(e) => {
            let off = Check::Off(Off::ConfigUnreadable {
                worktree: worktree.to_path_buf(),
                error: format!("{e:#}"),
            });
            return Enforcement {
                worktree: worktree.to_path_buf(),
                hooks_dir: None,
                manager: None,
                pre_commit: off.clone(),
                post_commit: off.clone(),
                pre_push: off,
            };
        }
    };
    check_with(common_dir, worktree, &config, git_runs_config_hooks)
}

/// [`check`] for several worktrees of one repository, reading the shared configuration once and
/// asking the git on `PATH` at most once (a `list` of a hundred sessions pays for one).
/// Worktree-specific configuration (`extensions.worktreeConfig`) is read per worktree.
pub fn check_many(common_dir: &Path, worktrees: &[&Path]) -> Vec<Enforcement> {
    let shared = HookConfig::read(common_dir).ok();
    let per_worktree = shared.as_ref().is_none_or(|c| c.worktree_config);
    let version = std::cell::OnceCell::new();
    let runs = |w: &Path| *version.get_or_init(|| place::git_runs_config_hooks(w));
    worktrees
        .iter()
        .map(|w| match (&shared, per_worktree) {
            (Some(config), false) => check_with(common_dir, w, config, &|| runs(w)),
            _ => check(common_dir, w, &|| runs(w)),
        })
        .collect()
}

pub fn check_with(
    common_dir: &Path,
    worktree: &Path,
    config: &HookConfig,
    git_runs_config_hooks: &dyn Fn() -> Option<bool>,
) -> Enforcement {
    let hooks_dir = config.hooks_dir(common_dir, Some(worktree));
    let mut config_hooks_run: Option<Option<bool>> = None;
    let mut manager = None;
    // What the worktree's files configure is looked up once, not once per event (`list` asks
    // for every session, on one thread).
    let mut configured = None;
    let mut answer = |event: Event| -> Check {
        let ours = config.guard_hooks(event);
        if let Some(hook) = ours.first() {
            let runs = *config_hooks_run.get_or_insert_with(git_runs_config_hooks);
            if runs == Some(true) {
                return Check::InForce(Route::ConfigHook {
                    name: hook.name.clone(),
                });
            }
        }
        let Some(dir) = hooks_dir.as_deref() else {
            return Check::Off(Off::RelativeWithoutWorktree);
        };
        let (check, m) = by_hook_file(worktree, dir, config, event);
        if manager.is_none() {
            manager = m.or_else(|| {
                *configured.get_or_insert_with(|| managers::configured_in(worktree, dir))
            });
        }
        check
    };
    let pre_commit = answer(Event::PreCommit);
    let post_commit = answer(Event::PostCommit);
    let pre_push = answer(Event::PrePush);
    Enforcement {
        worktree: worktree.to_path_buf(),
        hooks_dir,
        manager,
        pre_commit,
        post_commit,
        pre_push,
    }
}

fn by_hook_file(
    worktree: &Path,
    dir: &Path,
    config: &HookConfig,
    event: Event,
) -> (Check, Option<Manager>) {
    let file = dir.join(event.name());
    if dir == Path::new("/dev/null") {
        return (Check::Off(Off::HooksDisabled), None);
    }
    let text = match crate::store::read_text(&file, 1 << 20) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let off = match config.relative_hooks_path() {
                Some(rel) if !dir.is_dir() => Off::MissingDir {
                    rel: rel.to_path_buf(),
                    dir: dir.to_path_buf(),
                },
                _ => Off::NoHook { file },
            };
            return (Check::Off(off), None);
        }
        Err(e) => {
            let error = e.to_string();
            return (Check::Off(Off::Unreadable { file, error }), None);
        }
    };
    if !is_executable(&file) {
        let ours = text::is_ours_alone(&text);
        return (Check::Off(Off::NotExecutable { file, ours }), None);
    }
    if text::runs_guard(&text, event) {
        if let Some(skip) = skips::by_hook_file(&text, event, &file, &skips::process_env) {
            return (Check::Off(Off::Switched(skip)), None);
        }
        return (Check::InForce(Route::HookFile { path: file }), None);
    }
    let Some(manager) = managers::owner_of_hook(&text, dir) else {
        return (Check::Off(Off::Foreign { file }), None);
    };
    let carriers = managers::carriers(manager, worktree, dir, event);
    match carriers
        .iter()
        .find(|c| managers::carrier_runs_guard(c, event))
    {
        Some(config) => match skips::by_manager(manager, config, &skips::process_env) {
            Some(skip) => (Check::Off(Off::Switched(skip)), Some(manager)),
            None => (
                Check::InForce(Route::Manager {
                    manager,
                    config: config.clone(),
                }),
                Some(manager),
            ),
        },
        None => (
            Check::Off(Off::ManagerSkips {
                file,
                manager,
                carriers,
            }),
            Some(manager),
        ),
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
