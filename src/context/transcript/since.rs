//! What a transcript says after a compaction's offset: its record, and whether the conversation
//! went on (read forwards, within [`SCAN_LIMIT`] of the end).

use super::formats::{judge, Verdict};
use super::{Agent, SCAN_LIMIT};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// A compaction's record in a transcript: Claude Code's `compact_boundary`, Codex's `compacted`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Boundary {
    /// `compactMetadata.preTokens` of an automatic compaction: where this agent compacts.
    pub auto_compact_at: Option<u64>,
    /// Which agent's record it is.
    pub format: Option<Agent>,
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
        // The formats' reader says what a line is: a compaction's record (with the agent whose
        // record it is), or a model call's usage.
        match judge(line) {
            Verdict::Done(r) if r.compacted => {
                found = Some(Boundary {
                    auto_compact_at: r.auto_compact_at,
                    format: r.format,
                });
            }
            Verdict::Done(r) if r.tokens.is_some() => went_on = true,
            _ => {}
        }
    }
    Ok(Since {
        boundary: found,
        went_on,
    })
}
