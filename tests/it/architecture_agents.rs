//! The agent seam (issue 33): a fact about one agent lives in the agents table
//! (`src/context/agents/`), and code outside the seam reads facts and never names an agent. So
//! adding an agent touches its row, its transcript reader, its budget rule, its answer shapes,
//! tests and docs, and nothing else.
//!
//! The rule, read from the source: outside [`SEAM`], product code (comments, `#[cfg(test)]`
//! items, `tests.rs` and `*_tests.rs` files aside) neither names a variant of `Agent`
//! (`Agent::Codex`) nor holds an agent's id as a string literal (`"codex"`), but for the
//! [`ALLOWED`] exceptions, each with its reason. The agents and their ids come from the library
//! itself, so a fifth agent is covered without a word here.

use crate::architecture::rust_files;
use git_session::internals::Agent;
use std::path::PathBuf;

/// The seam's files and folders, relative to `src/`: the table (and the `Agent` type), each
/// agent's transcript reader, its budget rule and the compaction keys of its settings, and the
/// shapes of its answers.
const SEAM: &[&str] = &[
    "context/agents/",
    "context/transcript/formats.rs",
    "context/budget.rs",
    "context/settings.rs",
    "cli/commands/context/render.rs",
];

/// Names of agents allowed outside the seam: (file, the exact text, why).
const ALLOWED: &[(&str, &str, &str)] = &[
    (
        "cli/commands/context/install.rs",
        "Agent::Codex",
        "the hidden `--codex` flag, kept as an alias of `--agent codex`",
    ),
    (
        "cli/commands/context/install.rs",
        "Agent::Gemini",
        "the hidden `--gemini` flag, kept as an alias of `--agent gemini`",
    ),
    (
        "cli/commands/context/install.rs",
        "\"codex\"",
        "clap's name of the hidden `--codex` flag, which `--gemini` conflicts with",
    ),
];

fn src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The line with its `//` comment cut, string literals kept (a `//` inside one is not a
/// comment), and whether a string is still open at its end.
fn code_of(line: &str, mut in_string: bool) -> (String, bool) {
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if in_string => i += 1,
            b'"' => in_string = !in_string,
            b'\'' if !in_string => {
                // A char literal such as '"' or '\'' must not open a string.
                if bytes.get(i + 2) == Some(&b'\'') {
                    i += 2;
                } else if bytes.get(i + 1) == Some(&b'\\') && bytes.get(i + 3) == Some(&b'\'') {
                    i += 3;
                }
            }
            b'/' if !in_string && bytes.get(i + 1) == Some(&b'/') => {
                return (line[..i].to_string(), false);
            }
            _ => {}
        }
        i += 1;
    }
    (line.to_string(), in_string)
}

/// How much a line of code opens or closes braces, outside string literals.
fn depth_change(code: &str) -> i64 {
    let mut in_string = false;
    let mut change = 0;
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if in_string => i += 1,
            b'"' => in_string = !in_string,
            b'\'' if !in_string && bytes.get(i + 2) == Some(&b'\'') => i += 2,
            b'{' if !in_string => change += 1,
            b'}' if !in_string => change -= 1,
            _ => {}
        }
        i += 1;
    }
    change
}

/// The product code of a file: each line's number and code, without comments and without any
/// `#[cfg(test)]` item (a module, a function, a `use`), wherever it stands in the file.
fn product_code(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut in_string = false;
    // Skipping a test item: the brace depth inside it, and whether its body was entered.
    let mut skipping: Option<(i64, bool)> = None;
    for (n, line) in text.lines().enumerate() {
        let (code, open) = code_of(line, in_string);
        let was_in_string = in_string;
        in_string = open;
        let trimmed = code.trim();
        if let Some((depth, entered)) = skipping.as_mut() {
            if trimmed.starts_with("#[") && !*entered {
                continue;
            }
            *depth += depth_change(&code);
            *entered |= code.contains('{');
            let ended = (*entered && *depth <= 0) || (!*entered && trimmed.ends_with(';'));
            if ended {
                skipping = None;
            }
            continue;
        }
        if !was_in_string && trimmed.starts_with("#[cfg(test)]") {
            skipping = Some((0, false));
            continue;
        }
        if !trimmed.is_empty() {
            out.push((n + 1, code));
        }
    }
    out
}

fn in_seam(rel: &str) -> bool {
    SEAM.iter().any(|s| {
        if s.ends_with('/') {
            rel.starts_with(s)
        } else {
            rel == *s
        }
    })
}

fn is_unit_test_file(rel: &str) -> bool {
    rel.ends_with("/tests.rs") || rel.ends_with("_tests.rs")
}

/// Each place in `code` that names an agent: a variant (`Agent::Codex`, not `Agent::ALL` or
/// `Agent::detect`) or an id as a whole string literal (`"codex"`).
fn agent_names(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    for agent in Agent::ALL {
        let variant = format!("Agent::{agent:?}");
        let mut rest = code;
        while let Some(at) = rest.find(&variant) {
            let after = &rest[at + variant.len()..];
            let whole = !after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
            let before_ok = !rest[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
            if whole && before_ok {
                found.push(variant.clone());
            }
            rest = after;
        }
        let literal = format!("\"{}\"", agent.id());
        found.extend(
            code.match_indices(&literal)
                .filter(|(at, _)| !code[..*at].ends_with('\\'))
                .map(|_| literal.clone()),
        );
    }
    found
}

/// Where product code outside the seam names an agent, with what it names, `ALLOWED` aside;
/// and each allowed exception that is no longer there.
fn violations(files: &[(String, String)]) -> (Vec<String>, Vec<String>) {
    let mut found = Vec::new();
    let mut used = vec![false; ALLOWED.len()];
    for (rel, text) in files {
        if in_seam(rel) || is_unit_test_file(rel) {
            continue;
        }
        for (n, code) in product_code(text) {
            for name in agent_names(&code) {
                let allowed = ALLOWED
                    .iter()
                    .position(|(file, what, _)| file == rel && *what == name);
                match allowed {
                    Some(i) => used[i] = true,
                    None => found.push(format!(
                        "src/{rel}:{n}: names an agent ({name}): make it a fact of the agent \
                         table (src/context/agents/) and read the fact here"
                    )),
                }
            }
        }
    }
    let stale = ALLOWED
        .iter()
        .zip(used)
        .filter(|(_, used)| !used)
        .map(|((file, what, _), _)| format!("src/{file}: {what} is allowed but no longer there"))
        .collect();
    (found, stale)
}

fn product_files() -> Vec<(String, String)> {
    let mut paths = Vec::new();
    rust_files(&src(), &mut paths);
    paths
        .into_iter()
        .map(|path| {
            let rel = path
                .strip_prefix(src())
                .expect("under src")
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(&path).expect("a readable source file");
            (rel, text)
        })
        .collect()
}

#[test]
fn only_the_agent_seam_names_an_agent() {
    let (found, stale) = violations(&product_files());
    assert!(found.is_empty(), "{}", found.join("\n"));
    assert!(
        stale.is_empty(),
        "remove the stale exceptions from ALLOWED:\n{}",
        stale.join("\n")
    );
}

/// The rule sees what it is about, wherever it stands, and passes over comments, test items
/// and the seam. The texts name whichever agents the table holds (`{A}`, `{B}`: the first and
/// the last variant, `{a}`: the first's id), so removing one leaves this test as it is.
#[test]
fn the_seam_rule_catches_what_it_is_about() {
    let (first, last) = (Agent::ALL[0], Agent::ALL[Agent::ALL.len() - 1]);
    let fill = |text: &str| {
        text.replace("{A}", &format!("Agent::{first:?}"))
            .replace("{B}", &format!("Agent::{last:?}"))
            .replace("{a}", first.id())
    };
    let caught = |rel: &str, text: &str| violations(&[(rel.to_string(), fill(text))]).0.len();
    assert_eq!(
        caught("context/x.rs", "let late = matches!(a, {A} | {B});\n"),
        2
    );
    assert_eq!(caught("context/x.rs", "if id == \"{a}\" {}\n"), 1);
    assert_eq!(caught("context/x.rs", "match a { {B} => 1 }\n"), 1);
    // A test item above product code hides only itself.
    let after_a_test_fn = "#[cfg(test)]\nfn t() {\n    {A};\n}\n\nfn f() -> Agent { {B} }\n";
    assert_eq!(caught("context/x.rs", after_a_test_fn), 1);
    let after_a_test_use = "#[cfg(test)]\nuse x::{A};\nconst X: Agent = {A};\n";
    assert_eq!(caught("context/x.rs", after_a_test_use), 1);
    // Not names: a comment, a longer name, a model, a method of the type, a test module, the
    // seam, a unit-test file.
    let clean = [
        (
            "context/x.rs",
            "// {A} writes late\nlet x = Agent::ALL; // \"{a}\"\n",
        ),
        (
            "context/x.rs",
            "let m = \"{a}-model-4\"; let d = Agent::detect(p, r);\n",
        ),
        ("context/x.rs", "let n = \"{a} code\"; let x = My{A}s;\n"),
        (
            "context/x.rs",
            "#[cfg(test)]\nmod tests {\n    fn f() { {B}; }\n}\n",
        ),
        ("context/agents/table.rs", "agent: {A}, id: \"{a}\",\n"),
        ("context/budget.rs", "{B} => 1,\n"),
        ("context/x_tests.rs", "{B};\n"),
    ];
    for (rel, text) in clean {
        assert_eq!(caught(rel, text), 0, "{rel}: {}", fill(text));
    }
}
