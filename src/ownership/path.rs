//! [`RepoPath`]: a path of the repository as claims name it, made by one rule from whatever
//! named it (a command-line argument, a file in an agent's hook payload).
//!
//! Invariants a reader must not break:
//! - A `RepoPath` is relative to the worktree's root, `/`-separated, not empty, with no empty,
//!   `.` or `..` component, no leading or trailing `/`, no NUL, no component `.git` (in any
//!   case: git itself refuses to track one), and at most [`MAX_LEN`] bytes. Other control
//!   characters, newlines included, are allowed: git tracks such names, and messages show
//!   paths escaped ([`crate::base::quote::show_path`]).
//! - Both sources go through [`resolve`], the one normalisation rule: the path is made absolute
//!   against its base directory, `.` and `..` are read lexically (as git reads a pathspec, so a
//!   path that does not exist yet, or any more, can be named), the directory part is resolved
//!   on disk as far as it exists (symlinks followed, so a worktree reached through a symlink, or
//!   a symlinked directory inside it, names the files git sees), and the last component is kept
//!   as named (a symlink is a file of the repository in its own right, as git tracks it).

use crate::git::Repo;
use crate::session;
use anyhow::{anyhow, Context, Result};
use std::ffi::OsStr;
use std::fmt;
use std::path::{Component, Path, PathBuf};

/// The longest path accepted, in bytes (Linux's `PATH_MAX`).
pub const MAX_LEN: usize = 4096;

/// A repository-relative path that passed the checks of the module doc.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RepoPath(String);

/// Why text is not a [`RepoPath`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BadPath {
    /// Nothing left: the worktree's root itself.
    Empty,
    /// Absolute, or with an empty, `.` or `..` component (a trailing `/` included).
    NotNormal,
    /// Inside a `.git` directory.
    InsideGit,
    /// A component that is not UTF-8.
    NotUtf8,
    Nul,
    TooLong,
}

/// A path argument that names no file of the repository; the message is the Display, and the
/// command line adds the hint and the exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathError {
    /// The command works on files of a worktree, and there is none here (a bare repository).
    NeedsWorktree,
    /// The path resolves outside the current worktree.
    Outside {
        shown: String,
        root: PathBuf,
    },
    NotUtf8 {
        rel: PathBuf,
    },
    TooLong {
        shown: String,
    },
    /// `.`, `..`, or a path inside `.git`.
    NoFile {
        shown: String,
    },
}

impl std::fmt::Display for PathError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PathError::NeedsWorktree => f.write_str("this command needs a worktree"),
            PathError::Outside { shown, root } => {
                write!(f, "{shown} is outside the worktree {}", root.display())
            }
            PathError::NotUtf8 { rel } => write!(f, "{} is not valid UTF-8", rel.display()),
            PathError::TooLong { shown } => write!(
                f,
                "\"{shown}\" is longer than {MAX_LEN} bytes inside the repository"
            ),
            PathError::NoFile { shown } => {
                write!(f, "\"{shown}\" names no file of the repository")
            }
        }
    }
}

impl std::error::Error for PathError {}

impl RepoPath {
    /// Text that is already repository-relative: checked, never rewritten.
    pub fn new(text: &str) -> Result<RepoPath, BadPath> {
        if text.is_empty() {
            return Err(BadPath::Empty);
        }
        if text.len() > MAX_LEN {
            return Err(BadPath::TooLong);
        }
        if text.contains('\0') {
            return Err(BadPath::Nul);
        }
        for part in text.split('/') {
            if part.is_empty() || part == "." || part == ".." {
                return Err(BadPath::NotNormal);
            }
            if part.eq_ignore_ascii_case(".git") {
                return Err(BadPath::InsideGit);
            }
        }
        Ok(RepoPath(text.to_string()))
    }

    /// A path from the command line, relative to the current directory like a git pathspec (or
    /// absolute), inside the current worktree. The refusals name the argument as given.
    pub fn from_arg(repo: &Repo, arg: &OsStr) -> Result<RepoPath> {
        let root = repo
            .current_worktree
            .as_ref()
            .ok_or_else(|| anyhow!(PathError::NeedsWorktree))?;
        let cwd = std::env::current_dir().context("reading the current directory")?;
        let cwd = std::fs::canonicalize(&cwd).unwrap_or(cwd);
        Ok(RepoPath::from_arg_in(arg, &cwd, root)?)
    }

    /// [`RepoPath::from_arg`] with the current directory and the worktree's root given.
    pub fn from_arg_in(arg: &OsStr, cwd: &Path, root: &Path) -> Result<RepoPath, PathError> {
        let shown = Path::new(arg).display().to_string();
        let root = session::normalize(root);
        let abs = resolve(cwd, Path::new(arg));
        let rel = abs.strip_prefix(&root).map_err(|_| PathError::Outside {
            shown: shown.clone(),
            root: root.clone(),
        })?;
        RepoPath::from_relative(rel).map_err(|why| match why {
            BadPath::NotUtf8 => PathError::NotUtf8 {
                rel: rel.to_path_buf(),
            },
            BadPath::TooLong => PathError::TooLong { shown },
            _ => PathError::NoFile { shown },
        })
    }

    /// A file named by an agent's hook payload (absolute, or relative to the payload's `cwd`),
    /// relative to the worktree `root`; `None` when it lies outside, or is no file of the
    /// repository.
    pub fn from_payload(file: &str, cwd: &Path, root: &Path) -> Option<RepoPath> {
        if file.contains('\0') {
            return None;
        }
        let abs = resolve(cwd, Path::new(file));
        let rel = abs.strip_prefix(session::normalize(root)).ok()?;
        RepoPath::from_relative(rel).ok()
    }

    fn from_relative(rel: &Path) -> Result<RepoPath, BadPath> {
        let mut parts = Vec::new();
        for c in rel.components() {
            match c {
                Component::Normal(s) => parts.push(s.to_str().ok_or(BadPath::NotUtf8)?),
                _ => return Err(BadPath::NotNormal),
            }
        }
        RepoPath::new(&parts.join("/"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The one normalisation rule (see the module doc): `path` against `base`, `.` and `..` lexical,
/// the directory part resolved on disk as far as it exists, the last component as named.
pub fn resolve(base: &Path, path: &Path) -> PathBuf {
    let joined = base.join(path);
    let mut parts: Vec<&OsStr> = Vec::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                parts.pop();
            }
            Component::Normal(n) => parts.push(n),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    let Some((last, dirs)) = parts.split_last() else {
        return PathBuf::from("/");
    };
    let dir: PathBuf = std::iter::once(OsStr::new("/"))
        .chain(dirs.iter().copied())
        .collect();
    session::normalize(&dir).join(last)
}

impl std::ops::Deref for RepoPath {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for RepoPath {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RepoPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<RepoPath> for String {
    fn from(path: RepoPath) -> String {
        path.0
    }
}

impl PartialEq<str> for RepoPath {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<String> for RepoPath {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

impl serde::Serialize for RepoPath {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn new_accepts_normal_paths_and_names_git_tracks() {
        for good in [
            "a",
            "src/lib.rs",
            "a b/c",
            "-rf",
            "x\ny",
            "tab\there",
            "é/ü",
            ".gitignore",
        ] {
            assert_eq!(RepoPath::new(good).unwrap().as_str(), good);
        }
        assert!(RepoPath::new(&"x".repeat(MAX_LEN)).is_ok());
    }

    #[test]
    fn new_refuses_every_kind_of_bad_input() {
        let long = "x".repeat(MAX_LEN + 1);
        for (bad, why) in [
            ("", BadPath::Empty),
            ("..", BadPath::NotNormal),
            ("../../x", BadPath::NotNormal),
            ("a/../b", BadPath::NotNormal),
            ("./a", BadPath::NotNormal),
            ("/abs", BadPath::NotNormal),
            ("a//b", BadPath::NotNormal),
            ("src/", BadPath::NotNormal),
            ("a\0b", BadPath::Nul),
            (".git", BadPath::InsideGit),
            (".git/config", BadPath::InsideGit),
            (".GIT/HEAD", BadPath::InsideGit),
            ("sub/.git/index", BadPath::InsideGit),
            (long.as_str(), BadPath::TooLong),
        ] {
            assert_eq!(RepoPath::new(bad), Err(why), "{bad:?}");
        }
    }

    #[test]
    fn arguments_are_read_like_pathspecs() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        let arg = |a: &str, cwd: &Path| RepoPath::from_arg_in(OsStr::new(a), cwd, &root);
        let src = root.join("src");
        assert_eq!(arg("lib.rs", &src).unwrap(), *"src/lib.rs");
        assert_eq!(arg("./deep/../x.rs", &src).unwrap(), *"src/x.rs");
        assert_eq!(arg("../README", &src).unwrap(), *"README");
        assert_eq!(arg("deep/", &src).unwrap(), *"src/deep");
        assert_eq!(arg("not/yet/there", &root).unwrap(), *"not/yet/there");
        let abs = root.join("src/a.rs");
        assert_eq!(arg(abs.to_str().unwrap(), &root).unwrap(), *"src/a.rs");
        for (bad, cwd, says) in [
            ("../../x", &src, "is outside the worktree"),
            ("/etc/passwd", &src, "is outside the worktree"),
            ("..", &root, "is outside the worktree"),
            ("../.git/HEAD", &root, "is outside the worktree"),
            (".", &root, "names no file of the repository"),
            ("..", &src, "names no file of the repository"),
            (".git", &root, "names no file of the repository"),
            ("../.git/config", &src, "names no file of the repository"),
            ("sub/.git/x", &root, "names no file of the repository"),
        ] {
            let err = arg(bad, cwd).expect_err(bad).to_string();
            assert!(err.contains(says), "{bad:?}: {err}");
            assert!(!err.contains('\n'));
        }
        let long = "x/".repeat(MAX_LEN / 2 + 1);
        assert!(arg(&long, &root)
            .unwrap_err()
            .to_string()
            .contains("longer than"));
        let latin1 = OsStr::from_bytes(b"caf\xe9");
        let err = RepoPath::from_arg_in(latin1, &root, &root).unwrap_err();
        assert!(err.to_string().contains("is not valid UTF-8"));
    }

    #[test]
    fn payload_files_follow_the_same_rule() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        let here = |f: &str| RepoPath::from_payload(f, &root, &root).map(String::from);
        assert_eq!(here("src/a.rs").as_deref(), Some("src/a.rs"));
        assert_eq!(here("./src/../b.rs").as_deref(), Some("b.rs"));
        let abs = root.join("src/c.rs");
        assert_eq!(here(abs.to_str().unwrap()).as_deref(), Some("src/c.rs"));
        for bad in [
            "",
            ".",
            "..",
            "../../x",
            "/etc/passwd",
            ".git/config",
            "a\0b",
            "sub/.git/x",
        ] {
            assert_eq!(here(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn directories_resolve_on_disk_and_the_last_component_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let root = base.join("wt");
        std::fs::create_dir_all(root.join("src")).unwrap();
        // The worktree reached through a symlink, and a symlinked directory inside it.
        std::os::unix::fs::symlink(&root, base.join("via")).unwrap();
        std::os::unix::fs::symlink(root.join("src"), root.join("alias")).unwrap();
        std::os::unix::fs::symlink("src/a.rs", root.join("link")).unwrap();
        let via = base.join("via");
        for (file, want) in [
            ("via/src/a.rs", "src/a.rs"),
            ("wt/alias/a.rs", "src/a.rs"),
            // A symlink is a file of the repository: named as itself, as git tracks it.
            ("wt/link", "link"),
        ] {
            let got = RepoPath::from_payload(file, &base, &root).map(String::from);
            assert_eq!(got.as_deref(), Some(want), "{file}");
            let arg = RepoPath::from_arg_in(OsStr::new(file), &base, &root).unwrap();
            assert_eq!(arg, *want, "{file}");
        }
        assert_eq!(
            RepoPath::from_payload("x.rs", &via, &root)
                .map(String::from)
                .as_deref(),
            Some("x.rs")
        );
    }
}
