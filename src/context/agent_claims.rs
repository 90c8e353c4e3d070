//! Who the calling agent is in git-session terms, and what it owns: the link from an agent
//! session to a git session, the claims its file writes make, and the refusal of a write to a
//! path another live session owns.
//!
//! Invariants a reader must not break:
//! - Paths are made repo-relative against the worktree of the agent's own session (else of the
//!   payload's cwd), never the process's cwd, by [`RepoPath::from_payload`] (the rule the CLI
//!   uses too); a path outside that worktree, or inside `.git`, is neither claimed nor refused.
//! - [`refusal`] only reads: a PreToolUse/BeforeTool call writes nothing but its audit line.
//! - One owned file refuses the whole call: a patch applies all or nothing.
//! - Editing a file the session already holds writes nothing (this is the hot path).

use super::agent::{self, AgentState};
use super::hook::Ctx;
use super::payload::Payload;
use crate::ownership::{Owner, RepoPath};
use crate::session::{self, Label, SessionRecord};
use anyhow::Result;
use serde_json::json;
use std::path::PathBuf;

/// The acting session for the payload's `cwd`, by the one rule the CLI and the guard use too
/// ([`session::acting_label`]): `GIT_SESSION` when set, else the one active session whose
/// worktree is the git worktree containing `cwd`. `None` when that names no recorded session.
pub fn session_for_cwd(ctx: &Ctx) -> Result<Option<SessionRecord>> {
    let Some(repo) = ctx.repo.as_ref() else {
        return Ok(None);
    };
    let records = session::load_all(&ctx.store)?;
    let Some(label) = session::acting_label(repo, &records) else {
        return Ok(None);
    };
    Ok(records.into_iter().find(|r| r.label == label))
}

/// Adds the agent to the session's record and refreshes its activity; returns the record.
pub fn link_session(ctx: &Ctx, label: &Label, id: &str) -> Result<Option<SessionRecord>> {
    let now = ctx.now;
    ctx.store
        .update::<SessionRecord, _>(&SessionRecord::store_path(label), |r| {
            Ok(r.map(|mut r| {
                if !r.agent_sessions.iter().any(|a| a == id) {
                    r.agent_sessions.push(id.to_string());
                }
                if r.last_seen < now {
                    r.last_seen = now;
                }
                r
            }))
        })
}

/// Links the agent to a git session when it has none yet and its cwd changed since the last try.
pub fn maybe_link(ctx: &Ctx, state: &mut AgentState, force: bool) -> Result<()> {
    let cwd = ctx.cwd.display().to_string();
    if ctx.repo.is_none()
        || (!force && (state.label.is_some() || state.link_cwd.as_deref() == Some(&cwd)))
    {
        return Ok(());
    }
    state.link_cwd = Some(cwd);
    if let Some(record) = session_for_cwd(ctx)? {
        state.label = Some(record.label);
    }
    Ok(())
}

/// The worktree a session works in: its record's path when linked, else the cwd's worktree.
fn worktree_root(ctx: &Ctx, label: Option<&Label>) -> Result<Option<PathBuf>> {
    if let Some(label) = label {
        if let Some(r) = session::load(&ctx.store, label)? {
            return Ok(Some(r.path));
        }
    }
    Ok(ctx.repo.as_ref().and_then(|r| r.current_worktree.clone()))
}

/// Claims `file` for the agent's session (its write happened). When another session's claim
/// won the race for it (both writes were allowed before either was recorded), that owner is
/// returned, for the agent to hear in this very call.
pub fn record_claim(
    ctx: &Ctx,
    state: &AgentState,
    file: &str,
) -> Result<Option<(RepoPath, Owner)>> {
    let (Some(repo), Some(label)) = (&ctx.repo, &state.label) else {
        return Ok(None);
    };
    let Some(record) = session::load(&ctx.store, label)? else {
        return Ok(None);
    };
    let Some(rel) = RepoPath::from_payload(file, &ctx.cwd, &record.path) else {
        return Ok(None);
    };
    // Editing a file it already holds changes nothing: no write on this hot path.
    if crate::ownership::holds(&ctx.store, label, &rel)? {
        return Ok(None);
    }
    let refused = crate::ownership::claim(
        repo,
        &ctx.config,
        label,
        std::slice::from_ref(&rel),
        session::ClaimHow::Edit,
    )?;
    let Some(owner) = refused.into_iter().next() else {
        return Ok(None);
    };
    ctx.store.audit(
        "context-claim-lost",
        json!({"path": rel, "session": label, "owner": owner.label}),
    );
    Ok(Some((rel, owner)))
}

/// Where the agent runs, when that is outside the worktree of its linked session and it was not
/// told yet about that directory (recorded in `state`, so it is told once). Reads the session's
/// record only for a linked agent.
pub fn outside(ctx: &Ctx, state: &mut AgentState) -> Result<Option<super::answer::Outside>> {
    let Some(label) = state.label.clone() else {
        return Ok(None);
    };
    let Some(record) = session::load(&ctx.store, &label)? else {
        return Ok(None);
    };
    let own = session::normalize(&record.path);
    let cwd = session::normalize(&ctx.cwd);
    let key = cwd.display().to_string();
    if cwd.starts_with(&own) || state.told_outside.contains(&key) {
        return Ok(None);
    }
    state.told_outside.push(key);
    Ok(Some(super::answer::Outside { label, cwd, own }))
}

/// Records in the audit log that an agent was told it runs outside its worktree.
pub fn audit_outside(ctx: &Ctx, p: &Payload, o: &super::answer::Outside) {
    ctx.store.audit(
        "context-outside-worktree",
        json!({"session": o.label, "cwd": o.cwd, "own": o.own,
               "agent_session": p.session_id, "hook_event": p.event}),
    );
}

/// Who the calling agent is: its session from its state, else from where it stands.
fn who(ctx: &Ctx, p: &Payload) -> Result<Option<Label>> {
    let known = match p.session_id.as_deref().and_then(agent::store_path) {
        Some(rel) => ctx.store.read::<AgentState>(&rel)?.and_then(|s| s.label),
        None => None,
    };
    Ok(match known {
        Some(l) => Some(l),
        None => session_for_cwd(ctx)?.map(|r| r.label),
    })
}

/// The files of a file-writing call that land outside the worktree of the session the agent
/// belongs to, inside the repository ([`super::escape`]): `(escapes, that session)`, never
/// with no escape.
pub fn escape(ctx: &Ctx, p: &Payload) -> Result<Option<(Vec<super::escape::Escape>, Label)>> {
    let files = p.file_paths();
    let (false, Some(repo)) = (files.is_empty(), &ctx.repo) else {
        return Ok(None);
    };
    let Some(me) = who(ctx, p)? else {
        return Ok(None);
    };
    let Some(record) = session::load(&ctx.store, &me)? else {
        return Ok(None);
    };
    let escapes: Vec<_> = files
        .iter()
        .filter_map(|f| super::escape::judge(repo, &record.path, &ctx.cwd, f))
        .collect();
    Ok((!escapes.is_empty()).then_some((escapes, me)))
}

/// The first file of a file-writing call that another live session owns: `(path, owner, this
/// agent's session)`. None for any other call, or when nothing it writes is owned.
pub fn refusal(ctx: &Ctx, p: &Payload) -> Result<Option<(RepoPath, Owner, Option<Label>)>> {
    let files = p.file_paths();
    let (false, Some(repo)) = (files.is_empty(), &ctx.repo) else {
        return Ok(None);
    };
    let me = who(ctx, p)?;
    let Some(root) = worktree_root(ctx, me.as_ref())? else {
        return Ok(None);
    };
    for file in &files {
        let Some(rel) = RepoPath::from_payload(file, &ctx.cwd, &root) else {
            continue;
        };
        if let Some(owner) = crate::ownership::owner_of(repo, &ctx.config, &rel, me.as_deref())? {
            return Ok(Some((rel, owner, me)));
        }
    }
    Ok(None)
}
