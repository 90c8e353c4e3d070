//! Where the agent will compact: the budget the thresholds are shares of.
//!
//! Agents compact before their window is full, each at its own point, so a threshold measured
//! against the raw window fires its 90 % and 95 % after the compaction or never. [`resolve`]
//! finds the compaction point for the agent that called ([`Agent`]), most trustworthy
//! first, and keeps the name of the source of both numbers.
//!
//! Claude Code compacts at the window minus room for the summary (`min(max output, 20 000)`)
//! and a fixed buffer (13 000): about 167K on a 200K window.
//! The reserve (33 000) is `GIT_SESSION_CONTEXT_RESERVE`, else `[context] reserve` in the
//! configuration, else Claude Code's own figure.
//! 1. `GIT_SESSION_CONTEXT_WINDOW` (explicit override of the window; budget = window - reserve);
//! 2. `CLAUDE_CODE_AUTO_COMPACT_WINDOW` (Claude Code's own compaction window, capped at the
//!    window);
//! 3. `autoCompactWindow` in Claude Code's settings files ([`settings`]);
//! 4. `--autocompact N` on Claude Code's own command line ([`super::ancestry`]; like the
//!    variable, the window it compacts below);
//! 5. `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`, a candidate the observed points (6) confirm or
//!    overrule ([`pct_override`]);
//! 6. the window Claude Code reported in a statusline payload for this agent session;
//! 7. compaction points observed earlier for this model (`compact_boundary` `preTokens` of
//!    automatic compactions, remembered in the store by [`remember_observed`]);
//! 8. the window from the model id and the rest of the [`window`] chain, minus the reserve.
//!
//! Codex compacts at `model_auto_compact_token_limit` when configured, never above 90 % of the
//! model's context window (its default): the explicit window override, then that setting, then
//! 90 %. The model's window is Codex's own: `model_context_window` in its config, else the
//! number its rollout records divided by [`CODEX_RECORDED_SHARE`] (Codex records 95 % of the
//! model's window as `model_context_window`: 258,400 for a 272,000 model), so a model no list
//! of ours knows still gets its real budget.
//!
//! Gemini CLI compresses at `model.compressionThreshold` (default 0.5) of the model's token
//! limit (1,048,576 for its Gemini models): the explicit window override, then that setting,
//! then half the window.
//!
//! GitHub Copilot CLI starts its background compaction at `backgroundCompactionThreshold`
//! (default 0.80, its SDK's `InfiniteSessionConfig`) of the model's prompt window: the explicit
//! window override, then 80 % of the window.
//!
//! Invariants: the budget is never above the window, never below half of the compaction window
//! it came from (Claude Code's reserve) or 1,000 tokens; an unparsable value anywhere is passed
//! over (the hook must not break the agent over a typo); reading the settings costs a few small
//! files, never a process.

use super::agents::Agent;
use super::settings;
use super::window::{self, Window};
use crate::store::Store;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Where GitHub Copilot CLI starts compacting, as a share of the window.
pub const COPILOT_DEFAULT_SHARE: f64 = 0.80;

pub const ENV_AUTO_COMPACT: &str = "CLAUDE_CODE_AUTO_COMPACT_WINDOW";
/// Claude Code's percentage override of its compaction point: lowers it only, to
/// `min(pct x window, window - PCT_OVERRIDE_FLOOR)`; some versions ignore it, so it is a
/// candidate that observed compactions confirm or overrule.
pub const ENV_PCT_OVERRIDE: &str = "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE";

/// What Claude Code keeps below the window however high the percentage override is.
pub const PCT_OVERRIDE_FLOOR: u64 = 13_000;
/// Overrides [`DEFAULT_RESERVE`] (tokens kept free below the window).
pub const ENV_RESERVE: &str = "GIT_SESSION_CONTEXT_RESERVE";

/// Claude Code's summary room (20 000) plus its fixed buffer (13 000).
pub const DEFAULT_RESERVE: u64 = 33_000;

/// Codex compacts at 90 % of the context window unless configured lower.
pub const CODEX_DEFAULT_SHARE: f64 = 0.9;

/// The share of the model's window Codex records in its rollout's `model_context_window` (its
/// effective window: the rest is kept for its own instructions and output).
pub const CODEX_RECORDED_SHARE: f64 = 0.95;

/// Gemini CLI's default `model.compressionThreshold`.
pub const GEMINI_DEFAULT_THRESHOLD: f64 = 0.5;

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
#[derive(Debug, Clone)]
pub struct Sources {
    pub agent: Agent,
    pub env_auto_compact: Option<String>,
    /// `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`.
    pub env_pct: Option<String>,
    pub env_reserve: Option<String>,
    /// `[context] reserve` from the configuration files (the environment's value wins).
    pub config_reserve: Option<u64>,
    /// Claude Code's `autoCompactWindow`: `(value, file it came from)`.
    pub settings: Option<(u64, String)>,
    /// `--autocompact N` on Claude Code's command line, and where it was read.
    pub command_line: Option<(u64, String)>,
    /// Window Claude Code reported for this agent session in a statusline payload.
    pub statusline: Option<u64>,
    /// Compaction point observed earlier for this model.
    pub observed: Option<u64>,
    /// Codex's `model_auto_compact_token_limit` and its file.
    pub codex_limit: Option<(u64, String)>,
    /// The model's whole window from Codex's config (`model_context_window`) and its file.
    pub codex_window: Option<(u64, String)>,
    /// Gemini CLI's `model.compressionThreshold` and its file.
    pub gemini_threshold: Option<(f64, String)>,
}

impl Default for Sources {
    fn default() -> Sources {
        Sources {
            agent: Agent::Claude,
            env_auto_compact: None,
            env_pct: None,
            env_reserve: None,
            config_reserve: None,
            settings: None,
            command_line: None,
            statusline: None,
            observed: None,
            codex_limit: None,
            codex_window: None,
            gemini_threshold: None,
        }
    }
}

impl Sources {
    /// The same sources with the configuration's `[context] reserve`.
    pub fn with_config(mut self, config: &crate::config::Config) -> Sources {
        self.config_reserve = config.context_reserve;
        self
    }

    /// The environment, the calling agent's settings files for `project` and the observed
    /// points in `store`. Only the calling agent's files are read.
    pub fn gather(
        agent: Agent,
        store: Option<&Store>,
        project: Option<&Path>,
        model: Option<&str>,
    ) -> Sources {
        let mut s = Sources {
            agent,
            ..Sources::default()
        };
        match agent {
            Agent::Claude => {
                s.env_auto_compact = std::env::var(ENV_AUTO_COMPACT).ok();
                s.env_pct = std::env::var(ENV_PCT_OVERRIDE).ok();
                s.env_reserve = std::env::var(ENV_RESERVE).ok();
                s.settings = settings::settings_auto_compact(project, model);
                s.observed = match (store, model) {
                    (Some(st), Some(m)) => observed(st, m),
                    _ => None,
                };
            }
            Agent::Codex => {
                s.codex_limit = settings::codex_auto_compact_limit(project);
                s.codex_window = settings::codex_model_context_window(project);
            }
            Agent::Gemini => s.gemini_threshold = settings::gemini_compression_threshold(project),
            // No settings file of its says where it compacts.
            Agent::Copilot => {}
        }
        s
    }
}

/// `base` less the reserve, never above the window nor below half of `base` (a reserve larger
/// than a small window must not make every call an alert).
fn below(base: u64, reserve: u64, window: u64) -> u64 {
    let base = base.min(window);
    base.saturating_sub(reserve).max(base / 2)
}

fn made(win: &Window, budget: u64, source: &str) -> Budget {
    Budget {
        window: win.size,
        window_source: win.source.to_string(),
        budget: budget.min(win.size).max(1000.min(win.size)),
        budget_source: source.to_string(),
    }
}

/// The budget and window, each with its source.
pub fn resolve(win: &Window, sources: &Sources) -> Budget {
    match sources.agent {
        Agent::Claude => resolve_claude(win, sources),
        Agent::Codex => resolve_codex(win, sources),
        Agent::Gemini => {
            // Gemini CLI measures every model it does not list against its default limit.
            let win = match win.source {
                "default" | "observed" => Window {
                    size: window::GEMINI_TOKEN_LIMIT,
                    source: "gemini default",
                },
                _ => win.clone(),
            };
            let (share, source) = match &sources.gemini_threshold {
                Some((t, file)) => (*t, file.as_str()),
                None => (
                    GEMINI_DEFAULT_THRESHOLD,
                    "gemini default (50% of the window)",
                ),
            };
            let source = if win.source == window::ENV_WINDOW {
                window::ENV_WINDOW
            } else {
                source
            };
            made(&win, (win.size as f64 * share) as u64, source)
        }
        Agent::Copilot => {
            let source = if win.source == window::ENV_WINDOW {
                window::ENV_WINDOW
            } else {
                "copilot default (80% of the window)"
            };
            made(
                win,
                (win.size as f64 * COPILOT_DEFAULT_SHARE) as u64,
                source,
            )
        }
    }
}

/// Codex: 90 % of the model's whole window (see the module's notes), or its configured limit.
fn resolve_codex(win: &Window, sources: &Sources) -> Budget {
    if win.source == window::ENV_WINDOW {
        let default = (win.size as f64 * CODEX_DEFAULT_SHARE) as u64;
        return made(win, default, window::ENV_WINDOW);
    }
    let (size, source) = match &sources.codex_window {
        Some((size, source)) => (*size, source.clone()),
        // The rollout's own number: 95 % of the model's window (still its source).
        None if win.source == "transcript" => (
            (win.size as f64 / CODEX_RECORDED_SHARE).round() as u64,
            win.source.to_string(),
        ),
        None => (win.size, win.source.to_string()),
    };
    let default = (size as f64 * CODEX_DEFAULT_SHARE) as u64;
    let (budget, budget_source) = match &sources.codex_limit {
        Some((limit, file)) => ((*limit).min(default), file.clone()),
        None => (default, "codex default (90% of the window)".to_string()),
    };
    Budget {
        window: size,
        window_source: source,
        budget: budget.min(size).max(1000.min(size)),
        budget_source,
    }
}

fn resolve_claude(win: &Window, sources: &Sources) -> Budget {
    let reserve = sources
        .env_reserve
        .as_deref()
        .and_then(|r| r.trim().parse::<u64>().ok())
        .or(sources.config_reserve)
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
    let full = below(win.size, reserve, win.size);
    if win.source == window::ENV_WINDOW {
        return made(&win, full, window::ENV_WINDOW);
    }
    if let Some(v) = sources
        .env_auto_compact
        .as_deref()
        .and_then(window::parse_size)
    {
        return made(&win, below(v, reserve, win.size), ENV_AUTO_COMPACT);
    }
    if let Some((v, file)) = &sources.settings {
        return made(&win, below(*v, reserve, win.size), file);
    }
    if let Some((v, source)) = &sources.command_line {
        return made(&win, below(*v, reserve, win.size), source);
    }
    if let Some(b) = pct_override(&win, sources, full) {
        return b;
    }
    if win.source == "statusline" {
        return made(&win, full, "statusline");
    }
    if let Some(pre) = sources.observed.filter(|p| *p >= 1000 && *p <= win.size) {
        return made(&win, pre, "observed");
    }
    made(&win, full, win.source)
}

/// `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE` as a candidate: `min(pct x window, window - 13,000)`,
/// only when lower than where Claude Code compacts without it (`full`). An automatic
/// compaction observed for this model confirms it when it happened at the candidate or within
/// 5 % of the window above it (the call that crossed it overshoots), and overrules it otherwise
/// (earlier, or far later: the version ignored the variable); with none observed yet the
/// candidate stands, named as unconfirmed (it is lower, so its alerts come early, never late).
fn pct_override(win: &Window, sources: &Sources, full: u64) -> Option<Budget> {
    let pct = sources
        .env_pct
        .as_deref()
        .and_then(|v| v.trim().trim_end_matches('%').parse::<f64>().ok())
        .filter(|p| *p > 0.0 && *p <= 100.0)?;
    let candidate = ((win.size as f64 * pct / 100.0) as u64)
        .min(win.size.saturating_sub(PCT_OVERRIDE_FLOOR))
        .max(1000);
    if candidate >= full {
        return None;
    }
    let observed = sources.observed.filter(|p| *p >= 1000 && *p <= win.size);
    Some(match observed {
        Some(obs) if obs >= candidate && obs - candidate <= win.size / 20 => made(
            win,
            candidate,
            &format!("{ENV_PCT_OVERRIDE} (confirmed by an observed compaction)"),
        ),
        Some(obs) => made(
            win,
            obs,
            &format!("observed ({ENV_PCT_OVERRIDE} overruled)"),
        ),
        None => made(
            win,
            candidate,
            &format!("{ENV_PCT_OVERRIDE} (not yet confirmed)"),
        ),
    })
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
        s.command_line = Some((150_000, "--autocompact (claude command line, pid 7)".into()));
        let b = resolve(&win, &s);
        assert_eq!(
            (b.budget, b.budget_source.as_str()),
            (117_000, "--autocompact (claude command line, pid 7)")
        );
        s.command_line = None;
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
    fn codex_and_gemini_points() {
        let codex = Sources {
            agent: Agent::Codex,
            ..Sources::default()
        };
        // Codex records 258,400 (95 % of 272,000) and compacts at 90 % of 272,000, whatever
        // the model: no list of models is consulted.
        let b = resolve(&w(258_400, "transcript"), &codex);
        assert_eq!(
            (b.window, b.budget, b.budget_source.as_str()),
            (272_000, 244_800, "codex default (90% of the window)")
        );
        assert_eq!(b.window_source, "transcript");
        let b = resolve(&w(475_000, "transcript"), &codex);
        assert_eq!((b.window, b.budget), (500_000, 450_000));
        // Its config's model_context_window is the model's whole window.
        let gpt55 = Sources {
            codex_window: Some((272_000, "model_context_window (x)".into())),
            ..codex.clone()
        };
        let b = resolve(&w(258_400, "transcript"), &gpt55);
        assert_eq!((b.window, b.budget), (272_000, 244_800));
        // A window from elsewhere (the explicit override aside) is taken as the whole window.
        let b = resolve(&w(272_000, "payload"), &codex);
        assert_eq!((b.window, b.budget), (272_000, 244_800));
        let limited = Sources {
            codex_limit: Some((200_000, "model_auto_compact_token_limit (x)".into())),
            ..gpt55.clone()
        };
        assert_eq!(resolve(&w(258_400, "transcript"), &limited).budget, 200_000);
        let high = Sources {
            codex_limit: Some((900_000, "model_auto_compact_token_limit (x)".into())),
            ..gpt55
        };
        assert_eq!(resolve(&w(258_400, "transcript"), &high).budget, 244_800);
        let gemini = Sources {
            agent: Agent::Gemini,
            ..Sources::default()
        };
        let b = resolve(&w(200_000, "default"), &gemini);
        assert_eq!(
            (b.window, b.window_source.as_str(), b.budget),
            (1_048_576, "gemini default", 524_288)
        );
        let set = Sources {
            gemini_threshold: Some((0.3, "model.compressionThreshold (y)".into())),
            ..gemini
        };
        let b = resolve(&w(1_048_576, "model"), &set);
        assert_eq!(
            (b.budget, b.budget_source.as_str()),
            (314_572, "model.compressionThreshold (y)")
        );
    }

    #[test]
    fn the_percentage_override_is_a_candidate() {
        let win = w(200_000, "default");
        let mut s = Sources {
            env_pct: Some("50".into()),
            ..Sources::default()
        };
        let b = resolve(&win, &s);
        assert_eq!(
            (b.budget, b.budget_source.as_str()),
            (
                100_000,
                "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE (not yet confirmed)"
            )
        );
        // Lower-only: 95 % would be 187,000 (window - 13,000), above the default 167,000.
        s.env_pct = Some("95".into());
        assert_eq!(resolve(&win, &s).budget_source, "default");
        s.env_pct = Some("50".into());
        s.observed = Some(104_300);
        let b = resolve(&win, &s);
        assert_eq!(
            (b.budget, b.budget_source.as_str()),
            (
                100_000,
                "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE (confirmed by an observed compaction)"
            )
        );
        // Ignored by the version that compacted: where it really compacts wins.
        s.observed = Some(166_800);
        let b = resolve(&win, &s);
        assert_eq!(
            (b.budget, b.budget_source.as_str()),
            (
                166_800,
                "observed (CLAUDE_AUTOCOMPACT_PCT_OVERRIDE overruled)"
            )
        );
        s.env_pct = Some("lots".into());
        assert_eq!(resolve(&win, &s).budget_source, "observed");
    }

    #[test]
    fn the_reserve_comes_from_the_environment_then_the_configuration() {
        let configured = Sources {
            config_reserve: Some(50_000),
            ..Sources::default()
        };
        assert_eq!(resolve(&w(200_000, "default"), &configured).budget, 150_000);
        let both = Sources {
            env_reserve: Some("20000".into()),
            ..configured
        };
        assert_eq!(resolve(&w(200_000, "default"), &both).budget, 180_000);
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
