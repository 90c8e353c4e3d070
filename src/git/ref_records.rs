//! Small records kept as refs: a commit whose tree holds one file, written and read through
//! libgit2 (one process for a thousand records, no hook, no configured program), and the local
//! refs that name them.
//!
//! What is written here is only ever pushed to a namespace of our own
//! (`refs/git-session/...`); nothing here moves a branch, HEAD or the index.

use super::{Oid, Repo};
use anyhow::{anyhow, Context, Result};

/// The one file a record commit holds.
pub const RECORD_FILE: &str = "record.toml";

/// A record as found under a ref: its commit and the file's text, or why it is not one.
pub enum Found {
    Record { commit: Oid, text: String },
    Garbage { target: Option<Oid>, why: String },
}

impl Repo {
    /// Writes a record commit holding `text` as [`RECORD_FILE`], dated `seconds`, with no
    /// parent; returns its id.
    pub fn write_record(&self, text: &str, message: &str, seconds: i64) -> Result<Oid> {
        let blob = self.git.blob(text.as_bytes()).context("writing a record")?;
        let mut tree = self.git.treebuilder(None)?;
        tree.insert(RECORD_FILE, blob, 0o100644)?;
        let tree = self.git.find_tree(tree.write()?)?;
        let sig = git2::Signature::new(
            "git-session",
            "git-session@localhost",
            &git2::Time::new(seconds, 0),
        )?;
        self.git
            .commit(None, &sig, &sig, message, &tree, &[])
            .context("writing a record commit")
    }

    /// Every ref under `prefix` (a full ref name ending in `/`) with what it holds.
    pub fn records_under(&self, prefix: &str) -> Result<Vec<(String, Found)>> {
        let mut out = Vec::new();
        for r in self.git.references_glob(&format!("{prefix}*"))? {
            let Ok(r) = r else { continue };
            let Some(name) = r.name().map(str::to_string) else {
                continue;
            };
            out.push((name, self.record_of(&r)));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    fn record_of(&self, r: &git2::Reference<'_>) -> Found {
        let target = r.target();
        let garbage = |why: &str| Found::Garbage {
            target,
            why: why.to_string(),
        };
        let Some(id) = target else {
            return garbage("it is a symbolic ref");
        };
        let Ok(commit) = self.git.find_commit(id) else {
            return garbage("it does not point at a commit");
        };
        let Ok(tree) = commit.tree() else {
            return garbage("its commit has no tree");
        };
        let Some(entry) = tree.get_name(RECORD_FILE) else {
            return garbage("its commit holds no record");
        };
        let Ok(blob) = self.git.find_blob(entry.id()) else {
            return garbage("its record is not a file");
        };
        if blob.size() > 64 * 1024 {
            return garbage("its record is too large");
        }
        match std::str::from_utf8(blob.content()) {
            Ok(text) => Found::Record {
                commit: id,
                text: text.to_string(),
            },
            Err(_) => garbage("its record is not text"),
        }
    }
}

/// Sets local refs (`None`: deletes), all in one `git update-ref --stdin` transaction: git's own
/// ref locking, so a `git gc` or `pack-refs` running beside it loses none of them.
pub fn set_local_refs(cwd: &std::path::Path, updates: &[(String, Option<Oid>)]) -> Result<()> {
    if updates.is_empty() {
        return Ok(());
    }
    let mut script = String::from("start\n");
    for (name, id) in updates {
        match id {
            Some(id) => script.push_str(&format!("update {name} {id}\n")),
            None => script.push_str(&format!("delete {name}\n")),
        }
    }
    script.push_str("commit\n");
    super::Run::new(cwd, ["update-ref", "--stdin"])
        .stdin(script.into_bytes())
        .run()
        .map(|_| ())
        .map_err(|e| anyhow!("updating the claims this clone last saw: {e}"))
}
