//! The checked-in `completions/` and `man/` are exactly what the built binary generates.
//!
//! The test regenerates both into a temp directory by running `git-session completions SHELL`
//! and `git-session man DIR`, and fails naming every stale, missing or extra file together with
//! the command that refreshes them. With `GIT_SESSION_BLESS=1` it rewrites the checked-in copies
//! instead (and deletes pages of subcommands that no longer exist). Both directories belong to
//! the generator: any other file put in them is reported as extra.

use crate::common;
use common::{bin, hermetic, to_run};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const REFRESH: &str = "GIT_SESSION_BLESS=1 cargo test --test it generated::";

/// Each shell and the file its script is kept in (clap_complete's conventional names).
const SHELLS: [(&str, &str); 5] = [
    ("bash", "git-session.bash"),
    ("zsh", "_git-session"),
    ("fish", "git-session.fish"),
    ("elvish", "git-session.elv"),
    ("powershell", "_git-session.ps1"),
];

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn binary(home: &Path, args: &[&str]) -> common::Run {
    let mut cmd = Command::new(bin());
    hermetic(&mut cmd, home);
    // The scripts and pages must not depend on the terminal they were generated in.
    cmd.env_remove("COLUMNS").current_dir(home).args(args);
    to_run(cmd.output().unwrap()).ok()
}

/// Everything the binary generates, keyed by its path relative to the repository root.
fn generate(tmp: &Path) -> BTreeMap<String, Vec<u8>> {
    let home = tmp.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut out = BTreeMap::new();
    for (shell, file) in SHELLS {
        let run = binary(&home, &["completions", shell]);
        out.insert(format!("completions/{file}"), run.stdout.into_bytes());
    }
    // man/man1/: the layout man(1) searches, so `MANPATH=.../man` finds the pages.
    let man = tmp.join("man/man1");
    binary(&home, &["man", man.to_str().unwrap()]);
    out.extend(files_in(&man, "man/man1"));
    out
}

fn files_in(dir: &Path, prefix: &str) -> BTreeMap<String, Vec<u8>> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return BTreeMap::new();
    };
    entries
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| {
            let name = e.file_name().into_string().unwrap();
            (format!("{prefix}/{name}"), std::fs::read(e.path()).unwrap())
        })
        .collect()
}

#[test]
fn checked_in_completions_and_man_pages_are_current() {
    let tmp = tempfile::tempdir().unwrap();
    let fresh = generate(tmp.path());
    assert!(fresh.contains_key("man/man1/git-session.1"));
    let root = manifest_dir();
    let mut current = files_in(&root.join("completions"), "completions");
    current.extend(files_in(&root.join("man"), "man"));
    current.extend(files_in(&root.join("man/man1"), "man/man1"));

    let mut problems = Vec::new();
    for (path, bytes) in &fresh {
        match current.get(path) {
            None => problems.push(format!("{path} is missing")),
            Some(old) if old != bytes => problems.push(format!("{path} is stale")),
            Some(_) => {}
        }
    }
    for path in current.keys().filter(|p| !fresh.contains_key(*p)) {
        problems.push(format!("{path} is no longer generated"));
    }
    if problems.is_empty() {
        return;
    }
    if std::env::var_os("GIT_SESSION_BLESS").is_some_and(|v| v == "1") {
        for dir in ["completions", "man/man1"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        for (path, bytes) in &fresh {
            std::fs::write(root.join(path), bytes).unwrap();
        }
        for path in current.keys().filter(|p| !fresh.contains_key(*p)) {
            std::fs::remove_file(root.join(path)).unwrap();
        }
        eprintln!("blessed:\n  {}", problems.join("\n  "));
        return;
    }
    panic!(
        "the checked-in generated files differ from what the binary generates:\n  {}\n\
         refresh them with: {REFRESH}",
        problems.join("\n  ")
    );
}
