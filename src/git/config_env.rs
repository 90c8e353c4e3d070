//! Git's configuration as git itself reads it in this process's environment.
//!
//! libgit2 reads each level from its usual place (`/etc/gitconfig`, `~/.config/git/config`,
//! `~/.gitconfig`, the repository's). git also honours `GIT_CONFIG_GLOBAL` (one file in place of
//! both user files), `GIT_CONFIG_SYSTEM` (in place of `/etc/gitconfig`) and
//! `GIT_CONFIG_NOSYSTEM` (no system file). A setting such as `core.hooksPath` in a
//! `GIT_CONFIG_GLOBAL` file decides where git looks for hooks, so reading the configuration
//! without these would judge the guard in force where git never runs it.
//!
//! Invariant: every libgit2 configuration this crate reads goes through [`with_environment`].
//! Not covered: `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_<n>` and `GIT_CONFIG_PARAMETERS` (`git -c`),
//! which set single keys for one command rather than files.

use git2::{Config, ConfigLevel};
use std::path::{Path, PathBuf};

/// A path no file is at: a level replaced by it reads as empty.
fn nowhere() -> PathBuf {
    PathBuf::from("/nonexistent/git-session/no-config")
}

/// A file git would read for the value of one of its `GIT_CONFIG_*` variables: `/dev/null`
/// and other non-files are read by git as empty, and so are they here.
fn file_or_nowhere(value: &std::ffi::OsStr) -> PathBuf {
    let path = Path::new(value);
    if path.is_file() {
        path.to_path_buf()
    } else {
        nowhere()
    }
}

/// `config` with its levels moved or dropped as git's environment variables say.
pub fn with_environment(mut config: Config) -> Result<Config, git2::Error> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let no_system = var("GIT_CONFIG_NOSYSTEM").is_some_and(|v| {
        let v = v.to_string_lossy().to_ascii_lowercase();
        !matches!(v.as_str(), "0" | "false" | "no" | "off")
    });
    if no_system {
        config.add_file(&nowhere(), ConfigLevel::System, true)?;
        config.add_file(&nowhere(), ConfigLevel::ProgramData, true)?;
    } else if let Some(system) = var("GIT_CONFIG_SYSTEM") {
        config.add_file(&file_or_nowhere(&system), ConfigLevel::System, true)?;
    }
    if let Some(global) = var("GIT_CONFIG_GLOBAL") {
        config.add_file(&file_or_nowhere(&global), ConfigLevel::Global, true)?;
        config.add_file(&nowhere(), ConfigLevel::XDG, true)?;
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_level_replaced_by_nowhere_reads_empty_and_a_file_replaces_it() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        std::fs::write(&a, "[core]\n\thooksPath = /from/a\n").unwrap();
        std::fs::write(&b, "[core]\n\thooksPath = /from/b\n").unwrap();
        let mut config = Config::new().unwrap();
        config.add_file(&a, ConfigLevel::Global, false).unwrap();
        assert_eq!(config.get_string("core.hooksPath").unwrap(), "/from/a");
        config.add_file(&b, ConfigLevel::Global, true).unwrap();
        assert_eq!(config.get_string("core.hooksPath").unwrap(), "/from/b");
        config
            .add_file(&nowhere(), ConfigLevel::Global, true)
            .unwrap();
        assert!(config.get_string("core.hooksPath").is_err());
        assert_eq!(file_or_nowhere("/dev/null".as_ref()), nowhere());
    }
}
