//! Where an agent's file tool writes, judged against the repository's worktrees: a session's
//! agent stays in its own worktree (DESIGN: "An agent stays in its own worktree").
//!
//! Invariants a reader must not break:
//! - The target is the file the write will change: the path made absolute against the payload's
//!   cwd by the one rule ([`crate::ownership::path::resolve`]), then, while it names a symbolic
//!   link, that link's target (a link inside the worktree pointing into another one is an
//!   escape).
//! - Which worktree holds the target is read from the file system, walking up from it to the
//!   first directory with a `.git`: the deepest worktree wins (a worktree nested in another), a
//!   `.git` of another repository is not ours (outside: not this guard's business), and a target
//!   under the git directory, or under a worktree's `.git`, is git's own.
//! - Only an agent that belongs to a session is judged; a write inside its own worktree, or
//!   outside every worktree of the repository, is never touched. The walk costs a few `stat`s
//!   per path and reads no record.

use crate::git::Repo;
use std::path::{Component, Path, PathBuf};

/// Where a write lands, when not in the session's own worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Into {
    /// Inside another worktree of this repository (its root), the main one or a session's.
    Worktree { root: PathBuf, main: bool },
    /// Inside the repository's git directory, or a worktree's `.git`.
    GitDir,
}

/// A write that leaves the session's own worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Escape {
    /// The file the write changes (symbolic links followed).
    pub target: PathBuf,
    pub into: Into,
    /// The session's own worktree.
    pub own: PathBuf,
    /// The same path in the session's own worktree (for a write into another worktree).
    pub instead: Option<PathBuf>,
}

/// How many symbolic links are followed before giving up (as the kernel's ELOOP limit).
const MAX_LINKS: usize = 40;

/// Where the write of `file` (as the tool names it, against `cwd`) lands, when that is outside
/// `own`, the session's worktree, and inside the repository: another worktree or git's own
/// files. `None` for a write at home, or outside the repository.
pub fn judge(repo: &Repo, own: &Path, cwd: &Path, file: &str) -> Option<Escape> {
    if file.contains('\0') {
        return None;
    }
    let target = target_of(cwd, file);
    let own = crate::session::normalize(own);
    let common = crate::session::normalize(&repo.common_dir);
    if target.starts_with(&common) {
        return Some(Escape {
            target,
            into: Into::GitDir,
            own,
            instead: None,
        });
    }
    let (root, main) = worktree_of(&target, &common)?;
    let rel = target.strip_prefix(&root).ok()?.to_path_buf();
    let in_git = rel
        .components()
        .next()
        .is_some_and(|c| matches!(c, Component::Normal(n) if n.eq_ignore_ascii_case(".git")));
    if in_git {
        return Some(Escape {
            target,
            into: Into::GitDir,
            own,
            instead: None,
        });
    }
    if root == own {
        return None;
    }
    Some(Escape {
        instead: Some(own.join(&rel)),
        target,
        into: Into::Worktree { root, main },
        own,
    })
}

/// The file a write of `file` changes: resolved against `cwd`, symbolic links followed.
fn target_of(cwd: &Path, file: &str) -> PathBuf {
    let mut target = crate::ownership::path::resolve(cwd, Path::new(file));
    for _ in 0..MAX_LINKS {
        let is_link = std::fs::symlink_metadata(&target).is_ok_and(|m| m.file_type().is_symlink());
        if !is_link {
            break;
        }
        let Ok(link) = std::fs::read_link(&target) else {
            break;
        };
        let dir = target
            .parent()
            .map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
        target = crate::ownership::path::resolve(&dir, &link);
    }
    target
}

/// The root of the worktree of this repository (git directory `common`) holding `target`, and
/// whether it is the main one; `None` when the first `.git` above it is another repository's,
/// or there is none.
fn worktree_of(target: &Path, common: &Path) -> Option<(PathBuf, bool)> {
    let mut dir = target.parent();
    while let Some(d) = dir {
        let dot_git = d.join(".git");
        if let Ok(meta) = std::fs::symlink_metadata(&dot_git) {
            return ours(d, &dot_git, meta.is_dir(), common);
        }
        dir = d.parent();
    }
    None
}

/// Whether the worktree at `root`, whose `.git` is `dot_git`, belongs to the repository whose
/// git directory is `common`: its `.git` is that directory (the main worktree), or a file naming
/// it or one of its `worktrees/` entries.
fn ours(root: &Path, dot_git: &Path, is_dir: bool, common: &Path) -> Option<(PathBuf, bool)> {
    if is_dir {
        return (crate::session::normalize(dot_git) == common).then(|| (root.to_path_buf(), true));
    }
    let text = crate::git::read_admin_file(dot_git)?;
    let named = text.trim().strip_prefix("gitdir:")?.trim();
    let gitdir = crate::session::normalize(&root.join(named));
    if gitdir == common {
        return Some((root.to_path_buf(), true));
    }
    (gitdir.parent() == Some(&common.join("worktrees"))).then(|| (root.to_path_buf(), false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_is_followed_to_what_it_names() {
        let dir = tempfile::tempdir().unwrap();
        let base = crate::session::normalize(dir.path());
        std::fs::create_dir(base.join("a")).unwrap();
        std::fs::create_dir(base.join("b")).unwrap();
        std::os::unix::fs::symlink("../b/t.txt", base.join("a/l.txt")).unwrap();
        assert_eq!(target_of(&base.join("a"), "l.txt"), base.join("b/t.txt"));
        // A loop ends.
        std::os::unix::fs::symlink("m2", base.join("a/m1")).unwrap();
        std::os::unix::fs::symlink("m1", base.join("a/m2")).unwrap();
        let _ = target_of(&base.join("a"), "m1");
    }
}
