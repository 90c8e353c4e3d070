//! `git session handoff write|show|list|template`: versioned kickoff notes per session.
//!
//! The notes themselves live in [`crate::handoff`]; this file resolves which session is meant,
//! reads the note from a file or stdin, and prints. Only `write` changes anything.

use crate::base::clock;
use crate::cli::helper::CommandHelper;
use crate::cli::output;
use crate::cli::user_error::UserError;
use crate::handoff;
use crate::session::{self, Label};
use anyhow::Result;
use serde_json::json;
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

/// Versioned kickoff notes per session; the latest is injected into the next agent session
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: Sub,
}

#[derive(Debug, clap::Subcommand)]
pub enum Sub {
    Write(WriteArgs),
    Show(ShowArgs),
    List(ListArgs),
    Template(TemplateArgs),
}

/// Store a new version of a session's kickoff note, read from a file or stdin
#[derive(Debug, clap::Args)]
pub struct WriteArgs {
    /// Session the note is for [default: GIT_SESSION, or the session of the current worktree]
    #[arg(long, short = 's', value_name = "LABEL")]
    pub session: Option<String>,
    /// Read the note from FILE ("-" for stdin)
    #[arg(long, short = 'F', value_name = "FILE", conflicts_with = "source")]
    pub file: Option<PathBuf>,
    /// Read the note from FILE ("-" for stdin) [default: stdin]
    #[arg(value_name = "FILE")]
    pub source: Option<PathBuf>,
}

/// Print a session's latest kickoff note (or an older version)
#[derive(Debug, clap::Args)]
// `--version N` takes the place of the version flag; clap's usage line leaves out options named
// "version", so it is spelled out.
#[command(
    disable_version_flag = true,
    override_usage = "git-session handoff show [OPTIONS] [LABEL]"
)]
pub struct ShowArgs {
    /// Session label [default: GIT_SESSION, or the session of the current worktree]
    pub label: Option<String>,
    /// Print version N instead of the latest
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub version: Option<u32>,
}

/// List the stored versions of kickoff notes: time and first line
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Session label [default: GIT_SESSION, or the session of the current worktree; else all]
    #[arg(conflicts_with = "all")]
    pub label: Option<String>,
    /// List the notes of every session
    #[arg(long)]
    pub all: bool,
    /// Print a JSON array of {label, version, at, title, path}
    #[arg(long)]
    pub json: bool,
}

/// Print a kickoff-note template to fill in
#[derive(Debug, clap::Args)]
pub struct TemplateArgs {}

pub fn run(args: Args) -> Result<()> {
    match args.command {
        Sub::Write(a) => write(a),
        Sub::Show(a) => show(a),
        Sub::List(a) => list(a),
        // Needs no repository: people write notes before they know where they will put them.
        Sub::Template(_) => Ok(output::line(handoff::TEMPLATE.trim_end_matches('\n'))?),
    }
}

/// The label named on the command line (checked), else the acting session's.
fn label(cx: &CommandHelper, given: Option<String>) -> Result<Option<Label>> {
    // Notes need nothing from the configuration, but a file that does not load is reported
    // first here as by every other session command.
    cx.config()?;
    match given {
        Some(l) => Ok(Some(Label::from_string(l)?)),
        None => cx.acting(),
    }
}

fn write(args: WriteArgs) -> Result<()> {
    let cx = CommandHelper::open()?;
    let label = label(&cx, args.session)?.ok_or_else(|| {
        UserError::refused("no session to write the handoff note for").hinted(
            "run it in a session's worktree, set GIT_SESSION=LABEL, or pass --session LABEL \
             (see git session list)",
        )
    })?;
    session::require(&cx.store, &label)?;
    let text = read_note(args.file.or(args.source).as_deref())?;
    handoff::check_content(&text)?;
    let (version, path) = handoff::write(&cx.store, &label, &text)?;
    session::touch(&cx.store, &label)?;
    output::note(format!(
        "stored handoff note {version} for session \"{label}\"; \
         the next agent session started in its worktree will see it"
    ));
    output::line(path.display().to_string())?;
    Ok(())
}

/// The note from `source` (`-` or nothing: stdin). Only UTF-8 text is accepted: the note is
/// injected into an agent's context as text.
fn read_note(source: Option<&Path>) -> Result<String> {
    let stdin = source.is_none_or(|p| p == Path::new("-"));
    let (bytes, name) = if stdin {
        if source.is_none() && std::io::stdin().is_terminal() {
            output::note("reading the handoff note from the terminal; end it with Ctrl-D");
        }
        let mut bytes = Vec::new();
        std::io::stdin()
            .lock()
            .read_to_end(&mut bytes)
            .map_err(|e| UserError::refused(format!("cannot read stdin: {e}")))?;
        (bytes, "stdin".to_string())
    } else {
        let path = source.expect("a file was named");
        let bytes = std::fs::read(path).map_err(|e| {
            UserError::refused(format!("cannot read {}: {e}", path.display()))
                .hinted("name a readable file, or pass - to read the note from stdin")
        })?;
        (bytes, path.display().to_string())
    };
    String::from_utf8(bytes).map_err(|_| {
        UserError::refused(format!("the handoff note in {name} is not UTF-8 text"))
            .hinted("write the note as plain (markdown) text")
            .into()
    })
}

fn show(args: ShowArgs) -> Result<()> {
    let cx = CommandHelper::open()?;
    let label = label(&cx, args.label)?.ok_or_else(|| {
        UserError::refused("no session here")
            .hinted("name one: git session handoff show LABEL (see git session handoff list)")
    })?;
    let versions = handoff::versions(&cx.store, &label)?;
    let Some(&newest) = versions.last() else {
        // The session's absence, in require's words (a record that came since is no error).
        session::require(&cx.store, &label)?;
        return Err(
            UserError::refused(format!("session \"{label}\" has no handoff note"))
                .hinted(
                    "write one: git session handoff template > note.md, fill it in, then \
             git session handoff write note.md",
                )
                .into(),
        );
    };
    let version = args.version.unwrap_or(newest);
    let Some(text) = handoff::read(&cx.store, &label, version)? else {
        let known: Vec<String> = versions.iter().map(u32::to_string).collect();
        return Err(UserError::refused(format!(
            "session \"{label}\" has no handoff note version {version}"
        ))
        .hinted(format!(
            "its versions are {} (git session handoff list {label})",
            known.join(", ")
        ))
        .into());
    };
    // Exactly what was written: the note's own final newline stands in for the one `line` adds.
    output::line(text.strip_suffix('\n').unwrap_or(&text))?;
    Ok(())
}

fn list(args: ListArgs) -> Result<()> {
    let cx = CommandHelper::open()?;
    let labels = match (args.all, label(&cx, args.label)?) {
        (false, Some(label)) => vec![label],
        _ => handoff::labels(&cx.store),
    };
    let mut notes = Vec::new();
    for label in &labels {
        notes.extend(handoff::list(&cx.store, label)?);
    }
    if args.json {
        let rows: Vec<_> = notes
            .iter()
            .map(|n| {
                json!({
                    // `version` was the note's before the schemas; it keeps that meaning.
                    "schema_version": output::JSON_VERSION,
                    "label": n.label,
                    "version": n.version,
                    "at": n.at.map(clock::rfc3339),
                    "title": n.title,
                    "path": n.path.display().to_string(),
                })
            })
            .collect();
        return Ok(output::json(&serde_json::Value::Array(rows))?);
    }
    if notes.is_empty() {
        let whose = match labels.as_slice() {
            [one] => format!("session \"{one}\" has no handoff notes"),
            _ => "no handoff notes".to_string(),
        };
        output::note(format!(
            "{whose}; write one with `git session handoff write FILE` \
             (start from `git session handoff template`)"
        ));
        return Ok(());
    }
    let now = clock::now();
    let rows: Vec<Vec<String>> = notes
        .iter()
        .map(|n| {
            vec![
                n.label.to_string(),
                n.version.to_string(),
                n.at.map_or("-".to_string(), clock::rfc3339),
                n.at.map_or("-".to_string(), |t| output::ago(t, now)),
                shorten(&n.title, 60),
            ]
        })
        .collect();
    output::line(output::table(
        &["LABEL", "VERSION", "WRITTEN", "AGE", "TITLE"],
        &rows,
    ))?;
    Ok(())
}

fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max - 3).collect();
    format!("{}...", cut.trim_end())
}
