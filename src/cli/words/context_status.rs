//! The words for `context status` and `context wrapped-up` when they cannot answer
//! ([`StatusError`]): the message is the error's own line, the hint says what to name or run.

use crate::cli::user_error::UserError;
use crate::context::agent_status::StatusError;

pub fn words(e: &StatusError) -> UserError {
    let hint = match e {
        StatusError::NoRepository => {
            "name one: --agent-session ID (or --transcript PATH for status)"
        }
        StatusError::NoSessionHere => {
            "name one: --agent-session ID, or run this in a session's worktree"
        }
        StatusError::NoAgentLinked { .. } => {
            "the context hook links one at SessionStart (git session context install); or name \
             one with --agent-session ID"
        }
        StatusError::UnreadableTranscript { .. } => {
            "name a Claude Code transcript (.jsonl) or a Codex rollout file"
        }
        StatusError::UnknownAgent { .. } => {
            "the context hook records agent sessions it has seen; try --transcript PATH"
        }
        StatusError::UnknownAgentToWrapUp { .. } => {
            "`git session info` lists the agent sessions linked to a session"
        }
        StatusError::PayloadNamesNothing => {
            "pipe a hook or statusline payload with session_id and transcript_path"
        }
        StatusError::AgentDisappeared { .. } => return UserError::refused(e.to_string()),
    };
    UserError::refused(e.to_string()).hinted(hint)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(e: StatusError) -> String {
        let u = words(&e);
        let hint = u.hint.map(|h| format!(" | {h}")).unwrap_or_default();
        format!("{}{hint}", u.message)
    }

    #[test]
    fn every_variant_keeps_its_words() {
        let id = |s: &str| s.to_string();
        insta::assert_snapshot!(
            [
                shown(StatusError::NoRepository),
                shown(StatusError::NoSessionHere),
                shown(StatusError::NoAgentLinked { label: id("fix-x") }),
                shown(StatusError::UnreadableTranscript {
                    path: "/t/a.jsonl".into(),
                    why: id("No such file or directory (os error 2)"),
                }),
                shown(StatusError::UnknownAgent { id: id("a\"b") }),
                shown(StatusError::UnknownAgentToWrapUp { id: id("ab") }),
                shown(StatusError::PayloadNamesNothing),
                shown(StatusError::AgentDisappeared { id: id("ab") }),
            ]
            .join("\n"),
            @r###"
        not inside a git repository, and no agent session named | name one: --agent-session ID (or --transcript PATH for status)
        no session here, and no agent session named | name one: --agent-session ID, or run this in a session's worktree
        no agent session is linked to session "fix-x" yet | the context hook links one at SessionStart (git session context install); or name one with --agent-session ID
        cannot read the transcript /t/a.jsonl: No such file or directory (os error 2) | name a Claude Code transcript (.jsonl) or a Codex rollout file
        no agent session "a\"b" in the store | the context hook records agent sessions it has seen; try --transcript PATH
        no agent session "ab" in the store | `git session info` lists the agent sessions linked to a session
        the payload on stdin names no known agent session and no transcript | pipe a hook or statusline payload with session_id and transcript_path
        the agent session "ab" disappeared from the store
        "###
        );
    }
}
