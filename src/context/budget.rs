//! Where the agent will compact: the budget the thresholds are shares of.
//!
//! Claude Code compacts before its window is full: at the window minus room for the summary
//! (`min(max output, 20 000)`) and a fixed buffer (13 000), about 167K on a 200K window. A
//! threshold measured against the raw window therefore never fires its 90 % and 95 % before the
//! compaction. [`resolve`] finds the compaction point, most trustworthy first, and keeps the
//! name of the source of both numbers:
//!
//! 1. `GIT_SESSION_CONTEXT_WINDOW` (explicit override of the window; budget = window - reserve);
//! 2. `CLAUDE_CODE_AUTO_COMPACT_WINDOW` (Claude Code's own compaction window, capped at the
//!    window);
//! 3. `autoCompactWindow` in Claude Code's settings files (managed > local > project > user; in
//!    one file `modelSettings.<model>.autoCompactWindow` before the top-level key);
//! 4. the window Claude Code reported in a statusline payload for this agent session;
//! 5. compaction points observed earlier for this model (`compact_boundary` `preTokens` of
//!    automatic compactions, remembered in the store by [`remember_observed`]);
//! 6. the window from the model id and the rest of the [`window`] chain, minus the reserve.
//!
//! Invariants: the budget is never above the window, never below half of the compaction window
//! it came from; an unparsable
//! value anywhere is passed over (the hook must not break the agent over a typo); reading the
//! settings costs a few small files, never a process.

use super::window::{self, Window};
use crate::store::Store;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub const ENV_AUTO_COMPACT: &str = "CLAUDE_CODE_AUTO_COMPACT_WINDOW";
/// Overrides [`DEFAULT_RESERVE`] (tokens kept free below the window).
pub const ENV_RESERVE: &str = "GIT_SESSION_CONTEXT_RESERVE";

/// Claude Code's summary room (20 000) plus its fixed buffer (13 000).
pub const DEFAULT_RESERVE: u64 = 33_000;

/// Store file of compaction points observed per model.
pub const OBSERVED_PATH: &str = "context-models.toml";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budget {
    pub window: u64,
    pub window_source: String,
    pub budget: u64,
    pub budget_source: String,
}

impl Budget {
    /// Share of the budget `tokens` fills, unrounded.
    pub fn share(&self, tokens: u64) -> f64 {
        tokens as f64 * 100.0 / self.budget.max(1) as f64
    }
}

/// What [`resolve`] looks at besides the window chain.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    pub env_auto_compact: Option<String>,
    pub env_reserve: Option<String>,
    /// `(value, file it came from)`.
    pub settings: Option<(u64, String)>,
    /// Window Claude Code reported for this agent session in a statusline payload.
    pub statusline: Option<u64>,
    /// Compaction point observed earlier for this model.
    pub observed: Option<u64>,
}

impl Sources {
    /// The environment, the settings files for `project` and the observed points in `store`.
    pub fn gather(store: Option<&Store>, project: Option<&Path>, model: Option<&str>) -> Sources {
        Sources {
            env_auto_compact: std::env::var(ENV_AUTO_COMPACT).ok(),
            env_reserve: std::env::var(ENV_RESERVE).ok(),
            settings: settings_auto_compact(project, model),
            statusline: None,
            observed: match (store, model) {
                (Some(s), Some(m)) => observed(s, m),
                _ => None,
            },
        }
    }
}

/// `base` less the reserve, never above the window nor below half of `base` (a reserve larger
/// than a small window must not make every call an alert).
fn below(base: u64, reserve: u64, window: u64) -> u64 {
    let base = base.min(window);
    base.saturating_sub(reserve).max(base / 2)
}

/// The budget and window, each with its source.
pub fn resolve(win: &Window, sources: &Sources) -> Budget {
    let reserve = sources
        .env_reserve
        .as_deref()
        .and_then(|r| r.trim().parse::<u64>().ok())
        .unwrap_or(DEFAULT_RESERVE);
    // The statusline's window is Claude Code's own number: it beats every guess after the
    // explicit override.
    let win = match sources.statusline {
        Some(size) if win.source != window::ENV_WINDOW && size >= 1000 => Window {
            size,
            source: "statusline",
        },
        _ => win.clone(),
    };
    let made = |budget: u64, source: &str| Budget {
        window: win.size,
        window_source: win.source.to_string(),
        budget,
        budget_source: source.to_string(),
    };
    let full = below(win.size, reserve, win.size);
    if win.source == window::ENV_WINDOW {
        return made(full, window::ENV_WINDOW);
    }
    if let Some(v) = sources
        .env_auto_compact
        .as_deref()
        .and_then(window::parse_size)
    {
        return made(below(v, reserve, win.size), ENV_AUTO_COMPACT);
    }
    if let Some((v, file)) = &sources.settings {
        return made(below(*v, reserve, win.size), file);
    }
    if win.source == "statusline" {
        return made(full, "statusline");
    }
    if let Some(pre) = sources.observed.filter(|p| *p >= 1000 && *p <= win.size) {
        return made(pre, "observed");
    }
    made(full, win.source)
}

/// Claude Code's settings files, highest precedence first: managed, project-local, project,
/// user.
pub fn settings_files(project: Option<&Path>) -> Vec<(PathBuf, &'static str)> {
    let mut v = Vec::new();
    let managed = if cfg!(target_os = "macos") {
        "/Library/Application Support/ClaudeCode/managed-settings.json"
    } else {
        "/etc/claude-code/managed-settings.json"
    };
    v.push((PathBuf::from(managed), "managed settings"));
    if let Some(p) = project {
        v.push((p.join(".claude/settings.local.json"), "settings.local.json"));
        v.push((p.join(".claude/settings.json"), "project settings.json"));
    }
    let config_dir = std::env::var_os("CLAUDE_CONFIG_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".claude")));
    if let Some(dir) = config_dir {
        v.push((dir.join("settings.json"), "user settings.json"));
    }
    v
}

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
    for (path, name) in settings_files(project) {
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

/// Compaction points seen per model (`context-models.toml`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Observed {
    #[serde(default)]
    pub models: BTreeMap<String, ObservedPoint>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ObservedPoint {
    /// The lowest `preTokens` of an automatic compaction seen for the model.
    pub pre_tokens: u64,
    pub count: u32,
}

/// The model key: the id without a `[1m]` suffix would mix windows, so the id is kept whole.
fn model_key(model: &str) -> Option<String> {
    let k = model.trim();
    (!k.is_empty() && k.len() <= 200 && !k.chars().any(char::is_control)).then(|| k.to_string())
}

pub fn observed(store: &Store, model: &str) -> Option<u64> {
    let key = model_key(model)?;
    let o: Observed = store.read(OBSERVED_PATH).ok()??;
    o.models.get(&key).map(|p| p.pre_tokens)
}

/// Remembers an automatic compaction at `pre_tokens` for `model`. The lowest point wins: alerts
/// must arrive before the earliest compaction this user's agent makes.
pub fn remember_observed(store: &Store, model: &str, pre_tokens: u64) -> anyhow::Result<()> {
    let Some(key) = model_key(model) else {
        return Ok(());
    };
    if pre_tokens < 1000 {
        return Ok(());
    }
    store.update::<Observed, _>(OBSERVED_PATH, |cur| {
        let mut o = cur.unwrap_or_default();
        let e = o.models.entry(key.clone()).or_insert(ObservedPoint {
            pre_tokens,
            count: 0,
        });
        e.pre_tokens = e.pre_tokens.min(pre_tokens);
        e.count = e.count.saturating_add(1);
        Ok(Some(o))
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(size: u64, source: &'static str) -> Window {
        Window { size, source }
    }

    #[test]
    fn claude_default_is_167k() {
        let b = resolve(&w(200_000, "default"), &Sources::default());
        assert_eq!((b.budget, b.budget_source.as_str()), (167_000, "default"));
        let b = resolve(&w(1_000_000, "model"), &Sources::default());
        assert_eq!((b.budget, b.window), (967_000, 1_000_000));
    }

    #[test]
    fn order_of_sources() {
        let mut s = Sources {
            env_auto_compact: Some("400000".into()),
            settings: Some((300_000, "autoCompactWindow (user settings.json)".into())),
            statusline: Some(1_000_000),
            observed: Some(150_000),
            ..Sources::default()
        };
        let win = w(200_000, "model");
        let b = resolve(&win, &s);
        assert_eq!(b.window_source, "statusline");
        assert_eq!(
            (b.budget, b.budget_source.as_str()),
            (367_000, ENV_AUTO_COMPACT)
        );
        s.env_auto_compact = Some("junk".into());
        assert_eq!(resolve(&win, &s).budget, 267_000);
        s.settings = None;
        assert_eq!(resolve(&win, &s).budget_source, "statusline");
        s.statusline = None;
        let b = resolve(&win, &s);
        assert_eq!((b.budget, b.budget_source.as_str()), (150_000, "observed"));
        s.observed = Some(900_000); // above the window: not this window's point
        assert_eq!(resolve(&win, &s).budget_source, "model");
        let b = resolve(&w(300_000, window::ENV_WINDOW), &s);
        assert_eq!(
            (b.budget, b.budget_source.as_str()),
            (267_000, window::ENV_WINDOW)
        );
    }

    #[test]
    fn budget_stays_within_the_window() {
        let s = Sources {
            env_auto_compact: Some("5000000".into()),
            ..Sources::default()
        };
        assert_eq!(resolve(&w(200_000, "default"), &s).budget, 167_000);
        let tiny = resolve(&w(40_000, "config"), &Sources::default());
        assert_eq!(tiny.budget, 20_000);
    }
}
