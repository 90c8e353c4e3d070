//! `git session worktree-hook create|remove`: Claude Code's `WorktreeCreate` and
//! `WorktreeRemove` hooks, so the worktrees Claude Code makes for itself (`claude --worktree`,
//! subagents with `isolation: "worktree"`) are sessions, and leaving one never loses its work.
//!
//! Protocol (Claude Code's hooks reference): both read one JSON object on stdin. `create` gets
//! the worktree's name and must print the worktree's absolute path as the last line of stdout;
//! any non-zero exit fails the creation. `remove` gets `worktree_path` and cannot block. The
//! create payload has had several shapes: the runtime sends `name` (2.1.x); the reference names
//! `worktree_name` with an optional `source_ref` (the revision to start from) and `base_path`;
//! older builds sent `worktree_path`. All are read; `base_path` is not followed, since the
//! session's place is the repository's worktrees directory, and the path printed is the one
//! Claude Code uses.
//!
//! Invariants: `create` is the ordinary transactional `create` (so a failed one leaves nothing);
//! a name that is not a valid label is mapped to one deterministically (the same name always
//! gives the same label, and two names that differ never share one). `remove` removes a session
//! only through the same decision `cleanup` makes without `--force`; otherwise it keeps the
//! worktree and branch and records why in the audit log, where `list`/`prune`/`cleanup` users
//! find the session still there. Its exit status is the truth about the worktree: 0 when it was
//! removed (or was already gone), non-zero when it is still there (kept for its work, not a
//! session, or an error), which makes Claude Code say it was kept rather than removed.

use crate::cli::cleaning::{self, Cleanup};
use crate::cli::helper::CommandHelper;
use crate::cli::output;
use crate::cli::user_error::UserError;
use crate::session::{self, Label};
use anyhow::{Context, Result};
use serde_json::Value;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Claude Code's WorktreeCreate/WorktreeRemove hooks (installed by `context install`)
#[derive(Debug, clap::Args)]
pub struct Args {
    #[arg(value_enum)]
    pub event: Event,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Event {
    /// WorktreeCreate: create a session named after `name`, print its path
    Create,
    /// WorktreeRemove: remove the session at `worktree_path` if nothing would be lost
    Remove,
}

/// The hook's stdin, at most this many bytes (a payload is a few hundred).
const MAX_INPUT: u64 = 1 << 20;

fn read_input() -> Result<Value> {
    let mut text = String::new();
    std::io::stdin()
        .take(MAX_INPUT)
        .read_to_string(&mut text)
        .context("reading the hook's input")?;
    serde_json::from_str(&text).map_err(|e| {
        UserError::usage(format!("the hook's input is not JSON: {e}"))
            .hinted("this command is run by Claude Code's WorktreeCreate/WorktreeRemove hooks")
            .into()
    })
}

fn field<'a>(input: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|k| input.get(*k).and_then(Value::as_str))
        .filter(|s| !s.is_empty())
}

/// Runs the hook in the directory Claude Code names (`cwd`), when it names one.
fn enter_cwd(input: &Value) {
    if let Some(dir) = field(input, &["cwd"]) {
        let _ = std::env::set_current_dir(dir);
    }
}

pub fn run(args: Args) -> Result<()> {
    let input = read_input()?;
    enter_cwd(&input);
    match args.event {
        Event::Create => on_create(&input),
        Event::Remove => on_remove(&input),
    }
}

fn on_create(input: &Value) -> Result<()> {
    let name = field(input, &["name", "worktree_name", "branch_name"])
        .map(str::to_string)
        .or_else(|| {
            field(input, &["worktree_path"])
                .and_then(|p| Path::new(p).file_name())
                .map(|n| n.to_string_lossy().into_owned())
        })
        .ok_or_else(|| {
            UserError::usage("the WorktreeCreate input names no worktree (no `name`)")
                .hinted("Claude Code sends {\"name\": ...} on stdin")
        })?;
    let cx = CommandHelper::open()?;
    // A configuration that does not load refuses before anything else, as `create` would.
    cx.config()?;
    let label = label_for(&name);
    // Claude Code may ask again for a worktree it made before (a resumed session): hand it back.
    if let Some(existing) = session::load(&cx.store, &label)? {
        if existing.path.is_dir() {
            output::line(existing.path.display().to_string())?;
            return Ok(());
        }
    }
    // The revision Claude Code asks to start from, when it names one; checked by `create` like
    // any `--base`, and a bad one fails the creation rather than starting somewhere else.
    let base = field(input, &["source_ref", "base_commit", "base_ref"]).map(str::to_string);
    crate::cli::creating::create(
        &cx,
        crate::cli::creating::Creation {
            label: Some(label.into()),
            base,
            ..Default::default()
        },
    )
}

fn on_remove(input: &Value) -> Result<()> {
    let path = field(input, &["worktree_path", "path"]).ok_or_else(|| {
        UserError::usage("the WorktreeRemove input names no `worktree_path`")
            .hinted("Claude Code sends {\"worktree_path\": ...} on stdin")
    })?;
    let path = PathBuf::from(path);
    let cx = CommandHelper::open()?;
    let (repo, store) = (&cx.repo, &cx.store);
    let want = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
    let records = session::load_all(store)?;
    let Some(record) = records.into_iter().find(|r| {
        !r.attached && std::fs::canonicalize(&r.path).unwrap_or_else(|_| r.path.clone()) == want
    }) else {
        if !path.exists() {
            return Ok(());
        }
        return Err(UserError::refused(format!(
            "{} is no git-session session; left as it is",
            path.display()
        ))
        .into());
    };
    let label = record.label.clone();
    let config = cx.config()?;
    let status = session::inspect(
        &repo.common_dir,
        record.clone(),
        config,
        crate::base::clock::now(),
    )?;
    let reasons = cleaning::blockers(repo, &status);
    let summaries: Vec<String> = crate::hazards::inspect(repo, &status)
        .items
        .iter()
        .map(crate::cli::words::hazards::summary)
        .collect();
    // The same decision `cleanup` makes without --force, made by cleanup itself.
    let outcome = cleaning::cleanup(
        &cx,
        Cleanup {
            labels: vec![label.to_string()],
            yes: true,
            ..Default::default()
        },
    );
    if let Err(e) = outcome {
        let reason = format!("{e:#}");
        store.audit(
            "agent-worktree-kept",
            serde_json::json!({"label": label, "path": record.path.display().to_string(),
                               "reason": reason, "reasons": reasons}),
        );
        let why = if summaries.is_empty() {
            vec![reason.clone()]
        } else {
            summaries
        };
        let marked = store.update::<session::SessionRecord, _>(
            &session::SessionRecord::store_path(&label),
            |r| {
                Ok(r.map(|mut r| {
                    r.kept = Some(session::Kept {
                        at: crate::base::clock::now(),
                        reasons: why.clone(),
                    });
                    r
                }))
            },
        );
        if let Err(e) = marked {
            output::warn(format!("could not mark session \"{label}\" as kept: {e:#}"));
        }
        output::note(format!(
            "kept session \"{label}\" ({}): the agent's worktree holds work; \
             see `git session info {label}`, then `git session cleanup {label}`",
            record.path.display()
        ));
        return Err(e);
    }
    // Removed as `cleanup` removes: its port block leaves the claims remote too.
    cleaning::withdraw_shared_ports(&cx)
}

/// A valid session label for any name: the name itself when it is one; otherwise the name with
/// every character outside `A-Z a-z 0-9 . _ -` turned into `-` (trimmed, shortened), plus eight
/// hex digits of a hash of the whole name, so two names never meet in one label.
pub fn label_for(name: &str) -> Label {
    if let Ok(label) = Label::new(name) {
        return label;
    }
    let mut clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    while clean.contains("--") {
        clean = clean.replace("--", "-");
    }
    let clean: String = clean
        .trim_matches('-')
        .chars()
        .take(48)
        .collect::<String>()
        .trim_end_matches('-')
        .to_string();
    let hash = crate::base::hash::fnv1a_32(name.as_bytes());
    let mapped = if clean.is_empty() {
        format!("agent-{hash:08x}")
    } else {
        format!("{clean}-{hash:08x}")
    };
    Label::from_string(mapped).unwrap_or_else(|_| {
        Label::from_string(format!("agent-{hash:08x}")).expect("agent-<hex> is a label")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_names_are_kept_and_others_mapped_deterministically() {
        assert_eq!(label_for("feature-auth"), "feature-auth");
        for name in [
            "a b", "../../x", "x.lock", "HEAD", "", "-rf", "é", "a..b", "@",
        ] {
            // A `Label` is valid by construction; what is left to check is that the mapping
            // is stable and the result is a label in its own right.
            let l = label_for(name);
            assert!(Label::new(&l).is_ok(), "{name:?} -> {l}");
            assert_eq!(l, label_for(name), "deterministic");
        }
        assert_ne!(label_for("a b"), label_for("a/b"));
        let long = "y ".repeat(200);
        assert!(label_for(&long).len() <= 64);
    }
}
