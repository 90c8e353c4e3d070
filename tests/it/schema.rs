//! The JSON Schemas under `schema/` describe what the real binary prints with `--json`.
//!
//! A repository is put through the states each output can show (unmerged commits, dirty files,
//! claims, a locked, a missing, a damaged, an attached and a kept session, archives, context fills,
//! thresholds fired, a wrap-up, hooks installed and not, handoff notes), and every `--json`
//! output is validated against its checked-in schema (draft 2020-12, formats checked) twice: as
//! published, where keys may be added, and closed (`additionalProperties: false` on every
//! object), so a key the binary prints but the schema does not describe fails here rather than
//! going unpublished.

use crate::common;
use common::TestRepo;
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

fn schema_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("schema")
}

fn schema(name: &str) -> Value {
    let path = schema_dir().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

/// `schema` with `additionalProperties: false` wherever it describes an object's properties.
fn closed(mut schema: Value) -> Value {
    fn walk(v: &mut Value) {
        match v {
            Value::Object(map) => {
                if map.contains_key("properties") && !map.contains_key("additionalProperties") {
                    map.insert("additionalProperties".into(), json!(false));
                }
                map.values_mut().for_each(walk);
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut schema);
    schema
}

/// Fails, naming every violation, unless `instance` (the output of `what`) fits `name`.
#[track_caller]
fn check(name: &str, what: &str, instance: &Value) {
    let published = schema(name);
    for (form, s) in [
        ("published", published.clone()),
        ("closed", closed(published)),
    ] {
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .build(&s)
            .unwrap_or_else(|e| panic!("{name} does not compile: {e}"));
        let errors: Vec<String> = validator
            .iter_errors(instance)
            .map(|e| format!("{} (at {})", e, e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "`{what}` does not fit schema/{name} ({form}):\n  {}\n{instance:#}",
            errors.join("\n  ")
        );
    }
}

/// Runs `git-session ARGS` in `dir` and returns its stdout as JSON.
fn json_in(repo: &TestRepo, dir: &Path, args: &[&str]) -> Value {
    repo.run_in(dir, args).ok().json()
}

/// Runs `git-session ARGS` in `dir` with `stdin`, asserting success.
fn with_stdin(repo: &TestRepo, dir: &Path, args: &[&str], stdin: &str) -> common::Run {
    let mut child = repo
        .cmd_in(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    common::to_run(child.wait_with_output().unwrap()).ok()
}

/// A Claude Code transcript whose context holds `tokens`.
fn transcript(dir: &Path, name: &str, tokens: u64) -> PathBuf {
    let path = dir.join(format!("{name}.jsonl"));
    let user = json!({"type": "user", "message": {"role": "user", "content": "go"}});
    let assistant = json!({"isSidechain": false, "type": "assistant", "uuid": name,
        "message": {"id": format!("msg_{name}"), "type": "message", "role": "assistant",
                    "model": "claude-sonnet-4-5-20250929", "content": [],
                    "usage": {"input_tokens": 3, "cache_creation_input_tokens": 997,
                              "cache_read_input_tokens": tokens - 1000, "output_tokens": 5}}});
    std::fs::write(&path, format!("{user}\n{assistant}\n")).unwrap();
    path
}

#[test]
fn every_json_output_fits_its_published_schema() {
    let repo = TestRepo::new();
    let busy = repo.create("busy");
    repo.commit_file(&busy, "src/login.rs", "fn login() {}\n", "login");
    common::write_in(&busy, "notes.txt", "dirty\n");
    repo.run_in(&busy, ["claim", "src"]).ok();
    with_stdin(
        &repo,
        &busy,
        &["handoff", "write"],
        "# Next\n\nWrite the tests.\n",
    );

    // Context: an agent linked at SessionStart, past 70 % of the budget, then wrapped up.
    let agent = "0b1c2d3e-1111-2222-3333-444455556666";
    let t = transcript(&repo.base(), "t75", 125_250);
    for payload in [
        json!({"session_id": agent, "cwd": busy, "hook_event_name": "SessionStart",
               "source": "startup"}),
        json!({"session_id": agent, "transcript_path": t, "cwd": busy,
               "hook_event_name": "PostToolUse", "tool_name": "Bash",
               "tool_input": {"command": "ls"}}),
    ] {
        with_hook(&repo, &busy, &payload);
    }
    repo.run_in(&busy, ["context", "wrapped-up", "--scope", "essential"])
        .ok();

    let locked = repo.create("locked");
    repo.git(
        ["worktree", "lock", "--reason", "on a USB disk"]
            .into_iter()
            .chain([locked.to_str().unwrap()]),
    );
    let lost = repo.create("lost");
    std::fs::remove_dir_all(&lost).unwrap();
    // Damaged: git no longer knows its worktree (its admin entry is gone).
    repo.create("torn");
    std::fs::remove_dir_all(repo.root.join(".git/worktrees/torn")).unwrap();
    // An archive: a forced cleanup of work, then the label reused.
    let redo = repo.create("redo");
    repo.commit_file(&redo, "a.txt", "a\n", "a");
    repo.run(["cleanup", "redo", "--force", "--yes"]).ok();
    repo.create("redo");
    repo.run(["create", "--attach", "here"]).ok();
    // Kept: the agent session that made it ended while it held a commit of its own.
    let agent = repo.create("agent");
    repo.commit_file(&agent, "b.txt", "b\n", "b");
    let removal = json!({"worktree_path": agent, "cwd": repo.root});
    let mut hook = repo
        .cmd_in(&repo.root)
        .args(["worktree-hook", "remove"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    hook.stdin
        .take()
        .unwrap()
        .write_all(removal.to_string().as_bytes())
        .unwrap();
    // Exit 1: the worktree was kept (Claude Code then says so).
    common::to_run(hook.wait_with_output().unwrap()).fails(1);

    // A label with a slash, claiming a path: its label fits every schema too.
    let slashed = repo.create("fix/login");
    repo.run_in(&slashed, ["claim", "login.txt"]).ok();

    let list = json_in(&repo, &repo.root, &["list", "--json"]);
    assert_eq!(list.as_array().unwrap().len(), 8, "{list:#}");
    check("list.schema.json", "list --json", &list);
    let states: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["state"].as_str().unwrap())
        .collect();
    assert!(states.contains(&"missing"), "{states:?}");
    assert!(states.contains(&"damaged"), "{states:?}");

    for label in [
        "busy",
        "locked",
        "lost",
        "torn",
        "redo",
        "here",
        "agent",
        "fix/login",
    ] {
        let info = json_in(&repo, &repo.root, &["info", label, "--json"]);
        check("info.schema.json", &format!("info {label} --json"), &info);
    }
    let info = json_in(&repo, &repo.root, &["info", "busy", "--json"]);
    assert!(!info["unmerged_commits"].as_array().unwrap().is_empty());
    assert!(!info["claims"].as_array().unwrap().is_empty());
    assert!(info["context"].is_object(), "{info:#}");
    let redo = json_in(&repo, &repo.root, &["info", "redo", "--json"]);
    assert!(!redo["archives"].as_array().unwrap().is_empty(), "{redo:#}");
    let locked = json_in(&repo, &repo.root, &["info", "locked", "--json"]);
    assert_eq!(locked["locked"], "on a USB disk");
    let kept = json_in(&repo, &repo.root, &["info", "agent", "--json"]);
    assert!(kept["kept"].is_object(), "{kept:#}");
    let torn = json_in(&repo, &repo.root, &["info", "torn", "--json"]);
    assert_eq!(torn["damage"]["kind"], "unregistered", "{torn:#}");
    // Gone before the hooks are installed: `hooks install` stops at a worktree without its
    // admin entry (libgit2 cannot open it), which is the hooks' own business.
    repo.run(["cleanup", "--force", "torn"]).ok();

    let claims = json_in(&repo, &repo.root, &["claims", "--json"]);
    assert!(!claims.as_array().unwrap().is_empty());
    check("claims.schema.json", "claims --json", &claims);

    let status = json_in(&repo, &busy, &["context", "status", "--json"]);
    assert_eq!(status["fired"], json!([70]), "{status:#}");
    assert_eq!(status["wrapped_up"]["scope"], "essential", "{status:#}");
    check(
        "context-status.schema.json",
        "context status --json",
        &status,
    );
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/transcripts/codex-rollout.jsonl");
    let of_file = json_in(
        &repo,
        &repo.root,
        &[
            "context",
            "status",
            "--json",
            "--transcript",
            fixture.to_str().unwrap(),
        ],
    );
    check(
        "context-status.schema.json",
        "context status --json --transcript",
        &of_file,
    );
    let statusline = json!({"session_id": agent, "transcript_path": t, "cwd": busy,
        "model": {"id": "claude-sonnet-4-5-20250929", "display_name": "Sonnet 4.5"}});
    for (what, stdin) in [
        ("a statusline payload", statusline.to_string()),
        ("an unreadable payload", "not json".to_string()),
    ] {
        let v = with_stdin(
            &repo,
            &busy,
            &["context", "status", "--stdin", "--json"],
            &stdin,
        )
        .json();
        check(
            "context-status.schema.json",
            &format!("context status --stdin --json with {what}"),
            &v,
        );
    }

    // Before the install the guard is not in force: the status says so with exit 1.
    let hooks = repo.run(["hooks", "status", "--json"]).fails(1).json();
    assert_eq!(hooks[0]["in_force"], false);
    check("hooks-status.schema.json", "hooks status --json", &hooks);
    repo.run(["hooks", "install"]).ok();
    let hooks = json_in(&repo, &repo.root, &["hooks", "status", "--json"]);
    assert_eq!(hooks[0]["state"], "installed");
    check("hooks-status.schema.json", "hooks status --json", &hooks);

    let notes = json_in(&repo, &repo.root, &["handoff", "list", "--all", "--json"]);
    assert_eq!(notes.as_array().unwrap().len(), 1, "{notes:#}");
    check("handoff-list.schema.json", "handoff list --json", &notes);
}

fn with_hook(repo: &TestRepo, dir: &Path, payload: &Value) {
    let mut child = repo
        .cmd_in(dir)
        .args(["context", "hook"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
}

/// Every subcommand path that has a `--json` flag, e.g. `context status`.
fn json_commands(cmd: &clap::Command, path: &mut Vec<String>, out: &mut Vec<String>) {
    if cmd.get_arguments().any(|a| a.get_long() == Some("json")) {
        out.push(path.join(" "));
    }
    for sub in cmd.get_subcommands() {
        path.push(sub.get_name().to_string());
        json_commands(sub, path, out);
        path.pop();
    }
}

#[test]
fn every_json_command_has_a_versioned_2020_12_schema_and_nothing_else_is_there() {
    let mut commands = Vec::new();
    json_commands(&git_session::cli::command(), &mut Vec::new(), &mut commands);
    let mut expected: Vec<String> = commands
        .iter()
        .map(|c| format!("{}.schema.json", c.replace(' ', "-")))
        .collect();
    expected.sort();
    let mut present: Vec<String> = std::fs::read_dir(schema_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".json"))
        .collect();
    present.sort();
    assert_eq!(present, expected, "commands with --json: {commands:?}");

    for name in &present {
        let s = schema(name);
        assert_eq!(
            s["$schema"], "https://json-schema.org/draft/2020-12/schema",
            "{name}"
        );
        assert_eq!(s["version"], 1, "{name} names its version");
        if let Err(e) = jsonschema::draft202012::meta::validate(&s) {
            panic!("{name} is no valid 2020-12 schema: {e}");
        }
    }

    // `info` is one `list` object plus its own fields: the shared ones are described alike.
    let list = schema("list.schema.json");
    let info = schema("info.schema.json");
    let row = &list["items"]["properties"];
    for (key, def) in row.as_object().unwrap() {
        assert_eq!(
            &info["properties"][key], def,
            "info and list differ on {key}"
        );
    }
    let required = |v: &Value| -> Vec<String> {
        v["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k.as_str().unwrap().to_string())
            .collect()
    };
    let info_required = required(&info);
    for key in required(&list["items"]) {
        assert!(info_required.contains(&key), "info does not require {key}");
    }
    // The README links the schemas.
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    for name in &present {
        assert!(
            readme.contains(&format!("schema/{name}")),
            "README does not link schema/{name}"
        );
    }
}
