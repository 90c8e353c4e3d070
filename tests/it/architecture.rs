//! The house rules, read from the source: floors, commands that do not call each other, one voice
//! for the user, and files a reader can hold in their head. ARCHITECTURE.md draws the same floors;
//! this test is what keeps them true.
//!
//! It reads every `crate::` path in `src/` (comments and unit-test files aside) and names each
//! arrow that breaks a rule, with the file it is in, so a failure says what to move.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The floors, from the bottom. A module may use its own floor and every floor below it. Within a
/// floor, modules may use each other, but no import circle may hold more than two modules.
const FLOORS: &[(&str, &[&str])] = &[
    ("primitives", &["base"]),
    ("git access", &["git"]),
    ("the store", &["store", "config"]),
    ("sessions and claims", &["session", "ownership"]),
    (
        "lifecycle",
        &["lifecycle", "hazards", "shared_claims", "hooks", "handoff"],
    ),
    ("guard and agents", &["guard", "context"]),
    ("the command line", &["cli"]),
];

/// No file in `src/` or `tests/` is longer than this.
const MAX_LINES: usize = 600;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `dir`, in path order (also the agent seam's rule,
/// `architecture_agents`).
pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// A file of `src/` with its code: comments removed, and nothing from a `#[cfg(test)]` item on.
pub(crate) struct Source {
    /// Relative to `src/`, with `/` separators.
    pub rel: String,
    pub code: Vec<(usize, String)>,
}

fn is_unit_test_file(rel: &str) -> bool {
    rel.ends_with("/tests.rs") || rel.ends_with("_tests.rs")
}

pub(crate) fn sources() -> Vec<Source> {
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files
        .into_iter()
        .map(|path| {
            let rel = path
                .strip_prefix(&src)
                .expect("under src")
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(&path).expect("a readable source file");
            let mut code = Vec::new();
            for (n, line) in text.lines().enumerate() {
                let trimmed = line.trim_start();
                if trimmed.starts_with("#[cfg(test)]") {
                    break;
                }
                if trimmed.starts_with("//") {
                    continue;
                }
                let line = match line.find(" //") {
                    Some(at) if !line[..at].contains('"') => &line[..at],
                    _ => line,
                };
                code.push((n + 1, line.to_string()));
            }
            Source { rel, code }
        })
        .filter(|s| !is_unit_test_file(&s.rel))
        .collect()
}

/// The top-level module a file of `src/` belongs to (`lib.rs` and `main.rs` belong to none).
fn module_of(rel: &str) -> Option<&str> {
    let first = rel.split('/').next()?;
    if rel.contains('/') {
        Some(first)
    } else {
        match first.strip_suffix(".rs")? {
            "lib" | "main" => None,
            name => Some(name),
        }
    }
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// Every `crate::a::b...` path in a line, as its segments (a group `crate::{a, b::c}` gives one
/// path per member, each cut at the group's first segment).
fn crate_paths(line: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("crate::") {
        let before = &rest[..at];
        rest = &rest[at + "crate::".len()..];
        if before.ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for member in group[..end].split(',') {
                let member = member.trim();
                if !member.is_empty() {
                    out.push(
                        member
                            .split("::")
                            .map(|s| ident_at(s.trim()).to_string())
                            .collect(),
                    );
                }
            }
            continue;
        }
        let mut segments = Vec::new();
        let mut tail = rest;
        loop {
            let id = ident_at(tail);
            if id.is_empty() {
                break;
            }
            segments.push(id.to_string());
            match tail[id.len()..].strip_prefix("::") {
                Some(next) => tail = next,
                None => break,
            }
        }
        if !segments.is_empty() {
            out.push(segments);
        }
    }
    out
}

fn floor_of(module: &str) -> Option<usize> {
    FLOORS.iter().position(|(_, mods)| mods.contains(&module))
}

/// module -> module it uses -> the first place (file:line) that says so.
fn arrows(sources: &[Source]) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for source in sources {
        let Some(from) = module_of(&source.rel) else {
            continue;
        };
        for (n, line) in &source.code {
            for path in crate_paths(line) {
                let to = &path[0];
                if to != from {
                    out.entry(from.to_string())
                        .or_default()
                        .entry(to.clone())
                        .or_insert_with(|| format!("src/{}:{n}", source.rel));
                }
            }
        }
    }
    out
}

#[test]
fn every_module_stands_on_a_floor() {
    let src = root().join("src");
    let mut unplaced = Vec::new();
    for entry in std::fs::read_dir(&src).expect("src/") {
        let path = entry.expect("an entry").path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let module = name.strip_suffix(".rs").unwrap_or(&name).to_string();
        if module == "lib" || module == "main" {
            continue;
        }
        if path.is_file() {
            unplaced.push(format!(
                "src/{name}: the root holds lib.rs, main.rs and one folder per concept"
            ));
        } else if floor_of(&module).is_none() {
            unplaced.push(format!(
                "src/{name}/: on no floor; add it to FLOORS and ARCHITECTURE.md"
            ));
        }
    }
    assert!(unplaced.is_empty(), "{}", unplaced.join("\n"));
}

#[test]
fn no_arrow_climbs_a_floor() {
    let mut climbing = Vec::new();
    for (from, tos) in arrows(&sources()) {
        let Some(from_floor) = floor_of(&from) else {
            continue;
        };
        for (to, at) in tos {
            match floor_of(&to) {
                Some(to_floor) if to_floor > from_floor => climbing.push(format!(
                    "{at}: {from} ({}) uses {to} ({}), a floor above it",
                    FLOORS[from_floor].0, FLOORS[to_floor].0
                )),
                _ => {}
            }
        }
    }
    assert!(
        climbing.is_empty(),
        "arrows that climb:\n{}",
        climbing.join("\n")
    );
}

/// Strongly connected components of the module graph (Tarjan), each sorted.
pub(crate) fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        next: usize,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a str) {
            self.index.insert(v, self.next);
            self.low.insert(v, self.next);
            self.next += 1;
            self.stack.push(v);
            for w in self.graph.get(v).into_iter().flatten() {
                if !self.index.contains_key(w.as_str()) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w.as_str()]);
                    self.low.insert(v, low);
                } else if self.stack.contains(&w.as_str()) {
                    let low = self.low[v].min(self.index[w.as_str()]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    component.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                component.sort();
                self.found.push(component);
            }
        }
    }
    let mut walk = Walk {
        graph,
        next: 0,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.found
}

#[test]
fn no_import_circle_holds_more_than_two_modules() {
    let arrows = arrows(&sources());
    let graph: BTreeMap<String, BTreeSet<String>> = arrows
        .iter()
        .map(|(from, tos)| (from.clone(), tos.keys().cloned().collect()))
        .collect();
    let big: Vec<String> = circles(&graph)
        .into_iter()
        .filter(|c| c.len() > 2)
        .map(|c| {
            let inside: Vec<String> = c
                .iter()
                .flat_map(|from| {
                    arrows[from]
                        .iter()
                        .filter(|(to, _)| c.contains(to))
                        .map(move |(to, at)| format!("  {from} -> {to} ({at})"))
                })
                .collect();
            format!("{}:\n{}", c.join(", "), inside.join("\n"))
        })
        .collect();
    assert!(big.is_empty(), "import circles:\n{}", big.join("\n"));
}

#[test]
fn the_rules_catch_what_they_are_about() {
    let paths = crate_paths("use crate::{base::clock, ownership, session}; x = crate::git::Repo;");
    let firsts: Vec<&str> = paths.iter().map(|p| p[0].as_str()).collect();
    assert_eq!(firsts, ["base", "ownership", "session", "git"]);
    assert!(crate_paths("$crate::x and notcrate::y").is_empty());
    let graph: BTreeMap<String, BTreeSet<String>> =
        [("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")]
            .iter()
            .fold(BTreeMap::new(), |mut g, (f, t)| {
                g.entry(f.to_string())
                    .or_insert_with(BTreeSet::new)
                    .insert(t.to_string());
                g
            });
    let found = circles(&graph);
    assert!(found.contains(&vec!["a".to_string(), "b".to_string(), "c".to_string()]));
    assert!(found.contains(&vec!["d".to_string()]));
    assert_eq!(
        literals("f(\"git session \\\n    install\", '\"', x)"),
        ["git session \\\n    install"]
    );
    assert_eq!(module_of("cli/commands/list.rs"), Some("cli"));
    assert_eq!(module_of("lib.rs"), None);
    assert!(floor_of("cli") > floor_of("base"));
}

/// The command a file of `src/cli/commands/` belongs to: `create` for `create/mod.rs` and
/// `create/worktree.rs`, `list` for `list.rs`; `None` for `mod.rs` itself.
fn command_of(rel: &str) -> Option<&str> {
    let rest = rel.strip_prefix("cli/commands/")?;
    match rest.split_once('/') {
        Some((dir, _)) => Some(dir),
        None => match rest.strip_suffix(".rs")? {
            "mod" => None,
            name => Some(name),
        },
    }
}

#[test]
fn commands_do_not_call_each_other() {
    let sources = sources();
    let commands: BTreeSet<&str> = sources.iter().filter_map(|s| command_of(&s.rel)).collect();
    let mut calls = Vec::new();
    for source in &sources {
        let Some(me) = command_of(&source.rel) else {
            continue;
        };
        let direct = !source.rel["cli/commands/".len()..].contains('/');
        for (n, line) in &source.code {
            for (at, _) in line.match_indices("commands::") {
                let other = ident_at(&line[at + "commands::".len()..]);
                if other != me && commands.contains(other) {
                    calls.push(format!(
                        "src/{}:{n}: {me} uses the command {other}",
                        source.rel
                    ));
                }
            }
            if direct {
                for (at, _) in line.match_indices("super::") {
                    let other = ident_at(&line[at + "super::".len()..]);
                    if other != me && commands.contains(other) {
                        calls.push(format!(
                            "src/{}:{n}: {me} uses the command {other}",
                            source.rel
                        ));
                    }
                }
            }
        }
    }
    assert!(
        calls.is_empty(),
        "what commands share belongs below them:\n{}",
        calls.join("\n")
    );
}

/// String literals of a line (the text between unescaped double quotes).
fn literals(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let bytes = line.as_bytes();
    let mut start = None;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if start.is_some() => i += 1,
            b'\'' if start.is_none() => {
                // A char literal such as '"' must not open a string.
                if bytes.get(i + 2) == Some(&b'\'') {
                    i += 2;
                } else if bytes.get(i + 1) == Some(&b'\\') && bytes.get(i + 3) == Some(&b'\'') {
                    i += 3;
                }
            }
            b'"' => match start.take() {
                Some(s) => out.push(&line[s..i]),
                None => start = Some(i + 1),
            },
            _ => {}
        }
        i += 1;
    }
    out
}

/// Text written into files, not said to the user: the comment in the block `hooks install` puts
/// into a hook file is part of that file's bytes (uninstall gives back what was there before).
const FILE_CONTENT: &[&str] = &["hooks/text.rs"];

#[test]
fn only_the_command_line_words_errors_and_names_commands() {
    let mut found = Vec::new();
    for source in sources() {
        if module_of(&source.rel) == Some("cli") {
            continue;
        }
        for (n, line) in &source.code {
            if line.contains("UserError") {
                found.push(format!(
                    "src/{}:{n}: a UserError outside the CLI (return a typed error; src/cli words it)",
                    source.rel
                ));
            }
        }
        // Literals may run over several lines (a `\` continuation): read the code as one text.
        let text: String = source
            .code
            .iter()
            .map(|(_, l)| l.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        for literal in literals(&text) {
            let flat: String = literal.split_whitespace().collect::<Vec<_>>().join(" ");
            if flat.contains("git session ") && !FILE_CONTENT.contains(&source.rel.as_str()) {
                found.push(format!(
                    "src/{}: names a command (\"{flat}\"); the CLI's words do that",
                    source.rel
                ));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn no_file_is_longer_than_a_reader_can_hold() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    rust_files(&root().join("tests"), &mut files);
    let mut long = Vec::new();
    for path in files {
        let lines = std::fs::read_to_string(&path)
            .expect("readable")
            .lines()
            .count();
        if lines > MAX_LINES {
            let rel = path
                .strip_prefix(root())
                .unwrap_or(&path)
                .display()
                .to_string();
            long.push(format!("{rel}: {lines} lines"));
        }
    }
    assert!(
        long.is_empty(),
        "files over {MAX_LINES} lines:\n{}",
        long.join("\n")
    );
}

/// A test file that no `mod` line names is never compiled, so its tests silently never run:
/// every `.rs` file and module folder under tests/it/ is declared in main.rs, and every
/// declaration has its file.
#[test]
fn every_test_file_is_built() {
    let dir = root().join("tests/it");
    let main = std::fs::read_to_string(dir.join("main.rs")).unwrap();
    let declared: BTreeSet<String> = main
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = l.strip_prefix("pub ").unwrap_or(l);
            l.strip_prefix("mod ")?
                .strip_suffix(';')
                .map(str::to_string)
        })
        .collect();
    let mut present = BTreeSet::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if path.is_dir() && path.join("mod.rs").exists() {
            present.insert(name);
        } else if let Some(stem) = name.strip_suffix(".rs").filter(|s| *s != "main") {
            present.insert(stem.to_string());
        }
    }
    let unbuilt: Vec<_> = present.difference(&declared).collect();
    assert!(
        unbuilt.is_empty(),
        "never built (no `mod` in tests/it/main.rs): {unbuilt:?}"
    );
    let missing: Vec<_> = declared.difference(&present).collect();
    assert!(missing.is_empty(), "declared without a file: {missing:?}");
}
