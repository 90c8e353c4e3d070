//! Refs: resolving names to commits, the main branch, archive refs, the one ref deletion that
//! must not run a hook, and git's rule for a valid ref name.

use super::Repo;
use anyhow::{anyhow, Context, Result};
use git2::{ErrorCode, Oid, Repository};

/// Whether `name` (a full name such as `refs/heads/x`) is a ref name git accepts.
pub fn is_valid_ref_name(name: &str) -> bool {
    git2::Reference::is_valid_name(name)
}

impl Repo {
    /// `<rev>^{commit}`, or `None` when it names nothing.
    pub fn resolve_commit(&self, rev: &str) -> Result<Option<Oid>> {
        match self.git.revparse_single(rev) {
            Ok(obj) => match obj.peel_to_commit() {
                Ok(c) => Ok(Some(c.id())),
                Err(_) => Ok(None),
            },
            Err(e) if matches!(e.code(), ErrorCode::NotFound | ErrorCode::InvalidSpec) => Ok(None),
            Err(e) if e.class() == git2::ErrorClass::Reference => Ok(None),
            Err(e) => Err(e).with_context(|| format!("resolving {rev}")),
        }
    }

    /// Tip of `refs/heads/<name>`, or `None`.
    pub fn branch_tip(&self, name: &str) -> Result<Option<Oid>> {
        self.ref_target(&format!("refs/heads/{name}"))
    }

    pub fn ref_target(&self, full: &str) -> Result<Option<Oid>> {
        match self.git.find_reference(full) {
            Ok(r) => Ok(r.resolve().ok().and_then(|r| r.target())),
            Err(e) if e.code() == ErrorCode::NotFound || e.code() == ErrorCode::InvalidSpec => {
                Ok(None)
            }
            Err(e) => Err(e).with_context(|| format!("reading {full}")),
        }
    }

    /// The id the ref `full` resolves to, as `git rev-parse <full>` would; `None` when it
    /// names nothing.
    pub fn ref_id(&self, full: &str) -> Option<Oid> {
        self.git.refname_to_id(full).ok()
    }

    /// The commit each local branch points at (peeled); an error when the refs cannot be
    /// listed, so that an inspection that needs them fails closed.
    pub fn branch_commits(&self) -> Result<Vec<Oid>> {
        let mut out = Vec::new();
        for r in self.git.references()?.flatten() {
            if r.name().is_some_and(|n| n.starts_with("refs/heads/")) {
                if let Ok(c) = r.peel_to_commit() {
                    out.push(c.id());
                }
            }
        }
        Ok(out)
    }

    /// The short name of the branch HEAD is on; empty when HEAD is detached or unreadable.
    pub fn head_branch(&self) -> String {
        self.git
            .head()
            .ok()
            .filter(|h| h.is_branch())
            .and_then(|h| h.shorthand().map(str::to_string))
            .unwrap_or_default()
    }

    /// The repository's main branch: the local branch `origin/HEAD` names, else `main`, else
    /// `master`, else whatever the main worktree has checked out.
    pub fn default_base(&self) -> Result<String> {
        if let Ok(r) = self.git.find_reference("refs/remotes/origin/HEAD") {
            if let Some(target) = r.symbolic_target() {
                if let Some(short) = target.strip_prefix("refs/remotes/origin/") {
                    if self.branch_tip(short)?.is_some() {
                        return Ok(short.to_string());
                    }
                    return Ok(format!("origin/{short}"));
                }
            }
        }
        for name in ["main", "master"] {
            if self.branch_tip(name)?.is_some() {
                return Ok(name.to_string());
            }
        }
        let main = match &self.main_worktree {
            Some(dir) => Repository::open(dir).ok(),
            None => Repository::open(&self.common_dir).ok(),
        };
        if let Some(main) = main {
            if let Ok(head) = main.find_reference("HEAD") {
                if let Some(t) = head.symbolic_target() {
                    if let Some(short) = t.strip_prefix("refs/heads/") {
                        return Ok(short.to_string());
                    }
                }
            }
        }
        Err(super::RepoError::NoMainBranch.into())
    }

    /// Short names of `refs/session-archive/<name>/*`, oldest first; `name` is the label's
    /// file name (`fix+login`), so one label's archives never list another's.
    pub fn archive_refs(&self, name: &str) -> Result<Vec<(String, Oid)>> {
        self.refs_matching(&format!("refs/session-archive/{name}/*"))
    }

    /// A branch git cannot keep beside `branch` (short name): one named like a folder of it
    /// (`session/fix` for `session/fix/login`) or one inside it (`session/fix/login/x`).
    pub fn branch_in_the_way(&self, branch: &str) -> Result<Option<String>> {
        let mut at = 0;
        while let Some(slash) = branch[at..].find('/') {
            let folder = &branch[..at + slash];
            if self.branch_tip(folder)?.is_some() {
                return Ok(Some(folder.to_string()));
            }
            at += slash + 1;
        }
        let inside = self.refs_matching(&format!("refs/heads/{branch}/*"))?;
        Ok(inside
            .into_iter()
            .next()
            .map(|(name, _)| name.trim_start_matches("refs/heads/").to_string()))
    }

    /// A local branch whose name is `branch` (short name) in another ASCII case only
    /// (`session/fix` for `session/Fix`): on a case-insensitive file system the two are one
    /// loose ref file. `None` when there is none (an exact match is not one).
    pub fn branch_in_other_case(&self, branch: &str) -> Result<Option<String>> {
        for r in self.git.references_glob("refs/heads/*")? {
            let r = r?;
            if let Some(name) = r.name().and_then(|n| n.strip_prefix("refs/heads/")) {
                if name != branch && name.eq_ignore_ascii_case(branch) {
                    return Ok(Some(name.to_string()));
                }
            }
        }
        Ok(None)
    }

    /// Every archive ref, any label.
    pub fn all_archive_refs(&self) -> Result<Vec<(String, Oid)>> {
        self.refs_matching("refs/session-archive/*")
    }

    fn refs_matching(&self, glob: &str) -> Result<Vec<(String, Oid)>> {
        let mut out = Vec::new();
        for r in self.git.references_glob(glob)? {
            let r = r?;
            if let (Some(name), Some(target)) = (r.name(), r.target()) {
                out.push((name.to_string(), target));
            }
        }
        out.sort();
        Ok(out)
    }

    /// Deletes the ref `full` through libgit2 (no `reference-transaction` hook runs), only if
    /// it still points at `expected`. libgit2 deletes against the value it loaded: a concurrent
    /// move makes this fail, not lose the move.
    pub fn delete_ref_quietly(&self, full: &str, expected: Oid) -> Result<()> {
        let mut reference = self
            .git
            .find_reference(full)
            .with_context(|| format!("reading {full}"))?;
        if reference.target() != Some(expected) {
            return Err(anyhow!("{full} has moved"));
        }
        reference
            .delete()
            .with_context(|| format!("deleting {full}"))
    }

    /// Moves the ref `full` from `from` to `to` through libgit2 (no `reference-transaction` hook
    /// runs), only if it still points at `from`: a compare-and-swap, like
    /// `git update-ref <ref> <to> <from>`, with `message` in its reflog.
    pub fn move_ref_quietly(&self, full: &str, from: Oid, to: Oid, message: &str) -> Result<()> {
        self.git
            .reference_matching(full, to, true, from, message)
            .map(|_| ())
            .with_context(|| format!("moving {full} from {from} to {to}"))
    }
}
