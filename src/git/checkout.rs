//! [`Checkout`]: a repository opened at one of its worktrees, to read that worktree's state (the
//! status walk, [`crate::git::status`], and the submodules the hazard inspection looks into).
//!
//! Lighter than [`super::Repo`]: one open, no canonical paths, no look at the main worktree, so
//! `list` pays one libgit2 open per worktree it walks. What libgit2 decides for the walk lives
//! here: configuration values, ignore rules, attributes, the built-in conversions of
//! `status_file`, its whole `statuses()` for configurations the walk does not model, and its
//! reading of an index the crate's own decoder leaves aside.
//!
//! Invariants: reads only, and libgit2 never runs a program the repository names (no filter
//! driver, no fsmonitor hook), which is why these reads go through it and not through `git`.

use super::objects::Objects;
use crate::git::index::{Entry, Index, OID_LEN};
use anyhow::{Context, Result};
use git2::{Oid, Repository};
use std::path::Path;

/// A repository opened at a worktree (or at a git directory).
pub struct Checkout {
    git: Repository,
}

/// One repository's configuration, read through libgit2 (every level: system, global, local,
/// worktree).
pub struct ConfigView(git2::Config);

impl ConfigView {
    pub(super) fn new(config: git2::Config) -> ConfigView {
        ConfigView(config)
    }

    /// `key` as a boolean, in git's spellings; `None` when unset or not a boolean.
    pub fn get_bool(&self, key: &str) -> Option<bool> {
        self.0.get_bool(key).ok()
    }

    /// `key` as a string; `None` when unset.
    pub fn get_string(&self, key: &str) -> Option<String> {
        self.0.get_string(key).ok()
    }

    /// `key` as a path (`~/` expanded); `None` when unset.
    pub fn get_path(&self, key: &str) -> Option<std::path::PathBuf> {
        self.0.get_path(key).ok()
    }

    /// Every `(name, value)` whose name matches the regular expression `pattern`, in the order
    /// git reads them (multi-valued keys once per value). Names come lowercased in their section
    /// and key parts, as git compares them.
    pub fn entries(&self, pattern: &str) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if let Ok(mut entries) = self.0.entries(Some(pattern)) {
            while let Some(Ok(entry)) = entries.next() {
                if let (Some(name), Some(value)) = (entry.name(), entry.value()) {
                    out.push((name.to_string(), value.to_string()));
                }
            }
        }
        out
    }
}

/// The commit HEAD names in the repository at `dir` (a submodule's worktree, say); `None` when
/// it cannot be opened, or HEAD is unborn.
pub fn head_at(dir: &Path) -> Option<Oid> {
    Repository::open(dir).ok()?.head().ok()?.target()
}

impl Checkout {
    /// Opens the repository at `path` (a worktree's root or a git directory), without searching
    /// upwards.
    pub fn open(path: &Path) -> Result<Checkout> {
        super::configure_libgit2();
        Ok(Checkout {
            git: Repository::open(path)?,
        })
    }

    /// The worktree's root; `None` for a bare repository.
    #[inline]
    pub fn workdir(&self) -> Option<&Path> {
        self.git.workdir()
    }

    /// The worktree's own git directory (`.git`, or its admin entry for a linked worktree).
    #[inline]
    pub fn gitdir(&self) -> &Path {
        self.git.path()
    }

    /// The repository's common git directory (the main `.git`, also for a linked worktree).
    #[inline]
    pub fn commondir(&self) -> &Path {
        self.git.commondir()
    }

    /// Its object database, for reading trees and blobs.
    #[inline]
    pub fn objects(&self) -> Objects<'_> {
        Objects::new(&self.git)
    }

    /// The repository's configuration, as libgit2 reads it (no program runs).
    pub fn config(&self) -> Result<ConfigView> {
        let config = self
            .git
            .config()
            .and_then(super::config_env::with_environment)
            .context("reading the repository's config")?;
        Ok(ConfigView::new(config))
    }

    /// Whether any value of attribute `name` applies to `path` (worktree's `.gitattributes`
    /// first, then the index's).
    pub fn has_attr(&self, path: &Path, name: &str) -> bool {
        self.git
            .get_attr_bytes(path, name, git2::AttrCheckFlags::FILE_THEN_INDEX)
            .ok()
            .flatten()
            .is_some()
    }

    /// Whether the worktree's file at `path` differs from the index, as libgit2's status sees it
    /// after its built-in conversions (CRLF, ident): modified, type-changed or deleted.
    pub fn worktree_file_differs(&self, path: &Path) -> Result<bool> {
        let status = self
            .git
            .status_file(path)
            .with_context(|| format!("reading the status of {}", path.display()))?;
        Ok(status.intersects(
            git2::Status::WT_MODIFIED | git2::Status::WT_TYPECHANGE | git2::Status::WT_DELETED,
        ))
    }

    /// Whether git's ignore rules ignore `path`.
    pub fn is_ignored(&self, path: &Path) -> Result<bool> {
        Ok(self.git.is_path_ignored(path)?)
    }

    /// libgit2's own status: the paths `git status` would list (untracked files one by one,
    /// ignored ones left out), sorted, unique. For configurations the walk does not model.
    pub fn dirty_files(&self, worktree: &Path) -> Result<Vec<String>> {
        let mut opts = git2::StatusOptions::new();
        opts.include_untracked(true)
            .recurse_untracked_dirs(true)
            .include_ignored(false)
            .exclude_submodules(false)
            .renames_head_to_index(false);
        let statuses = self
            .git
            .statuses(Some(&mut opts))
            .with_context(|| format!("reading the status of {}", worktree.display()))?;
        let mut out: Vec<String> = statuses
            .iter()
            .filter(|s| !s.status().is_ignored())
            .filter_map(|s| s.path().map(str::to_string))
            .collect();
        out.sort();
        out.dedup();
        Ok(out)
    }

    /// The index as libgit2 reads it, in the crate's [`Index`], for one [`Index::parse`] leaves
    /// aside (having checked all of it it knows, so libgit2 is not handed damaged counts it
    /// would trust).
    pub fn read_index(&self) -> Result<Index> {
        let git_index = self.git.index().context("reading the index")?;
        let mut index = Index::default();
        for e in git_index.iter() {
            let oid: [u8; OID_LEN] =
                e.id.as_bytes()
                    .try_into()
                    .context("an object id that is not SHA-1")?;
            let entry = Entry {
                ctime: (e.ctime.seconds() as u32, e.ctime.nanoseconds()),
                mtime: (e.mtime.seconds() as u32, e.mtime.nanoseconds()),
                ino: e.ino,
                mode: e.mode,
                uid: e.uid,
                gid: e.gid,
                size: e.file_size,
                oid,
                flags: e.flags,
                flags_extended: e.flags_extended,
            };
            index.push(entry, &e.path);
        }
        Ok(index)
    }
}

/// The ids of gitlinks (mode 160000) in the index file at `path`, after
/// [`crate::git::index::fit_for_libgit2`] vouched for it; nothing when it cannot be read.
pub fn gitlinks_in_index_file(path: &Path) -> Vec<Oid> {
    let index = crate::git::index::fit_for_libgit2(path)
        .and_then(|()| git2::Index::open(path).map_err(anyhow::Error::from));
    match index {
        Ok(index) => index
            .iter()
            .filter(|e| e.mode == 0o160000)
            .map(|e| e.id)
            .collect(),
        Err(_) => Vec::new(),
    }
}
