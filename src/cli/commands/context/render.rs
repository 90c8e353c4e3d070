//! What the hook says back: the wording of alerts, identity and refusals, and each agent's
//! answer shape. The domain decides the [`Answer`]; [`render`] words it, once per call.
//!
//! Answer shapes, with only keys each agent's published schema accepts (Codex rejects unknown
//! keys; its generated output schemas set `additionalProperties: false`):
//! - Claude Code and Codex: `hookSpecificOutput {hookEventName, additionalContext}` plus a
//!   top-level `systemMessage` for an alert; a refusal is `hookSpecificOutput {hookEventName:
//!   "PreToolUse", permissionDecision: "deny", permissionDecisionReason}`.
//! - Gemini CLI: the same `hookSpecificOutput {hookEventName, additionalContext}` and
//!   `systemMessage` for AfterTool, BeforeAgent and SessionStart; a refusal is the top-level
//!   `{decision: "deny", reason}` its BeforeTool reads (the reason goes to the model as the
//!   tool's error).
//!
//! - GitHub Copilot CLI (camelCase events): a top-level `additionalContext` for sessionStart,
//!   userPromptSubmitted and postToolUse (it ignores `hookSpecificOutput` and shows no
//!   `systemMessage`); a refusal is the top-level `{permissionDecision: "deny",
//!   permissionDecisionReason}` its preToolUse reads (the reason reaches the model).
//!
//! Wording invariants: alerts and identity are stated as facts, never orders (Claude Code's docs
//! warn that imperative additionalContext can trip its prompt-injection defences); every text
//! the agent reads stays under [`MAX_CONTEXT_CHARS`]; a refusal names the owner and says what the
//! agent can actually do.

use crate::base::clock;
use crate::config::Threshold;
use crate::context::agents::{Agent, ContextShape, DenyShape};
use crate::context::answer::{Answer, Deny, Identity};
use crate::context::budget;
use crate::ownership::Owner;
use crate::session::SessionRecord;
use serde_json::{json, Value};

/// additionalContext stays under Claude Code's 10 000-character cap.
pub const MAX_CONTEXT_CHARS: usize = 9_500;

/// The JSON the hook prints for `answer`, in the calling agent's shape.
pub fn render(answer: &Answer) -> Value {
    match answer {
        Answer::Identity(i) => additional_context(&i.event, &identity_with_handoff(i)),
        Answer::Alert(a) => alert(
            &a.event,
            &alert_text(&a.threshold, a.tokens, &a.budget, a.share),
            system_message(&a.threshold, &a.budget, a.share),
        ),
        Answer::Deny(Deny { kind, rel, owner }) => deny(*kind, deny_reason(rel, owner)),
        Answer::Escape(e) if e.refused => deny(e.kind, escape_text(e)),
        Answer::Escape(e) => additional_context(&e.event, &escape_text(e)),
        Answer::Told(t) => {
            let mut text = Vec::new();
            let mut message = Vec::new();
            if let Some(o) = &t.outside {
                text.push(outside_text(o));
                message.push(format!(
                    "git-session: this agent runs in {}, outside the worktree of its session \
                     \"{}\".",
                    o.cwd.display(),
                    o.label
                ));
            }
            if let Some((rel, owner)) = &t.lost {
                text.push(lost_text(rel, owner));
                message.push(format!(
                    "git-session: this agent's write of {rel} lost the race for it: session \
                     \"{}\" claimed it first.",
                    owner.label
                ));
            }
            if let Some(a) = &t.alert {
                text.push(alert_text(&a.threshold, a.tokens, &a.budget, a.share));
                message.push(system_message(&a.threshold, &a.budget, a.share));
            }
            alert(&t.event, &text.join("\n\n"), message.join(" "))
        }
    }
}

/// What an agent writing outside its own worktree is told (refused, or warned).
fn escape_text(e: &crate::context::answer::EscapeAnswer) -> String {
    use crate::context::escape::Into;
    let x = &e.escape;
    let place = match &x.into {
        Into::Worktree { root, main: true } => format!("the main worktree ({})", root.display()),
        Into::Worktree { root, main: false } => {
            format!("another session's worktree ({})", root.display())
        }
        Into::GitDir => "the repository's git directory, which is git's own".to_string(),
    };
    let then = match (&x.into, &x.instead) {
        (Into::GitDir, _) => " Change git's state with git commands run in your own worktree, \
                               never by writing its files."
            .to_string(),
        (_, Some(instead)) => format!(
            " Make the change in your own worktree instead: {}.",
            instead.display()
        ),
        _ => String::new(),
    };
    if e.refused {
        format!(
            "git-session: this agent works in the session \"{}\", whose worktree is {}. {} \
             is in {place}, so this write was refused: an agent stays in its own worktree, \
             where its session's commits are made; the files of another worktree belong to \
             whoever works there.{then}",
            e.label,
            x.own.display(),
            x.target.display(),
        )
    } else {
        format!(
            "git-session: note: {} is in {place}, outside the worktree of this agent's session \
             \"{}\" ({}). The write goes through (this repository's `[guard] escape` is \
             \"warn\"), but the change lands where someone else works, not in this session's \
             commits.{then}",
            x.target.display(),
            e.label,
            x.own.display(),
        )
    }
}

/// What an agent whose write lost the race for its path is told, in that same call.
fn lost_text(rel: &str, owner: &Owner) -> String {
    format!(
        "git-session: your write of \"{rel}\" went through, but the live session \"{}\" \
         (branch {}) claimed that path a moment before you did ({} claim since {}), so it is \
         not yours: a commit of it from this session will be refused. What works now: undo your \
         change to that file (restore it with `git checkout -- {rel}`, or delete it if you \
         created it) and carry on with files no other session owns, or coordinate with session \
         \"{}\" (it can run `git session release {rel}`).",
        owner.label,
        branch_shown(owner),
        owner.how.as_str(),
        clock::rfc3339(owner.since),
        owner.label,
    )
}

/// What an agent running outside its session's worktree is told (once per directory).
fn outside_text(o: &crate::context::answer::Outside) -> String {
    format!(
        "git-session: this agent belongs to the session \"{}\", whose worktree is {}, but it \
         runs in {}, outside that worktree. Its file writes into another worktree of this \
         repository are refused, and its commits there are refused too. Work in its own \
         worktree: `cd {}` before anything else.",
        o.label,
        o.own.display(),
        o.cwd.display(),
        o.own.display(),
    )
}

/// SessionStart's text: the identity, then the latest handoff note as far as it fits.
fn identity_with_handoff(i: &Identity) -> String {
    let mut text = identity(&i.record, &i.claims, &i.agent_session);
    if let Some(off) = &i.guard_off {
        text.push_str(&format!(
            "\nBut the ownership guard does NOT run for commits made here ({off}), so a commit \
             over a path another live session owns is not refused; writes through your file \
             tools still are. Tell the user: {}",
            crate::cli::words::hooks_off::fix(off, &i.record.path, false)
        ));
    }
    if let Some(o) = &i.outside {
        text.push('\n');
        text.push_str(&outside_text(o));
    }
    if let Some(h) = &i.handoff {
        let head = format!(
            "\n\nLatest handoff note for this session (#{}, `git session handoff show`):\n",
            h.number
        );
        text.push_str(&head);
        let room = MAX_CONTEXT_CHARS.saturating_sub(text.chars().count() + 80);
        if h.note.chars().count() > room {
            text.extend(h.note.chars().take(room));
            text.push_str("\n[... truncated; read it whole with `git session handoff show`]");
        } else {
            text.push_str(h.note.trim_end());
        }
    }
    text
}

/// Who the agent is, as facts (`claims`: the session's, from its claims file).
fn identity(
    record: &SessionRecord,
    claims: &[crate::session::Claim],
    agent_session: &str,
) -> String {
    let mut lines = vec![
        format!(
            "git-session: this agent works in the git session \"{}\".",
            record.label
        ),
        format!("- label: {}", record.label),
        format!(
            "- branch: {}",
            if record.branch.is_empty() {
                "(detached HEAD)"
            } else {
                &record.branch
            }
        ),
        format!("- worktree: {}", record.path.display()),
        format!("- base: {}", record.base),
        format!("- your agent session id: {agent_session}"),
    ];
    if claims.is_empty() {
        lines.push("- claims: none".to_string());
    } else {
        let shown: Vec<String> = claims
            .iter()
            .take(50)
            .map(|c| format!("{} ({})", c.path, c.how.as_str()))
            .collect();
        let more = claims.len().saturating_sub(50);
        let mut claims = format!("- claims: {}", shown.join(", "));
        if more > 0 {
            claims.push_str(&format!(" and {more} more (`git session claims`)"));
        }
        lines.push(claims);
    }
    if record.attached {
        lines.push(format!(
            "- attached: this worktree is shared; commits count for this session only with \
             GIT_SESSION={} set",
            record.label
        ));
    }
    lines.push(
        "Work and commit in this worktree. Files you write are claimed for this session; \
         paths other live sessions own are refused."
            .to_string(),
    );
    lines.join("\n")
}

/// Text for the model, where the agent that sends `event` reads it (an event name several
/// agents share takes the shape they share).
fn additional_context(event: &str, text: &str) -> Value {
    match Agent::only_sender(event).map(|a| a.facts().context) {
        Some(ContextShape::TopLevel) => json!({"additionalContext": text}),
        _ => json!({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}),
    }
}

/// `182,000`.
pub fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The alert text for a threshold: its configured message with the placeholders filled in,
/// then the numbers as facts.
fn alert_text(t: &Threshold, tokens: u64, b: &budget::Budget, share: f64) -> String {
    let message = t
        .message
        .as_deref()
        .unwrap_or_else(|| default_message(t.percent))
        .replace("{percent}", &format!("{}", share.floor() as u64))
        .replace("{tokens}", &group(tokens))
        .replace("{window}", &group(b.window))
        .replace("{budget}", &group(b.budget));
    let mut text = format!(
        "{message}\n(git-session context hook: {} tokens are in context, {}% of the {} at which \
         this agent compacts (from {}); the window is {} tokens (from {}). This alert fires once \
         per agent session.)",
        group(tokens),
        share.floor() as u64,
        group(b.budget),
        b.budget_source,
        group(b.window),
        b.window_source,
    );
    if text.chars().count() > MAX_CONTEXT_CHARS {
        text = text.chars().take(MAX_CONTEXT_CHARS).collect();
    }
    text
}

/// One short line for the person watching.
fn system_message(t: &Threshold, b: &budget::Budget, share: f64) -> String {
    format!(
        "git-session: context at {}% of the compaction point ({} tokens); the {}% alert went \
         to the agent.",
        share.floor() as u64,
        group(b.budget),
        t.percent
    )
}

/// An alert for `event`, in the calling agent's shape (the same for all three).
fn alert(event: &str, text: &str, message: String) -> Value {
    let mut v = additional_context(event, text);
    v["systemMessage"] = Value::String(message);
    v
}

/// The owner's branch as the agent reads it.
fn branch_shown(owner: &Owner) -> &str {
    if owner.branch.is_empty() {
        "(detached)"
    } else {
        &owner.branch
    }
}

/// Why a write of `rel` was refused, and what works instead.
fn deny_reason(rel: &str, owner: &Owner) -> String {
    format!(
        "git-session: \"{rel}\" is owned by the live session \"{}\" (branch {}, {} claim \
         since {}, last activity {}), so this session's write of it was refused. What works: \
         files no other session owns; asking that session to run `git session release {rel}`; \
         or, if this agent is that session, running with GIT_SESSION={}.",
        owner.label,
        branch_shown(owner),
        owner.how.as_str(),
        clock::rfc3339(owner.since),
        clock::rfc3339(owner.last_activity),
        owner.label,
    )
}

/// A refusal of a tool call, in the calling agent's shape.
fn deny(kind: Agent, reason: String) -> Value {
    match kind.facts().deny {
        DenyShape::Decision => json!({"decision": "deny", "reason": reason}),
        DenyShape::TopLevelPermission => json!({
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }),
        DenyShape::PermissionDecision => json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }}),
    }
}

/// The built-in words of a threshold (70, 90 and 95 % have their own; any other percentage the
/// configuration names gets the plain fact), with the placeholders [`alert_text`] fills in.
pub fn default_message(percent: f64) -> &'static str {
    if percent == 70.0 {
        "Context awareness: the context is at {percent}% of the point where this agent compacts \
         ({tokens} of {budget} tokens). Work that fits before 90 % can finish in this context; \
         large new tasks may not."
    } else if percent == 90.0 {
        "HANDOFF MODE: the context is at {percent}% of the point where this agent compacts \
         ({tokens} of {budget} tokens). From here this session is in handoff mode: work stops at \
         the next safe point (nothing uncommitted, no subagent in flight, no question pending) \
         and new work belongs to the fresh session. The wrap-up is: commit, update memory and \
         status, write the kickoff note (git session handoff write), then record it with `git \
         session context wrapped-up`."
    } else if percent == 95.0 {
        "EMERGENCY: the context is at {percent}% of the point where this agent compacts \
         ({tokens} of {budget} tokens); compaction is imminent. Only the tier-1 wrap-up fits: \
         commit, update memory and status, the kickoff note with In-Flight State and Deferred \
         Items (git session handoff write), then `git session context wrapped-up --scope \
         essential`. Everything else is deferred to the fresh session."
    } else {
        "The context is at {percent}% of the point where this agent compacts ({tokens} of \
         {budget} tokens)."
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouping() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(182_000), "182,000");
        assert_eq!(group(1_000_000), "1,000,000");
    }
}
