//! `[merge] regenerate`: generated files (a lockfile) that conflicted are rebuilt by their
//! command on the merge's result, in the check's scratch worktree, and committed on top of it
//! before the `[merge] check` runs there.
//!
//! The computation ([`super::merge_union`]) took the base branch's version of each such file;
//! the commands run (each distinct command once, in the order of the files) through
//! [`super::merge_check`], which owns the scratch worktree, its log and its deadline; then the
//! rebuilt files alone are committed on the result, and the scratch worktree's detached HEAD
//! moves to that commit, so the check sees exactly what the base will hold.
//!
//! Invariants a reader must not break:
//! - Only the generated files that conflicted are taken from the scratch worktree; whatever
//!   else a command changes or leaves there (build output, caches) is not committed.
//! - Nothing but objects and the scratch worktree's own HEAD and index are written.

use crate::config::MergeFiles;
use crate::git::{Oid, Run};
use anyhow::{anyhow, Context, Result};
use std::path::Path;
use std::time::Duration;

/// The generated files to rebuild on a result, and how.
#[derive(Debug, Clone)]
pub struct Regeneration {
    pub paths: Vec<String>,
    /// The distinct commands that rebuild them, in the order of the paths.
    pub commands: Vec<String>,
    /// The message of the commit that holds the rebuilt files.
    pub message: String,
}

impl Regeneration {
    /// What rebuilds `paths` (files `files.regenerate` names) after merging `branch`; `None`
    /// when there are none.
    pub fn of(files: &MergeFiles, paths: &[String], branch: &str) -> Option<Regeneration> {
        if paths.is_empty() {
            return None;
        }
        let mut commands: Vec<String> = Vec::new();
        for path in paths {
            if let Some(c) = files.regenerate_command(path) {
                if !commands.iter().any(|have| have == c) {
                    commands.push(c.to_string());
                }
            }
        }
        let message = format!(
            "Regenerate {} after merging {branch}\n\n[merge] regenerate ran: {}\n",
            paths.join(", "),
            commands.join("; ")
        );
        Some(Regeneration {
            paths: paths.to_vec(),
            commands,
            message,
        })
    }
}

fn git(dir: &Path, args: &[&str], deadline: Duration) -> Result<String> {
    Run::new(dir, args.iter().copied())
        .deadline(deadline)
        .run()
        .map(|o| o.stdout)
        .map_err(|e| anyhow!("git {}: {e}", args.first().copied().unwrap_or("")))
}

/// After the commands ran in `scratch` (a worktree detached at `tip`): the rebuilt files
/// committed on `tip` and the scratch worktree's HEAD moved to that commit. `tip` itself when
/// the commands left the files exactly as the result had them.
pub fn commit(scratch: &Path, regen: &Regeneration, tip: Oid, deadline: Duration) -> Result<Oid> {
    let mut add = vec!["--literal-pathspecs", "add", "--all", "--force", "--"];
    add.extend(regen.paths.iter().map(String::as_str));
    git(scratch, &add, deadline)?;
    let tree = git(scratch, &["write-tree"], deadline)?.trim().to_string();
    let old_tree = format!("{tip}^{{tree}}");
    let old_tree = git(scratch, &["rev-parse", "--verify", &old_tree], deadline)?;
    if tree == old_tree.trim() {
        return Ok(tip);
    }
    let mut file = tempfile::NamedTempFile::new().context("a file for the commit message")?;
    std::io::Write::write_all(&mut file, regen.message.as_bytes())
        .context("writing the commit message")?;
    let message = file.path().to_string_lossy().into_owned();
    let parent = tip.to_string();
    let out = git(
        scratch,
        &["commit-tree", &tree, "-p", &parent, "-F", &message],
        deadline,
    )?;
    let new =
        Oid::from_str(out.trim()).with_context(|| format!("git commit-tree printed {out:?}"))?;
    let new_s = new.to_string();
    // The scratch worktree's own HEAD (detached): the check sees the commit the base gets.
    git(
        scratch,
        &["update-ref", "--no-deref", "HEAD", &new_s, &parent],
        deadline,
    )?;
    Ok(new)
}
