//! Marks: facts kept as a symbolic link's target text (the store's module doc says which).

use super::Store;
use anyhow::{Context, Result};
use std::fs;
use std::io::ErrorKind;
use std::path::PathBuf;

impl Store {
    /// Replaces the mark `rel` (see the module doc) with `text`: a symbolic link made beside it
    /// under a name of this process, renamed over it. `text` must hold no NUL byte; under 60
    /// bytes it fits in the link's inode on ext4, so nothing but the directory changes.
    pub fn set_mark(&self, rel: &str, text: &str) -> Result<()> {
        let path = self.checked(rel)?;
        let mut tmp = path.clone().into_os_string();
        tmp.push(format!(".mark-{}", std::process::id()));
        let tmp = PathBuf::from(tmp);
        let made = match std::os::unix::fs::symlink(text, &tmp) {
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                // Left by a killed process that had this pid: ours to replace.
                let _ = fs::remove_file(&tmp);
                std::os::unix::fs::symlink(text, &tmp)
            }
            Err(e) if e.kind() == ErrorKind::NotFound => {
                fs::create_dir_all(tmp.parent().unwrap_or(&self.root))
                    .with_context(|| format!("creating the directory of {}", path.display()))?;
                std::os::unix::fs::symlink(text, &tmp)
            }
            other => other,
        };
        made.with_context(|| format!("writing {}", tmp.display()))?;
        fs::rename(&tmp, &path).map_err(|e| {
            let _ = fs::remove_file(&tmp);
            anyhow::Error::new(e).context(format!("writing {}", path.display()))
        })
    }

    /// The text of the mark `rel`; `None` when there is none, or when something other than a
    /// mark is there (never followed, never an error: a mark is a hint its reader can lack).
    pub fn mark(&self, rel: &str) -> Option<String> {
        let path = self.checked(rel).ok()?;
        fs::read_link(path)
            .ok()?
            .into_os_string()
            .into_string()
            .ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_is_replaced_whole_read_without_following_and_never_listed() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path());
        assert_eq!(store.mark("a/x.doing"), None);
        store
            .set_mark("a/x.doing", "input 1.000000000 Stop")
            .unwrap();
        store
            .set_mark("a/x.doing", "working 2.000000000 PostToolUse")
            .unwrap();
        assert_eq!(
            store.mark("a/x.doing").as_deref(),
            Some("working 2.000000000 PostToolUse")
        );
        fs::write(dir.path().join("a/f.toml"), "n = 1").unwrap();
        assert_eq!(store.mark("a/f.toml"), None, "a file is no mark");
        assert_eq!(
            store.list("a").unwrap(),
            ["f"],
            "no mark, no temporary link listed"
        );
        assert!(store.set_mark("../x", "y").is_err());
    }
}
