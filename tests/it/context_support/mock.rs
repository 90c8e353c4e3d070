//! A model server of our own on 127.0.0.1 for the real agent CLIs (tests/it/context_real.rs):
//! Anthropic Messages (streaming server-sent events or one JSON answer), OpenAI Responses
//! (streaming events) and Gemini generateContent / streamGenerateContent. It answers the agent's
//! main calls with scripted turns (a tool call or a final text, each with the prompt size the
//! test chooses) and every other call (titles, summaries, compaction) with a short text.
//!
//! Every request is logged whole (method, path, JSON body). A request that is not for the API
//! (a proxy `CONNECT`, an absolute URI) is logged as an escape: the tests point the agents'
//! proxy variables here, so an attempt to reach any other address shows up there.
#![allow(dead_code)]

use serde_json::{json, Value};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the model answers at one main-agent call.
#[derive(Debug, Clone)]
pub enum Reply {
    /// Calls one tool with this input (an object).
    Tool { name: String, input: Value },
    /// Ends the turn with this text.
    Text(String),
}

/// One scripted main-agent call: the prompt size the API reports, and the reply.
#[derive(Debug, Clone)]
pub struct Turn {
    pub prompt_tokens: u64,
    pub reply: Reply,
    /// How long the model takes before it answers (a turn in progress stays in progress).
    pub delay: Duration,
}

/// `turn`, answered only after `delay`.
pub fn slow(turn: Turn, delay: Duration) -> Turn {
    Turn { delay, ..turn }
}

pub fn tool(prompt_tokens: u64, name: &str, input: Value) -> Turn {
    Turn {
        prompt_tokens,
        reply: Reply::Tool {
            name: name.to_string(),
            input,
        },
        delay: Duration::ZERO,
    }
}

pub fn text(prompt_tokens: u64, s: &str) -> Turn {
    Turn {
        prompt_tokens,
        reply: Reply::Text(s.to_string()),
        delay: Duration::ZERO,
    }
}

#[derive(Debug, Clone)]
pub struct Logged {
    pub method: String,
    pub path: String,
    pub body: Value,
    /// Which scripted turn answered (`None`: a side call answered with a short text).
    pub turn: Option<usize>,
    /// Not an API request: a proxy CONNECT or an absolute URI (an attempt to go elsewhere).
    pub escape: bool,
}

impl Logged {
    /// The body as text, for searching what the model received.
    pub fn text(&self) -> String {
        self.body.to_string()
    }
}

#[derive(Default)]
struct State {
    turns: VecDeque<Turn>,
    next_turn: usize,
    log: Vec<Logged>,
    /// Usage for calls that are not scripted turns (compaction, titles).
    side_tokens: u64,
}

pub struct Mock {
    pub port: u16,
    state: Arc<Mutex<State>>,
}

/// Decides whether a request is one of the agent's main calls (the scripted ones): it offers
/// tools and is not a compaction or summary request.
pub type IsMain = fn(&str, &Value) -> bool;

impl Mock {
    pub fn start(turns: Vec<Turn>, is_main: IsMain) -> Mock {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(Mutex::new(State {
            turns: turns.into(),
            side_tokens: 5_000,
            ..State::default()
        }));
        let shared = state.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let shared = shared.clone();
                std::thread::spawn(move || {
                    let _ = serve(stream, &shared, is_main);
                });
            }
        });
        Mock { port, state }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn log(&self) -> Vec<Logged> {
        let log = self.state.lock().unwrap().log.clone();
        // For a person debugging a scenario: the whole log as JSON lines.
        if let Some(path) = std::env::var_os("GIT_SESSION_MOCK_LOG") {
            let lines: Vec<String> = log
                .iter()
                .map(|l| {
                    json!({"method": l.method, "path": l.path, "turn": l.turn,
                           "escape": l.escape, "body": l.body})
                    .to_string()
                })
                .collect();
            let _ = std::fs::write(path, lines.join("\n"));
        }
        log
    }

    pub fn turns_left(&self) -> usize {
        self.state.lock().unwrap().turns.len()
    }

    /// The whole log, one line per request, for a failing test's message.
    pub fn dump(&self) -> String {
        self.log()
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let t = l.text();
                let short: String = t.chars().take(300).collect();
                format!(
                    "#{i} {} {} turn={:?} escape={} {short}",
                    l.method, l.path, l.turn, l.escape
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn serve(stream: TcpStream, state: &Mutex<State>, is_main: IsMain) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut out = stream;
    let mut request_line = String::new();
    if reader.read_line(&mut request_line)? == 0 {
        return Ok(());
    }
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let target = parts.next().unwrap_or("").to_string();
    let mut length = 0usize;
    let mut chunked = false;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 {
            return Ok(());
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            let k = k.trim().to_ascii_lowercase();
            if k == "content-length" {
                length = v.trim().parse().unwrap_or(0);
            } else if k == "transfer-encoding" && v.to_ascii_lowercase().contains("chunked") {
                chunked = true;
            }
        }
    }
    let body = if chunked {
        read_chunked(&mut reader)?
    } else {
        let mut b = vec![0u8; length];
        reader.read_exact(&mut b)?;
        b
    };
    let escape = method == "CONNECT" || !target.starts_with('/');
    let body_json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if escape {
        state.lock().unwrap().log.push(Logged {
            method,
            path: target,
            body: body_json,
            turn: None,
            escape: true,
        });
        write!(
            out,
            "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )?;
        return Ok(());
    }
    let path = target.split('?').next().unwrap_or("").to_string();
    let (turn_no, turn) = {
        let mut s = state.lock().unwrap();
        let main = method == "POST" && is_main(&path, &body_json);
        let picked = if main {
            let t = s.turns.pop_front();
            let n = s.next_turn;
            if t.is_some() {
                s.next_turn += 1;
            }
            t.map(|t| (Some(n), t))
        } else {
            None
        };
        let (n, t) = picked.unwrap_or_else(|| {
            let tokens = s.side_tokens;
            (None, text(tokens, "Summary: the work so far is committed."))
        });
        s.log.push(Logged {
            method: method.clone(),
            path: path.clone(),
            body: body_json.clone(),
            turn: n,
            escape: false,
        });
        (n, t)
    };
    let _ = turn_no;
    std::thread::sleep(turn.delay);
    let stream_wanted =
        body_json["stream"].as_bool().unwrap_or(false) || path.contains("streamGenerateContent");
    let (content_type, payload) = if path.ends_with("/v1/messages") {
        if stream_wanted {
            ("text/event-stream", anthropic_stream(&turn))
        } else {
            ("application/json", anthropic_json(&turn).to_string())
        }
    } else if path.ends_with("/responses") {
        ("text/event-stream", responses_stream(&turn))
    } else if path.contains(":streamGenerateContent") {
        ("text/event-stream", gemini_stream(&turn))
    } else if path.contains(":generateContent") {
        ("application/json", gemini_json(&turn).to_string())
    } else if path.contains(":countTokens") {
        (
            "application/json",
            json!({"totalTokens": turn.prompt_tokens}).to_string(),
        )
    } else if path.contains("count_tokens") {
        (
            "application/json",
            json!({"input_tokens": turn.prompt_tokens}).to_string(),
        )
    } else if path.ends_with("/models") || path.contains("/models") && method == "GET" {
        (
            "application/json",
            json!({"data": [], "models": []}).to_string(),
        )
    } else {
        ("application/json", "{}".to_string())
    };
    write!(
        out,
        "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        payload.len()
    )?;
    out.write_all(payload.as_bytes())?;
    out.flush()?;
    Ok(())
}

fn read_chunked(reader: &mut impl BufRead) -> std::io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        reader.read_line(&mut size)?;
        let n =
            usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16).unwrap_or(0);
        if n == 0 {
            let mut end = String::new();
            reader.read_line(&mut end)?;
            return Ok(body);
        }
        let mut chunk = vec![0u8; n];
        reader.read_exact(&mut chunk)?;
        body.extend_from_slice(&chunk);
        let mut crlf = String::new();
        reader.read_line(&mut crlf)?;
    }
}

fn sse(events: &[(&str, Value)]) -> String {
    events
        .iter()
        .map(|(e, d)| format!("event: {e}\ndata: {d}\n\n"))
        .collect()
}

fn anthropic_usage(t: &Turn) -> Value {
    // Most of the prompt read from the cache, as a long session's is.
    let cached = t.prompt_tokens.saturating_sub(1_000);
    json!({"input_tokens": t.prompt_tokens - cached, "cache_creation_input_tokens": 0,
           "cache_read_input_tokens": cached, "output_tokens": 40})
}

const CLAUDE_MODEL: &str = "claude-sonnet-4-5-20250929";

fn anthropic_json(t: &Turn) -> Value {
    let (content, stop) = match &t.reply {
        Reply::Tool { name, input } => (
            json!([{"type": "tool_use", "id": format!("toolu_{}", t.prompt_tokens), "name": name,
                    "input": input}]),
            "tool_use",
        ),
        Reply::Text(s) => (json!([{"type": "text", "text": s}]), "end_turn"),
    };
    json!({"id": format!("msg_{}", t.prompt_tokens), "type": "message", "role": "assistant",
           "model": CLAUDE_MODEL, "content": content, "stop_reason": stop,
           "stop_sequence": null, "usage": anthropic_usage(t)})
}

fn anthropic_stream(t: &Turn) -> String {
    let mut usage = anthropic_usage(t);
    usage["output_tokens"] = json!(1);
    let start = json!({"type": "message_start", "message": {
        "id": format!("msg_{}", t.prompt_tokens), "type": "message", "role": "assistant",
        "model": CLAUDE_MODEL, "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": usage}});
    let (block, delta, stop) = match &t.reply {
        Reply::Tool { name, input } => (
            json!({"type": "tool_use", "id": format!("toolu_{}", t.prompt_tokens),
                   "name": name, "input": {}}),
            json!({"type": "input_json_delta", "partial_json": input.to_string()}),
            "tool_use",
        ),
        Reply::Text(s) => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": s}),
            "end_turn",
        ),
    };
    sse(&[
        ("message_start", start),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": block}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": stop,
                   "stop_sequence": null}, "usage": {"output_tokens": 40}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ])
}

/// OpenAI Responses streaming events, as Codex reads them.
fn responses_stream(t: &Turn) -> String {
    let id = format!("resp_{}", t.prompt_tokens);
    let item = match &t.reply {
        Reply::Tool { name, input } if name == "apply_patch" => {
            json!({"type": "custom_tool_call", "id": format!("ctc_{}", t.prompt_tokens),
                   "status": "completed", "call_id": format!("call_{}", t.prompt_tokens),
                   "name": name, "input": input.as_str().unwrap_or_default()})
        }
        Reply::Tool { name, input } => {
            json!({"type": "function_call", "id": format!("fc_{}", t.prompt_tokens),
                   "status": "completed", "call_id": format!("call_{}", t.prompt_tokens),
                   "name": name, "arguments": input.to_string()})
        }
        Reply::Text(s) => json!({"type": "message", "id": format!("m_{}", t.prompt_tokens),
            "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": s, "annotations": []}]}),
    };
    let usage = json!({"input_tokens": t.prompt_tokens, "input_tokens_details":
        {"cached_tokens": 0}, "output_tokens": 40, "output_tokens_details":
        {"reasoning_tokens": 0}, "total_tokens": t.prompt_tokens + 40});
    let created = json!({"type": "response.created", "response": {"id": id,
        "object": "response", "status": "in_progress", "output": []}});
    let done = json!({"type": "response.output_item.done", "output_index": 0, "item": item});
    let completed = json!({"type": "response.completed", "response": {"id": id,
        "object": "response", "status": "completed", "output": [item], "usage": usage}});
    sse(&[
        ("response.created", created),
        ("response.output_item.done", done),
        ("response.completed", completed),
    ])
}

fn gemini_json(t: &Turn) -> Value {
    let part = match &t.reply {
        Reply::Tool { name, input } => json!({"functionCall": {"name": name, "args": input}}),
        Reply::Text(s) => json!({"text": s}),
    };
    json!({"candidates": [{"content": {"role": "model", "parts": [part]},
                           "finishReason": "STOP", "index": 0}],
           "usageMetadata": {"promptTokenCount": t.prompt_tokens, "candidatesTokenCount": 40,
                             "totalTokenCount": t.prompt_tokens + 40},
           "modelVersion": "gemini-2.5-pro"})
}

fn gemini_stream(t: &Turn) -> String {
    format!("data: {}\n\n", gemini_json(t))
}
