//! Unit tests of the transcript reader.

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
    let user =
        r#"{"id":"u1","timestamp":"2026-01-01T00:00:00Z","type":"user","content":[{"text":"go"}]}"#;
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
        (Some(52_000), Some("gemini-2.5-pro"), Some(Agent::Gemini))
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
        (Some(118_308), Some(Agent::Claude))
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
        (Some(180_000), Some(258_400), Some(Agent::Codex))
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
    let whole = std::fs::metadata(f.path()).unwrap().len();
    assert_eq!(
        tail_has_line_with(f.path(), "toolu_new", 1 << 20).unwrap(),
        Some(whole)
    );
    assert_eq!(
        tail_has_line_with(f.path(), "toolu_old", 1 << 20).unwrap(),
        Some(whole)
    );
    assert_eq!(
        tail_has_line_with(f.path(), "toolu_old", 1024).unwrap(),
        None
    );
    assert_eq!(
        tail_has_line_with(f.path(), "toolu_none", 1 << 20).unwrap(),
        None
    );
}

// A record that has landed in part (its id, not yet its usage and newline) is not there yet:
// the reading would be the call before's. Once its newline lands it is, wherever the write was
// cut.
#[test]
fn a_record_counts_once_its_line_is_whole() {
    let older = assistant((1, 2, 3), false);
    let mut call: serde_json::Value =
        serde_json::from_str(&assistant((10, 20, 30), false)).unwrap();
    call["message"]["content"] = serde_json::json!([{"type": "tool_use", "id": "toolu_cut"}]);
    let call = call.to_string();
    let id_ends = call.find("toolu_cut").unwrap() + "toolu_cut".len();
    for cut in [id_ends, id_ends + 1, call.len() - 1, call.len()] {
        let f = file_with(std::slice::from_ref(&older), true);
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(f.path())
            .unwrap();
        file.write_all(&call.as_bytes()[..cut]).unwrap();
        assert_eq!(
            tail_has_line_with(f.path(), "toolu_cut", 1 << 20).unwrap(),
            None,
            "{cut}"
        );
        file.write_all(&call.as_bytes()[cut..]).unwrap();
        file.write_all(b"\n").unwrap();
        let whole = std::fs::metadata(f.path()).unwrap().len();
        assert_eq!(
            tail_has_line_with(f.path(), "toolu_cut", 1 << 20).unwrap(),
            Some(whole)
        );
        let r = read(f.path()).unwrap();
        assert_eq!((r.tokens, r.len), (Some(60), whole), "{cut}");
    }
}

#[test]
fn first_line_only() {
    let f = file_with(&[assistant((4, 4, 4), false)], false);
    assert_eq!(read(f.path()).unwrap().tokens, Some(12));
    let empty = file_with(&[], false);
    assert_eq!(read(empty.path()).unwrap().tokens, None);
}

/// GitHub Copilot CLI's events.jsonl (1.0.102): the newest `session.usage_record` decides; the
/// tool events and messages after it do not.
#[test]
fn copilot_usage_record_is_the_fill() {
    let usage = |input: u64| {
        format!(
            r#"{{"type":"session.usage_record","data":{{"usage":{{"model":"gpt-4.1","inputTokens":{input},"outputTokens":20,"cacheReadTokens":1000,"cacheWriteTokens":0,"maxPromptTokens":64000}}}},"id":"u","timestamp":"2026-11-27T17:15:03.355Z"}}"#
        )
    };
    let f = file_with(
        &[
            r#"{"type":"session.start","data":{"sessionId":"s","selectedModel":"gpt-4.1"}}"#
                .to_string(),
            usage(1234),
            r#"{"type":"assistant.message","data":{"model":"gpt-4.1","content":""}}"#.to_string(),
            usage(40_000),
            r#"{"type":"tool.execution_start","data":{"toolName":"create","arguments":{}}}"#
                .to_string(),
        ],
        true,
    );
    let r = read(f.path()).unwrap();
    assert_eq!(
        (r.tokens, r.window, r.model.as_deref(), r.format),
        (
            Some(40_000),
            Some(64_000),
            Some("gpt-4.1"),
            Some(Agent::Copilot)
        )
    );
}
