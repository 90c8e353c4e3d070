//! The agent table's invariants (`super::agents`).

use super::*;

#[test]
fn the_table_holds_each_agent_once_in_order() {
    assert_eq!(TABLE.len(), Agent::ALL.len());
    for (i, a) in Agent::ALL.into_iter().enumerate() {
        assert_eq!(TABLE[i].agent, a);
        assert_eq!(Agent::from_id(a.id()), Some(a));
    }
}

#[test]
fn an_event_name_has_one_role() {
    for f in TABLE {
        for (event, r) in f.events {
            assert_eq!(role(event), *r, "{} {event}", f.name);
        }
        for (event, _) in f.install {
            assert!(
                f.agent.sends(event),
                "{} installs {event} it never sends",
                f.name
            );
        }
    }
}

/// The installed matcher of the event that refuses writes names exactly the file tools.
#[test]
fn the_write_matcher_names_the_file_tools() {
    for f in TABLE {
        let (_, matcher) = f
            .install
            .iter()
            .find(|(e, _)| role(e) == Role::BeforeTool)
            .unwrap_or_else(|| panic!("{} installs no BeforeTool", f.name));
        let m = matcher.expect("a matcher");
        let inner = m.trim_start_matches("^(").trim_end_matches(")$");
        let mut named: Vec<&str> = inner.split('|').collect();
        let mut tools: Vec<&str> = f.file_tools.iter().map(|(t, _)| *t).collect();
        named.sort_unstable();
        tools.sort_unstable();
        assert_eq!(named, tools, "{}", f.name);
    }
}

#[test]
fn who_alone_sends_an_event() {
    assert_eq!(Agent::only_sender("BeforeTool"), Some(Agent::Gemini));
    assert_eq!(Agent::only_sender("PreCompact"), Some(Agent::Claude));
    assert_eq!(Agent::only_sender("PostToolUse"), None);
    assert_eq!(Agent::only_sender("Nothing"), None);
    assert_eq!(
        Agent::file_tool("apply_patch"),
        Some((Agent::Codex, Input::Patch))
    );
    assert_eq!(
        Agent::file_tool("edit"),
        Some((Agent::Copilot, Input::Key("path")))
    );
}

/// GitHub Copilot CLI's payloads name no event and its tool events carry no transcript:
/// the hook knows it from the event name alone, so every name it sends is its own.
#[test]
fn copilot_events_are_its_own() {
    for (event, _) in Agent::Copilot.facts().events {
        assert_eq!(Agent::only_sender(event), Some(Agent::Copilot), "{event}");
    }
    for f in TABLE {
        let flat = f.hook_shape == HookShape::Flat;
        // Only Copilot's payloads lack `hook_event_name` (its handlers name the event).
        assert_eq!(flat, f.agent == Agent::Copilot, "{}", f.name);
    }
}

/// One agent is assumed when nothing names one: `context install` without `--agent`, a hook
/// call nothing identifies. Two would make the answer depend on the table's order.
#[test]
fn exactly_one_agent_is_the_default() {
    let defaults: Vec<_> = TABLE
        .iter()
        .filter(|f| f.default)
        .map(|f| f.agent)
        .collect();
    assert_eq!(defaults, [Agent::default_agent()]);
}

/// A payload key that marks an agent is sent by that agent alone: two agents with one marker
/// would make the first row win.
#[test]
fn payload_markers_are_distinct() {
    let mut keys: Vec<&str> = TABLE.iter().filter_map(|f| f.payload_marker).collect();
    let n = keys.len();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), n, "{keys:?}");
}
