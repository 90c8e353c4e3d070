//! Replays: a transcript grows one tool call at a time as the agent writes it, and the real hook
//! answers each call; alerts must arrive before the compaction the transcript records.

mod common;
mod context_support;
use common::TestRepo;
use context_support::*;
use serde_json::{json, Value};

// 8. Replay: a transcript grows one tool call at a time up to the automatic compaction it
// records; HANDOFF arrives after 75 % and before 100 % of that compaction point, on the default
// budget, on an autoCompactWindow from the settings, and on a 1M model.
#[test]
fn replay_handoff_arrives_before_the_recorded_compaction() {
    let repo = TestRepo::new();
    let wt = repo.create("replay");
    // (agent, model, settings, compaction point the transcript records)
    let cases: [(&str, &str, Option<&str>, u64); 3] = [
        ("r-default", "claude-sonnet-4-5-20250929", None, 167_000),
        // Before the settings case: an observed point is remembered per model.
        ("r-1m", "claude-opus-4-7", None, 967_000),
        (
            "r-settings",
            "claude-opus-4-7",
            Some(r#"{"autoCompactWindow": 400000}"#),
            367_000,
        ),
    ];
    for (agent, model, settings, point) in cases {
        match settings {
            Some(s) => repo.write(".claude/settings.local.json", s),
            None => {
                let _ = std::fs::remove_file(repo.root.join(".claude/settings.local.json"));
            }
        }
        let path = repo.base().join(format!("{agent}.jsonl"));
        let mut handoff_at = None;
        let mut tokens = 20_000;
        let mut step = 0;
        while tokens < point {
            step += 1;
            let id = format!("{agent}-{step}");
            let mut record: Value = serde_json::from_str(&assistant(tokens, &id)).unwrap();
            record["message"]["model"] = json!(model);
            append(&path, &[record.to_string()]);
            let mut p = post_tool_use(agent, &repo.root, &path);
            p["model"] = json!(model);
            let run = hook(
                &repo,
                &p,
                &[("CLAUDE_PROJECT_DIR", repo.root.to_str().unwrap())],
            );
            if let Some(v) = answer(&run, "PostToolUse") {
                let text = v["hookSpecificOutput"]["additionalContext"]
                    .as_str()
                    .unwrap();
                assert!(v["systemMessage"].as_str().unwrap().len() < 200);
                if text.starts_with("HANDOFF MODE") && handoff_at.is_none() {
                    handoff_at = Some(tokens);
                }
            }
            tokens += 7_919;
        }
        let at = handoff_at.unwrap_or_else(|| panic!("{agent}: no HANDOFF before compaction"));
        assert!(
            at * 100 > point * 75 && at < point,
            "{agent}: HANDOFF at {at}, compaction at {point}"
        );
        // The compaction itself, recorded as Claude Code does, then PostCompact.
        let boundary = json!({"type": "system", "subtype": "compact_boundary", "isSidechain": false,
            "content": "Conversation compacted", "compactMetadata":
            {"trigger": "auto", "preTokens": point, "postTokens": 12_000}});
        append(&path, &[boundary.to_string()]);
        let post = json!({"session_id": agent, "transcript_path": path, "cwd": wt,
                          "hook_event_name": "PostCompact", "trigger": "auto",
                          "compact_summary": "..."});
        assert_eq!(hook(&repo, &post, &[]).stdout, "");
        let v = status_json(&repo, &repo.root, &["--agent-session", agent], &[]);
        assert_eq!(v["compactions"], 1, "{agent}");
        assert_eq!(v["fired"], json!([]), "{agent}");
    }
    let _ = std::fs::remove_file(repo.root.join(".claude/settings.local.json"));
    // The observed point is remembered per model and becomes the budget for the next agent.
    let path = transcript(&repo.base(), "after", 100_000);
    hook(&repo, &post_tool_use("r-next", &repo.root, &path), &[]);
    let v = status_json(&repo, &repo.root, &["--agent-session", "r-next"], &[]);
    assert_eq!(
        (v["budget"].clone(), v["budget_source"].clone()),
        (json!(167_000), json!("observed"))
    );
}

// 9. Subagents never spend an alert; UserPromptSubmit delivers it; a sidechain compaction is
// not the main agent's.
#[test]
fn subagents_spend_no_alert_and_prompts_deliver_it() {
    let repo = TestRepo::new();
    let wt = repo.create("sub");
    let at75 = transcript(&repo.base(), "s75", 125_250);
    let agent = "main-agent-1";
    let mut sub = post_tool_use(agent, &wt, &at75);
    sub["agent_id"] = json!("a1b2c3");
    sub["agent_type"] = json!("Explore");
    for _ in 0..3 {
        assert_eq!(
            hook(&repo, &sub, &[]).stdout,
            "",
            "a subagent's call stays silent"
        );
    }
    let prompt = json!({"session_id": agent, "transcript_path": at75, "cwd": wt,
                        "hook_event_name": "UserPromptSubmit", "prompt": "next?",
                        "permission_mode": "default"});
    let v = answer(&hook(&repo, &prompt, &[]), "UserPromptSubmit").expect("the 70 % alert");
    assert!(v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .starts_with("Context awareness"));
    assert!(hook(&repo, &prompt, &[]).stdout.is_empty(), "once only");
    // A subagent's PostCompact changes nothing for the main agent.
    let mut pc = json!({"session_id": agent, "transcript_path": at75, "cwd": wt,
                        "hook_event_name": "PostCompact", "trigger": "auto"});
    pc["agent_id"] = json!("a1b2c3");
    hook(&repo, &pc, &[]);
    let v = status_json(&repo, &wt, &["--agent-session", agent], &[]);
    assert_eq!(
        (v["fired"].clone(), v["compactions"].clone()),
        (json!([70]), json!(0))
    );
    // A sidechain compact_boundary after the main record does not hide the main fill.
    let side = json!({"type": "system", "subtype": "compact_boundary", "isSidechain": true,
                      "compactMetadata": {"trigger": "auto", "preTokens": 90_000}});
    append(&at75, &[side.to_string()]);
    let v = status_json(&repo, &wt, &["--transcript", at75.to_str().unwrap()], &[]);
    assert_eq!(v["tokens"], 125_250);
}
