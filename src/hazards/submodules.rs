//! Submodules under a worktree's admin entry (`modules/`, initialised or deinit'ed and kept):
//! their uncommitted files and the commits only they hold.

use super::{read_head, walk_commits, Hazard, Hazards, Head, SubmoduleRisk, MAX_MODULE_DEPTH};
use crate::git::{self, Oid, Repo};
use crate::session;
use crate::session::Status;
use anyhow::{Context, Result};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Git directories of submodules under `<admin>/modules`, with their names (their paths under
/// `modules/`, nested ones joined by `/modules/`), depth-limited.
pub(super) fn module_gitdirs(admin: &Path) -> Vec<(String, PathBuf)> {
    let mut found = Vec::new();
    let mut stack = vec![(admin.join("modules"), String::new(), 0usize)];
    while let Some((dir, prefix, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if !kind.is_dir() {
                continue;
            }
            let path = entry.path();
            let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
            if path.join("HEAD").is_file() && path.join("objects").is_dir() {
                found.push((name.clone(), path.clone()));
                if depth + 1 < MAX_MODULE_DEPTH {
                    stack.push((path.join("modules"), format!("{name}/"), depth + 1));
                }
            } else if depth + 1 < MAX_MODULE_DEPTH {
                // Submodule names may hold slashes: `modules/lib/a` for the submodule "lib/a".
                stack.push((path, format!("{name}/"), depth + 1));
            }
        }
    }
    found.sort();
    found
}

/// The commit ids the superproject worktree records for gitlinks (HEAD's tree and the index),
/// keyed by nothing: any recorded commit counts as held for any submodule.
fn recorded_gitlinks(worktree_head: Option<Oid>, repo: &Repo, admin: &Path) -> BTreeSet<Oid> {
    let mut out = BTreeSet::new();
    if let Some(head) = worktree_head {
        repo.objects().gitlinks_of(head, &mut out);
    }
    out.extend(git::gitlinks_in_index_file(&admin.join("index")));
    out
}

pub(super) fn submodule_hazards(repo: &Repo, status: &Status, admin: &Path, out: &mut Hazards) {
    let modules = module_gitdirs(admin);
    if modules.is_empty() {
        return;
    }
    out.has_modules = true;
    let head = match read_head(admin) {
        Ok(Head::Detached(oid)) => Some(oid),
        Ok(Head::Branch(name)) => repo.ref_target(&name).ok().flatten(),
        Err(_) => status.tip,
    };
    let recorded = recorded_gitlinks(head, repo, admin);
    for (name, gitdir) in modules {
        match submodule_risk(&name, &gitdir, &recorded, &status.record.path) {
            Ok(Some(risk)) => out.items.push(Hazard::Submodule(risk)),
            Ok(None) => {}
            Err(e) => out
                .items
                .push(Hazard::Uninspectable(format!("submodule {name}: {e:#}"))),
        }
    }
}

fn submodule_risk(
    name: &str,
    gitdir: &Path,
    recorded: &BTreeSet<Oid>,
    worktree_root: &Path,
) -> Result<Option<SubmoduleRisk>> {
    let sub = Repo::open(gitdir).with_context(|| format!("opening {}", gitdir.display()))?;
    let mut tips = Vec::new();
    match read_head(gitdir) {
        Ok(Head::Detached(oid)) => tips.push(oid),
        // An unborn branch holds nothing; its commits, if any, are among the branches below.
        Ok(Head::Branch(r)) => tips.extend(sub.ref_id(&r)),
        Err(_) => {}
    }
    tips.extend(sub.branch_commits()?);
    tips.sort();
    tips.dedup();
    let mut walk = sub.history()?;
    walk.hide_refs(&|n| n.starts_with("refs/remotes/") || n.starts_with("refs/tags/"));
    for id in recorded {
        // A recorded commit this submodule does not have is simply not there to hide.
        if sub.objects().has_commit(*id) {
            walk.hide(*id)?;
        }
    }
    let commits = walk_commits(walk, &tips, 1000)?;
    let worktree = sub.workdir().map(Path::to_path_buf);
    let dirty = match worktree {
        // Only a checked-out submodule (its `.git` links back to this git dir) has files.
        Some(dir) if session::admin_dir_of(&dir).is_some_and(|a| same_dir(&a, gitdir)) => {
            crate::git::status::dirty_files(&dir)?
        }
        _ => Vec::new(),
    };
    if commits.is_empty() && dirty.is_empty() {
        return Ok(None);
    }
    // Shown as its path in the worktree when it has one there, else by its module name.
    let root = std::fs::canonicalize(worktree_root).unwrap_or_else(|_| worktree_root.into());
    let path = sub
        .workdir()
        .map(|w| std::fs::canonicalize(w).unwrap_or_else(|_| w.to_path_buf()))
        .and_then(|w| {
            w.strip_prefix(&root)
                .ok()
                .map(|p| p.to_string_lossy().into_owned())
        })
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| name.to_string());
    Ok(Some(SubmoduleRisk {
        path,
        gitdir: gitdir.to_path_buf(),
        tips,
        commits,
        dirty,
    }))
}

fn same_dir(a: &Path, b: &Path) -> bool {
    let ca = std::fs::canonicalize(a).unwrap_or_else(|_| a.to_path_buf());
    let cb = std::fs::canonicalize(b).unwrap_or_else(|_| b.to_path_buf());
    ca == cb
}

/// The submodules `.gitmodules` in `worktree` lists (`path = ...` lines) whose directory holds no
/// `.git`: not initialised there. The rule `session::inspect` warns by.
pub fn uninitialised(worktree: &Path) -> BTreeSet<String> {
    let Ok(modules) = crate::store::read_text(&worktree.join(".gitmodules"), 1 << 20) else {
        return BTreeSet::new();
    };
    modules
        .lines()
        .filter_map(|line| {
            line.trim()
                .strip_prefix("path")
                .and_then(|r| r.trim_start().strip_prefix('='))
                .map(str::trim)
        })
        .filter(|sub| {
            !sub.is_empty() && std::fs::symlink_metadata(worktree.join(sub).join(".git")).is_err()
        })
        .map(str::to_string)
        .collect()
}

/// Drops from one session's `warnings` what holds for the main worktree just as well: a
/// submodule not initialised there either is how this repository is used (git's own clone has
/// one), the same for main and every session, and no news about this session. `main` is the
/// main worktree's set ([`uninitialised`]); the warning's words are `session::inspect`'s.
pub fn without_shared(warnings: &mut Vec<String>, main: &BTreeSet<String>) {
    warnings.retain(|w| {
        !main
            .iter()
            .any(|sub| *w == format!("submodule {} not initialized", session::one_line(sub)))
    });
}
