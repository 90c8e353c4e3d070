//! The agents' own settings that say where they compact, read from their documented files
//! (which files, in which order: [`super::agents::Facts::compaction_files`]).
//!
//! - Claude Code: `autoCompactWindow` in its settings files (managed > local > project > user;
//!   in one file `modelSettings.<model>.autoCompactWindow` before the top-level key).
//! - Codex: `model_auto_compact_token_limit` in `config.toml`, the project's
//!   `.codex/config.toml` before `$CODEX_HOME/config.toml` (default `~/.codex`). Codex's config
//!   reference: "Token threshold that triggers automatic history compaction (unset uses model
//!   defaults)"; the model default is 90 % of the context window, which a configured value
//!   only lowers.
//! - Gemini CLI: `model.compressionThreshold` (a fraction of the model's token limit; default
//!   0.5) in its settings files, highest precedence first: system settings (which override all
//!   others), project `.gemini/settings.json`, user `~/.gemini/settings.json` (`GEMINI_CLI_HOME`
//!   moves `~`), system defaults.
//!
//! Invariants: a missing, unreadable, huge or unparsable file, or a value of the wrong type, is
//! passed over, never an error (the hook must not break the agent over a typo); reading costs a
//! few small files, never a process.

use super::agents::Agent;
use super::window;
use serde_json::Value;
use std::path::Path;

/// A settings value: an integer or a numeric string; `"auto"` and anything else are no value.
fn size_value(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64().filter(|n| *n >= 1000),
        Value::String(s) => window::parse_size(s),
        _ => None,
    }
}

/// The first file (by precedence) that sets `autoCompactWindow` for `model` or for all models.
pub fn settings_auto_compact(project: Option<&Path>, model: Option<&str>) -> Option<(u64, String)> {
    for (path, name) in (Agent::Claude.facts().compaction_files)(project) {
        let Ok(bytes) = read_small(&path) else {
            continue;
        };
        let Ok(v) = serde_json::from_slice::<Value>(&bytes) else {
            continue;
        };
        let per_model = model.and_then(|m| {
            let models = v.get("modelSettings")?;
            let bare = m.trim_end_matches("[1m]").trim_end_matches("[1M]");
            [m, bare].iter().find_map(|k| {
                models
                    .get(*k)?
                    .get("autoCompactWindow")
                    .and_then(size_value)
            })
        });
        if let Some(n) = per_model.or_else(|| v.get("autoCompactWindow").and_then(size_value)) {
            return Some((n, format!("autoCompactWindow ({name})")));
        }
    }
    None
}

/// Settings files are small; a huge or special file is not read.
fn read_small(path: &Path) -> std::io::Result<Vec<u8>> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() || meta.len() > 1024 * 1024 {
        return Err(std::io::Error::other("not a small regular file"));
    }
    std::fs::read(path)
}

/// The first Codex config file (by precedence) setting `model_auto_compact_token_limit`.
pub fn codex_auto_compact_limit(project: Option<&Path>) -> Option<(u64, String)> {
    codex_tokens(project, "model_auto_compact_token_limit")
}

/// The first Codex config file (by precedence) setting `model_context_window` (which replaces
/// the model's window Codex would otherwise use).
pub fn codex_model_context_window(project: Option<&Path>) -> Option<(u64, String)> {
    codex_tokens(project, "model_context_window")
}

/// A token count of at least 1000 under top-level `key` in the first Codex config file that
/// sets one: `(value, "key (file)")`.
fn codex_tokens(project: Option<&Path>, key: &str) -> Option<(u64, String)> {
    for (path, name) in (Agent::Codex.facts().compaction_files)(project) {
        let Ok(bytes) = read_small(&path) else {
            continue;
        };
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        let Ok(table) = text.parse::<toml::Table>() else {
            continue;
        };
        let limit = table
            .get(key)
            .and_then(toml::Value::as_integer)
            .and_then(|n| u64::try_from(n).ok())
            .filter(|n| *n >= 1000);
        if let Some(n) = limit {
            return Some((n, format!("{key} ({name})")));
        }
    }
    None
}

/// The first Gemini settings file (by precedence) setting `model.compressionThreshold`, as a
/// fraction in (0, 1].
pub fn gemini_compression_threshold(project: Option<&Path>) -> Option<(f64, String)> {
    for (path, name) in (Agent::Gemini.facts().compaction_files)(project) {
        let Ok(bytes) = read_small(&path) else {
            continue;
        };
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        // Gemini CLI strips comments from its settings files before it parses them.
        let Ok(v) = serde_json::from_str::<Value>(&strip_json_comments(&text)) else {
            continue;
        };
        // Its current key, then the older ones it still migrates on load (the v2 format's
        // `model.chatCompression`, the v1 format's top-level `chatCompression`).
        let keys: [(&[&str], &str); 3] = [
            (
                &["model", "compressionThreshold"],
                "model.compressionThreshold",
            ),
            (
                &["model", "chatCompression", "contextPercentageThreshold"],
                "model.chatCompression.contextPercentageThreshold",
            ),
            (
                &["chatCompression", "contextPercentageThreshold"],
                "chatCompression.contextPercentageThreshold",
            ),
        ];
        for (at, key) in keys {
            let threshold = at
                .iter()
                .try_fold(&v, |v, k| v.get(*k))
                .and_then(Value::as_f64)
                .filter(|t| *t > 0.0 && *t <= 1.0);
            if let Some(t) = threshold {
                return Some((t, format!("{key} ({name})")));
            }
        }
    }
    None
}

/// `text` with its `//` and `/* */` comments outside strings blanked out (as Gemini CLI reads
/// its settings files); everything else, and the line numbers, kept.
fn strip_json_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                    }
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemini_reads_its_settings_as_gemini_does() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::create_dir_all(p.join(".gemini")).unwrap();
        let project = |text: &str| {
            std::fs::write(p.join(".gemini/settings.json"), text).unwrap();
            gemini_compression_threshold(Some(p)).filter(|(_, s)| s.contains("project"))
        };
        // Comments, as Gemini CLI accepts them; a `//` inside a string is not one.
        let commented = r#"{
          // compress early
          "general": {"preferredEditor": "vim // not a comment"},
          /* the model */ "model": {"name": "gemini-2.5-pro", "compressionThreshold": 0.2}
        }"#;
        assert_eq!(
            project(commented),
            Some((
                0.2,
                "model.compressionThreshold (project .gemini/settings.json)".to_string()
            ))
        );
        let v2 = r#"{"model": {"chatCompression": {"contextPercentageThreshold": 0.6}}}"#;
        assert_eq!(project(v2).map(|(t, _)| t), Some(0.6));
        let v1 = r#"{"theme": "Default", "chatCompression": {"contextPercentageThreshold": 0.4}}"#;
        let (t, source) = project(v1).unwrap();
        assert_eq!(t, 0.4);
        assert!(source.starts_with("chatCompression.contextPercentageThreshold"));
        // The newest key wins within one file.
        let both = r#"{"model": {"compressionThreshold": 0.3},
                       "chatCompression": {"contextPercentageThreshold": 0.7}}"#;
        assert_eq!(project(both).map(|(t, _)| t), Some(0.3));
        assert_eq!(
            strip_json_comments("{\"a\": \"x\\\"//y\"}"),
            "{\"a\": \"x\\\"//y\"}"
        );
    }

    #[test]
    fn codex_and_gemini_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::create_dir_all(p.join(".codex")).unwrap();
        std::fs::create_dir_all(p.join(".gemini")).unwrap();
        std::fs::write(
            p.join(".codex/config.toml"),
            "model = \"gpt-5-codex\"\nmodel_auto_compact_token_limit = 200000\n[profiles.x]\n",
        )
        .unwrap();
        std::fs::write(
            p.join(".gemini/settings.json"),
            r#"{"model": {"name": "gemini-2.5-pro", "compressionThreshold": 0.3}}"#,
        )
        .unwrap();
        assert_eq!(
            codex_auto_compact_limit(Some(p)),
            Some((
                200_000,
                "model_auto_compact_token_limit (project .codex/config.toml)".to_string()
            ))
        );
        assert_eq!(
            gemini_compression_threshold(Some(p)).map(|(t, _)| t),
            Some(0.3)
        );
        std::fs::write(
            p.join(".codex/config.toml"),
            "model_auto_compact_token_limit = \"x\"",
        )
        .unwrap();
        std::fs::write(
            p.join(".gemini/settings.json"),
            r#"{"model": {"compressionThreshold": 7}}"#,
        )
        .unwrap();
        let bare = tempfile::tempdir().unwrap();
        // Wrong types are passed over; the user's files may still answer, so look only at
        // the project's entries.
        assert!(codex_auto_compact_limit(Some(p)).is_none_or(|(_, s)| !s.contains("project")));
        assert!(gemini_compression_threshold(Some(p)).is_none_or(|(_, s)| !s.contains("project")));
        assert!(
            (Agent::Codex.facts().compaction_files)(Some(bare.path()))[0]
                .0
                .ends_with(".codex/config.toml")
        );
    }
}
