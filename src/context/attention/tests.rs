//! One test per shown state, each with its way out: a later event, the process ending, or time.

use super::*;
use chrono::Duration;

fn t(secs: i64) -> Time {
    chrono::DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
        .unwrap()
        .with_timezone(&chrono::Utc)
        + Duration::seconds(secs)
}

fn doing(activity: Activity, since: i64) -> Doing {
    Doing {
        activity,
        since: t(since),
        event: "x".into(),
    }
}

fn state_of(d: &Doing, last: i64, alive: Alive, now: i64) -> State {
    shown(Some(d), t(last), alive, t(now)).unwrap().state
}

fn payload(json: &str) -> Payload {
    Payload::parse(json.as_bytes()).unwrap()
}

/// Records `json`'s event at `now` in `s`, as the hook does.
fn event(s: &mut AgentState, json: &str, now: i64) {
    note(s, &payload(json), t(now));
    s.last_seen = t(now);
}

#[test]
fn working_becomes_quiet_with_time_and_gone_when_the_process_ends() {
    let d = doing(Activity::Working, 0);
    assert_eq!(state_of(&d, 10, Alive::Yes, 20), State::Working);
    assert_eq!(state_of(&d, 10, Alive::Unknown, 20), State::Working);
    // The bound itself is still working; one second past it is quiet, since the last event.
    assert_eq!(
        state_of(&d, 10, Alive::Yes, 10 + QUIET_AFTER),
        State::Working
    );
    let quiet = shown(Some(&d), t(10), Alive::Yes, t(11 + QUIET_AFTER)).unwrap();
    assert_eq!((quiet.state, quiet.since), (State::Quiet, t(10)));
    assert_eq!(state_of(&d, 10, Alive::No, 20), State::Gone);
    // Working shows since the activity began, not since the last event.
    assert_eq!(
        shown(Some(&d), t(10), Alive::Yes, t(20)).unwrap().since,
        t(0)
    );
}

#[test]
fn quiet_ends_at_the_next_event_or_with_the_process() {
    let mut s = AgentState::new("a", t(0));
    event(&mut s, r#"{"hook_event_name":"UserPromptSubmit"}"#, 0);
    let quiet = view(&s, t(QUIET_AFTER + 60)).unwrap();
    assert_eq!(quiet.shown.state, State::Quiet);
    event(
        &mut s,
        r#"{"hook_event_name":"PostToolUse","tool_name":"Bash"}"#,
        QUIET_AFTER + 60,
    );
    assert_eq!(
        view(&s, t(QUIET_AFTER + 61)).unwrap().shown.state,
        State::Working
    );
    let d = doing(Activity::Working, 0);
    assert_eq!(state_of(&d, 0, Alive::No, QUIET_AFTER * 3), State::Gone);
}

#[test]
fn waiting_for_permission_ends_when_answered_or_with_the_process() {
    let mut s = AgentState::new("a", t(0));
    event(&mut s, r#"{"hook_event_name":"UserPromptSubmit"}"#, 0);
    event(
        &mut s,
        r#"{"hook_event_name":"PermissionRequest","tool_name":"Bash"}"#,
        5,
    );
    let w = view(&s, t(3600)).unwrap().shown;
    assert_eq!(w.state, State::Waiting(Reason::Permission));
    assert_eq!(w.state.reason(), Some("permission"));
    assert_eq!(
        w.since,
        t(5),
        "an hour's wait is still waiting, since it began"
    );
    // Answered: the tool runs, its PostToolUse says working again.
    event(
        &mut s,
        r#"{"hook_event_name":"PostToolUse","tool_name":"Bash"}"#,
        3600,
    );
    assert_eq!(view(&s, t(3601)).unwrap().shown.state, State::Working);
    // Denied: Claude Code's PermissionDenied, and the model goes on.
    event(&mut s, r#"{"hook_event_name":"PermissionRequest"}"#, 3700);
    event(&mut s, r#"{"hook_event_name":"PermissionDenied"}"#, 3710);
    assert_eq!(view(&s, t(3711)).unwrap().shown.state, State::Working);
    let d = doing(Activity::Permission, 0);
    assert_eq!(state_of(&d, 0, Alive::No, 10), State::Gone);
}

#[test]
fn waiting_for_input_ends_at_the_next_prompt_or_with_the_process_or_unjudged_with_time() {
    let mut s = AgentState::new("a", t(0));
    event(&mut s, r#"{"hook_event_name":"UserPromptSubmit"}"#, 0);
    event(&mut s, r#"{"hook_event_name":"Stop"}"#, 30);
    let w = view(&s, t(90_000)).unwrap().shown;
    assert_eq!((w.state, w.since), (State::Waiting(Reason::Input), t(30)));
    // An idle notification after it is the same wait, since the turn ended.
    event(
        &mut s,
        r#"{"hook_event_name":"Notification","notification_type":"idle_prompt","message":"Claude is waiting for your input"}"#,
        90,
    );
    assert_eq!(view(&s, t(100)).unwrap().shown.since, t(30));
    event(&mut s, r#"{"hook_event_name":"BeforeAgent"}"#, 200);
    assert_eq!(view(&s, t(201)).unwrap().shown.state, State::Working);
    let d = doing(Activity::Input, 0);
    assert_eq!(state_of(&d, 0, Alive::No, 10), State::Gone);
    // A process that runs is believed however long the wait; one that cannot be judged is
    // not, after a day without a word.
    assert_eq!(
        state_of(&d, 0, Alive::Yes, UNJUDGED_AFTER * 3),
        State::Waiting(Reason::Input)
    );
    assert_eq!(
        state_of(&d, 0, Alive::Unknown, UNJUDGED_AFTER),
        State::Waiting(Reason::Input)
    );
    assert_eq!(
        state_of(&d, 0, Alive::Unknown, UNJUDGED_AFTER + 1),
        State::Quiet
    );
}

#[test]
fn gone_and_ended_end_at_a_later_event() {
    let mut s = AgentState::new("a", t(0));
    event(&mut s, r#"{"hook_event_name":"Stop"}"#, 0);
    // A process that no longer runs: no pid reaches i32::MAX (the kernel says no such process).
    s.process = Some(ProcessId {
        pid: i32::MAX as u32,
        start: 1,
        host: crate::base::process::hostname(),
        clock: Default::default(),
    });
    let gone = view(&s, t(50)).unwrap().shown;
    assert_eq!((gone.state, gone.since), (State::Gone, t(0)));
    // A resume starts a new process with a SessionStart: the process is read again, and
    // this test process is alive (or, where it cannot be judged, not gone).
    event(
        &mut s,
        r#"{"hook_event_name":"SessionStart","source":"resume"}"#,
        60,
    );
    assert_ne!(view(&s, t(61)).unwrap().shown.state, State::Gone);
    assert_ne!(s.process.as_ref().map(|p| p.pid), Some(i32::MAX as u32));
    event(
        &mut s,
        r#"{"hook_event_name":"SessionEnd","reason":"prompt_input_exit"}"#,
        70,
    );
    let ended = view(&s, t(10_000)).unwrap().shown;
    assert_eq!((ended.state, ended.since), (State::Ended, t(70)));
    // Ended whatever the process does afterwards.
    assert_eq!(
        state_of(&doing(Activity::Ended, 0), 0, Alive::No, 10),
        State::Ended
    );
    event(
        &mut s,
        r#"{"hook_event_name":"SessionStart","source":"resume"}"#,
        80,
    );
    assert_eq!(
        view(&s, t(81)).unwrap().shown.state,
        State::Waiting(Reason::Input)
    );
}

#[test]
fn events_that_say_nothing_change_nothing() {
    let mut s = AgentState::new("a", t(0));
    assert!(
        view(&s, t(1)).is_none(),
        "no activity recorded: nothing shown"
    );
    event(&mut s, r#"{"hook_event_name":"Stop"}"#, 0);
    for other in [
        r#"{"hook_event_name":"SubagentStop"}"#,
        r#"{"hook_event_name":"PreCompact"}"#,
        r#"{"hook_event_name":"Notification","notification_type":"auth_success","message":"ok"}"#,
        r#"{"hook_event_name":"PreCompress"}"#,
    ] {
        event(&mut s, other, 10);
        assert_eq!(
            view(&s, t(11)).unwrap().shown.state,
            State::Waiting(Reason::Input),
            "{other}"
        );
    }
}

#[test]
fn each_agents_permission_event_is_read_as_one() {
    for json in [
        r#"{"hook_event_name":"PermissionRequest","tool_name":"Bash"}"#,
        r#"{"hook_event_name":"Notification","notification_type":"permission_prompt","message":"Claude needs your permission to use Bash"}"#,
        r#"{"hook_event_name":"Notification","message":"Claude needs your permission to use Bash"}"#,
        r#"{"hook_event_name":"Notification","notification_type":"ToolPermission","message":"Tool needs approval"}"#,
    ] {
        assert_eq!(
            activity_of(&payload(json)),
            Some(Activity::Permission),
            "{json}"
        );
    }
    for (json, want) in [
        (r#"{"hook_event_name":"AfterAgent"}"#, Activity::Input),
        (r#"{"hook_event_name":"StopFailure"}"#, Activity::Input),
        (
            r#"{"hook_event_name":"SessionStart","source":"startup"}"#,
            Activity::Input,
        ),
        (
            r#"{"hook_event_name":"SessionStart","source":"compact"}"#,
            Activity::Working,
        ),
        (r#"{"hook_event_name":"AfterTool"}"#, Activity::Working),
    ] {
        assert_eq!(activity_of(&payload(json)), Some(want), "{json}");
    }
}

#[test]
fn the_session_shows_who_needs_the_person_most() {
    let v = |id: &str, state, since, last| AgentView {
        agent_session: id.into(),
        shown: Shown {
            state,
            since: t(since),
        },
        last_event: t(last),
        event: "x".into(),
        pid: None,
    };
    // Most recent event first, as of_session sorts them.
    let agents = [
        v("new", State::Working, 90, 100),
        v("old", State::Waiting(Reason::Input), 10, 50),
        v("older", State::Ended, 0, 5),
    ];
    assert_eq!(summary(&agents).unwrap().agent_session, "old");
    let done = [
        v("new", State::Ended, 90, 100),
        v("old", State::Gone, 10, 50),
    ];
    assert_eq!(summary(&done).unwrap().agent_session, "new");
    assert!(summary(&[]).is_none());
}

#[test]
fn the_process_is_looked_for_at_a_change_not_at_every_tool_call() {
    let mut s = AgentState::new("a", t(0));
    let tool = r#"{"hook_event_name":"PostToolUse","tool_name":"Bash"}"#;
    event(&mut s, tool, 0);
    // As where no agent process could be found: the next tool calls do not look again.
    s.process = None;
    event(&mut s, tool, 10);
    event(&mut s, tool, 20);
    assert_eq!(s.process, None);
    // A change of activity looks again (the turn ended).
    event(&mut s, r#"{"hook_event_name":"Stop"}"#, 30);
    assert_eq!(s.process, super::super::ancestry::agent_process());
}

#[test]
fn a_mark_reads_back_as_written_and_anything_else_is_no_mark() {
    let since = t(0) + chrono::Duration::nanoseconds(123_456_789);
    for (activity, event) in [
        (Activity::Working, "PostToolUse"),
        (Activity::Permission, "PermissionRequest"),
        (Activity::Input, "Stop"),
        (Activity::Ended, "sessionEnd"),
    ] {
        let d = Doing {
            activity,
            since,
            event: event.into(),
        };
        let mark = d.to_mark();
        assert!(mark.len() < 60, "{mark:?} does not fit in an ext4 inode");
        assert_eq!(Doing::from_mark(&mark), Some(d));
    }
    // The agent's text is bounded and loses its control characters; it never breaks the mark.
    let hostile = Doing {
        activity: Activity::Input,
        since,
        event: format!("a\nb\0c{}", "x".repeat(500)),
    };
    let back = Doing::from_mark(&hostile.to_mark()).unwrap();
    assert_eq!(back.activity, Activity::Input);
    assert!(back.event.starts_with("abc") && back.event.len() <= 40);
    for bad in [
        "",
        "working",
        "idle 1.000000000 Stop",
        "input 12 Stop",
        "input x.000000000 S",
        "input 1.0000000001 Stop",
        "\u{0}\u{ff}",
    ] {
        assert_eq!(Doing::from_mark(bad), None, "{bad:?}");
    }
}
