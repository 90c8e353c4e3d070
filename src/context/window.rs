//! Which context window an agent session has, and where that number came from.
//!
//! The chain, first match wins: `GIT_SESSION_CONTEXT_WINDOW`, `CLAUDE_CODE_MAX_CONTEXT_TOKENS`
//! (only for a model Claude Code does not know, where its docs say it applies), a window field
//! in the hook payload, a window the transcript records (Codex), the model id (a
//! `[1m]` suffix or a native 1M model, unless `CLAUDE_CODE_DISABLE_1M_CONTEXT`), tokens observed
//! above the fallback window (which proves a 1M window: the API would have refused a bigger
//! prompt), then the configured `[context] window`, then the built-in default.
//!
//! Invariant: an unparsable environment value is passed over, never an error: the hook must not
//! break the agent over a typo, and `status` reports the source actually used.

use crate::config::DEFAULT_WINDOW;

pub const ONE_MILLION: u64 = 1_000_000;

pub const ENV_WINDOW: &str = "GIT_SESSION_CONTEXT_WINDOW";
pub const ENV_CLAUDE_MAX: &str = "CLAUDE_CODE_MAX_CONTEXT_TOKENS";
pub const ENV_DISABLE_1M: &str = "CLAUDE_CODE_DISABLE_1M_CONTEXT";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    pub size: u64,
    /// `GIT_SESSION_CONTEXT_WINDOW`, `CLAUDE_CODE_MAX_CONTEXT_TOKENS`, `payload`, `transcript`,
    /// `model`, `observed`, `config` or `default`.
    pub source: &'static str,
}

/// Everything the chain looks at.
#[derive(Debug, Clone, Default)]
pub struct Inputs<'a> {
    pub env_window: Option<String>,
    pub env_claude_max: Option<String>,
    /// `CLAUDE_CODE_DISABLE_1M_CONTEXT` set to a true value.
    pub disable_1m: bool,
    pub payload: Option<u64>,
    pub transcript: Option<u64>,
    pub model: Option<&'a str>,
    /// Tokens seen now, or a flag that more than the fallback was seen earlier in this session.
    pub tokens: Option<u64>,
    pub observed_large: bool,
    pub config: Option<u64>,
}

impl Inputs<'_> {
    /// Reads the two environment variables.
    pub fn with_env(mut self) -> Self {
        self.env_window = std::env::var(ENV_WINDOW).ok();
        self.env_claude_max = std::env::var(ENV_CLAUDE_MAX).ok();
        self.disable_1m =
            std::env::var(ENV_DISABLE_1M).is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"));
        self
    }
}

/// `200000`, `200k`, `1m`, `1M`, `1_000_000`; at least 1000 tokens.
pub fn parse_size(text: &str) -> Option<u64> {
    let t: String = text.trim().chars().filter(|c| *c != '_').collect();
    let lower = t.to_ascii_lowercase();
    let (digits, factor) = if let Some(d) = lower.strip_suffix('k') {
        (d, 1_000)
    } else if let Some(d) = lower.strip_suffix('m') {
        (d, 1_000_000)
    } else {
        (lower.as_str(), 1)
    };
    let n: u64 = digits.trim().parse().ok()?;
    n.checked_mul(factor).filter(|n| *n >= 1000)
}

/// Claude models with a native 1M window on the Anthropic API (Claude Code's model
/// configuration docs): Sonnet 5, Fable 5, Opus 4.7 and later.
fn native_1m_claude(m: &str) -> bool {
    let Some(rest) = m.strip_prefix("claude-") else {
        return false;
    };
    let (family, version) = match rest.split_once('-') {
        Some(x) => x,
        None => return false,
    };
    let mut nums = version
        .split(['-', '.'])
        .map_while(|p| p.parse::<u32>().ok().filter(|n| *n < 100));
    let major = nums.next().unwrap_or(0);
    let minor = nums.next().unwrap_or(0);
    match family {
        "opus" => (major, minor) >= (4, 7),
        "sonnet" | "fable" => major >= 5,
        _ => false,
    }
}

/// Whether Claude Code knows this model's window (its own model ids and aliases); only for
/// unknown ones does `CLAUDE_CODE_MAX_CONTEXT_TOKENS` apply.
pub fn known_claude_model(model: &str) -> bool {
    let m = model.trim().to_ascii_lowercase();
    m.starts_with("claude-")
        || ["opus", "sonnet", "haiku", "fable", "default", "opusplan"]
            .iter()
            .any(|a| m == *a || m.strip_prefix(a).is_some_and(|r| r.starts_with('[')))
}

/// The window a model id implies, when it says. `disable_1m`: Claude Code's
/// `CLAUDE_CODE_DISABLE_1M_CONTEXT`, which turns the 1M windows of Claude models off.
pub fn model_window(model: &str, disable_1m: bool) -> Option<u64> {
    let m = model.trim().to_ascii_lowercase();
    let claude = known_claude_model(&m);
    if claude && disable_1m {
        return Some(crate::config::DEFAULT_WINDOW);
    }
    if m.ends_with("[1m]") || m.ends_with("-1m") || native_1m_claude(&m) {
        return Some(ONE_MILLION);
    }
    if let Some(limit) = gemini_token_limit(&m) {
        return Some(limit);
    }
    m.starts_with("gpt-4.1").then_some(ONE_MILLION)
}

/// Gemini CLI's token limit for its models (`tokenLimit` in its core, 0.56): 1,048,576 for every
/// Gemini model and for any model it does not know, 256,000 for Gemma 4.
pub const GEMINI_TOKEN_LIMIT: u64 = 1_048_576;

/// The window Gemini CLI measures a model against, for Gemini and Gemma model ids.
pub fn gemini_token_limit(model: &str) -> Option<u64> {
    let m = model.trim().to_ascii_lowercase();
    if m.starts_with("gemma-4") {
        Some(256_000)
    } else if m.starts_with("gemini-") {
        Some(GEMINI_TOKEN_LIMIT)
    } else {
        None
    }
}

pub fn choose(inputs: &Inputs<'_>) -> Window {
    if let Some(size) = inputs.env_window.as_deref().and_then(parse_size) {
        return Window {
            size,
            source: ENV_WINDOW,
        };
    }
    let unknown_model = inputs.model.is_some_and(|m| !known_claude_model(m));
    if let Some(size) = inputs
        .env_claude_max
        .as_deref()
        .and_then(parse_size)
        .filter(|_| unknown_model)
    {
        return Window {
            size,
            source: ENV_CLAUDE_MAX,
        };
    }
    if let Some(size) = inputs.payload.filter(|s| *s >= 1000) {
        return Window {
            size,
            source: "payload",
        };
    }
    if let Some(size) = inputs.transcript.filter(|s| *s >= 1000) {
        return Window {
            size,
            source: "transcript",
        };
    }
    if let Some(size) = inputs
        .model
        .and_then(|m| model_window(m, inputs.disable_1m))
    {
        return Window {
            size,
            source: "model",
        };
    }
    let fallback = inputs.config.unwrap_or(DEFAULT_WINDOW);
    if inputs.observed_large || inputs.tokens.is_some_and(|t| t > fallback) {
        return Window {
            size: ONE_MILLION.max(fallback),
            source: "observed",
        };
    }
    match inputs.config {
        Some(size) => Window {
            size,
            source: "config",
        },
        None => Window {
            size: DEFAULT_WINDOW,
            source: "default",
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_order() {
        let mut i = Inputs {
            env_window: Some("300k".into()),
            env_claude_max: Some("400000".into()),
            payload: Some(500_000),
            model: Some("claude-sonnet-4-5[1m]"),
            tokens: Some(250_000),
            config: Some(150_000),
            ..Inputs::default()
        };
        assert_eq!(choose(&i).source, ENV_WINDOW);
        assert_eq!(choose(&i).size, 300_000);
        i.env_window = Some("lots".into());
        // A Claude model: Claude Code knows its window, the variable does not apply.
        assert_eq!(choose(&i).source, "payload");
        i.model = Some("my-gateway-model");
        assert_eq!(choose(&i).source, ENV_CLAUDE_MAX);
        i.model = Some("claude-sonnet-4-5[1m]");
        i.env_claude_max = None;
        assert_eq!(choose(&i).source, "payload");
        i.payload = None;
        assert_eq!(choose(&i).source, "model");
        i.model = Some("claude-opus-4-1");
        assert_eq!(
            choose(&i),
            Window {
                size: ONE_MILLION,
                source: "observed"
            }
        );
        i.tokens = Some(100_000);
        assert_eq!(
            choose(&i),
            Window {
                size: 150_000,
                source: "config"
            }
        );
        i.config = None;
        assert_eq!(
            choose(&i),
            Window {
                size: 200_000,
                source: "default"
            }
        );
    }

    #[test]
    fn native_one_million_models() {
        for m in [
            "claude-opus-4-7",
            "claude-opus-4-8-20261001",
            "claude-sonnet-5",
            "claude-fable-5-1",
            "sonnet[1m]",
        ] {
            assert_eq!(model_window(m, false), Some(ONE_MILLION), "{m}");
            assert_eq!(model_window(m, true), Some(200_000), "{m}");
        }
        for m in [
            "claude-opus-4-6",
            "claude-sonnet-4-5-20250929",
            "claude-haiku-4-5",
        ] {
            assert_eq!(model_window(m, false), None, "{m}");
        }
    }

    #[test]
    fn gemini_models() {
        assert_eq!(model_window("gemini-2.5-pro", false), Some(1_048_576));
        assert_eq!(
            model_window("gemini-3-flash-preview", false),
            Some(1_048_576)
        );
        assert_eq!(model_window("gemma-4-31b-it", false), Some(256_000));
        assert_eq!(model_window("gpt-4.1-mini", false), Some(ONE_MILLION));
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1m"), Some(1_000_000));
        assert_eq!(parse_size(" 200_000 "), Some(200_000));
        assert_eq!(parse_size("12"), None);
        assert_eq!(parse_size("-5"), None);
    }
}
