//! Issue 8 item 21: property tests (proptest; cargo-fuzz needs a nightly toolchain this project
//! does not assume). Each property runs `GIT_SESSION_PROPTEST_CASES` cases (default 64, fewer
//! for the ones that build repositories); see RELIABILITY.md for the counts run.
//!
//! Public functions exercised, narrowest available: `context::transcript::read`,
//! `context::hook::Payload::parse`, `store::Store::read::<session::SessionRecord>`,
//! `staged::staged_paths`, `status::dirty_files`.
use crate::common;
use common::TestRepo;
use git_session::internals::transcript;
use git_session::internals::Agent;
use proptest::prelude::*;
use std::collections::BTreeSet;

fn cases(default: u32) -> ProptestConfig {
    let n = std::env::var("GIT_SESSION_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    ProptestConfig {
        cases: n,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// One transcript record, as the model of what it means.
#[derive(Debug, Clone)]
enum Rec {
    /// A record that decides nothing (a user turn), padded to cross read-block boundaries.
    User(usize),
    Assistant {
        sidechain: bool,
        api_error: bool,
        synthetic: bool,
        usage: Option<(u64, u64, u64)>,
        model: String,
    },
    Compact(Option<u64>),
    CodexTokens(Option<u64>, u64),
    CodexCompacted,
    /// A line that is not JSON.
    Garbage(Vec<u8>),
}

/// What a record decides, if it decides (tokens, window, model, compacted, format).
type Answer = (
    Option<u64>,
    Option<u64>,
    Option<String>,
    bool,
    Option<Agent>,
);

fn decides(r: &Rec) -> Option<Answer> {
    match r {
        Rec::Assistant {
            sidechain: false,
            api_error: false,
            synthetic: false,
            usage: Some((a, b, c)),
            model,
        } => Some((
            Some(a.saturating_add(*b).saturating_add(*c)),
            None,
            Some(model.clone()),
            false,
            Some(Agent::Claude),
        )),
        Rec::Compact(post) => Some((*post, None, None, true, Some(Agent::Claude))),
        Rec::CodexTokens(Some(total), window) => Some((
            Some(*total),
            Some(*window).filter(|w| *w > 0),
            None,
            false,
            Some(Agent::Codex),
        )),
        Rec::CodexCompacted => Some((None, None, None, true, Some(Agent::Codex))),
        _ => None,
    }
}

fn line(r: &Rec) -> Vec<u8> {
    use serde_json::json;
    let v = match r {
        Rec::User(pad) => json!({"type": "user", "message": {"content": "u".repeat(*pad)}}),
        Rec::Assistant {
            sidechain,
            api_error,
            synthetic,
            usage,
            model,
        } => {
            let model = if *synthetic { "<synthetic>" } else { model };
            let mut m = json!({"model": model, "id": "msg"});
            if let Some((a, b, c)) = usage {
                m["usage"] = json!({"input_tokens": a, "cache_read_input_tokens": b,
                    "cache_creation_input_tokens": c});
            }
            let mut v = json!({"type": "assistant", "isSidechain": sidechain, "message": m});
            if *api_error {
                v["isApiErrorMessage"] = json!(true);
            }
            v
        }
        Rec::Compact(post) => {
            let mut v = json!({"type": "system", "subtype": "compact_boundary"});
            if let Some(p) = post {
                v["compactMetadata"] = json!({"postTokens": p});
            }
            v
        }
        Rec::CodexTokens(total, window) => {
            let info = total.map(|t| {
                json!({"last_token_usage": {"total_tokens": t}, "model_context_window": window})
            });
            json!({"type": "event_msg", "payload": {"type": "token_count", "info": info}})
        }
        Rec::CodexCompacted => json!({"type": "compacted", "payload": {}}),
        Rec::Garbage(bytes) => {
            let mut b: Vec<u8> = bytes
                .iter()
                .map(|&c| if c == b'\n' { b' ' } else { c })
                .collect();
            b.insert(0, b'{');
            return b;
        }
    };
    serde_json::to_vec(&v).unwrap()
}

fn token() -> impl Strategy<Value = u64> {
    prop_oneof![0u64..300_000, any::<u64>()]
}

fn rec() -> impl Strategy<Value = Rec> {
    prop_oneof![
        3 => prop_oneof![0usize..200, 0usize..150_000].prop_map(Rec::User),
        4 => (any::<bool>(), any::<bool>(), any::<bool>(),
              proptest::option::weighted(0.9, (token(), token(), token())),
              "[a-z0-9-]{1,12}")
            .prop_map(|(s, e, y, usage, model)| Rec::Assistant {
                sidechain: s && e, // both rarer than either
                api_error: e && !s && y,
                synthetic: y && !e && s,
                usage,
                model,
            }),
        1 => proptest::option::of(token()).prop_map(Rec::Compact),
        1 => (proptest::option::weighted(0.8, token()), 0u64..1_000_000)
            .prop_map(|(t, w)| Rec::CodexTokens(t, w)),
        1 => Just(Rec::CodexCompacted),
        1 => proptest::collection::vec(any::<u8>(), 0..64).prop_map(Rec::Garbage),
    ]
}

proptest! {
    #![proptest_config(cases(64))]

    /// The backward block reader equals a forward scan keeping the last deciding record, with a
    /// half-written last line (any deciding record cut short) never deciding.
    #[test]
    fn transcript_reader_equals_a_forward_scan(
        recs in proptest::collection::vec(rec(), 0..40),
        torn in proptest::option::of((rec(), 0.0f64..1.0)),
    ) {
        let mut file = Vec::new();
        for r in &recs {
            file.extend_from_slice(&line(r));
            file.push(b'\n');
        }
        if let Some((r, cut)) = &torn {
            let l = line(r);
            let keep = ((l.len() as f64) * cut) as usize;
            file.extend_from_slice(&l[..keep.min(l.len().saturating_sub(1))]);
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, &file).unwrap();
        let got = transcript::read(&path).unwrap();
        let want = recs.iter().rev().find_map(decides);
        let got = (got.tokens, got.window, got.model, got.compacted, got.format);
        let want = want.unwrap_or((None, None, None, false, None));
        prop_assert_eq!(got, want);
    }

    /// The hook payload parser answers (a payload or an error) for any bytes.
    #[test]
    fn payload_parser_never_panics_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = git_session::internals::Payload::parse(&bytes);
    }

    /// ... and for any JSON shaped like a payload, with every field of any type.
    #[test]
    fn payload_parser_never_panics_on_json(
        fields in proptest::collection::vec(
            (prop_oneof![
                "(session_id|transcript_path|cwd|hook_event_name|tool_name|tool_input|model)",
                "[a-z_]{1,10}"],
             json_value()), 0..8)
    ) {
        let map: serde_json::Map<String, serde_json::Value> =
            fields.into_iter().collect();
        let bytes = serde_json::to_vec(&map).unwrap();
        let _ = git_session::internals::Payload::parse(&bytes);
    }

    /// The session-record reader answers for any bytes in the file (and any TOML-looking text).
    #[test]
    fn state_file_reader_never_panics(
        bytes in prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..512),
            "(label|branch|worktree|state|created|claims|\\[|\\]|=|\"|[0-9]{1,25}|\n| ){0,60}"
                .prop_map(String::into_bytes),
        ]
    ) {
        let dir = tempfile::tempdir().unwrap();
        let store = git_session::internals::Store::at(dir.path());
        std::fs::create_dir_all(dir.path().join("sessions")).unwrap();
        std::fs::write(dir.path().join("sessions/x.toml"), &bytes).unwrap();
        let _ = store.read::<git_session::internals::SessionRecord>("sessions/x.toml");
    }
}

fn json_value() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        ".{0,20}".prop_map(Value::String),
        Just(Value::String("/".into())),
        Just(Value::String("../../x".into())),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z_]{1,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// One step on a generated repository.
#[derive(Debug, Clone)]
enum Op {
    /// Write file `f` (and stage it when true).
    Write(usize, bool),
    /// Delete file `f` from the worktree (and stage the deletion when true).
    Delete(usize, bool),
    Commit,
}

const FILES: [&str; 10] = [
    "a", "b.txt", "d/a", "d/b", "d/e/f", "d/e/g", "d-x", "e/x", "e/y/z", "zz",
];

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..FILES.len(), any::<bool>()).prop_map(|(f, s)| Op::Write(f, s)),
        2 => (0..FILES.len(), any::<bool>()).prop_map(|(f, s)| Op::Delete(f, s)),
        1 => Just(Op::Commit),
    ]
}

fn nul_split(out: &str) -> BTreeSet<String> {
    out.split('\0')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

proptest! {
    #![proptest_config(cases(16))]

    /// Both index readers equal git on generated repositories: the guard's staged paths equal
    /// `git diff --cached --name-only`, `list`'s dirty files equal `git status --porcelain`
    /// (untracked files listed one by one), for index versions 2, 3 and 4.
    #[test]
    fn index_readers_equal_git(ops in proptest::collection::vec(op(), 1..25), version in 2u8..=4) {
        let repo = TestRepo::new();
        let root = repo.root.clone();
        repo.git(["update-index", "--index-version", &version.to_string()]);
        for (i, op) in ops.iter().enumerate() {
            match *op {
                Op::Write(f, stage) => {
                    let path = root.join(FILES[f]);
                    if path.parent().unwrap().is_file() || path.is_dir() {
                        continue;
                    }
                    common::write_in(&root, FILES[f], &format!("{i}\n"));
                    if stage {
                        repo.git(["add", "--", FILES[f]]);
                    }
                }
                Op::Delete(f, stage) => {
                    let _ = std::fs::remove_file(root.join(FILES[f]));
                    if stage {
                        repo.git(["rm", "-q", "--cached", "--ignore-unmatch", "--", FILES[f]]);
                    }
                }
                Op::Commit => {
                    repo.git(["commit", "-q", "--allow-empty", "-m", "step"]);
                }
            }
        }
        let opened = git_session::internals::Checkout::open(&root).unwrap();
        let index = root.join(".git/index");
        let staged: BTreeSet<String> =
            git_session::internals::staged_paths(opened.objects(), &index).unwrap().into_iter().collect();
        let want = nul_split(&repo.git(["diff", "--cached", "--no-renames", "--name-only", "-z"]));
        prop_assert_eq!(&staged, &want, "staged, ops {:?}", ops);

        let dirty: BTreeSet<String> =
            git_session::internals::dirty_files(&root).unwrap().into_iter().collect();
        let status = repo.git(["status", "--porcelain", "-z", "--no-renames",
            "--untracked-files=all"]);
        let want: BTreeSet<String> = status
            .split('\0')
            .filter(|s| s.len() > 3)
            .map(|s| s[3..].to_string())
            .collect();
        prop_assert_eq!(&dirty, &want, "status, ops {:?}", ops);
    }
}

/// Found by `transcript_reader_equals_a_forward_scan`: usage numbers whose sum overflows u64
/// panicked in the reader (debug) or wrapped (release); the sum saturates.
#[test]
fn regression_usage_sum_overflow_saturates() {
    let rec = Rec::Assistant {
        sidechain: false,
        api_error: false,
        synthetic: false,
        usage: Some((u64::MAX, 1, 0)),
        model: "m".into(),
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let mut bytes = line(&rec);
    bytes.push(b'\n');
    std::fs::write(&path, bytes).unwrap();
    assert_eq!(transcript::read(&path).unwrap().tokens, Some(u64::MAX));
}
