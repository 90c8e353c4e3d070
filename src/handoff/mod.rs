//! Handoff (kickoff) notes: what one agent session leaves for the next one in the same worktree.
//!
//! Layout: `handoffs/<label>/<n>.md` in the store, `n` = 1, 2, ... The context hook injects the
//! latest note ([`latest`]) into the next agent session started in that session's worktree.
//!
//! Invariants a reader must not break:
//! - A note is written once, through [`Store::create_file`], and never overwritten or edited: a
//!   new note is a new version. Two writers racing for the same number both succeed; the loser
//!   takes the next free number.
//! - The content is byte for byte what the user wrote; nothing is added to it. A note's time is
//!   its file's mtime, set to [`clock::now`] when it is written, so a pinned clock pins it too.
//! - A path of a note is formed only from a [`Label`], so it never leaves `handoffs/`.
//! - Only files named `<n>.md`, `n` a positive decimal without leading zeros, are versions; locks
//!   and anything else in the directory are ignored.

use crate::base::clock::{self, Time};
use crate::session::Label;
use crate::store::Store;
use anyhow::{Context, Result};
use std::path::PathBuf;

/// What `git session handoff template` prints. The section names are the ones the context
/// alerts refer to (the 95 % alert asks for "In-Flight State and Deferred Items").
pub const TEMPLATE: &str = "\
# Handoff: <one line: what this session is doing>

## Goal
<!-- The outcome this session exists for, and how to tell that it is reached. -->

## Done
<!-- What is finished and committed: commits, files, decisions made. -->

## In-Flight State
<!-- What is half-done right now: uncommitted edits, running jobs or subagents, the exact step
     you were on, anything that only exists in this conversation. -->

## Deferred Items
<!-- Work deliberately left for later (including wrap-up steps skipped under context pressure),
     and why. -->

## Next Steps
<!-- The first things the next session should do, in order. -->

## Open Questions
<!-- Decisions waiting on someone, and on whom. -->
";

/// One stored version of a session's note.
#[derive(Debug, Clone)]
pub struct Note {
    pub label: Label,
    pub version: u32,
    /// When it was written (its file's mtime); `None` when that cannot be read.
    pub at: Option<Time>,
    /// Its first line of content, without markdown heading marks.
    pub title: String,
    pub path: PathBuf,
}

/// The store-relative directory holding a session's notes.
pub fn dir(label: &Label) -> String {
    format!("handoffs/{}", label.file_name())
}

/// The store-relative path of one version.
pub fn rel_path(label: &Label, version: u32) -> String {
    format!("handoffs/{}/{version}.md", label.file_name())
}

/// The versions stored for `label`, ascending.
pub fn versions(store: &Store, label: &Label) -> Result<Vec<u32>> {
    let path = store.path(&dir(label));
    let entries = match std::fs::read_dir(&path) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let mut out: Vec<u32> = entries
        .flatten()
        .filter_map(|e| parse_version(e.file_name().to_str()?))
        .collect();
    out.sort_unstable();
    Ok(out)
}

fn parse_version(name: &str) -> Option<u32> {
    let digits = name.strip_suffix(".md")?;
    if digits.is_empty() || digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The text of one version, or `None` when it does not exist. Bytes that are not UTF-8 (a file
/// someone put there by hand) are replaced rather than failing the reader.
pub fn read(store: &Store, label: &Label, version: u32) -> Result<Option<String>> {
    let path = store.checked(&rel_path(label, version))?;
    // The store's one reader: a FIFO, symlink or huge file there is passed over with a warning
    // (notes are never set aside or overwritten: they are the user's words).
    match crate::store::read_state_bytes(&path, crate::store::MAX_STATE_FILE)? {
        crate::store::StateBytes::Bytes(bytes, _) => {
            Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
        }
        crate::store::StateBytes::Absent => Ok(None),
        crate::store::StateBytes::Bad(why) => {
            crate::base::announce::emit(crate::base::announce::Announcement::FileSkipped {
                path,
                why,
            });
            Ok(None)
        }
    }
}

/// The newest note of a session: its version and text. This is what the context hook injects at
/// SessionStart.
pub fn latest(store: &Store, label: &Label) -> Result<Option<(u32, String)>> {
    // Newest first; a version that vanished since the directory was read (its session was just
    // cleaned up) falls through to the one before it.
    for version in versions(store, label)?.into_iter().rev() {
        if let Some(text) = read(store, label, version)? {
            return Ok(Some((version, text)));
        }
    }
    Ok(None)
}

/// Stores `text` as the next version of `label`'s note and returns that version and its file.
/// The caller checks the content first ([`check_content`]).
pub fn write(store: &Store, label: &Label, text: &str) -> Result<(u32, PathBuf)> {
    let next_free = |store: &Store| -> Result<u32> {
        Ok(versions(store, label)?
            .last()
            .map_or(1, |v| v.saturating_add(1)))
    };
    let mut version = next_free(store)?;
    // Each lost race means another writer stored a version meanwhile; a bound keeps a directory
    // that refuses every create (or a u32 at its end) from looping forever.
    for _ in 0..1000 {
        let rel = rel_path(label, version);
        if store.create_file(&rel, text.as_bytes())? {
            let path = store.path(&rel);
            stamp(&path, clock::now());
            return Ok((version, path));
        }
        version = next_free(store)?.max(version.saturating_add(1));
    }
    anyhow::bail!(
        "could not find a free version number for the handoff note of \"{label}\" in {}",
        store.path(&dir(label)).display()
    )
}

/// Sets a freshly written note's mtime to the command's clock, which is what `list` shows. Only
/// the display depends on it, so a filesystem that refuses is not worth failing the write over.
fn stamp(path: &std::path::Path, at: Time) {
    if let Ok(file) = std::fs::File::options().write(true).open(path) {
        let _ = file.set_modified(std::time::SystemTime::from(at));
    }
}

/// Every stored version of `label`'s note, ascending.
pub fn list(store: &Store, label: &Label) -> Result<Vec<Note>> {
    let mut out = Vec::new();
    for version in versions(store, label)? {
        let path = store.path(&rel_path(label, version));
        let Some(text) = read(store, label, version)? else {
            continue;
        };
        out.push(Note {
            label: label.clone(),
            version,
            at: clock::mtime(&path),
            title: title(&text),
            path,
        });
    }
    Ok(out)
}

/// Labels that have at least one note directory, sorted; names that are not valid labels are
/// skipped (they cannot have been written by this tool).
pub fn labels(store: &Store) -> Vec<Label> {
    let Ok(entries) = std::fs::read_dir(store.path("handoffs")) else {
        return Vec::new();
    };
    let mut out: Vec<Label> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter_map(|name| Label::from_file_name(&name).ok())
        .collect();
    out.sort();
    out
}

/// The first line of content: HTML comments and blank lines skipped, heading marks removed.
pub fn title(text: &str) -> String {
    content_lines(text)
        .next()
        .map(|line| line.trim_start_matches('#').trim().to_string())
        .unwrap_or_default()
}

/// The non-blank lines of a note with its `<!-- -->` comments cut out, trimmed.
fn content_lines(text: &str) -> impl Iterator<Item = String> + '_ {
    let mut in_comment = false;
    text.lines().filter_map(move |line| {
        let mut rest = line;
        let mut kept = String::new();
        loop {
            if in_comment {
                match rest.find("-->") {
                    Some(end) => {
                        rest = &rest[end + 3..];
                        in_comment = false;
                    }
                    None => break,
                }
            } else {
                match rest.find("<!--") {
                    Some(start) => {
                        kept.push_str(&rest[..start]);
                        rest = &rest[start + 4..];
                        in_comment = true;
                    }
                    None => {
                        kept.push_str(rest);
                        break;
                    }
                }
            }
        }
        let kept = kept.trim();
        (!kept.is_empty()).then(|| kept.to_string())
    })
}

/// A handoff note that says nothing; the command line words it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmptyNote {
    Blank,
    OnlyHeadings,
}

impl std::fmt::Display for EmptyNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            EmptyNote::Blank => "the handoff note is empty",
            EmptyNote::OnlyHeadings => "the handoff note has only headings and comments",
        })
    }
}

impl std::error::Error for EmptyNote {}

/// Refuses a note that says nothing: empty, blank, or only headings and comments (the template
/// as printed, not yet filled in).
pub fn check_content(text: &str) -> Result<(), EmptyNote> {
    if text.trim().is_empty() {
        return Err(EmptyNote::Blank);
    }
    if !content_lines(text).any(|line| !line.starts_with('#')) {
        return Err(EmptyNote::OnlyHeadings);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_names() {
        assert_eq!(parse_version("1.md"), Some(1));
        assert_eq!(parse_version("12.md"), Some(12));
        for bad in [
            "0.md",
            "01.md",
            ".md",
            "1.md.lock",
            "1.txt",
            "x.md",
            "-1.md",
            "1 .md",
        ] {
            assert_eq!(parse_version(bad), None, "{bad}");
        }
    }

    #[test]
    fn titles_skip_comments_and_heading_marks() {
        assert_eq!(
            title("\n<!-- x\n y -->\n\n## Fix the login  \nbody"),
            "Fix the login"
        );
        assert_eq!(title("plain first line\n# later"), "plain first line");
        assert_eq!(title("  \n"), "");
    }

    #[test]
    fn template_alone_is_refused_and_filled_template_is_not() {
        assert!(check_content(TEMPLATE).is_err());
        assert!(check_content(" \n\t\n").is_err());
        let filled = TEMPLATE.replace("## Goal\n", "## Goal\nLogin works with SSO.\n");
        assert!(check_content(&filled).is_ok());
    }

    #[test]
    fn latest_is_the_highest_version_and_nothing_is_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path());
        let s1 = Label::new("s1").unwrap();
        assert_eq!(latest(&store, &s1).unwrap(), None);
        assert_eq!(write(&store, &s1, "one\n").unwrap().0, 1);
        assert_eq!(write(&store, &s1, "two\n").unwrap().0, 2);
        // Versions are numbers, not strings: 10 sorts after 9.
        for n in 3..=10 {
            write(&store, &s1, &format!("note {n}\n")).unwrap();
        }
        assert_eq!(
            latest(&store, &s1).unwrap(),
            Some((10, "note 10\n".to_string()))
        );
        assert_eq!(read(&store, &s1, 1).unwrap().as_deref(), Some("one\n"));
        // "../s1" cannot even be asked for: there is no `Label` for it.
        assert!(Label::new("../s1").is_err());
        assert_eq!(labels(&store), vec![s1]);
    }
}
