//! The archive `cleanup --force` and `prune` write before removing work: one commit whose tree
//! is the worktree's files and whose parents hold every tip only the worktree holds.

use super::{count, PORCELAIN_DEADLINE};
use crate::base::clock;
use crate::git::{self, Repo, Run};
use crate::session::{self, SessionRecord};
use anyhow::{anyhow, Context, Result};
use std::path::Path;

/// What [`archive`] wrote, and what it could not hold.
#[derive(Debug, Clone)]
pub struct Archived {
    /// `refs/session-archive/<label>/<stamp>`; `None` when there was nothing to hold.
    pub refname: Option<String>,
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
    let refname = format!("refs/session-archive/{}/{stamp}", record.label.file_name());
    let mut parents: Vec<(git::Oid, String)> = Vec::new();
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
                count(sub.commits.len(), "unpushed commit"),
                count(sub.dirty.len(), "uncommitted file")
            )),
        }
    }
    // The lines `restore` reads back (see `super::restore`): the session's base as named and
    // as it resolved at creation, so a restored session measures ahead/behind as before.
    let mut message = format!(
        "git-session archive of {} ({stamp})\n\nbranch: {}\npath: {}\nbase: {}\nbase commit: {}\n",
        record.label,
        record.branch,
        record.path.display(),
        record.base,
        record.base_commit,
    );
    for (i, (oid, what)) in parents.iter().enumerate() {
        message.push_str(&format!("parent {}: {oid} {what}\n", i + 1));
    }
    let parent_ids: Vec<git::Oid> = parents.iter().map(|(o, _)| *o).collect();
    let tree = if record.path.is_dir() && !status.dirty.is_empty() {
        snapshot_tree(&record.path)?
    } else if let Some((first, _)) = parents.first() {
        repo.objects().find_commit(*first)?.tree_id().to_string()
    } else {
        return Ok(Archived {
            refname: None,
            not_archived,
        });
    };
    let commit = commit_tree(repo.porcelain_dir(), &tree, &parent_ids, &message)?;
    create_ref(repo, &refname, &commit)?;
    Ok(Archived {
        refname: Some(refname),
        not_archived,
    })
}

/// The archive refs (`refs/session-archive/<label>/<stamp>`) older than `keep` at `now`, by name;
/// a ref whose last component is not a stamp `archive` writes is never counted.
pub fn expired_archives(
    repo: &Repo,
    keep: chrono::Duration,
    now: clock::Time,
) -> Result<Vec<String>> {
    use chrono::{NaiveDateTime, TimeZone, Utc};
    let mut out = Vec::new();
    for (name, _) in repo.all_archive_refs()? {
        let Some(stamp) = name.rsplit('/').next() else {
            continue;
        };
        let Ok(at) = NaiveDateTime::parse_from_str(stamp, "%Y%m%dT%H%M%SZ") else {
            continue;
        };
        if now - Utc.from_utc_datetime(&at) <= keep {
            continue;
        }
        out.push(name);
    }
    Ok(out)
}

/// Deletes one archive ref, whatever it points at (its time is over).
pub fn delete_archive(repo: &Repo, name: &str) -> Result<()> {
    let dir = repo.porcelain_dir().to_path_buf();
    git::git_ok(&dir, ["update-ref", "-d", "--end-of-options", name]).map(|_| ())
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

/// Creates the archive ref `refname` at `commit`; refuses (never overwrites) one that exists.
pub(super) fn create_ref(repo: &Repo, refname: &str, commit: &str) -> Result<()> {
    git::git_ok(
        repo.porcelain_dir(),
        [
            "update-ref",
            "-m",
            "git-session: archive",
            "--end-of-options",
            refname,
            commit,
            "",
        ],
    )?;
    Ok(())
}

/// A commit of `tree` with `parents` and `message`, made by `git commit-tree` in `dir`.
pub(super) fn commit_tree(
    dir: &Path,
    tree: &str,
    parents: &[git::Oid],
    message: &str,
) -> Result<String> {
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
) -> Result<Vec<(git::Oid, String)>> {
    let mut tips: Vec<(git::Oid, String)> = sub
        .tips
        .iter()
        .map(|t| (*t, format!("submodule {} commits", sub.path)))
        .collect();
    if !sub.dirty.is_empty() {
        let worktree = git::Checkout::open(&sub.gitdir)?
            .workdir()
            .map(Path::to_path_buf)
            .ok_or_else(|| anyhow!("it has no worktree"))?;
        let tree = snapshot_tree(&worktree)?;
        let head = crate::git::read_head(&sub.gitdir)
            .ok()
            .and_then(|h| match h {
                crate::git::Head::Detached(o) => Some(o),
                crate::git::Head::Branch(r) => Repo::open(&sub.gitdir).ok()?.ref_id(&r),
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
            git::Oid::from_str(&snap)?,
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
        repo.objects()
            .find_commit(*t)
            .with_context(|| format!("commit {t} did not arrive"))?;
    }
    Ok(tips)
}
