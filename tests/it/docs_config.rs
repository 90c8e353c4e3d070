//! docs/configuration.md's block is the configuration reference, checked against the reader
//! itself (`Config::load`): it names every key the reader accepts (asked of the reader, so a
//! section added later is found), every value it shows as a default is the default, a key it
//! calls "unset" really has no value by default, every line is valid as written, and every
//! ```toml block of README.md and docs/*.md is a configuration the reader accepts.
//!
//! `Config::load` also applies the user's own file (`$XDG_CONFIG_HOME/git-session/config.toml`)
//! of the process running the tests; every comparison here is between two loads that both
//! include it, so such a file can hide a difference but never invent one (none exists under CI).

use crate::docs_blocks::{blocks_of, doc_files};
use git_session::internals::DEFAULT_RESERVE;
use git_session::internals::{Config, DEFAULT_WINDOW};
use std::collections::BTreeSet;
use std::path::Path;

/// One commented-out line of the reference block.
#[derive(Debug)]
struct Line {
    /// The table it is in (`""` at the top, `context.messages` in a subtable).
    section: String,
    /// The key (`None` for a table header).
    key: Option<String>,
    /// The line uncommented.
    toml: String,
    /// Its comment says the key is unset by default.
    unset: bool,
}

fn reference() -> Vec<Line> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/configuration.md");
    let text = std::fs::read_to_string(path).unwrap();
    let at = text
        .find("## Every key and its default")
        .expect("docs/configuration.md has its reference section");
    let block = blocks_of("docs/configuration.md", &text[at..])
        .into_iter()
        .find(|b| b.lang == "toml")
        .expect("a toml block in the reference section");
    let mut section = String::new();
    let mut lines = Vec::new();
    for line in block.text.lines() {
        let rest = line
            .strip_prefix("# ")
            .or_else(|| line.strip_prefix('#'))
            .unwrap_or_else(|| {
                assert!(line.trim().is_empty(), "not commented out: {line:?}");
                ""
            });
        if let Some(header) = rest.strip_prefix('[') {
            section = header.split(']').next().unwrap().to_string();
            lines.push(Line {
                section: section.clone(),
                key: None,
                toml: rest.to_string(),
                unset: false,
            });
        } else if let Some(key) = key_of(rest) {
            lines.push(Line {
                section: section.clone(),
                key: Some(key),
                toml: rest.to_string(),
                unset: rest.contains("# unset"),
            });
        }
    }
    lines
}

/// The key of `key = value` (bare or quoted); `None` for prose.
fn key_of(rest: &str) -> Option<String> {
    let (key, _) = rest.split_once(" = ")?;
    let key = key.trim();
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let quoted = key.len() > 2 && key.starts_with('"') && key.ends_with('"');
    (bare || quoted).then(|| key.trim_matches('"').to_string())
}

fn load(text: &str) -> Result<Config, String> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".git-session.toml"), text).unwrap();
    Config::load(Some(dir.path())).map_err(|e| e.to_string())
}

/// The loaded configuration as it behaves. Two fields are normalised: `[create] run = []` and
/// `[merge] check = []` from the repository's file mark the (empty) list as the repository's,
/// which asks nothing.
fn behaviour(config: &Config) -> String {
    let mut text = format!("{config:?}");
    if config.create_run.is_empty() {
        text = text.replace("create_run_from_repo: true", "create_run_from_repo: false");
    }
    if config.merge_check.commands.is_empty() {
        text = text.replace(
            "MergeCheck { commands: [], from_repo: true",
            "MergeCheck { commands: [], from_repo: false",
        );
    }
    text
}

fn text_of<'a>(lines: impl Iterator<Item = &'a Line>) -> String {
    lines.map(|l| format!("{}\n", l.toml)).collect()
}

#[test]
fn the_reference_shows_the_real_defaults() {
    // `[notify]` is refused in a repository's file (a clone must not run commands on its
    // agents' events): its lines are checked as the user's own file instead.
    let (user_only, lines): (Vec<Line>, Vec<Line>) =
        reference().into_iter().partition(|l| l.section == "notify");
    assert!(!user_only.is_empty(), "the reference shows [notify]");
    let notify = format!(
        "[notify]\n{}",
        text_of(user_only.iter().filter(|l| l.key.is_some()))
    );
    user_file_accepted(&notify).unwrap_or_else(|e| panic!("{e}\n{notify}"));
    let nothing = behaviour(&load("").unwrap());
    let defaults = text_of(lines.iter().filter(|l| !l.unset));
    let loaded = load(&defaults).unwrap_or_else(|e| panic!("{e}\n{defaults}"));
    assert_eq!(
        behaviour(&loaded),
        nothing,
        "a value docs/configuration.md shows as the default is not the default:\n{defaults}"
    );
    let all = text_of(lines.iter());
    load(&all).unwrap_or_else(|e| panic!("the reference, uncommented, is refused: {e}\n{all}"));
    // Each "unset" key has no value by default: setting it to the value shown changes something.
    for line in lines.iter().filter(|l| l.unset) {
        let header = match line.section.as_str() {
            "" => String::new(),
            section => format!("[{section}]\n"),
        };
        let set = load(&format!("{header}{}\n", line.toml)).unwrap();
        assert_ne!(
            behaviour(&set),
            nothing,
            "{:?} is called unset but its value is the default",
            line.toml
        );
    }
    // The fallbacks the comments name are the code's.
    let comment = |key: &str| {
        let line = lines
            .iter()
            .find(|l| l.key.as_deref() == Some(key))
            .unwrap();
        line.toml.split_once('#').unwrap().1.to_string()
    };
    assert!(comment("window").contains(&DEFAULT_WINDOW.to_string()));
    assert!(comment("reserve").contains(&DEFAULT_RESERVE.to_string()));
}

/// The keys the reader lists for a table, asked with a key it cannot know; `None` when the
/// table takes any key (a map such as `[context.messages]`).
fn accepted(header: &str) -> Option<Vec<String>> {
    let err = load(&format!("{header}zzz_probe = 1\n")).expect_err("an unknown key is refused");
    // serde words it "expected `a`", "expected `a` or `b`", "expected one of `a`, `b`, `c`".
    let (_, list) = err.split_once("expected ")?;
    let names: Vec<String> = list
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    (!names.is_empty()).then_some(names)
}

#[test]
fn the_reference_names_every_key_the_reader_accepts() {
    let lines = reference();
    let keys: BTreeSet<(String, String)> = lines
        .iter()
        .filter_map(|l| Some((l.section.clone(), l.key.clone()?)))
        .collect();
    let tables: BTreeSet<&str> = lines.iter().map(|l| l.section.as_str()).collect();
    let mut missing = Vec::new();
    let top = accepted("").expect("the top level has a fixed set of keys");
    assert!(top.contains(&"base".to_string()), "{top:?}");
    for name in top {
        if keys.contains(&(String::new(), name.clone())) {
            continue;
        }
        if !tables.contains(name.as_str()) {
            missing.push(name);
            continue;
        }
        for key in accepted(&format!("[{name}]\n")).unwrap_or_default() {
            let sub = format!("{name}.{key}");
            if !keys.contains(&(name.clone(), key.clone())) && !tables.contains(sub.as_str()) {
                missing.push(sub);
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/configuration.md does not name {missing:?}: add each to its block, commented out \
         with its default (`# key = value`, or `# key = example   # unset: what is used`)"
    );
}

#[test]
fn every_toml_block_in_the_docs_is_a_configuration_the_reader_accepts() {
    let mut seen = 0;
    for path in doc_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        for block in blocks_of(&name, &text)
            .into_iter()
            .filter(|b| b.lang == "toml")
        {
            seen += 1;
            if block.how == crate::docs_blocks::How::UserFile {
                user_file_accepted(&block.text).unwrap_or_else(|e| {
                    panic!("{name}:{}: refused: {e}\n{}", block.line, block.text)
                });
                continue;
            }
            load(&block.text)
                .unwrap_or_else(|e| panic!("{name}:{}: refused: {e}\n{}", block.line, block.text));
        }
    }
    assert!(seen >= 2, "the reference and the across-machines sample");
}

/// Whether the binary accepts `text` as the user's own configuration file (`list` runs with it
/// in `$XDG_CONFIG_HOME/git-session/config.toml`).
fn user_file_accepted(text: &str) -> Result<(), String> {
    let repo = crate::common::TestRepo::new();
    let xdg = repo.home.join("xdg");
    std::fs::create_dir_all(xdg.join("git-session")).unwrap();
    std::fs::write(xdg.join("git-session/config.toml"), text).unwrap();
    let out = repo
        .cmd_in(&repo.root)
        .env("XDG_CONFIG_HOME", &xdg)
        .arg("list")
        .output()
        .unwrap();
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

// The hint of a configuration the reader refused names every key it accepts (a list kept by
// hand beside the reader drifted from it once: `[context] reserve` was missing).
#[test]
fn a_refused_configuration_hints_every_key_the_reader_accepts() {
    let repo = crate::common::TestRepo::new();
    std::fs::write(repo.root.join(".git-session.toml"), "zzz_probe = 1\n").unwrap();
    let out = repo.run(["list"]).fails(1);
    let hint = out
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("hint: "))
        .unwrap_or_else(|| panic!("no hint: {}", out.stderr))
        .to_string();
    let mut missing = Vec::new();
    for name in accepted("").expect("the top level has a fixed set of keys") {
        let Some(keys) = accepted(&format!("[{name}]\n")).filter(|_| {
            load(&format!("{name} = 1\n")).is_err_and(|e| e.contains("expected struct"))
        }) else {
            if !hint.contains(&name) {
                missing.push(name);
            }
            continue;
        };
        for key in keys {
            if !hint.contains(&format!("[{name}]")) || !hint.contains(&key) {
                missing.push(format!("{name}.{key}"));
            }
        }
    }
    assert!(missing.is_empty(), "the hint misses {missing:?}: {hint}");
}
