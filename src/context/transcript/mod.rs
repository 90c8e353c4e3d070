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
//!
//! Layout: this file reads backwards ([`read`], [`tail_has_line_with`]); [`formats`] says what one
//! line of each agent's format means; [`since`] reads forwards from a compaction's offset.

mod formats;
mod since;

pub use since::{compaction_since, since, Boundary, Since};

use super::agents::Agent;
use formats::{judge, window_further_back, Verdict};
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
    /// Whose format the deciding record is in.
    pub format: Option<Agent>,
    /// Bytes read from the file (for tests and the benchmark's sanity check).
    pub bytes_read: u64,
    /// Where the deciding record starts in the file (0 when none decided).
    pub at: u64,
    /// The file's length when it was read: a record that ends later is not in this reading.
    pub len: u64,
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
    let reading = read_backwards(&mut file, len)?;
    Ok(Reading { len, ..reading })
}

/// [`read`] of the first `len` bytes of `file`.
fn read_backwards(file: &mut File, len: u64) -> std::io::Result<Reading> {
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
            if window_further_back(&r) {
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

/// Whether `needle` occurs in a whole line (one its newline has reached) of the last `limit`
/// bytes of the file at `path`, searched from the end in blocks: a tool call's id, to know
/// whether the agent's record of that call has reached the file. When it does, the answer is
/// where the file's whole lines end: a reading whose `len` is shorter missed the record.
///
/// Only whole lines count because a record lands in pieces: a read that races the agent's
/// write can see the start of a line (the call's id) without its end (the call's usage), and
/// the reading would then be the call before's.
pub fn tail_has_line_with(path: &Path, needle: &str, limit: u64) -> std::io::Result<Option<u64>> {
    let needle = needle.as_bytes();
    if needle.is_empty() {
        return Ok(None);
    }
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    let floor = len.saturating_sub(limit);
    let Some(whole) = last_newline(&mut file, len, floor)? else {
        return Ok(None);
    };
    let mut end = whole;
    while end > floor {
        let start = end.saturating_sub(BLOCK as u64).max(floor);
        // Overlap the next block by the needle's length, so a match across blocks is seen.
        let stop = (end + needle.len() as u64).min(whole);
        let mut buf = vec![0u8; (stop - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut buf)?;
        if buf.windows(needle.len()).any(|w| w == needle) {
            return Ok(Some(whole));
        }
        end = start;
    }
    Ok(None)
}

/// The offset just past the file's last newline at or after `floor`: where its whole lines end.
fn last_newline(file: &mut File, len: u64, floor: u64) -> std::io::Result<Option<u64>> {
    let mut end = len;
    while end > floor {
        let start = end.saturating_sub(BLOCK as u64).max(floor);
        let mut buf = vec![0u8; (end - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut buf)?;
        if let Some(at) = buf.iter().rposition(|&b| b == b'\n') {
            return Ok(Some(start + at as u64 + 1));
        }
        end = start;
    }
    Ok(None)
}

#[cfg(test)]
mod tests;
