//! What one line of a transcript means for the search, per agent format: Claude Code's
//! `assistant` and `compact_boundary` records, Codex's `token_usage_record`, `event_msg`
//! `token_count` and `compacted`, Gemini CLI's `gemini` messages and `$rewindTo`, GitHub
//! Copilot CLI's `session.usage_record` (its compactions are not read: none was observed).
//!
//! Invariant: a line that is not UTF-8, does not parse, or is not a deciding record is
//! [`Verdict::Continue`], never an error (see the parent module).

use super::{Agent, Reading};
use serde::Deserialize;

#[derive(Deserialize)]
pub(super) struct Record {
    #[serde(rename = "type", default)]
    pub(super) kind: Option<String>,
    #[serde(default)]
    pub(super) subtype: Option<String>,
    #[serde(rename = "isSidechain", default)]
    pub(super) is_sidechain: Option<bool>,
    #[serde(rename = "isApiErrorMessage", default)]
    pub(super) is_api_error: Option<bool>,
    #[serde(default)]
    pub(super) message: Option<Message>,
    #[serde(rename = "compactMetadata", default)]
    pub(super) compact: Option<CompactMetadata>,
    #[serde(default)]
    pub(super) payload: Option<serde_json::Value>,
    /// Gemini CLI: a message's token counts and model.
    #[serde(default)]
    pub(super) tokens: Option<GeminiTokens>,
    #[serde(default)]
    pub(super) model: Option<String>,
    #[serde(rename = "$rewindTo", default)]
    pub(super) rewind_to: Option<String>,
    /// GitHub Copilot CLI: an event's data (`session.usage_record`: `usage`).
    #[serde(default)]
    pub(super) data: Option<CopilotData>,
}

#[derive(Deserialize)]
pub(super) struct CopilotData {
    #[serde(default)]
    pub(super) usage: Option<CopilotUsage>,
}

/// One model call of GitHub Copilot CLI: the prompt it sent (`inputTokens`, the provider's
/// prompt tokens, cached ones included) and the window it uses (`maxPromptTokens`).
#[derive(Deserialize)]
pub(super) struct CopilotUsage {
    #[serde(rename = "inputTokens", default)]
    pub(super) input_tokens: Option<u64>,
    #[serde(rename = "maxPromptTokens", default)]
    pub(super) max_prompt_tokens: Option<u64>,
    #[serde(default)]
    pub(super) model: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct GeminiTokens {
    #[serde(default)]
    pub(super) input: Option<u64>,
}

#[derive(Deserialize)]
pub(super) struct Message {
    #[serde(default)]
    pub(super) model: Option<String>,
    #[serde(default)]
    pub(super) usage: Option<Usage>,
}

#[derive(Deserialize)]
pub(super) struct Usage {
    #[serde(default)]
    pub(super) input_tokens: Option<u64>,
    #[serde(default)]
    pub(super) cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    pub(super) cache_creation_input_tokens: Option<u64>,
}

#[derive(Deserialize)]
pub(super) struct CompactMetadata {
    #[serde(rename = "postTokens", default)]
    pub(super) post_tokens: Option<u64>,
    #[serde(rename = "preTokens", default)]
    pub(super) pre_tokens: Option<u64>,
    #[serde(default)]
    pub(super) trigger: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct Payload {
    #[serde(rename = "type", default)]
    pub(super) kind: Option<String>,
    #[serde(default)]
    pub(super) info: Option<TokenInfo>,
}

/// Codex's `token_usage_record` payload.
#[derive(Deserialize)]
pub(super) struct UsageRecord {
    #[serde(default)]
    pub(super) usage: Option<LastUsage>,
}

#[derive(Deserialize)]
pub(super) struct TokenInfo {
    #[serde(default)]
    pub(super) last_token_usage: Option<LastUsage>,
    #[serde(default)]
    pub(super) model_context_window: Option<u64>,
}

#[derive(Deserialize)]
pub(super) struct LastUsage {
    #[serde(default)]
    pub(super) total_tokens: Option<u64>,
}

/// What one line means for the search.
pub(super) enum Verdict {
    /// Not a deciding record: keep looking further back.
    Continue,
    Done(Reading),
}

pub(super) fn judge(line: &[u8]) -> Verdict {
    let Ok(text) = std::str::from_utf8(line) else {
        return Verdict::Continue;
    };
    // Cheap pre-filter: most lines (user turns, tool results) can be passed over without parsing.
    if !(text.contains("assistant")
        || text.contains("compact_boundary")
        || text.contains("token_count")
        || text.contains("token_usage_record")
        || text.contains("compacted")
        || text.contains("\"gemini\"")
        || text.contains("$rewindTo")
        || text.contains("session.usage_record"))
    {
        return Verdict::Continue;
    }
    let Ok(record) = serde_json::from_str::<Record>(text) else {
        return Verdict::Continue;
    };
    if record.rewind_to.is_some() {
        return Verdict::Done(Reading {
            format: Some(Agent::Gemini),
            ..Reading::default()
        });
    }
    match record.kind.as_deref() {
        Some("assistant") => {
            if record.is_sidechain == Some(true) || record.is_api_error == Some(true) {
                return Verdict::Continue;
            }
            let Some(message) = record.message else {
                return Verdict::Continue;
            };
            if message.model.as_deref() == Some("<synthetic>") {
                return Verdict::Continue;
            }
            let Some(usage) = message.usage else {
                return Verdict::Continue;
            };
            // Saturating: the numbers come from the file (a damaged one must not overflow).
            let tokens = usage
                .input_tokens
                .unwrap_or(0)
                .saturating_add(usage.cache_read_input_tokens.unwrap_or(0))
                .saturating_add(usage.cache_creation_input_tokens.unwrap_or(0));
            Verdict::Done(Reading {
                tokens: Some(tokens),
                model: message.model,
                format: Some(Agent::Claude),
                ..Reading::default()
            })
        }
        // A subagent's compaction (sidechain) leaves the main context as it was.
        Some("system")
            if record.subtype.as_deref() == Some("compact_boundary")
                && record.is_sidechain != Some(true) =>
        {
            let auto_compact_at = record
                .compact
                .as_ref()
                .filter(|c| c.trigger.as_deref() == Some("auto"))
                .and_then(|c| c.pre_tokens);
            Verdict::Done(Reading {
                tokens: record.compact.and_then(|c| c.post_tokens),
                compacted: true,
                auto_compact_at,
                format: Some(Agent::Claude),
                ..Reading::default()
            })
        }
        Some("token_usage_record") => {
            let total = record
                .payload
                .and_then(|p| serde_json::from_value::<UsageRecord>(p).ok())
                .and_then(|u| u.usage)
                .and_then(|u| u.total_tokens);
            match total {
                Some(total) => Verdict::Done(Reading {
                    tokens: Some(total),
                    format: Some(Agent::Codex),
                    ..Reading::default()
                }),
                None => Verdict::Continue,
            }
        }
        Some("event_msg") => {
            let Some(payload) = record
                .payload
                .and_then(|p| serde_json::from_value::<Payload>(p).ok())
            else {
                return Verdict::Continue;
            };
            if payload.kind.as_deref() != Some("token_count") {
                return Verdict::Continue;
            }
            // `info` is null on the rate-limit-only updates Codex also writes.
            let Some(info) = payload.info else {
                return Verdict::Continue;
            };
            let Some(total) = info.last_token_usage.and_then(|u| u.total_tokens) else {
                return Verdict::Continue;
            };
            Verdict::Done(Reading {
                tokens: Some(total),
                window: info.model_context_window.filter(|w| *w > 0),
                format: Some(Agent::Codex),
                ..Reading::default()
            })
        }
        Some("gemini") => {
            // `tokens` is null until the API's usage arrives; an older message then says more.
            let Some(input) = record.tokens.and_then(|t| t.input) else {
                return Verdict::Continue;
            };
            Verdict::Done(Reading {
                tokens: Some(input),
                model: record.model.filter(|m| !m.is_empty()),
                format: Some(Agent::Gemini),
                ..Reading::default()
            })
        }
        Some("session.usage_record") => {
            let Some(usage) = record.data.and_then(|d| d.usage) else {
                return Verdict::Continue;
            };
            let Some(tokens) = usage.input_tokens else {
                return Verdict::Continue;
            };
            Verdict::Done(Reading {
                tokens: Some(tokens),
                window: usage.max_prompt_tokens.filter(|w| *w > 0),
                model: usage.model.filter(|m| !m.is_empty()),
                format: Some(Agent::Copilot),
                ..Reading::default()
            })
        }
        Some("compacted") => Verdict::Done(Reading {
            compacted: true,
            format: Some(Agent::Codex),
            ..Reading::default()
        }),
        _ => Verdict::Continue,
    }
}

/// Whether a reading that decided the fill may find its window in an older line: Codex's
/// `token_usage_record` gives the tokens alone, its `event_msg` `token_count` further back
/// gives the window too.
pub(super) fn window_further_back(r: &Reading) -> bool {
    r.format == Some(Agent::Codex) && r.window.is_none() && r.tokens.is_some()
}
