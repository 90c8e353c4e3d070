//! What a worktree's admin entry says about its checkout: its `HEAD` (a branch or a detached
//! commit) and the git operations in progress there (rebase, am, merge, cherry-pick, revert,
//! bisect, a sequencer), read from the state files git keeps in the entry.
//!
//! Invariant: these only read files (a symlinked `HEAD` is read through, as git does); nothing
//! here runs a program or trusts the session record's idea of the worktree.

use super::Oid;
use anyhow::{Context, Result};
use std::path::Path;

/// A git operation the worktree is in the middle of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Rebase,
    Am,
    Merge,
    CherryPick,
    Revert,
    Bisect,
    Sequencer,
}

impl Operation {
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Rebase => "rebase",
            Operation::Am => "am",
            Operation::Merge => "merge",
            Operation::CherryPick => "cherry-pick",
            Operation::Revert => "revert",
            Operation::Bisect => "bisect",
            Operation::Sequencer => "cherry-pick/revert sequence",
        }
    }

    /// The git command that finishes or abandons it.
    pub fn way_out(self) -> &'static str {
        match self {
            Operation::Rebase => "git rebase --continue or --abort",
            Operation::Am => "git am --continue or --abort",
            Operation::Merge => "git merge --continue or --abort",
            Operation::CherryPick | Operation::Sequencer => "git cherry-pick --continue or --abort",
            Operation::Revert => "git revert --continue or --abort",
            Operation::Bisect => "git bisect reset",
        }
    }
}

/// The operations in progress in the worktree whose admin directory is `admin`.
pub fn operations(admin: &Path) -> Vec<Operation> {
    let mut out = Vec::new();
    if admin.join("rebase-merge").is_dir() {
        out.push(Operation::Rebase);
    }
    if admin.join("rebase-apply").is_dir() {
        out.push(if admin.join("rebase-apply/applying").exists() {
            Operation::Am
        } else {
            Operation::Rebase
        });
    }
    for (file, op) in [
        ("MERGE_HEAD", Operation::Merge),
        ("CHERRY_PICK_HEAD", Operation::CherryPick),
        ("REVERT_HEAD", Operation::Revert),
        ("BISECT_LOG", Operation::Bisect),
    ] {
        if admin.join(file).exists() {
            out.push(op);
        }
    }
    if admin.join("sequencer").is_dir()
        && !out.contains(&Operation::CherryPick)
        && !out.contains(&Operation::Revert)
    {
        out.push(Operation::Sequencer);
    }
    out
}

/// What a worktree's `HEAD` file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Head {
    /// `ref: <full ref name>`.
    Branch(String),
    Detached(Oid),
}

/// Reads `<admin>/HEAD` as git wrote it (a symlinked HEAD is read through, as git does).
pub fn read_head(admin: &Path) -> Result<Head> {
    let path = admin.join("HEAD");
    let text = super::read_admin_file(&path)
        .with_context(|| format!("cannot read {} as a small text file", path.display()))?;
    let text = text.trim();
    if let Some(target) = text.strip_prefix("ref:") {
        return Ok(Head::Branch(target.trim().to_string()));
    }
    Oid::from_str(text)
        .map(Head::Detached)
        .map_err(|_| anyhow::anyhow!("{} holds neither a ref nor a commit id", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_are_read_from_state_files() {
        let dir = tempfile::tempdir().unwrap();
        assert!(operations(dir.path()).is_empty());
        std::fs::create_dir(dir.path().join("rebase-merge")).unwrap();
        std::fs::write(dir.path().join("BISECT_LOG"), "").unwrap();
        assert_eq!(
            operations(dir.path()),
            vec![Operation::Rebase, Operation::Bisect]
        );
        std::fs::create_dir(dir.path().join("rebase-apply")).unwrap();
        std::fs::write(dir.path().join("rebase-apply/applying"), "").unwrap();
        assert!(operations(dir.path()).contains(&Operation::Am));
    }

    #[test]
    fn head_file_forms() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("HEAD"), "ref: refs/heads/x\n").unwrap();
        assert_eq!(
            read_head(dir.path()).unwrap(),
            Head::Branch("refs/heads/x".into())
        );
        let id = "0123456789abcdef0123456789abcdef01234567";
        std::fs::write(dir.path().join("HEAD"), format!("{id}\n")).unwrap();
        assert_eq!(
            read_head(dir.path()).unwrap(),
            Head::Detached(Oid::from_str(id).unwrap())
        );
        std::fs::write(dir.path().join("HEAD"), "garbage").unwrap();
        assert!(read_head(dir.path()).is_err());
    }
}
