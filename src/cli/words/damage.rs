//! The words for a damaged session ([`Damage`]): what `list` and `info` say about it, with the
//! command that repairs it, and its `damage` key in `--json`.

use crate::base::process::{occupants, Occupancy};
use crate::base::quote::shell_quote;
use crate::session::removal::Damage;
use crate::session::{Label, Status};
use serde_json::{json, Value};
use std::path::Path;

/// What is left in the directory: `3 entries (a, b, c)`.
fn left(names: &[String], count: usize) -> String {
    let noun = if count == 1 { "entry" } else { "entries" };
    if names.is_empty() {
        return format!("{count} {noun}");
    }
    let more = if count > names.len() { ", ..." } else { "" };
    format!("{count} {noun} ({}{more})", names.join(", "))
}

/// Why the session is damaged, one clause.
pub fn why(damage: &Damage) -> String {
    match damage {
        Damage::RemovalUnfinished {
            failed: None,
            left: names,
            left_count,
        } => format!(
            "its removal was interrupted; {} left in its directory",
            left(names, *left_count)
        ),
        Damage::RemovalUnfinished {
            failed: Some(reason),
            left: names,
            left_count,
        } => format!(
            "git could not finish its removal ({reason}); {} left in its directory",
            left(names, *left_count)
        ),
        Damage::Unregistered {
            left: names,
            left_count,
            ..
        } => format!(
            "git knows no worktree at its directory (`git status` fails there); {} in it",
            left(names, *left_count)
        ),
    }
}

/// The command that repairs it.
pub fn repair(status: &Status, damage: &Damage) -> String {
    repair_of(&status.record.label, &status.record.path, damage)
}

/// [`repair`] from the session's label and directory.
pub fn repair_of(label: &Label, path: &Path, damage: &Damage) -> String {
    match damage {
        Damage::RemovalUnfinished { .. } => format!("git session cleanup {label}"),
        Damage::Unregistered {
            repairable: true, ..
        } => format!(
            "git worktree repair {} (if it was moved), or git session cleanup --force {label}",
            shell_quote(&path.display().to_string())
        ),
        Damage::Unregistered { .. } => format!("git session cleanup --force {label}"),
    }
}

/// The processes working inside the directory, as `pid 12 (cargo build)`; empty when none or
/// when this platform cannot tell.
fn inside(status: &Status) -> Vec<String> {
    match occupants(&status.record.path) {
        Occupancy::Known(list) => list
            .into_iter()
            .map(|o| format!("pid {} ({})", o.pid, o.command))
            .collect(),
        Occupancy::Unknown(_) => Vec::new(),
    }
}

/// Why, who still works inside, and the repair, for a damaged session (`info`'s line).
pub fn detail(status: &Status) -> Option<String> {
    let damage = status.damage.as_ref()?;
    let who = inside(status);
    let who = if who.is_empty() {
        String::new()
    } else {
        format!("; still working inside: {}", who.join(", "))
    };
    Some(format!(
        "{}{who}; repair: {}",
        why(damage),
        repair(status, damage)
    ))
}

/// The one warning line `list` gives a damaged session.
pub fn line(status: &Status) -> Option<String> {
    Some(format!(
        "session \"{}\" is damaged: {}",
        status.record.label,
        detail(status)?
    ))
}

/// The `damage` key of `list --json` and `info --json`: null, or what, why and the repair.
pub fn json(status: &Status) -> Value {
    let Some(damage) = &status.damage else {
        return Value::Null;
    };
    let (kind, names, count) = match damage {
        Damage::RemovalUnfinished {
            left, left_count, ..
        } => ("removal-unfinished", left, *left_count),
        Damage::Unregistered {
            left, left_count, ..
        } => ("unregistered", left, *left_count),
    };
    json!({
        "kind": kind,
        "why": why(damage),
        "repair": repair(status, damage),
        "left": names,
        "left_count": count,
    })
}
