//! What an agent does is its state's mark (issue 32): a turn's start and end change only the
//! symbolic link `agents/<id>.doing`, never the agent's state file (whose locked, renamed write
//! cost the hook a third of its time), and `list` reads the mark. What is at the mark's place and
//! is not a mark (garbage, a regular file, a link aimed elsewhere) is never followed, fails
//! nothing, and is replaced by the next event.

use crate::attention::{run_at, send};
use crate::common::TestRepo;
use serde_json::{json, Value};
use std::os::unix::fs::MetadataExt;

const AGENT: &str = "7f000001-aaaa-2222-3333-444455556666";

fn state_of(repo: &TestRepo, secs: i64) -> (Value, Value) {
    let list = run_at(repo, &repo.root, secs, &["list", "--json"]).json();
    let agent = list[0]["agent"].clone();
    (agent["state"].clone(), agent["since"].clone())
}

#[test]
fn turns_write_the_mark_alone_and_a_damaged_mark_is_replaced_by_the_next_event() {
    let repo = TestRepo::new();
    let wt = repo.create("alpha");
    let toml = repo.store().join(format!("agents/{AGENT}.toml"));
    let mark = repo.store().join(format!("agents/{AGENT}.doing"));
    send(
        &repo,
        AGENT,
        &wt,
        0,
        "SessionStart",
        json!({"source": "startup"}),
    );
    send(
        &repo,
        AGENT,
        &wt,
        1,
        "UserPromptSubmit",
        json!({"prompt": "go"}),
    );
    let before = (
        std::fs::read(&toml).unwrap(),
        std::fs::metadata(&toml).unwrap().ino(),
    );
    // Turns within the state's refresh interval: each start and end is seen by `list` at once.
    for (secs, event, want) in [
        (10, "Stop", "waiting"),
        (20, "UserPromptSubmit", "working"),
        (30, "Stop", "waiting"),
        (40, "UserPromptSubmit", "working"),
    ] {
        send(&repo, AGENT, &wt, secs, event, json!({"prompt": "go"}));
        assert_eq!(
            state_of(&repo, secs),
            (json!(want), json!(crate::attention::at(secs)))
        );
        let link = std::fs::read_link(&mark).unwrap();
        let marked = if want == "working" {
            "working "
        } else {
            "input "
        };
        assert!(link.to_str().unwrap().starts_with(marked), "{link:?}");
    }
    let after = (
        std::fs::read(&toml).unwrap(),
        std::fs::metadata(&toml).unwrap().ino(),
    );
    assert!(
        before == after,
        "the state file was rewritten for a change of activity alone"
    );

    // What is at the mark's place and is not a mark: the state file's copy is shown meanwhile,
    // nothing is followed, and the next event puts a mark back.
    let outside = repo.base().join("outside.txt");
    std::fs::write(&outside, "input 1.000000000 Stop").unwrap();
    let not_marks: [&dyn Fn(); 3] = [
        &|| std::os::unix::fs::symlink("\u{1}garbage", &mark).unwrap(),
        &|| std::os::unix::fs::symlink(&outside, &mark).unwrap(),
        &|| std::fs::write(&mark, "input 1.000000000 Stop").unwrap(),
    ];
    for (i, put) in not_marks.iter().enumerate() {
        std::fs::remove_file(&mark).unwrap();
        put();
        let secs = 50 + i as i64 * 2;
        // The state file keeps no copy: nothing is shown until the next event.
        assert_eq!(state_of(&repo, secs), (Value::Null, Value::Null));
        send(&repo, AGENT, &wt, secs + 1, "Stop", json!({}));
        assert_eq!(
            state_of(&repo, secs + 1),
            (json!("waiting"), json!(crate::attention::at(secs + 1)))
        );
        assert!(std::fs::symlink_metadata(&mark)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(
            std::fs::read_to_string(&outside).unwrap(),
            "input 1.000000000 Stop"
        );
        send(
            &repo,
            AGENT,
            &wt,
            secs + 1,
            "UserPromptSubmit",
            json!({"prompt": "go"}),
        );
    }
    // No temporary link is left beside the mark.
    let names: Vec<String> = std::fs::read_dir(repo.store().join("agents"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

/// A state file an earlier version wrote keeps what the agent does in itself: shown as it is,
/// and carried into the mark by the next event (a repeated activity keeps its first time).
#[test]
fn what_an_earlier_version_kept_in_the_state_file_is_shown_and_carried_into_the_mark() {
    let repo = TestRepo::new();
    let wt = repo.create("alpha");
    let toml = repo.store().join(format!("agents/{AGENT}.toml"));
    let mark = repo.store().join(format!("agents/{AGENT}.doing"));
    send(
        &repo,
        AGENT,
        &wt,
        0,
        "SessionStart",
        json!({"source": "startup"}),
    );
    std::fs::remove_file(&mark).unwrap();
    let mut text = std::fs::read_to_string(&toml).unwrap();
    text.push_str(&format!(
        "\n[doing]\nactivity = \"permission\"\nsince = \"{}\"\nevent = \"PermissionRequest\"\n",
        crate::attention::at(5)
    ));
    std::fs::write(&toml, text).unwrap();
    let want = (json!("waiting"), json!(crate::attention::at(5)));
    assert_eq!(state_of(&repo, 6), want);
    send(
        &repo,
        AGENT,
        &wt,
        7,
        "PermissionRequest",
        json!({"tool_name": "Bash"}),
    );
    assert_eq!(state_of(&repo, 8), want);
    assert!(std::fs::read_link(&mark)
        .unwrap()
        .to_str()
        .unwrap()
        .starts_with("permission "));
}
