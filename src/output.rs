//! Output: data to stdout, messages to stderr, JSON for every listing.
//!
//! Invariants: nothing here panics on a closed stdout (`git session list | head`): every write
//! returns its `io::Error`, which `error::report` turns into a quiet exit. Colour only on a
//! terminal and never when `NO_COLOR` is set. The JSON shapes built here are a stable interface
//! (README "JSON output"): keys may be added, never renamed.

use crate::clock::{self, Time};
use crate::session::Status;
use serde_json::{json, Value};
use std::io::{IsTerminal, Write};

/// Writes one line to stdout.
pub fn line(text: impl AsRef<str>) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", text.as_ref())
}

/// Writes a JSON value, pretty, to stdout.
pub fn json(value: &Value) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value).map_err(std::io::Error::from)?;
    writeln!(out)
}

/// A message for people, on stderr.
pub fn note(text: impl AsRef<str>) {
    let _ = writeln!(std::io::stderr().lock(), "{}", text.as_ref());
}

pub fn warn(text: impl AsRef<str>) {
    let _ = writeln!(std::io::stderr().lock(), "warning: {}", text.as_ref());
}

pub fn stderr_is_terminal() -> bool {
    std::io::stderr().is_terminal()
}

pub fn color_enabled() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// Left-aligned columns, two spaces apart; the last column is not padded.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            if i < widths.len() {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
    }
    let render = |cells: Vec<&str>| -> String {
        let mut s = String::new();
        let last = cells.len().saturating_sub(1);
        for (i, cell) in cells.iter().enumerate() {
            s.push_str(cell);
            if i < last {
                let pad = widths[i] - cell.chars().count() + 2;
                s.push_str(&" ".repeat(pad));
            }
        }
        s.trim_end().to_string()
    };
    let mut out = render(header.to_vec());
    for row in rows {
        out.push('\n');
        out.push_str(&render(row.iter().map(String::as_str).collect()));
    }
    out
}

pub fn percent(p: Option<f64>) -> String {
    match p {
        Some(p) => format!("{p:.0}%"),
        None => "-".to_string(),
    }
}

/// The `list --json` object for one session (also the core of `info --json`).
pub fn status_json(s: &Status) -> Value {
    json!({
        "label": s.record.label,
        "branch": s.record.branch,
        "path": s.record.path.display().to_string(),
        "state": s.state.as_str(),
        "live": s.live,
        "merged": s.merged.as_str(),
        "ahead": s.ahead,
        "behind": s.behind,
        "dirty": s.dirty.len(),
        "owned": s.owned,
        "created": clock::rfc3339(s.record.created),
        "last_activity": clock::rfc3339(s.last_activity),
        "context_percent": s.record.context.as_ref().and_then(|c| c.percent),
        "locked": s.locked,
        "attached": s.record.attached,
    })
}

/// `3d ago`-style age of a time relative to now.
pub fn ago(t: Time, now: Time) -> String {
    let a = clock::age(now - t);
    if a == "now" {
        a
    } else {
        format!("{a} ago")
    }
}

/// `1 commit`, `2 commits`.
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
