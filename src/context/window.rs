//! Which context window an agent session has, and where that number came from.
//!
//! The chain, first match wins: `GIT_SESSION_CONTEXT_WINDOW`, `CLAUDE_CODE_MAX_CONTEXT_TOKENS`, a
//! window field in the hook payload, a window the transcript records (Codex), the model id (a
//! `[1m]` suffix or a known 1M model), tokens observed above the fallback window (which proves a
//! 1M window: the API would have refused a bigger prompt), then the configured `[context] window`,
//! then the built-in default.
//!
//! Invariant: an unparsable environment value is passed over, never an error: the hook must not
//! break the agent over a typo, and `status` reports the source actually used.

use crate::config::DEFAULT_WINDOW;

pub const ONE_MILLION: u64 = 1_000_000;

pub const ENV_WINDOW: &str = "GIT_SESSION_CONTEXT_WINDOW";
pub const ENV_CLAUDE_MAX: &str = "CLAUDE_CODE_MAX_CONTEXT_TOKENS";

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

/// The window a model id implies, when it says.
pub fn model_window(model: &str) -> Option<u64> {
    let m = model.trim().to_ascii_lowercase();
    if m.ends_with("[1m]") || m.ends_with("-1m") {
        return Some(ONE_MILLION);
    }
    const ONE_MILLION_FAMILIES: &[&str] = &[
        "gemini-1.5-pro",
        "gemini-1.5-flash",
        "gemini-2.0-flash",
        "gemini-2.5-pro",
        "gemini-2.5-flash",
        "gpt-4.1",
    ];
    ONE_MILLION_FAMILIES
        .iter()
        .any(|f| m.starts_with(f))
        .then_some(ONE_MILLION)
}

pub fn choose(inputs: &Inputs<'_>) -> Window {
    if let Some(size) = inputs.env_window.as_deref().and_then(parse_size) {
        return Window {
            size,
            source: ENV_WINDOW,
        };
    }
    if let Some(size) = inputs.env_claude_max.as_deref().and_then(parse_size) {
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
    if let Some(size) = inputs.model.and_then(model_window) {
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
        assert_eq!(choose(&i).source, ENV_CLAUDE_MAX);
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
    fn sizes() {
        assert_eq!(parse_size("1m"), Some(1_000_000));
        assert_eq!(parse_size(" 200_000 "), Some(200_000));
        assert_eq!(parse_size("12"), None);
        assert_eq!(parse_size("-5"), None);
    }
}
