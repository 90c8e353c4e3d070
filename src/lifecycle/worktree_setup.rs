//! A session worktree's setup: the `[create] copy` files from the main worktree (reflinked
//! where the file system can), the `[create] link` directories shared with it, and the
//! `[create] run` commands, done by `create` and again, later, by `git session setup`.
//!
//! Invariants a reader must not break:
//! - Commands from the repository's own `.git-session.toml` run only once the user approved that
//!   exact list (`approved-run.toml` in the store; a changed list asks again). Approval comes from
//!   `--approve-run` or a yes at a terminal prompt, never from the repository itself. Without a
//!   terminal an unapproved list is skipped and reported with its commands, so it can be read and
//!   approved later with `git session setup LABEL --approve-run`.
//! - Copying and linking never overwrite: a file already in the worktree is the session's own
//!   (perhaps edited), so `setup` run again only fills in what is missing. A linked directory
//!   is the main worktree's own: the session writes into it, and removing the session removes
//!   the link, never what it points to.

use crate::base::announce::{self, Announcement};
use crate::config::Config;
use crate::git::{Repo, Run};
use crate::store::Store;
use anyhow::Context;
use std::path::Path;
use std::time::Duration;

/// What the copying and linking did, announced once per worktree.
#[derive(Debug, Default)]
struct Tally {
    reflinked: usize,
    copied: usize,
    copied_bytes: u64,
    linked: Vec<String>,
}

/// Copies `[create] copy` files (ignored files such as `.env`) from the main worktree into
/// `target`, where they are not there yet, each as a copy-on-write clone (reflink) where the
/// file system offers one and a plain copy elsewhere; then links each `[create] link`
/// directory to the main worktree's. Announces which it did ([`Announcement::SetUpFiles`]).
/// Returns what could not be copied or linked, with why.
pub fn copy_files(repo: &Repo, config: &Config, target: &Path) -> Vec<String> {
    let mut failed = Vec::new();
    let Some(source_root) = repo.main_worktree.as_deref() else {
        return failed;
    };
    if source_root == target {
        return failed;
    }
    let mut tally = Tally::default();
    for rel in &config.create_copy {
        let from = source_root.join(rel);
        if !from.exists() {
            continue;
        }
        if let Err(e) = copy_missing(&from, &target.join(rel), &mut tally) {
            failed.push(format!(
                "could not copy {rel} into {}: {e}",
                target.display()
            ));
        }
    }
    for rel in &config.create_link {
        match link_missing(&source_root.join(rel), &target.join(rel)) {
            Ok(true) => {
                tally.linked.push(rel.clone());
                // git sees a link as a file: one it does not ignore is the session's untracked
                // work, and git then refuses to remove the worktree.
                let ignored = Run::new(target, ["check-ignore", "-q", "--", rel.as_str()])
                    .deadline(Duration::from_secs(30))
                    .run()
                    .is_ok();
                if !ignored {
                    failed.push(format!(
                        "linked {rel} in {}, but git does not ignore the link: add `{rel}` \
                         (no trailing slash) to .gitignore, or cleanup will find it untracked",
                        target.display()
                    ));
                }
            }
            Ok(false) => {}
            Err(e) => failed.push(format!(
                "could not link {rel} in {} to the main worktree's: {e}",
                target.display()
            )),
        }
    }
    if tally.reflinked + tally.copied > 0 || !tally.linked.is_empty() {
        announce::emit(Announcement::SetUpFiles {
            reflinked: tally.reflinked,
            copied: tally.copied,
            copied_bytes: tally.copied_bytes,
            linked: tally.linked,
        });
    }
    failed
}

fn copy_missing(from: &Path, to: &Path, tally: &mut Tally) -> std::io::Result<()> {
    if from.is_dir() {
        std::fs::create_dir_all(to)?;
        for entry in std::fs::read_dir(from)? {
            let entry = entry?;
            copy_missing(&entry.path(), &to.join(entry.file_name()), tally)?;
        }
        return Ok(());
    }
    if std::fs::symlink_metadata(to).is_ok() {
        return Ok(());
    }
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)?;
    }
    // `reflink-copy`: FICLONE on Linux (Btrfs, XFS), clonefile on macOS (APFS); where the file
    // system has none, a plain copy, and `Some(bytes)` says so.
    match reflink_copy::reflink_or_copy(from, to)? {
        None => tally.reflinked += 1,
        Some(bytes) => {
            tally.copied += 1;
            tally.copied_bytes += bytes;
        }
    }
    Ok(())
}

/// Makes `to` a symbolic link to `from` (a directory of the main worktree, such as
/// `node_modules`), when `from` is a directory and nothing is at `to` yet: what the session has
/// there (checked out, or made by its own install) is its own and stays. Returns whether it
/// linked.
fn link_missing(from: &Path, to: &Path) -> std::io::Result<bool> {
    if !std::fs::symlink_metadata(from).is_ok_and(|m| m.is_dir()) {
        return Ok(false);
    }
    if std::fs::symlink_metadata(to).is_ok() {
        return Ok(false);
    }
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::os::unix::fs::symlink(from, to)?;
    Ok(true)
}

/// What running the `[create] run` list came to.
#[derive(Debug, PartialEq, Eq)]
pub enum RunOutcome {
    /// There is no list.
    Nothing,
    /// The repository's list is not approved: nothing ran. Holds the commands.
    NotApproved(Vec<String>),
    /// Every command ran; those that failed, each with why.
    Ran { failed: Vec<String> },
}

#[derive(serde::Serialize, serde::Deserialize, Default)]
struct Approvals {
    version: u32,
    #[serde(default)]
    approved: Vec<Vec<String>>,
}

const APPROVALS: &str = "approved-run.toml";

/// Runs `[create] run` in `worktree`, each command with `deadline` and the session's leased
/// resources in its environment (`env`: `GIT_SESSION_PORT`, ...), its output on stderr (stdout
/// carries `create`'s path alone).
pub fn run_commands(
    config: &Config,
    store: &Store,
    worktree: &Path,
    approve_flag: bool,
    deadline: Duration,
    env: &[(String, String)],
) -> RunOutcome {
    if config.create_run.is_empty() {
        return RunOutcome::Nothing;
    }
    if config.create_run_from_repo && !approved(config, store, approve_flag) {
        return RunOutcome::NotApproved(config.create_run.clone());
    }
    let mut failed = Vec::new();
    for command in &config.create_run {
        announce::emit(Announcement::Running {
            command: command.clone(),
        });
        let mut run = Run::new(worktree, ["-c", command.as_str()])
            .program("sh")
            .deadline(deadline);
        for (key, value) in env {
            run = run.env(key, value);
        }
        let result = run.run();
        match result {
            Ok(out) => eprint!("{}{}", out.stdout, out.stderr),
            Err(e) => failed.push(format!("`{command}` failed: {e}")),
        }
    }
    RunOutcome::Ran { failed }
}

fn approved(config: &Config, store: &Store, approve_flag: bool) -> bool {
    approved_list(
        store,
        APPROVALS,
        &config.create_run,
        approve_flag,
        Announcement::ApprovalAsked,
        "Run these commands now and in future creates?",
    )
}

/// Whether the repository's list `list` is approved in the store file `file`: already, by the
/// flag, or by a yes at a terminal prompt (headed by `heading`, asking `question`); a new
/// approval is saved there. Shared by `[create] run` and `[merge] check`.
pub(super) fn approved_list(
    store: &Store,
    file: &str,
    list: &[String],
    approve_flag: bool,
    heading: Announcement,
    question: &str,
) -> bool {
    let list = list.to_vec();
    let current: Approvals = store.read(file).ok().flatten().unwrap_or_default();
    if current.approved.contains(&list) {
        return true;
    }
    let yes = approve_flag || {
        use std::io::IsTerminal;
        std::io::stdin().is_terminal() && std::io::stderr().is_terminal() && {
            announce::emit(heading);
            for c in &list {
                announce::emit(Announcement::ApprovalCommand { command: c.clone() });
            }
            dialoguer::Confirm::new()
                .with_prompt(question)
                .default(false)
                .interact()
                .unwrap_or(false)
        }
    };
    if yes {
        let saved = store.update::<Approvals, _>(file, |a| {
            let mut a = a.unwrap_or_default();
            a.version = 1;
            if !a.approved.contains(&list) {
                a.approved.push(list.clone());
            }
            Ok(Some(a))
        });
        if let Err(e) = saved.context("saving the approval") {
            announce::emit(Announcement::ApprovalNotSaved {
                error: format!("{e:#}"),
            });
        }
    }
    yes
}

/// The one-line report of an unapproved list, naming its commands and the way to run them.
pub fn not_approved_message(commands: &[String]) -> String {
    format!(
        "the [create] run commands of .git-session.toml are not approved, so they did not run: {}",
        commands
            .iter()
            .map(|c| format!("`{c}`"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}
