//! The context fill, read backwards from the end of a transcript.
//!
//! The model API records the exact prompt size of every call in the transcript; this module finds
//! the most recent such number without reading the rest of the file.
//!
//! Invariants a reader must not break:
//! - The file is read from its end in blocks ([`BLOCK`], doubled while one line spans several
//!   blocks) and scanning stops at the first record that decides the answer, or after
//!   [`SCAN_LIMIT`] bytes. The cost therefore depends on the size of the last few records, never
//!   on the transcript's length.
//! - A line that does not parse is skipped, never an error: the last line may be half-written
//!   while we read (the agent appends as it streams), and unknown record types come and go with
//!   agent versions.
//! - Claude Code: the fill is `input_tokens + cache_read_input_tokens +
//!   cache_creation_input_tokens` of the newest main-chain `assistant` record. Sidechain
//!   (subagent) records and API-error records (`isApiErrorMessage`, model `<synthetic>`) are
//!   passed over. Streaming writes one record per content block of a single API call, each with
//!   the same message id and the same prompt usage; only the newest is taken, so a call is never
//!   counted twice. A `compact_boundary` system record ends the search: what lies before it is no
//!   longer in the context, so the answer is its `compactMetadata.postTokens`, else unknown.
//! - Codex rollouts: the newest of two records gives the fill. A `token_usage_record` (Codex
//!   0.169 writes one right after each model response, before the tool runs) gives
//!   `payload.usage.total_tokens`: the current call, while the `event_msg` `token_count` of
//!   that call is written only after the tool's output, i.e. after PostToolUse returns. An
//!   `event_msg` of type `token_count` with `info` gives `info.last_token_usage.total_tokens`
//!   (after a compaction Codex writes one as an estimate, with no usage record). The window is
//!   `info.model_context_window` of the newest `token_count`, looked for at most
//!   [`WINDOW_LOOKBACK`] bytes further back when a usage record decided the fill. A
//!   `compacted` record ends the search with an unknown fill.
//! - Gemini CLI session files (JSONL since its chat recording moved off one JSON document):
//!   the newest `type: "gemini"` message whose `tokens` is set gives `tokens.input` (the API's
//!   `promptTokenCount`, the number Gemini CLI compares with its compression threshold) and the
//!   message's `model`. A message is re-appended whole when it changes, so the newest line for
//!   it is its current state. A `$rewindTo` record ends the search with an unknown fill (the
//!   messages before it may be gone). Gemini CLI records no compression in the file.

use serde::Deserialize;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// First read size from the end of the file.
pub const BLOCK: usize = 64 * 1024;

/// Give up (fill unknown) after scanning this many bytes without finding a deciding record.
pub const SCAN_LIMIT: u64 = 32 * 1024 * 1024;

/// After a Codex usage record decided the fill, how much further back a `token_count` is
/// looked for to learn the window.
pub const WINDOW_LOOKBACK: u64 = 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Claude,
    Codex,
    Gemini,
}

/// What the end of a transcript says about the context fill.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reading {
    /// Tokens in the context window now, when the transcript says so.
    pub tokens: Option<u64>,
    /// A window size the transcript itself records (Codex `model_context_window`).
    pub window: Option<u64>,
    /// The model of the record the answer came from.
    pub model: Option<String>,
    /// The search ended at a compaction boundary.
    pub compacted: bool,
    /// That boundary's `compactMetadata.preTokens` when the compaction was automatic: where
    /// this agent compacts on its own.
    pub auto_compact_at: Option<u64>,
    pub format: Option<Format>,
    /// Bytes read from the file (for tests and the benchmark's sanity check).
    pub bytes_read: u64,
    /// Where the deciding record starts in the file (0 when none decided).
    pub at: u64,
}

#[derive(Deserialize)]
struct Record {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    subtype: Option<String>,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: Option<bool>,
    #[serde(rename = "isApiErrorMessage", default)]
    is_api_error: Option<bool>,
    #[serde(default)]
    message: Option<Message>,
    #[serde(rename = "compactMetadata", default)]
    compact: Option<CompactMetadata>,
    #[serde(default)]
    payload: Option<serde_json::Value>,
    /// Gemini CLI: a message's token counts and model.
    #[serde(default)]
    tokens: Option<GeminiTokens>,
    #[serde(default)]
    model: Option<String>,
    #[serde(rename = "$rewindTo", default)]
    rewind_to: Option<String>,
}

#[derive(Deserialize)]
struct GeminiTokens {
    #[serde(default)]
    input: Option<u64>,
}

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct CompactMetadata {
    #[serde(rename = "postTokens", default)]
    post_tokens: Option<u64>,
    #[serde(rename = "preTokens", default)]
    pre_tokens: Option<u64>,
    #[serde(default)]
    trigger: Option<String>,
}

#[derive(Deserialize)]
struct Payload {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    info: Option<TokenInfo>,
}

/// Codex's `token_usage_record` payload.
#[derive(Deserialize)]
struct UsageRecord {
    #[serde(default)]
    usage: Option<LastUsage>,
}

#[derive(Deserialize)]
struct TokenInfo {
    #[serde(default)]
    last_token_usage: Option<LastUsage>,
    #[serde(default)]
    model_context_window: Option<u64>,
}

#[derive(Deserialize)]
struct LastUsage {
    #[serde(default)]
    total_tokens: Option<u64>,
}

/// What one line means for the search.
enum Verdict {
    /// Not a deciding record: keep looking further back.
    Continue,
    Done(Reading),
}

fn judge(line: &[u8]) -> Verdict {
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
        || text.contains("$rewindTo"))
    {
        return Verdict::Continue;
    }
    let Ok(record) = serde_json::from_str::<Record>(text) else {
        return Verdict::Continue;
    };
    if record.rewind_to.is_some() {
        return Verdict::Done(Reading {
            format: Some(Format::Gemini),
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
                format: Some(Format::Claude),
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
                format: Some(Format::Claude),
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
                    format: Some(Format::Codex),
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
                format: Some(Format::Codex),
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
                format: Some(Format::Gemini),
                ..Reading::default()
            })
        }
        Some("compacted") => Verdict::Done(Reading {
            compacted: true,
            format: Some(Format::Codex),
            ..Reading::default()
        }),
        _ => Verdict::Continue,
    }
}

/// Reads the fill from the end of the transcript at `path`. Errors only when the file cannot be
/// opened or read (missing, a directory, unreadable); an undecided search is `tokens: None`.
pub fn read(path: &Path) -> std::io::Result<Reading> {
    let mut file = File::open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", path.display()),
        ));
    }
    let len = meta.len();
    let mut pos = len;
    // `pending` holds file[pos..pos + pending.len()]: bytes not yet split into whole lines.
    let mut pending: Vec<u8> = Vec::new();
    let mut block = BLOCK;
    let mut read_total = 0u64;
    // A Codex usage record decided the fill; a `token_count` further back may give the window.
    let mut decided: Option<(Reading, u64)> = None;
    // Whether `r` ends the search, given what was decided so far; the answer when it does.
    let settle = |decided: &mut Option<(Reading, u64)>, r: Reading| -> Option<Reading> {
        let Some((mut first, at)) = decided.take() else {
            if r.format == Some(Format::Codex) && r.window.is_none() && r.tokens.is_some() {
                *decided = Some((r, 0));
                return None;
            }
            return Some(r);
        };
        if r.compacted {
            return Some(first);
        }
        if r.window.is_some() {
            first.window = r.window;
            return Some(first);
        }
        *decided = Some((first, at));
        None
    };
    loop {
        if pos == 0 {
            // What is left is the file's first line, whole.
            let mut reading = match judge(&pending) {
                Verdict::Done(r) => settle(&mut decided, Reading { at: 0, ..r }),
                Verdict::Continue => None,
            }
            .or_else(|| decided.take().map(|(r, _)| r))
            .unwrap_or_default();
            reading.bytes_read = read_total;
            return Ok(reading);
        }
        if let Some((r, at)) = &decided {
            if read_total - at >= WINDOW_LOOKBACK {
                let mut r = r.clone();
                r.bytes_read = read_total;
                return Ok(r);
            }
        }
        if read_total >= SCAN_LIMIT {
            return Ok(Reading {
                bytes_read: read_total,
                ..Reading::default()
            });
        }
        let n = (block as u64).min(pos) as usize;
        pos -= n as u64;
        let mut chunk = vec![0u8; n + pending.len()];
        file.seek(SeekFrom::Start(pos))?;
        file.read_exact(&mut chunk[..n])?;
        chunk[n..].copy_from_slice(&pending);
        read_total += n as u64;
        // Split complete lines off the end; the bytes before the first newline may continue in
        // the previous block, so they stay pending.
        let mut end = chunk.len();
        let mut found_newline = false;
        while let Some(nl) = chunk[..end].iter().rposition(|&b| b == b'\n') {
            found_newline = true;
            let line = &chunk[nl + 1..end];
            if !line.is_empty() {
                if let Verdict::Done(r) = judge(line) {
                    let r = Reading {
                        at: pos + nl as u64 + 1,
                        ..r
                    };
                    let was_decided = decided.is_some();
                    if let Some(mut r) = settle(&mut decided, r) {
                        r.bytes_read = read_total;
                        return Ok(r);
                    }
                    if !was_decided {
                        if let Some((_, at)) = decided.as_mut() {
                            *at = read_total;
                        }
                    }
                }
            }
            end = nl;
        }
        chunk.truncate(end);
        pending = chunk;
        // One line longer than a block: read bigger blocks so the copying stays linear.
        block = if found_newline {
            BLOCK
        } else {
            block.saturating_mul(2)
        };
    }
}

/// Whether `needle` occurs in the last `limit` bytes of the file at `path`, searched from the
/// end in blocks (a tool call's id, to know whether the agent's record of that call has
/// reached the file yet).
pub fn tail_contains(path: &Path, needle: &str, limit: u64) -> std::io::Result<bool> {
    let needle = needle.as_bytes();
    if needle.is_empty() {
        return Ok(false);
    }
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    let floor = len.saturating_sub(limit);
    let mut end = len;
    while end > floor {
        let start = end.saturating_sub(BLOCK as u64).max(floor);
        // Overlap the next block by the needle's length, so a match across blocks is seen.
        let stop = (end + needle.len() as u64).min(len);
        let mut buf = vec![0u8; (stop - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut buf)?;
        if buf.windows(needle.len()).any(|w| w == needle) {
            return Ok(true);
        }
        end = start;
    }
    Ok(false)
}

/// A compaction's record in a transcript: Claude Code's `compact_boundary`, Codex's `compacted`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Boundary {
    /// `compactMetadata.preTokens` of an automatic compaction: where this agent compacts.
    pub auto_compact_at: Option<u64>,
    pub format: Option<Format>,
}

/// What a transcript says, after an offset, about a compaction that began there.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Since {
    /// The newest compaction record after the offset.
    pub boundary: Option<Boundary>,
    /// A main-chain model call (its usage) was recorded after the offset: the conversation
    /// went on, so a compaction that is not recorded by then did not happen.
    pub went_on: bool,
}

/// The newest main-chain compaction record written at or after byte `offset` (the
/// transcript's length when the compaction's hooks ran: Claude Code writes the record after
/// them). Reads forward from `offset`, at most [`SCAN_LIMIT`] bytes from the end; a file
/// shorter than `offset` (replaced) is read from its start within the same limit.
pub fn compaction_since(path: &Path, offset: u64) -> std::io::Result<Option<Boundary>> {
    Ok(since(path, offset)?.boundary)
}

/// [`compaction_since`], and whether the conversation went on after the offset.
pub fn since(path: &Path, offset: u64) -> std::io::Result<Since> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    let offset = if offset > len { 0 } else { offset };
    let start = offset.max(len.saturating_sub(SCAN_LIMIT));
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.take(len - start).read_to_end(&mut bytes)?;
    // Started inside a line (the scan limit): that partial line is not a record.
    let skip = if start > offset {
        bytes
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |n| n + 1)
    } else {
        0
    };
    let mut found = None;
    let mut went_on = false;
    for line in bytes[skip..].split(|&b| b == b'\n') {
        let Ok(text) = std::str::from_utf8(line) else {
            continue;
        };
        if matches!(judge(line), Verdict::Done(ref r) if r.tokens.is_some() && !r.compacted) {
            went_on = true;
            continue;
        }
        if !(text.contains("compact_boundary") || text.contains("compacted")) {
            continue;
        }
        let Ok(record) = serde_json::from_str::<Record>(text) else {
            continue;
        };
        match record.kind.as_deref() {
            Some("system")
                if record.subtype.as_deref() == Some("compact_boundary")
                    && record.is_sidechain != Some(true) =>
            {
                found = Some(Boundary {
                    auto_compact_at: record
                        .compact
                        .filter(|c| c.trigger.as_deref() == Some("auto"))
                        .and_then(|c| c.pre_tokens),
                    format: Some(Format::Claude),
                });
            }
            Some("compacted") => {
                found = Some(Boundary {
                    auto_compact_at: None,
                    format: Some(Format::Codex),
                })
            }
            _ => {}
        }
    }
    Ok(Since {
        boundary: found,
        went_on,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn assistant(tokens: (u64, u64, u64), sidechain: bool) -> String {
        format!(
            r#"{{"type":"assistant","isSidechain":{sidechain},"message":{{"id":"msg_1","model":"claude-sonnet-4-5","stop_reason":"tool_use","usage":{{"input_tokens":{},"cache_read_input_tokens":{},"cache_creation_input_tokens":{},"output_tokens":9}}}}}}"#,
            tokens.0, tokens.1, tokens.2
        )
    }

    fn file_with(lines: &[String], trailing_newline: bool) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        let mut text = lines.join("\n");
        if trailing_newline {
            text.push('\n');
        }
        f.write_all(text.as_bytes()).unwrap();
        f
    }

    #[test]
    fn newest_main_chain_record_wins() {
        let f = file_with(
            &[
                assistant((1, 2, 3), false),
                assistant((10, 20, 30), false),
                assistant((500, 0, 0), true),
            ],
            true,
        );
        let r = read(f.path()).unwrap();
        assert_eq!(r.tokens, Some(60));
    }

    #[test]
    fn long_lines_across_blocks() {
        let big = format!(
            r#"{{"type":"user","message":{{"content":"{}"}}}}"#,
            "x".repeat(BLOCK * 5 + 17)
        );
        let f = file_with(&[assistant((7, 0, 0), false), big.clone(), big], false);
        let r = read(f.path()).unwrap();
        assert_eq!(r.tokens, Some(7));
    }

    #[test]
    fn gemini_session_files() {
        let meta = r#"{"sessionId":"g1","projectHash":"h","startTime":"2026-01-01T00:00:00Z","lastUpdated":"2026-01-01T00:00:00Z","kind":"main"}"#;
        let msg = |id: &str, tokens: &str| {
            format!(
                r#"{{"id":"{id}","timestamp":"2026-01-01T00:00:01Z","type":"gemini","content":"ok","tokens":{tokens},"model":"gemini-2.5-pro"}}"#
            )
        };
        let user = r#"{"id":"u1","timestamp":"2026-01-01T00:00:00Z","type":"user","content":[{"text":"go"}]}"#;
        let f = file_with(
            &[
                meta.to_string(),
                user.to_string(),
                msg(
                    "m1",
                    r#"{"input":52000,"output":10,"cached":40000,"thoughts":0,"tool":0,"total":52010}"#,
                ),
                msg("m2", "null"),
            ],
            true,
        );
        let r = read(f.path()).unwrap();
        assert_eq!(
            (r.tokens, r.model.as_deref(), r.format),
            (Some(52_000), Some("gemini-2.5-pro"), Some(Format::Gemini))
        );
        let rewound = file_with(
            &[
                msg(
                    "m1",
                    r#"{"input":52000,"output":1,"cached":0,"total":52001}"#,
                ),
                r#"{"$rewindTo":"m1"}"#.to_string(),
            ],
            true,
        );
        assert_eq!(read(rewound.path()).unwrap().tokens, None);
    }

    #[test]
    fn compaction_records_after_an_offset() {
        let boundary = |pre: u64, trigger: &str| {
            format!(
                r#"{{"type":"system","subtype":"compact_boundary","isSidechain":false,"compactMetadata":{{"trigger":"{trigger}","preTokens":{pre},"postTokens":9000}}}}"#
            )
        };
        let old = boundary(150_000, "auto");
        let f = file_with(&[old.clone(), assistant((10, 0, 0), false)], true);
        let offset = std::fs::metadata(f.path()).unwrap().len();
        // Nothing written since the offset: the older boundary does not count.
        assert_eq!(compaction_since(f.path(), offset).unwrap(), None);
        let mut g = std::fs::OpenOptions::new()
            .append(true)
            .open(f.path())
            .unwrap();
        writeln!(g, "{}", boundary(118_308, "auto")).unwrap();
        writeln!(g, "{}", assistant((9000, 0, 0), false)).unwrap();
        let b = compaction_since(f.path(), offset).unwrap().unwrap();
        assert_eq!(
            (b.auto_compact_at, b.format),
            (Some(118_308), Some(Format::Claude))
        );
        writeln!(g, "{}", boundary(50_000, "manual")).unwrap();
        let b = compaction_since(f.path(), offset).unwrap().unwrap();
        assert_eq!(
            b.auto_compact_at, None,
            "a manual compaction teaches nothing"
        );
        // A replaced (shorter) file is read from its start.
        let short = file_with(&[boundary(120_000, "auto")], true);
        assert_eq!(
            compaction_since(short.path(), 1 << 40)
                .unwrap()
                .unwrap()
                .auto_compact_at,
            Some(120_000)
        );
    }

    #[test]
    fn codex_usage_record_is_the_current_call() {
        let count = |total: u64| {
            format!(
                r#"{{"type":"event_msg","payload":{{"type":"token_count","info":{{"last_token_usage":{{"total_tokens":{total}}},"model_context_window":258400}}}}}}"#
            )
        };
        let usage = |total: u64| {
            format!(
                r#"{{"type":"token_usage_record","payload":{{"response_id":"r","usage":{{"input_tokens":{total},"output_tokens":0,"total_tokens":{total}}}}}}}"#
            )
        };
        let call = r#"{"type":"response_item","payload":{"type":"function_call","name":"shell"}}"#;
        // PostToolUse of the second call: its usage record is on disk, its token_count not yet.
        let f = file_with(
            &[
                usage(100_000),
                call.to_string(),
                count(100_000),
                usage(180_000),
                call.to_string(),
            ],
            true,
        );
        let r = read(f.path()).unwrap();
        assert_eq!(
            (r.tokens, r.window, r.format),
            (Some(180_000), Some(258_400), Some(Format::Codex))
        );
        // After a compaction: a token_count estimate with no usage record.
        let after = file_with(
            &[
                usage(240_000),
                r#"{"type":"compacted","payload":{"message":"s"}}"#.to_string(),
                count(30_000),
            ],
            true,
        );
        assert_eq!(read(after.path()).unwrap().tokens, Some(30_000));
        // A usage record with no token_count before it: the fill, no window.
        let alone = file_with(&[usage(5_000)], false);
        let r = read(alone.path()).unwrap();
        assert_eq!((r.tokens, r.window), (Some(5_000), None));
        let behind_compaction = file_with(
            &[
                count(1_000),
                r#"{"type":"compacted","payload":{"message":"s"}}"#.to_string(),
                usage(7_000),
            ],
            true,
        );
        let r = read(behind_compaction.path()).unwrap();
        assert_eq!((r.tokens, r.window), (Some(7_000), None));
    }

    #[test]
    fn a_tool_call_id_in_the_tail() {
        let big = format!(r#"{{"type":"user","x":"{}"}}"#, "y".repeat(BLOCK * 2));
        let f = file_with(
            &[
                r#"{"id":"toolu_old"}"#.to_string(),
                big,
                r#"{"id":"toolu_new"}"#.to_string(),
            ],
            true,
        );
        assert!(tail_contains(f.path(), "toolu_new", 1 << 20).unwrap());
        assert!(tail_contains(f.path(), "toolu_old", 1 << 20).unwrap());
        assert!(!tail_contains(f.path(), "toolu_old", 1024).unwrap());
        assert!(!tail_contains(f.path(), "toolu_none", 1 << 20).unwrap());
    }

    #[test]
    fn first_line_only() {
        let f = file_with(&[assistant((4, 4, 4), false)], false);
        assert_eq!(read(f.path()).unwrap().tokens, Some(12));
        let empty = file_with(&[], false);
        assert_eq!(read(empty.path()).unwrap().tokens, None);
    }
}
