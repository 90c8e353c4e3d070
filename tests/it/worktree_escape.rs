//! An agent stays in its own worktree (issue 29), tested by class: every file tool of every
//! agent the hook serves, aimed at every place outside the session's worktree inside the
//! repository (the main worktree, another session's worktree, the git directory, a symbolic
//! link inside its own worktree that points into another one), is refused before the write,
//! with a reason naming the session's own worktree; writes at home and outside the repository
//! pass untouched. A session's commit in a worktree not its own is refused; `[guard] escape`
//! lets a team relax both.

use crate::common::{guarded, write_in, TestRepo};
use crate::context_support::{answer, gemini_answer, gemini_payload, hook};
use serde_json::{json, Value};
use std::path::Path;

/// One write of `file` by an agent of `kind` standing in `cwd`: the PreToolUse/BeforeTool
/// payload as that CLI sends it.
pub(crate) fn write_call(kind: &str, cwd: &Path, file: &Path) -> (Value, &'static str) {
    let f = file.display().to_string();
    match kind {
        "Write" | "Edit" | "MultiEdit" => (
            json!({"session_id": "claude-a", "cwd": cwd, "hook_event_name": "PreToolUse",
                   "tool_name": kind, "tool_use_id": "toolu_01",
                   "tool_input": {"file_path": f, "content": "x",
                                  "old_string": "a", "new_string": "b"}}),
            "PreToolUse",
        ),
        "NotebookEdit" => (
            json!({"session_id": "claude-a", "cwd": cwd, "hook_event_name": "PreToolUse",
                   "tool_name": kind, "tool_use_id": "toolu_01",
                   "tool_input": {"notebook_path": f, "new_source": "x"}}),
            "PreToolUse",
        ),
        "apply_patch" => (
            json!({"session_id": "codex-a", "transcript_path": Value::Null, "cwd": cwd,
                   "hook_event_name": "PreToolUse", "model": "gpt-5-codex", "turn_id": "t1",
                   "tool_name": "apply_patch", "tool_use_id": "call_1",
                   "tool_input": {"command": format!(
                       "*** Begin Patch\n*** Add File: {f}\n+x\n*** End Patch\n")}}),
            "PreToolUse",
        ),
        gemini => (
            gemini_payload(
                "BeforeTool",
                "gem-a",
                cwd,
                &cwd.join("none.json"),
                json!({"tool_name": gemini,
                       "tool_input": {"file_path": f, "content": "x", "old_string": "a",
                                      "new_string": "b", "instruction": "edit"}}),
            ),
            "BeforeTool",
        ),
    }
}

const TOOLS: [&str; 7] = [
    "Write",
    "Edit",
    "MultiEdit",
    "NotebookEdit",
    "apply_patch",
    "write_file",
    "replace",
];

/// The refusal's reason, or None when the call is let through without a word.
fn refusal(repo: &TestRepo, payload: &Value, event: &str) -> Option<String> {
    let run = hook(repo, payload, &[]);
    if event == "BeforeTool" {
        let v = gemini_answer(&run, event)?;
        assert_eq!(v["decision"], "deny", "{v}");
        return Some(v["reason"].as_str().unwrap().to_string());
    }
    let v = answer(&run, event)?;
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny", "{v}");
    Some(
        v["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .to_string(),
    )
}

#[test]
fn every_file_tool_is_kept_in_its_own_worktree() {
    let repo = guarded();
    let a = repo.create("A");
    let b = repo.create("B");
    let root = repo.root.clone();
    // A symbolic link inside A's worktree that points into B's.
    std::os::unix::fs::symlink(b.join("src/lib.rs"), a.join("into-b.rs")).unwrap();
    let outside = repo.base().join("scratch.txt");
    for tool in TOOLS {
        for (target, instead) in [
            (root.join("src/lib.rs"), Some(a.join("src/lib.rs"))),
            (b.join("src/config.rs"), Some(a.join("src/config.rs"))),
            (b.join("new/deep.txt"), Some(a.join("new/deep.txt"))),
            (root.join(".git/config"), None),
            (a.join("into-b.rs"), Some(a.join("src/lib.rs"))),
            (
                a.join(format!(
                    "../{}/src/lib.rs",
                    b.file_name().unwrap().to_string_lossy()
                )),
                Some(a.join("src/lib.rs")),
            ),
        ] {
            let (payload, event) = write_call(tool, &a, &target);
            let reason = refusal(&repo, &payload, event)
                .unwrap_or_else(|| panic!("{tool} {}: not refused", target.display()));
            assert!(
                reason.contains(&format!("whose worktree is {}", a.display())),
                "{tool} {}: {reason}",
                target.display()
            );
            if let Some(instead) = instead {
                assert!(
                    reason.contains(&format!("instead: {}", instead.display())),
                    "{tool} {}: {reason}",
                    target.display()
                );
            }
        }
        // At home, and outside the repository: untouched.
        for target in [a.join("src/lib.rs"), a.join("fresh.txt"), outside.clone()] {
            let (payload, event) = write_call(tool, &a, &target);
            assert_eq!(
                refusal(&repo, &payload, event),
                None,
                "{tool} {}",
                target.display()
            );
        }
    }
    // Nothing was written by any of it, and each refusal is in the audit log.
    assert_eq!(
        std::fs::read_to_string(root.join("src/lib.rs")).unwrap(),
        "lib\n"
    );
    let audit = std::fs::read_to_string(repo.store().join("audit.log")).unwrap();
    assert_eq!(
        audit.matches("\"event\":\"context-escape\"").count(),
        TOOLS.len() * 6,
        "{audit}"
    );
}

/// An agent with no session (a person's own agent in the main worktree) is never judged.
#[test]
fn an_agent_of_no_session_is_not_judged() {
    let repo = guarded();
    let b = repo.create("B");
    let (payload, event) = write_call("Write", &repo.root, &b.join("src/lib.rs"));
    // Judged only by ownership: B owns nothing yet, so the write is let through.
    assert_eq!(refusal(&repo, &payload, event), None);
}

fn git_session_env(
    repo: &TestRepo,
    dir: &Path,
    label: &str,
    extra: &[(&str, &str)],
) -> crate::common::Run {
    let mut cmd = repo.git_cmd_as(dir, label);
    cmd.envs(extra.iter().copied())
        .args(["commit", "-q", "-m", &format!("{label} commits")]);
    crate::common::to_run(cmd.output().unwrap())
}

#[test]
fn a_session_commits_only_in_its_own_worktree() {
    let repo = guarded();
    let a = repo.create("A");
    let b = repo.create("B");
    let root = repo.root.clone();
    for (dir, place) in [
        (&root, "the main worktree"),
        (&b, "another session's worktree"),
    ] {
        write_in(dir, "a-was-here.txt", "A\n");
        repo.git_in(dir, ["add", "a-was-here.txt"]);
        let out = git_session_env(&repo, dir, "A", &[]);
        assert_eq!(out.code, 1, "{place}: {out:?}");
        assert!(out.stderr.contains(place), "{}", out.stderr);
        assert!(
            out.stderr
                .contains(&format!("its own worktree is {}", a.display())),
            "{}",
            out.stderr
        );
        repo.git_in(dir, ["reset", "-q", "a-was-here.txt"]);
        std::fs::remove_file(dir.join("a-was-here.txt")).unwrap();
    }
    // At home it goes through; and an attached session in the worktree it is attached to.
    write_in(&a, "mine.txt", "A\n");
    repo.git_in(&a, ["add", "mine.txt"]);
    assert_eq!(git_session_env(&repo, &a, "A", &[]).code, 0);
    repo.attach("M");
    write_in(&root, "m.txt", "M\n");
    repo.git(["add", "m.txt"]);
    assert_eq!(git_session_env(&repo, &root, "M", &[]).code, 0);
    // The audited bypass still works.
    write_in(&b, "bypass.txt", "A\n");
    repo.git_in(&b, ["add", "bypass.txt"]);
    assert_eq!(
        git_session_env(&repo, &b, "A", &[("GIT_SESSION_GUARD", "off")]).code,
        0
    );
}

/// `[guard] escape = "warn"`: the write goes through with a word to the model, and the commit
/// with a warning; both are audited.
#[test]
fn a_team_can_relax_it_to_a_warning() {
    let repo = guarded();
    repo.write(".git-session.toml", "[guard]\nescape = \"warn\"\n");
    repo.git(["add", ".git-session.toml"]);
    repo.git(["commit", "-q", "-m", "escape warns"]);
    let a = repo.create("A");
    let root = repo.root.clone();
    let (payload, event) = write_call("Write", &a, &root.join("src/lib.rs"));
    let run = hook(&repo, &payload, &[]);
    let v = answer(&run, event).expect("a word to the model");
    assert!(
        v["hookSpecificOutput"].get("permissionDecision").is_none(),
        "{v}"
    );
    let text = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(text.contains("goes through"), "{text}");
    write_in(&root, "w.txt", "A\n");
    repo.git(["add", "w.txt"]);
    let out = git_session_env(&repo, &root, "A", &[]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("a worktree not its own"),
        "{}",
        out.stderr
    );
}

/// An agent of session A that starts in the main worktree (a subagent whose isolation failed,
/// an agent started before it entered its worktree) is told where it is and where it belongs,
/// at SessionStart and at its first tool call from there, once each, and it is audited.
#[test]
fn an_agent_outside_its_worktree_is_told_at_once() {
    let repo = guarded();
    let a = repo.create("A");
    let root = repo.root.clone();
    let env = [("GIT_SESSION", "A")];
    let start = json!({"session_id": "claude-out", "cwd": root, "hook_event_name": "SessionStart",
                       "source": "startup"});
    let text = crate::context_support::context_of(&hook(&repo, &start, &env)).expect("identity");
    let told = format!("but it runs in {}, outside that worktree", root.display());
    assert!(text.contains(&told), "{text}");
    assert!(text.contains(&format!("`cd {}`", a.display())), "{text}");
    // A subagent of another agent session, first seen at a tool call in the main worktree.
    let tool = json!({"session_id": "claude-sub", "agent_id": "sub-1", "cwd": root,
                      "hook_event_name": "PostToolUse", "tool_name": "Bash",
                      "tool_input": {"command": "ls"}, "tool_response": {"stdout": ""}});
    let first = hook(&repo, &tool, &env);
    let v = answer(&first, "PostToolUse").expect("told at its first tool call");
    let said = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(said.contains(&told), "{said}");
    // Once: the next call from there says nothing more.
    assert!(answer(&hook(&repo, &tool, &env), "PostToolUse").is_none());
    let audit = std::fs::read_to_string(repo.store().join("audit.log")).unwrap();
    assert_eq!(
        audit
            .matches("\"event\":\"context-outside-worktree\"")
            .count(),
        2,
        "{audit}"
    );
}

/// A damaged `.git-session.toml` never switches the hook's refusals off: the write into the
/// main worktree is still denied, and the damage is audited.
#[test]
fn a_damaged_configuration_keeps_the_agent_in_its_worktree() {
    let repo = guarded();
    let a = repo.create("A");
    // Damaged where the hook looks for it, whichever worktree's copy that is.
    for dir in [&repo.root, &a] {
        write_in(dir, ".git-session.toml", "wortrees_dir = \"x\"\n[guard\n");
    }
    let (payload, event) = write_call("Write", &a, &repo.root.join("src/lib.rs"));
    assert!(refusal(&repo, &payload, event).is_some());
    let audit = std::fs::read_to_string(repo.store().join("audit.log")).unwrap();
    assert!(
        audit.contains("\"event\":\"context-config-damaged\""),
        "{audit}"
    );
}
