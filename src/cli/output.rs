//! Output: data to stdout, messages to stderr, JSON for every listing.
//!
//! Invariants: nothing here panics on a closed stdout (`git session list | head`): every write
//! returns its `io::Error`, which `error::report` turns into a quiet exit. The JSON shapes built
//! here are a stable interface (README "JSON output"): keys may be added, never renamed.
//!
//! Colour: everything styled is written through `anstream`, which drops the escapes unless the
//! stream is a terminal (or `CLICOLOR_FORCE` is set) and honours `NO_COLOR` and `CLICOLOR=0`.
//! git's own `color.session` / `color.ui` (`never`, `always`, `auto`) is read once, and only when
//! something styled is about to be written where colour is possible, so the guard and the hook
//! never pay for it on their quiet path.

use crate::base::clock::{self, Time};
use crate::session::Status;
use serde_json::{json, Value};
use std::io::{IsTerminal, Write};

/// Writes one line to stdout.
pub fn line(text: impl AsRef<str>) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", text.as_ref())
}

/// The version of the shape of every `--json` output, described by the JSON Schemas under
/// `schema/`: each object printed (each element, when an array is printed) carries it as
/// `version` (`handoff list`, whose `version` is a note's, as `schema_version`). Keys are added
/// without changing it; renaming or removing one would.
pub const JSON_VERSION: u64 = 1;

/// `value`, an object, with `"version": JSON_VERSION` as its first key.
pub fn versioned(value: Value) -> Value {
    let Value::Object(fields) = value else {
        return value;
    };
    let mut out = serde_json::Map::new();
    out.insert("version".into(), json!(JSON_VERSION));
    out.extend(fields);
    Value::Object(out)
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

/// A `warning:` line on stderr, wrapped at the terminal's width when stderr is one.
pub fn warn(text: impl AsRef<str>) {
    settle_colour();
    let text = fit_stderr(text.as_ref(), "warning: ".len());
    let _ = writeln!(
        anstream::stderr().lock(),
        "{} {text}",
        prefix(Prefix::Warning),
    );
}

/// `text` wrapped to the terminal's width when stderr is a terminal (see [`wrap`]), else as is:
/// a pipe or a file keeps one line per message.
fn fit_stderr(text: &str, prefix_len: usize) -> String {
    match terminal_size::terminal_size_of(std::io::stderr()) {
        Some((terminal_size::Width(w), _)) if stderr_is_terminal() => {
            wrap(text, prefix_len, usize::from(w))
        }
        _ => text.to_string(),
    }
}

/// `text`, which follows a prefix `prefix_len` columns wide, broken at spaces into lines of at
/// most `width` columns, each continuation indented under the text's start. A word longer than
/// a line (a path) stays whole on a line of its own; a width too narrow to wrap in leaves the
/// text as it is.
pub fn wrap(text: &str, prefix_len: usize, width: usize) -> String {
    let room = width.saturating_sub(prefix_len);
    if room < 20 {
        return text.to_string();
    }
    let indent = " ".repeat(prefix_len);
    let mut out = String::new();
    let mut used = 0;
    for word in text.split(' ') {
        let len = word.chars().count();
        if used > 0 && used + 1 + len > room {
            out.push('\n');
            out.push_str(&indent);
            used = 0;
        } else if used > 0 {
            out.push(' ');
            used += 1;
        }
        out.push_str(word);
        used += len;
    }
    out
}

/// Prints one [`crate::base::announce::Announcement`] on stderr, at once: the sink the command
/// layer installs ([`crate::cli::main`]).
pub fn announce(what: &crate::base::announce::Announcement) {
    use crate::base::announce::{Announcement, Kind};
    let say = || match what.kind() {
        Kind::Note => note(super::words::announcements::text(what)),
        Kind::Warning => warn(super::words::announcements::text(what)),
    };
    let progress = PROGRESS.lock().ok().and_then(|p| p.clone());
    match progress {
        // A prompt follows, drawn where no progress line may overwrite it: they are hidden
        // until the progress is next updated.
        Some(lines) if matches!(what, Announcement::CheckApprovalAsked) => {
            let _ = lines.clear();
            lines.set_draw_target(indicatif::ProgressDrawTarget::hidden());
            say();
        }
        Some(lines) => lines.suspend(say),
        None => say(),
    }
}

/// The progress lines on stderr while a command draws some (a batch of merges on a terminal):
/// every announcement printed meanwhile goes above them.
static PROGRESS: std::sync::Mutex<Option<indicatif::MultiProgress>> = std::sync::Mutex::new(None);

/// Sets (or, with `None`, ends) the progress lines announcements must go above.
pub fn set_progress(lines: Option<indicatif::MultiProgress>) {
    if let Ok(mut p) = PROGRESS.lock() {
        *p = lines;
    }
}

/// A `hint:` line on stderr: what to do next, after a warning.
pub fn hint(text: impl AsRef<str>) {
    settle_colour();
    let text = fit_stderr(text.as_ref(), "hint: ".len());
    let _ = writeln!(anstream::stderr().lock(), "{} {text}", prefix(Prefix::Hint));
}

/// The three message prefixes, styled as clap styles its own.
#[derive(Debug, Clone, Copy)]
pub enum Prefix {
    Error,
    Warning,
    Hint,
}

/// `error:`, `warning:` or `hint:` in clap's colours. Written through `anstream`, which keeps the
/// colour only on a terminal and honours `NO_COLOR`, `CLICOLOR=0` and `CLICOLOR_FORCE`.
pub fn prefix(kind: Prefix) -> String {
    use anstyle::{AnsiColor, Effects, Style};
    let (word, color) = match kind {
        Prefix::Error => ("error:", AnsiColor::Red),
        Prefix::Warning => ("warning:", AnsiColor::Yellow),
        Prefix::Hint => ("hint:", AnsiColor::Green),
    };
    let style = Style::new().fg_color(Some(color.into())) | Effects::BOLD;
    format!("{style}{word}{style:#}")
}

/// `text` to stderr in one write (styles kept on a terminal that shows them, stripped
/// elsewhere): a refusal reaches a hook manager's log in one piece, for one system call.
pub fn stderr_whole(text: &str) {
    let _ = if anstream::AutoStream::choice(&std::io::stderr()) == anstream::ColorChoice::Never {
        let plain = anstream::adapter::strip_str(text).to_string();
        std::io::stderr().lock().write_all(plain.as_bytes())
    } else {
        anstream::stderr().lock().write_all(text.as_bytes())
    };
}

pub fn stderr_is_terminal() -> bool {
    std::io::stderr().is_terminal()
}

/// Writes styled text to stdout, one line; the escapes go only where colour is wanted.
pub fn styled_line(text: impl AsRef<str>) -> std::io::Result<()> {
    settle_colour();
    let mut out = anstream::stdout().lock();
    writeln!(out, "{}", text.as_ref())
}

/// Applies git's colour setting (`color.session`, else `color.ui`) to every `anstream` stream
/// created after this call. Cheap after the first call; reads no configuration when no stream
/// could show colour anyway (`NO_COLOR`, or neither stdout nor stderr a terminal and no
/// `CLICOLOR_FORCE`).
pub fn settle_colour() {
    settle_colour_from(crate::git::colour_setting);
}

/// [`settle_colour`], reading git's setting through `setting` (only if it is needed): a caller
/// that holds the repository open (the guard, about to word a refusal) reads it there instead
/// of opening the repository a second time.
pub fn settle_colour_from(setting: impl FnOnce() -> Option<String>) {
    static SETTLED: std::sync::Once = std::sync::Once::new();
    SETTLED.call_once(|| {
        if let Some(choice) = configured_colour(
            |k| std::env::var_os(k),
            || std::io::stdout().is_terminal() || std::io::stderr().is_terminal(),
            setting,
        ) {
            choice.write_global();
        }
    });
}

/// What git's configuration asks for, when it overrides `anstream`'s own terminal detection:
/// `never` (or `false`, `no`, `off`, `0`) turns colour off even under `CLICOLOR_FORCE`;
/// `always` turns it on even when piped. `NO_COLOR` beats both, as its convention asks.
pub fn configured_colour(
    env: impl Fn(&str) -> Option<std::ffi::OsString>,
    any_terminal: impl FnOnce() -> bool,
    setting: impl FnOnce() -> Option<String>,
) -> Option<anstream::ColorChoice> {
    let set = |k: &str| env(k).is_some_and(|v| !v.is_empty() && v != "0");
    if set("NO_COLOR") {
        return Some(anstream::ColorChoice::Never);
    }
    if !set("CLICOLOR_FORCE") && !any_terminal() {
        // Neither stream can show colour and nothing forces it: git's `always` is the one
        // setting left that matters, and it is rare enough to read only now.
        return match setting()?.to_ascii_lowercase().as_str() {
            "always" => Some(anstream::ColorChoice::Always),
            _ => None,
        };
    }
    match setting()?.to_ascii_lowercase().as_str() {
        "never" | "false" | "no" | "off" | "0" => Some(anstream::ColorChoice::Never),
        "always" => Some(anstream::ColorChoice::Always),
        _ => None,
    }
}

/// A style for one column's cell, by column name and text; the plain style leaves it as is.
pub type CellStyle<'a> = &'a dyn Fn(&str, &str) -> anstyle::Style;

/// Left-aligned columns, two spaces apart; the last column is not padded.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    render_table(header, rows, None)
}

/// [`table`] with each cell (and the bold header) wrapped in its style. Widths are counted on
/// the plain text, so the columns line up whether or not the escapes are kept.
/// Write it with [`styled_line`].
pub fn table_styled(header: &[&str], rows: &[Vec<String>], style: CellStyle) -> String {
    render_table(header, rows, Some(style))
}

fn render_table(header: &[&str], rows: &[Vec<String>], style: Option<CellStyle>) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            if i < widths.len() {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
    }
    let render = |cells: Vec<&str>, header_row: bool| -> String {
        let mut s = String::new();
        let last = cells.len().saturating_sub(1);
        for (i, cell) in cells.iter().enumerate() {
            let st = match style {
                None => anstyle::Style::new(),
                Some(_) if header_row => anstyle::Style::new().bold(),
                Some(f) => f(header.get(i).copied().unwrap_or(""), cell),
            };
            if cell.is_empty() || st.is_plain() {
                s.push_str(cell);
            } else {
                s.push_str(&format!("{st}{cell}{st:#}"));
            }
            if i < last {
                let pad = widths[i] - cell.chars().count() + 2;
                s.push_str(&" ".repeat(pad));
            }
        }
        s.trim_end().to_string()
    };
    let mut out = render(header.to_vec(), true);
    for row in rows {
        out.push('\n');
        out.push_str(&render(row.iter().map(String::as_str).collect(), false));
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
        "kept": s.record.kept.as_ref().map(|k| json!({
            "at": clock::rfc3339(k.at),
            "reasons": k.reasons,
        })),
        "damage": crate::cli::words::damage::json(s),
    })
}

/// The `resources` key of `list --json` and `info --json`: what the session leased (`null`:
/// nothing).
pub fn resources_json(lease: Option<&crate::ownership::leases::Lease>) -> Value {
    let Some(l) = lease else {
        return Value::Null;
    };
    let env: serde_json::Map<String, Value> = l
        .env()
        .into_iter()
        .map(|(k, v)| (k, Value::from(v)))
        .collect();
    json!({
        "port": l.port_first,
        "ports": l.port_span(),
        "names": l.names,
        "env": env,
    })
}

/// The `disk` key of `list --json` and `info --json`: the worktree's own disk use
/// (`session::disk`; `null`: attached, missing or unreadable).
pub fn disk_json(used: Option<&crate::session::disk::DiskUse>) -> Value {
    match used {
        Some(d) => json!({
            "bytes": d.bytes,
            "files": d.files,
            "measured": clock::rfc3339(d.measured),
        }),
        None => Value::Null,
    }
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

#[cfg(test)]
mod tests {
    use super::configured_colour;
    use anstream::ColorChoice;
    use std::ffi::OsString;

    fn choice(env: &[(&str, &str)], terminal: bool, setting: Option<&str>) -> Option<ColorChoice> {
        let env: Vec<(String, OsString)> =
            env.iter().map(|(k, v)| (k.to_string(), v.into())).collect();
        configured_colour(
            |k| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()),
            || terminal,
            || setting.map(str::to_string),
        )
    }

    #[test]
    fn git_setting_and_conventions_decide_in_order() {
        use ColorChoice::{Always, Never};
        assert_eq!(
            choice(&[("NO_COLOR", "1")], true, Some("always")),
            Some(Never)
        );
        assert_eq!(
            choice(&[("NO_COLOR", "")], true, Some("never")),
            Some(Never)
        );
        assert_eq!(choice(&[], true, Some("never")), Some(Never));
        assert_eq!(choice(&[], true, Some("False")), Some(Never));
        assert_eq!(
            choice(&[("CLICOLOR_FORCE", "1")], false, Some("off")),
            Some(Never)
        );
        assert_eq!(choice(&[], false, Some("always")), Some(Always));
        assert_eq!(
            choice(&[], false, Some("never")),
            None,
            "a pipe is plain anyway"
        );
        assert_eq!(choice(&[], true, Some("auto")), None);
        assert_eq!(choice(&[], true, None), None);
    }

    #[test]
    fn wrap_fits_the_width_and_indents_under_the_text() {
        let text = "the ownership guard is not in force in session \"fix-login\": there is no \
                    pre-commit hook: /home/someone/src/git/.git/hooks/pre-commit does not exist";
        let wrapped = super::wrap(text, 9, 80);
        // The first line follows `warning: `; the others carry its width as indent.
        for (i, line) in wrapped.lines().enumerate() {
            let shown = if i == 0 { 9 } else { 0 } + line.chars().count();
            assert!(shown <= 80, "{line:?}");
        }
        assert_eq!(
            wrapped,
            "the ownership guard is not in force in session \"fix-login\": there is no\n         \
             pre-commit hook: /home/someone/src/git/.git/hooks/pre-commit does not\n         \
             exist"
        );
        assert_eq!(wrapped.replace("\n         ", " "), text);
        // A word longer than a line stays whole; too narrow a terminal wraps nothing.
        let long = format!("see {}", "x".repeat(100));
        assert_eq!(
            super::wrap(&long, 6, 40),
            format!("see\n      {}", "x".repeat(100))
        );
        assert_eq!(super::wrap(text, 9, 20), text);
    }
}
