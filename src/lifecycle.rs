//! Session lifecycle: rolling back a creation, archiving, and removing a session.
//!
//! Invariants a reader must not break:
//! - Rollback and removal delete only what this tool created: a directory only when
//!   [`Layout::may_delete`] allows it and it is empty or its `.git` points into this repository;
//!   a branch only under the configured prefix, and by rollback only while it still points at the
//!   commit the session started from; a worktree lock only when it is our own creating lock.
//! - Nothing with unmerged commits or uncommitted files is removed unless an archive ref holding
//!   it was written first ([`archive`]).
//! - Every rollback and forced removal leaves a line in the audit log.

use crate::clock;
use crate::config::Config;
use crate::error::UserError;
use crate::git::{self, Repo, Run, RunError};
use crate::output;
use crate::process::Liveness;
use crate::session::{self, Layout, RecordState, SessionRecord, CREATING_LOCK_PREFIX};
use crate::store::Store;
use anyhow::{anyhow, Context, Result};
use std::path::Path;
use std::time::Duration;

/// Held for the whole of one removal of a session (inspect, archive, remove), so two `cleanup`s
/// or `prune`s of one session never interleave: the second waits, then finds the session gone.
pub fn lock_session_op(
    store: &Store,
    label: &str,
    wait: Duration,
) -> Result<Option<crate::store::LockFile>> {
    match store
        .clone()
        .with_lock_wait(wait)
        .lock(&format!("sessions/{label}.op"))
    {
        Ok(lock) => Ok(Some(lock)),
        Err(e) if e.downcast_ref::<crate::store::LockBusy>().is_some() => Ok(None),
        Err(e) => Err(e),
    }
}

/// Deadline for `git worktree remove` and the other porcelain cleanup runs.
const PORCELAIN_DEADLINE: Duration = Duration::from_secs(120);

/// The lock reason `create` gives the worktree it is making: rollback recognises its own entry
/// by it, and by nothing else.
pub fn creating_lock_reason(label: &str) -> String {
    format!("{CREATING_LOCK_PREFIX} {label}")
}

fn same_path(a: &Path, b: &Path) -> bool {
    a == b || session::normalize(a) == session::normalize(b)
}

/// Removes everything inside `dir` (not following symlinks), leaving `dir` itself.
fn empty_dir(dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            std::fs::remove_dir_all(entry.path())?;
        } else {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

/// Undoes a creation: worktree directory, admin entry (and its lock), branch, state record.
/// Returns what could not be removed (empty when the rollback is complete).
pub fn rollback(
    repo: &Repo,
    layout: &Layout,
    store: &Store,
    record: &SessionRecord,
) -> Vec<String> {
    let mut left = Vec::new();
    // The admin entry first: once it is gone, git no longer thinks the directory is a worktree.
    // Only the entry this creation made: `git worktree add --lock` wrote it locked with our
    // reason naming this label. Any other entry for the same path (one that existed before this
    // create ran, a person's own, one another tool locked) is left as it is.
    let our_reason = creating_lock_reason(&record.label);
    for entry in git::linked_worktrees(&repo.common_dir) {
        if !same_path(&entry.path, &record.path) {
            continue;
        }
        let ours = entry
            .locked
            .as_deref()
            .is_some_and(|reason| reason.trim() == our_reason);
        if ours {
            if let Err(e) = std::fs::remove_dir_all(&entry.admin) {
                left.push(format!("{}: {e}", entry.admin.display()));
            }
        } else {
            left.push(format!(
                "{} was not made by this creation; not removed",
                entry.admin.display()
            ));
        }
    }
    // A creation killed mid-way can leave its entry without a `gitdir` (git's own cleanup ran
    // while a child still wrote HEAD or the index): no worktree claims such an entry, and git
    // names the entry after the directory. Ours to remove when nobody else locked it.
    if let Some(name) = record.path.file_name() {
        let junk = repo.common_dir.join("worktrees").join(name);
        let locked = std::fs::read_to_string(junk.join("locked")).ok();
        let unclaimed = std::fs::symlink_metadata(&junk).is_ok_and(|m| m.is_dir())
            && !junk.join("gitdir").exists()
            && locked.as_deref().is_none_or(|r| r.trim() == our_reason);
        if unclaimed {
            if let Err(e) = std::fs::remove_dir_all(&junk) {
                left.push(format!("{}: {e}", junk.display()));
            }
        }
    }
    if record.path.exists() {
        let empty = std::fs::read_dir(&record.path).is_ok_and(|mut d| d.next().is_none());
        let ours = session::admin_dir_of(&record.path)
            .is_some_and(|a| a.starts_with(repo.common_dir.join("worktrees")))
            || session::points_into(&record.path, &repo.common_dir);
        let dotgit_dangling = std::fs::read_to_string(record.path.join(".git"))
            .ok()
            .and_then(|t| t.strip_prefix("gitdir:").map(|s| s.trim().to_string()))
            .is_some_and(|t| Path::new(&t).starts_with(repo.common_dir.join("worktrees")));
        if layout.may_delete(record) && (empty || ours || dotgit_dangling) {
            // An empty directory that was there before `create` is emptied and left, as found.
            let removed = if record.dir_existed {
                empty_dir(&record.path)
            } else {
                std::fs::remove_dir_all(&record.path)
            };
            if let Err(e) = removed {
                left.push(format!("{}: {e}", record.path.display()));
            }
        } else {
            left.push(format!(
                "{} was not made by this creation; not removed",
                record.path.display()
            ));
        }
    }
    // The worktrees directory a first create made holds nothing now (git may have removed the
    // worktree itself when it died): it goes too, only while empty (remove_dir refuses else).
    if !record.path.exists()
        && record
            .path
            .parent()
            .is_some_and(|p| session::normalize(p) == layout.worktrees_dir)
    {
        let _ = std::fs::remove_dir(&layout.worktrees_dir);
    }
    if !record.attached && record.branch.starts_with(&layout.prefix) {
        match repo.branch_tip(&record.branch) {
            Ok(Some(tip)) if tip.to_string() == record.base_commit => {
                if let Err(e) = delete_branch_quietly(repo, &record.branch, tip) {
                    left.push(format!("branch {}: {e:#}", record.branch));
                }
            }
            Ok(Some(_)) => left.push(format!(
                "branch {} has moved since creation; not deleted",
                record.branch
            )),
            Ok(None) => {}
            Err(e) => left.push(format!("branch {}: {e:#}", record.branch)),
        }
    }
    if let Err(e) = crate::ownership::remove_session(store, &record.label) {
        left.push(format!("state record: {e:#}"));
    }
    store.audit(
        "rollback",
        serde_json::json!({"label": record.label, "path": record.path.display().to_string(),
                           "incomplete": left}),
    );
    left
}

/// Rolls back every creation whose process is gone (same host, pid and start time). Any
/// command may call this; it reports what it did on stderr.
pub fn recover_interrupted(repo: &Repo, config: &Config, store: &Store) -> Result<()> {
    let layout = Layout::new(repo, config);
    for record in session::load_all(store)? {
        if record.state != RecordState::Creating {
            continue;
        }
        let dead = record
            .creator
            .as_ref()
            .is_none_or(|p| p.liveness() == Liveness::Dead);
        if !dead {
            continue;
        }
        // Re-read under the lock so two commands noticing at once roll back only once.
        let lock = store.lock(&SessionRecord::store_path(&record.label))?;
        let still = session::load(store, &record.label)?;
        drop(lock);
        let Some(still) = still.filter(|r| r.state == RecordState::Creating) else {
            continue;
        };
        // The dead creator's `git worktree add` (and the hooks it started) may still run: stop
        // its whole process group first, or it keeps writing into what is being rolled back.
        if let Some(worker) = &still.worker {
            stop_worker(worker);
        }
        // The worker may have started before its pid was recorded: what runs inside the half-made
        // worktree (the checkout, hooks) is its group's too. Never a terminal's own group.
        stop_groups_inside(&still.path);
        // A ref lock the killed git left on the session's own branch is stale now.
        let _ = std::fs::remove_file(
            repo.common_dir
                .join(format!("refs/heads/{}.lock", still.branch)),
        );
        let left = rollback(repo, &layout, store, &still);
        if left.is_empty() {
            output::note(format!(
                "rolled back the interrupted creation of session \"{}\"",
                still.label
            ));
        } else {
            output::warn(format!(
                "rolled back the interrupted creation of \"{}\" only in part: {}",
                still.label,
                left.join("; ")
            ));
        }
    }
    Ok(())
}

/// Kills a recorded worker's process group (git and every hook or child it started) and waits
/// briefly until none of it runs. The group is ours when its leader is still that very process
/// (pid, start time, host), or when the leader is gone: a pid is not handed out again while a
/// process group of that id has members, so what is left in the group is the worker's own
/// children. A live process with the leader's pid but another start time is someone else's.
fn stop_worker(worker: &crate::process::ProcessId) {
    if worker.host != crate::process::hostname() || worker.pid == 0 {
        return;
    }
    match crate::process::start_time(worker.pid) {
        Some(start) if worker.start != 0 && start != worker.start => return,
        Some(_) if worker.start == 0 => return,
        _ => {}
    }
    git::kill_group(worker.pid);
    let started = std::time::Instant::now();
    while crate::process::group_has_members(worker.pid)
        && started.elapsed() < Duration::from_secs(5)
    {
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Kills the process groups of processes working inside a worktree being rolled back, except
/// our own group and any session-leading group (a terminal's shell).
fn stop_groups_inside(path: &Path) {
    let own = crate::process::group_and_session(std::process::id()).map(|(g, _)| g);
    for o in crate::process::occupants(path) {
        let Some((pgid, sid)) = crate::process::group_and_session(o.pid) else {
            continue;
        };
        if Some(pgid) == own || pgid == sid || pgid <= 1 {
            continue;
        }
        git::kill_group(pgid);
        let started = std::time::Instant::now();
        while crate::process::group_has_members(pgid) && started.elapsed() < Duration::from_secs(5)
        {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Deletes `refs/heads/<branch>` through libgit2, only if it still points at `expected`.
/// Rollback runs from any command, read-only ones included, and those must never run a program
/// the repository names (git's `reference-transaction` hook would run under `git update-ref`).
fn delete_branch_quietly(repo: &Repo, branch: &str, expected: git2::Oid) -> Result<()> {
    let full = format!("refs/heads/{branch}");
    let mut reference = repo
        .git
        .find_reference(&full)
        .with_context(|| format!("reading {full}"))?;
    if reference.target() != Some(expected) {
        return Err(anyhow!("{full} has moved"));
    }
    // libgit2 deletes against the value it loaded: a concurrent move makes this fail, not lose it.
    reference
        .delete()
        .with_context(|| format!("deleting {full}"))
}

/// Deletes `refs/heads/<branch>` only if it still points at `expected`.
pub fn delete_branch(repo: &Repo, branch: &str, expected: git2::Oid) -> Result<()> {
    let full = format!("refs/heads/{branch}");
    let dir = repo.porcelain_dir().to_path_buf();
    git::git_ok(
        &dir,
        [
            "update-ref",
            "-d",
            "-m",
            "git-session: remove session branch",
            "--end-of-options",
            &full,
            &expected.to_string(),
        ],
    )
    .map(|_| ())
}

/// What [`archive`] wrote, and what it could not hold.
#[derive(Debug, Clone)]
pub struct Archived {
    /// `refs/session-archive/<label>/<stamp>`; `None` when there was nothing to hold.
    pub refname: Option<String>,
    /// The one command that restores the worktree from the archive.
    pub restore: String,
    /// What is lost all the same, one line each (said before anything is removed).
    pub not_archived: Vec<String>,
}

/// Writes `refs/session-archive/<label>/<UTC timestamp>`: one commit that holds everything the
/// removal would lose. Its tree is the worktree's files, uncommitted and untracked (not ignored)
/// included; its parents are the branch tip, the worktree's HEAD when it differs (a detached HEAD
/// with commits no ref holds), and, fetched into this repository, the tips of every submodule's
/// unpushed commits and a snapshot commit of each submodule's uncommitted files. One ref keeps all
/// of it reachable; the commit message names each parent.
pub fn archive(
    repo: &Repo,
    status: &session::Status,
    hazards: &crate::hazards::Hazards,
) -> Result<Archived> {
    let record = &status.record;
    let stamp = clock::now().format("%Y%m%dT%H%M%SZ").to_string();
    let refname = format!("refs/session-archive/{}/{stamp}", record.label);
    let mut parents: Vec<(git2::Oid, String)> = Vec::new();
    if let Some(tip) = status.tip {
        parents.push((tip, format!("branch {}", record.branch)));
    }
    if let Some(head) = hazards.head.filter(|h| Some(*h) != status.tip) {
        parents.push((head, "the worktree's HEAD (detached)".to_string()));
    }
    for tip in &hazards.reflog_tips {
        if !parents.iter().any(|(p, _)| p == tip) {
            parents.push((
                *tip,
                "a commit only the worktree's HEAD reflog held".to_string(),
            ));
        }
    }
    let mut not_archived = Vec::new();
    for sub in hazards.submodules() {
        match archive_submodule(repo, record, sub, &stamp) {
            Ok(tips) => {
                for (oid, what) in tips {
                    if !parents.iter().any(|(p, _)| *p == oid) {
                        parents.push((oid, what));
                    }
                }
            }
            Err(e) => not_archived.push(format!(
                "submodule {}: {} and {} ({e:#})",
                sub.path,
                output::count(sub.commits.len(), "unpushed commit"),
                output::count(sub.dirty.len(), "uncommitted file")
            )),
        }
    }
    let mut message = format!(
        "git-session archive of {} ({stamp})\n\nbranch: {}\npath: {}\n",
        record.label,
        record.branch,
        record.path.display()
    );
    for (i, (oid, what)) in parents.iter().enumerate() {
        message.push_str(&format!("parent {}: {oid} {what}\n", i + 1));
    }
    let parent_ids: Vec<git2::Oid> = parents.iter().map(|(o, _)| *o).collect();
    let tree = if record.path.is_dir() && !status.dirty.is_empty() {
        snapshot_tree(&record.path)?
    } else if let Some((first, _)) = parents.first() {
        repo.git.find_commit(*first)?.tree_id().to_string()
    } else {
        return Ok(Archived {
            refname: None,
            restore: String::new(),
            not_archived,
        });
    };
    let commit = commit_tree(repo.porcelain_dir(), &tree, &parent_ids, &message)?;
    git::git_ok(
        repo.porcelain_dir(),
        [
            "update-ref",
            "-m",
            "git-session: archive",
            "--end-of-options",
            &refname,
            &commit,
            "",
        ],
    )?;
    let path = shell_quote(&record.path.display().to_string());
    let restore = if status.tip.is_some() {
        format!(
            "git worktree add -b {branch} {path} {refname}^1 && git -C {path} restore --source={refname} --worktree -- .",
            branch = shell_quote(&record.branch),
        )
    } else {
        format!("git worktree add --detach {path} {refname}")
    };
    Ok(Archived {
        refname: Some(refname),
        restore,
        not_archived,
    })
}

/// The tree of a worktree's files as `git add -A` sees them, through a throwaway index seeded
/// from the worktree's own (so only what changed is rehashed); the worktree's index is untouched.
fn snapshot_tree(worktree: &Path) -> Result<String> {
    let tmp = tempfile::Builder::new()
        .prefix("git-session-archive")
        .tempdir()
        .context("creating a temporary index")?;
    let index = tmp.path().join("index");
    if let Some(admin) = session::admin_dir_of(worktree) {
        let _ = std::fs::copy(admin.join("index"), &index);
    }
    Run::new(worktree, ["add", "-A", "--", "."])
        .deadline(PORCELAIN_DEADLINE)
        .env("GIT_INDEX_FILE", &index)
        .run()
        .map_err(|e| anyhow!("git add -A (archive of {}): {e}", worktree.display()))?;
    let tree = Run::new(worktree, ["write-tree"])
        .deadline(PORCELAIN_DEADLINE)
        .env("GIT_INDEX_FILE", &index)
        .run()
        .map_err(|e| anyhow!("git write-tree (archive of {}): {e}", worktree.display()))?
        .stdout;
    Ok(tree.trim().to_string())
}

fn commit_tree(dir: &Path, tree: &str, parents: &[git2::Oid], message: &str) -> Result<String> {
    let mut args: Vec<String> = vec!["commit-tree".into()];
    for p in parents {
        args.push("-p".into());
        args.push(p.to_string());
    }
    args.extend(["-m".into(), message.to_string(), tree.to_string()]);
    Ok(git::git_ok(dir, args)?.trim().to_string())
}

/// Brings one submodule's work into this repository's object store: a snapshot commit of its
/// uncommitted files (made in the submodule), and its unpushed tips, fetched without a ref (the
/// archive commit that names them as parents keeps them). Returns the fetched tips.
fn archive_submodule(
    repo: &Repo,
    record: &SessionRecord,
    sub: &crate::hazards::SubmoduleRisk,
    stamp: &str,
) -> Result<Vec<(git2::Oid, String)>> {
    let mut tips: Vec<(git2::Oid, String)> = sub
        .tips
        .iter()
        .map(|t| (*t, format!("submodule {} commits", sub.path)))
        .collect();
    if !sub.dirty.is_empty() {
        let worktree = git2::Repository::open(&sub.gitdir)?
            .workdir()
            .map(Path::to_path_buf)
            .ok_or_else(|| anyhow!("it has no worktree"))?;
        let tree = snapshot_tree(&worktree)?;
        let head = crate::hazards::read_head(&sub.gitdir)
            .ok()
            .and_then(|h| match h {
                crate::hazards::Head::Detached(o) => Some(o),
                crate::hazards::Head::Branch(r) => git2::Repository::open(&sub.gitdir)
                    .ok()?
                    .refname_to_id(&r)
                    .ok(),
            });
        let message = format!(
            "git-session archive of submodule {} of {} ({stamp}): uncommitted files\n",
            sub.path, record.label
        );
        let snap = commit_tree(
            &worktree,
            &tree,
            &head.into_iter().collect::<Vec<_>>(),
            &message,
        )?;
        tips.push((
            git2::Oid::from_str(&snap)?,
            format!("submodule {} uncommitted files", sub.path),
        ));
    }
    if tips.is_empty() {
        return Ok(tips);
    }
    let mut args: Vec<std::ffi::OsString> = vec![
        // The source is this worktree's own submodule repository, a local directory we found
        // ourselves: allow the file transport for this one fetch (git limits it by default).
        "-c".into(),
        "protocol.file.allow=always".into(),
        "fetch".into(),
        "--no-tags".into(),
        "--no-write-fetch-head".into(),
        "--quiet".into(),
        // The tips are commits, not ref tips: let this one upload-pack hand them over.
        "--upload-pack=git -c uploadpack.allowAnySHA1InWant=true upload-pack".into(),
        "--end-of-options".into(),
        sub.gitdir.as_os_str().to_owned(),
    ];
    args.extend(tips.iter().map(|(t, _)| t.to_string().into()));
    Run::new(repo.porcelain_dir(), args)
        .deadline(PORCELAIN_DEADLINE)
        .run()
        .map_err(|e| anyhow!("fetching from {}: {e}", sub.gitdir.display()))?;
    for (t, _) in &tips {
        repo.git
            .find_commit(*t)
            .with_context(|| format!("commit {t} did not arrive"))?;
    }
    Ok(tips)
}

/// Quotes for a POSIX shell when needed.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:@,".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Removes a session's worktree (via `git worktree remove`), its branch (if it is ours, still at
/// `status.tip`, and `keep_branch` is false) and its record. The caller has decided, through
/// [`crate::hazards::inspect`], that this loses nothing, or the user forced it and [`archive`]
/// holds the work: only then (`forced`) does git get `--force`; otherwise git's own refusal
/// (dirty files, submodules) stands and is reported.
pub fn remove(
    repo: &Repo,
    layout: &Layout,
    store: &Store,
    status: &session::Status,
    keep_branch: bool,
    forced: bool,
) -> Result<()> {
    let record = &status.record;
    if !record.attached && record.path.exists() {
        if !layout.may_delete(record) {
            return Err(UserError::refused(format!(
                "the record of \"{}\" points at {}, outside {}",
                record.label,
                record.path.display(),
                layout.worktrees_dir.display()
            ))
            .hinted("remove that worktree by hand with `git worktree remove`, then rerun")
            .into());
        }
        let mut args: Vec<&std::ffi::OsStr> = vec!["worktree".as_ref(), "remove".as_ref()];
        if forced {
            args.push("--force".as_ref());
        }
        args.extend(["--".as_ref(), record.path.as_os_str()]);
        Run::new(repo.porcelain_dir(), args)
            .deadline(PORCELAIN_DEADLINE)
            .run()
            .map_err(|e| {
                let err = UserError::refused(format!(
                    "git refused to remove the worktree of \"{}\": {}",
                    record.label,
                    e.to_string().trim_start_matches("git exited with 128: ")
                ));
                match &e {
                    RunError::Failed { stderr, .. } if stderr.contains("submodule") => err.hinted(
                        "git removes a worktree with submodules only when forced: \
                         `git session cleanup --force` archives everything first",
                    ),
                    _ => err.hinted("nothing was removed; see git's reason above"),
                }
            })?;
    } else if !record.attached {
        // The directory is gone by hand: drop this session's stale admin entry (what it held was
        // judged by the caller), and no other entry.
        for entry in git::linked_worktrees(&repo.common_dir) {
            if same_path(&entry.path, &record.path)
                && entry.locked.is_none()
                && !entry.path.exists()
            {
                std::fs::remove_dir_all(&entry.admin)
                    .with_context(|| format!("removing {}", entry.admin.display()))?;
            }
        }
    }
    if !keep_branch && !record.attached && record.branch.starts_with(&layout.prefix) {
        if let Some(tip) = status.tip {
            delete_branch(repo, &record.branch, tip)?;
        }
    }
    crate::ownership::remove_session(store, &record.label)?;
    Ok(())
}

/// What `prune` did (or, in a dry run, would do) with one admin entry under `<common>/worktrees/`.
#[derive(Debug, Clone)]
pub struct EntryVerdict {
    pub admin: std::path::PathBuf,
    /// Removed (a dry run: would be removed).
    pub removed: bool,
    pub why: String,
}

/// `git worktree prune`, decided entry by entry so that every removal is reported and nothing
/// that holds work goes. An entry is removed only when it is unlocked, its worktree directory is
/// gone (or it has no `gitdir` at all), no session record names that directory (sessions go only
/// through their own checks), and it holds no work of its own (a detached HEAD with commits no
/// ref holds, submodule repositories). Two entries naming one existing directory are reported
/// (`git worktree repair` sorts them out), never removed.
pub fn prune_entries(repo: &Repo, records: &[SessionRecord], dry_run: bool) -> Vec<EntryVerdict> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir(repo.common_dir.join("worktrees")) else {
        return out;
    };
    let mut seen: Vec<(std::path::PathBuf, std::path::PathBuf)> = Vec::new();
    let mut entries: Vec<_> = dir.flatten().map(|e| e.path()).collect();
    entries.sort();
    for admin in entries {
        let keep = |why: String| EntryVerdict {
            admin: admin.clone(),
            removed: false,
            why,
        };
        let Ok(meta) = std::fs::symlink_metadata(&admin) else {
            continue;
        };
        if !meta.is_dir() {
            out.push(keep("not a directory; left for a person to look at".into()));
            continue;
        }
        if admin.join("locked").exists() {
            continue;
        }
        let gitdir = std::fs::read_to_string(admin.join("gitdir"))
            .ok()
            .map(|t| std::path::PathBuf::from(t.trim_end_matches(['\n', '\r'])))
            .map(|p| if p.is_relative() { admin.join(p) } else { p });
        let worktree = gitdir.as_ref().map(|g| {
            g.parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| g.clone())
        });
        if let Some(wt) = &worktree {
            if wt.exists() {
                let canonical = session::normalize(wt);
                if let Some((other, _)) = seen.iter().find(|(_, p)| *p == canonical) {
                    out.push(keep(format!(
                        "it and {} both name {}; run `git worktree repair`",
                        other.display(),
                        wt.display()
                    )));
                }
                seen.push((admin.clone(), canonical));
                continue;
            }
            if records.iter().any(|r| same_path(&r.path, wt)) {
                // A session's entry goes only with its session, after that session's checks
                // (prune's own verdict for it is reported there).
                continue;
            }
        }
        if let Some(work) = crate::hazards::admin_holds_work(repo, &admin) {
            out.push(keep(format!("{work}; kept")));
            continue;
        }
        let why = match &worktree {
            Some(wt) => format!("its directory {} is gone", wt.display()),
            None => "it has no gitdir file".to_string(),
        };
        let removed = dry_run || std::fs::remove_dir_all(&admin).is_ok();
        out.push(EntryVerdict {
            admin: admin.clone(),
            removed,
            why: if removed {
                why
            } else {
                format!("{why}, but it could not be removed")
            },
        });
    }
    out
}
