//! Git's configuration as git itself reads it in this process's environment.
//!
//! libgit2 reads each level from its usual place (`/etc/gitconfig`, `~/.config/git/config`,
//! `~/.gitconfig`, the repository's). git also honours `GIT_CONFIG_GLOBAL` (one file in place of
//! both user files), `GIT_CONFIG_SYSTEM` (in place of `/etc/gitconfig`) and
//! `GIT_CONFIG_NOSYSTEM` (no system file). A setting such as `core.hooksPath` in a
//! `GIT_CONFIG_GLOBAL` file decides where git looks for hooks, so reading the configuration
//! without these would judge the guard in force where git never runs it.
//!
//! Single keys set for one command count too: `GIT_CONFIG_COUNT` with `GIT_CONFIG_KEY_<n>` and
//! `GIT_CONFIG_VALUE_<n>`, then `GIT_CONFIG_PARAMETERS` (what `git -c key=value` hands the hooks
//! it runs), above every file, as git applies them. libgit2 reads configuration from files only,
//! so they are written to a temporary file, added as the highest level and read into a snapshot
//! before the file goes; this costs a file only when one of them is set.
//!
//! Invariant: every libgit2 configuration this crate reads goes through [`with_environment`].

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
    let keys = command_keys(&|name| std::env::var(name).ok());
    if keys.is_empty() {
        return Ok(config);
    }
    let Ok(mut file) = tempfile::NamedTempFile::new() else {
        return Ok(config);
    };
    use std::io::Write as _;
    if file.write_all(as_config_file(&keys).as_bytes()).is_err() {
        return Ok(config);
    }
    config.add_file(file.path(), ConfigLevel::App, true)?;
    // Read now, while the file is there: the snapshot never looks at it again.
    config.snapshot()
}

/// The keys set for one command by the environment, in the order git applies them (later ones
/// win): `GIT_CONFIG_COUNT` pairs, then `GIT_CONFIG_PARAMETERS`. A value of `None` is a key
/// given alone (`git -c key`), which git reads as true.
fn command_keys(var: &dyn Fn(&str) -> Option<String>) -> Vec<(String, Option<String>)> {
    let mut keys = Vec::new();
    let count: usize = var("GIT_CONFIG_COUNT")
        .and_then(|c| c.trim().parse().ok())
        .unwrap_or(0);
    for i in 0..count.min(1000) {
        if let (Some(key), Some(value)) = (
            var(&format!("GIT_CONFIG_KEY_{i}")),
            var(&format!("GIT_CONFIG_VALUE_{i}")),
        ) {
            keys.push((key, Some(value)));
        }
    }
    if let Some(params) = var("GIT_CONFIG_PARAMETERS") {
        keys.extend(parse_parameters(&params));
    }
    keys
}

/// `GIT_CONFIG_PARAMETERS`: whitespace-separated entries, each either `'key'='value'` (git
/// 2.31 and later) or `'key=value'`, single-quoted as the shell does (`'\''` for a quote); an
/// entry that does not parse ends the list, as in git.
fn parse_parameters(text: &str) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            return out;
        }
        let Some(first) = quoted_word(&mut chars) else {
            return out;
        };
        if chars.peek() == Some(&'=') {
            chars.next();
            let value = if chars.peek().is_some_and(|c| !c.is_whitespace()) {
                match quoted_word(&mut chars) {
                    Some(v) => Some(v),
                    None => return out,
                }
            } else {
                None
            };
            out.push((first, value));
        } else {
            match first.split_once('=') {
                Some((k, v)) => out.push((k.to_string(), Some(v.to_string()))),
                None => out.push((first, None)),
            }
        }
    }
}

/// One shell word made of single-quoted runs and backslash escapes, up to whitespace or `=`
/// outside quotes.
fn quoted_word(chars: &mut std::iter::Peekable<std::str::Chars>) -> Option<String> {
    let mut word = String::new();
    let mut any = false;
    while let Some(&c) = chars.peek() {
        match c {
            '\'' => {
                chars.next();
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.push(c),
                    }
                }
                any = true;
            }
            '\\' => {
                chars.next();
                word.push(chars.next()?);
                any = true;
            }
            c if c.is_whitespace() || c == '=' => break,
            _ => return None,
        }
    }
    any.then_some(word)
}

/// The keys as one configuration file: `section.sub.section.name` under `[section "sub.section"]`.
fn as_config_file(keys: &[(String, Option<String>)]) -> String {
    let quote = |s: &str| {
        let mut q = String::from("\"");
        for c in s.chars() {
            match c {
                '"' => q.push_str("\\\""),
                '\\' => q.push_str("\\\\"),
                '\n' => q.push_str("\\n"),
                '\t' => q.push_str("\\t"),
                c => q.push(c),
            }
        }
        q.push('"');
        q
    };
    let mut out = String::new();
    for (key, value) in keys {
        let (Some((section, rest)), Some((_, name))) = (key.split_once('.'), key.rsplit_once('.'))
        else {
            continue;
        };
        let sub = rest.rsplit_once('.').map(|(sub, _)| sub);
        let ok =
            |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
        if !ok(section) || !ok(name) {
            continue;
        }
        match sub {
            Some(sub) => out.push_str(&format!("[{section} {}]\n", quote(sub))),
            None => out.push_str(&format!("[{section}]\n")),
        }
        match value {
            Some(v) => out.push_str(&format!("\t{name} = {}\n", quote(v))),
            None => out.push_str(&format!("\t{name}\n")),
        }
    }
    out
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

    #[test]
    fn keys_set_for_one_command_are_read_as_git_reads_them() {
        let params = r#"'core.hookspath'='/from/params' 'hook.my.guard.command'='say "it'\''s"' 'color.ui' 'old.form=x'"#;
        let env = |name: &str| match name {
            "GIT_CONFIG_COUNT" => Some("2".to_string()),
            "GIT_CONFIG_KEY_0" => Some("core.hooksPath".to_string()),
            "GIT_CONFIG_VALUE_0" => Some("/from/count".to_string()),
            "GIT_CONFIG_KEY_1" => Some("user.name".to_string()),
            "GIT_CONFIG_VALUE_1" => Some("A \\ B".to_string()),
            "GIT_CONFIG_PARAMETERS" => Some(params.to_string()),
            _ => None,
        };
        let keys = command_keys(&env);
        assert_eq!(keys.len(), 6, "{keys:?}");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c");
        std::fs::write(&path, as_config_file(&keys)).unwrap();
        let mut config = Config::new().unwrap();
        config.add_file(&path, ConfigLevel::App, false).unwrap();
        let config = config.snapshot().unwrap();
        // The later setting wins, as in git.
        assert_eq!(config.get_string("core.hooksPath").unwrap(), "/from/params");
        assert_eq!(config.get_string("user.name").unwrap(), "A \\ B");
        assert_eq!(
            config.get_string("hook.my.guard.command").unwrap(),
            "say \"it's\""
        );
        assert!(config.get_bool("color.ui").unwrap());
        assert_eq!(config.get_string("old.form").unwrap(), "x");
        // What does not parse ends the list.
        assert_eq!(parse_parameters("'a.b'='1' junk 'c.d'='2'").len(), 1);
    }
}
