//! Circles of files: no loop of imports among the files of `src/` holds more than two files
//! (a value type beside the code that uses it, two halves of one algorithm). A larger loop means
//! some definition sits in the wrong file: move it, as `cli/report.rs` was moved out of
//! `cli/user_error.rs`.
//!
//! An arrow is a path in code outside `#[cfg(test)]`: `crate::a::b::item`, `super::item`,
//! `self::child::item`, and a `use` of a child module by name, each resolved to the deepest file
//! module it names (`a/b.rs` or `a/b/mod.rs`), through a name that file only re-exports to the
//! file that defines it. A folder's `mod.rs` using the files of its folder is the parent using
//! its parts, no arrow; a part using its `mod.rs` is one.

use crate::architecture::{circles, sources};
use std::collections::{BTreeMap, BTreeSet};

/// The module path of a file relative to `src/`: `cli/output.rs` is `cli::output`, `hooks/mod.rs`
/// is `hooks`, `lib.rs` is the crate root.
fn module_path(rel: &str) -> Vec<String> {
    let stem = rel.strip_suffix(".rs").unwrap_or(rel);
    let mut parts: Vec<String> = stem.split('/').map(str::to_string).collect();
    if parts
        .last()
        .is_some_and(|p| p == "mod" || p == "lib" || p == "main")
    {
        parts.pop();
    }
    parts
}

/// `use` statements joined onto one line each (rustfmt spreads long groups over several).
fn statements(code: &[(usize, String)]) -> Vec<String> {
    let mut out = Vec::new();
    let mut open: Option<String> = None;
    for (_, line) in code {
        let t = line.trim();
        if let Some(acc) = open.as_mut() {
            acc.push_str(t);
            if t.contains(';') {
                out.push(open.take().unwrap());
            }
            continue;
        }
        let is_use = ["use ", "pub use ", "pub(crate) use ", "pub(super) use "]
            .iter()
            .any(|p| t.starts_with(p));
        if is_use && !t.contains(';') {
            open = Some(t.to_string());
        } else {
            out.push(t.to_string());
        }
    }
    out.extend(open);
    out
}

/// The paths of a use tree: `a::{b, c::{d, self}}` gives `a::b`, `a::c::d` and `a::c`.
fn expand(tree: &str) -> Vec<Vec<String>> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let tree = tree.split(" as ").next().unwrap_or(tree);
        let segments: Vec<String> = tree
            .split("::")
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty() && s != "*")
            .collect();
        return vec![segments];
    };
    let prefix: Vec<String> = tree[..open]
        .trim_end_matches("::")
        .split("::")
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let (mut depth, mut start, mut members) = (0, 0, Vec::new());
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                members.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    members.push(&inner[start..]);
    members
        .into_iter()
        .filter(|m| !m.trim().is_empty())
        .flat_map(expand)
        .map(|rest| {
            let rest: Vec<String> = rest.into_iter().filter(|s| s != "self").collect();
            prefix.iter().cloned().chain(rest).collect()
        })
        .collect()
}

/// Paths in a line of code that start at `crate`, `super` or `self` (not after `::`, which
/// continues a longer path, nor inside a longer name).
fn rooted_paths(line: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < line.len() {
        let rest = &line[i..];
        let root = ["crate::", "super::", "self::"]
            .into_iter()
            .find(|r| rest.starts_with(r));
        let before = i.checked_sub(1).map(|b| bytes[b] as char);
        let joined = before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':');
        match root {
            Some(_) if !joined => {
                let end = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                    .unwrap_or(rest.len());
                let mut path = rest[..end].to_string();
                if rest[end..].starts_with('{') {
                    let close = rest.find('}').unwrap_or(rest.len());
                    path = rest[..(close + 1).min(rest.len())].to_string();
                }
                out.extend(expand(&path));
                i += end.max(1);
            }
            _ => i += rest.chars().next().map_or(1, char::len_utf8),
        }
    }
    out
}

/// Every file's module path, its paths (each with whether it is a `pub use`).
struct Files {
    modules: BTreeMap<Vec<String>, String>,
    /// file -> name it re-exports -> the path it re-exports (as written there).
    reexports: BTreeMap<String, BTreeMap<String, Vec<String>>>,
    paths: BTreeMap<String, Vec<Vec<String>>>,
}

fn read_files() -> Files {
    let sources = sources();
    let mut files = Files {
        modules: BTreeMap::new(),
        reexports: BTreeMap::new(),
        paths: BTreeMap::new(),
    };
    for source in &sources {
        files
            .modules
            .insert(module_path(&source.rel), source.rel.clone());
        let mut paths = Vec::new();
        for statement in statements(&source.code) {
            let used = ["use ", "pub use ", "pub(crate) use ", "pub(super) use "]
                .iter()
                .find_map(|p| statement.strip_prefix(p).map(|t| (p.starts_with("pub"), t)));
            match used {
                Some((public, tree)) => {
                    let expanded = expand(tree.trim_end_matches(';'));
                    if public {
                        let names = files.reexports.entry(source.rel.clone()).or_default();
                        for path in &expanded {
                            if let Some(name) = path.last() {
                                names.insert(name.clone(), path.clone());
                            }
                        }
                    }
                    paths.extend(expanded);
                }
                None => paths.extend(rooted_paths(&statement)),
            }
        }
        files.paths.insert(source.rel.clone(), paths);
    }
    files
}

impl Files {
    /// The file `path`, written in `rel`, names: the deepest file module on it, and through a
    /// name that file only re-exports, the file that defines it. `None` for another crate's
    /// item (`std`, `git2`), or a path that is no module of ours.
    fn resolve(&self, rel: &str, path: &[String], depth: usize) -> Option<String> {
        let here = module_path(rel);
        let first = path.first()?;
        let (mut full, rest) = match first.as_str() {
            "crate" => (Vec::new(), &path[1..]),
            "self" => (here.clone(), &path[1..]),
            "super" => {
                let supers = path.iter().take_while(|s| *s == "super").count();
                (
                    here[..here.len().saturating_sub(supers)].to_vec(),
                    &path[supers..],
                )
            }
            child => {
                // `use child::item` in a file that declares `mod child;`.
                let mut m = here.clone();
                m.push(child.to_string());
                if !self.modules.contains_key(&m) {
                    return None;
                }
                (here.clone(), path)
            }
        };
        full.extend(rest.iter().cloned());
        let n = (1..=full.len())
            .rev()
            .find(|n| self.modules.contains_key(&full[..*n]))?;
        let file = &self.modules[&full[..n]];
        let through = full
            .get(n)
            .and_then(|name| self.reexports.get(file)?.get(name));
        match through {
            Some(target) if depth < 8 => self.resolve(file, target, depth + 1),
            Some(_) => None,
            None => Some(file.clone()),
        }
    }
}

/// file -> the files it imports.
fn file_graph() -> BTreeMap<String, BTreeSet<String>> {
    let files = read_files();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (rel, paths) in &files.paths {
        for path in paths {
            let Some(to) = files.resolve(rel, path, 0).filter(|to| to != rel) else {
                continue;
            };
            // A module's own file using the files of its folder is the parent using its parts,
            // not an import between peers: no arrow (a child using its parent is one).
            let folder = rel.strip_suffix("mod.rs").filter(|f| f.ends_with('/'));
            if folder.is_some_and(|f| to.starts_with(f)) {
                continue;
            }
            {
                graph.entry(rel.clone()).or_default().insert(to);
            }
        }
    }
    graph
}

#[test]
fn no_circle_of_files_holds_more_than_two() {
    let big: Vec<String> = circles(&file_graph())
        .into_iter()
        .filter(|c| c.len() > 2)
        .map(|c| c.join(", "))
        .collect();
    assert!(big.is_empty(), "circles of files:\n{}", big.join("\n"));
}

#[test]
fn the_file_rules_catch_what_they_are_about() {
    assert_eq!(
        expand("super::{escape::{self, Into}, hook::Ctx}"),
        [
            vec!["super", "escape"],
            vec!["super", "escape", "Into"],
            vec!["super", "hook", "Ctx"]
        ]
    );
    assert_eq!(
        rooted_paths("let x = crate::cli::output::warn(super::y::z); a::self_::b"),
        [
            vec!["crate", "cli", "output", "warn"],
            vec!["super", "y", "z"]
        ]
    );
    let graph = file_graph();
    // Known arrows, one of each kind.
    for (from, to) in [
        ("cli/report.rs", "cli/user_error.rs"),
        ("hooks/unwire.rs", "hooks/change.rs"),
        ("hooks/wire.rs", "hooks/hook_file.rs"),
    ] {
        assert!(
            graph.get(from).is_some_and(|t| t.contains(to)),
            "{from} -> {to}: {:?}",
            graph.get(from)
        );
    }
    let mut looped = graph.clone();
    looped
        .entry("hooks/change.rs".into())
        .or_default()
        .insert("hooks/wire.rs".into());
    assert!(circles(&looped).iter().any(|c| c.len() == 3));
}
