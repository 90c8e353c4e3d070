//! `[merge] union` and `[merge] regenerate`: shared files that merge instead of colliding.
//!
//! - `union = ["CHANGELOG.md", "docs/*.md"]` (paths or globs, repository-relative): where both
//!   sides of a conflicting merge only added lines to such a file, the result keeps the merge
//!   base's lines and each side's added lines once.
//! - `regenerate = { "Cargo.lock" = "cargo generate-lockfile" }`: where such a file conflicts,
//!   the merge takes the base branch's version and runs the command on the result.
//!
//! Invariants: nothing here runs a program; a `regenerate` table from the repository's own file
//! is returned with its origin ([`MergeFiles::regenerate_from_repo`]) so that `merge` asks for
//! approval, as it does for `[merge] check`. A later file's key replaces the earlier one whole.

use super::error::{bad, ConfigError};
use std::collections::BTreeMap;
use std::path::Path;

const UNION_ALLOWED: &str = "a list of repository-relative paths or globs, such as \
                             [\"CHANGELOG.md\"]";
const REGENERATE_ALLOWED: &str = "a table of repository-relative paths (or globs) and the shell \
                                  command that rebuilds each, such as { \"Cargo.lock\" = \
                                  \"cargo generate-lockfile\" }";

/// How `merge` treats shared files that would otherwise conflict.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MergeFiles {
    /// Globs of the files merged as a union of added lines.
    pub union: Vec<String>,
    /// Globs of generated files and the command (through `sh -c`) that rebuilds each.
    pub regenerate: BTreeMap<String, String>,
    /// The `regenerate` table came from the repository's `.git-session.toml` (its commands need
    /// the user's approval).
    pub regenerate_from_repo: bool,
}

fn glob_ok(glob: &str) -> bool {
    !glob.is_empty()
        && !glob.starts_with('/')
        && !glob.split('/').any(|c| c == "..")
        && !glob.chars().any(char::is_control)
        && globset::Glob::new(glob).is_ok()
}

fn matcher<'a>(globs: impl Iterator<Item = &'a String>) -> globset::GlobSet {
    let mut builder = globset::GlobSetBuilder::new();
    for glob in globs {
        if let Ok(g) = globset::GlobBuilder::new(glob)
            .literal_separator(true)
            .build()
        {
            builder.add(g);
        }
    }
    builder
        .build()
        .unwrap_or_else(|_| globset::GlobSet::empty())
}

impl MergeFiles {
    /// Applies `union` and `regenerate` of one file's `[merge]` section.
    pub(super) fn apply(
        &mut self,
        file: &Path,
        union: Option<Vec<String>>,
        regenerate: Option<BTreeMap<String, String>>,
        from_repo: bool,
    ) -> Result<(), ConfigError> {
        if let Some(union) = union {
            if !union.iter().all(|g| glob_ok(g)) {
                return Err(bad(file, "merge.union", UNION_ALLOWED));
            }
            self.union = union;
        }
        if let Some(regenerate) = regenerate {
            let command_ok = |c: &String| !c.trim().is_empty() && !c.contains('\0');
            if !regenerate.iter().all(|(p, c)| glob_ok(p) && command_ok(c)) {
                return Err(bad(file, "merge.regenerate", REGENERATE_ALLOWED));
            }
            self.regenerate_from_repo = from_repo && !regenerate.is_empty();
            self.regenerate = regenerate;
        }
        Ok(())
    }

    /// Whether nothing is configured (every conflict is a conflict).
    pub fn is_empty(&self) -> bool {
        self.union.is_empty() && self.regenerate.is_empty()
    }

    /// Whether `path` merges as a union of added lines.
    pub fn is_union(&self, path: &str) -> bool {
        !self.union.is_empty() && matcher(self.union.iter()).is_match(path)
    }

    /// The command that rebuilds `path`, if it is a generated file (the first glob that matches,
    /// in the table's order).
    pub fn regenerate_command(&self, path: &str) -> Option<&str> {
        self.regenerate
            .iter()
            .find(|(glob, _)| matcher(std::iter::once(*glob)).is_match(path))
            .map(|(_, command)| command.as_str())
    }

    /// The `regenerate` table as one list of lines (`<glob>: <command>`), the form in which it
    /// is approved and shown.
    pub fn regenerate_list(&self) -> Vec<String> {
        self.regenerate
            .iter()
            .map(|(glob, command)| format!("{glob}: {command}"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_paths_and_a_bad_entry_is_refused_naming_the_key() {
        let file = Path::new(".git-session.toml");
        let mut m = MergeFiles::default();
        assert!(m.is_empty());
        let regen: BTreeMap<String, String> = [(
            "**/Cargo.lock".to_string(),
            "cargo generate-lockfile".to_string(),
        )]
        .into();
        m.apply(
            file,
            Some(vec!["CHANGELOG.md".into(), "docs/*.md".into()]),
            Some(regen),
            true,
        )
        .unwrap();
        assert!(m.is_union("CHANGELOG.md"));
        assert!(m.is_union("docs/a.md"));
        assert!(!m.is_union("docs/sub/a.md"));
        assert!(!m.is_union("src/CHANGELOG.md"));
        assert_eq!(
            m.regenerate_command("crates/x/Cargo.lock"),
            Some("cargo generate-lockfile")
        );
        assert_eq!(
            m.regenerate_command("Cargo.lock"),
            Some("cargo generate-lockfile")
        );
        assert_eq!(m.regenerate_command("Cargo.toml"), None);
        assert!(m.regenerate_from_repo);
        assert_eq!(
            m.regenerate_list(),
            vec!["**/Cargo.lock: cargo generate-lockfile"]
        );
        for bad_union in [
            vec!["../x".to_string()],
            vec!["".into()],
            vec!["/abs".into()],
        ] {
            let err = m.apply(file, Some(bad_union), None, true).unwrap_err();
            assert!(err.to_string().contains("merge.union"), "{err}");
        }
        let empty: BTreeMap<String, String> = [("Cargo.lock".into(), " ".into())].into();
        let err = m.apply(file, None, Some(empty), false).unwrap_err();
        assert!(err.to_string().contains("merge.regenerate"), "{err}");
        // A refused value changes nothing.
        assert_eq!(m.union.len(), 2);
    }
}
