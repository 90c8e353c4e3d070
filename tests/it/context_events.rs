//! What real agents send, in the order they send it: one compaction's events in any order,
//! the compaction point learned from the record written after its hooks, a transcript that
//! does not exist yet (issue 18, items 1, 2 and 8).

use crate::common;
use crate::context_support;
use common::TestRepo;
use context_support::*;
use serde_json::{json, Value};
use std::path::Path;

pub(crate) const MODEL: &str = "claude-sonnet-4-5-20250929";

pub(crate) fn event(agent: &str, cwd: &Path, transcript: &Path, name: &str, extra: Value) -> Value {
    let mut v = json!({"session_id": agent, "transcript_path": transcript, "cwd": cwd,
                       "hook_event_name": name});
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    v
}

fn boundary(pre: u64, trigger: &str) -> String {
    json!({"type": "system", "subtype": "compact_boundary", "isSidechain": false,
           "content": "Conversation compacted",
           "compactMetadata": {"trigger": trigger, "preTokens": pre, "postTokens": 9_000}})
    .to_string()
}

fn compaction_event(agent: &str, cwd: &Path, t: &Path, name: &str) -> Value {
    match name {
        "PreCompact" => event(
            agent,
            cwd,
            t,
            name,
            json!({"trigger": "auto", "custom_instructions": ""}),
        ),
        "PostCompact" => event(
            agent,
            cwd,
            t,
            name,
            json!({"trigger": "auto", "compact_summary": "s"}),
        ),
        "SubagentStop" => event(
            agent,
            cwd,
            t,
            name,
            json!({"stop_hook_active": false, "agent_id": "a1", "agent_type": "compact"}),
        ),
        "SessionStart(compact)" => event(
            agent,
            cwd,
            t,
            "SessionStart",
            json!({"source": "compact", "model": MODEL}),
        ),
        other => panic!("{other}"),
    }
}

// Issue 18 item 1: one compaction is counted once whichever of its events arrive and in
// whatever order (Claude Code 2.1.328: PreCompact, SubagentStop, SessionStart(compact),
// PostCompact), and the thresholds start over. A PreCompact alone counts only when the
// transcript then records the compaction (another hook may have blocked it).
#[test]
fn one_compaction_counts_once_in_any_order() {
    let repo = TestRepo::new();
    let wt = repo.create("orders");
    let orders: &[(&[&str], bool, u64)] = &[
        (
            &[
                "PreCompact",
                "SubagentStop",
                "SessionStart(compact)",
                "PostCompact",
            ],
            true,
            1,
        ),
        (
            &["PreCompact", "PostCompact", "SessionStart(compact)"],
            true,
            1,
        ),
        (&["SessionStart(compact)", "PostCompact"], true, 1),
        (&["PostCompact"], true, 1),
        (&["SessionStart(compact)"], false, 1),
        (&["PreCompact"], true, 1),
        // Blocked by another hook: the transcript records nothing.
        (&["PreCompact"], false, 0),
    ];
    for (n, (events, recorded, want)) in orders.iter().enumerate() {
        let agent = format!("order-{n}");
        let t = repo.base().join(format!("{agent}.jsonl"));
        append(&t, &[assistant(152_000, &format!("{agent}-a"))]);
        let alert = context_of(&hook(&repo, &post_tool_use(&agent, &wt, &t), &[]));
        assert!(alert.is_some_and(|a| a.starts_with("HANDOFF")), "{agent}");
        for e in *events {
            let run = hook(&repo, &compaction_event(&agent, &wt, &t, e), &[]);
            if *e != "SessionStart(compact)" {
                assert_eq!(run.stdout, "", "{e} answers nothing");
            }
        }
        // Claude Code writes the boundary after its compaction hooks, then the next call.
        if *recorded {
            append(&t, &[boundary(167_000, "auto")]);
        }
        // Before the next call reaches the file, the old fill is not the context's: no alert.
        let early = hook(&repo, &post_tool_use(&agent, &wt, &t), &[]);
        assert_eq!(early.stdout, "", "{events:?}");
        append(&t, &[assistant(20_000, &format!("{agent}-b"))]);
        hook(&repo, &post_tool_use(&agent, &wt, &t), &[]);
        let v = status_json(&repo, &wt, &["--agent-session", &agent], &[]);
        // A compaction only PreCompact announced and the transcript does not record was
        // blocked: the thresholds stay fired.
        let fired = if *want == 1 {
            json!([])
        } else {
            json!([70, 90])
        };
        assert_eq!(
            (v["compactions"].clone(), v["fired"].clone()),
            (json!(want), fired),
            "{events:?} recorded: {recorded}"
        );
        // The next compaction is another one.
        hook(
            &repo,
            &compaction_event(&agent, &wt, &t, "PostCompact"),
            &[],
        );
        let v = status_json(&repo, &wt, &["--agent-session", &agent], &[]);
        assert_eq!(v["compactions"], json!(want + 1), "{events:?}");
    }
}

// Issue 18 item 2: the compaction point is learned at the first call after the compaction,
// when Claude Code has written the `compact_boundary` (after its hooks), and a second agent
// session of the same model then measures against it.
#[test]
fn the_compaction_point_is_learned_after_the_hooks() {
    let repo = TestRepo::new();
    let wt = repo.create("learn");
    let t = repo.base().join("first.jsonl");
    append(&t, &[assistant(118_000, "f1")]);
    hook(&repo, &post_tool_use("first", &wt, &t), &[]);
    for e in [
        "PreCompact",
        "SubagentStop",
        "SessionStart(compact)",
        "PostCompact",
    ] {
        hook(&repo, &compaction_event("first", &wt, &t, e), &[]);
    }
    let v = status_json(&repo, &wt, &["--agent-session", "first"], &[]);
    assert_eq!(v["budget_source"], "default", "nothing readable yet: {v}");
    append(&t, &[boundary(118_308, "auto"), assistant(12_000, "f2")]);
    hook(&repo, &post_tool_use("first", &wt, &t), &[]);
    let models = std::fs::read_to_string(repo.store().join("context-models.toml")).unwrap();
    assert!(models.contains("pre_tokens = 118308"), "{models}");
    // A later call does not learn the same compaction again.
    append(&t, &[assistant(13_000, "f3")]);
    hook(&repo, &post_tool_use("first", &wt, &t), &[]);
    let again = std::fs::read_to_string(repo.store().join("context-models.toml")).unwrap();
    assert!(again.contains("count = 1"), "{again}");

    let second = repo.base().join("second.jsonl");
    append(&second, &[assistant(85_000, "s1")]);
    let alert = context_of(&hook(&repo, &post_tool_use("second", &wt, &second), &[]))
        .expect("85,000 is 72 % of the learned 118,308");
    assert!(alert.contains("118,308"), "{alert}");
    let v = status_json(&repo, &wt, &["--agent-session", "second"], &[]);
    assert_eq!(
        (v["budget"].clone(), v["budget_source"].clone()),
        (json!(118_308), json!("observed"))
    );
}

// Issue 18 item 8: `claude -p` sends its first UserPromptSubmit before the transcript exists:
// normal, no audit line. A transcript this agent session had and that is gone still is one.
#[test]
fn a_transcript_not_written_yet_is_normal() {
    let repo = TestRepo::new();
    let wt = repo.create("fresh");
    let t = repo.base().join("later.jsonl");
    let prompt = event(
        "fresh-agent",
        &wt,
        &t,
        "UserPromptSubmit",
        json!({"prompt": "hi"}),
    );
    // SessionStart first, naming the transcript, as Claude Code does.
    let start = event(
        "fresh-agent",
        &wt,
        &t,
        "SessionStart",
        json!({"source": "startup", "model": MODEL}),
    );
    hook(&repo, &start, &[]);
    let run = hook(&repo, &prompt, &[]);
    assert_eq!(run.stdout, "");
    let failed = |repo: &TestRepo| {
        audit_lines(repo)
            .iter()
            .filter(|l| l["event"] == "context-hook-failed")
            .count()
    };
    assert_eq!(failed(&repo), 0, "{:?}", audit_lines(&repo));
    append(&t, &[assistant(30_000, "x1")]);
    hook(&repo, &post_tool_use("fresh-agent", &wt, &t), &[]);
    std::fs::remove_file(&t).unwrap();
    hook(&repo, &prompt, &[]);
    assert_eq!(failed(&repo), 1, "{:?}", audit_lines(&repo));
}

// Issue 18 item 3: `claude --autocompact N` is on the command line of the hook's Claude Code
// ancestor only. An ancestor named `claude` (a /bin/sh under that name, running the hook as
// Claude Code runs it: through a shell) gives the budget: 120,000 less Claude Code's reserve.
// Issue 26: the same where there is no /proc (macOS: `ps`, forced here with the tools mode),
// read once per agent process: one `ps` run for many tool calls, again at a SessionStart.
#[test]
fn autocompact_on_the_command_line_is_the_budget() {
    for mode in ["proc", "tools"] {
        autocompact_in(mode);
    }
}

fn autocompact_in(mode: &str) {
    use std::os::unix::fs::PermissionsExt;
    let repo = TestRepo::new();
    let wt = repo.create("flag");
    let bin_dir = repo.base().join("fake-claude");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let claude = bin_dir.join("claude");
    std::os::unix::fs::symlink("/bin/sh", &claude).unwrap();
    // A `ps` that logs each run, then runs the real one.
    let log = repo.base().join("ps.log");
    let shim = repo.base().join("shim");
    std::fs::create_dir_all(&shim).unwrap();
    let ps = shim.join("ps");
    let real_ps = ["/bin/ps", "/usr/bin/ps"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("ps");
    std::fs::write(
        &ps,
        format!(
            "#!/bin/sh\necho ps >> '{}'\nexec {real_ps} \"$@\"\n",
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&ps, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}:{}",
        shim.display(),
        common::bin().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let ps_runs = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .count()
    };
    let t = transcript(&repo.base(), "flagged", 70_000);
    let run_under = |payload: &Value, args: &[&str]| {
        let mut cmd = std::process::Command::new(&claude);
        common::hermetic(&mut cmd, &repo.home);
        // Not `exec`: the shell named claude stays the hook's ancestor.
        cmd.current_dir(&wt)
            .env("GIT_SESSION_PROCESS_FACTS", mode)
            .env("PATH", &path)
            .arg("-c")
            .arg("git-session context hook; exit $?")
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(payload.to_string().as_bytes())
            .unwrap();
        common::to_run(child.wait_with_output().unwrap())
    };
    let run = run_under(
        &post_tool_use("flagged", &wt, &t),
        &["--autocompact", "120000"],
    );
    assert_eq!(run.code, 0, "{mode}: {run:?}");
    let text = context_of(&run).expect("70,000 is 80 % of 87,000");
    assert!(text.contains("87,000"), "{mode}: {text}");
    let v = status_json(&repo, &wt, &["--agent-session", "flagged"], &[]);
    assert_eq!(v["budget"], json!(87_000), "{mode}: {v}");
    assert!(
        v["budget_source"]
            .as_str()
            .unwrap()
            .starts_with("--autocompact (claude command line, pid "),
        "{mode}: {v}"
    );
    // More tool calls of the same agent process: read once, kept in the agent state.
    for _ in 0..3 {
        let run = run_under(
            &post_tool_use("flagged", &wt, &t),
            &["--autocompact", "120000"],
        );
        assert_eq!(run.code, 0, "{mode}: {run:?}");
    }
    let once = if mode == "tools" { 1 } else { 0 };
    assert_eq!(ps_runs(), once, "{mode}: one reading for the agent process");
    // A resumed agent is a new process with its own arguments: its SessionStart reads again.
    let start = session_start("flagged", &wt, "resume", None);
    let run = run_under(&start, &["--autocompact", "100000"]);
    assert_eq!(run.code, 0, "{mode}: {run:?}");
    let v = status_json(&repo, &wt, &["--agent-session", "flagged"], &[]);
    assert_eq!(v["budget"], json!(67_000), "{mode}: {v}");
    assert_eq!(ps_runs(), 2 * once, "{mode}");
    // `auto` is Claude Code's default: the default budget.
    let t = transcript(&repo.base(), "auto", 70_000);
    let run = run_under(
        &post_tool_use("auto-agent", &wt, &t),
        &["--autocompact", "auto"],
    );
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{mode}: {run:?}");
    let v = status_json(&repo, &wt, &["--agent-session", "auto-agent"], &[]);
    assert_eq!(
        (v["budget"].clone(), v["budget_source"].clone()),
        (json!(167_000), json!("default")),
        "{mode}"
    );
}

// Issue 18 item 7: hooks that would never load are named, with what to do. Claude Code reads
// the worktree's own `.claude/settings.json`, so a session created before it was committed has
// none; Codex reads the main worktree's `.codex/hooks.json` for a session only when the
// session's worktree has a `.codex/` directory, which `install --codex` makes.
#[test]
fn install_names_sessions_whose_hooks_will_not_load() {
    let repo = TestRepo::new();
    let early = repo.create("early");
    let run = repo.run(["context", "install"]).ok();
    assert!(
        run.stderr.contains("commit .claude/settings.json in "),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(
            "hooks will not load in session early: Claude Code: hooks do not load: Claude Code \
             reads its project hooks from the worktree it runs in"
        ),
        "{}",
        run.stderr
    );
    repo.git(["add", ".claude/settings.json"]);
    repo.git(["commit", "-qm", "hooks"]);
    let late = repo.create("late");
    let again = repo.run(["context", "install"]).ok();
    assert!(
        !again.stderr.contains("commit .claude/settings.json in "),
        "{}",
        again.stderr
    );
    assert!(
        again.stderr.contains("session early") && !again.stderr.contains("session late"),
        "{}",
        again.stderr
    );
    assert!(late.join(".claude/settings.json").is_file());

    let codex = repo.run(["context", "install", "--codex"]).ok();
    assert!(
        codex
            .stderr
            .contains("made .codex/ in the worktree of early, late"),
        "{}",
        codex.stderr
    );
    assert!(early.join(".codex").is_dir() && late.join(".codex").is_dir());
    assert_eq!(repo.git_in(&early, ["status", "--porcelain"]).trim(), "");
    assert!(
        !codex.stderr.contains("hooks will not load"),
        "{}",
        codex.stderr
    );
    assert!(codex.stderr.contains("trust them once with /hooks"));
}

// `claude -p --no-session-persistence` names a transcript it never writes. One tool call waits
// for it through the whole catch-up; the agent session remembers that, so the next ones do not
// wait for a file that is not coming (each would cost the agent the wait); once the file is
// there, readings and waits are as usual again.
#[test]
fn a_transcript_that_is_never_written_is_waited_for_once() {
    let repo = TestRepo::new();
    let wt = repo.create("unsaved");
    let t = repo.base().join("never.jsonl");
    let start = event(
        "unsaved",
        &wt,
        &t,
        "SessionStart",
        json!({"source": "startup", "model": MODEL}),
    );
    hook(&repo, &start, &[]);
    let mut payload = post_tool_use("unsaved", &wt, &t);
    payload["tool_use_id"] = json!("toolu_late");
    // A budget long enough that a waiting hook would see the file the writer makes at 3 s.
    let long = [("GIT_SESSION_HOOK_BUDGET", "60s")];
    let first = hook(&repo, &payload, &[("GIT_SESSION_HOOK_BUDGET", "1s")]);
    assert_eq!(first.stdout, "");
    // The wait that found nothing is recorded as a late reading.
    assert!(
        audit_lines(&repo)
            .iter()
            .any(|l| l["event"] == "context-hook-late"),
        "{:?}",
        audit_lines(&repo)
    );
    let mut call: Value = serde_json::from_str(&assistant(125_000, "late-call")).unwrap();
    call["message"]["content"] = json!([{"type": "tool_use", "id": "toolu_late",
                                          "name": "Bash", "input": {"command": "ls"}}]);
    let writer = {
        let (t, call) = (t.clone(), call.to_string());
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_secs(3));
            append(&t, &[call]);
        })
    };
    let second = hook(&repo, &payload, &long);
    writer.join().unwrap();
    assert_eq!(
        second.stdout, "",
        "the second call waited for the missing transcript"
    );
    // The absence was audited once, at the call that found it, not at every call after.
    let failed = audit_lines(&repo)
        .iter()
        .filter(|l| l["event"] == "context-hook-failed")
        .count();
    assert_eq!(failed, 1, "{:?}", audit_lines(&repo));
    // The file is there now: read, alerted, and remembered as written.
    let third = hook(&repo, &payload, &long);
    let alert = context_of(&third).expect("the transcript, once there, is read");
    assert!(alert.starts_with("Context awareness"), "{alert}");
    let state = std::fs::read_to_string(repo.store().join("agents/unsaved.toml")).unwrap();
    assert!(!state.contains("transcript_unwritten"), "{state}");
}

// An agent whose commits would not run the guard (no hooks installed here) hears so at
// SessionStart, with the reason and what to tell the user, and the store audits it once.
#[test]
fn session_start_tells_the_agent_when_its_commits_skip_the_guard() {
    let repo = TestRepo::new();
    let wt = repo.create("unguarded");
    let run = hook(
        &repo,
        &session_start("agent-unguarded", &wt, "startup", Some("claude-opus-4-1")),
        &[],
    );
    let text = context_of(&run).unwrap();
    repo.insta().bind(|| {
        insta::assert_snapshot!("identity_guard_off", text);
    });
    let audited: Vec<Value> = audit_lines(&repo)
        .into_iter()
        .filter(|l| l["event"] == "context-guard-off")
        .collect();
    assert_eq!(audited.len(), 1, "{audited:?}");
    assert_eq!(audited[0]["session"], "unguarded");
    // Once the guard is in force, the identity says commits are checked, and nothing is audited.
    repo.run(["hooks", "install"]).ok();
    let again = hook(
        &repo,
        &session_start("agent-guarded", &wt, "startup", Some("claude-opus-4-1")),
        &[],
    );
    assert!(!context_of(&again).unwrap().contains("does NOT run"));
    let audited = audit_lines(&repo)
        .into_iter()
        .filter(|l| l["event"] == "context-guard-off")
        .count();
    assert_eq!(audited, 1);
}

// Issue 33: an agent session that compacted and ended before any later call of its own read
// the compaction's record (Claude Code writes it after the compaction hooks) leaves its point
// to the next agent session of the same worktree: that one's SessionStart reads it from the
// earlier transcript, so its very first budget is the observed point, however fast it starts.
// The point is remembered once, whichever agent session reads it.
#[test]
fn the_next_session_learns_the_point_at_its_start() {
    let repo = TestRepo::new();
    let wt = repo.create("learn-at-start");
    let t = repo.base().join("gone.jsonl");
    let start = |agent: &str, t: &Path| {
        event(
            agent,
            &wt,
            t,
            "SessionStart",
            json!({"source": "startup", "model": MODEL}),
        )
    };
    hook(&repo, &start("gone", &t), &[]);
    append(&t, &[assistant(121_000, "g1")]);
    hook(&repo, &post_tool_use("gone", &wt, &t), &[]);
    hook(
        &repo,
        &compaction_event("gone", &wt, &t, "PostCompact"),
        &[],
    );
    // The record lands after the hooks; the agent exits before another call.
    append(&t, &[boundary(121_450, "auto"), assistant(9_500, "g2")]);
    let fresh = repo.base().join("fresh.jsonl");
    let run = hook(&repo, &start("fresh", &fresh), &[]);
    assert!(context_of(&run).is_some(), "identity: {run:?}");
    let v = status_json(&repo, &wt, &["--agent-session", "fresh"], &[]);
    assert_eq!(
        (v["budget"].clone(), v["budget_source"].clone()),
        (json!(121_450), json!("observed")),
        "{v}"
    );
    // Its first call alerts against the observed point: 86,000 is 70.8 % of 121,450 (51 % of
    // the default 167,000).
    append(&fresh, &[assistant(86_000, "f1")]);
    let alert = context_of(&hook(&repo, &post_tool_use("fresh", &wt, &fresh), &[]))
        .expect("70 % of the observed point");
    assert!(alert.contains("121,450"), "{alert}");
    // The earlier agent, resumed, does not learn the same compaction again.
    append(&t, &[assistant(10_000, "g3")]);
    hook(&repo, &post_tool_use("gone", &wt, &t), &[]);
    hook(
        &repo,
        &start("third", &repo.base().join("third.jsonl")),
        &[],
    );
    let models = std::fs::read_to_string(repo.store().join("context-models.toml")).unwrap();
    assert!(models.contains("count = 1"), "{models}");
}
